"""Compact JWS (RS256, ES256/384/512) signing and verification, and JWKs, on ``cryptography``.

Service-account tokens need only this much of JOSE, so it is written here on the
``cryptography`` primitives kapiserver already depends on rather than adding a JWT
library. Key ids are upstream's: base64url(SHA-256(PKIX DER of the public key)).
"""

from __future__ import annotations

import base64
import hashlib
import json

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import (decode_dss_signature,
                                                             encode_dss_signature)

_CURVES = {"secp256r1": ("ES256", hashes.SHA256, 32, "P-256"),
           "secp384r1": ("ES384", hashes.SHA384, 48, "P-384"),
           "secp521r1": ("ES512", hashes.SHA512, 66, "P-521")}


class JOSEError(Exception):
    """A token that is not a well-formed compact JWS, or whose signature does not verify."""


def b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64decode(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (ValueError, TypeError) as err:
        raise JOSEError(f"invalid base64: {err}") from None


def algorithm(key) -> str:
    """The JWS ``alg`` for a private or public key: RS256 for RSA, ES* by curve."""
    if isinstance(key, (rsa.RSAPrivateKey, rsa.RSAPublicKey)):
        return "RS256"
    if isinstance(key, (ec.EllipticCurvePrivateKey, ec.EllipticCurvePublicKey)):
        if key.curve.name in _CURVES:
            return _CURVES[key.curve.name][0]
    raise JOSEError(f"unsupported key type {type(key).__name__}")


def key_id(public_key) -> str:
    """Upstream's ``keyIDFromPublicKey``."""
    der = public_key.public_bytes(serialization.Encoding.DER,
                                  serialization.PublicFormat.SubjectPublicKeyInfo)
    return b64encode(hashlib.sha256(der).digest())


def _json(obj) -> bytes:
    return json.dumps(obj, separators=(",", ":"), sort_keys=False).encode()


def sign(claims: dict, private_key) -> str:
    """Sign ``claims`` (serialized with sorted keys, as go-jose does) into a compact JWS."""
    alg = algorithm(private_key)
    header = {"alg": alg, "kid": key_id(private_key.public_key())}
    signing_input = f"{b64encode(_json(header))}.{b64encode(_json(dict(sorted(claims.items()))))}"
    data = signing_input.encode()
    if alg == "RS256":
        signature = private_key.sign(data, padding.PKCS1v15(), hashes.SHA256())
    else:
        _, hash_type, size, _ = _CURVES[private_key.curve.name]
        r, s = decode_dss_signature(private_key.sign(data, ec.ECDSA(hash_type())))
        signature = r.to_bytes(size, "big") + s.to_bytes(size, "big")
    return f"{signing_input}.{b64encode(signature)}"


def parse(token: str) -> tuple[dict, dict, bytes, bytes]:
    """Split a compact JWS: ``(header, claims, signing input, signature)``, unverified."""
    parts = token.split(".")
    if len(parts) != 3:
        raise JOSEError("not a compact JWS")
    try:
        header = json.loads(b64decode(parts[0]))
        claims = json.loads(b64decode(parts[1]))
    except ValueError as err:
        raise JOSEError(f"invalid JSON: {err}") from None
    if not isinstance(header, dict) or not isinstance(claims, dict):
        raise JOSEError("header and claims must be JSON objects")
    return header, claims, f"{parts[0]}.{parts[1]}".encode(), b64decode(parts[2])


def verify(header: dict, signing_input: bytes, signature: bytes, public_key) -> None:
    """Raise ``JOSEError`` unless ``signature`` is ``public_key``'s over ``signing_input``."""
    alg = header.get("alg")
    try:
        expected = algorithm(public_key)
    except JOSEError:
        raise
    if alg != expected:
        raise JOSEError(f"unexpected signature algorithm {alg!r}; expected {expected!r}")
    try:
        if alg == "RS256":
            public_key.verify(signature, signing_input, padding.PKCS1v15(), hashes.SHA256())
        else:
            _, hash_type, size, _ = _CURVES[public_key.curve.name]
            if len(signature) != 2 * size:
                raise JOSEError("invalid signature length")
            r = int.from_bytes(signature[:size], "big")
            s = int.from_bytes(signature[size:], "big")
            public_key.verify(encode_dss_signature(r, s), signing_input, ec.ECDSA(hash_type()))
    except InvalidSignature:
        raise JOSEError("invalid signature") from None


def jwk(public_key) -> dict:
    """The public key as a JWK, fields in go-jose's order."""
    out = {"use": "sig"}
    if isinstance(public_key, rsa.RSAPublicKey):
        numbers = public_key.public_numbers()
        out.update(kty="RSA", kid=key_id(public_key), alg="RS256",
                   n=b64encode(numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big")),
                   e=b64encode(numbers.e.to_bytes((numbers.e.bit_length() + 7) // 8, "big")))
        return out
    alg, _, size, crv = _CURVES[public_key.curve.name]
    numbers = public_key.public_numbers()
    out.update(kty="EC", kid=key_id(public_key), crv=crv, alg=alg,
               x=b64encode(numbers.x.to_bytes(size, "big")),
               y=b64encode(numbers.y.to_bytes(size, "big")))
    return out
