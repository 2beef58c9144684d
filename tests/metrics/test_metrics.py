"""Metrics: values of several workers summed, the text format Prometheus reads, labels."""

from types import SimpleNamespace

import pytest
from prometheus_client.parser import text_string_to_metric_families
from werkzeug.datastructures import MultiDict

from kapiserver.metrics import Metrics, WatchTally, exposition, families
from kapiserver.metrics.request import (clean_dry_run, clean_scope, compress_username,
                                        non_resource_label, reported_verb)
from kapiserver.metrics.store import Registry, mark_process_dead, prepare_directory


def parse(text: str) -> dict:
    """{sample name: {frozenset(labels): value}} as Prometheus' own parser reads it."""
    samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples.setdefault(sample.name, {})[frozenset(sample.labels.items())] = sample.value
    return samples


@pytest.fixture
def directory(tmp_path):
    path = str(tmp_path / "metrics")
    prepare_directory(path)
    return path


def test_two_workers_values_are_summed(directory):
    first, second = Registry(directory, pid=101), Registry(directory, pid=102)
    for registry, count in ((first, 3), (second, 4)):
        total = registry.vector(families.REQUEST_TOTAL)
        for _ in range(count):
            total.labels("GET", "", "", "v1", "pods", "", "resource", "apiserver", "200").inc()
        registry.vector(families.REQUEST_DURATION).labels(
            "GET", "", "", "v1", "pods", "", "resource", "apiserver").observe(0.03)
        registry.vector(families.LONGRUNNING).labels(
            "WATCH", "", "v1", "pods", "", "cluster", "apiserver").inc()
    text = exposition.render(first.collect()).decode()
    samples = parse(text)
    labels = frozenset({"verb": "GET", "dry_run": "", "group": "", "version": "v1",
                        "resource": "pods", "subresource": "", "scope": "resource",
                        "component": "apiserver", "code": "200"}.items())
    assert samples["apiserver_request_total"][labels] == 7
    buckets = {dict(k)["le"]: v for k, v in
               samples["apiserver_request_duration_seconds_bucket"].items()}
    assert buckets["0.025"] == 0 and buckets["0.05"] == 2 and buckets["+Inf"] == 2
    assert list(samples["apiserver_request_duration_seconds_count"].values()) == [2]
    assert list(samples["apiserver_longrunning_requests"].values()) == [2]
    # A worker that ended: its counters stay in the totals, its live gauges go.
    mark_process_dead(directory, 102)
    samples = parse(exposition.render(first.collect()).decode())
    assert samples["apiserver_request_total"][labels] == 7
    assert list(samples["apiserver_longrunning_requests"].values()) == [1]


def test_text_is_upstreams(directory):
    registry = Registry(directory, pid=1)
    registry.vector(families.AUTHENTICATION_ATTEMPTS).labels("success").inc(585)
    registry.vector(families.AUDIT_EVENTS)
    registry.vector(families.RESPONSE_SIZES).labels(
        "LIST", "", "v1", "pods", "", "cluster", "apiserver").observe(2500)
    text = exposition.render(registry.collect()).decode()
    assert ("# HELP authentication_attempts [ALPHA] Counter of authenticated attempts.\n"
            "# TYPE authentication_attempts counter\n"
            'authentication_attempts{result="success"} 585\n') in text
    assert "apiserver_audit_event_total 0\n" in text  # a label-less family shows its 0
    assert ('apiserver_response_sizes_bucket{component="apiserver",group="",resource="pods",'
            'scope="cluster",subresource="",verb="LIST",version="v1",le="1e+06"} 1\n') in text
    assert text.index('le="1000"') < text.index('le="10000"') < text.index('le="+Inf"')
    assert exposition.CONTENT_TYPE.startswith("text/plain; version=0.0.4")


def test_watch_tally_writes_when_flushed(directory):
    metrics = Metrics(directory)
    tally = WatchTally(metrics, "apps", "v1", "Deployment")
    for size in (100, 5000, 300000):
        tally.add(size)
    key = frozenset({"group": "apps", "version": "v1", "kind": "Deployment"}.items())
    assert parse(metrics.exposition().decode())["apiserver_watch_events_total"][key] == 0
    tally.flush()
    samples = parse(metrics.exposition().decode())
    assert samples["apiserver_watch_events_total"][key] == 3
    assert samples["apiserver_watch_events_sizes_sum"][key] == 305100
    metrics.close()


def test_private_metrics_of_a_server_outside_gunicorn(tmp_path, monkeypatch):
    monkeypatch.delenv("KAPISERVER_METRICS_DIR", raising=False)
    metrics = Metrics.for_data_dir(str(tmp_path))
    metrics.request_total.labels("GET", "", "", "", "", "/healthz", "", "", "200").inc()
    samples = parse(metrics.exposition().decode())
    assert sum(samples["apiserver_request_total"].values()) == 1
    assert samples["process_cpu_seconds_total"]
    directory = metrics.directory
    metrics.close()
    import os

    assert not os.path.exists(directory)


def info(**kwargs):
    values = dict(is_resource_request=True, verb="get", namespace="", name="", resource="pods",
                  subresource="", path="/api/v1/pods")
    values.update(kwargs)
    return SimpleNamespace(**values)


@pytest.mark.parametrize("method,request_info,content_type,verb,scope", [
    ("GET", info(name="a", namespace="ns"), "", "GET", "resource"),
    ("GET", info(verb="list", namespace="ns"), "", "LIST", "namespace"),
    ("GET", info(verb="list"), "", "LIST", "cluster"),
    ("GET", info(verb="watch", namespace="ns"), "", "WATCH", "namespace"),
    ("POST", info(verb="create", namespace="ns"), "application/json", "POST", "resource"),
    ("PATCH", info(verb="patch", name="a"), "application/apply-patch+yaml", "APPLY",
     "resource"),
    ("PATCH", info(verb="patch", name="a"), "application/merge-patch+json", "PATCH",
     "resource"),
    ("DELETE", info(verb="deletecollection", namespace="ns"), "", "DELETE", "namespace"),
    ("GET", info(name="p", namespace="ns", subresource="log"), "", "CONNECT", "resource"),
    ("POST", info(verb="create", name="p", namespace="ns", subresource="exec"), "",
     "CONNECT", "resource"),
    ("PROPFIND", info(verb="", name="p"), "", "other", "resource"),
    ("GET", info(is_resource_request=False, verb="get", resource="", path="/readyz"), "",
     "GET", ""),
])
def test_verbs_and_scopes_as_upstream_reports_them(method, request_info, content_type, verb,
                                                   scope):
    assert clean_scope(request_info) == scope
    assert reported_verb(method, request_info, {}, content_type, scope) == verb


def test_labels_of_dry_run_paths_and_users():
    assert clean_dry_run(b"", MultiDict()) == ""
    assert clean_dry_run(b"dryRun=All&dryRun=All", MultiDict([("dryRun", "All")] * 2)) == "All"
    assert clean_dry_run(b"dryRun=x", MultiDict([("dryRun", "x")])) == "invalid"
    assert non_resource_label("/readyz") == "/readyz"
    assert non_resource_label("/openapi/v3") == "openapi/v3"
    assert non_resource_label("/openapi/v3/apis/apps/v1") == "openapi/v3/"
    assert non_resource_label("/version") is None
    assert [compress_username(n) for n in ("admin", "jane@example.com", "alice",
                                           "system:serviceaccount:kube-system:default")] == \
        ["admin", "email_id", "other", "system:serviceaccount:kube-system:default"]
