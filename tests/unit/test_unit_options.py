"""Unit tests of kapiserver.options.load with the core options, and check_tls_pair."""

import argparse
import os

import pytest

from kapiserver.errors import ConfigError
from kapiserver.options import (Config, OptionRegistry, add_arguments, load,
                                read_config_file)
from kapiserver.options.core import DEFAULT_DELEGATION, add_core_options, check_tls_pair
from kapiserver.pki import PKI


@pytest.fixture
def registry():
    r = OptionRegistry()
    add_core_options(r)
    return r


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    """A serving cert/key pair, and the key of another PKI (which does not match)."""
    one = PKI(str(tmp_path_factory.mktemp("pki-one")))
    one.ensure_serving_cert(["localhost"])
    two = PKI(str(tmp_path_factory.mktemp("pki-two")))
    two.ensure_serving_cert(["localhost"])
    return {"cert": one.serving_cert_file, "key": one.serving_key_file,
            "other_key": two.serving_key_file, "ca": one.ca_cert_file}


def test_defaults(registry):
    config = load(registry, {}, {})
    assert config.secure_port == 6443
    assert config.bind_address == "127.0.0.1"
    assert config.authorization_mode == ["AlwaysAllow"]
    assert config.delegation == ["aggregator", "kube", "apiextensions"]
    assert config.workers == 2
    assert os.path.isabs(config.data_dir)
    assert config.data_dir.endswith(".kapiserver")
    assert config.log_level == "info"
    assert (config.tls_cert_file, config.tls_private_key_file) == ("", "")
    assert config.tls_sans == [] and config.enable_admission_plugins == []
    assert config.given == frozenset()


def test_default_lists_are_fresh_per_load(registry):
    first = load(registry, {}, {})
    first.delegation.append("mutated")
    first.authorization_mode.append("mutated")
    second = load(registry, {}, {})
    assert second.delegation == ["aggregator", "kube", "apiextensions"]
    assert second.authorization_mode == ["AlwaysAllow"]
    assert DEFAULT_DELEGATION == ["aggregator", "kube", "apiextensions"]


def test_data_dir_default_is_relative_to_cwd(registry, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert load(registry, {}, {}).data_dir == os.path.join(str(tmp_path), ".kapiserver")


def test_file_values_are_used(registry):
    config = load(registry, {"secure-port": 8443, "workers": 4, "log-level": "debug"}, {})
    assert (config.secure_port, config.workers, config.log_level) == (8443, 4, "debug")
    assert config.given == {"secure-port", "workers", "log-level"}


def test_flags_override_file(registry):
    config = load(registry, {"secure-port": 8443, "bind-address": "0.0.0.0"},
                  {"secure_port": "7443"})
    assert config.secure_port == 7443
    assert config.bind_address == "0.0.0.0"
    assert config.given == {"secure-port", "bind-address"}


def test_comma_separated_and_repeated_lists(registry):
    config = load(registry, {"authorization-mode": "Node, RBAC,,"},
                  {"delegation": ["kube,aggregator", "apiextensions"],
                   "tls_sans": ["a.example", "10.0.0.1,b.example"]})
    assert config.authorization_mode == ["Node", "RBAC"]
    assert config.delegation == ["kube", "aggregator", "apiextensions"]
    assert config.tls_sans == ["a.example", "10.0.0.1", "b.example"]


def test_yaml_list_value(registry):
    config = load(registry, {"enable-admission-plugins": ["A", "B"]}, {})
    assert config.enable_admission_plugins == ["A", "B"]


def test_unknown_file_key(registry):
    with pytest.raises(ConfigError) as excinfo:
        load(registry, {"nope": 1}, {}, "/etc/k.yaml")
    assert excinfo.value.errors == ["--nope: unknown option in /etc/k.yaml"]
    with pytest.raises(ConfigError) as excinfo:
        load(registry, {"nope": 1}, {})
    assert excinfo.value.errors == ["--nope: unknown option in the config file"]


def test_several_bad_values_reported_together(registry, tmp_path):
    missing = str(tmp_path / "missing.crt")
    with pytest.raises(ConfigError) as excinfo:
        load(registry, {"secure-port": 70000, "bind-address": "not-an-ip",
                        "tls-cert-file": missing, "log-level": "loud", "nope": True},
             {}, "conf.yaml", extra_checks=[check_tls_pair])
    errors = excinfo.value.errors
    for name in ("--secure-port: ", "--bind-address: ", "--tls-cert-file: ", "--log-level: ",
                 "--nope: "):
        assert sum(e.startswith(name) for e in errors) == 1, (name, errors)
    assert len(errors) == 5
    assert f"--tls-cert-file: {missing}: no such file" in errors
    assert "--bind-address: 'not-an-ip' is not a valid IP address" in errors
    # the invalid cert is not reported a second time by check_tls_pair
    assert not any("required when" in e for e in errors)


def test_bad_flag_value_is_reported(registry):
    with pytest.raises(ConfigError) as excinfo:
        load(registry, {}, {"workers": "many"})
    assert len(excinfo.value.errors) == 1
    assert excinfo.value.errors[0].startswith("--workers: ")


@pytest.mark.parametrize("port", [0, 65536, -1])
def test_port_range(registry, port):
    with pytest.raises(ConfigError) as excinfo:
        load(registry, {"secure-port": port}, {})
    assert excinfo.value.errors[0].startswith("--secure-port: ")


def test_empty_required_lists_rejected(registry):
    with pytest.raises(ConfigError) as excinfo:
        load(registry, {"authorization-mode": "", "delegation": []}, {})
    names = sorted(e.split(":")[0] for e in excinfo.value.errors)
    assert names == ["--authorization-mode", "--delegation"]


def test_ipv6_bind_address(registry):
    assert load(registry, {"bind-address": "::1"}, {}).bind_address == "::1"


def test_extra_checks_run_and_errors_collected(registry):
    seen = []

    def check(config):
        seen.append(config.secure_port)
        return ["--custom: bad"]

    with pytest.raises(ConfigError) as excinfo:
        load(registry, {"secure-port": 70000}, {}, extra_checks=[check])
    # the check sees the default in place of the invalid value
    assert seen == [6443]
    assert "--custom: bad" in excinfo.value.errors
    assert len(excinfo.value.errors) == 2


def test_config_accessors(registry):
    config = load(registry, {"secure-port": 1234}, {}, "c.yaml")
    assert config.get("secure-port") == 1234
    assert config.get("secure_port") == 1234
    assert config.get("nope", "d") == "d"
    assert config.as_dict()["secure-port"] == 1234
    assert config.config_file == "c.yaml"
    assert isinstance(config, Config)


def test_registry_rejects_duplicates():
    r = OptionRegistry()
    add_core_options(r)
    with pytest.raises(ConfigError) as excinfo:
        r.declared_by("plugin foo").add("secure-port", None, "dup")
    assert excinfo.value.errors == ["--secure-port: declared twice, by kapiserver and plugin foo"]


def test_plugin_option_owner_and_load(registry):
    from marshmallow import fields

    registry.declared_by("plugin p").add("p-flag", fields.Boolean(load_default=False), "h")
    assert registry.options["p-flag"].owner == "plugin p"
    assert load(registry, {"p-flag": "true"}, {}).p_flag is True
    assert load(registry, {}, {}).p_flag is False


def test_add_arguments_parses_flags(registry):
    from marshmallow import fields

    registry.add("anonymous-auth", fields.Boolean(load_default=True), "h")
    parser = argparse.ArgumentParser()
    add_arguments(parser, registry)
    args = vars(parser.parse_args(["--secure-port", "7443", "--delegation", "kube",
                                   "--delegation", "aggregator,apiextensions",
                                   "--anonymous-auth=false"]))
    assert args == {"secure_port": "7443", "delegation": ["kube", "aggregator,apiextensions"],
                    "anonymous_auth": "false"}
    config = load(registry, {"secure-port": 1}, args)
    assert config.secure_port == 7443
    assert config.delegation == ["kube", "aggregator", "apiextensions"]
    assert config.anonymous_auth is False
    assert vars(parser.parse_args(["--anonymous-auth"])) == {"anonymous_auth": "true"}


def test_read_config_file(tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text("secure-port: 8443\nauthorization-mode: [Node, RBAC]\n")
    assert read_config_file(str(good)) == {"secure-port": 8443,
                                           "authorization-mode": ["Node", "RBAC"]}
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    assert read_config_file(str(empty)) == {}
    scalar = tmp_path / "scalar.yaml"
    scalar.write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="must be a mapping"):
        read_config_file(str(scalar))
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [\n")
    with pytest.raises(ConfigError, match="invalid YAML"):
        read_config_file(str(bad))
    with pytest.raises(ConfigError) as excinfo:
        read_config_file(str(tmp_path / "missing.yaml"))
    assert excinfo.value.errors[0].startswith("--config: ")
    assert "No such file or directory" in excinfo.value.errors[0]


# -- TLS pair ------------------------------------------------------------------------------

def test_tls_pair_ok(registry, certs):
    config = load(registry, {"tls-cert-file": certs["cert"],
                             "tls-private-key-file": certs["key"]}, {},
                  extra_checks=[check_tls_pair])
    assert (config.tls_cert_file, config.tls_private_key_file) == (certs["cert"], certs["key"])
    assert check_tls_pair(config) == []


def test_tls_paths_made_absolute(registry, certs, monkeypatch):
    monkeypatch.chdir(os.path.dirname(certs["cert"]))
    config = load(registry, {"tls-cert-file": os.path.basename(certs["cert"]),
                             "tls-private-key-file": os.path.basename(certs["key"])}, {},
                  extra_checks=[check_tls_pair])
    assert config.tls_cert_file == certs["cert"]
    assert config.tls_private_key_file == certs["key"]


def test_tls_cert_without_key(registry, certs):
    with pytest.raises(ConfigError) as excinfo:
        load(registry, {"tls-cert-file": certs["cert"]}, {}, extra_checks=[check_tls_pair])
    assert excinfo.value.errors == [
        "--tls-private-key-file: required when --tls-cert-file is set"]


def test_tls_key_without_cert(registry, certs):
    with pytest.raises(ConfigError) as excinfo:
        load(registry, {}, {"tls_private_key_file": certs["key"]},
             extra_checks=[check_tls_pair])
    assert excinfo.value.errors == [
        "--tls-cert-file: required when --tls-private-key-file is set"]


def test_tls_mismatched_key(registry, certs):
    with pytest.raises(ConfigError) as excinfo:
        load(registry, {"tls-cert-file": certs["cert"],
                        "tls-private-key-file": certs["other_key"]}, {},
             extra_checks=[check_tls_pair])
    assert excinfo.value.errors == [
        f"--tls-private-key-file: {certs['other_key']} does not match the certificate in "
        f"{certs['cert']}"]


def test_tls_cert_file_not_pem(registry, certs, tmp_path):
    junk = tmp_path / "junk.crt"
    junk.write_text("hello\n")
    with pytest.raises(ConfigError) as excinfo:
        load(registry, {"tls-cert-file": str(junk), "tls-private-key-file": certs["key"]}, {},
             extra_checks=[check_tls_pair])
    assert excinfo.value.errors == [f"--tls-cert-file: {junk}: no PEM certificate found"]


def test_tls_key_file_not_a_key(registry, certs):
    # the CA certificate is not a private key
    with pytest.raises(ConfigError) as excinfo:
        load(registry, {"tls-cert-file": certs["cert"], "tls-private-key-file": certs["ca"]},
             {}, extra_checks=[check_tls_pair])
    assert len(excinfo.value.errors) == 1
    assert excinfo.value.errors[0].startswith(
        f"--tls-private-key-file: {certs['ca']}: invalid or encrypted PEM private key")


def test_tls_cert_file_is_directory(registry, tmp_path):
    with pytest.raises(ConfigError) as excinfo:
        load(registry, {"client-ca-file": str(tmp_path)}, {})
    assert excinfo.value.errors == [f"--client-ca-file: {tmp_path}: not a regular file"]
