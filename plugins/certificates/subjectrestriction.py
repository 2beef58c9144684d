"""CertificateSubjectRestriction admission: no ``system:masters`` client certificates
through the API (``plugin/pkg/admission/certificates/subjectrestriction``).

A new request for the ``kubernetes.io/kube-apiserver-client`` signer whose subject names
the ``system:masters`` organization (group) is refused: a certificate in that group would
bypass authorization altogether. Enabled by default, as in kube-apiserver 1.32.
"""

from kapiserver.admission import CREATE, AdmissionPlugin
from kapiserver.admission.helpers import forbidden

from .csrs import decode_bytes, pem_blocks
from .signers import GROUP

KUBE_APISERVER_CLIENT_SIGNER = "kubernetes.io/kube-apiserver-client"
SYSTEM_MASTERS = "system:masters"


def subject_organizations(request: bytes) -> list[str] | None:
    """The O= values of a PEM CSR's subject, or None when it does not parse (validation,
    which upstream runs first, refuses it)."""
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    blocks = pem_blocks(request)
    if not blocks or blocks[0][0] != "CERTIFICATE REQUEST":
        return None
    try:
        csr = x509.load_der_x509_csr(blocks[0][2])
        return [attribute.value for attribute in
                csr.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]
    except ValueError:
        return None


class CertificateSubjectRestriction(AdmissionPlugin):
    """Refuse kube-apiserver-client requests for the system:masters group."""

    name = "CertificateSubjectRestriction"
    operations = frozenset({CREATE})

    def __init__(self, server=None):
        self.server = server

    def validate(self, attributes):
        spec = attributes.resource
        if spec.group != GROUP or spec.resource != "certificatesigningrequests" or \
                attributes.subresource:
            return
        csr_spec = attributes.object.get("spec") or {}
        if csr_spec.get("signerName") != KUBE_APISERVER_CLIENT_SIGNER:
            return
        organizations = subject_organizations(decode_bytes(csr_spec.get("request")))
        if organizations and SYSTEM_MASTERS in organizations:
            raise forbidden(attributes, f"use of {KUBE_APISERVER_CLIENT_SIGNER} signer with "
                                        f"{SYSTEM_MASTERS} group is not allowed")
