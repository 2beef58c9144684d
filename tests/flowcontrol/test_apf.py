"""API Priority and Fairness without a server: bootstrap objects, matching, the seats of
each level (against kube-apiserver's metrics), fair queuing, Reject, Retry-After, dumps."""

import json
import pathlib
import re

import pytest

from kapiserver.authentication import UserInfo
from kapiserver.endpoints.request_info import new_request_info
from kapiserver.flowcontrol import bootstrap, debug
from kapiserver.flowcontrol.allocation import Item, compute_allocation
from kapiserver.flowcontrol.controller import DroppedRequests, FlowControl
from kapiserver.flowcontrol.fairqueuing import EXECUTE, Dealer, QueueSet, WorkEstimate
from kapiserver.flowcontrol.matching import hash_flow, matches

WIDE = pathlib.Path(__file__).resolve().parents[3] / "shared" / "reference" / "wide"
AT_START = "at-start_apis_flowcontrol.apiserver.k8s.io_v1_{}.json"
needs_reference = pytest.mark.skipif(not WIDE.is_dir(), reason="reference transcripts absent")


def _stored(resource: str) -> dict:
    body = json.loads((WIDE / AT_START.format(resource)).read_text())["response"]["body"]
    return {item["metadata"]["name"]: item for item in body["items"]}


def _objects(kind: str, specs: dict) -> list:
    return [{"metadata": {"name": name, "uid": f"uid-{name}"}, "kind": kind, "spec": spec}
            for name, spec in specs.items()]


def _bootstrapped(limit: int = 600, **kwargs) -> FlowControl:
    control = FlowControl(limit, event_factory=FakeEvent, **kwargs)
    control.apply_config(
        _objects("PriorityLevelConfiguration", {**bootstrap.MANDATORY_PRIORITY_LEVELS,
                                                **bootstrap.SUGGESTED_PRIORITY_LEVELS}),
        _objects("FlowSchema", {**bootstrap.MANDATORY_FLOW_SCHEMAS,
                                **bootstrap.SUGGESTED_FLOW_SCHEMAS}))
    return control


class FakeEvent:
    """An event nobody blocks on (the queue set is driven step by step)."""

    def __init__(self):
        self.flag = False

    def set(self):
        self.flag = True

    def wait(self, timeout=None):
        return self.flag


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@needs_reference
@pytest.mark.parametrize("resource, specs", [
    ("flowschemas", {**bootstrap.MANDATORY_FLOW_SCHEMAS, **bootstrap.SUGGESTED_FLOW_SCHEMAS}),
    ("prioritylevelconfigurations", {**bootstrap.MANDATORY_PRIORITY_LEVELS,
                                     **bootstrap.SUGGESTED_PRIORITY_LEVELS}),
])
def test_bootstrap_objects_are_kube_apiservers(resource, specs):
    stored = _stored(resource)
    assert {name: obj["spec"] for name, obj in stored.items()} == specs
    assert {obj["metadata"]["annotations"][bootstrap.AUTO_UPDATE_ANNOTATION]
            for obj in stored.values()} == {"true"}


def _info(method: str, path: str, query: str = ""):
    from werkzeug.datastructures import MultiDict
    from urllib.parse import parse_qsl

    return new_request_info(method, path, MultiDict(parse_qsl(query)))


@pytest.mark.parametrize("user, groups, method, path, schema", [
    ("admin", ("system:masters",), "DELETE", "/api/v1/namespaces/x", "exempt"),
    ("alice", ("system:authenticated",), "GET", "/livez/ping", "probes"),
    ("alice", ("system:authenticated",), "POST", "/healthz", "global-default"),
    ("alice", ("system:authenticated",), "GET", "/api/v1/pods", "global-default"),
    ("system:anonymous", ("system:unauthenticated",), "GET", "/version", "global-default"),
    ("bob", (), "GET", "/version", "catch-all"),
    ("system:serviceaccount:kube-system:a", ("system:serviceaccounts",), "PUT",
     "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l", "system-leader-election"),
    ("system:serviceaccount:kube-system:a", ("system:serviceaccounts",), "DELETE",
     "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l",
     "kube-system-service-accounts"),
    ("system:serviceaccount:kube-systemx:a", ("system:serviceaccounts",), "GET",
     "/api/v1/pods", "service-accounts"),
    ("system:serviceaccount:kube-system:endpoint-controller", (), "PUT",
     "/api/v1/namespaces/a/endpoints/e", "endpoint-controller"),
    ("system:node:n", ("system:nodes",), "PATCH", "/api/v1/nodes/n/status", "system-node-high"),
    ("system:node:n", ("system:nodes",), "GET", "/api/v1/namespaces/a/pods", "system-nodes"),
])
def test_requests_match_the_first_flow_schema_in_matching_order(user, groups, method, path,
                                                                 schema):
    control = _bootstrapped()
    found, _ = control.classify(UserInfo(user, groups=groups), _info(method, path))
    assert found.name == schema


def test_cluster_scope_and_namespaces_of_resource_rules():
    spec = {"rules": [{"subjects": [{"kind": "User", "user": {"name": "u"}}],
                       "resourceRules": [{"verbs": ["list"], "apiGroups": ["apps"],
                                          "resources": ["deployments/scale"],
                                          "namespaces": ["team"]}]}]}
    user = UserInfo("u")
    assert matches(spec, user, _info("GET", "/apis/apps/v1/namespaces/team/deployments/d/scale"))\
        is False  # verb get, not list
    spec["rules"][0]["resourceRules"][0]["verbs"] = ["get"]
    assert matches(spec, user, _info("GET", "/apis/apps/v1/namespaces/team/deployments/d/scale"))
    assert not matches(spec, user, _info("GET", "/apis/apps/v1/namespaces/b/deployments/d/scale"))
    assert not matches(spec, user, _info("GET", "/apis/apps/v1/deployments"))  # not cluster-scoped
    assert not matches(spec, UserInfo("v"), _info("GET",
                                                  "/apis/apps/v1/namespaces/team/deployments/d/scale"))


def test_shuffle_sharding_deals_distinct_queues_from_the_hash():
    dealer = Dealer(128, 6)
    hand = dealer.deal(hash_flow("global-default", "alice"))
    assert len(set(hand)) == 6 and all(0 <= card < 128 for card in hand)
    assert dealer.deal(hash_flow("global-default", "alice")) == hand
    assert dealer.deal(hash_flow("global-default", "bob")) != hand
    with pytest.raises(ValueError, match="required entropy bits"):
        Dealer(1 << 20, 4)


def _metric(name: str) -> dict:
    text = json.loads((WIDE / "metrics.json").read_text())["response"]["body"]
    pattern = re.compile(rf'^{name}{{priority_level="([^"]+)"}} (\S+)$', re.M)
    return {level: int(float(value)) for level, value in pattern.findall(text)}


@needs_reference
def test_seats_of_each_level_are_kube_apiservers_for_600():
    control = _bootstrapped(600)
    levels = control.levels
    assert {n: s.nominal for n, s in levels.items()} == \
        _metric("apiserver_flowcontrol_nominal_limit_seats")
    assert {n: s.min for n, s in levels.items()} == \
        _metric("apiserver_flowcontrol_lower_limit_seats")
    assert {n: s.max for n, s in levels.items()} == \
        _metric("apiserver_flowcontrol_upper_limit_seats")
    # Idle levels share the seats in proportion to their floors (the captured server was
    # idle but for the exempt level).
    assert {n: s.current for n, s in levels.items()} == \
        _metric("apiserver_flowcontrol_current_limit_seats")


def test_allocation_respects_bounds_and_adds_up():
    allocations, fair = compute_allocation(10, [Item(1, 1, 10), Item(5, 0, 10), Item(1, 1, 10)])
    assert allocations == pytest.approx([10 / 7, 50 / 7, 10 / 7]) and fair == pytest.approx(10 / 7)
    # The first level may not take its fair share (4 × fair): the others share the rest.
    allocations, fair = compute_allocation(10, [Item(4, 1, 2), Item(5, 0, 10), Item(1, 1, 10)])
    assert sum(allocations) == pytest.approx(10)
    assert allocations[0] == 2 and allocations[1] == pytest.approx(5 * fair)
    assert fair == pytest.approx(8 / 6)
    with pytest.raises(ValueError):
        compute_allocation(10, [Item(1, 1, 2)])


def _queue_set(limit: int, queues: int = 8, length: int = 5, hand: int = 2):
    clock = Clock()
    qs = QueueSet("test", clock, event_factory=FakeEvent)
    qs.configure(queues, length, hand, limit)
    return qs, clock


def test_a_light_flow_is_served_before_a_flood_that_queued_first():
    qs, clock = _queue_set(1)
    busy, _ = qs.start_request(WorkEstimate(1), hash_flow("s", "x"), "x", "s")
    assert busy.decision == EXECUTE
    flood = [qs.start_request(WorkEstimate(1), hash_flow("s", "flood"), "flood", "s")[0]
             for _ in range(4)]
    light, _ = qs.start_request(WorkEstimate(1), hash_flow("s", "light"), "light", "s")
    assert all(r.decision is None for r in flood + [light])
    clock.now += 0.1
    qs.finish(busy)
    # The flood's queue has work dispatched ahead of it in virtual time; the light one not.
    served = [r for r in flood + [light] if r.decision == EXECUTE]
    assert len(served) == 1
    first = served[0]
    clock.now += 0.1
    qs.finish(first)
    second = [r for r in flood + [light] if r.decision == EXECUTE and r is not first]
    assert light in (first, second[0])
    assert qs.waiting == 3 and qs.executing == 1


def test_queue_full_concurrency_limit_and_time_out_rejections():
    qs, clock = _queue_set(1, queues=1, length=2, hand=1)
    qs.start_request(WorkEstimate(1), 0, "", "s")
    waiting = [qs.start_request(WorkEstimate(1), 0, "", "s")[0] for _ in range(2)]
    assert qs.start_request(WorkEstimate(1), 0, "", "s") == (None, "queue-full")
    assert qs.wait(waiting[0], 0) is False  # its time is up
    assert (qs.waiting, qs.rejected, qs.cancelled) == (1, 2, 1)
    reject, _ = _queue_set(2, queues=0)
    assert reject.start_request(WorkEstimate(2), 0, "", "s")[0].decision == EXECUTE
    assert reject.start_request(WorkEstimate(1), 0, "", "s") == (None, "concurrency-limit")
    exempt, _ = _queue_set(0, queues=-1)
    assert all(exempt.start_request(WorkEstimate(1), 0, "", "s")[0].decision == EXECUTE
               for _ in range(50))


def test_a_list_takes_one_seat_per_100_objects_up_to_its_levels_maximum():
    from kapiserver.flowcontrol.estimate import WorkEstimator

    class Counts:
        def get(self, group, resource):
            return {"configmaps": 1000, "secrets": 150}.get(resource)

    control = _bootstrapped(600)
    estimate = WorkEstimator(Counts())
    level = control.levels["global-default"]
    assert level.max_seats == 8  # min(ceil(49 × 15 %), 49 // 6)
    seats = [estimate(_info("GET", path, query),
                      dict(kv.split("=") for kv in query.split("&") if kv), level).initial_seats
             for query, path in [("", "/api/v1/configmaps"), ("x=1", "/api/v1/secrets"),
                                 ("limit=10&continue=abc", "/api/v1/secrets"),
                                 ("", "/api/v1/pods"), ("", "/api/v1/namespaces/a/configmaps/c")]]
    # 1,000 objects: 10 seats, capped at 8; 150: 2; a continued page of 10 reads 20; an
    # uncounted resource and a GET: 1.
    assert seats == [8, 2, 1, 1, 1]


def test_retry_after_grows_while_requests_keep_being_rejected():
    now = [100.0]
    tracker = DroppedRequests(clock=lambda: now[0])
    assert tracker.retry_after("l") == 1
    for second in range(6):
        for _ in range(10):
            tracker.record("l")
        now[0] += 1
    assert tracker.retry_after("l") > 1
    for _ in range(40):  # then rarely: it comes back down a second at a time
        now[0] += 10
        tracker.record("l")
    assert tracker.retry_after("l") == 1


@needs_reference
def test_dump_priority_levels_is_laid_out_as_upstreams():
    expected = json.loads((WIDE / "debug-apf-priority-levels.json").read_text())
    control = _bootstrapped()
    totals = {name: (0, 0, 0, 0, 0, 0) for name in control.levels}
    totals["exempt"] = (0, 1, 616, 0, 0, 0)
    assert debug.priority_levels(control.levels, totals) == expected["response"]["body"]
