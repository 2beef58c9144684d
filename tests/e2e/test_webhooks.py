"""Webhook token authentication and the Webhook authorization mode, against a real TLS
webhook server on loopback that demands a client certificate."""

import http.server
import json
import ssl
import threading

import pytest

from kapiserver.pki import PKI, write_kubeconfig
from kapiserver.testing import assert_status

ISSUER = "https://kubernetes.default.svc.cluster.local"


class Webhook:
    """An HTTPS server answering reviews with ``answer(review) -> status``; it records what
    it receives and the client certificate's subject."""

    def __init__(self, tmp_path, answer):
        self.pki = PKI(str(tmp_path / "webhook-pki"))
        self.pki.ensure_serving_cert(["127.0.0.1"])
        self.answer = answer
        self.received = []
        webhook = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                peer = self.connection.getpeercert()
                webhook.received.append((review, dict(x[0] for x in peer["subject"])))
                body = json.dumps({"apiVersion": review["apiVersion"], "kind": review["kind"],
                                   "status": webhook.answer(review)}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.pki.serving_cert_file, self.pki.serving_key_file)
        context.load_verify_locations(self.pki.ca_cert_file)
        context.verify_mode = ssl.CERT_REQUIRED
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.url = f"https://127.0.0.1:{self.httpd.server_address[1]}/review"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def kubeconfig(self, path, ca_pem=None):
        """A kubeconfig for kapiserver: the webhook's CA, a client certificate it trusts."""
        cert_pem, key_pem = self.pki.issue_client_cert("kapiserver")
        with open(self.pki.ca_cert_file, "rb") as f:
            ca = ca_pem or f.read()
        write_kubeconfig(str(path), self.url, ca, cert_pem, key_pem, user="kapiserver")
        return str(path)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def webhook(tmp_path):
    hooks = []

    def start(answer):
        hook = Webhook(tmp_path / f"hook{len(hooks)}", answer)
        hooks.append(hook)
        return hook

    yield start
    for hook in hooks:
        hook.close()


def authenticate(review):
    token = review["spec"]["token"]
    if token == "wanda-token":
        return {"authenticated": True, "user": {"username": "wanda", "uid": "w-1",
                                                "groups": ["web"], "extra": {"k": ["v"]}}}
    if token == "vault-token":
        return {"authenticated": True, "user": {"username": "vera"}, "audiences": ["vault"]}
    return {"authenticated": False, "error": "unknown token"}


def test_token_webhook(kapiserver_factory, webhook, tmp_path):
    hook = webhook(authenticate)
    server = kapiserver_factory(config={
        "authentication-token-webhook-config-file": hook.kubeconfig(tmp_path / "authn.yaml")},
        workers=1)
    result = server.kubectl("auth", "whoami", "-o", "json", token="wanda-token", user=None)
    assert result.returncode == 0, result.stderr + server.log()
    assert json.loads(result.stdout)["status"]["userInfo"] == {
        "username": "wanda", "uid": "w-1", "groups": ["web", "system:authenticated"],
        "extra": {"k": ["v"]}}
    review, subject = hook.received[0]
    assert review["apiVersion"] == "authentication.k8s.io/v1" and review["kind"] == "TokenReview"
    assert review["spec"] == {"token": "wanda-token", "audiences": [ISSUER]}
    assert subject == {"commonName": "kapiserver"}
    # The answer is cached (--authentication-token-webhook-cache-ttl, 2m by default).
    for _ in range(3):
        assert server.get("/api/v1/namespaces", token="wanda-token").status_code == 200
    assert len(hook.received) == 1

    assert_status(server.get("/api/v1/namespaces", token="nope"), 401, "Unauthorized",
                  "Unauthorized")
    # A token for another audience only: not for this API.
    assert_status(server.get("/api/v1/namespaces", token="vault-token"), 401, "Unauthorized")
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
              "spec": {"token": "vault-token", "audiences": ["vault"]}}
    status = server.request("POST", "/apis/authentication.k8s.io/v1/tokenreviews", json=review,
                            user="admin", groups=["system:masters"]).json()["status"]
    assert status == {"authenticated": True, "audiences": ["vault"], "user": {
        "username": "vera", "groups": ["system:authenticated"]}}


def test_token_webhook_with_an_untrusted_certificate(kapiserver_factory, webhook, tmp_path):
    hook = webhook(authenticate)
    other = PKI(str(tmp_path / "other-pki"))
    other.ensure_ca()
    with open(other.ca_cert_file, "rb") as f:
        kubeconfig = hook.kubeconfig(tmp_path / "authn.yaml", ca_pem=f.read())
    server = kapiserver_factory(config={
        "authentication-token-webhook-config-file": kubeconfig})
    assert_status(server.get("/api/v1/namespaces", token="wanda-token", timeout=60), 401,
                  "Unauthorized")
    assert hook.received == []


def authorize(review):
    spec = review["spec"]
    user = spec.get("user")
    if user == "dave":
        return {"allowed": False, "denied": True, "reason": "dave is suspended"}
    if user == "alice":
        if spec.get("resourceAttributes", {}).get("verb") == "delete":
            return {"allowed": False, "reason": "alice may not delete"}
        return {"allowed": True, "reason": "alice is trusted"}
    return {"allowed": False}


def test_webhook_authorizer(kapiserver_factory, webhook, tmp_path, token_file):
    hook = webhook(authorize)
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(open(token_file).read() + "dave-token,dave,uid-dave\n")
    server = kapiserver_factory(config={
        "token-auth-file": str(tokens), "authorization-mode": ["Webhook", "AlwaysDeny"],
        "authorization-webhook-config-file": hook.kubeconfig(tmp_path / "authz.yaml")},
        workers=1)
    path = "/api/v1/namespaces/default/configmaps"
    assert server.get(path, token="alice-token").status_code == 200
    review, subject = hook.received[-1]
    assert review["apiVersion"] == "authorization.k8s.io/v1"
    assert review["spec"] == {
        "resourceAttributes": {"namespace": "default", "verb": "list", "version": "v1",
                               "resource": "configmaps"},
        "user": "alice", "groups": ["devs", "qa", "system:authenticated"], "uid": "uid-alice"}
    # Allowed answers are cached: no second review.
    count = len(hook.received)
    assert server.get(path, token="alice-token").status_code == 200
    assert len(hook.received) == count
    # Denied: the webhook's reason; no opinion: the next mode decides, reasons joined.
    assert_status(server.get(path, token="dave-token"), 403, "Forbidden",
                  'configmaps is forbidden: User "dave" cannot list resource "configmaps" in '
                  'API group "" in the namespace "default": dave is suspended')
    assert_status(server.request("DELETE", path + "/x", token="alice-token"), 403,
                  "Forbidden",
                  'configmaps "x" is forbidden: User "alice" cannot delete resource '
                  '"configmaps" in API group "" in the namespace "default": alice may not '
                  'delete\nEverything is forbidden.')
    result = server.kubectl("auth", "can-i", "delete", "configmaps", token="alice-token",
                            user=None)
    assert result.stdout.strip() == "no - alice may not delete\nEverything is forbidden."
    result = server.kubectl("auth", "can-i", "get", "configmaps", token="alice-token",
                            user=None)
    assert (result.returncode, result.stdout.strip()) == (0, "yes")
    # The webhook cannot list rules: incomplete, with upstream's evaluation error.
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
              "spec": {"namespace": "default"}}
    status = server.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
                            json=review, token="alice-token").json()["status"]
    assert status == {"resourceRules": [], "nonResourceRules": [], "incomplete": True,
                      "evaluationError": "webhook authorizer does not support user rule "
                                         "resolution"}


def test_webhook_mode_needs_its_config_file(kapiserver_factory):
    server = kapiserver_factory(config={"authorization-mode": "Webhook"}, start=False)
    with pytest.raises(RuntimeError, match="--authorization-webhook-config-file: required"):
        server.start(timeout=20)
