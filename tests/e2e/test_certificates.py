"""certificates.k8s.io/v1 CertificateSigningRequests end to end: who asked, approval and
denial with ``kubectl certificate``, status writes, with kubectl and the Python client."""

import base64
import json

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kapiserver.testing import assert_status

ADMIN = dict(user="admin", groups=["system:masters"])
PATH = "/apis/certificates.k8s.io/v1/certificatesigningrequests"


def pem_request(name: str = "alice") -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    request = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(
        [x509.NameAttribute(NameOID.COMMON_NAME, name)])).sign(key, hashes.SHA256())
    return base64.b64encode(request.public_bytes(serialization.Encoding.PEM)).decode()


def csr(name: str, **spec) -> dict:
    return {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"name": name},
            "spec": {"request": pem_request(), "signerName": "example.com/signer",
                     "usages": ["client auth"], **spec}}


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    server = KapiserverProcess(str(tmp_path_factory.mktemp("certificates")), workers=1).start()
    yield server
    server.stop()


def test_the_requestor_is_who_created_it(api):
    body = csr("alice-csr", expirationSeconds=3600, username="mallory",
               groups=["system:masters"])
    # The test server allows everything: alice (a client certificate) may create it.
    api.kubectl("create", "-f", "-", input=json.dumps(body), user="alice", groups=("devs",),
                check=True)
    stored = api.get(f"{PATH}/alice-csr", **ADMIN).json()
    assert stored["spec"]["username"] == "alice"
    assert "devs" in stored["spec"]["groups"] and "system:masters" not in stored["spec"]["groups"]
    assert stored["status"] == {}
    rows = api.kubectl("get", "csr", check=True).stdout.splitlines()
    assert rows[0].split() == ["NAME", "AGE", "SIGNERNAME", "REQUESTOR", "REQUESTEDDURATION",
                               "CONDITION"]
    assert rows[1].split()[2:] == ["example.com/signer", "alice", "60m", "Pending"]


def test_kubectl_approves_and_denies(api):
    from kubernetes import client

    certificates = client.CertificatesV1Api(api.python_client())
    certificates.create_certificate_signing_request(csr("to-approve"))
    certificates.create_certificate_signing_request(csr("to-deny"))
    api.kubectl("certificate", "approve", "to-approve", check=True)
    api.kubectl("certificate", "deny", "to-deny", check=True)
    approved = certificates.read_certificate_signing_request("to-approve")
    (condition,) = approved.status.conditions
    assert (condition.type, condition.status, condition.reason) == ("Approved", "True",
                                                                   "KubectlApprove")
    assert condition.last_update_time is not None and condition.last_transition_time is not None
    denied = certificates.read_certificate_signing_request("to-deny")
    assert denied.status.conditions[0].type == "Denied"
    rows = {line.split()[0]: line.split()[-1] for line in
            api.kubectl("get", "csr", check=True).stdout.splitlines()[1:]}
    assert rows["to-approve"] == "Approved" and rows["to-deny"] == "Denied"
    # Approving a denied request is refused: the two exclude each other.
    assert "already Denied" in api.kubectl("certificate", "approve", "to-deny").stderr
    body = api.get(f"{PATH}/to-deny", **ADMIN).json()
    body["status"]["conditions"].append({"type": "Approved", "status": "True",
                                         "reason": "Changed"})
    response = api.request("PUT", f"{PATH}/to-deny/approval", json=body, **ADMIN)
    assert_status(response, 422, "Invalid",
                  'CertificateSigningRequest.certificates.k8s.io "to-deny" is invalid: '
                  'status.conditions[1].type: Invalid value: "Approved": Approved and Denied '
                  "conditions are mutually exclusive")


def test_conditions_only_change_through_approval(api):
    from kubernetes import client

    certificates = client.CertificatesV1Api(api.python_client())
    certificates.create_certificate_signing_request(csr("plain"))
    body = api.get(f"{PATH}/plain", **ADMIN).json()
    body["status"] = {"conditions": [{"type": "Approved", "status": "True",
                                      "reason": "Sneaky"}]}
    response = api.request("PUT", f"{PATH}/plain/status", json=body, **ADMIN)
    assert_status(response, 422, "Invalid",
                  'CertificateSigningRequest.certificates.k8s.io "plain" is invalid: '
                  'status.conditions: Forbidden: updates may not add a condition of type '
                  '"Approved"')
    # A plain update keeps spec and status as they were.
    body = api.get(f"{PATH}/plain", **ADMIN).json()
    body["spec"]["usages"] = ["server auth"]
    body["metadata"]["labels"] = {"a": "b"}
    updated = api.request("PUT", f"{PATH}/plain", json=body, **ADMIN).json()
    assert updated["spec"]["usages"] == ["client auth"] and updated["metadata"]["labels"]
    # The signer's certificate goes through status, once.
    body = api.get(f"{PATH}/plain", **ADMIN).json()
    body["status"] = {"certificate": base64.b64encode(b"not a certificate").decode()}
    response = api.request("PUT", f"{PATH}/plain/status", json=body, **ADMIN)
    assert_status(response, 422, "Invalid",
                  'CertificateSigningRequest.certificates.k8s.io "plain" is invalid: '
                  'status.certificate: Invalid value: "<certificate data>": must contain at '
                  "least one CERTIFICATE PEM block")


def test_requests_are_selected_by_signer(api):
    from kubernetes import client

    certificates = client.CertificatesV1Api(api.python_client())
    certificates.create_certificate_signing_request(csr("kubelet-serving",
                                                        signerName="kubernetes.io/kubelet-serving",
                                                        usages=["server auth"]))
    names = [item.metadata.name for item in certificates.list_certificate_signing_request(
        field_selector="spec.signerName=kubernetes.io/kubelet-serving").items]
    assert names == ["kubelet-serving"]
    rows = api.kubectl("get", "csr", "--field-selector", "spec.signerName!=example.com/signer",
                       check=True).stdout.splitlines()
    assert [r.split()[0] for r in rows[1:]] == ["kubelet-serving"]
    response = api.get(f"{PATH}?fieldSelector=spec.username%3Dalice", **ADMIN)
    assert_status(response, 400, "BadRequest")


def test_invalid_requests(api):
    response = api.request("POST", PATH, json=csr("bad", request=base64.b64encode(
        b"hello").decode(), usages=[], expirationSeconds=60), **ADMIN)
    assert_status(response, 422, "Invalid",
                  'CertificateSigningRequest.certificates.k8s.io "bad" is invalid: '
                  "[spec.request: Invalid value: []byte{0x68, 0x65, 0x6c, 0x6c, 0x6f}: PEM "
                  "block type must be CERTIFICATE REQUEST, spec.usages: Required value, "
                  "spec.expirationSeconds: Invalid value: 60: may not specify a duration less "
                  "than 600 seconds (10 minutes)]")
