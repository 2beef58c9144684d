"""CertificateApproval admission: approving or denying a request takes the ``approve`` verb
on its signer (``plugin/pkg/admission/certificates/approval``).

A write to ``certificatesigningrequests/approval`` (``kubectl certificate approve|deny``)
is refused unless the user may ``approve`` the ``signers`` resource named after the
request's ``signerName`` (as it was stored), or ``<domain>/*``. Enabled by default, as in
kube-apiserver 1.32.
"""

from kapiserver.admission import UPDATE, AdmissionPlugin
from kapiserver.admission.helpers import forbidden
from kapiserver.apimachinery.field_errors import go_quote

from .signers import GROUP, authorized_for_signer


class CertificateApproval(AdmissionPlugin):
    """Check the approver against the old request's signer."""

    name = "CertificateApproval"
    operations = frozenset({UPDATE})

    def __init__(self, server):
        self.server = server

    def validate(self, attributes):
        spec = attributes.resource
        if attributes.subresource != "approval" or spec.group != GROUP or \
                spec.resource != "certificatesigningrequests":
            return
        # The old object's signer: the approval endpoint cannot change it anyway.
        old = attributes.old_object if isinstance(attributes.old_object, dict) else {}
        signer = (old.get("spec") or {}).get("signerName", "")
        if not authorized_for_signer(self.server, attributes.user, "approve", signer):
            raise forbidden(attributes, f"user not permitted to approve requests with "
                                        f"signerName {go_quote(signer)}")
