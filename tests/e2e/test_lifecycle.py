"""Lifecycle end to end: readiness, shutdown, in-flight limits, panics, audit, delegation."""

import json
import signal
import threading
import time

import requests

from kapiserver.testing import assert_status

PROBE = "tests.support.probe_plugin"
BASE = "/apis/probe.kapiserver.test/v1/namespaces/default"
ADMIN = dict(user="admin", groups=["system:masters"])


def test_readyz_fails_until_post_start_hooks_finish(kapiserver_factory):
    server = kapiserver_factory(plugins=[PROBE], config={"probe-post-start-delay": 3},
                                start=False)
    server.start_time = time.monotonic()
    # start() waits for /readyz, so start the process by hand and poll.
    import subprocess
    import sys

    server._log = open(server.log_file, "ab")
    server.process = subprocess.Popen(
        [sys.executable, "-m", "kapiserver", "serve", "--config", server.config_file],
        stdout=server._log, stderr=subprocess.STDOUT, env=server.env, cwd=server.workdir)
    deadline = time.monotonic() + 20
    seen_not_ready = None
    while time.monotonic() < deadline:
        try:
            response = server.get("/readyz?verbose", **ADMIN, timeout=2)
        except requests.RequestException:
            time.sleep(0.05)
            continue
        if response.status_code == 500:
            seen_not_ready = response.text
        if response.status_code == 200:
            break
        time.sleep(0.1)
    assert seen_not_ready is not None
    assert "[-]poststarthook/probe-slow failed: reason withheld\n" in seen_not_ready
    assert seen_not_ready.endswith("readyz check failed\n")
    assert response.status_code == 200
    # livez does not wait for readiness-only checks but does list post-start hooks.
    assert "[+]poststarthook/probe-slow ok" in server.get("/livez?verbose", **ADMIN).text


def test_sigterm_finishes_in_flight_ends_long_running_and_exits_zero(kapiserver_factory):
    server = kapiserver_factory(plugins=[PROBE])
    results = {}

    def blocked():
        results["blocked"] = server.get(f"{BASE}/blocks/x?seconds=3", **ADMIN, timeout=30)

    def stream():
        with server.get(f"{BASE}/streams?watch=true", **ADMIN, stream=True, timeout=30) as r:
            results["stream"] = [json.loads(line) for line in r.iter_lines() if line]

    threads = [threading.Thread(target=blocked), threading.Thread(target=stream)]
    for thread in threads:
        thread.start()
    time.sleep(1.0)
    server.process.send_signal(signal.SIGTERM)
    # The in-flight request (3 s) is still served to completion after SIGTERM; the
    # long-running stream ends at once, cleanly, with its last line.
    for thread in threads:
        thread.join(40)
    assert server.process.wait(30) == 0
    assert results["blocked"].status_code == 200
    assert results["blocked"].json() == {"released": False}
    events = results["stream"]
    assert events[-1]["type"] == "END" and events[0]["type"] == "TICK"
    assert "Worker graceful timeout" not in server.log()


def test_new_connections_refused_after_sigterm(kapiserver_factory):
    server = kapiserver_factory(plugins=[PROBE])
    holder = threading.Thread(target=lambda: server.get(f"{BASE}/blocks/y?seconds=3", **ADMIN,
                                                        timeout=30))
    holder.start()
    time.sleep(0.5)
    server.process.send_signal(signal.SIGTERM)
    time.sleep(1.5)
    try:
        response = server.get("/readyz", **ADMIN, timeout=3)
    except requests.RequestException:
        response = None
    assert response is None or response.status_code != 200
    holder.join(40)
    assert server.process.wait(30) == 0


def test_sigterm_closes_idle_kept_alive_connections_at_once(kapiserver_factory):
    server = kapiserver_factory(workers=2)
    sessions = []
    for _ in range(8):  # kept-alive connections, idle, on both workers
        session = requests.Session()
        cert = server.client_cert("admin", ["system:masters"])
        assert session.get(server.url + "/version", cert=cert, verify=server.ca_file,
                           timeout=10).status_code == 200
        sessions.append(session)
    started = time.monotonic()
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(30) == 0
    # Not the 10 s keep-alive timeout (nor the grace period) per idle connection.
    assert time.monotonic() - started < 5
    for session in sessions:
        session.close()


def test_max_in_flight_gives_429_except_to_system_masters(kapiserver_factory):
    server = kapiserver_factory(plugins=[PROBE], config={"max-requests-inflight": 1,
                                                         "enable-priority-and-fairness": False})
    blocker = threading.Thread(target=lambda: server.get(f"{BASE}/blocks/z", user="alice",
                                                         timeout=30))
    blocker.start()
    time.sleep(0.5)
    try:
        refused = server.get(f"{BASE}/echoes/a", user="alice")
        assert refused.status_code == 429
        assert refused.text == "Too many requests, please try again later.\n"
        assert refused.headers["Retry-After"] == "1"
        assert server.get(f"{BASE}/echoes/a", **ADMIN).status_code == 200
        # Long-running requests are not counted.
        with server.get(f"{BASE}/streams?watch=true", user="alice", stream=True) as r:
            assert r.status_code == 200
    finally:
        server.get(f"{BASE}/releases/z", **ADMIN)
        blocker.join(30)
    assert server.get(f"{BASE}/echoes/a", user="alice").status_code == 200


def test_panic_is_a_500_status_and_logged_with_traceback(server):
    response = server.get(f"{BASE}/panics/p", **ADMIN)
    assert_status(response, 500, "InternalError",
                  "This request caused apiserver to panic. Look in the logs for details.")
    assert response.headers["Audit-Id"]
    deadline = time.monotonic() + 5
    while "RuntimeError: probe panic" not in server.log() and time.monotonic() < deadline:
        time.sleep(0.1)
    log = server.log()
    assert "Traceback" in log and "RuntimeError: probe panic" in log
    assert f"panic serving GET {BASE}/panics/p" in log
    # The server keeps serving.
    assert server.get("/readyz", **ADMIN).text == "ok"


def test_unknown_paths_get_upstream_not_found(server):
    api = server.get("/apis/nosuch.group/v1/things", **ADMIN)
    assert_status(api, 404, "NotFound", "the server could not find the requested resource", {})
    core = server.get("/api/v1/namespaces/default/nosuchthings", **ADMIN)
    assert core.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {},
                           "status": "Failure",
                           "message": "the server could not find the requested resource",
                           "reason": "NotFound", "details": {}, "code": 404}
    # Outside /api and /apis upstream answers Go's plain not-found text.
    other = server.get("/no/such/path", **ADMIN)
    assert (other.status_code, other.text) == (404, "404 page not found\n")
    assert other.headers["Content-Type"] == "text/plain; charset=utf-8"
    for method in ("POST", "PUT", "PATCH", "DELETE", "OPTIONS"):
        response = server.request(method, "/apis/nosuch.group/v1/things", **ADMIN)
        assert response.status_code == 404 and response.json()["reason"] == "NotFound"
    yaml_answer = server.get("/apis/nosuch.group/v1/things", **ADMIN,
                             headers={"Accept": "application/yaml"})
    assert yaml_answer.headers["Content-Type"] == "application/yaml"
    assert "reason: NotFound" in yaml_answer.text
    result = server.kubectl("get", "--raw", "/apis/nosuch.group/v1/things")
    assert "Error from server (NotFound): the server could not find the requested resource" \
        in result.stderr


def test_audit_backend_receives_events_with_both_identities(server):
    server.get(f"{BASE}/echoes/audited", **ADMIN, headers={"Impersonate-User": "jane",
                                                          "Audit-ID": "audit-probe-1"})
    deadline = time.monotonic() + 5
    event = None
    while event is None and time.monotonic() < deadline:
        with open(server.audit_file) as f:
            for line in f:
                candidate = json.loads(line)
                if candidate["auditID"] == "audit-probe-1":
                    event = candidate
        time.sleep(0.05)
    assert event["stage"] == "ResponseComplete" and event["verb"] == "get"
    assert event["user"]["username"] == "admin"
    assert event["impersonatedUser"]["username"] == "jane"
    assert event["objectRef"] == {"resource": "echoes", "namespace": "default",
                                  "name": "audited", "apiGroup": "probe.kapiserver.test",
                                  "apiVersion": "v1"}
    assert event["responseStatus"] == {"metadata": {}, "code": 200}


def audit_event(server, audit_id: str) -> dict | None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        with open(server.audit_file) as f:
            for line in f:
                candidate = json.loads(line)
                if candidate["auditID"] == audit_id:
                    return candidate
        time.sleep(0.05)
    return None


def test_audit_events_of_errors_carry_their_status(server):
    """A 4xx is a ResponseComplete event with the Status's fields (upstream's
    LogResponseObject); only a crash is a Panic."""
    missing = server.get("/api/v1/namespaces/default/configmaps/no-such-map", **ADMIN,
                         headers={"Audit-ID": "audit-probe-404"})
    assert missing.status_code == 404
    event = audit_event(server, "audit-probe-404")
    assert event["stage"] == "ResponseComplete", event
    assert event["responseStatus"] == {
        "metadata": {}, "status": "Failure",
        "message": 'configmaps "no-such-map" not found', "reason": "NotFound",
        "details": {"name": "no-such-map", "kind": "configmaps"}, "code": 404}
    unknown = server.get("/apis/nosuch.group/v1/things", **ADMIN,
                         headers={"Audit-ID": "audit-probe-unknown"})
    assert unknown.status_code == 404
    event = audit_event(server, "audit-probe-unknown")
    assert (event["stage"], event["responseStatus"]["code"],
            event["responseStatus"]["reason"]) == ("ResponseComplete", 404, "NotFound")
    crashed = server.get(f"{BASE}/panics/x", **ADMIN, headers={"Audit-ID": "audit-probe-panic"})
    assert crashed.status_code == 500
    event = audit_event(server, "audit-probe-panic")
    assert (event["stage"], event["responseStatus"]) == ("Panic", {
        "metadata": {}, "status": "Failure", "message": "APIServer panic'd: probe panic",
        "reason": "InternalError", "code": 500})


def test_delegation_order_is_configurable(kapiserver_factory):
    server = kapiserver_factory(plugins=[PROBE], config={
        "delegation": ["probe-first", "aggregator", "kube", "apiextensions"]})
    response = server.get("/probe-delegate", **ADMIN)
    assert response.text == "served by probe-first\n"
    assert "delegation chain: probe-first → aggregator → kube → apiextensions" in server.log()
    # Without it in the chain, the path is not served.
    assert server.get(f"{BASE}/echoes/a", **ADMIN).status_code == 200


def test_without_kube_delegate_its_groups_are_a_config_error(kapiserver_factory):
    server = kapiserver_factory(plugins=[PROBE], config={"delegation": ["aggregator"]},
                                start=False)
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-m", "kapiserver", "serve", "--config",
                             server.config_file], capture_output=True, text=True,
                            env=server.env, timeout=60)
    assert result.returncode != 0
    assert "--delegation: API groups need delegate(s) apiextensions, kube " in result.stderr


def test_unknown_http_method_is_a_status_not_html(server):
    response = server.request("PROPFIND", "/api/v1/namespaces", **ADMIN)
    body = assert_status(response, 405, "MethodNotAllowed")
    assert "<" not in body["message"]
    assert response.headers["Audit-Id"] and response.headers["Cache-Control"]


def test_sigterm_while_workers_boot_exits_promptly(kapiserver_factory):
    import subprocess
    import sys

    server = kapiserver_factory(plugins=[PROBE], workers=2, start=False,
                                config={"probe-install-delay": 2})
    server._log = open(server.log_file, "ab")
    server.process = subprocess.Popen(
        [sys.executable, "-m", "kapiserver", "serve", "--config", server.config_file],
        stdout=server._log, stderr=subprocess.STDOUT, env=server.env, cwd=server.workdir)
    deadline = time.monotonic() + 20
    while "Booting worker" not in server.log() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # the workers are inside the 2 s install now
    started = time.monotonic()
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(15) == 0
    assert time.monotonic() - started < 8  # not the 10 s grace period of a stuck worker
    assert "Worker graceful timeout" not in server.log()
