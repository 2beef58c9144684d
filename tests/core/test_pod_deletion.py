"""Graceful deletion of pods, bindings and evictions against a real store (no HTTP)."""

import calendar
import time

import pytest

from kapiserver import errors
from kapiserver.registry.store import Preconditions, RegistryStore, encode
from kapiserver.storage.sqlite import SQLiteStore
from kapiserver_plugins.core.pods.binding import Binder
from kapiserver_plugins.core.pods.eviction import Evictor
from kapiserver_plugins.core.pods.registry import DeleteOptions, PodRegistry
from kapiserver_plugins.core.pods.strategy import PODS, PodStrategy
from kapiserver_plugins.policy.poddisruptionbudgets import PDBS, PodDisruptionBudgetStrategy


def seconds(timestamp: str) -> int:
    return calendar.timegm(time.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ"))


class Server:
    """What the eviction reads of a server: its registries."""

    def __init__(self, storage, pdbs: bool):
        self.registries = {}
        if pdbs:
            self.registries[("policy", "poddisruptionbudgets")] = RegistryStore(
                PDBS, PodDisruptionBudgetStrategy(PDBS), storage)


@pytest.fixture
def storage(tmp_path):
    return SQLiteStore(str(tmp_path / "db"))


@pytest.fixture
def pods(storage):
    return PodRegistry(PODS, PodStrategy(PODS), storage)


def put(pods, name="p", node="", phase="Pending", labels=None, ready=False, grace=30,
        finalizers=None):
    obj = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}",
                        "creationTimestamp": "2026-01-01T00:00:00Z",
                        "labels": labels or {"app": "web"}},
           "spec": {"containers": [{"name": "app", "image": "nginx"}],
                    "terminationGracePeriodSeconds": grace},
           "status": {"phase": phase, "qosClass": "BestEffort"}}
    if node:
        obj["spec"]["nodeName"] = node
    if ready:
        obj["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    if finalizers:
        obj["metadata"]["finalizers"] = finalizers
    pods.storage.create(PODS.key("ns", name), encode(obj))
    return pods.get("ns", name)


def test_an_unbound_pod_goes_at_once(pods):
    put(pods)
    obj, deleted = pods.delete("ns", "p", options=DeleteOptions())
    assert deleted
    # Upstream writes the deletion mark (grace 0) before removing the pod.
    assert obj["metadata"]["deletionGracePeriodSeconds"] == 0
    with pytest.raises(errors.NotFound):
        pods.get("ns", "p")


def test_a_bound_pod_stays_for_its_grace_period(pods):
    put(pods, node="n1", grace=30)
    before = time.time()
    obj, deleted = pods.delete("ns", "p", options=DeleteOptions())
    assert not deleted
    stored = pods.get("ns", "p")
    assert stored["metadata"]["deletionGracePeriodSeconds"] == 30
    assert abs(seconds(stored["metadata"]["deletionTimestamp"]) - (before + 30)) <= 2
    assert obj["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]
    # A longer or equal period changes nothing; none given keeps it too.
    for grace in (30, 60, None):
        again, deleted = pods.delete("ns", "p", options=DeleteOptions(grace))
        assert not deleted and again == stored
    # A shorter one moves the deletion earlier.
    shorter, deleted = pods.delete("ns", "p", options=DeleteOptions(10))
    assert not deleted and shorter["metadata"]["deletionGracePeriodSeconds"] == 10
    assert seconds(shorter["metadata"]["deletionTimestamp"]) == \
        seconds(stored["metadata"]["deletionTimestamp"]) - 20
    # Updates while the period runs keep the pod.
    shorter["metadata"]["labels"] = {"app": "other"}
    pods.storage.update(PODS.key("ns", "p"), encode(shorter),
                        int(shorter["metadata"]["resourceVersion"]))
    _, deleted = pods.delete("ns", "p", options=DeleteOptions(0))
    assert deleted
    with pytest.raises(errors.NotFound):
        pods.get("ns", "p")


def test_finished_pods_and_internal_callers_delete_at_once(pods):
    put(pods, "done", node="n1", phase="Succeeded")
    assert pods.delete("ns", "done", options=DeleteOptions())[1]
    put(pods, "internal", node="n1")
    assert pods.delete("ns", "internal")[1]  # no options: grace 0, as upstream's nil


def test_a_negative_grace_period_is_one_second(pods):
    put(pods, node="n1")
    obj, _ = pods.delete("ns", "p", options=DeleteOptions(-5))
    assert obj["metadata"]["deletionGracePeriodSeconds"] == 1


def test_finalizers_hold_a_pod_after_its_grace_period(pods):
    put(pods, finalizers=["example.com/hold"])
    obj, deleted = pods.delete("ns", "p", options=DeleteOptions())
    assert not deleted and obj["metadata"]["deletionGracePeriodSeconds"] == 0
    assert pods.get("ns", "p")["metadata"]["deletionTimestamp"]


def test_preconditions_and_dry_run(pods):
    put(pods, node="n1")
    with pytest.raises(errors.Conflict) as err:
        pods.delete("ns", "p", options=DeleteOptions(uid="other"))
    assert err.value.message == (
        'Operation cannot be fulfilled on Pod "p": the UID in the precondition (other) does '
        'not match the UID in record (uid-p). The object might have been deleted and then '
        'recreated')
    assert err.value.details == {"name": "p", "kind": "Pod"}
    obj, deleted = pods.delete("ns", "p", dry_run=True, options=DeleteOptions(0))
    assert deleted and obj["metadata"]["deletionGracePeriodSeconds"] == 0
    assert "deletionTimestamp" not in pods.get("ns", "p")["metadata"]


# -- binding ------------------------------------------------------------------------------------

def test_binding_sets_the_node_once(pods):
    put(pods)
    binder = Binder(pods)
    bound = binder.assign("ns", "p", "n1", {"a": "b"}, None, False)
    assert bound["spec"]["nodeName"] == "n1"
    assert bound["metadata"]["annotations"] == {"a": "b"}
    [condition] = pods.get("ns", "p")["status"]["conditions"]
    assert condition["type"] == "PodScheduled" and condition["status"] == "True"
    with pytest.raises(errors.Conflict) as err:
        binder.assign("ns", "p", "n2", {}, None, False)
    assert err.value.message == ('Operation cannot be fulfilled on pods/binding "p": pod p is '
                                 'already assigned to node "n1"')
    assert err.value.details == {"name": "p", "kind": "pods/binding"}
    with pytest.raises(errors.NotFound):
        binder.assign("ns", "missing", "n1", {}, None, False)


def test_binding_preconditions_and_deleted_pods(pods):
    put(pods, finalizers=["x"])
    binder = Binder(pods)
    with pytest.raises(errors.Conflict) as err:
        binder.assign("ns", "p", "n1", {}, Preconditions(uid="nope"), False)
    assert err.value.message == (
        'Operation cannot be fulfilled on pods "p": StorageError: invalid object, Code: 4, '
        'Key: /registry/pods/ns/p, ResourceVersion: 0, AdditionalErrorMsg: Precondition '
        'failed: UID in precondition: nope, UID in object meta: uid-p')
    pods.delete("ns", "p")
    with pytest.raises(errors.Conflict) as err:
        binder.assign("ns", "p", "n1", {}, None, False)
    assert err.value.message.endswith("pod p is being deleted, cannot be assigned to a host")


# -- eviction -----------------------------------------------------------------------------------

def evictor(pods, storage, pdbs=True):
    status = RegistryStore(PODS, PodStrategy(PODS).status_strategy(), storage)
    server = Server(storage, pdbs)
    return Evictor(server, pods, status), server


def put_pdb(server, name="budget", allowed=1, generation=1, observed=1, selector=None,
            **status):
    registry = server.registries[("policy", "poddisruptionbudgets")]
    obj = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
           "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}",
                        "generation": generation,
                        "creationTimestamp": "2026-01-01T00:00:00Z"},
           "spec": {"minAvailable": 1,
                    "selector": {"matchLabels": {"app": "web"}} if selector is None
                    else selector},
           "status": {"observedGeneration": observed, "disruptionsAllowed": allowed,
                      "currentHealthy": 2, "desiredHealthy": 1, "expectedPods": 2, **status}}
    registry.storage.create(PDBS.key("ns", name), encode(obj))


def test_evicting_a_pending_pod_marks_and_deletes_it(pods, storage, monkeypatch):
    put(pods)
    ev, _ = evictor(pods, storage)
    seen = []
    original = pods.delete

    def spy(*args, **kwargs):
        seen.append(pods.get("ns", "p"))
        return original(*args, **kwargs)

    monkeypatch.setattr(pods, "delete", spy)
    assert ev.evict("ns", "p", DeleteOptions(), False)["status"] == "Success"
    [condition] = seen[0]["status"]["conditions"]
    assert (condition["type"], condition["reason"], condition["message"]) == \
        ("DisruptionTarget", "EvictionByEvictionAPI", "Eviction API: evicting")
    with pytest.raises(errors.NotFound):
        pods.get("ns", "p")


def test_a_running_pod_spends_its_budget(pods, storage):
    put(pods, node="n1", phase="Running", ready=True)
    ev, server = evictor(pods, storage)
    put_pdb(server, allowed=1)
    assert ev.evict("ns", "p", DeleteOptions(0), False)["status"] == "Success"
    pdb = server.registries[("policy", "poddisruptionbudgets")].get("ns", "budget")
    assert pdb["status"]["disruptionsAllowed"] == 0
    assert set(pdb["status"]["disruptedPods"]) == {"p"}
    [condition] = pdb["status"]["conditions"]
    assert (condition["type"], condition["status"], condition["reason"]) == \
        ("DisruptionAllowed", "False", "InsufficientPods")
    with pytest.raises(errors.NotFound):
        pods.get("ns", "p")


def test_a_budget_that_allows_nothing_answers_too_many_requests(pods, storage):
    put(pods, node="n1", phase="Running", ready=True)
    ev, server = evictor(pods, storage)
    put_pdb(server, allowed=0)
    with pytest.raises(errors.TooManyRequests) as err:
        ev.evict("ns", "p", DeleteOptions(), False)
    assert err.value.to_status() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "Cannot evict pod as it would violate the pod's disruption budget.",
        "reason": "TooManyRequests",
        "details": {"causes": [{"reason": "DisruptionBudget",
                                "message": "The disruption budget budget needs 1 healthy "
                                           "pods and has 2 currently"}]},
        "code": 429}
    assert pods.get("ns", "p")["metadata"].get("deletionTimestamp") is None


def test_a_budget_behind_its_spec_asks_to_retry_later(pods, storage):
    put(pods, node="n1", phase="Running", ready=True)
    ev, server = evictor(pods, storage)
    put_pdb(server, generation=2, observed=1)
    with pytest.raises(errors.TooManyRequests) as err:
        ev.evict("ns", "p", DeleteOptions(), False)
    assert err.value.details["retryAfterSeconds"] == 10
    assert err.value.headers == {"Retry-After": "10"}
    assert err.value.details["causes"][0]["message"] == \
        "The disruption budget budget is still being processed by the server."


def test_negative_budgets_and_several_budgets(pods, storage):
    put(pods, node="n1", phase="Running", ready=True)
    ev, server = evictor(pods, storage)
    put_pdb(server, allowed=-1)
    with pytest.raises(errors.Forbidden) as err:
        ev.evict("ns", "p", DeleteOptions(), False)
    assert err.value.message == ('poddisruptionbudget.policy "budget" is forbidden: pdb '
                                 'disruptions allowed is negative')
    put_pdb(server, name="second")
    status = ev.evict("ns", "p", DeleteOptions(), False)
    assert status == {"kind": "Status", "apiVersion": "v1", "metadata": {},
                      "status": "Failure",
                      "message": "This pod has more than one PodDisruptionBudget, which the "
                                 "eviction subresource does not support.", "code": 500}


def test_unready_pods_go_without_spending_a_met_budget(pods, storage):
    put(pods, node="n1", phase="Running", ready=False)
    ev, server = evictor(pods, storage)
    put_pdb(server, allowed=0)
    assert ev.evict("ns", "p", DeleteOptions(0), False)["status"] == "Success"
    pdb = server.registries[("policy", "poddisruptionbudgets")].get("ns", "budget")
    assert pdb["status"]["disruptionsAllowed"] == 0 and "disruptedPods" not in pdb["status"]


def test_selectors_that_select_nothing_and_no_budgets_served(pods, storage):
    put(pods, node="n1", phase="Running", ready=True)
    ev, server = evictor(pods, storage)
    put_pdb(server, allowed=0, selector={})
    put_pdb(server, name="other", allowed=0, selector={"matchLabels": {"app": "db"}})
    assert ev.evict("ns", "p", DeleteOptions(0), False)["status"] == "Success"
    put(pods, "q", node="n1", phase="Running", ready=True)
    bare, _ = evictor(pods, storage, pdbs=False)
    assert bare.evict("ns", "q", DeleteOptions(0), False)["status"] == "Success"


def test_dry_run_eviction_changes_nothing(pods, storage):
    put(pods, node="n1", phase="Running", ready=True)
    ev, server = evictor(pods, storage)
    put_pdb(server, allowed=1)
    before = pods.get("ns", "p")
    assert ev.evict("ns", "p", DeleteOptions(0), True)["status"] == "Success"
    assert pods.get("ns", "p") == before
    assert server.registries[("policy", "poddisruptionbudgets")].get(
        "ns", "budget")["status"]["disruptionsAllowed"] == 1
