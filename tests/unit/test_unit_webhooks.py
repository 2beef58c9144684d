"""Webhook clients without a network: kubeconfig reading, caching, review bodies."""

import base64

import pytest
import yaml

from kapiserver.authentication import AuthenticationError, AuthenticationRequest, UserInfo
from kapiserver.authorization import Attributes, Decision
from kapiserver.errors import ConfigError
from kapiserver.webhookclient import TTLCache, WebhookClient
from kapiserver_plugins.authn.webhook import WebhookTokenAuthenticator
from kapiserver_plugins.authz.webhook import WebhookAuthorizer, review_spec


def test_kubeconfig_inline_material_is_written_to_files(tmp_path):
    config = {"current-context": "b",
              "clusters": [{"name": "a", "cluster": {"server": "https://a"}},
                           {"name": "b", "cluster": {
                               "server": "https://b/review",
                               "certificate-authority-data": base64.b64encode(b"CA").decode()}}],
              "users": [{"name": "u", "user": {
                  "client-certificate-data": base64.b64encode(b"CERT").decode(),
                  "client-key": "key.pem"}}],
              "contexts": [{"name": "b", "context": {"cluster": "b", "user": "u"}}]}
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    client = WebhookClient.from_kubeconfig(str(path), str(tmp_path / "material"), "x")
    assert client.url == "https://b/review"
    assert open(client.verify, "rb").read() == b"CA"
    cert, key = client.cert
    assert open(cert, "rb").read() == b"CERT" and key == str(tmp_path / "key.pem")
    path.write_text("clusters: 3\n")
    with pytest.raises(ConfigError, match="--x: .*not a usable kubeconfig"):
        WebhookClient.from_kubeconfig(str(path), str(tmp_path), "x")


def test_ttl_cache_expires():
    now = [0.0]
    cache = TTLCache(max_size=2, clock=lambda: now[0])
    cache.put("a", None, 10)
    assert cache.get("a") == (10, None)
    now[0] = 10
    assert cache.get("a") is None
    for key in "bcd":
        cache.put(key, key, 5)
    assert cache.get("b") is None and cache.get("d")[1] == "d"


class FakeClient:
    def __init__(self, status):
        self.status = status
        self.sent = []

    def post(self, obj):
        self.sent.append(obj)
        return {"kind": obj["kind"], "apiVersion": obj["apiVersion"], "status": self.status}


def test_token_webhook_audiences_and_errors():
    client = FakeClient({"authenticated": True, "user": {"username": "u", "groups": ["g"]}})
    authn = WebhookTokenAuthenticator(client, 60, ["api"])
    request = AuthenticationRequest({"Authorization": "Bearer t"})
    assert authn.authenticate(request) == UserInfo("u", "", ("g",), {})
    assert request.matched_audiences == ("api",)
    assert client.sent[0]["spec"] == {"token": "t", "audiences": ["api"]}
    # The webhook reports no audience: the API's are implied, so "other" does not match.
    with pytest.raises(AuthenticationError):
        authn.authenticate(AuthenticationRequest({"Authorization": "Bearer t"},
                                                 audiences=("other",)))
    client = FakeClient({"error": "expired"})
    with pytest.raises(AuthenticationError, match="expired"):
        WebhookTokenAuthenticator(client, 60, ["api"]).authenticate(request)
    assert authn.authenticate(AuthenticationRequest({})) is None


def test_authorizer_decisions_and_cache():
    user = UserInfo("u", "1", ("g",), {"k": ("v",)})
    attributes = Attributes(user=user, verb="get", resource_request=True, namespace="n",
                            api_version="v1", resource="configmaps", name="c")
    assert review_spec(attributes) == {
        "resourceAttributes": {"namespace": "n", "verb": "get", "version": "v1",
                               "resource": "configmaps", "name": "c"},
        "user": "u", "groups": ["g"], "extra": {"k": ["v"]}, "uid": "1"}
    for status, decision in (({"allowed": True}, Decision.ALLOW),
                             ({"allowed": False, "denied": True, "reason": "r"}, Decision.DENY),
                             ({"allowed": False}, Decision.NO_OPINION)):
        client = FakeClient(status)
        authz = WebhookAuthorizer(client, 300, 30)
        assert authz.authorize(attributes)[0] is decision
        authz.authorize(attributes)
        assert len(client.sent) == 1
    path = Attributes(user=user, verb="get", resource_request=False, path="/healthz")
    assert review_spec(path)["nonResourceAttributes"] == {"path": "/healthz", "verb": "get"}
