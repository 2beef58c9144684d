"""x509 client certificates: CN is the user, O the groups (upstream's ``x509`` authenticator)."""

from __future__ import annotations

import datetime
import os
from collections import OrderedDict

from kapiserver.authentication import AuthenticationError, Authenticator, UserInfo

CACHE_SIZE = 4096


class X509Authenticator(Authenticator):
    """Verify the TLS client certificate against the client CAs and map it to a user.

    The TLS layer already refuses certificates from unknown CAs during the handshake;
    this check keeps the authenticator correct on its own (the handshake may trust more
    CAs, e.g. the request-header CA) and enforces the client-auth key usage, as Go's
    ``x509.VerifyOptions{KeyUsages: ClientAuth}`` does. Results are cached by certificate.
    """

    name = "x509"

    def __init__(self, ca_certs: list, handshake_verified: bool = False):
        from OpenSSL import crypto

        self.store = crypto.X509Store()
        for cert in ca_certs:
            self.store.add_cert(cert)
        self.handshake_verified = handshake_verified
        self._cache: OrderedDict[bytes, tuple[UserInfo | None, datetime.datetime]] = OrderedDict()

    @classmethod
    def from_config(cls, config) -> "X509Authenticator":
        """The authenticator of a server: it trusts the data dir's CA and
        ``--client-ca-file`` (or, for an extension server, the main server's client CA).

        The TLS layer verifies client certificates against the bundle
        ``serving.prepare_tls`` writes, with OpenSSL's client-purpose check of the extended
        key usage. When that bundle holds exactly these CAs, a certificate the handshake
        accepted needs no second check, so pyOpenSSL and ``cryptography`` are only loaded
        for one that comes without the handshake's verdict. When the handshake trusts more
        (the request-header CA), every certificate is verified again here: a front proxy's
        certificate must not authenticate as its CN.
        """
        from . import delegated

        files = [os.path.join(config.data_dir, "pki", "ca.crt")]
        client_ca = (getattr(config, "client_ca_file", "") or
                     delegated.client_ca_file(config))
        if client_ca:
            files.append(client_ca)
        # No bundle (no TLS layer prepared it): nothing vouches for the handshake.
        handshake = _pem_blocks([os.path.join(config.data_dir, "pki", "client-ca-bundle.crt")])
        return _LazyCAs(files, handshake_verified=bool(handshake) and
                        handshake <= _pem_blocks(files))

    def authenticate(self, request):
        if self.handshake_verified and request.peer_certificate_info is not None:
            return user_from_subject(request.peer_certificate_info.get("subject", ()))
        der = request.peer_certificate
        if not der:
            return None
        now = datetime.datetime.now(datetime.timezone.utc)
        cached = self._cache.get(der)
        if cached is not None and cached[1] > now:
            self._cache.move_to_end(der)
            return cached[0]
        user, not_after = self._verify(der, now)
        self._cache[der] = (user, not_after)
        if len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
        return user

    def _verify(self, der: bytes, now) -> tuple[UserInfo | None, datetime.datetime]:
        from cryptography.x509.oid import NameOID

        parsed = verify_client_certificate(self.store, der)
        subject = parsed.subject
        common_names = subject.get_attributes_for_oid(NameOID.COMMON_NAME)
        not_after = min(parsed.not_valid_after_utc, now + datetime.timedelta(minutes=10))
        if not common_names or not common_names[0].value:
            return None, not_after
        groups = tuple(a.value for a in subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME))
        return UserInfo(str(common_names[0].value), "", groups), not_after


def verify_client_certificate(store, der: bytes):
    """Verify a DER client certificate against ``store`` (a pyOpenSSL ``X509Store``) and
    its extended key usage for client authentication, as Go's ``x509.VerifyOptions{KeyUsages:
    ClientAuth}``; return it as a ``cryptography`` certificate or raise
    ``AuthenticationError``."""
    from cryptography import x509 as cx509
    from cryptography.x509.oid import ExtendedKeyUsageOID
    from OpenSSL import crypto

    cert = crypto.load_certificate(crypto.FILETYPE_ASN1, der)
    try:
        crypto.X509StoreContext(store, cert).verify_certificate()
    except crypto.X509StoreContextError as err:
        raise AuthenticationError(f"x509: certificate verification failed: {err}") from None
    parsed = cert.to_cryptography()
    try:
        usages = parsed.extensions.get_extension_for_class(cx509.ExtendedKeyUsage).value
    except cx509.ExtensionNotFound:
        usages = None
    if usages is not None and ExtendedKeyUsageOID.CLIENT_AUTH not in usages and \
            ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE not in usages:
        raise AuthenticationError("x509: certificate specifies an incompatible key usage")
    return parsed


def load_store(files):
    """A pyOpenSSL ``X509Store`` of every certificate in the PEM ``files``."""
    from OpenSSL import crypto

    from kapiserver.options.types import load_pem_certificates

    store = crypto.X509Store()
    for path in files:
        for cert in load_pem_certificates(path):
            store.add_cert(cert)
    return store


def _pem_blocks(files) -> frozenset[bytes]:
    """The certificates in PEM ``files``, as their base64 text (no parsing, no
    ``cryptography``); a missing file holds none."""
    blocks = set()
    for path in files:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            continue
        for chunk in data.split(b"-----BEGIN CERTIFICATE-----")[1:]:
            blocks.add(b"".join(chunk.split(b"-----END CERTIFICATE-----")[0].split()))
    return frozenset(blocks)


def user_from_subject(subject) -> UserInfo | None:
    """CN is the user, each O a group, from a subject as ``ssl`` decodes it
    (``((("commonName", "admin"),), (("organizationName", "system:masters"),))``)."""
    common_names, groups = [], []
    for rdn in subject:
        for attribute, value in rdn:
            if attribute == "commonName":
                common_names.append(value)
            elif attribute == "organizationName":
                groups.append(value)
    if not common_names or not common_names[0]:
        return None
    return UserInfo(str(common_names[0]), "", tuple(groups))


class _LazyCAs(X509Authenticator):
    """``X509Authenticator.from_config``'s: the CA files are read when first needed."""

    def __init__(self, files, handshake_verified: bool):
        self.files = list(files)
        self.handshake_verified = handshake_verified
        self._cache = OrderedDict()
        self._store = None

    @property
    def store(self):
        if self._store is None:
            self._store = load_store(self.files)
        return self._store
