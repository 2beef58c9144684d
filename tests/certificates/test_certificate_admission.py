"""CertificateApproval, CertificateSigning and CertificateSubjectRestriction: who may
approve and sign for a signer, and no system:masters client certificates."""

import base64

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kapiserver import errors
from kapiserver.admission import CREATE, UPDATE
from kapiserver.authentication import UserInfo
from kapiserver.authorization import Decision
from kapiserver_plugins.certificates.approval import CertificateApproval
from kapiserver_plugins.certificates.csrs import CSRS
from kapiserver_plugins.certificates.signing import CertificateSigning
from kapiserver_plugins.certificates.subjectrestriction import CertificateSubjectRestriction
from tests.support.admission import Attributes, run

SIGNER = "example.com/signer"


class Authorizer:
    """Allows what ``grants`` lists, as (user, verb, signers name); records every question."""

    def __init__(self, *grants):
        self.grants = set(grants)
        self.asked = []

    def authorize(self, attributes):
        self.asked.append((attributes.verb, attributes.api_group, attributes.api_version,
                           attributes.resource, attributes.name))
        allowed = (attributes.user.name, attributes.verb, attributes.name) in self.grants
        return (Decision.ALLOW if allowed else Decision.NO_OPINION), ""


class Server:
    def __init__(self, *grants):
        self.authorizer = Authorizer(*grants)


def pem_request(*organizations) -> bytes:
    key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.NameAttribute(NameOID.COMMON_NAME, "alice")] + [
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    csr = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(names)).sign(
        key, hashes.SHA256())
    return csr.public_bytes(serialization.Encoding.PEM)


def csr(signer=SIGNER, request=None, status=None):
    obj = {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
           "metadata": {"name": "req"},
           "spec": {"request": base64.b64encode(request or pem_request()).decode(),
                    "signerName": signer, "usages": ["client auth"]}}
    if status is not None:
        obj["status"] = status
    return obj


APPROVED = {"conditions": [{"type": "Approved", "status": "True", "reason": "OK"}]}


def test_approving_takes_the_approve_verb_on_the_signer():
    server = Server(("alice", "approve", SIGNER))
    run(CertificateApproval(server), Attributes(
        CSRS, csr(status=APPROVED), UPDATE, old=csr(), name="req", subresource="approval"))
    assert server.authorizer.asked == [("approve", "certificates.k8s.io", "*", "signers",
                                        SIGNER)]
    with pytest.raises(errors.Forbidden) as caught:
        run(CertificateApproval(server), Attributes(
            CSRS, csr(status=APPROVED), UPDATE, old=csr(), name="req", subresource="approval",
            user=UserInfo("bob")))
    assert caught.value.message == (
        'certificatesigningrequests.certificates.k8s.io "req" is forbidden: user not permitted '
        'to approve requests with signerName "example.com/signer"')
    # bob was asked about the signer, then about its whole domain.
    assert server.authorizer.asked[1:] == [
        ("approve", "certificates.k8s.io", "*", "signers", SIGNER),
        ("approve", "certificates.k8s.io", "*", "signers", "example.com/*")]


def test_a_domain_wide_grant_and_other_writes():
    server = Server(("alice", "approve", "example.com/*"))
    run(CertificateApproval(server), Attributes(
        CSRS, csr(status=APPROVED), UPDATE, old=csr(), name="req", subresource="approval"))
    # The object itself and its status are not the approval plugin's business.
    run(CertificateApproval(Server()), Attributes(CSRS, csr(), UPDATE, old=csr(), name="req"))
    assert not CertificateApproval(server).handles(CREATE)


def test_issuing_takes_the_sign_verb():
    issued = dict(APPROVED, certificate="LS0tLS1CRUdJTg==")
    with pytest.raises(errors.Forbidden) as caught:
        run(CertificateSigning(Server()), Attributes(
            CSRS, csr(status=issued), UPDATE, old=csr(status=APPROVED), name="req",
            subresource="status"))
    assert caught.value.message == (
        'certificatesigningrequests.certificates.k8s.io "req" is forbidden: user not permitted '
        'to sign requests with signerName "example.com/signer"')
    run(CertificateSigning(Server(("alice", "sign", SIGNER))), Attributes(
        CSRS, csr(status=issued), UPDATE, old=csr(status=APPROVED), name="req",
        subresource="status"))
    # A status write that changes neither the certificate nor the conditions is left alone.
    run(CertificateSigning(Server()), Attributes(
        CSRS, csr(status=APPROVED), UPDATE, old=csr(status=APPROVED), name="req",
        subresource="status"))


def test_no_system_masters_certificates_for_the_apiserver_client_signer():
    plugin = CertificateSubjectRestriction()
    client = "kubernetes.io/kube-apiserver-client"
    with pytest.raises(errors.Forbidden) as caught:
        run(plugin, Attributes(CSRS, csr(client, pem_request("devs", "system:masters"))))
    assert caught.value.message == (
        'certificatesigningrequests.certificates.k8s.io "req" is forbidden: use of '
        'kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed')
    run(plugin, Attributes(CSRS, csr(client, pem_request("devs"))))
    run(plugin, Attributes(CSRS, csr(SIGNER, pem_request("system:masters"))))
