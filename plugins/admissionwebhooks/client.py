"""The HTTPS client admission webhooks are called with: kept-alive ``http.client``
connections, pooled per address, server name and CA (a call costs a third of what
``requests`` costs; see ``tests/benchmarks/webhooks.py``).

A connection dials an address (a URL's host, or a Service's endpoint) while TLS verifies
another name (``NAME.NAMESPACE.svc``), as upstream's dialer does. Failures are worded as
Go's HTTP client words them (``kapiserver.webhookerrors``); a kept-alive connection the
webhook closed meanwhile is replaced once, as Go's transport retries one.
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import threading
import time
import urllib.parse

from kapiserver.webhookerrors import refusal, request_error

#: Idle connections kept per pool key.
MAX_IDLE = 8
_STALE = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError,
          http.client.CannotSendRequest, http.client.ResponseNotReady)


class CallFailed(Exception):
    """No usable answer; the message is Go's (``Post "URL": ...``)."""


class _Connection(http.client.HTTPSConnection):
    """Dials ``host:port``, verifies ``server_name``."""

    def __init__(self, host: str, port: int, server_name: str, context, timeout: float):
        super().__init__(host, port, context=context, timeout=timeout)
        self.server_name = server_name

    def connect(self):
        sock = socket.create_connection((self.host, self.port), self.timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            self.sock = self._context.wrap_socket(sock, server_hostname=self.server_name)
        except BaseException:
            sock.close()
            raise


class WebhookHTTPClient:
    """POSTs JSON to webhooks; one per server, shared by every webhook."""

    def __init__(self):
        self._idle: dict[tuple, list[_Connection]] = {}
        self._contexts: dict[str, ssl.SSLContext] = {}
        self._lock = threading.Lock()

    def context(self, ca_pem: str) -> ssl.SSLContext:
        """The TLS context verifying with ``ca_pem`` ("" for the system's CAs);
        ``ssl.SSLError`` when the bundle holds no certificate."""
        found = self._contexts.get(ca_pem)
        if found is None:
            found = ssl.create_default_context(cadata=ca_pem or None)
            if not ca_pem:
                found.load_default_certs()
            self._contexts[ca_pem] = found
        return found

    def post(self, url: str, body: dict, context, timeout: float,
             address: tuple[str, int] | None = None) -> dict:
        """POST ``body`` to ``url`` (dialling ``address`` when given); the decoded answer."""
        target = urllib.parse.urlsplit(url)
        server_name = target.hostname or ""
        host, port = address or (server_name, target.port or 443)
        path = (target.path or "/") + (f"?{target.query}" if target.query else "")
        data = json.dumps(body, separators=(",", ":")).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json, */*",
                   "Host": target.netloc}
        key = (host, port, server_name, id(context))
        deadline = time.monotonic() + timeout
        for attempt in (0, 1):
            conn, reused = self._take(key, host, port, server_name, context, timeout)
            try:
                conn.timeout = max(deadline - time.monotonic(), 0.001)
                if conn.sock is not None:
                    conn.sock.settimeout(conn.timeout)
                conn.request("POST", path, data, headers)
                response = conn.getresponse()
                payload = response.read()
            except _STALE as err:
                conn.close()
                if reused and attempt == 0:
                    continue  # the webhook closed the idle connection: once more, afresh
                raise CallFailed(request_error(err, "POST", url, (host, port), server_name,
                                               True)) from None
            except (TimeoutError, socket.timeout):
                conn.close()
                raise CallFailed(f'Post "{url}": context deadline exceeded') from None
            except (OSError, http.client.HTTPException) as err:
                conn.close()
                raise CallFailed(request_error(err, "POST", url, (host, port), server_name,
                                               True)) from None
            if response.will_close:
                conn.close()
            else:
                self._give(key, conn)
            break
        status = response.status
        content_type = response.getheader("Content-Type", "") or ""
        if not 200 <= status < 300:
            raise CallFailed(refusal(status, payload, content_type))
        try:
            answer = json.loads(payload)
        except ValueError as err:
            raise CallFailed(f"couldn't get version/kind; json parse error: {err}") from None
        if not isinstance(answer, dict):
            raise CallFailed("couldn't get version/kind; json parse error: json: cannot "
                             "unmarshal array into Go value of type struct { APIVersion "
                             'string "json:\\"apiVersion,omitempty\\""; Kind string '
                             '"json:\\"kind,omitempty\\"" }')
        return answer

    def _take(self, key, host, port, server_name, context, timeout):
        with self._lock:
            idle = self._idle.get(key)
            if idle:
                return idle.pop(), True
        return _Connection(host, port, server_name, context, timeout), False

    def _give(self, key, conn) -> None:
        with self._lock:
            idle = self._idle.setdefault(key, [])
            if len(idle) < MAX_IDLE:
                idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        with self._lock:
            pools, self._idle = self._idle, {}
        for idle in pools.values():
            for conn in idle:
                conn.close()
