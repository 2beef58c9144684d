"""RequestContext: what the filter chain has learnt about a request so far."""

from __future__ import annotations


class RequestContext:
    """One request on its way through filters and delegates.

    ``request`` is the Flask request; ``info`` its ``RequestInfo``; ``user`` the
    effective ``UserInfo`` (after impersonation) and ``authenticated_user`` the one the
    credentials proved; ``audit_id`` the ``Audit-Id``; ``server`` the ``APIServer``.
    """

    __slots__ = ("request", "server", "info", "user", "authenticated_user", "audit_id",
                 "warnings")

    def __init__(self, request, server, audit_id: str):
        self.request = request
        self.server = server
        self.audit_id = audit_id
        self.info = None
        self.user = None
        self.authenticated_user = None
        self.warnings: list[str] = []

    @property
    def accept(self) -> str:
        return self.request.headers.get("Accept", "")

    @property
    def peer_certificate_info(self) -> dict | None:
        """The client certificate's fields as ``ssl`` decodes a certificate the handshake
        verified (``SSLSocket.getpeercert()``), or ``None``."""
        sock = self.request.environ.get("gunicorn.socket")
        getpeercert = getattr(sock, "getpeercert", None)
        if getpeercert is None:
            return None
        try:
            return getpeercert() or None
        except (ValueError, OSError):
            return None

    @property
    def peer_certificate(self) -> bytes | None:
        """DER bytes of the client certificate the TLS handshake verified, if any."""
        sock = self.request.environ.get("gunicorn.socket")
        getpeercert = getattr(sock, "getpeercert", None)
        if getpeercert is None:
            return None
        try:
            return getpeercert(binary_form=True)
        except (ValueError, OSError):
            return None
