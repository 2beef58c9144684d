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
        """The authenticator of a server whose TLS layer verifies client certificates
        against exactly these CAs (the bundle ``serving.prepare_tls`` writes), with
        OpenSSL's client-purpose check of the extended key usage: a certificate the
        handshake accepted needs no second check, so pyOpenSSL and ``cryptography`` are
        only loaded for one that comes without the handshake's verdict."""
        return _LazyCAs(config)

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
        from cryptography import x509 as cx509
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
        from OpenSSL import crypto

        cert = crypto.load_certificate(crypto.FILETYPE_ASN1, der)
        try:
            crypto.X509StoreContext(self.store, cert).verify_certificate()
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
        subject = parsed.subject
        common_names = subject.get_attributes_for_oid(NameOID.COMMON_NAME)
        not_after = min(parsed.not_valid_after_utc, now + datetime.timedelta(minutes=10))
        if not common_names or not common_names[0].value:
            return None, not_after
        groups = tuple(a.value for a in subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME))
        return UserInfo(str(common_names[0].value), "", groups), not_after


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

    def __init__(self, config):
        self.config = config
        self.handshake_verified = True
        self._cache = OrderedDict()
        self._store = None

    @property
    def store(self):
        if self._store is None:
            from OpenSSL import crypto

            from kapiserver.options.types import load_pem_certificates

            store = crypto.X509Store()
            files = [os.path.join(self.config.data_dir, "pki", "ca.crt")]
            files += [self.config.client_ca_file] if self.config.client_ca_file else []
            for path in files:
                for cert in load_pem_certificates(path):
                    store.add_cert(cert)
            self._store = store
        return self._store
