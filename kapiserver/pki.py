"""The data dir's own PKI: a CA, the serving certificate, client certificates, kubeconfigs.

Keys and certificates are built with ``cryptography`` (pyOpenSSL's own maintainers point
there: pyOpenSSL ≥ 24 deprecates key generation and has dropped ``X509Extension``);
pyOpenSSL verifies client certificates at request time (``authn`` plugin). ECDSA P-256
keys keep first start well under a second.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import base64

import yaml
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_DAYS = 3650
LEAF_DAYS = 365
#: A serving certificate closer than this to expiry is renewed at start.
RENEW_BEFORE = datetime.timedelta(days=30)
ADMIN_USER = "admin"
ADMIN_GROUPS = ("system:masters",)


class PKI:
    """The certificates under ``<data-dir>/pki``; every ``ensure_*`` reuses what is valid."""

    def __init__(self, data_dir: str):
        self.data_dir = data_dir
        self.dir = os.path.join(data_dir, "pki")
        self.ca_cert_file = os.path.join(self.dir, "ca.crt")
        self.ca_key_file = os.path.join(self.dir, "ca.key")
        self.serving_cert_file = os.path.join(self.dir, "apiserver.crt")
        self.serving_key_file = os.path.join(self.dir, "apiserver.key")
        self.client_ca_bundle_file = os.path.join(self.dir, "client-ca-bundle.crt")
        self.admin_kubeconfig_file = os.path.join(data_dir, "admin.kubeconfig")
        self.service_account_key_file = os.path.join(self.dir, "sa.key")

    # -- the CA ----------------------------------------------------------------------------

    def ensure_ca(self) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
        """Load the CA, creating it on first start."""
        if os.path.exists(self.ca_cert_file) and os.path.exists(self.ca_key_file):
            return _load_cert(self.ca_cert_file), _load_key(self.ca_key_file)
        os.makedirs(self.dir, mode=0o700, exist_ok=True)
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kapiserver-ca")])
        now = _now()
        cert = (x509.CertificateBuilder()
                .subject_name(name).issuer_name(name)
                .public_key(key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(minutes=5))
                .not_valid_after(now + datetime.timedelta(days=CA_DAYS))
                .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True,
                                             crl_sign=True, content_commitment=False,
                                             key_encipherment=False, data_encipherment=False,
                                             key_agreement=False, encipher_only=False,
                                             decipher_only=False), critical=True)
                .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                               critical=False)
                .sign(key, hashes.SHA256()))
        _write_key(self.ca_key_file, key)
        _write(self.ca_cert_file, _cert_pem(cert))
        return cert, key

    # -- service-account tokens ----------------------------------------------------------

    def ensure_service_account_key(self) -> str:
        """Create the service-account signing key (``sa.key``, ES256) unless it exists.

        Created with a hard link, which fails when the file exists: processes racing to
        create it (gunicorn workers) all end up with the one that was linked first.
        """
        if not os.path.exists(self.service_account_key_file):
            os.makedirs(self.dir, mode=0o700, exist_ok=True)
            tmp = f"{self.service_account_key_file}.tmp.{os.getpid()}"
            _write(tmp, _key_pem(ec.generate_private_key(ec.SECP256R1())))
            try:
                os.link(tmp, self.service_account_key_file)
            except FileExistsError:
                pass
            finally:
                os.unlink(tmp)
        return self.service_account_key_file

    # -- serving -------------------------------------------------------------------------

    def ensure_serving_cert(self, hosts: list[str]) -> None:
        """Make sure the serving certificate is signed by the CA and covers ``hosts``."""
        ca_cert, ca_key = self.ensure_ca()
        wanted = _sans(hosts)
        if os.path.exists(self.serving_cert_file) and os.path.exists(self.serving_key_file):
            cert = _load_cert(self.serving_cert_file)
            try:
                have = set(cert.extensions.get_extension_for_class(
                    x509.SubjectAlternativeName).value)
            except x509.ExtensionNotFound:
                have = set()
            if (_signed_by(cert, ca_cert) and set(wanted) <= have
                    and cert.not_valid_after_utc - _now() > RENEW_BEFORE):
                return
        key = ec.generate_private_key(ec.SECP256R1())
        cert = _leaf(ca_cert, ca_key, key, "kapiserver", (), ExtendedKeyUsageOID.SERVER_AUTH,
                     wanted)
        _write_key(self.serving_key_file, key)
        _write(self.serving_cert_file, _cert_pem(cert))

    def write_client_ca_bundle(self, extra_ca_files=()) -> str:
        """Write the CAs the TLS layer accepts client certificates from; return its path."""
        ca_cert, _ = self.ensure_ca()
        pems = [_cert_pem(ca_cert)]
        for path in extra_ca_files:
            if path:
                with open(path, "rb") as f:
                    pems.append(f.read().strip() + b"\n")
        _write(self.client_ca_bundle_file, b"".join(pems))
        return self.client_ca_bundle_file

    # -- clients ---------------------------------------------------------------------------

    def issue_client_cert(self, user: str, groups=(), days: int = LEAF_DAYS) -> tuple[bytes, bytes]:
        """Return (certificate PEM, key PEM) for ``user`` in ``groups``, signed by the CA."""
        ca_cert, ca_key = self.ensure_ca()
        key = ec.generate_private_key(ec.SECP256R1())
        cert = _leaf(ca_cert, ca_key, key, user, groups, ExtendedKeyUsageOID.CLIENT_AUTH,
                     days=days)
        return _cert_pem(cert), _key_pem(key)

    def ensure_admin_kubeconfig(self, server_url: str, embed_ca: bool = True) -> str:
        """Write ``admin.kubeconfig`` (``admin``, group ``system:masters``) unless current."""
        ca_cert, _ = self.ensure_ca()
        ca_pem = _cert_pem(ca_cert) if embed_ca else None
        if os.path.exists(self.admin_kubeconfig_file):
            try:
                with open(self.admin_kubeconfig_file) as f:
                    existing = yaml.safe_load(f)
                cluster = existing["clusters"][0]["cluster"]
                user_cert = base64.b64decode(existing["users"][0]["user"]
                                             ["client-certificate-data"])
                cert = x509.load_pem_x509_certificate(user_cert)
                current_ca = cluster.get("certificate-authority-data")
                if (cluster["server"] == server_url and _signed_by(cert, ca_cert)
                        and current_ca == (_b64(ca_pem) if ca_pem else None)
                        and cert.not_valid_after_utc - _now() > RENEW_BEFORE):
                    return self.admin_kubeconfig_file
            except (OSError, KeyError, IndexError, TypeError, ValueError, yaml.YAMLError):
                pass
        cert_pem, key_pem = self.issue_client_cert(ADMIN_USER, ADMIN_GROUPS)
        write_kubeconfig(self.admin_kubeconfig_file, server_url, ca_pem, cert_pem, key_pem,
                         user=ADMIN_USER)
        return self.admin_kubeconfig_file


def write_kubeconfig(path: str, server_url: str, ca_pem: bytes | None, cert_pem: bytes | None,
                     key_pem: bytes | None, user: str = "admin", token: str | None = None,
                     name: str = "kapiserver") -> None:
    """Write a kubeconfig for one cluster, one user and one context, mode 0600."""
    cluster = {"server": server_url}
    if ca_pem:
        cluster["certificate-authority-data"] = _b64(ca_pem)
    credentials = {}
    if cert_pem:
        credentials["client-certificate-data"] = _b64(cert_pem)
        credentials["client-key-data"] = _b64(key_pem)
    if token:
        credentials["token"] = token
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": user, "user": credentials}],
        "contexts": [{"name": f"{user}@{name}", "context": {"cluster": name, "user": user}}],
        "current-context": f"{user}@{name}",
        "preferences": {},
    }
    _write(path, yaml.safe_dump(config, sort_keys=False).encode())


def server_url(bind_address: str, port: int) -> str:
    """The URL clients use: the bind address, or loopback when bound to every address."""
    host = bind_address
    if ipaddress.ip_address(host).is_unspecified:
        host = "127.0.0.1" if ipaddress.ip_address(host).version == 4 else "::1"
    if ":" in host:
        host = f"[{host}]"
    return f"https://{host}:{port}"


def serving_hosts(bind_address: str, extra=()) -> list[str]:
    """Names the generated serving certificate must cover."""
    hosts = ["localhost", "127.0.0.1"]
    if not ipaddress.ip_address(bind_address).is_unspecified:
        extra = [bind_address, *extra]
    for host in extra:
        if host not in hosts:
            hosts.append(host)
    return hosts


def _sans(hosts) -> list[x509.GeneralName]:
    sans = []
    for host in hosts:
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            sans.append(x509.DNSName(host))
    return sans


def _leaf(ca_cert, ca_key, key, common_name, organizations, usage, sans=(), days=LEAF_DAYS):
    attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    now = _now()
    not_after = now + datetime.timedelta(days=days)
    # days <= 0 issues an already expired certificate (tests of refusal need one).
    not_before = min(now - datetime.timedelta(minutes=5), not_after - datetime.timedelta(hours=1))
    builder = (x509.CertificateBuilder()
               .subject_name(x509.Name(attributes))
               .issuer_name(ca_cert.subject)
               .public_key(key.public_key())
               .serial_number(x509.random_serial_number())
               .not_valid_before(not_before)
               .not_valid_after(not_after)
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
               .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=True,
                                            content_commitment=False, data_encipherment=False,
                                            key_agreement=False, key_cert_sign=False,
                                            crl_sign=False, encipher_only=False,
                                            decipher_only=False), critical=True)
               .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                   ca_cert.public_key()), critical=False))
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(list(sans)), critical=False)
    return builder.sign(ca_key, hashes.SHA256())


def _signed_by(cert, ca_cert) -> bool:
    """True when ``ca_cert`` signed ``cert`` (names alone do not tell two CAs apart)."""
    try:
        cert.verify_directly_issued_by(ca_cert)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _cert_pem(cert) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _key_pem(key) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _load_cert(path):
    with open(path, "rb") as f:
        return x509.load_pem_x509_certificate(f.read())


def _load_key(path):
    with open(path, "rb") as f:
        return serialization.load_pem_private_key(f.read(), password=None)


def _write_key(path, key) -> None:
    _write(path, _key_pem(key))


def _write(path: str, data: bytes) -> None:
    """Write atomically with mode 0600, so a crash never leaves half a certificate."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = f"{path}.tmp.{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
