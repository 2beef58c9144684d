"""Service-account tokens: keys, issuing bound tokens, validating them (``pkg/serviceaccount``).

Tokens are JWTs with upstream's claims (``aud``, ``exp``, ``iat``, ``iss``, ``jti``,
``kubernetes.io``, ``nbf``, ``sub``), signed with ``--service-account-signing-key-file``
or the key generated into ``<data-dir>/pki/sa.key``. Validation is upstream's
``jwtTokenAuthenticator`` with the bound-token validator: signature by any verification
key, issuer, audiences, time with one minute of leeway, and the service account still
existing with the uid the token names. The long-lived tokens of
``kubernetes.io/service-account-token`` Secrets (issuer ``kubernetes/serviceaccount``,
made by the token controller) are validated as upstream's legacy validator does: their
Secret must still hold them. Imported in workers only (``cryptography``).
"""

from __future__ import annotations

import base64
import hmac
import time
import uuid

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from . import (ALL_SERVICE_ACCOUNTS_GROUP, SERVICE_ACCOUNT_PREFIX,
               SERVICE_ACCOUNTS_GROUP_PREFIX, AuthenticationError, UserInfo)
from . import jose

DEFAULT_ISSUER = "https://kubernetes.default.svc.cluster.local"
#: The issuer of the long-lived tokens kept in ``kubernetes.io/service-account-token``
#: Secrets (``serviceaccount.LegacyIssuer``), and their private claims.
LEGACY_ISSUER = "kubernetes/serviceaccount"
LEGACY_NAMESPACE_CLAIM = "kubernetes.io/serviceaccount/namespace"
LEGACY_SECRET_NAME_CLAIM = "kubernetes.io/serviceaccount/secret.name"
LEGACY_NAME_CLAIM = "kubernetes.io/serviceaccount/service-account.name"
LEGACY_UID_CLAIM = "kubernetes.io/serviceaccount/service-account.uid"
#: A legacy token's Secret with this label no longer authenticates (upstream's
#: ``InvalidSinceLabelKey``, set by its legacy-token cleaner).
INVALID_SINCE_LABEL = "kubernetes.io/legacy-token-invalid-since"
#: go-jose's ``jwt.DefaultLeeway``.
LEEWAY = 60
CREDENTIAL_ID_KEY = "authentication.kubernetes.io/credential-id"
JWKS_PATH = "/openid/v1/jwks"
OPENID_CONFIGURATION_PATH = "/.well-known/openid-configuration"


def load_private_key(path: str):
    with open(path, "rb") as f:
        return serialization.load_pem_private_key(f.read(), password=None)


def load_public_keys(path: str) -> list:
    """Every public key in a PEM file: public keys, private keys' halves, certificates'
    keys (upstream's ``keyutil.PublicKeysFromFile``)."""
    with open(path, "rb") as f:
        data = f.read()
    keys = []
    for block in data.split(b"-----BEGIN ")[1:]:
        pem = b"-----BEGIN " + block
        label = block.split(b"-----", 1)[0]
        if label == b"CERTIFICATE":
            keys.append(x509.load_pem_x509_certificate(pem).public_key())
        elif label.endswith(b"PRIVATE KEY"):
            keys.append(serialization.load_pem_private_key(pem, password=None).public_key())
        elif label.endswith(b"PUBLIC KEY"):
            keys.append(serialization.load_pem_public_key(pem))
    if not keys:
        raise ValueError(f"{path}: no public key, private key or certificate found")
    return keys


def username(namespace: str, name: str) -> str:
    return f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}"


class ServiceAccountTokens:
    """The server's token signer and verifier, built once per worker from its options.

    ``issuers``: the first signs, all are accepted; ``api_audiences``: the audiences of
    tokens requested without any, and those a request is checked against by default.
    """

    def __init__(self, signing_key, public_keys, issuers, api_audiences, jwks_uri: str = ""):
        self.signing_key = signing_key
        keys = {}
        for key in [signing_key.public_key(), *public_keys]:
            keys.setdefault(jose.key_id(key), key)
        self.public_keys = keys
        self.issuers = list(issuers) or [DEFAULT_ISSUER]
        self.api_audiences = list(api_audiences) or [self.issuers[0]]
        self.jwks_uri = jwks_uri

    @classmethod
    def for_server(cls, server) -> "ServiceAccountTokens":
        """The server's instance, built on first use and kept on the server object."""
        tokens = getattr(server, "service_account_tokens", None)
        if tokens is None:
            tokens = server.service_account_tokens = cls.from_config(server.config)
        return tokens

    @classmethod
    def from_config(cls, config) -> "ServiceAccountTokens":
        from ..pki import PKI, server_url

        signing_file = config.get("service_account_signing_key_file") or ""
        if signing_file:
            signing_key = load_private_key(signing_file)
        else:
            signing_key = load_private_key(PKI(config.data_dir).ensure_service_account_key())
        public = [k for path in config.get("service_account_key_file") or []
                  for k in load_public_keys(path)]
        jwks_uri = server_url(config.bind_address, config.secure_port) + JWKS_PATH
        return cls(signing_key, public, config.get("service_account_issuer") or [],
                   config.get("api_audiences") or [], jwks_uri)

    # -- issuing -------------------------------------------------------------------------

    def issue(self, service_account: dict, audiences, expiration_seconds: int,
              now: float | None = None, secret: dict | None = None) -> tuple[str, int]:
        """A bound token for ``service_account`` (and ``secret``, when bound to one) and
        its expiry (Unix seconds)."""
        now = int(now if now is not None else time.time())
        meta = service_account["metadata"]
        expiry = now + int(expiration_seconds)
        claims = {
            "aud": list(audiences), "exp": expiry, "iat": now, "iss": self.issuers[0],
            "jti": str(uuid.uuid4()),
            "kubernetes.io": {"namespace": meta["namespace"],
                              "serviceaccount": {"name": meta["name"], "uid": meta["uid"]}},
            "nbf": now, "sub": username(meta["namespace"], meta["name"]),
        }
        if secret is not None:
            claims["kubernetes.io"]["secret"] = {"name": secret["metadata"]["name"],
                                                 "uid": secret["metadata"]["uid"]}
        return jose.sign(claims, self.signing_key), expiry

    def issue_legacy(self, service_account: dict, secret: dict) -> str:
        """The long-lived token of a ``kubernetes.io/service-account-token`` Secret
        (``serviceaccount.LegacyClaims``): no audience, no expiry; it authenticates while
        the Secret holds it and the service account exists."""
        meta = service_account["metadata"]
        claims = {
            "iss": LEGACY_ISSUER,
            LEGACY_NAMESPACE_CLAIM: meta["namespace"],
            LEGACY_SECRET_NAME_CLAIM: secret["metadata"]["name"],
            LEGACY_NAME_CLAIM: meta["name"],
            LEGACY_UID_CLAIM: meta["uid"],
            "sub": username(meta["namespace"], meta["name"]),
        }
        return jose.sign(claims, self.signing_key)

    # -- discovery -----------------------------------------------------------------------

    def openid_configuration(self) -> dict:
        algs = sorted({jose.algorithm(k) for k in self.public_keys.values()})
        return {"issuer": self.issuers[0], "jwks_uri": self.jwks_uri,
                "response_types_supported": ["id_token"],
                "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": algs}

    def jwks(self) -> dict:
        return {"keys": [jose.jwk(k) for k in self.public_keys.values()]}


def _go_q(values) -> str:
    """A ``[]string`` as Go's ``%q`` prints it: ``["a" "b"]``."""
    from ..errors import go_quote

    return "[" + " ".join(go_quote(v) for v in values) + "]"


def _audiences(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


class TokenValidator:
    """Validate service-account tokens as upstream's ``jwtTokenAuthenticator`` with the
    bound-token validator does.

    ``get_service_account(namespace, name)`` and ``get_secret(namespace, name)`` return the
    object or ``None``.
    ``validate(token, audiences)`` returns ``None`` for a token that is not this server's
    (not a JWT, or another issuer's), else ``(UserInfo, matched audiences)``, and raises
    ``AuthenticationError`` for one of its tokens that is not valid.
    """

    def __init__(self, tokens: ServiceAccountTokens, get_service_account, clock=time.time,
                 get_secret=None):
        self.tokens = tokens
        self.get_service_account = get_service_account
        self.get_secret = get_secret or (lambda namespace, name: None)
        self.clock = clock

    def validate(self, token: str, audiences=()):
        try:
            header, claims, signing_input, signature = jose.parse(token)
        except jose.JOSEError:
            return None
        legacy = claims.get("iss") == LEGACY_ISSUER
        if not legacy and claims.get("iss") not in self.tokens.issuers:
            return None
        keys = list(self.tokens.public_keys.values())
        kid = header.get("kid")
        if kid and kid in self.tokens.public_keys:
            keys = [self.tokens.public_keys[kid]]
        problems = []
        for key in keys:
            try:
                jose.verify(header, signing_input, signature, key)
                break
            except jose.JOSEError as err:
                problems.append(str(err))
        else:
            raise AuthenticationError(", ".join(problems) or "no verification key")

        token_audiences = _audiences(claims.get("aud")) or self.tokens.api_audiences
        wanted = list(audiences) or self.tokens.api_audiences
        matched = [a for a in token_audiences if a in wanted]
        if not matched:
            raise AuthenticationError(f"token audiences {_go_q(token_audiences)} is invalid "
                                      f"for the target audiences {_go_q(wanted)}")
        self._check_time(claims)
        user = self._legacy_user(token, claims) if legacy else self._user(claims)
        return user, tuple(matched)

    def _check_time(self, claims: dict) -> None:
        now = self.clock()
        try:
            exp, nbf, iat = (claims.get(k) for k in ("exp", "nbf", "iat"))
            if exp is not None and now - LEEWAY > float(exp):
                raise AuthenticationError("service account token has expired")
            if nbf is not None and now + LEEWAY < float(nbf):
                raise AuthenticationError("service account token is not valid yet")
            if iat is not None and now + LEEWAY < float(iat):
                raise AuthenticationError("service account token is issued in the future")
        except (TypeError, ValueError):
            raise AuthenticationError("invalid time claims") from None

    def _legacy_user(self, token: str, claims: dict) -> UserInfo:
        """Upstream's ``legacyValidator`` (with lookup): the claims, the Secret still
        holding this very token, the service account still there with its uid."""
        if not claims.get("sub"):
            raise AuthenticationError("sub claim is missing")
        values = {}
        for claim, what in ((LEGACY_NAMESPACE_CLAIM, "namespace"),
                            (LEGACY_SECRET_NAME_CLAIM, "secretName"),
                            (LEGACY_NAME_CLAIM, "serviceAccountName"),
                            (LEGACY_UID_CLAIM, "serviceAccountUID")):
            value = claims.get(claim)
            if not isinstance(value, str) or not value:
                raise AuthenticationError(f"{what} claim is missing")
            values[what] = value
        namespace, secret_name = values["namespace"], values["secretName"]
        name, uid = values["serviceAccountName"], values["serviceAccountUID"]
        if claims["sub"] != username(namespace, name):
            raise AuthenticationError("sub claim is invalid")
        secret = self.get_secret(namespace, secret_name)
        if secret is None or secret.get("metadata", {}).get("deletionTimestamp"):
            raise AuthenticationError("Token has been invalidated")
        stored = (secret.get("data") or {}).get("token")
        try:
            stored = base64.b64decode(stored or "", validate=True)
        except (ValueError, TypeError):
            stored = b""
        if not hmac.compare_digest(stored, token.encode()):
            raise AuthenticationError("Token does not match server's copy")
        account = self.get_service_account(namespace, name)
        if account is None:
            raise AuthenticationError(f'serviceaccounts "{name}" not found')
        account_meta = account.get("metadata", {})
        if account_meta.get("deletionTimestamp"):
            raise AuthenticationError(f"ServiceAccount {namespace}/{name} has been deleted")
        if account_meta.get("uid", "") != uid:
            raise AuthenticationError(f"ServiceAccount UID ({account_meta.get('uid', '')}) "
                                      f"does not match claim ({uid})")
        if (secret.get("metadata", {}).get("labels") or {}).get(INVALID_SINCE_LABEL):
            raise AuthenticationError(
                f"the token in secret {namespace}/{secret_name} for service account "
                f"{namespace}/{name} has been marked invalid. Use tokens from the "
                "TokenRequest API or manually created secret-based tokens, or remove the "
                f"'{INVALID_SINCE_LABEL}' label from the secret to temporarily allow use of "
                "this token")
        return UserInfo(username(namespace, name), uid,
                        (ALL_SERVICE_ACCOUNTS_GROUP, f"{SERVICE_ACCOUNTS_GROUP_PREFIX}{namespace}"))

    def _user(self, claims: dict) -> UserInfo:
        private = claims.get("kubernetes.io")
        if not isinstance(private, dict):
            raise AuthenticationError("service account token claims are missing")
        namespace = private.get("namespace") or ""
        ref = private.get("serviceaccount") or {}
        name, uid = ref.get("name") or "", ref.get("uid") or ""
        if not namespace or not name:
            raise AuthenticationError("service account token claims are missing")
        if claims.get("sub") != username(namespace, name):
            raise AuthenticationError("service account token subject does not match its "
                                      "claims")
        account = self.get_service_account(namespace, name)
        if account is None:
            raise AuthenticationError(f'serviceaccounts "{name}" not found')
        actual = account.get("metadata", {}).get("uid", "")
        if actual != uid:
            raise AuthenticationError(f"service account UID ({actual}) does not match claim "
                                      f"({uid})")
        if account.get("metadata", {}).get("deletionTimestamp"):
            # Upstream tolerates a minute after deletion; a deleting account is refused.
            raise AuthenticationError("service account has been deleted")
        bound = private.get("secret")
        if isinstance(bound, dict):
            secret = self.get_secret(namespace, bound.get("name") or "")
            if secret is None or secret.get("metadata", {}).get("deletionTimestamp"):
                raise AuthenticationError("service account token has been invalidated")
            secret_uid = secret.get("metadata", {}).get("uid", "")
            if secret_uid != bound.get("uid"):
                raise AuthenticationError(f"secret UID ({secret_uid}) does not match service "
                                          f"account secret ref claim ({bound.get('uid')})")
        extra = {}
        if claims.get("jti"):
            extra[CREDENTIAL_ID_KEY] = (f"JTI={claims['jti']}",)
        return UserInfo(username(namespace, name), uid,
                        (ALL_SERVICE_ACCOUNTS_GROUP, f"{SERVICE_ACCOUNTS_GROUP_PREFIX}{namespace}"),
                        extra)
