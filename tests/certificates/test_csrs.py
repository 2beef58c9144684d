"""certificates.k8s.io/v1 CertificateSigningRequests: validation, the requestor, and the
status and approval strategies."""

import base64
import functools

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kapiserver.authentication import UserInfo
from kapiserver_plugins.certificates.csrs import (CSRS, CSRStrategy, csr_condition,
                                                  request_problem, set_requestor)
from tests.support.kinds import create, stored, texts, update

STRATEGY = CSRStrategy(CSRS)
APPROVAL = STRATEGY.approval_strategy()
STATUS = STRATEGY.status_strategy()


@functools.lru_cache(maxsize=1)
def pem_request() -> bytes:
    key = ec.generate_private_key(ec.SECP256R1())
    csr = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(
        [x509.NameAttribute(NameOID.COMMON_NAME, "alice")])).sign(key, hashes.SHA256())
    return csr.public_bytes(serialization.Encoding.PEM)


def csr(request: bytes | None = None, **spec) -> dict:
    body = {"request": base64.b64encode(request or pem_request()).decode(),
            "signerName": "example.com/signer", "usages": ["client auth"], **spec}
    return {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"name": "req"}, "spec": body}


def test_a_valid_request():
    obj, errors = create(STRATEGY, csr(username="mallory", groups=["system:masters"]))
    assert errors == []
    assert "username" not in obj["spec"] and "groups" not in obj["spec"]
    assert "generation" not in obj["metadata"]


def test_the_requestor_comes_from_the_user():
    obj, _ = create(STRATEGY, csr())
    set_requestor(obj, UserInfo("alice", "u-1", ("devs",), {"scopes": ("a",)}))
    assert obj["spec"] == {**obj["spec"], "username": "alice", "uid": "u-1", "groups": ["devs"],
                           "extra": {"scopes": ["a"]}}
    assert list(obj["spec"])[-4:] == ["username", "uid", "groups", "extra"]


def test_request_must_be_a_signed_certificate_request():
    assert request_problem(pem_request()) == ""
    assert request_problem(b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n") \
        == "PEM block type must be CERTIFICATE REQUEST"
    _, errors = create(STRATEGY, csr(b"junk"))
    assert texts(errors) == ["spec.request: Invalid value: []byte{0x6a, 0x75, 0x6e, 0x6b}: PEM "
                             "block type must be CERTIFICATE REQUEST"]
    der = x509.load_pem_x509_csr(pem_request()).public_bytes(serialization.Encoding.DER)
    forged = der[:-1] + bytes([der[-1] ^ 1])
    tampered = (b"-----BEGIN CERTIFICATE REQUEST-----\n" + base64.encodebytes(forged)
                + b"-----END CERTIFICATE REQUEST-----\n")
    assert request_problem(tampered) in ("x509: ECDSA verification failure",
                                         "x509: malformed certificate request")


def test_usages_signer_and_expiration():
    _, errors = create(STRATEGY, csr(usages=["client auth", "flying", "client auth"],
                                     signerName="kubernetes.io/legacy-unknown",
                                     expirationSeconds=60))
    assert texts(errors)[0].startswith('spec.usages[1]: Unsupported value: "flying": supported '
                                       'values: "any", "cert sign"')
    assert texts(errors)[1:] == [
        'spec.usages[2]: Duplicate value: "client auth"',
        'spec.signerName: Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName '
        "is not allowed via this API version",
        "spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 600 "
        "seconds (10 minutes)"]
    assert texts(create(STRATEGY, csr(usages=[], signerName="signer"))[1]) == [
        "spec.usages: Required value",
        'spec.signerName: Invalid value: "signer": must be a fully qualified domain and path of '
        "the form 'example.com/signer-name'"]
    assert texts(create(STRATEGY, csr(signerName="example/x"))[1]) == [
        'spec.signerName: Invalid value: "example": should be a domain with at least two '
        "segments separated by dots"]


def test_updates_keep_spec_and_status():
    old = stored(STRATEGY, csr())
    new = csr(usages=["server auth"])
    new["metadata"] = {**old["metadata"], "labels": {"a": "b"}}
    new["status"] = {"conditions": [{"type": "Approved", "status": "True"}]}
    updated, errors = update(STRATEGY, new, old)
    assert errors == []
    assert updated["spec"] == old["spec"] and updated["status"] == old["status"] == {}
    assert updated["metadata"]["labels"] == {"a": "b"}


def approved(obj: dict, kind="Approved") -> dict:
    return {**obj, "status": {"conditions": [{"type": kind, "reason": "KubectlApprove",
                                              "message": "ok"}]}}


def test_approval_adds_a_condition_with_timestamps():
    old = stored(STRATEGY, csr())
    new = approved(old)
    new["spec"] = {**old["spec"], "usages": ["server auth"]}
    APPROVAL.apply_defaults(new)
    APPROVAL.prepare_for_update(new, old)
    assert new["spec"] == old["spec"]
    (condition,) = new["status"]["conditions"]
    assert condition["status"] == "True" and condition["lastUpdateTime"]
    assert condition["lastTransitionTime"] == condition["lastUpdateTime"]
    assert APPROVAL.validate_update(new, old) == []
    assert csr_condition(new) == "Approved"
    STATUS_ONLY = approved(old)
    STATUS.apply_defaults(STATUS_ONLY)
    STATUS.prepare_for_update(STATUS_ONLY, old)
    assert texts(STATUS.validate_update(STATUS_ONLY, old)) == [
        'status.conditions: Forbidden: updates may not add a condition of type "Approved"']


def test_approved_and_denied_exclude_each_other_and_stay():
    old = approved(stored(STRATEGY, csr()))
    APPROVAL.apply_defaults(old)
    APPROVAL.prepare_for_update(old, stored(STRATEGY, csr()))
    both = {**old, "status": {"conditions": old["status"]["conditions"] + [
        {"type": "Denied"}]}}
    APPROVAL.apply_defaults(both)
    APPROVAL.prepare_for_update(both, old)
    assert texts(APPROVAL.validate_update(both, old)) == [
        'status.conditions[1].type: Invalid value: "Denied": Approved and Denied conditions are '
        "mutually exclusive"]
    removed = {**old, "status": {}}
    APPROVAL.prepare_for_update(removed, old)
    assert texts(APPROVAL.validate_update(removed, old)) == [
        'status.conditions: Forbidden: updates may not remove a condition of type "Approved"']
    assert csr_condition(both) == "Denied"


def test_status_may_set_a_certificate_once():
    old = stored(STRATEGY, csr())
    pem = b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"
    new = {**old, "status": {"certificate": base64.b64encode(pem).decode()}}
    STATUS.prepare_for_update(new, old)
    assert texts(STATUS.validate_update(new, old)) == [
        'status.certificate: Invalid value: "<certificate data>": only CERTIFICATE PEM blocks '
        'are allowed, found "PRIVATE KEY"']


def test_table_cells():
    obj = stored(STRATEGY, csr(expirationSeconds=3600))
    obj["spec"]["username"] = "alice"
    assert STRATEGY.table_cells(obj)[2:] == ["example.com/signer", "alice", "60m", "Pending"]
