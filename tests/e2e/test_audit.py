"""Audit end to end: the policy's levels on real requests, the log file, the webhook."""

import http.server
import json
import os
import socket
import stat
import threading
import time
import uuid

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kapiserver.testing import KapiserverProcess

ADMIN = {"user": "admin", "groups": ["system:masters"]}
POLICY = """
apiVersion: audit.k8s.io/v1
kind: Policy
omitManagedFields: true
rules:
- level: None
  nonResourceURLs: ["/readyz*", "/livez*", "/healthz*", "/openapi*", "/version", "/api*"]
- level: None
  namespaces: ["quiet"]
- level: RequestResponse
  namespaces: ["rr"]
- level: Request
  namespaces: ["req"]
- level: Metadata
"""


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return str(path)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("audit")
    process = KapiserverProcess(str(workdir), {
        "authorization-mode": "RBAC",
        "audit-policy-file": write(workdir / "policy.yaml", POLICY),
        "audit-log-path": str(workdir / "logs" / "audit.log")}, workers=2)
    process.audit_log = str(workdir / "logs" / "audit.log")
    process.start(timeout=120)
    for namespace in ("rr", "req", "quiet", "meta"):
        process.request("POST", "/api/v1/namespaces", **ADMIN,
                        json={"metadata": {"name": namespace}})
    yield process
    process.stop()


def call(server, method, path, audit_id=None, **kwargs):
    headers = dict(kwargs.pop("headers", {}))
    headers["Audit-ID"] = audit_id or str(uuid.uuid4())
    response = server.request(method, path, headers=headers, **kwargs)
    assert response.headers["Audit-Id"] == headers["Audit-ID"]
    return response, headers["Audit-ID"]


def events(server, audit_id, count, timeout=10.0) -> list[dict]:
    """The events of ``audit_id`` once there are ``count`` of them."""
    deadline = time.monotonic() + timeout
    while True:
        found = []
        if os.path.exists(server.audit_log):
            with open(server.audit_log) as f:
                found = [e for e in map(json.loads, f) if e["auditID"] == audit_id]
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def test_create_at_request_level(server):
    body = {"metadata": {"name": "c1", "labels": {"a": "b"}}, "data": {"k": "v"}}
    response, audit_id = call(server, "POST", "/api/v1/namespaces/req/configmaps", **ADMIN,
                              json=body)
    assert response.status_code == 201
    received, complete = events(server, audit_id, 2)
    assert received["stage"] == "RequestReceived" and complete["stage"] == "ResponseComplete"
    assert received["requestReceivedTimestamp"] == received["stageTimestamp"]
    for event in (received, complete):
        assert event["level"] == "Request" and event["verb"] == "create"
        assert event["user"]["username"] == "admin"
        assert event["sourceIPs"] == ["127.0.0.1"]
        assert event["userAgent"].startswith("python-requests/")
    assert "responseStatus" not in received
    assert complete["responseStatus"] == {"metadata": {}, "code": 201}
    # The name came from the body (LogRequestObject); the object is logged as sent.
    assert complete["objectRef"] == {"resource": "configmaps", "namespace": "req",
                                     "name": "c1", "apiVersion": "v1"}
    assert complete["requestObject"]["data"] == {"k": "v"}
    assert complete["requestObject"]["kind"] == "ConfigMap"
    assert "responseObject" not in complete
    assert complete["annotations"]["authorization.k8s.io/decision"] == "allow"
    assert list(complete)[:8] == ["kind", "apiVersion", "level", "auditID", "stage",
                                  "requestURI", "verb", "user"]


def test_update_and_patch_at_request_response_level(server):
    create = {"metadata": {"name": "u1"}, "data": {"k": "1"}}
    assert server.request("POST", "/api/v1/namespaces/rr/configmaps", **ADMIN,
                          json=create).status_code == 201
    current = server.get("/api/v1/namespaces/rr/configmaps/u1", **ADMIN).json()
    current["data"] = {"k": "2"}
    response, audit_id = call(server, "PUT", "/api/v1/namespaces/rr/configmaps/u1", **ADMIN,
                              json=current)
    assert response.status_code == 200
    _, complete = events(server, audit_id, 2)
    assert complete["level"] == "RequestResponse" and complete["verb"] == "update"
    assert complete["objectRef"]["resourceVersion"] == current["metadata"]["resourceVersion"]
    assert complete["responseObject"]["data"] == {"k": "2"}
    # omitManagedFields: neither object carries them.
    assert "managedFields" not in complete["requestObject"]["metadata"]
    assert "managedFields" not in complete["responseObject"]["metadata"]
    assert "managedFields" in response.json()["metadata"]
    patch = {"data": {"k": "3"}}
    response, audit_id = call(server, "PATCH", "/api/v1/namespaces/rr/configmaps/u1", **ADMIN,
                              data=json.dumps(patch),
                              headers={"Content-Type": "application/merge-patch+json"})
    assert response.status_code == 200
    _, complete = events(server, audit_id, 2)
    assert complete["verb"] == "patch" and complete["requestObject"] == patch


def test_delete_at_metadata_level_and_level_none(server):
    for namespace in ("meta", "quiet"):
        assert server.request("POST", f"/api/v1/namespaces/{namespace}/configmaps", **ADMIN,
                              json={"metadata": {"name": "d1"}}).status_code == 201
    response, audit_id = call(server, "DELETE", "/api/v1/namespaces/meta/configmaps/d1",
                              **ADMIN, json={"propagationPolicy": "Background"})
    assert response.status_code == 200
    received, complete = events(server, audit_id, 2)
    assert complete["level"] == "Metadata" and complete["verb"] == "delete"
    assert complete["objectRef"]["name"] == "d1"
    assert "requestObject" not in complete and "responseObject" not in complete
    response, audit_id = call(server, "DELETE", "/api/v1/namespaces/quiet/configmaps/d1",
                              **ADMIN)
    assert response.status_code == 200
    assert events(server, audit_id, 1, timeout=1.5) == []


def test_watch_is_started_then_complete(server):
    response, audit_id = call(server, "GET",
                              "/api/v1/namespaces/meta/configmaps?watch=true&timeoutSeconds=2",
                              **ADMIN, stream=True)
    assert response.status_code == 200
    next(response.iter_lines())
    received, started = events(server, audit_id, 2)
    assert (received["stage"], started["stage"]) == ("RequestReceived", "ResponseStarted")
    assert started["responseStatus"] == {"metadata": {}, "code": 200}
    for _ in response.iter_lines():
        pass
    *_, complete = events(server, audit_id, 3)
    assert complete["stage"] == "ResponseComplete" and complete["verb"] == "watch"
    assert complete["stageTimestamp"] > started["stageTimestamp"]


def test_denied_impersonated_and_unauthenticated(server):
    response, audit_id = call(server, "GET", "/api/v1/namespaces/meta/secrets", user="bob")
    assert response.status_code == 403
    _, complete = events(server, audit_id, 2)
    assert complete["responseStatus"]["code"] == 403
    assert complete["responseStatus"]["reason"] == "Forbidden"
    assert complete["annotations"]["authorization.k8s.io/decision"] == "forbid"
    assert "authorization.k8s.io/reason" in complete["annotations"]

    response, audit_id = call(server, "GET", "/api/v1/namespaces/meta/configmaps", **ADMIN,
                              headers={"Impersonate-User": "jane",
                                       "Impersonate-Group": "devs"})
    assert response.status_code == 403  # jane may not list configmaps
    received, complete = events(server, audit_id, 2)
    assert "impersonatedUser" not in received
    assert complete["user"]["username"] == "admin"
    assert complete["impersonatedUser"] == {"username": "jane",
                                            "groups": ["devs", "system:authenticated"]}

    response, audit_id = call(server, "GET", "/api/v1/namespaces/meta/configmaps",
                              token="not-a-token")
    assert response.status_code == 401
    (event,) = events(server, audit_id, 1)
    assert event["stage"] == "ResponseStarted" and event["user"] == {}
    assert event["responseStatus"] == {
        "metadata": {}, "message": "Authentication failed, attempted: bearer", "code": 401}


def test_log_file_mode_and_metrics(server):
    assert stat.S_IMODE(os.stat(server.audit_log).st_mode) == 0o600
    text = server.get("/metrics", **ADMIN).text
    samples = {s.name: s.value for f in text_string_to_metric_families(text)
               for s in f.samples if not s.labels}
    assert samples["apiserver_audit_event_total"] > 10
    assert 'apiserver_audit_level_total{level="Request"}' in text


class Receiver:
    """An audit webhook on loopback that takes ``delay`` seconds per batch."""

    def __init__(self, delay=0.0):
        self.items = []
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                time.sleep(delay)
                assert body["kind"] == "EventList"
                receiver.items.extend(body["items"])
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def webhook_kubeconfig(path, port):
    return write(path, f"""apiVersion: v1
kind: Config
clusters: [{{name: audit, cluster: {{server: "http://127.0.0.1:{port}/audit"}}}}]
users: [{{name: audit, user: {{}}}}]
contexts: [{{name: audit, context: {{cluster: audit, user: audit}}}}]
current-context: audit
""")


def timed_gets(server, count=20) -> float:
    """The slowest of ``count`` GETs, in seconds."""
    slowest = 0.0
    for _ in range(count):
        start = time.monotonic()
        assert server.get("/api/v1/namespaces/default/configmaps", **ADMIN).status_code == 200
        slowest = max(slowest, time.monotonic() - start)
    return slowest


def test_slow_webhook_never_slows_requests(kapiserver_factory, tmp_path):
    receiver = Receiver(delay=3.0)
    try:
        server = kapiserver_factory(config={
            "audit-policy-file": write(tmp_path / "policy.yaml", POLICY),
            "audit-webhook-config-file": webhook_kubeconfig(tmp_path / "hook.kubeconfig",
                                                            receiver.port),
            "audit-webhook-batch-max-wait": "0.2s"}, workers=2)
        assert timed_gets(server) < 2.0  # each batch takes the receiver 3 s
        deadline = time.monotonic() + 30
        while len([e for e in receiver.items if e["stage"] == "ResponseComplete" and
                   e["requestURI"] == "/api/v1/namespaces/default/configmaps"]) < 20:
            assert time.monotonic() < deadline, len(receiver.items)
            time.sleep(0.2)
    finally:
        receiver.stop()


def test_webhook_down_counts_its_failures(kapiserver_factory, tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = kapiserver_factory(config={
        "audit-policy-file": write(tmp_path / "policy.yaml", POLICY),
        "audit-webhook-config-file": webhook_kubeconfig(tmp_path / "hook.kubeconfig", port),
        "audit-webhook-batch-max-wait": "0.1s", "audit-webhook-initial-backoff": "0.05s"},
        workers=2)
    assert timed_gets(server) < 2.0
    deadline = time.monotonic() + 30
    while True:
        text = server.get("/metrics", **ADMIN).text
        failed = [line for line in text.splitlines()
                  if line.startswith('apiserver_audit_error_total{plugin="webhook"}')]
        if failed and float(failed[0].split()[-1]) >= 20:
            break
        assert time.monotonic() < deadline, failed
        time.sleep(0.5)
