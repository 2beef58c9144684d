"""x509 client certificates: CN is the user, O the groups (upstream's ``x509`` authenticator)."""

from __future__ import annotations

import datetime
from collections import OrderedDict

from cryptography import x509 as cx509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from OpenSSL import crypto

from kapiserver.authentication import AuthenticationError, Authenticator, UserInfo
from kapiserver.options.types import load_pem_certificates
from kapiserver.pki import PKI

CACHE_SIZE = 4096


class X509Authenticator(Authenticator):
    """Verify the TLS client certificate against the client CAs and map it to a user.

    The TLS layer already refuses certificates from unknown CAs during the handshake;
    this check keeps the authenticator correct on its own (the handshake may trust more
    CAs, e.g. the request-header CA) and enforces the client-auth key usage, as Go's
    ``x509.VerifyOptions{KeyUsages: ClientAuth}`` does. Results are cached by certificate.
    """

    name = "x509"

    def __init__(self, ca_certs: list[crypto.X509]):
        self.store = crypto.X509Store()
        for cert in ca_certs:
            self.store.add_cert(cert)
        self._cache: OrderedDict[bytes, tuple[UserInfo | None, datetime.datetime]] = OrderedDict()

    @classmethod
    def from_config(cls, config) -> "X509Authenticator":
        pki = PKI(config.data_dir)
        certs = load_pem_certificates(pki.ca_cert_file)
        if config.client_ca_file:
            certs += load_pem_certificates(config.client_ca_file)
        return cls(certs)

    def authenticate(self, request):
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
