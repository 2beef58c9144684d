"""Unit tests of kapiserver.pki: CA, serving certificate, admin kubeconfig, URLs."""

import base64
import ipaddress
import os
import stat

import pytest
import yaml
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from kapiserver.pki import PKI, server_url, serving_hosts, write_kubeconfig


def read(path):
    with open(path, "rb") as f:
        return f.read()


def sans(path):
    cert = x509.load_pem_x509_certificate(read(path))
    return cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value


@pytest.fixture
def pki(tmp_path):
    return PKI(str(tmp_path / "data"))


def test_paths(tmp_path):
    p = PKI(str(tmp_path))
    assert p.ca_cert_file == os.path.join(str(tmp_path), "pki", "ca.crt")
    assert p.serving_key_file == os.path.join(str(tmp_path), "pki", "apiserver.key")
    assert p.admin_kubeconfig_file == os.path.join(str(tmp_path), "admin.kubeconfig")


def test_ensure_ca_is_idempotent(pki):
    cert1, key1 = pki.ensure_ca()
    bytes1 = read(pki.ca_cert_file), read(pki.ca_key_file)
    cert2, key2 = pki.ensure_ca()
    assert cert2 == cert1
    assert cert2.serial_number == cert1.serial_number
    assert key2.private_numbers() == key1.private_numbers()
    assert (read(pki.ca_cert_file), read(pki.ca_key_file)) == bytes1
    assert cert1.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "kapiserver-ca"
    assert cert1.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is True


def test_key_files_are_private(pki):
    pki.ensure_serving_cert(["localhost"])
    for path in (pki.ca_key_file, pki.serving_key_file):
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert not [n for n in os.listdir(pki.dir) if ".tmp." in n]


def test_ensure_serving_cert_writes_signed_server_cert(pki):
    pki.ensure_serving_cert(["localhost", "127.0.0.1"])
    ca, _ = pki.ensure_ca()
    cert = x509.load_pem_x509_certificate(read(pki.serving_cert_file))
    assert cert.issuer == ca.subject
    cert.verify_directly_issued_by(ca)
    eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(eku) == [ExtendedKeyUsageOID.SERVER_AUTH]
    names = sans(pki.serving_cert_file)
    assert names.get_values_for_type(x509.DNSName) == ["localhost"]
    assert names.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]


def test_ensure_serving_cert_regenerates_only_for_new_hosts(pki):
    pki.ensure_serving_cert(["localhost"])
    first = read(pki.serving_cert_file), read(pki.serving_key_file)
    pki.ensure_serving_cert(["localhost"])
    assert (read(pki.serving_cert_file), read(pki.serving_key_file)) == first

    pki.ensure_serving_cert(["localhost", "10.0.0.1", "api.example"])
    second = read(pki.serving_cert_file), read(pki.serving_key_file)
    assert second[0] != first[0] and second[1] != first[1]
    names = sans(pki.serving_cert_file)
    assert set(names.get_values_for_type(x509.DNSName)) == {"localhost", "api.example"}
    assert names.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("10.0.0.1")]

    # a subset of what is covered does not regenerate
    pki.ensure_serving_cert(["api.example"])
    pki.ensure_serving_cert([])
    assert (read(pki.serving_cert_file), read(pki.serving_key_file)) == second


def replace_ca(pki):
    """Rotate the CA: a new key and certificate (with the same subject name)."""
    old, _ = pki.ensure_ca()
    os.remove(pki.ca_cert_file)
    os.remove(pki.ca_key_file)
    new, _ = pki.ensure_ca()
    assert new != old and new.subject == old.subject
    return new


def test_ensure_serving_cert_regenerates_for_new_ca(pki):
    pki.ensure_serving_cert(["localhost"])
    ca = replace_ca(pki)
    pki.ensure_serving_cert(["localhost"])
    serving = x509.load_pem_x509_certificate(read(pki.serving_cert_file))
    serving.verify_directly_issued_by(ca)  # raises InvalidSignature: still the old CA's


def test_admin_kubeconfig_reissued_for_new_ca_without_embedded_ca(pki):
    path = pki.ensure_admin_kubeconfig("https://h:1", embed_ca=False)
    ca = replace_ca(pki)
    pki.ensure_admin_kubeconfig("https://h:1", embed_ca=False)
    user = load_kubeconfig(path)["users"][0]["user"]
    cert = x509.load_pem_x509_certificate(base64.b64decode(user["client-certificate-data"]))
    cert.verify_directly_issued_by(ca)  # raises InvalidSignature: still the old CA's


def test_admin_kubeconfig_reissued_for_new_ca_with_embedded_ca(pki):
    path = pki.ensure_admin_kubeconfig("https://h:1")
    ca = replace_ca(pki)
    pki.ensure_admin_kubeconfig("https://h:1")
    config = load_kubeconfig(path)
    user = config["users"][0]["user"]
    cert = x509.load_pem_x509_certificate(base64.b64decode(user["client-certificate-data"]))
    cert.verify_directly_issued_by(ca)
    assert base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"]) \
        == read(pki.ca_cert_file)


def test_issue_client_cert(pki):
    cert_pem, key_pem = pki.issue_client_cert("alice", ("devs", "qa"), days=2)
    cert = x509.load_pem_x509_certificate(cert_pem)
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "alice"
    assert [a.value for a in cert.subject.get_attributes_for_oid(
        NameOID.ORGANIZATION_NAME)] == ["devs", "qa"]
    eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(eku) == [ExtendedKeyUsageOID.CLIENT_AUTH]
    lifetime = cert.not_valid_after_utc - cert.not_valid_before_utc
    assert 2 * 86400 <= lifetime.total_seconds() <= 2 * 86400 + 600
    assert key_pem.startswith(b"-----BEGIN PRIVATE KEY-----")


def load_kubeconfig(path):
    with open(path) as f:
        return yaml.safe_load(f)


def test_ensure_admin_kubeconfig(pki):
    path = pki.ensure_admin_kubeconfig("https://127.0.0.1:6443")
    assert path == pki.admin_kubeconfig_file
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    config = load_kubeconfig(path)
    assert config["current-context"] == "admin@kapiserver"
    cluster = config["clusters"][0]["cluster"]
    assert cluster["server"] == "https://127.0.0.1:6443"
    assert base64.b64decode(cluster["certificate-authority-data"]) == read(pki.ca_cert_file)
    user = config["users"][0]
    assert user["name"] == "admin"
    cert = x509.load_pem_x509_certificate(
        base64.b64decode(user["user"]["client-certificate-data"]))
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "admin"
    assert [a.value for a in cert.subject.get_attributes_for_oid(
        NameOID.ORGANIZATION_NAME)] == ["system:masters"]
    assert base64.b64decode(user["user"]["client-key-data"]).startswith(
        b"-----BEGIN PRIVATE KEY-----")


def test_admin_kubeconfig_reused_for_same_url_rewritten_for_other(pki):
    path = pki.ensure_admin_kubeconfig("https://127.0.0.1:6443")
    first = read(path)
    pki.ensure_admin_kubeconfig("https://127.0.0.1:6443")
    assert read(path) == first
    pki.ensure_admin_kubeconfig("https://[::1]:7443")
    second = read(path)
    assert second != first
    assert load_kubeconfig(path)["clusters"][0]["cluster"]["server"] == "https://[::1]:7443"


def test_admin_kubeconfig_without_ca(pki):
    path = pki.ensure_admin_kubeconfig("https://h:1", embed_ca=False)
    first = read(path)
    assert "certificate-authority-data" not in load_kubeconfig(path)["clusters"][0]["cluster"]
    pki.ensure_admin_kubeconfig("https://h:1", embed_ca=False)
    assert read(path) == first
    # switching to an embedded CA rewrites it
    pki.ensure_admin_kubeconfig("https://h:1", embed_ca=True)
    assert "certificate-authority-data" in load_kubeconfig(path)["clusters"][0]["cluster"]


def test_admin_kubeconfig_rewritten_when_corrupt(pki):
    os.makedirs(pki.data_dir, exist_ok=True)
    with open(pki.admin_kubeconfig_file, "w") as f:
        f.write("not: [valid\n")
    pki.ensure_admin_kubeconfig("https://127.0.0.1:6443")
    assert load_kubeconfig(pki.admin_kubeconfig_file)["users"][0]["name"] == "admin"


def test_write_kubeconfig_with_token(tmp_path):
    path = str(tmp_path / "sub" / "k.kubeconfig")
    write_kubeconfig(path, "https://x:1", None, None, None, user="bob", token="t0k")
    config = load_kubeconfig(path)
    assert config["users"] == [{"name": "bob", "user": {"token": "t0k"}}]
    assert config["clusters"] == [{"name": "kapiserver", "cluster": {"server": "https://x:1"}}]
    assert config["contexts"] == [{"name": "bob@kapiserver",
                                   "context": {"cluster": "kapiserver", "user": "bob"}}]
    assert list(config) == ["apiVersion", "kind", "clusters", "users", "contexts",
                            "current-context", "preferences"]


@pytest.mark.parametrize("bind,port,url", [
    ("0.0.0.0", 6443, "https://127.0.0.1:6443"),
    ("127.0.0.1", 6443, "https://127.0.0.1:6443"),
    ("10.1.2.3", 443, "https://10.1.2.3:443"),
    ("::", 6443, "https://[::1]:6443"),
    ("::1", 8443, "https://[::1]:8443"),
    ("fd00::5", 1, "https://[fd00::5]:1"),
])
def test_server_url(bind, port, url):
    assert server_url(bind, port) == url


def test_serving_hosts():
    assert serving_hosts("0.0.0.0") == ["localhost", "127.0.0.1"]
    assert serving_hosts("::") == ["localhost", "127.0.0.1"]
    assert serving_hosts("0.0.0.0", ["localhost", "a.example"]) == [
        "localhost", "127.0.0.1", "a.example"]
    assert serving_hosts("10.0.0.5", ["a", "10.0.0.5", "a"]) == [
        "localhost", "127.0.0.1", "10.0.0.5", "a"]


def test_serving_hosts_no_duplicate_for_loopback_bind():
    assert serving_hosts("127.0.0.1") == ["localhost", "127.0.0.1"]
