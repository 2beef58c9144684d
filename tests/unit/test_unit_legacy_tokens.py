"""Legacy service-account tokens (those of ``kubernetes.io/service-account-token``
Secrets): issuing them and upstream's legacy validation, without a server."""

import base64

import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from kapiserver.authentication import AuthenticationError, jose
from kapiserver.authentication.serviceaccount import (INVALID_SINCE_LABEL, LEGACY_ISSUER,
                                                      ServiceAccountTokens, TokenValidator)

ACCOUNT = {"metadata": {"name": "bot", "namespace": "ns", "uid": "u-1"}}
SECRET_NAME = "bot-token"


def tokens():
    return ServiceAccountTokens(ec.generate_private_key(ec.SECP256R1()), [], [], [])


def secret(token: str, **meta) -> dict:
    return {"metadata": {"name": SECRET_NAME, "namespace": "ns", **meta},
            "type": "kubernetes.io/service-account-token",
            "data": {"token": base64.b64encode(token.encode()).decode()}}


def validator(tokens, account=ACCOUNT, stored=None):
    return TokenValidator(tokens, lambda ns, name: account,
                          get_secret=lambda ns, name: stored if name == SECRET_NAME else None)


def test_legacy_claims_are_upstreams():
    issuer = tokens()
    token = issuer.issue_legacy(ACCOUNT, secret(""))
    header, claims, signing_input, signature = jose.parse(token)
    jose.verify(header, signing_input, signature, issuer.signing_key.public_key())
    assert claims == {
        "iss": LEGACY_ISSUER,
        "kubernetes.io/serviceaccount/namespace": "ns",
        "kubernetes.io/serviceaccount/secret.name": SECRET_NAME,
        "kubernetes.io/serviceaccount/service-account.name": "bot",
        "kubernetes.io/serviceaccount/service-account.uid": "u-1",
        "sub": "system:serviceaccount:ns:bot"}


def test_a_legacy_token_authenticates_while_its_secret_holds_it():
    issuer = tokens()
    token = issuer.issue_legacy(ACCOUNT, secret(""))
    user, matched = validator(issuer, stored=secret(token)).validate(token)
    assert (user.name, user.uid) == ("system:serviceaccount:ns:bot", "u-1")
    assert user.groups == ("system:serviceaccounts", "system:serviceaccounts:ns")
    assert user.extra == {}
    assert matched == tuple(issuer.api_audiences)
    for stored, account, message in (
            (None, ACCOUNT, "Token has been invalidated"),
            (secret(token, deletionTimestamp="2026-01-01T00:00:00Z"), ACCOUNT,
             "Token has been invalidated"),
            (secret("another"), ACCOUNT, "Token does not match server's copy"),
            (secret(token), None, 'serviceaccounts "bot" not found'),
            (secret(token), {"metadata": {"uid": "u-2"}},
             r"ServiceAccount UID \(u-2\) does not match claim \(u-1\)"),
            (secret(token), {"metadata": {"uid": "u-1", "deletionTimestamp": "x"}},
             "ServiceAccount ns/bot has been deleted"),
            (secret(token, labels={INVALID_SINCE_LABEL: "2026-01-01"}), ACCOUNT,
             "has been marked invalid")):
        with pytest.raises(AuthenticationError, match=message):
            validator(issuer, account, stored).validate(token)


def test_legacy_claims_are_checked():
    issuer = tokens()
    claims = {"iss": LEGACY_ISSUER, "sub": "system:serviceaccount:ns:bot",
              "kubernetes.io/serviceaccount/namespace": "ns",
              "kubernetes.io/serviceaccount/secret.name": SECRET_NAME,
              "kubernetes.io/serviceaccount/service-account.name": "bot",
              "kubernetes.io/serviceaccount/service-account.uid": "u-1"}
    for claim, message in (("sub", "sub claim is missing"),
                           ("kubernetes.io/serviceaccount/namespace",
                            "namespace claim is missing"),
                           ("kubernetes.io/serviceaccount/secret.name",
                            "secretName claim is missing"),
                           ("kubernetes.io/serviceaccount/service-account.uid",
                            "serviceAccountUID claim is missing")):
        token = jose.sign({k: v for k, v in claims.items() if k != claim}, issuer.signing_key)
        with pytest.raises(AuthenticationError, match=message):
            validator(issuer, stored=secret(token)).validate(token)
    token = jose.sign({**claims, "sub": "system:serviceaccount:ns:other"}, issuer.signing_key)
    with pytest.raises(AuthenticationError, match="sub claim is invalid"):
        validator(issuer, stored=secret(token)).validate(token)
    # Signed by a key the server does not know: refused, not passed on.
    stranger = jose.sign(claims, ec.generate_private_key(ec.SECP256R1()))
    with pytest.raises(AuthenticationError):
        validator(issuer, stored=secret(stranger)).validate(stranger)
