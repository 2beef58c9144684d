"""RemoteAPI: how a controller inside the server reaches API groups another server serves.

Upstream's controllers reach an aggregated API server's resources as any client does:
through kube-apiserver, whose aggregator proxies the request to the APIService's backend.
A controller here asks a ``RemoteAPI`` registered with ``APIServer.add_remote_api`` (the
aggregator's proxies to its APIServices' backends) instead, under an identity it states —
the service account the upstream controller runs as, which the backend authorizes. The
core never imports the plugin that provides it; they meet in this contract.
"""

from __future__ import annotations


class RemoteError(Exception):
    """The backend could not be reached, or is not available now; the text is what a
    client of the API would report."""


class RemoteStream:
    """An answer read line by line (a watch): ``status``, ``lines()``, ``close()`` — which
    another thread may call to end a read that waits."""

    status = 0

    def lines(self):
        raise NotImplementedError

    def read(self) -> bytes:
        """The rest of the answer (an error's body)."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class RemoteAPI:
    """Requests to the group versions another server serves (see the module docstring).

    ``user`` is a ``kapiserver.authentication.UserInfo``; ``headers`` are ``(name, value)``
    pairs; paths are the API's (``/apis/<group>/<version>/...``, with a query). Methods may
    block on the network and raise ``RemoteError``.
    """

    #: Named in logs.
    name = ""

    def serves(self, group: str, version: str) -> bool:
        """Whether ``group/version`` is served by this provider's backends and available
        now."""
        raise NotImplementedError

    def request(self, group: str, version: str, method: str, path: str, user,
                body: bytes | None = None, headers=(),
                timeout: float = 30.0) -> tuple[int, bytes]:
        """One request, its answer read whole: ``(status, body)``."""
        raise NotImplementedError

    def stream(self, group: str, version: str, path: str, user, headers=()) -> RemoteStream:
        """A GET whose answer is read as it comes (a watch)."""
        raise NotImplementedError
