"""CertificateSigning admission: issuing a certificate takes the ``sign`` verb on its signer
(``plugin/pkg/admission/certificates/signing``).

A write to ``certificatesigningrequests/status`` that changes ``status.certificate`` or
``status.conditions`` is refused unless the user may ``sign`` the ``signers`` resource
named after the request's ``signerName``, or ``<domain>/*``. Enabled by default, as in
kube-apiserver 1.32.
"""

from kapiserver.admission import UPDATE, AdmissionPlugin
from kapiserver.admission.helpers import forbidden
from kapiserver.apimachinery.field_errors import go_quote

from .signers import GROUP, authorized_for_signer


def _status(obj) -> dict:
    status = obj.get("status") if isinstance(obj, dict) else None
    return status if isinstance(status, dict) else {}


class CertificateSigning(AdmissionPlugin):
    """Check the signer of a status write that issues or changes conditions."""

    name = "CertificateSigning"
    operations = frozenset({UPDATE})

    def __init__(self, server):
        self.server = server

    def validate(self, attributes):
        spec = attributes.resource
        if attributes.subresource != "status" or spec.group != GROUP or \
                spec.resource != "certificatesigningrequests":
            return
        old, new = _status(attributes.old_object), _status(attributes.object)
        if (old.get("certificate") or "") == (new.get("certificate") or "") and \
                (old.get("conditions") or []) == (new.get("conditions") or []):
            return
        old_spec = (attributes.old_object or {}).get("spec") or {}
        signer = old_spec.get("signerName", "")
        if not authorized_for_signer(self.server, attributes.user, "sign", signer):
            raise forbidden(attributes, f"user not permitted to sign requests with signerName "
                                        f"{go_quote(signer)}")
