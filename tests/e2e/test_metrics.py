"""/metrics end to end: one view of both workers, read by Prometheus' own parser."""

import time

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from kapiserver.testing import KapiserverProcess

ADMIN = {"user": "admin", "groups": ["system:masters"]}
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    process = KapiserverProcess(str(tmp_path_factory.mktemp("metrics")),
                                {"authorization-mode": "RBAC"}, workers=2)
    process.start(timeout=120)
    yield process
    process.stop()


def scrape(server, path="/metrics") -> dict:
    """{sample name: {frozenset(labels): value}}, as Prometheus' text parser reads them."""
    response = server.get(path, **ADMIN)
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"] == \
        "text/plain; version=0.0.4; charset=utf-8; escaping=values"
    samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples.setdefault(sample.name, {})[frozenset(sample.labels.items())] = sample.value
    return samples


def value(samples, metric, **labels) -> float:
    """The sum of ``metric``'s samples whose labels include ``labels``."""
    wanted = set(labels.items())
    return sum(v for k, v in samples.get(metric, {}).items() if wanted <= k)


def test_counters_move_by_exactly_the_requests_made(server):
    created = server.request("POST", CONFIGMAPS, **ADMIN,
                             json={"metadata": {"name": "counted"}, "data": {"a": "b"}})
    assert created.status_code == 201
    before = scrape(server)
    # A new connection each: gunicorn hands them to either worker.
    for _ in range(24):
        assert server.get(f"{CONFIGMAPS}/counted", **ADMIN).status_code == 200
    for _ in range(6):
        assert server.get(f"{CONFIGMAPS}/missing", **ADMIN).status_code == 404
    for _ in range(3):
        assert server.get(CONFIGMAPS, **ADMIN).status_code == 200
    for _ in range(2):  # not a resource served here: never counted, as upstream
        assert server.get("/apis/nosuch.example.com/v1/things", **ADMIN).status_code == 404
    after = scrape(server)
    get = dict(verb="GET", group="", version="v1", resource="configmaps", scope="resource",
               component="apiserver", dry_run="", subresource="")
    assert value(after, "apiserver_request_total", code="200", **get) - \
        value(before, "apiserver_request_total", code="200", **get) == 24
    assert value(after, "apiserver_request_total", code="404", **get) - \
        value(before, "apiserver_request_total", code="404", **get) == 6
    assert value(after, "apiserver_request_total", verb="LIST", scope="namespace",
                 resource="configmaps") - \
        value(before, "apiserver_request_total", verb="LIST", scope="namespace",
              resource="configmaps") == 3
    assert value(after, "apiserver_request_total", group="nosuch.example.com") == 0
    assert value(after, "apiserver_request_duration_seconds_count", **get) - \
        value(before, "apiserver_request_duration_seconds_count", **get) == 30
    assert value(after, "apiserver_response_sizes_count", verb="GET", resource="configmaps") - \
        value(before, "apiserver_response_sizes_count", verb="GET",
              resource="configmaps") == 30
    # 35 requests and the second scrape, all authenticated as "admin". (The text names
    # these counters without "_total", as upstream; the Python parser adds it.)
    assert value(after, "authentication_attempts_total", result="success") - \
        value(before, "authentication_attempts_total", result="success") == 36
    assert value(after, "authenticated_user_requests_total", username="admin") - \
        value(before, "authenticated_user_requests_total", username="admin") == 36
    assert value(after, "apiserver_storage_objects", resource="configmaps") >= 1
    assert set(after["apiserver_current_inflight_requests"]) == {
        frozenset({("request_kind", "readOnly")}), frozenset({("request_kind", "mutating")})}
    assert value(after, "process_cpu_seconds_total") > 0
    assert value(after, "process_resident_memory_bytes") > 0
    info, = after["kubernetes_build_info"]
    assert dict(info)["major"] == "1" and dict(info)["minor"] == "32"


def test_writes_admission_and_dry_run(server):
    before = scrape(server)
    for name, query in (("w1", ""), ("w2", "?dryRun=All")):
        response = server.request("POST", f"{CONFIGMAPS}{query}", **ADMIN,
                                  json={"metadata": {"name": name}})
        assert response.status_code == 201
    patched = server.request("PATCH", f"{CONFIGMAPS}/w1?fieldManager=t", **ADMIN,
                             data='{"apiVersion":"v1","kind":"ConfigMap",'
                                  '"metadata":{"name":"w1"},"data":{"x":"y"}}',
                             headers={"Content-Type": "application/apply-patch+yaml"})
    assert patched.status_code == 200
    assert server.request("DELETE", f"{CONFIGMAPS}/w1", **ADMIN).status_code == 200
    after = scrape(server)

    def moved(metric, **labels):
        return value(after, metric, **labels) - value(before, metric, **labels)

    assert moved("apiserver_request_total", verb="POST", dry_run="", code="201",
                 resource="configmaps", scope="resource") == 1
    assert moved("apiserver_request_total", verb="POST", dry_run="All", code="201") == 1
    assert moved("apiserver_request_total", verb="APPLY", code="200") == 1
    assert moved("apiserver_request_total", verb="DELETE", code="200",
                 resource="configmaps") == 1
    # Each write went through the admission chain: step and controller durations.
    assert moved("apiserver_admission_step_admission_duration_seconds_count", type="admit",
                 operation="CREATE", rejected="false") == 2
    assert moved("apiserver_admission_controller_admission_duration_seconds_count",
                 name="NamespaceLifecycle", type="admit", operation="CREATE") == 2


def test_a_watch_is_long_running_and_counted_when_it_ends(server):
    before = scrape(server)
    stream = server.get(f"{CONFIGMAPS}?watch=true&timeoutSeconds=3", **ADMIN, stream=True)
    assert stream.status_code == 200
    next(stream.iter_lines())  # the first ADDED event: the watch is established
    during = scrape(server)
    watch = dict(verb="WATCH", resource="configmaps", scope="namespace", version="v1")
    assert value(during, "apiserver_longrunning_requests", **watch) == 1
    assert value(during, "apiserver_request_total", **watch) == \
        value(before, "apiserver_request_total", **watch)
    for _ in stream.iter_lines():
        pass
    deadline = time.monotonic() + 10
    while True:
        after = scrape(server)
        if value(after, "apiserver_longrunning_requests", **watch) == 0 or \
                time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert value(after, "apiserver_longrunning_requests", **watch) == 0
    assert value(after, "apiserver_request_total", code="200", **watch) - \
        value(before, "apiserver_request_total", code="200", **watch) == 1
    assert value(after, "apiserver_watch_events_total", kind="ConfigMap", version="v1") > \
        value(before, "apiserver_watch_events_total", kind="ConfigMap", version="v1")


def test_metrics_are_authorized_as_a_non_resource_url(server):
    assert server.get("/metrics", user="viewer").status_code == 403
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "metrics-reader"},
            "rules": [{"nonResourceURLs": ["/metrics", "/metrics/slis"], "verbs": ["get"]}]}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": "metrics-reader"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                           "name": "metrics-reader"},
               "subjects": [{"kind": "User", "name": "viewer",
                             "apiGroup": "rbac.authorization.k8s.io"}]}
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    assert server.request("POST", f"{rbac}/clusterroles", json=role, **ADMIN).status_code == 201
    assert server.request("POST", f"{rbac}/clusterrolebindings", json=binding,
                          **ADMIN).status_code == 201
    deadline = time.monotonic() + 10
    while server.get("/metrics", user="viewer").status_code != 200:
        assert time.monotonic() < deadline, "the binding never took effect"
        time.sleep(0.2)
    gzipped = requests.get(server.url + "/metrics", cert=server.client_cert("viewer"),
                           verify=server.ca_file, headers={"Accept-Encoding": "gzip"})
    assert gzipped.headers["Content-Encoding"] == "gzip"
    assert "# TYPE apiserver_request_total counter" in gzipped.text
    result = server.kubectl("get", "--raw", "/metrics")
    assert result.returncode == 0 and "apiserver_request_duration_seconds_bucket" in \
        result.stdout


def test_health_check_slis(server):
    assert server.get("/livez", **ADMIN).status_code == 200
    slis = scrape(server, "/metrics/slis")
    assert value(slis, "kubernetes_healthcheck", name="ping", type="livez") == 1
    assert value(slis, "kubernetes_healthchecks_total", name="ping", type="livez",
                 status="success") >= 1
    assert "apiserver_request_total" not in slis
