"""RequestContext: what the filter chain has learnt about a request so far."""

from __future__ import annotations

import time
import weakref

from werkzeug.datastructures import Headers

#: Where the gunicorn worker puts the headers as sent (``kapiserver.server.worker``).
RAW_HEADERS = "kapiserver.raw_headers"


class RequestContext:
    """One request on its way through filters and delegates.

    ``request`` is the Flask request; ``info`` its ``RequestInfo``; ``user`` the
    effective ``UserInfo`` (after impersonation) and ``authenticated_user`` the one the
    credentials proved; ``audit_id`` the ``Audit-Id``; ``server`` the ``APIServer``;
    ``received`` (wall clock) and ``started`` (``time.perf_counter``) when the request
    arrived (``WithRequestReceivedTimestamp``); ``audit`` the request's
    ``kapiserver.audit.AuditContext`` when its audit level is above None.
    """

    __slots__ = ("request", "server", "info", "user", "authenticated_user", "audit_id",
                 "warnings", "_headers", "media", "audit_annotations", "deadline",
                 "received", "started", "audit")

    def __init__(self, request, server, audit_id: str):
        self.received = time.time()
        self.started = time.perf_counter()
        self.request = request
        self.server = server
        self.audit_id = audit_id
        self.info = None
        self.user = None
        self.authenticated_user = None
        self.warnings: list[str] = []
        self.audit_annotations: dict[str, str] = {}
        self.deadline = None
        self.audit = None
        self._headers = None
        #: The negotiated representation of the answer (``negotiation.MediaType``), once a
        #: handler has negotiated it; error answers use it too.
        self.media = None

    @property
    def accept(self) -> str:
        return self.request.headers.get("Accept", "")

    @property
    def headers(self):
        """The request's headers with every value as sent (``getlist`` gives each one; the
        WSGI environ joins repeated headers with commas), case-insensitive."""
        if self._headers is None:
            raw = self.request.environ.get(RAW_HEADERS)
            self._headers = self.request.headers if raw is None else Headers(raw)
        return self._headers

    def has_header_prefix(self, prefix: str) -> bool:
        """Whether the name of any header starts with ``prefix`` (lower case), read without
        building the headers' mapping."""
        environ = self.request.environ
        raw = environ.get(RAW_HEADERS)
        if raw is not None:
            size = len(prefix)
            return any(name[:size].lower() == prefix for name, _ in raw)
        key = "HTTP_" + prefix.upper().replace("-", "_")
        return any(name.startswith(key) for name in environ)

    def remove_headers(self, names) -> None:
        """Drop headers ``names`` from the request (a front proxy's identity headers, once
        read), so that nothing after authentication sees them."""
        lowered = {name.lower() for name in names}
        environ = self.request.environ
        for name in lowered:
            environ.pop("HTTP_" + name.upper().replace("-", "_"), None)
        raw = environ.get(RAW_HEADERS)
        if raw is not None:
            environ[RAW_HEADERS] = [(k, v) for k, v in raw if k.lower() not in lowered]
        self._headers = None  # request.headers is a live view of the environ

    @property
    def peer_certificate_info(self) -> dict | None:
        """The client certificate's fields as ``ssl`` decodes a certificate the handshake
        verified (``SSLSocket.getpeercert()``), or ``None``."""
        return _peer_certificates(self.request.environ)[1]

    @property
    def peer_certificate(self) -> bytes | None:
        """DER bytes of the client certificate the TLS handshake verified, if any."""
        return _peer_certificates(self.request.environ)[0]


#: The client certificate of each open TLS connection, (DER, decoded), read once: it does
#: not change while the connection lives, and decoding it costs on every request.
_PEERS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_NO_PEER = (None, None)


def _peer_certificates(environ) -> tuple[bytes | None, dict | None]:
    sock = environ.get("gunicorn.socket")
    getpeercert = getattr(sock, "getpeercert", None)
    if getpeercert is None:
        return _NO_PEER
    try:
        return _PEERS[sock]
    except (KeyError, TypeError):
        pass
    try:
        peer = (getpeercert(binary_form=True), getpeercert() or None)
    except (ValueError, OSError):
        return _NO_PEER  # no handshake (yet): not remembered
    try:
        _PEERS[sock] = peer
    except TypeError:  # a socket that cannot be weakly referenced: read on every request
        pass
    return peer
