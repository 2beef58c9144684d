"""AggregatedAPI: the controllers inside the server reach extension servers through the
APIServices' proxies (a ``kapiserver.controllers.remote.RemoteAPI``).

Upstream's controllers (the garbage collector's metadata informers, its deletions and
patches) reach an aggregated API as any client: through kube-apiserver, whose aggregator
proxies to the APIService's backend. Here the elected worker's controllers call the same
proxy directly, with the identity headers of the user they act as — the backend
authenticates the front proxy's client certificate and authorizes that user, as it would
a request proxied for it. A group version whose APIService is local, missing or not
``Available`` is not served by this provider.
"""

from __future__ import annotations

import http.client

from kapiserver import errors
from kapiserver.controllers.remote import RemoteAPI, RemoteError, RemoteStream

from .apiservices import is_available, is_local
from .proxy import identity_headers


class ProxiedStream(RemoteStream):
    """A proxied answer read line by line; ``close()`` ends a read that waits."""

    def __init__(self, conn, response):
        self.conn = conn
        self.response = response
        self.status = response.status

    def lines(self):
        try:
            while True:
                line = self.response.readline()
                if not line:
                    return
                yield line
        except (OSError, ValueError, http.client.HTTPException) as err:
            raise RemoteError(f"the watch ended: {err}") from None

    def read(self) -> bytes:
        try:
            return self.response.read()
        except (OSError, ValueError, http.client.HTTPException):
            return b""

    def close(self) -> None:
        sock = self.conn.sock
        if sock is not None:
            try:
                sock.shutdown(2)  # wakes a reader blocked in another thread
            except OSError:
                pass
        self.conn.close()


class AggregatedAPI(RemoteAPI):
    """Requests to the APIServices ``registry`` proxies (see the module docstring)."""

    name = "aggregator"

    def __init__(self, registry):
        self.registry = registry

    def _handler(self, group: str, version: str):
        apiservice = self.registry.apiservices.get(f"{version}.{group}")
        if apiservice is None or is_local(apiservice) or not is_available(apiservice):
            raise RemoteError("the server is currently unable to handle the request")
        try:
            return self.registry.proxy(apiservice)
        except errors.StatusError as err:
            raise RemoteError(err.message) from None

    def serves(self, group, version):
        apiservice = self.registry.apiservices.get(f"{version}.{group}")
        return apiservice is not None and not is_local(apiservice) and is_available(apiservice)

    def request(self, group, version, method, path, user, body=None, headers=(),
                timeout=30.0):
        handler = self._handler(group, version)
        headers = [*headers, *identity_headers(user)]
        try:
            status, _, data = handler.request(method, path, headers, body, timeout=timeout)
        except (OSError, http.client.HTTPException) as err:
            raise RemoteError(f"error trying to reach service: {err}") from None
        return status, data

    def stream(self, group, version, path, user, headers=()):
        handler = self._handler(group, version)
        headers = [*headers, *identity_headers(user)]
        conn = handler.backend.connection(handler.address)
        conn.set_read_timeout(None)
        try:
            conn, response = handler._send(conn, "GET", path, None, headers)
        except (OSError, http.client.HTTPException) as err:
            conn.close()
            raise RemoteError(f"error trying to reach service: {err}") from None
        return ProxiedStream(conn, response)
