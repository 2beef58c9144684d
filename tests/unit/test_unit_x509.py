"""Unit tests of the x509 client-certificate authenticator."""

import pytest
from cryptography import x509 as cx509
from cryptography.hazmat.primitives import serialization
from OpenSSL import crypto

from kapiserver.authentication import AuthenticationError, AuthenticationRequest, UserInfo
from kapiserver.pki import PKI
from kapiserver_plugins.authn import x509 as x509_plugin
from kapiserver_plugins.authn.x509 import X509Authenticator


def der(pem: bytes) -> bytes:
    return cx509.load_pem_x509_certificate(pem).public_bytes(serialization.Encoding.DER)


def req(cert_der):
    return AuthenticationRequest(headers={}, peer_certificate=cert_der)


@pytest.fixture(scope="module")
def pkis(tmp_path_factory):
    one = PKI(str(tmp_path_factory.mktemp("x509-one")))
    one.ensure_serving_cert(["localhost"])
    two = PKI(str(tmp_path_factory.mktemp("x509-two")))
    two.ensure_ca()
    return one, two


@pytest.fixture
def authenticator(pkis):
    with open(pkis[0].ca_cert_file, "rb") as f:
        ca = crypto.load_certificate(crypto.FILETYPE_PEM, f.read())
    return X509Authenticator([ca])


def test_cn_is_name_o_are_groups(pkis, authenticator):
    cert, _ = pkis[0].issue_client_cert("alice", ("devs", "system:masters"))
    user = authenticator.authenticate(req(der(cert)))
    assert user == UserInfo("alice", "", ("devs", "system:masters"))


def test_no_groups(pkis, authenticator):
    cert, _ = pkis[0].issue_client_cert("bob")
    assert authenticator.authenticate(req(der(cert))) == UserInfo("bob", "", ())


def test_no_certificate_is_no_credentials(authenticator):
    assert authenticator.authenticate(req(None)) is None
    assert authenticator.authenticate(req(b"")) is None


def test_certificate_from_another_ca_is_rejected(pkis, authenticator):
    cert, _ = pkis[1].issue_client_cert("mallory", ("system:masters",))
    with pytest.raises(AuthenticationError, match="x509: certificate verification failed"):
        authenticator.authenticate(req(der(cert)))
    # not cached as a success: still rejected
    with pytest.raises(AuthenticationError):
        authenticator.authenticate(req(der(cert)))


def test_server_auth_only_certificate_is_rejected(pkis, authenticator):
    with open(pkis[0].serving_cert_file, "rb") as f:
        serving = f.read()
    with pytest.raises(AuthenticationError,
                       match="x509: certificate specifies an incompatible key usage"):
        authenticator.authenticate(req(der(serving)))


def test_result_is_cached(pkis, authenticator, monkeypatch):
    cert = der(pkis[0].issue_client_cert("carol", ("g",))[0])
    first = authenticator.authenticate(req(cert))
    calls = []

    def verify(*args):
        calls.append(args)
        raise AssertionError("not cached")

    monkeypatch.setattr(authenticator, "_verify", verify)
    assert authenticator.authenticate(req(cert)) == first == UserInfo("carol", "", ("g",))
    assert calls == []


def test_cache_is_bounded(pkis, authenticator, monkeypatch):
    monkeypatch.setattr(x509_plugin, "CACHE_SIZE", 2)
    certs = [der(pkis[0].issue_client_cert(f"u{i}")[0]) for i in range(3)]
    for cert in certs:
        authenticator.authenticate(req(cert))
    assert list(authenticator._cache) == certs[1:]


def test_from_config_trusts_data_dir_ca_and_client_ca_file(pkis):
    one, two = pkis

    class Config:
        data_dir = one.data_dir
        client_ca_file = two.ca_cert_file

    auth = X509Authenticator.from_config(Config)
    assert auth.authenticate(req(der(one.issue_client_cert("a")[0]))).name == "a"
    assert auth.authenticate(req(der(two.issue_client_cert("b")[0]))).name == "b"

    Config.client_ca_file = ""
    only_own = X509Authenticator.from_config(Config)
    with pytest.raises(AuthenticationError):
        only_own.authenticate(req(der(two.issue_client_cert("b")[0])))


def _cert_without_cn(pki):
    import datetime

    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    ca_cert, ca_key = pki.ensure_ca()
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (cx509.CertificateBuilder()
            .subject_name(cx509.Name([cx509.NameAttribute(NameOID.ORGANIZATION_NAME, "devs")]))
            .issuer_name(ca_cert.subject)
            .public_key(key.public_key())
            .serial_number(cx509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(cx509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.DER)


def test_missing_common_name_is_no_user(pkis, authenticator):
    # CommonNameUserConversion: a certificate without CN authenticates nobody (no error).
    assert authenticator.authenticate(req(_cert_without_cn(pkis[0]))) is None
