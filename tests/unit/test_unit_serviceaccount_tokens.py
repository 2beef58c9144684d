"""JOSE signing and service-account token validation, without a server."""

import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from kapiserver.authentication import AuthenticationError
from kapiserver.authentication import jose
from kapiserver.authentication.serviceaccount import (DEFAULT_ISSUER, ServiceAccountTokens,
                                                      TokenValidator)
from kapiserver.pki import PKI

ACCOUNT = {"metadata": {"name": "bot", "namespace": "ns", "uid": "u-1"}}


@pytest.mark.parametrize("key", [rsa.generate_private_key(public_exponent=65537, key_size=2048),
                                 ec.generate_private_key(ec.SECP256R1()),
                                 ec.generate_private_key(ec.SECP384R1())])
def test_sign_and_verify(key):
    token = jose.sign({"b": 1, "a": 2}, key)
    header, claims, signing_input, signature = jose.parse(token)
    assert header == {"alg": jose.algorithm(key), "kid": jose.key_id(key.public_key())}
    assert list(claims) == ["a", "b"]  # go-jose writes claims sorted
    jose.verify(header, signing_input, signature, key.public_key())
    with pytest.raises(jose.JOSEError):
        jose.verify(header, signing_input + b"x", signature, key.public_key())
    with pytest.raises(jose.JOSEError):
        jose.verify(header, signing_input, signature,
                    ec.generate_private_key(ec.SECP256R1()).public_key())


def validator(tokens, account=ACCOUNT, now=None):
    return TokenValidator(tokens, lambda ns, name: account, clock=lambda: now or 1_000_000)


def test_issue_and_validate():
    tokens = ServiceAccountTokens(ec.generate_private_key(ec.SECP256R1()), [], [], [])
    assert tokens.api_audiences == [DEFAULT_ISSUER]
    token, expiry = tokens.issue(ACCOUNT, tokens.api_audiences, 3600, now=1_000_000)
    assert expiry == 1_003_600
    user, matched = validator(tokens).validate(token)
    assert user.name == "system:serviceaccount:ns:bot" and user.uid == "u-1"
    assert user.groups == ("system:serviceaccounts", "system:serviceaccounts:ns")
    assert matched == (DEFAULT_ISSUER,)
    # Expired beyond the minute of leeway, not yet valid, other audience, other uid.
    with pytest.raises(AuthenticationError, match="expired"):
        validator(tokens, now=1_003_661).validate(token)
    with pytest.raises(AuthenticationError, match="not valid yet"):
        validator(tokens, now=999_000).validate(token)
    with pytest.raises(AuthenticationError, match="audiences"):
        validator(tokens).validate(token, ["vault"])
    with pytest.raises(AuthenticationError, match="UID"):
        validator(tokens, {"metadata": {"uid": "u-2"}}).validate(token)
    with pytest.raises(AuthenticationError, match="not found"):
        validator(tokens, None).validate(token)
    # Not a JWT, or another issuer's: not this authenticator's token at all.
    assert validator(tokens).validate("abc") is None
    other = ServiceAccountTokens(tokens.signing_key, [], ["https://else"], [])
    assert validator(tokens).validate(other.issue(ACCOUNT, ["x"], 600)[0]) is None


def test_generated_key_is_created_once(tmp_path):
    pki = PKI(str(tmp_path))
    path = pki.ensure_service_account_key()
    first = open(path, "rb").read()
    assert pki.ensure_service_account_key() == path
    assert open(path, "rb").read() == first
    assert sorted(p.name for p in (tmp_path / "pki").iterdir()) == ["sa.key"]
