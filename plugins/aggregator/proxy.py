"""The aggregator's proxy to an extension API server (upstream's ``proxyHandler``).

A request for ``/apis/GROUP/VERSION/...`` of an APIService with ``spec.service`` goes to
an address of the Service's Endpoints (upstream's ``--enable-aggregator-routing``), over
TLS verified with the APIService's ``caBundle`` for the name ``SERVICE.NAMESPACE.svc``
(or not verified, with ``insecureSkipTLSVerify``). The aggregator authenticates with
``--proxy-client-cert-file``/``--proxy-client-key-file`` and passes the user it
authenticated in ``X-Remote-User``, ``X-Remote-Group`` and ``X-Remote-Extra-*``; the
client's own credentials and identity headers never reach the backend. Answers stream
through unbuffered (watches, long lists), on kept-alive connections.
"""

from __future__ import annotations

import base64
import collections
import hashlib
import http.client
import logging
import socket
import ssl
import threading
import urllib.parse

from flask import Response

from kapiserver import errors

log = logging.getLogger(__name__)

#: Request headers never forwarded: hop-by-hop ones, the client's credentials and any
#: identity it claims (the aggregator states the identity itself).
_DROPPED_PREFIXES = ("x-remote-", "impersonate-")
_DROPPED = frozenset(("authorization", "connection", "keep-alive", "proxy-authorization",
                      "proxy-authenticate", "te", "trailer", "transfer-encoding", "upgrade",
                      "host", "content-length"))
_HOP_BY_HOP = frozenset(("connection", "keep-alive", "proxy-authenticate",
                         "proxy-authorization", "te", "trailer", "transfer-encoding",
                         "upgrade"))
CHUNK = 64 * 1024
CONNECT_TIMEOUT = 5.0
#: How long a read of the aggregator's own requests may wait (upstream downloads OpenAPI
#: within a minute; discovery and deletions answer much sooner).
REQUEST_TIMEOUT = 60.0
MAX_IDLE = 32


class BackendConnection(http.client.HTTPSConnection):
    """An HTTPS connection to an address whose certificate names another host."""

    def __init__(self, address: tuple[str, int], server_name: str, context,
                 read_timeout: float | None = None):
        super().__init__(address[0], address[1], context=context, timeout=CONNECT_TIMEOUT)
        self.server_name = server_name
        #: None (the default) for proxied requests: watches may stay silent for long.
        self.read_timeout = read_timeout

    def connect(self):
        sock = socket.create_connection((self.host, self.port), self.timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.server_name)
        self.sock.settimeout(self.read_timeout)

    def set_read_timeout(self, timeout: float | None) -> None:
        """Wait at most ``timeout`` seconds a read from now on (``None``: for ever)."""
        self.read_timeout = timeout
        if self.sock is not None:
            self.sock.settimeout(timeout)


class Backend:
    """Where one APIService's requests go: TLS settings and a pool of idle connections."""

    def __init__(self, server_name: str, ca_bundle: str, insecure: bool, client_cert):
        self.server_name = server_name
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        if insecure:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        elif ca_bundle:
            context.load_verify_locations(cadata=base64.b64decode(ca_bundle).decode())
        else:
            context.load_default_certs()
        if client_cert:
            context.load_cert_chain(*client_cert)
        self.context = context
        self.idle: collections.deque = collections.deque()
        self.lock = threading.Lock()

    def connection(self, address) -> BackendConnection:
        with self.lock:
            while self.idle:
                conn, where = self.idle.pop()
                if where == address and not _closed_by_peer(conn):
                    return conn
                conn.close()
        return BackendConnection(address, self.server_name, self.context)

    def release(self, conn, address) -> None:
        with self.lock:
            if len(self.idle) < MAX_IDLE:
                self.idle.append((conn, address))
                return
        conn.close()

    def close(self) -> None:
        with self.lock:
            while self.idle:
                self.idle.pop()[0].close()


def _closed_by_peer(conn) -> bool:
    """True when an idle connection has something to read: the backend closed it (an
    idle timeout: EOF or TLS close_notify), as Go's transport notices before reusing one."""
    import select

    sock = conn.sock
    if sock is None:
        return True
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


def backend_key(apiservice: dict, client_cert) -> str:
    spec = apiservice.get("spec") or {}
    text = repr((spec.get("service"), spec.get("caBundle"), spec.get("insecureSkipTLSVerify"),
                 client_cert))
    return hashlib.sha256(text.encode()).hexdigest()


def identity_headers(user) -> list[tuple[str, str]]:
    """``X-Remote-User``, one ``X-Remote-Group`` per group, ``X-Remote-Extra-<key>`` per
    extra value (the key lower-cased and URL-escaped, as upstream's)."""
    headers = [("X-Remote-User", user.name)]
    headers += [("X-Remote-Group", group) for group in user.groups]
    for key, values in (user.extra or {}).items():
        name = "X-Remote-Extra-" + urllib.parse.quote(key.lower(), safe="")
        headers += [(name, value) for value in values]
    return headers


class ProxyHandler:
    """Proxy one request to a backend (see the module docstring)."""

    def __init__(self, backend: Backend, address: tuple[str, int]):
        self.backend = backend
        self.address = address

    def serve(self, ctx):
        request = ctx.request
        path = request.full_path if request.query_string else request.path
        headers = [(k, v) for k, v in request.headers.items()
                   if k.lower() not in _DROPPED and not k.lower().startswith(_DROPPED_PREFIXES)]
        headers += identity_headers(ctx.user)
        body = request.get_data() if request.method not in ("GET", "HEAD") else None
        if body is not None:
            headers.append(("Content-Length", str(len(body))))
        conn = self.backend.connection(self.address)
        try:
            conn, response = self._send(conn, request.method, path, body, headers)
        except (OSError, http.client.HTTPException) as err:
            conn.close()
            log.info("proxy to %s:%d failed: %s", *self.address, err)
            raise errors.ServiceUnavailable(f"error trying to reach service: {err}") from None
        out_headers = [(k, v) for k, v in response.getheaders()
                       if k.lower() not in _HOP_BY_HOP]
        return Response(self._stream(conn, response), response.status, headers=out_headers,
                        direct_passthrough=True)

    def request(self, method: str, path: str, headers=(), body: bytes | None = None,
                timeout: float = REQUEST_TIMEOUT) -> tuple[int, dict, bytes]:
        """One buffered request of the aggregator's own (discovery, OpenAPI, namespace
        deletion): ``headers`` state the identity; the answer is read whole within
        ``timeout`` seconds a read. Returns ``(status, headers, body)``, header names in
        lower case; raises ``OSError`` or ``http.client.HTTPException`` when the backend
        cannot be reached."""
        headers = list(headers)
        if body is not None:
            headers.append(("Content-Length", str(len(body))))
        conn = self.backend.connection(self.address)
        conn.set_read_timeout(timeout)
        try:
            conn, response = self._send(conn, method, path, body, headers)
            data = response.read()
        except (OSError, http.client.HTTPException):
            conn.close()
            raise
        answer_headers = {k.lower(): v for k, v in response.getheaders()}
        if response.will_close:
            conn.close()
        else:
            conn.set_read_timeout(None)  # pooled connections also carry silent watches
            self.backend.release(conn, self.address)
        return response.status, answer_headers, data

    def _send(self, conn, method, path, body, headers):
        """Send on ``conn`` (or, if the backend closed it meanwhile, on a fresh one);
        return the connection used and its response."""
        for attempt in (0, 1):
            try:
                conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
                conn.putheader("Host", self.backend.server_name)
                for key, value in headers:
                    conn.putheader(key, value)
                conn.endheaders(body)
                return conn, conn.getresponse()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError,
                    ssl.SSLEOFError):
                conn.close()
                if attempt:
                    raise
                conn = BackendConnection(self.address, self.backend.server_name,
                                         self.backend.context, conn.read_timeout)
        raise AssertionError("unreachable")

    def _stream(self, conn, response):
        done = False
        if response.getheader("Content-Length") is None:
            # A streamed answer: an empty first chunk sends the headers now, so that a
            # watch with nothing to report yet is established for the client (upstream's
            # proxy flushes at once too). A sized one goes out with its body.
            yield b""
        try:
            while True:
                chunk = response.read1(CHUNK)
                if not chunk:
                    break
                yield chunk
            done = True
        except (OSError, http.client.HTTPException):
            pass
        finally:
            reusable = done and not response.will_close
            response.close()
            if reusable:
                self.backend.release(conn, self.address)
            else:
                conn.close()


def client_certificate(config):
    """The aggregator's client certificate for backends (``--proxy-client-*-file``, a pair
    the options check), or ``None``."""
    cert, key = config.proxy_client_cert_file, config.proxy_client_key_file
    return (cert, key) if cert and key else None
