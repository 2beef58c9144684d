"""Bad options are all reported at once, with the option's name, before anything starts."""

import os
import subprocess
import sys

import yaml


def serve(*args, cwd=None, timeout=60):
    return subprocess.run([sys.executable, "-m", "kapiserver", "serve", *args],
                          capture_output=True, text=True, cwd=cwd, timeout=timeout)


def test_every_error_at_once_and_nothing_started(tmp_path):
    bad_cert = tmp_path / "bad.crt"
    bad_cert.write_text("-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n")
    data_dir = tmp_path / "data"
    result = serve("--data-dir", str(data_dir), "--secure-port", "70000",
                   "--token-auth-file", str(tmp_path / "missing.csv"),
                   "--authorization-mode", "AlwaysAllow,Bogus",
                   "--tls-cert-file", str(bad_cert), "--tls-private-key-file",
                   str(tmp_path / "missing.key"), "--bind-address", "localhost")
    assert result.returncode == 1
    errors = result.stderr.splitlines()
    assert errors[0] == "kapiserver: invalid configuration:"
    text = result.stderr
    assert "--secure-port: Must be greater than or equal to 1 and less than or equal to 65535." \
        in text
    assert f"--token-auth-file: {tmp_path / 'missing.csv'}: no such file" in text
    assert ("--authorization-mode: unknown 'Bogus'; valid choices: AlwaysAllow, AlwaysDeny, "
            "RBAC, Webhook") in text
    assert f"--tls-cert-file: {bad_cert}: invalid PEM certificate" in text
    assert f"--tls-private-key-file: {tmp_path / 'missing.key'}: no such file" in text
    assert "--bind-address: 'localhost' is not a valid IP address" in text
    assert not data_dir.exists()  # nothing was started or generated


def test_unreadable_certificate_and_mismatched_key(tmp_path):
    from kapiserver.pki import PKI

    one, two = PKI(str(tmp_path / "one")), PKI(str(tmp_path / "two"))
    one.ensure_serving_cert(["localhost"])
    two.ensure_serving_cert(["localhost"])
    result = serve("--data-dir", str(tmp_path / "d"), "--tls-cert-file", one.serving_cert_file,
                   "--tls-private-key-file", two.serving_key_file)
    assert result.returncode == 1
    assert (f"--tls-private-key-file: {two.serving_key_file} does not match the certificate "
            f"in {one.serving_cert_file}") in result.stderr
    result = serve("--data-dir", str(tmp_path / "d"), "--tls-cert-file", one.serving_cert_file)
    assert "--tls-private-key-file: required when --tls-cert-file is set" in result.stderr
    if os.geteuid() != 0:  # root reads anything
        os.chmod(one.serving_cert_file, 0)
        result = serve("--tls-cert-file", one.serving_cert_file, "--tls-private-key-file",
                       one.serving_key_file)
        assert "permission denied" in result.stderr


def test_bad_token_file_format(tmp_path):
    tokens = tmp_path / "tokens.csv"
    tokens.write_text("only,two\n")
    result = serve("--token-auth-file", str(tokens), "--data-dir", str(tmp_path / "d"))
    assert result.returncode == 1
    assert (f"--token-auth-file: token file '{tokens}' must have at least 3 columns "
            "(token, user name, user uid), found 2") in result.stderr


def test_config_file_errors_name_the_option(tmp_path):
    config = tmp_path / "kapiserver.yaml"
    config.write_text(yaml.safe_dump({"secure-port": "not-a-number", "no-such-option": 1,
                                      "anonymous-auth": "perhaps",
                                      "delegation": ["kube", "nope"]}))
    result = serve("--config", str(config))
    assert result.returncode == 1
    assert "--secure-port: Not a valid integer." in result.stderr
    assert "--no-such-option: unknown option in" in result.stderr
    assert "--anonymous-auth: Not a valid boolean." in result.stderr
    assert ("--delegation: unknown 'nope'; valid choices: aggregator, apiextensions, kube"
            in result.stderr)


def test_malformed_config_file(tmp_path):
    config = tmp_path / "kapiserver.yaml"
    config.write_text("secure-port: [unclosed\n")
    result = serve("--config", str(config))
    assert result.returncode == 1 and "--config:" in result.stderr
    assert "invalid YAML" in result.stderr
    assert serve("--config", str(tmp_path / "nope.yaml")).stderr.strip().endswith(
        "No such file or directory")


def test_unknown_admission_plugin(tmp_path):
    result = serve("--enable-admission-plugins", "NoSuchPlugin", "--data-dir", str(tmp_path))
    assert result.returncode == 1
    assert "--enable-admission-plugins: unknown admission plugin(s) NoSuchPlugin" in result.stderr


def test_plugin_that_fails_to_import(tmp_path):
    result = serve("--plugin", "no_such_module_for_kapiserver")
    assert result.returncode == 1
    assert ("--plugin: no_such_module_for_kapiserver failed to import: ModuleNotFoundError"
            in result.stderr)


def test_help_lists_flags_with_kube_apiserver_names():
    result = serve("--help")
    assert result.returncode == 0
    for flag in ("--secure-port", "--bind-address", "--tls-cert-file", "--tls-private-key-file",
                 "--client-ca-file", "--token-auth-file", "--anonymous-auth",
                 "--authorization-mode", "--workers", "--data-dir", "--config"):
        assert flag in result.stdout


def test_flags_override_config_file(tmp_path):
    from kapiserver.bootstrap import load_config

    config = tmp_path / "kapiserver.yaml"
    config.write_text(yaml.safe_dump({"secure-port": 7000, "workers": 3,
                                      "authorization-mode": ["AlwaysDeny"]}))
    loaded, _ = load_config(["--config", str(config), "--secure-port", "7001",
                             "--anonymous-auth=false"])
    assert loaded.secure_port == 7001 and loaded.workers == 3
    assert loaded.authorization_mode == ["AlwaysDeny"] and loaded.anonymous_auth is False
    assert loaded.given == {"secure-port", "workers", "authorization-mode", "anonymous-auth"}


def test_conf_reference_lists_every_option_and_is_current():
    import pathlib

    conf = pathlib.Path(__file__).resolve().parents[2] / "conf" / "kapiserver.yaml"
    result = subprocess.run([sys.executable, "-m", "kapiserver", "options"], capture_output=True,
                            text=True, check=True)
    assert conf.read_text() == result.stdout, "regenerate: kapiserver options > conf/kapiserver.yaml"
    assert yaml.safe_load(conf.read_text()) is None  # everything commented: defaults apply
