"""Admission webhooks (MutatingAdmissionWebhook, ValidatingAdmissionWebhook) against real
webhook servers on loopback: HTTPS with their own CA, ``http.server`` + ``ssl`` in threads
of the test process, driven through kubectl and the official Python client."""

import base64
import copy
import http.server
import json
import ssl
import threading
import time

import pytest

from kapiserver.pki import PKI
from kapiserver.testing import assert_status

ADMIN = {"user": "admin", "groups": ["system:masters"]}
CM_RULE = {"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["v1"],
           "resources": ["configmaps"]}


class WebhookServer:
    """An HTTPS admission webhook server: ``handlers[path](request) -> response fields``
    (``allowed`` defaults to true; ``uid`` is filled in). It records every review."""

    def __init__(self, tmp_path, name="webhook", hosts=("127.0.0.1",)):
        self.pki = PKI(str(tmp_path / f"{name}-pki"))
        self.pki.ensure_serving_cert(list(hosts))
        with open(self.pki.ca_cert_file, "rb") as f:
            self.ca_bundle = base64.b64encode(f.read()).decode()
        self.handlers = {}
        self.received = []  # (path, review)
        self.delay = {}  # path -> seconds to wait before answering
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def do_POST(self):
                path = self.path.split("?")[0]
                review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.received.append((self.path, review))
                if server.delay.get(path):
                    time.sleep(server.delay[path])
                handler = server.handlers.get(path)
                answer = handler(review["request"]) if handler else {}
                if isinstance(answer, bytes):  # a raw (broken) answer
                    body = answer
                else:
                    response = {"uid": review["request"]["uid"], "allowed": True, **answer}
                    body = json.dumps({"apiVersion": review["apiVersion"],
                                       "kind": "AdmissionReview",
                                       "response": response}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except OSError:
                    pass  # the server gave up waiting

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.pki.serving_cert_file, self.pki.serving_key_file)
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.port}{path}"

    def client_config(self, path: str) -> dict:
        return {"url": self.url(path), "caBundle": self.ca_bundle}

    def reviews(self, path: str) -> list[dict]:
        return [review for p, review in self.received if p.split("?")[0] == path]

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    process = KapiserverProcess(str(tmp_path_factory.mktemp("kapiserver"))).start()
    yield process
    process.stop()


@pytest.fixture
def webhook(tmp_path):
    hook_server = WebhookServer(tmp_path)
    yield hook_server
    hook_server.stop()


def _hook(name, config, rules=(CM_RULE,), **fields):
    hook = {"name": name, "clientConfig": config, "rules": list(rules),
            "sideEffects": "None", "admissionReviewVersions": ["v1"]}
    hook.update(fields)
    return hook


class Configurations:
    """Webhook configurations created by a test, deleted at its end."""

    def __init__(self, server):
        self.server = server
        self.created = []

    def create(self, kind: str, name: str, *hooks) -> dict:
        resource = f"{kind.lower()}s"
        body = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
                "metadata": {"name": name}, "webhooks": list(hooks)}
        response = self.server.request(
            "POST", f"/apis/admissionregistration.k8s.io/v1/{resource}", json=body, **ADMIN)
        assert response.status_code == 201, response.text
        self.created.append(f"/apis/admissionregistration.k8s.io/v1/{resource}/{name}")
        return response.json()

    def validating(self, name, *hooks):
        return self.create("ValidatingWebhookConfiguration", name, *hooks)

    def mutating(self, name, *hooks):
        return self.create("MutatingWebhookConfiguration", name, *hooks)

    def delete_all(self):
        for path in self.created:
            self.server.request("DELETE", path, **ADMIN)


@pytest.fixture
def configurations(server):
    made = Configurations(server)
    yield made
    made.delete_all()


_names = iter(range(10**6))


@pytest.fixture
def namespace(server):
    name = f"wh-{next(_names)}-{int(time.time() * 1000) % 100000}"
    response = server.request("POST", "/api/v1/namespaces",
                              json={"metadata": {"name": name, "labels": {"team": "a"}}},
                              **ADMIN)
    assert response.status_code == 201, response.text
    return name


def assert_reasonless(response, code: int, message: str) -> None:
    """A Status without a reason (a webhook's refusal that gave none)."""
    assert response.status_code == code, response.text
    body = response.json()
    assert body["kind"] == "Status" and body["status"] == "Failure", body
    assert "reason" not in body and body["code"] == code, body
    assert body["message"] == message, body


def create_configmap(server, namespace, name, data=None, labels=None, query="", **user):
    body = {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, **({"labels": labels} if labels else {})},
            "data": data or {"a": "1"}}
    return server.request("POST", f"/api/v1/namespaces/{namespace}/configmaps{query}",
                          json=body, **(user or ADMIN))


# -- validating webhooks ----------------------------------------------------------------------


def test_validating_webhook_denies_with_its_status(server, webhook, configurations, namespace):
    def deny(request):
        if request["object"]["data"].get("a") == "bad":
            return {"allowed": False, "status": {"code": 403, "reason": "Forbidden",
                                                 "message": "a must not be bad"}}
        return {}

    webhook.handlers["/validate"] = deny
    configurations.validating("deny-bad", _hook("deny.example.com",
                                                webhook.client_config("/validate")))
    assert create_configmap(server, namespace, "good").status_code == 201
    response = create_configmap(server, namespace, "bad", {"a": "bad"})
    assert_status(response, 403, "Forbidden",
                  'admission webhook "deny.example.com" denied the request: a must not be bad')
    review = webhook.reviews("/validate")[-1]
    path = webhook.received[-1][0]
    assert path == "/validate?timeout=10s"
    request = review["request"]
    assert review["apiVersion"] == "admission.k8s.io/v1"
    assert request["kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
    assert request["resource"] == {"group": "", "version": "v1", "resource": "configmaps"}
    assert request["requestKind"] == request["kind"]
    assert request["requestResource"] == request["resource"]
    assert request["name"] == "bad" and request["namespace"] == namespace
    assert request["operation"] == "CREATE" and request["dryRun"] is False
    assert request["userInfo"]["username"] == "admin"
    assert "system:masters" in request["userInfo"]["groups"]
    assert request["object"]["metadata"]["name"] == "bad"
    assert request["oldObject"] is None
    assert request["options"] == {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}
    # nothing was stored
    assert server.request("GET", f"/api/v1/namespaces/{namespace}/configmaps/bad",
                          **ADMIN).status_code == 404


def test_denial_without_message_and_through_kubectl(server, webhook, configurations, namespace):
    webhook.handlers["/validate"] = lambda request: {"allowed": False}
    configurations.validating("deny-all", _hook("deny-all.example.com",
                                                webhook.client_config("/validate")))
    response = create_configmap(server, namespace, "x")
    assert_reasonless(response, 400, 'admission webhook "deny-all.example.com" denied the '
                      "request without explanation")
    result = server.kubectl("create", "configmap", "y", "-n", namespace, "--from-literal=a=b")
    assert result.returncode == 1
    assert result.stderr.strip() == ('error: failed to create configmap: admission webhook '
                                     '"deny-all.example.com" denied the request without '
                                     'explanation')


def test_update_delete_and_options(server, webhook, configurations, namespace):
    webhook.handlers["/validate"] = lambda request: {}
    rule = {"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"],
            "resources": ["configmaps"]}
    configurations.validating("everything", _hook("all.example.com",
                                                  webhook.client_config("/validate"),
                                                  rules=[rule]))
    assert create_configmap(server, namespace, "cm").status_code == 201
    path = f"/api/v1/namespaces/{namespace}/configmaps/cm"
    response = server.request("PATCH", path + "?fieldManager=tester",
                              data=json.dumps({"data": {"a": "2"}}),
                              headers={"Content-Type": "application/merge-patch+json"}, **ADMIN)
    assert response.status_code == 200, response.text
    update = webhook.reviews("/validate")[-1]["request"]
    assert update["operation"] == "UPDATE"
    assert update["object"]["data"] == {"a": "2"} and update["oldObject"]["data"] == {"a": "1"}
    assert update["options"] == {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1",
                                 "fieldManager": "tester"}
    response = server.request("DELETE", path, json={"propagationPolicy": "Background"},
                              **ADMIN)
    assert response.status_code == 200, response.text
    delete = webhook.reviews("/validate")[-1]["request"]
    assert delete["operation"] == "DELETE" and delete["name"] == "cm"
    assert delete["object"] is None and delete["oldObject"]["data"] == {"a": "2"}
    assert delete["options"] == {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1",
                                 "propagationPolicy": "Background"}


def test_warnings_and_python_client(server, webhook, configurations, namespace):
    from kubernetes import client

    webhook.handlers["/validate"] = lambda request: {"warnings": ["think twice",
                                                                  "really"]}
    configurations.validating("warn", _hook("warn.example.com",
                                            webhook.client_config("/validate")))
    response = create_configmap(server, namespace, "warned")
    assert response.status_code == 201
    assert response.headers["Warning"] == '299 - "think twice", 299 - "really"'
    api = client.CoreV1Api(server.python_client())
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="from-python"),
                              data={"a": "b"})
    created = api.create_namespaced_config_map(namespace, body)
    assert created.metadata.name == "from-python"
    webhook.handlers["/validate"] = lambda request: {
        "allowed": False, "status": {"code": 422, "reason": "Invalid", "message": "nope"}}
    with pytest.raises(client.ApiException) as raised:
        api.create_namespaced_config_map(namespace, client.V1ConfigMap(
            metadata=client.V1ObjectMeta(name="refused")))
    assert raised.value.status == 422
    status = json.loads(raised.value.body)
    assert status["message"] == 'admission webhook "warn.example.com" denied the request: nope'
    assert status["reason"] == "Invalid"


def test_webhook_configurations_are_exempt(server, webhook, configurations):
    webhook.handlers["/validate"] = lambda request: {"allowed": False}
    rule = {"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}
    configurations.validating("deny-everything", _hook("deny-everything.example.com",
                                                       webhook.client_config("/validate"),
                                                       rules=[rule]))
    # ...but a broken webhook never locks its own configuration
    configurations.validating("another", _hook("another.example.com",
                                               webhook.client_config("/validate"),
                                               rules=[rule]))
    assert not webhook.reviews("/validate")
    response = server.request("POST", "/api/v1/namespaces",
                              json={"metadata": {"name": "refused-by-webhook"}}, **ADMIN)
    assert_reasonless(response, 400, 'admission webhook "another.example.com" denied the '
                      "request without explanation")


# -- failures ---------------------------------------------------------------------------------


def test_failure_policies_and_timeouts(server, webhook, configurations, namespace):
    webhook.handlers["/slow"] = lambda request: {}
    webhook.delay["/slow"] = 3
    configurations.validating("slow", _hook("slow.example.com", webhook.client_config("/slow"),
                                            timeoutSeconds=1))
    started = time.monotonic()
    response = create_configmap(server, namespace, "timed-out")
    assert time.monotonic() - started < 2.5
    assert_status(response, 500, "InternalError",
                  'Internal error occurred: failed calling webhook "slow.example.com": failed '
                  f'to call webhook: Post "{webhook.url("/slow")}?timeout=1s": context '
                  "deadline exceeded")
    configurations.delete_all()
    configurations.created.clear()
    configurations.validating("slow-ignored", _hook(
        "slow.example.com", webhook.client_config("/slow"), timeoutSeconds=1,
        failurePolicy="Ignore"))
    assert create_configmap(server, namespace, "ignored").status_code == 201


def test_unreachable_and_untrusted_webhooks(server, webhook, tmp_path, configurations,
                                            namespace):
    from kapiserver.testing import free_port

    port = free_port()
    configurations.validating("refused", _hook(
        "refused.example.com", {"url": f"https://127.0.0.1:{port}/x",
                                "caBundle": webhook.ca_bundle}))
    response = create_configmap(server, namespace, "a")
    assert_status(response, 500, "InternalError",
                  'Internal error occurred: failed calling webhook "refused.example.com": '
                  f'failed to call webhook: Post "https://127.0.0.1:{port}/x?timeout=10s": '
                  f"dial tcp 127.0.0.1:{port}: connect: connection refused")
    configurations.delete_all()
    configurations.created.clear()
    other = WebhookServer(tmp_path, "other")
    try:
        configurations.validating("untrusted", _hook(
            "untrusted.example.com", {"url": webhook.url("/validate"),
                                      "caBundle": other.ca_bundle}))
        response = create_configmap(server, namespace, "b")
        assert_status(response, 500, "InternalError",
                      'Internal error occurred: failed calling webhook "untrusted.example.com":'
                      f' failed to call webhook: Post "{webhook.url("/validate")}?timeout=10s":'
                      " tls: failed to verify certificate: x509: certificate signed by unknown"
                      " authority")
    finally:
        other.stop()


def test_invalid_responses(server, webhook, configurations, namespace):
    configurations.validating("bad-answers", _hook("bad.example.com",
                                                   webhook.client_config("/bad")))
    webhook.handlers["/bad"] = lambda request: {"uid": "not-the-uid"}
    response = create_configmap(server, namespace, "a")
    body = assert_status(response, 500, "InternalError")
    uid = webhook.reviews("/bad")[-1]["request"]["uid"]
    assert body["message"] == (
        'Internal error occurred: failed calling webhook "bad.example.com": received invalid '
        f'webhook response: expected response.uid="{uid}", got "not-the-uid"')
    webhook.handlers["/bad"] = lambda request: json.dumps({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}).encode()
    body = assert_status(create_configmap(server, namespace, "b"), 500, "InternalError")
    assert body["message"].endswith("received invalid webhook response: webhook response "
                                    "was absent")
    webhook.handlers["/bad"] = lambda request: {"patchType": "JSONPatch",
                                                "patch": base64.b64encode(b"[]").decode()}
    body = assert_status(create_configmap(server, namespace, "c"), 500, "InternalError")
    assert body["message"].endswith("received invalid webhook response: validating webhook "
                                    "may not return response.patch")


# -- selection --------------------------------------------------------------------------------


def test_namespace_and_object_selectors(server, webhook, configurations, namespace):
    webhook.handlers["/validate"] = lambda request: {"allowed": False}
    configurations.validating("selected", _hook(
        "selected.example.com", webhook.client_config("/validate"),
        namespaceSelector={"matchLabels": {"team": "a"}},
        objectSelector={"matchExpressions": [{"key": "guarded", "operator": "Exists"}]}))
    assert create_configmap(server, namespace, "unlabelled").status_code == 201
    assert create_configmap(server, namespace, "guarded",
                            labels={"guarded": "yes"}).status_code == 400
    other = "wh-other-" + namespace.split("-", 1)[1]
    assert server.request("POST", "/api/v1/namespaces", json={"metadata": {"name": other}},
                          **ADMIN).status_code == 201
    assert create_configmap(server, other, "guarded", labels={"guarded": "yes"}).status_code \
        == 201
    # the old object's labels count too: removing the label is refused
    path = f"/api/v1/namespaces/{namespace}/configmaps/unlabelled"
    response = server.request("PATCH", path, data=json.dumps(
        {"metadata": {"labels": {"guarded": "now"}}}),
        headers={"Content-Type": "application/merge-patch+json"}, **ADMIN)
    assert response.status_code == 400


def test_namespace_requests_use_the_namespace_itself(server, webhook, configurations):
    webhook.handlers["/validate"] = lambda request: {"allowed": False}
    rule = {"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
            "resources": ["namespaces"], "scope": "Cluster"}
    configurations.validating("namespaces", _hook(
        "ns.example.com", webhook.client_config("/validate"), rules=[rule],
        namespaceSelector={"matchLabels": {"locked": "true"}}))
    ok = server.request("POST", "/api/v1/namespaces", json={"metadata": {"name": "open-ns"}},
                        **ADMIN)
    assert ok.status_code == 201
    locked = server.request("POST", "/api/v1/namespaces", json={
        "metadata": {"name": "locked-ns", "labels": {"locked": "true"}}}, **ADMIN)
    assert locked.status_code == 400
    request = webhook.reviews("/validate")[-1]["request"]
    assert request["resource"]["resource"] == "namespaces" and "namespace" not in request


def test_rules_subresources_scope_and_operations(server, webhook, configurations, namespace):
    webhook.handlers["/validate"] = lambda request: {}
    configurations.validating("rules", _hook(
        "rules.example.com", webhook.client_config("/validate"), rules=[
            {"operations": ["UPDATE"], "apiGroups": ["apps"], "apiVersions": ["v1"],
             "resources": ["deployments/scale", "deployments/status"],
             "scope": "Namespaced"}]))
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "web"},
                  "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                           "template": {"metadata": {"labels": {"app": "web"}},
                                        "spec": {"containers": [{"name": "c",
                                                                 "image": "nginx"}]}}}}
    base = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    assert server.request("POST", base, json=deployment, **ADMIN).status_code == 201
    assert not webhook.reviews("/validate")  # the rule names subresources only
    result = server.kubectl("scale", "deployment/web", "-n", namespace, "--replicas=3")
    assert result.returncode == 0, result.stderr
    request = webhook.reviews("/validate")[-1]["request"]
    assert request["kind"] == {"group": "autoscaling", "version": "v1", "kind": "Scale"}
    assert request["resource"] == {"group": "apps", "version": "v1",
                                   "resource": "deployments"}
    assert request["subResource"] == "scale" and request["requestSubResource"] == "scale"
    assert request["object"]["spec"]["replicas"] == 3
    assert request["oldObject"]["spec"]["replicas"] == 1


def test_match_conditions(server, webhook, configurations, namespace):
    webhook.handlers["/validate"] = lambda request: {"allowed": False}
    configurations.validating("conditions", _hook(
        "conditions.example.com", webhook.client_config("/validate"), matchConditions=[
            {"name": "not-admin", "expression": "request.userInfo.username != 'nobody'"},
            {"name": "guarded", "expression": "object.metadata.name.startsWith('guarded-')"},
        ]))
    assert create_configmap(server, namespace, "free").status_code == 201
    assert create_configmap(server, namespace, "guarded-1").status_code == 400
    configurations.delete_all()
    configurations.created.clear()
    configurations.validating("erroring", _hook(
        "erroring.example.com", webhook.client_config("/validate"), matchConditions=[
            {"name": "missing", "expression": "object.data.missing == 'x'"}]))
    response = create_configmap(server, namespace, "errs")
    assert_status(response, 403, "Forbidden",
                  'configmaps "errs" is forbidden: expression \'object.data.missing == '
                  "'x'' resulted in error: no such key: missing")
    configurations.delete_all()
    configurations.created.clear()
    configurations.validating("erroring-ignored", _hook(
        "erroring.example.com", webhook.client_config("/validate"), failurePolicy="Ignore",
        matchConditions=[{"name": "missing", "expression": "object.data.missing == 'x'"}]))
    assert create_configmap(server, namespace, "errs").status_code == 201


def test_dry_run_and_side_effects(server, webhook, configurations, namespace):
    webhook.handlers["/validate"] = lambda request: {}
    configurations.validating("effects", _hook("effects.example.com",
                                               webhook.client_config("/validate"),
                                               sideEffects="NoneOnDryRun"))
    response = create_configmap(server, namespace, "dry", query="?dryRun=All")
    assert response.status_code == 201
    request = webhook.reviews("/validate")[-1]["request"]
    assert request["dryRun"] is True
    assert request["options"]["dryRun"] == ["All"]
    assert server.request("GET", f"/api/v1/namespaces/{namespace}/configmaps/dry",
                          **ADMIN).status_code == 404
    result = server.kubectl("create", "configmap", "dry2", "-n", namespace,
                            "--from-literal=a=b", "--dry-run=server")
    assert result.returncode == 0, result.stderr
    assert webhook.reviews("/validate")[-1]["request"]["dryRun"] is True
    # (a webhook with side effects cannot be registered through v1: its refusal of dry
    # runs is unit-tested in tests/admissionwebhooks)


# -- mutating webhooks ------------------------------------------------------------------------


def _patch(*operations) -> dict:
    return {"patchType": "JSONPatch",
            "patch": base64.b64encode(json.dumps(list(operations)).encode()).decode()}


def test_mutating_webhook_patches_then_defaults_and_validation(server, webhook,
                                                               configurations, namespace):
    webhook.handlers["/mutate"] = lambda request: _patch(
        {"op": "add", "path": "/metadata/labels", "value": {"mutated": "yes"}},
        {"op": "add", "path": "/data/added", "value": "by-webhook"})
    webhook.handlers["/validate"] = lambda request: {}
    configurations.mutating("mutate", _hook("mutate.example.com",
                                            webhook.client_config("/mutate")))
    configurations.validating("see", _hook("see.example.com",
                                           webhook.client_config("/validate")))
    response = create_configmap(server, namespace, "patched")
    assert response.status_code == 201, response.text
    created = response.json()
    assert created["metadata"]["labels"] == {"mutated": "yes"}
    assert created["data"] == {"a": "1", "added": "by-webhook"}
    # validating webhooks see the mutated object
    assert webhook.reviews("/validate")[-1]["request"]["object"]["data"]["added"] == \
        "by-webhook"
    # a patch that makes the object invalid fails validation as any write would
    webhook.handlers["/mutate"] = lambda request: _patch(
        {"op": "add", "path": "/metadata/labels", "value": {"bad label!": "x"}})
    response = create_configmap(server, namespace, "invalid")
    body = assert_status(response, 422, "Invalid")
    assert body["details"]["causes"][0]["field"] == "metadata.labels"


def test_mutating_webhook_through_kubectl_and_python(server, webhook, configurations,
                                                     namespace):
    from kubernetes import client

    webhook.handlers["/mutate"] = lambda request: _patch(
        {"op": "replace", "path": "/data/a", "value": "changed"})
    configurations.mutating("mutate", _hook("mutate.example.com",
                                            webhook.client_config("/mutate")))
    result = server.kubectl("create", "configmap", "kc", "-n", namespace, "--from-literal=a=b",
                            "-o", "jsonpath={.data.a}")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "changed"
    api = client.CoreV1Api(server.python_client())
    made = api.create_namespaced_config_map(namespace, client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="py"), data={"a": "b"}))
    assert made.data == {"a": "changed"}
    assert api.read_namespaced_config_map("py", namespace).data == {"a": "changed"}


def test_reinvocation(server, webhook, configurations, namespace):
    calls = []

    def first(request):
        calls.append("first")
        labels = request["object"]["metadata"].get("labels") or {}
        if labels.get("second") == "yes":
            return _patch({"op": "add", "path": "/metadata/labels/first-saw-second",
                           "value": "yes"})
        return {}

    def second(request):
        calls.append("second")
        return _patch({"op": "add", "path": "/metadata/labels", "value": {"second": "yes"}})

    webhook.handlers["/first"] = first
    webhook.handlers["/second"] = second
    configurations.mutating("a-first", _hook("first.example.com",
                                             webhook.client_config("/first"),
                                             reinvocationPolicy="IfNeeded"))
    configurations.mutating("b-second", _hook("second.example.com",
                                              webhook.client_config("/second")))
    response = create_configmap(server, namespace, "reinvoked")
    assert response.status_code == 201, response.text
    assert calls == ["first", "second", "first"]
    assert response.json()["metadata"]["labels"] == {"second": "yes",
                                                     "first-saw-second": "yes"}


def test_mutating_failure_policy_ignore_and_equivalent_versions(server, webhook,
                                                                configurations, namespace):
    webhook.handlers["/hpa"] = lambda request: _patch(
        {"op": "replace", "path": "/spec/maxReplicas", "value": 7})
    configurations.mutating("broken", _hook(
        "broken.example.com", {"url": "https://127.0.0.1:1/x", "caBundle": webhook.ca_bundle},
        failurePolicy="Ignore"))
    configurations.mutating("hpa", _hook(
        "hpa.example.com", webhook.client_config("/hpa"), rules=[
            {"operations": ["CREATE"], "apiGroups": ["autoscaling"], "apiVersions": ["v2"],
             "resources": ["horizontalpodautoscalers"]}]))
    hpa = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
           "metadata": {"name": "web"},
           "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                       "name": "web"},
                    "maxReplicas": 3, "targetCPUUtilizationPercentage": 50}}
    response = server.request(
        "POST", f"/apis/autoscaling/v1/namespaces/{namespace}/horizontalpodautoscalers",
        json=hpa, **ADMIN)
    assert response.status_code == 201, response.text
    assert response.json()["spec"]["maxReplicas"] == 7
    request = webhook.reviews("/hpa")[-1]["request"]
    assert request["kind"] == {"group": "autoscaling", "version": "v2",
                               "kind": "HorizontalPodAutoscaler"}
    assert request["requestKind"] == {"group": "autoscaling", "version": "v1",
                                      "kind": "HorizontalPodAutoscaler"}
    assert request["object"]["apiVersion"] == "autoscaling/v2"
    assert request["object"]["spec"]["metrics"][0]["resource"]["name"] == "cpu"


# -- every path goes through admission ----------------------------------------------------------


def _record_all(webhook, configurations, rules):
    webhook.handlers["/record"] = lambda request: {}
    configurations.validating("record", _hook("record.example.com",
                                              webhook.client_config("/record"), rules=rules))
    return lambda: [r["request"] for r in webhook.reviews("/record")]


def test_subresources_apply_and_deletecollection_are_admitted(server, webhook, configurations,
                                                              namespace):
    seen = _record_all(webhook, configurations, [
        {"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"],
         "resources": ["pods", "pods/*", "configmaps", "serviceaccounts/token"]}])
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    base = f"/api/v1/namespaces/{namespace}"
    assert server.request("POST", f"{base}/pods", json=pod, **ADMIN).status_code == 201
    # status
    response = server.request("PATCH", f"{base}/pods/p/status", data=json.dumps(
        {"status": {"phase": "Running"}}), headers={
        "Content-Type": "application/merge-patch+json"}, **ADMIN)
    assert response.status_code == 200, response.text
    status = seen()[-1]
    assert (status["operation"], status["subResource"]) == ("UPDATE", "status")
    assert status["kind"]["kind"] == "Pod"
    # binding
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"},
               "target": {"apiVersion": "v1", "kind": "Node", "name": "node-1"}}
    response = server.request("POST", f"{base}/pods/p/binding", json=binding, **ADMIN)
    assert response.status_code == 201, response.text
    bound = seen()[-1]
    assert (bound["operation"], bound["subResource"], bound["kind"]["kind"]) == \
        ("CREATE", "binding", "Binding")
    # CONNECT: exec is admitted before the kubelet is dialled
    webhook.handlers["/record"] = lambda request: (
        {"allowed": False, "status": {"code": 403, "reason": "Forbidden",
                                      "message": "no exec"}}
        if request["operation"] == "CONNECT" else {})
    response = server.request("POST", f"{base}/pods/p/exec?command=ls&command=-l&stdout=true"
                              "&container=c", **ADMIN)
    assert_status(response, 403, "Forbidden",
                  'admission webhook "record.example.com" denied the request: no exec')
    connect = seen()[-1]
    assert (connect["operation"], connect["subResource"], connect["name"]) == \
        ("CONNECT", "exec", "p")
    assert connect["kind"] == {"group": "", "version": "v1", "kind": "PodExecOptions"}
    assert connect["object"] == {"kind": "PodExecOptions", "apiVersion": "v1",
                                 "stdout": True, "container": "c", "command": ["ls", "-l"]}
    webhook.handlers["/record"] = lambda request: {}
    # token requests
    response = server.request("POST", f"{base}/serviceaccounts/default/token",
                              json={"spec": {"audiences": ["x"]}}, **ADMIN)
    assert response.status_code == 201, response.text
    token = seen()[-1]
    assert (token["operation"], token["subResource"], token["name"]) == \
        ("CREATE", "token", "default")
    assert token["kind"] == {"group": "authentication.k8s.io", "version": "v1",
                             "kind": "TokenRequest"}
    # server-side apply, create and update
    manifest = (f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n"
                f"  namespace: {namespace}\ndata:\n  a: '1'\n")
    result = server.kubectl("apply", "--server-side", "-f", "-", input=manifest)
    assert result.returncode == 0, result.stderr
    assert seen()[-1]["operation"] == "CREATE"
    assert seen()[-1]["options"]["kind"] == "CreateOptions"
    result = server.kubectl("apply", "--server-side", "-f", "-",
                            input=manifest.replace("'1'", "'2'"))
    assert result.returncode == 0, result.stderr
    assert seen()[-1]["operation"] == "UPDATE"
    assert seen()[-1]["options"]["fieldManager"] == "kubectl"
    # deletecollection: one DELETE per object
    assert create_configmap(server, namespace, "other").status_code == 201
    before = len(seen())
    response = server.request("DELETE", f"{base}/configmaps", **ADMIN)
    assert response.status_code == 200, response.text
    deleted = {r["name"] for r in seen()[before:] if r["operation"] == "DELETE"}
    assert {"applied", "other"} <= deleted


def test_configuration_changes_reach_every_worker(tmp_path, webhook):
    from kapiserver.testing import KapiserverProcess

    process = KapiserverProcess(str(tmp_path / "two-workers"), workers=2).start()
    try:
        webhook.handlers["/validate"] = lambda request: {"allowed": False}
        configurations = Configurations(process)
        configurations.validating("deny", _hook("deny.example.com",
                                                webhook.client_config("/validate")))
        # every request (whichever worker serves it) sees the new configuration
        for i in range(12):
            assert create_configmap(process, "default", f"c{i}").status_code == 400
        configurations.delete_all()
        for i in range(12):
            assert create_configmap(process, "default", f"d{i}").status_code == 201
    finally:
        process.stop()


def test_webhook_reached_through_a_service(server, tmp_path, configurations, namespace):
    hook_server = WebhookServer(tmp_path, "svc", hosts=[f"hooks.{namespace}.svc"])
    try:
        hook_server.handlers["/by-service"] = lambda request: {
            "allowed": False, "status": {"code": 403, "message": "via the service"}}
        base = f"/api/v1/namespaces/{namespace}"
        # Endpoints may not name loopback addresses (upstream's validation): an
        # ExternalName Service reaches this host; TLS still verifies hooks.NS.svc.
        service = {"metadata": {"name": "hooks"},
                   "spec": {"type": "ExternalName", "externalName": "localhost"}}
        assert server.request("POST", f"{base}/services", json=service,
                              **ADMIN).status_code == 201
        configurations.validating("by-service", _hook(
            "service.example.com", {"service": {"namespace": namespace, "name": "hooks",
                                                "path": "/by-service",
                                                "port": hook_server.port},
                                    "caBundle": hook_server.ca_bundle}))
        response = create_configmap(server, namespace, "x")
        assert_reasonless(response, 403, 'admission webhook "service.example.com" denied '
                          "the request: via the service")
        assert hook_server.received[-1][0] == "/by-service?timeout=10s"
        # a service that does not resolve fails the call, worded as upstream's resolver
        configurations.delete_all()
        configurations.created.clear()
        configurations.validating("missing-service", _hook(
            "missing.example.com", {"service": {"namespace": namespace, "name": "nowhere"},
                                    "caBundle": hook_server.ca_bundle}))
        body = assert_status(create_configmap(server, namespace, "y"), 500, "InternalError")
        assert body["message"] == (
            'Internal error occurred: failed calling webhook "missing.example.com": failed to '
            f'call webhook: Post "https://nowhere.{namespace}.svc:443?timeout=10s": '
            f'service/nowhere in "{namespace}" is not present')
    finally:
        hook_server.stop()


def test_mutating_before_and_validating_after_the_strategys_validation(server, webhook,
                                                                      configurations,
                                                                      namespace):
    # A mutating webhook may repair an object validation would refuse...
    webhook.handlers["/mutate"] = lambda request: _patch(
        {"op": "replace", "path": "/metadata/labels", "value": {"fixed": "yes"}})
    webhook.handlers["/validate"] = lambda request: {"allowed": False}
    configurations.mutating("repair", _hook("repair.example.com",
                                            webhook.client_config("/mutate")))
    response = create_configmap(server, namespace, "repaired", labels={"bad label!": "x"})
    assert response.status_code == 201, response.text
    assert response.json()["metadata"]["labels"] == {"fixed": "yes"}
    # ...and validating webhooks only see what validation accepted.
    configurations.delete_all()
    configurations.created.clear()
    configurations.validating("deny", _hook("deny.example.com",
                                            webhook.client_config("/validate")))
    before = len(webhook.reviews("/validate"))
    response = create_configmap(server, namespace, "refused", labels={"bad label!": "x"})
    assert_status(response, 422, "Invalid")
    assert len(webhook.reviews("/validate")) == before
    path = f"/api/v1/namespaces/{namespace}/configmaps/repaired"
    response = server.request("PATCH", path, data=json.dumps(
        {"metadata": {"labels": {"bad label!": "x"}}}),
        headers={"Content-Type": "application/merge-patch+json"}, **ADMIN)
    assert_status(response, 422, "Invalid")
    assert len(webhook.reviews("/validate")) == before
    response = server.request("PATCH", path, data=json.dumps({"data": {"b": "2"}}),
                              headers={"Content-Type": "application/merge-patch+json"},
                              **ADMIN)
    assert_reasonless(response, 400, 'admission webhook "deny.example.com" denied the '
                      "request without explanation")
