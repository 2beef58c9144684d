"""The aggregation options are validated at start, every problem reported at once."""

import pytest

from kapiserver.bootstrap import load_config
from kapiserver.errors import ConfigError
from kapiserver.pki import PKI, write_kubeconfig


@pytest.fixture
def kubeconfig(tmp_path):
    path = str(tmp_path / "main.kubeconfig")
    write_kubeconfig(path, "https://127.0.0.1:6443", b"CA", None, None, token="t")
    return path


def errors(*argv) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_config(list(argv))
    return caught.value.errors


def test_defaults_are_upstreams(tmp_path):
    config, _ = load_config(["--data-dir", str(tmp_path)])
    assert config.requestheader_username_headers == ["X-Remote-User"]
    assert config.requestheader_group_headers == ["X-Remote-Group"]
    assert config.requestheader_extra_headers_prefix == ["X-Remote-Extra-"]
    assert config.requestheader_allowed_names == [] and config.requestheader_client_ca_file == ""
    assert config.authorization_always_allow_paths == ["/healthz", "/readyz", "/livez"]
    assert (config.authentication_kubeconfig, config.authorization_kubeconfig) == ("", "")


def test_delegated_authorization_needs_the_webhook_mode(kubeconfig):
    assert errors("--authorization-kubeconfig", kubeconfig) == [
        "--authorization-kubeconfig: used by the Webhook authorization mode, which "
        "--authorization-mode does not include"]
    config, _ = load_config(["--authorization-kubeconfig", kubeconfig,
                             "--authorization-mode", "Webhook"])
    assert config.authorization_mode == ["Webhook"]


def test_one_token_webhook_and_one_authorization_service(kubeconfig):
    found = errors("--authentication-kubeconfig", kubeconfig,
                   "--authentication-token-webhook-config-file", kubeconfig,
                   "--authorization-kubeconfig", kubeconfig,
                   "--authorization-webhook-config-file", kubeconfig,
                   "--authorization-mode", "Webhook")
    assert [e.split(":")[0] for e in found] == ["--authentication-kubeconfig",
                                                "--authorization-kubeconfig"]


def test_bad_values_are_named(tmp_path):
    (tmp_path / "not-a-kubeconfig").write_text("clusters: 3\n")
    found = errors("--authentication-kubeconfig", str(tmp_path / "not-a-kubeconfig"),
                   "--requestheader-username-headers", "X Remote User",
                   "--authorization-always-allow-paths", "/a*b",
                   "--requestheader-client-ca-file", str(tmp_path / "missing.crt"))
    assert any(e.startswith("--authentication-kubeconfig: ") and "not a usable kubeconfig" in e
               for e in found), found
    assert "--requestheader-username-headers: 'X Remote User' is not a valid HTTP header " \
           "name" in found
    assert '--authorization-always-allow-paths: only trailing * allowed in "a*b"' in found
    assert f"--requestheader-client-ca-file: {tmp_path / 'missing.crt'}: no such file" in found


def test_proxy_client_certificate_and_key_go_together(tmp_path):
    pki = PKI(str(tmp_path / "front"))
    cert_pem, key_pem = pki.issue_client_cert("front-proxy-client")
    other_key = pki.issue_client_cert("other")[1]
    for name, data in (("c.crt", cert_pem), ("c.key", key_pem), ("o.key", other_key)):
        (tmp_path / name).write_bytes(data)
    assert errors("--proxy-client-cert-file", str(tmp_path / "c.crt")) == [
        "--proxy-client-key-file: required when --proxy-client-cert-file is set"]
    assert errors("--proxy-client-cert-file", str(tmp_path / "c.crt"),
                  "--proxy-client-key-file", str(tmp_path / "o.key")) == [
        f"--proxy-client-key-file: {tmp_path / 'o.key'} does not match the certificate in "
        f"{tmp_path / 'c.crt'}"]
    config, _ = load_config(["--proxy-client-cert-file", str(tmp_path / "c.crt"),
                             "--proxy-client-key-file", str(tmp_path / "c.key")])
    assert config.proxy_client_key_file == str(tmp_path / "c.key")
