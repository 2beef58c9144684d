"""Quota arithmetic, pod usage, scopes and the admission plugin's decisions (no server)."""

import threading
from types import SimpleNamespace

import pytest

from kapiserver import errors
from kapiserver.apimachinery.quantity import parse
from kapiserver_plugins.core.quota import resources as rl
from kapiserver_plugins.core.quota.admission import LOCK_STRIPES, ResourceQuotaAdmission
from kapiserver_plugins.core.quota.evaluators import (PersistentVolumeClaimEvaluator,
                                                      PodEvaluator, QuotaRegistry,
                                                      ServiceEvaluator, calculate_usage)


def q(value):
    return parse(value)


def as_json(resources):
    return rl.to_json(resources)


def test_resource_list_arithmetic():
    a = {"cpu": q("500m"), "memory": q("1Gi")}
    b = {"cpu": q("1500m"), "pods": q("1")}
    assert as_json(rl.add(a, b)) == {"cpu": "2", "memory": "1Gi", "pods": "1"}
    assert as_json(rl.subtract_with_non_negative_result(a, b)) == {
        "cpu": "0", "memory": "1Gi", "pods": "0"}
    assert rl.less_than_or_equal({"cpu": q("2")}, {"cpu": q("1"), "pods": q("1")}) == \
        (False, ["cpu"])
    assert rl.less_than_or_equal({"cpu": q("1")}, {"cpu": q("1000m")}) == (True, [])
    assert rl.equals({"cpu": q("1")}, {"cpu": q("1000m")})
    assert not rl.equals({"cpu": q("1")}, {"cpu": q("1"), "pods": q("0")})
    assert rl.pretty_print({"pods": q("1"), "cpu": q("100m")}) == "cpu=100m,pods=1"
    assert as_json(rl.remove_zeros({"a": q("0"), "b": q("1")})) == {"b": "1"}


def pod(containers, init=(), **spec):
    return {"metadata": {"name": "p"},
            "spec": {"containers": list(containers), "initContainers": list(init), **spec}}


def c(name, requests=None, limits=None, **extra):
    return {"name": name, "resources": {"requests": requests or {}, "limits": limits or {}},
            **extra}


def test_pod_usage_sums_containers_against_init_containers_and_overhead():
    usage = PodEvaluator().usage(pod(
        [c("a", {"cpu": "100m", "memory": "64Mi"}, {"cpu": "200m"}),
         c("b", {"cpu": "200m", "nvidia.com/gpu": "1"}, {"cpu": "300m"})],
        init=[c("i", {"cpu": "1", "memory": "32Mi"}),
              c("side", {"cpu": "50m"}, restartPolicy="Always")],
        overhead={"cpu": "10m"}))
    assert as_json(usage) == {
        "count/pods": "1", "cpu": "1010m", "limits.cpu": "510m", "memory": "64Mi",
        "pods": "1", "requests.cpu": "1010m", "requests.memory": "64Mi",
        "requests.nvidia.com/gpu": "1"}


def test_finished_pods_count_only_as_objects():
    done = pod([c("a", {"cpu": "1"})])
    done["status"] = {"phase": "Succeeded"}
    assert as_json(PodEvaluator().usage(done)) == {"count/pods": "1"}


def test_pod_scopes():
    evaluator = PodEvaluator()
    best_effort = pod([c("a")])
    burstable = pod([c("a", {"cpu": "1"})], activeDeadlineSeconds=30,
                    priorityClassName="high")
    exists = {"operator": "Exists"}
    assert evaluator.matches_scope({"scopeName": "BestEffort", **exists}, best_effort)
    assert evaluator.matches_scope({"scopeName": "NotBestEffort", **exists}, burstable)
    assert evaluator.matches_scope({"scopeName": "Terminating", **exists}, burstable)
    assert evaluator.matches_scope({"scopeName": "NotTerminating", **exists}, best_effort)
    assert evaluator.matches_scope({"scopeName": "PriorityClass", "operator": "In",
                                    "values": ["high", "low"]}, burstable)
    assert not evaluator.matches_scope({"scopeName": "PriorityClass", "operator": "In",
                                        "values": ["low"]}, burstable)
    assert evaluator.matches_scope({"scopeName": "PriorityClass", "operator": "DoesNotExist"},
                                   best_effort)
    cross = pod([c("a")], affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuring"
                                                    "Execution": [{"namespaces": ["x"]}]}})
    assert evaluator.matches_scope({"scopeName": "CrossNamespacePodAffinity", **exists}, cross)
    assert not evaluator.matches_scope({"scopeName": "CrossNamespacePodAffinity", **exists},
                                       best_effort)


def test_pod_constraints_name_the_containers_missing_requests():
    evaluator = PodEvaluator()
    obj = pod([c("a", {"cpu": "1"}), c("b")], init=[c("i", limits={"memory": "1Mi"})])
    assert evaluator.constraints(["limits.cpu", "requests.cpu", "pods"], obj) == \
        "must specify limits.cpu for: a,b,i; requests.cpu for: b,i"
    assert evaluator.constraints(["pods", "requests.storage"], obj) is None


def test_service_and_claim_usage():
    services = ServiceEvaluator()
    assert as_json(services.usage({"spec": {"type": "LoadBalancer", "ports": [{}, {}]}})) == {
        "count/services": "1", "services": "1", "services.loadbalancers": "1",
        "services.nodeports": "2"}
    assert as_json(services.usage({"spec": {"type": "ClusterIP", "ports": [{}]}}))[
        "services.nodeports"] == "0"
    claims = PersistentVolumeClaimEvaluator()
    assert as_json(claims.usage({"spec": {"storageClassName": "gold", "resources": {
        "requests": {"storage": "1500m"}}}})) == {
        "count/persistentvolumeclaims": "1", "gold.storageclass.storage.k8s.io/"
        "persistentvolumeclaims": "1", "gold.storageclass.storage.k8s.io/requests.storage": "2",
        "persistentvolumeclaims": "1", "requests.storage": "2"}
    assert claims.matching_resources(["bronze.storageclass.storage.k8s.io/requests.storage",
                                      "requests.cpu"]) == [
        "bronze.storageclass.storage.k8s.io/requests.storage"]


def test_calculate_usage_counts_what_each_hard_resource_tracks():
    objects = {("", "pods"): [pod([c("a", {"cpu": "1"})]), pod([c("b")])],
               ("", "configmaps"): [{"metadata": {"name": "x"}}],
               ("apps", "deployments"): [{}, {}]}
    registry = QuotaRegistry(lambda g, r, ns: objects.get((g, r), []))
    deployments = registry.get_or_count("apps", "deployments")
    hard = {"pods": q("10"), "requests.cpu": q("4"), "configmaps": q("5"),
            "count/deployments.apps": q("3"), "secrets": q("1")}
    used = calculate_usage("ns", [], hard, registry.list())
    assert as_json(used) == {"configmaps": "1", "count/deployments.apps": "2", "pods": "2",
                             "requests.cpu": "1", "secrets": "0"}
    best_effort = calculate_usage("ns", ["BestEffort"], {"pods": q("10")}, registry.list())
    assert as_json(best_effort) == {"pods": "1"}
    assert deployments.names == ["count/deployments.apps"]


class FakeAdmission(ResourceQuotaAdmission):
    """The plugin over in-memory quotas whose status writes may conflict."""

    def __init__(self, quotas, conflicts=0):
        self.limited = []
        self.quotas = quotas
        self.conflicts = conflicts
        self.writes = []
        self.registry = QuotaRegistry(lambda g, r, ns: [])
        self._locks = [threading.Lock() for _ in range(LOCK_STRIPES)]

    def get_quotas(self, namespace):
        return [dict(q) for q in self.quotas]

    def has_quotas(self, namespace):
        return bool(self.quotas)

    def update_quota_status(self, quota):
        if self.conflicts:
            self.conflicts -= 1
            # Someone else took a pod meanwhile.
            self.quotas[0]["status"]["used"]["pods"] = str(int(
                self.quotas[0]["status"]["used"]["pods"]) + 1)
            raise errors.Conflict("the object has been modified")
        self.writes.append(quota["status"]["used"])
        self.quotas[0] = quota


def quota(hard, used, **spec):
    return {"metadata": {"name": "q", "namespace": "ns"}, "spec": {"hard": hard, **spec},
            "status": {"hard": hard, "used": used}}


def attributes(obj, operation="CREATE", old=None, dry_run=False):
    return SimpleNamespace(object=obj, old_object=old, operation=operation, namespace="ns",
                           name="", subresource="", gvr=("", "v1", "pods"), dry_run=dry_run)


def admit(plugin, obj, **kwargs):
    plugin.validate(attributes(obj, **kwargs))


def test_admission_charges_usage_and_refuses_past_the_limit():
    plugin = FakeAdmission([quota({"pods": "2"}, {"pods": "1"})])
    admit(plugin, pod([c("a")]))
    assert plugin.writes == [{"pods": "2"}]
    with pytest.raises(errors.Forbidden) as refused:
        admit(plugin, pod([c("a")]))
    assert refused.value.message == ('pods "p" is forbidden: exceeded quota: q, requested: '
                                     'pods=1, used: pods=2, limited: pods=2')
    # Dry runs are measured, never charged.
    plugin = FakeAdmission([quota({"pods": "2"}, {"pods": "0"})])
    admit(plugin, pod([c("a")]), dry_run=True)
    assert plugin.writes == []


def test_admission_rereads_a_quota_whose_write_conflicted():
    plugin = FakeAdmission([quota({"pods": "3"}, {"pods": "1"})], conflicts=1)
    admit(plugin, pod([c("a")]))
    assert plugin.writes == [{"pods": "3"}]
    plugin = FakeAdmission([quota({"pods": "2"}, {"pods": "1"})], conflicts=1)
    with pytest.raises(errors.Forbidden, match="exceeded quota: q, requested: pods=1, used: "
                                               "pods=2, limited: pods=2"):
        admit(plugin, pod([c("a")]))


def test_admission_refuses_unknown_usage_and_missing_requests():
    plugin = FakeAdmission([{"metadata": {"name": "q", "namespace": "ns"},
                             "spec": {"hard": {"pods": "2"}}, "status": {}}])
    admit(plugin, pod([c("a")]))  # no status.hard yet: the quota matches nothing
    plugin = FakeAdmission([quota({"pods": "2", "cpu": "1"}, {"pods": "0"})])
    with pytest.raises(errors.Forbidden) as refused:
        admit(plugin, pod([c("a", {"cpu": "100m"})]))
    assert refused.value.message == ('pods "p" is forbidden: status unknown for quota: q, '
                                     'resources: cpu,pods')
    plugin = FakeAdmission([quota({"limits.memory": "1Gi"}, {"limits.memory": "0"})])
    with pytest.raises(errors.Forbidden) as refused:
        admit(plugin, pod([c("a"), c("b", limits={"memory": "1Mi"})]))
    assert refused.value.message == ('pods "p" is forbidden: failed quota: q: must specify '
                                     'limits.memory for: a')


def test_scoped_quotas_only_count_matching_pods():
    plugin = FakeAdmission([quota({"pods": "1"}, {"pods": "1"}, scopes=["BestEffort"])])
    admit(plugin, pod([c("a", {"cpu": "1"})]))  # not best effort: not this quota's
    assert plugin.writes == []
    with pytest.raises(errors.Forbidden, match="exceeded quota"):
        admit(plugin, pod([c("a")]))


class FakeStatusStore:
    def __init__(self):
        self.written = []

    def update(self, namespace, name, obj, manage=None):
        self.written.append(obj)
        return obj, False


def controller_over(objects):
    from kapiserver_plugins.core.quota.controller import ResourceQuotaController

    controller = ResourceQuotaController.__new__(ResourceQuotaController)
    controller.server = SimpleNamespace(registries={})
    controller.status = FakeStatusStore()
    controller.manage = None
    controller.registry = QuotaRegistry(lambda g, r, ns: objects.get((g, r), []))
    return controller


def test_controller_mirrors_hard_limits_and_counts_usage():
    objects = {("", "pods"): [pod([c("a", {"cpu": "250m"})]), pod([c("b")])],
               ("", "secrets"): [{}, {}, {}]}
    controller = controller_over(objects)
    quota_object = {"metadata": {"name": "q", "namespace": "ns", "resourceVersion": "7"},
                    "spec": {"hard": {"pods": "10", "requests.cpu": "2000m", "secrets": "5"}}}
    controller.sync_quota(quota_object)
    (written,) = controller.status.written
    assert written["status"] == {"hard": {"pods": "10", "requests.cpu": "2", "secrets": "5"},
                                 "used": {"pods": "2", "requests.cpu": "250m", "secrets": "3"}}
    assert written["metadata"]["resourceVersion"] == "7" and written["kind"] == "ResourceQuota"
    # Nothing changed: nothing is written.
    controller.sync_quota(written)
    assert len(controller.status.written) == 1
    # A scoped quota counts only the pods in its scope.
    controller.sync_quota({"metadata": {"name": "s", "namespace": "ns"},
                           "spec": {"hard": {"pods": "3"}, "scopes": ["NotBestEffort"]}})
    assert controller.status.written[-1]["status"]["used"] == {"pods": "1"}
