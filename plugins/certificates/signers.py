"""Who may act for a signer: the ``signers`` pseudo-resource the certificate admission
plugins authorize against (``plugin/pkg/admission/certificates/util.go``)."""

from __future__ import annotations

from kapiserver.authorization import Attributes, Decision

GROUP = "certificates.k8s.io"


def _allowed(server, user, verb: str, name: str) -> bool:
    decision, _ = server.authorizer.authorize(Attributes(
        user=user, verb=verb, resource_request=True, api_group=GROUP, api_version="*",
        resource="signers", name=name))
    return decision is Decision.ALLOW


def authorized_for_signer(server, user, verb: str, signer_name: str) -> bool:
    """``IsAuthorizedForSignerName``: ``user`` may ``verb`` the ``signers`` named
    ``signer_name``, or every signer of its domain (``kubernetes.io/*``)."""
    if _allowed(server, user, verb, signer_name):
        return True
    return _allowed(server, user, verb, signer_name.split("/")[0] + "/*")
