"""API Priority and Fairness end to end: classification seen in the X-Kubernetes-PF-*
headers, users' own objects, a Reject level's 429, queuing, the exempt level, long-running
requests; and, with APF off, the max-in-flight limit counted across two workers."""

import glob
import json
import os
import threading
import time

import pytest

from kapiserver.testing import assert_status

ADMIN = dict(user="admin", groups=["system:masters"])
API = "/apis/flowcontrol.apiserver.k8s.io/v1"
PROBE = "tests.support.probe_plugin"
BASE = "/apis/probe.kapiserver.test/v1/namespaces/default"
FS_UID, PL_UID = "X-Kubernetes-PF-FlowSchema-UID", "X-Kubernetes-PF-PriorityLevel-UID"
TOO_MANY = "Too many requests, please try again later.\n"


def _uids(server, resource: str) -> dict:
    items = server.get(f"{API}/{resource}", **ADMIN).json()["items"]
    return {i["metadata"]["name"]: i["metadata"]["uid"] for i in items}


def _classified(server, path: str, user: str, groups=()) -> tuple[str, str]:
    response = server.get(path, user=user, groups=list(groups))
    schemas, levels = server.schema_names, server.level_names
    return (schemas.get(response.headers.get(FS_UID), response.headers.get(FS_UID)),
            levels.get(response.headers.get(PL_UID), response.headers.get(PL_UID)))


def _refresh_names(server) -> None:
    server.schema_names = {uid: name for name, uid in _uids(server, "flowschemas").items()}
    server.level_names = {uid: name for name, uid in
                          _uids(server, "prioritylevelconfigurations").items()}


def _create(server, resource: str, obj: dict) -> dict:
    response = server.request("POST", f"{API}/{resource}", json=obj, **ADMIN)
    assert response.status_code == 201, response.text
    return response.json()


def _level(name: str, response: dict, shares: int = 1) -> dict:
    return {"apiVersion": "flowcontrol.apiserver.k8s.io/v1",
            "kind": "PriorityLevelConfiguration", "metadata": {"name": name},
            "spec": {"type": "Limited", "limited": {
                "nominalConcurrencyShares": shares, "lendablePercent": 0,
                "borrowingLimitPercent": 0, "limitResponse": response}}}


def _schema(name: str, level: str, users, precedence: int = 500) -> dict:
    return {"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
            "metadata": {"name": name},
            "spec": {"priorityLevelConfiguration": {"name": level},
                     "matchingPrecedence": precedence,
                     "distinguisherMethod": {"type": "ByUser"},
                     "rules": [{"subjects": [{"kind": "User", "user": {"name": u}}
                                             for u in users],
                                "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"],
                                                   "resources": ["*"], "clusterScope": True,
                                                   "namespaces": ["*"]}],
                                "nonResourceRules": [{"verbs": ["*"],
                                                      "nonResourceURLs": ["*"]}]}]}}


def _until(predicate, timeout: float = 10, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    server = KapiserverProcess(str(tmp_path_factory.mktemp("apf")), workers=1).start()
    _refresh_names(server)
    yield server
    server.stop()


@pytest.mark.parametrize("user, groups, path, expected", [
    ("admin", ["system:masters"], "/api/v1/namespaces", ("exempt", "exempt")),
    ("alice", [], "/api/v1/namespaces/default/configmaps", ("global-default", "global-default")),
    ("alice", [], "/healthz", ("probes", "exempt")),
    ("alice", [], "/readyz/ping", ("probes", "exempt")),
    ("system:serviceaccount:kube-system:job", ["system:serviceaccounts"],
     "/api/v1/namespaces/default/configmaps", ("kube-system-service-accounts", "workload-high")),
    ("system:serviceaccount:kube-system:job", ["system:serviceaccounts"],
     "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/x",
     ("system-leader-election", "leader-election")),
    ("system:serviceaccount:team:app", ["system:serviceaccounts"],
     "/api/v1/namespaces/team/configmaps", ("service-accounts", "workload-low")),
    ("system:kube-scheduler", [], "/api/v1/pods", ("kube-scheduler", "workload-high")),
    ("system:kube-controller-manager", [], "/api/v1/namespaces/default/endpoints/x",
     ("endpoint-controller", "workload-high")),
    ("system:node:n1", ["system:nodes"], "/api/v1/nodes/n1", ("system-node-high", "node-high")),
    ("system:node:n1", ["system:nodes"], "/api/v1/namespaces/default/configmaps",
     ("system-nodes", "system")),
])
def test_requests_are_classified_by_the_bootstrap_flow_schemas(api, user, groups, path,
                                                               expected):
    assert _classified(api, path, user, groups) == expected


def test_users_own_flow_schemas_are_honoured_and_dangling_ones_skipped(api):
    _create(api, "prioritylevelconfigurations", _level("team-level", {
        "type": "Queue", "queuing": {"queues": 4, "handSize": 2, "queueLengthLimit": 10}}, 5))
    _create(api, "flowschemas", _schema("carol", "team-level", ["carol"]))
    _create(api, "flowschemas", _schema("lost", "no-such-level", ["dan"], precedence=400))
    _refresh_names(api)
    path = "/api/v1/namespaces/default/configmaps"
    _until(lambda: _classified(api, path, "carol") == ("carol", "team-level"),
           what="carol's own FlowSchema to apply")
    # A FlowSchema naming a missing level is dangling: skipped, and marked so.
    assert _classified(api, path, "dan") == ("global-default", "global-default")
    condition = _until(lambda: next((c for c in (api.get(f"{API}/flowschemas/lost", **ADMIN)
                                                 .json().get("status") or {})
                                     .get("conditions") or () if c["status"] == "True"), None),
                       what="the Dangling condition")
    assert condition["type"] == "Dangling" and condition["reason"] == "NotFound"
    assert condition["message"] == ('This FlowSchema references the PriorityLevelConfiguration '
                                     'object named "no-such-level" but there is no such object')
    rows = {r.split()[0]: r.split() for r in
            api.kubectl("get", "flowschemas", check=True).stdout.splitlines()[1:]}
    assert rows["lost"][-1] == "True" and rows["carol"][-1] == "False"
    # Once the level exists, the schema applies.
    _create(api, "prioritylevelconfigurations", _level("no-such-level", {"type": "Reject"}))
    _refresh_names(api)
    _until(lambda: _classified(api, path, "dan") == ("lost", "no-such-level"),
           what="the no longer dangling FlowSchema to apply")


def test_suggested_objects_are_restored_unless_auto_update_is_off(api):
    spec = api.get(f"{API}/prioritylevelconfigurations/workload-low", **ADMIN).json()["spec"]
    for name, auto in (("workload-low", "true"), ("workload-high", "false")):
        response = api.request("PATCH", f"{API}/prioritylevelconfigurations/{name}", json={
            "metadata": {"annotations": {"apf.kubernetes.io/autoupdate-spec": auto}},
            "spec": {"limited": {"nominalConcurrencyShares": 7}}},
            headers={"Content-Type": "application/merge-patch+json"}, **ADMIN)
        assert response.status_code == 200
    # A deleted mandatory object comes back too; the producer checks every minute, and a
    # restart checks at once.
    api.stop()
    api.start()
    low = api.get(f"{API}/prioritylevelconfigurations/workload-low", **ADMIN).json()
    high = api.get(f"{API}/prioritylevelconfigurations/workload-high", **ADMIN).json()
    assert low["spec"] == spec
    assert high["spec"]["limited"]["nominalConcurrencyShares"] == 7
    _refresh_names(api)


@pytest.fixture
def small(kapiserver_factory):
    """One worker with 4 seats in all: a Reject level of 1 seat for dave, a queuing level
    of 1 seat (one queue) for erin and frank."""
    server = kapiserver_factory(plugins=[PROBE], start=False, config={
        "max-requests-inflight": 2, "max-mutating-requests-inflight": 2}).start(timeout=90)
    _create(server, "prioritylevelconfigurations", _level("tight", {"type": "Reject"}))
    _create(server, "prioritylevelconfigurations", _level("narrow", {
        "type": "Queue", "queuing": {"queues": 1, "handSize": 1, "queueLengthLimit": 5}}))
    _create(server, "flowschemas", _schema("tight", "tight", ["dave"]))
    _create(server, "flowschemas", _schema("narrow", "narrow", ["erin", "frank"]))
    _refresh_names(server)
    for user, level in (("dave", "tight"), ("erin", "narrow")):
        _until(lambda: _classified(server, f"{BASE}/echoes/a", user)[1] == level,
               what=f"{user}'s FlowSchema")
    return server


def _hold(server, user: str, results: dict, key: str, seconds: int = 20):
    thread = threading.Thread(target=lambda: results.__setitem__(key, server.get(
        f"{BASE}/blocks/{key}?seconds={seconds}", user=user, timeout=60)))
    thread.start()
    return thread


def _requests(server) -> list[list[str]]:
    text = server.get("/debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1",
                      **ADMIN).text
    return [[cell.strip() for cell in line.split(",")] for line in text.splitlines()[1:]]


def _levels(server) -> dict:
    text = server.get("/debug/api_priority_and_fairness/dump_priority_levels", **ADMIN).text
    rows = [[cell.strip() for cell in line.split(",")] for line in text.splitlines()]
    return {row[0]: dict(zip(rows[0], row)) for row in rows[1:]}


def test_a_reject_level_answers_429_when_its_seats_are_taken(small):
    results = {}
    holder = _hold(small, "dave", results, "d")
    _until(lambda: any(r[0] == "tight" and r[10] == "dave" for r in _requests(small)),
           what="dave's request to execute")
    refused = small.get(f"{BASE}/echoes/a", user="dave")
    assert refused.status_code == 429
    assert refused.text == TOO_MANY
    assert refused.headers["Retry-After"] == "1"
    uids = _uids(small, "flowschemas")
    assert refused.headers[FS_UID] == uids["tight"]
    assert refused.headers[PL_UID] == _uids(small, "prioritylevelconfigurations")["tight"]
    assert _levels(small)["tight"]["RejectedRequests"] == "1"
    # Others are not affected.
    assert small.get(f"{BASE}/echoes/a", user="alice").status_code == 200
    small.get(f"{BASE}/releases/d", **ADMIN)
    holder.join(30)
    assert results["d"].status_code == 200 and results["d"].json() == {"released": True}
    assert small.get(f"{BASE}/echoes/a", user="dave").status_code == 200
    metrics = small.get("/metrics", **ADMIN).text
    assert 'apiserver_flowcontrol_rejected_requests_total{flow_schema="tight",' \
           'priority_level="tight",reason="concurrency-limit"} 1' in metrics


def test_a_queuing_level_queues_and_serves_in_turn_and_exempt_is_never_queued(small):
    results = {}
    holder = _hold(small, "erin", results, "e")
    _until(lambda: any(r[0] == "narrow" and r[10] == "erin" for r in _requests(small)),
           what="erin's request to execute")
    started = time.monotonic()
    waiter = threading.Thread(target=lambda: results.__setitem__(
        "f", small.get(f"{BASE}/echoes/f", user="frank", timeout=60)))
    waiter.start()
    queued = _until(lambda: [r for r in _requests(small) if r[10] == "frank"],
                    what="frank's request to be queued")
    # Waiting: queue 0, first in it, not started.
    assert queued[0][:4] == ["narrow", "narrow", "0", "0"]
    # One queue: no flow distinguisher is computed (upstream needs more than one).
    assert queued[0][4] == "" and queued[0][9] == "0001-01-01T00:00:00Z"
    levels = _levels(small)
    assert (levels["narrow"]["WaitingRequests"], levels["narrow"]["ExecutingRequests"],
            levels["narrow"]["ActiveQueues"]) == ("1", "1", "1")
    queues = small.get("/debug/api_priority_and_fairness/dump_queues", **ADMIN).text
    assert any(line.replace(" ", "").startswith("narrow,0,1,1,1,")
               for line in queues.splitlines())
    metrics = small.get("/metrics", **ADMIN).text
    assert 'apiserver_flowcontrol_current_inqueue_requests{flow_schema="narrow",' \
           'priority_level="narrow"} 1' in metrics
    # Meanwhile exempt requests (system:masters) are served at once.
    answered = time.monotonic()
    assert small.get(f"{BASE}/echoes/a", **ADMIN).status_code == 200
    assert time.monotonic() - answered < 2
    assert _levels(small)["exempt"]["WaitingRequests"] == "0"
    assert not waiter.join(0.5) and "f" not in results  # frank still waits for erin
    small.get(f"{BASE}/releases/e", **ADMIN)
    holder.join(30)
    waiter.join(30)
    assert results["f"].status_code == 200
    assert results["f"].headers[FS_UID] == _uids(small, "flowschemas")["narrow"]
    assert time.monotonic() - started > 0.5
    metrics = small.get("/metrics", **ADMIN).text
    assert 'apiserver_flowcontrol_request_wait_duration_seconds_count{execute="true",' \
           'flow_schema="narrow",priority_level="narrow"} 1' in metrics
    assert _levels(small)["narrow"]["WaitingRequests"] == "0"
    # The timing ratio histograms counted the time frank waited (flushed every second).
    _until(lambda: _histogram_sum(small, "apiserver_flowcontrol_read_vs_write_current_requests",
                                  'phase="waiting",request_kind="readOnly"') > 0,
           what="the waiting read-only time to be counted")
    assert _histogram_sum(small, "apiserver_flowcontrol_priority_level_request_utilization",
                          'phase="waiting",priority_level="narrow"') > 0


def test_a_request_holds_its_seat_until_its_answer_is_written(small):
    # erin's answer is larger than the socket buffers: unread, it cannot be written.
    size = 48 << 20
    with small.get(f"{BASE}/echoes/big?size={size}", user="erin", stream=True,
                   timeout=60) as big:
        assert big.status_code == 200
        chunks = big.iter_content(1 << 16)
        next(chunks)
        time.sleep(0.5)
        assert _levels(small)["narrow"]["ExecutingRequests"] == "1"
        waiter = threading.Thread(target=lambda: results.__setitem__(
            "f", small.get(f"{BASE}/echoes/f", user="frank", timeout=60)))
        results = {}
        waiter.start()
        queued = _until(lambda: [r for r in _requests(small) if r[10] == "frank"],
                        what="frank's request to be queued")
        assert queued[0][:2] == ["narrow", "narrow"]
        assert not waiter.join(0.5) and "f" not in results
        received = sum(map(len, chunks)) + (1 << 16)
    assert received >= size
    waiter.join(30)
    assert results["f"].status_code == 200
    _until(lambda: _levels(small)["narrow"]["ExecutingRequests"] == "0",
           what="the seats to be given back")


def _histogram_sum(server, family: str, labels: str) -> float:
    for line in server.get("/metrics", **ADMIN).text.splitlines():
        if line.startswith(f"{family}_sum{{{labels}}}"):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_exempt_requests_are_never_queued(small):
    results = {}
    holders = [threading.Thread(target=lambda i=i: results.__setitem__(i, small.get(
        f"{BASE}/blocks/a{i}?seconds=20", **ADMIN, timeout=60))) for i in range(8)]
    for thread in holders:
        thread.start()
    # Eight exempt requests execute at once on a server of 4 seats; a ninth is answered.
    _until(lambda: _levels(small)["exempt"]["ExecutingRequests"] == "9",
           what="eight exempt requests to execute")
    assert _levels(small)["exempt"]["WaitingRequests"] == "0"
    assert small.get(f"{BASE}/echoes/a", **ADMIN).status_code == 200
    small.get(f"{BASE}/releases/a", **ADMIN)
    for thread in holders:
        thread.join(30)
    assert all(results[i].status_code == 200 for i in range(8))


def test_long_running_requests_hold_no_seat(small):
    # A watch takes its level's seat only while it starts; an open stream holds none.
    with small.get(f"{BASE}/streams?watch=true", user="erin", stream=True, timeout=30) as watch:
        assert watch.status_code == 200
        assert watch.headers[FS_UID] == _uids(small, "flowschemas")["narrow"]
        next(watch.iter_lines())
        served = small.get(f"{BASE}/echoes/a", user="erin", timeout=10)
        assert served.status_code == 200
        assert _levels(small)["narrow"]["ExecutingRequests"] == "0"
    # Other long-running requests (logs, exec, proxy) are not classified at all.
    logs = small.get("/api/v1/namespaces/default/pods/nothing/log", user="erin")
    assert logs.status_code == 404 and FS_UID not in logs.headers


def _dropped_by_worker(data_dir: str) -> dict:
    """429s of apiserver_request_total in each worker's own metrics file."""
    from prometheus_client.mmap_dict import MmapedDict

    counts = {}
    for path in glob.glob(os.path.join(data_dir, "metrics", "counter_*.db")):
        pid = path.rsplit("_", 1)[1][:-3]
        mapped = MmapedDict(path, read_mode=True)
        try:
            for key, value, _ in mapped.read_all_values():
                name, _, labels, _ = json.loads(key)
                if name == "apiserver_request_total" and labels.get("code") == "429":
                    counts[pid] = counts.get(pid, 0) + value
        finally:
            mapped.close()
    return counts


def test_max_in_flight_without_apf_is_the_servers_total_across_workers(kapiserver_factory):
    server = kapiserver_factory(plugins=[PROBE], workers=2, start=False, config={
        "enable-priority-and-fairness": False, "max-requests-inflight": 1}).start(timeout=90)
    results = {}
    holder = _hold(server, "alice", results, "z", seconds=10)
    time.sleep(0.5)
    refused = []
    # Each attempt on a new connection: whichever worker takes it, the one request in
    # flight (in one of them) is the server's whole allowance.
    for _ in range(60):
        refused.append(server.get(f"{BASE}/echoes/a", user="alice").status_code)
        if len(refused) >= 10 and len(_dropped_by_worker(server.data_dir)) == 2:
            break
    assert set(refused) == {429}, refused
    assert len(_dropped_by_worker(server.data_dir)) == 2  # both workers refused
    assert server.get(f"{BASE}/echoes/a", **ADMIN).status_code == 200
    assert server.get("/debug/api_priority_and_fairness/dump_priority_levels",
                      **ADMIN).status_code == 404
    holder.join(30)
    assert results["z"].status_code == 200
    # The finished request no longer counts, in either worker.
    assert {server.get(f"{BASE}/echoes/a", user="alice").status_code
            for _ in range(6)} == {200}
    assert_status(server.get("/api/v1/namespaces/nope", user="alice"), 404, "NotFound")
