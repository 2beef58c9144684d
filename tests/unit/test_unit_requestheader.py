"""Unit tests of the front proxy's side of aggregation: the requestheader authenticator,
x509's second check, the delegated lookup, the published ConfigMap and always-allow paths."""

import json

import pytest
from cryptography import x509 as cx509
from cryptography.hazmat.primitives import serialization
from werkzeug.datastructures import Headers

from kapiserver.authentication import AuthenticationError, AuthenticationRequest, UserInfo
from kapiserver.authorization import Attributes, Decision
from kapiserver.errors import ConfigError
from kapiserver.pki import PKI
from kapiserver.webhookclient import WebhookError
from kapiserver_plugins.authn import delegated
from kapiserver_plugins.authn.requestheader import (RequestHeaderAuthenticator,
                                                    RequestHeaderSettings, unescape_extra_key,
                                                    user_from_headers)
from kapiserver_plugins.authn.x509 import X509Authenticator
from kapiserver_plugins.authz.paths import PathAuthorizer, validate_paths
from kapiserver_plugins.core import authentication_info


def der(pem: bytes) -> bytes:
    return cx509.load_pem_x509_certificate(pem).public_bytes(serialization.Encoding.DER)


@pytest.fixture(scope="module")
def pkis(tmp_path_factory):
    front = PKI(str(tmp_path_factory.mktemp("front-proxy")))
    front.ensure_serving_cert(["localhost"])
    clients = PKI(str(tmp_path_factory.mktemp("clients")))
    clients.ensure_ca()
    return front, clients


def settings(front, allowed=("front-proxy-client",), **kwargs) -> RequestHeaderSettings:
    return RequestHeaderSettings(front.ca_cert_file, tuple(allowed), **kwargs)


def request(cert_pem, headers=()) -> AuthenticationRequest:
    return AuthenticationRequest(Headers(list(headers)),
                                 der(cert_pem) if cert_pem else None)


def proxy_cert(pki, name="front-proxy-client"):
    return pki.issue_client_cert(name)[0]


def test_allowed_proxy_states_the_user_groups_and_extras(pkis):
    front, _ = pkis
    auth = RequestHeaderAuthenticator(settings(front))
    req = request(proxy_cert(front), [
        ("X-Remote-User", "alice"), ("X-Remote-Group", "devs"),
        ("X-Remote-Group", "cn=ops,dc=example,dc=com"), ("X-Remote-Extra-Scopes", "a"),
        ("X-Remote-Extra-Scopes", "b"), ("Accept", "application/json")])
    user = auth.authenticate(req)
    assert user == UserInfo("alice", "", ("devs", "cn=ops,dc=example,dc=com"),
                            {"scopes": ("a", "b")})
    # Upstream clears the headers it read; the others stay.
    assert sorted(h.lower() for h in req.remove_headers) == [
        "x-remote-extra-scopes", "x-remote-group", "x-remote-user"]


def test_a_name_not_allowed_is_refused(pkis):
    front, _ = pkis
    auth = RequestHeaderAuthenticator(settings(front))
    with pytest.raises(AuthenticationError,
                       match="x509: subject with cn=someone-else is not in the allowed list"):
        auth.authenticate(request(proxy_cert(front, "someone-else"),
                                  [("X-Remote-User", "admin")]))


def test_no_allowed_names_means_any_certificate_from_the_ca(pkis):
    front, _ = pkis
    auth = RequestHeaderAuthenticator(settings(front, allowed=()))
    user = auth.authenticate(request(proxy_cert(front, "anyone"), [("X-Remote-User", "bob")]))
    assert user.name == "bob"


def test_a_certificate_from_another_ca_is_refused_and_its_headers_ignored(pkis):
    front, clients = pkis
    auth = RequestHeaderAuthenticator(settings(front))
    with pytest.raises(AuthenticationError, match="x509: certificate verification failed"):
        auth.authenticate(request(proxy_cert(clients), [("X-Remote-User", "admin")]))


def test_a_server_certificate_of_the_ca_is_refused(pkis):
    front, _ = pkis
    with open(front.serving_cert_file, "rb") as f:
        serving = f.read()
    auth = RequestHeaderAuthenticator(settings(front, allowed=()))
    with pytest.raises(AuthenticationError, match="incompatible key usage"):
        auth.authenticate(request(serving, [("X-Remote-User", "admin")]))


def test_no_certificate_or_no_user_header_is_no_credentials(pkis):
    front, _ = pkis
    auth = RequestHeaderAuthenticator(settings(front))
    assert auth.authenticate(request(None, [("X-Remote-User", "admin")])) is None
    req = request(proxy_cert(front), [("X-Remote-Group", "system:masters")])
    assert auth.authenticate(req) is None
    assert not req.remove_headers


def test_verified_certificates_are_cached(pkis, monkeypatch):
    front, _ = pkis
    auth = RequestHeaderAuthenticator(settings(front))
    cert = proxy_cert(front)
    auth.authenticate(request(cert, [("X-Remote-User", "a")]))
    from kapiserver_plugins.authn import requestheader

    monkeypatch.setattr(requestheader, "verify_client_certificate",
                        lambda *a: pytest.fail("verified twice"))
    assert auth.authenticate(request(cert, [("X-Remote-User", "b")])).name == "b"


def test_username_headers_in_order_first_value_wins():
    rh = RequestHeaderSettings("", username_headers=("X-Proxy-User", "X-Remote-User"))
    user, _ = user_from_headers(Headers([("X-Remote-User", "second"),
                                         ("x-proxy-user", "first")]), rh)
    assert user.name == "first"
    # An empty first value of a header does not count (Go's Header.Get is the first value).
    user, _ = user_from_headers(Headers([("X-Proxy-User", ""), ("X-Proxy-User", "late"),
                                         ("X-Remote-User", "fallback")]), rh)
    assert user.name == "fallback"


def test_groups_from_every_group_header_empty_values_skipped():
    rh = RequestHeaderSettings("", group_headers=("X-Remote-Group", "X-Other-Group"))
    user, _ = user_from_headers(Headers([
        ("X-Remote-User", "u"), ("X-Other-Group", "z"), ("X-Remote-Group", "a"),
        ("X-Remote-Group", ""), ("x-remote-group", "b")]), rh)
    assert user.groups == ("a", "b", "z")


def test_extras_keys_are_lowercased_then_unescaped_prefixes_in_order():
    rh = RequestHeaderSettings("", extra_prefixes=("X-Remote-Extra-", "X-Also-"))
    user, read = user_from_headers(Headers([
        ("X-Remote-User", "u"), ("X-Also-Key", "3"), ("X-REMOTE-EXTRA-Key", "1"),
        ("x-remote-extra-key", "2"), ("X-Remote-Extra-Example.Com%2FScope", "s"),
        ("X-Remote-Extra-Bad%zz", "kept"), ("X-Remote-Extra-Empty", "")]), rh)
    assert user.extra == {"key": ("1", "2", "3"), "example.com/scope": ("s",),
                          "bad%zz": ("kept",), "empty": ("",)}
    assert len(read) == 6


def test_unescape_extra_key_is_go_path_unescape():
    assert unescape_extra_key("a%2fb") == "a/b"
    assert unescape_extra_key("a%2fb%") == "a%2fb%"
    assert unescape_extra_key("%E2%9C%93") == "\u2713"


def test_a_plain_mapping_of_headers_works_too():
    user, _ = user_from_headers({"X-Remote-User": "u", "X-Remote-Group": "g"},
                                RequestHeaderSettings(""))
    assert user == UserInfo("u", "", ("g",), {})


class Config:
    client_ca_file = ""
    requestheader_client_ca_file = ""
    authentication_kubeconfig = ""
    authentication_skip_lookup = False
    authentication_tolerate_lookup_failure = False

    def __init__(self, data_dir, **values):
        self.data_dir = data_dir
        self.__dict__.update(values)


def test_x509_verifies_again_when_the_handshake_trusts_a_front_proxy_ca(pkis, tmp_path):
    front, _ = pkis
    own = PKI(str(tmp_path / "own"))
    own.write_client_ca_bundle([])
    only_own = X509Authenticator.from_config(Config(own.data_dir))
    assert only_own.handshake_verified
    own.write_client_ca_bundle([front.ca_cert_file])
    with_front = X509Authenticator.from_config(Config(own.data_dir))
    assert not with_front.handshake_verified
    # The front proxy's certificate passed the handshake: x509 refuses it all the same,
    # whatever the handshake's verdict says of its subject.
    req = request(proxy_cert(front))
    req.peer_certificate_info = {"subject": ((("commonName", "front-proxy-client"),),)}
    with pytest.raises(AuthenticationError, match="certificate verification failed"):
        with_front.authenticate(req)
    assert with_front.authenticate(request(own.issue_client_cert("u")[0])).name == "u"


CONFIGMAP = {
    "requestheader-client-ca-file": None,  # set from the fixture
    "requestheader-allowed-names": '["front-proxy-client"]',
    "requestheader-username-headers": '["X-Remote-User"]',
    "requestheader-group-headers": '["X-Remote-Group"]',
    "requestheader-extra-headers-prefix": '["X-Remote-Extra-"]',
}


def test_delegated_lookup_keeps_what_the_main_server_says(pkis, tmp_path, monkeypatch):
    front, clients = pkis
    data = dict(CONFIGMAP, **{"requestheader-client-ca-file": open(front.ca_cert_file).read(),
                              "client-ca-file": open(clients.ca_cert_file).read()})
    monkeypatch.setattr(delegated, "fetch", lambda config: data)
    config = Config(str(tmp_path), authentication_kubeconfig="/kubeconfig")
    files = delegated.prepare(config)
    assert len(files) == 2
    assert delegated.client_ca_file(config) == files[0]
    found = delegated.requestheader_settings(config)
    assert found == RequestHeaderSettings(files[1], ("front-proxy-client",), ("X-Remote-User",),
                                          ("X-Remote-Group",), ("X-Remote-Extra-",))
    user = RequestHeaderAuthenticator(found).authenticate(
        request(proxy_cert(front), [("X-Remote-User", "alice")]))
    assert user.name == "alice"
    # Local settings win; the lookup is skipped when asked.
    local = Config(str(tmp_path), authentication_kubeconfig="/kubeconfig",
                   client_ca_file="/local.crt", requestheader_client_ca_file="/rh.crt")
    assert delegated.prepare(local) == [] and delegated.requestheader_settings(local) is None
    skip = Config(str(tmp_path), authentication_kubeconfig="/k", authentication_skip_lookup=True)
    assert delegated.prepare(skip) == [] and delegated.client_ca_file(skip) == ""


def test_delegated_lookup_failure_stops_the_start_unless_tolerated(tmp_path, monkeypatch):
    def fail(config):
        raise WebhookError("the server responded with the status code 403", 403)

    monkeypatch.setattr(delegated, "fetch", fail)
    config = Config(str(tmp_path), authentication_kubeconfig="/kubeconfig")
    with pytest.raises(ConfigError, match="--authentication-kubeconfig: unable to load "
                                          "configmap based authentication configuration"):
        delegated.prepare(config)
    config.authentication_tolerate_lookup_failure = True
    assert delegated.prepare(config) == []
    assert delegated.requestheader_settings(config) is None


def test_delegated_lookup_refuses_malformed_lists(pkis, tmp_path, monkeypatch):
    front, _ = pkis
    data = dict(CONFIGMAP, **{"requestheader-client-ca-file": open(front.ca_cert_file).read(),
                              "requestheader-allowed-names": '"front-proxy-client"'})
    monkeypatch.setattr(delegated, "fetch", lambda config: data)
    with pytest.raises(ConfigError, match="requestheader-allowed-names: not a JSON list"):
        delegated.prepare(Config(str(tmp_path), authentication_kubeconfig="/kubeconfig"))


def test_published_configmap_combines_with_what_is_there(pkis):
    front, clients = pkis
    front_pem, clients_pem = open(front.ca_cert_file).read(), open(clients.ca_cert_file).read()
    existing = {"client-ca-file": clients_pem, "requestheader-client-ca-file": front_pem,
                "requestheader-allowed-names": '["old-proxy"]',
                "requestheader-username-headers": '["X-Remote-User"]'}
    required = {"client-ca-file": front_pem + clients_pem,
                "requestheader-client-ca-file": front_pem,
                "requestheader-allowed-names": '["front-proxy-client"]',
                "requestheader-username-headers": '["X-Remote-User"]',
                "requestheader-group-headers": '["X-Remote-Group"]',
                "requestheader-extra-headers-prefix": '["X-Remote-Extra-"]'}
    data = authentication_info.combine(existing, required)
    assert authentication_info.certificates(data["client-ca-file"]) == (
        authentication_info.certificates(clients_pem) +
        authentication_info.certificates(front_pem))
    assert data["requestheader-client-ca-file"] == front_pem
    assert json.loads(data["requestheader-allowed-names"]) == ["old-proxy", "front-proxy-client"]
    assert data["requestheader-username-headers"] == '["X-Remote-User"]'
    # No front proxy anywhere: only the client CA is published.
    assert authentication_info.combine({}, {"client-ca-file": clients_pem}) == {
        "client-ca-file": clients_pem}


def test_always_allow_paths_only_for_non_resource_requests():
    paths = PathAuthorizer(["/healthz", "readyz", "/metrics/*"])
    user = UserInfo("system:anonymous")

    def decide(path, resource=False):
        return paths.authorize(Attributes(user=user, verb="get", resource_request=resource,
                                          path=path))[0]

    assert decide("/healthz") is Decision.ALLOW and decide("/readyz") is Decision.ALLOW
    assert decide("/metrics/slis") is Decision.ALLOW
    assert decide("/healthz/etcd") is Decision.NO_OPINION
    assert decide("/api/v1/namespaces", resource=True) is Decision.NO_OPINION
    with pytest.raises(Exception, match='only trailing \\* allowed in "a\\*b"'):
        validate_paths(["/a*b"])
