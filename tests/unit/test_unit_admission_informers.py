"""Informers (``kapiserver.admission.informers``) over a real SQLite store and watch cache:
loaded once, then kept current by the cache's feed, read after the store's latest write."""

import pytest

from kapiserver.admission.informers import Informer, informers_for
from kapiserver_plugins.core.limitranges import LIMIT_RANGES, LimitRangeStrategy
from kapiserver_plugins.scheduling.priorityclasses import PRIORITY_CLASSES, PriorityClassStrategy
from tests.support.admission import AdmissionServer


@pytest.fixture
def server(tmp_path):
    s = AdmissionServer(str(tmp_path / "db.sqlite"), kinds=(
        (LIMIT_RANGES, LimitRangeStrategy), (PRIORITY_CLASSES, PriorityClassStrategy)))
    yield s
    s.close()


def limit_range(name):
    return {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": name},
            "spec": {"limits": [{"type": "Container", "default": {"cpu": "1"}}]}}


def priority_class(name, value):
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": name}, "value": value}


def names(objects):
    return [(o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in objects]


def test_one_informer_per_resource_and_server(server):
    informers = informers_for(server)
    assert informers_for(server) is informers
    assert informers.informer("", "limitranges") is informers.informer("", "limitranges")
    assert informers.informer("", "limitranges") is not \
        informers.informer("scheduling.k8s.io", "priorityclasses")


def test_reads_see_every_earlier_write(server):
    server.create("", "limitranges", limit_range("b"), "ns1")
    informer = Informer(server, "", "limitranges")
    assert names(informer.list("ns1")) == [("ns1", "b")]
    # Written after the informer loaded: the next read waits for the feed to bring them.
    server.create("", "limitranges", limit_range("a"), "ns1")
    server.create("", "limitranges", limit_range("c"), "ns2")
    assert names(informer.list("ns1")) == [("ns1", "a"), ("ns1", "b")]
    assert names(informer.list()) == [("ns1", "a"), ("ns1", "b"), ("ns2", "c")]
    assert informer.get("ns2", "c")["spec"]["limits"][0]["default"] == {"cpu": "1"}
    assert informer.get("ns2", "c")["metadata"]["resourceVersion"]
    server.registries[("", "limitranges")].delete("ns1", "b")
    assert names(informer.list("ns1")) == [("ns1", "a")]
    assert informer.get("ns1", "b") is None and informer.list("ns3") == []


def test_cluster_scoped_objects_and_updates(server):
    informer = Informer(server, "scheduling.k8s.io", "priorityclasses")
    assert informer.list() == []
    created = server.create("scheduling.k8s.io", "priorityclasses", priority_class("p", 5))
    assert informer.get("", "p")["value"] == 5
    created["value"] = 5
    created["description"] = "changed"
    server.registries[("scheduling.k8s.io", "priorityclasses")].update("", "p", created)
    assert informer.get("", "p")["description"] == "changed"


def test_a_closed_watch_is_followed_by_a_reload(server):
    informer = Informer(server, "", "limitranges")
    assert informer.list("ns") == []
    informer._watcher.close("the watch cache was compacted past its position")
    server.create("", "limitranges", limit_range("a"), "ns")
    assert names(informer.list("ns")) == [("ns", "a")]
    assert not informer._watcher.closed


def test_a_resource_this_server_does_not_serve_holds_nothing(server):
    informer = Informer(server, "example.com", "widgets")
    assert informer.list() == [] and informer.get("", "w") is None


def test_reads_in_one_request_ask_the_store_once(server, monkeypatch):
    from kapiserver.admission.informers import caught_up_once

    # Concurrent readers share looks at the store's revision (the read cache's barrier).
    barrier = server.watch_cache.reads.barrier
    asked = []
    current = barrier.probe
    monkeypatch.setattr(barrier, "probe", lambda: asked.append(1) or current())
    limits = Informer(server, "", "limitranges")
    classes = Informer(server, "scheduling.k8s.io", "priorityclasses")
    limits.list(), classes.list()  # loaded
    asked.clear()
    with caught_up_once():
        server.create("", "limitranges", limit_range("a"), "ns")  # before the first read
        assert names(limits.list("ns")) == [("ns", "a")]
        classes.list(), limits.get("ns", "a"), classes.get("", "x")
        assert len(asked) == 1
        # A read through the registry is consistent as of itself, not of the request: it
        # must see what the request wrote meanwhile (a quota retried after a conflict).
        assert server.registries[("", "limitranges")].get("ns", "a")["metadata"]["name"] == "a"
        assert len(asked) == 2
    asked.clear()
    limits.list(), classes.list()  # outside a request's scope: each read asks
    assert len(asked) == 2
    # The two admission phases of one request share their scope.
    asked.clear()
    request = set()
    with caught_up_once(request):
        limits.list()
    with caught_up_once(request):
        classes.list(), limits.get("ns", "a")
    assert len(asked) == 1
