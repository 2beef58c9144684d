"""Quota evaluators: what an object uses of the resources a ResourceQuota limits.

Upstream's ``pkg/quota/v1/evaluator/core`` (pods, services, persistent volume claims) and
``k8s.io/apiserver/pkg/quota/v1/generic`` (object counts, ``count/<resource>.<group>``):
each evaluator says which admission requests it handles, which quota resource names it
tracks, which quota scopes an object matches, what one object uses, and what all the
objects of a namespace use (``usage_stats``, the quota controller's count).
"""

from __future__ import annotations

import time
from datetime import datetime

from kapiserver.apimachinery.labels import SelectorError, selector_from_label_selector
from kapiserver.apimachinery.resource_validation import (is_extended_resource_name,
                                                         is_native_resource)
from kapiserver.apis.core.qos import get_pod_qos

from . import resources as rl
from .resources import Quantity

CREATE, UPDATE = "CREATE", "UPDATE"
TERMINATING, NOT_TERMINATING = "Terminating", "NotTerminating"
BEST_EFFORT, NOT_BEST_EFFORT = "BestEffort", "NotBestEffort"
PRIORITY_CLASS, CROSS_NAMESPACE_POD_AFFINITY = "PriorityClass", "CrossNamespacePodAffinity"

#: Resources quota never counts (``install.DefaultIgnoredResources``).
IGNORED_RESOURCES = frozenset({
    ("", "bindings"), ("", "componentstatuses"), ("", "events"), ("events.k8s.io", "events"),
    ("authentication.k8s.io", "tokenreviews"), ("authentication.k8s.io", "selfsubjectreviews"),
    ("authorization.k8s.io", "subjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectaccessreviews"),
    ("authorization.k8s.io", "localsubjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectrulesreviews"),
})
#: Object counts quota also knows by their old names (``legacyObjectCountAliases``).
LEGACY_ALIASES = {("", "configmaps"): "configmaps", ("", "resourcequotas"): "resourcequotas",
                  ("", "replicationcontrollers"): "replicationcontrollers",
                  ("", "secrets"): "secrets"}


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value) -> list:
    return value if isinstance(value, list) else []


def one() -> Quantity:
    return rl.quantity.new_quantity(1)


def object_count_name(group: str, resource: str) -> str:
    """``ObjectCountQuotaResourceNameFor``: ``count/pods``, ``count/deployments.apps``."""
    return f"count/{resource}.{group}" if group else f"count/{resource}"


def scope_selectors(quota: dict) -> list[dict]:
    """``getScopeSelectorsFromQuota``: ``spec.scopes`` as ``Exists`` requirements, then the
    scope selector's expressions."""
    spec = _dict(quota.get("spec"))
    selectors = [{"scopeName": scope, "operator": "Exists"} for scope in _list(spec.get("scopes"))]
    return selectors + [_dict(e) for e in _list(_dict(spec.get("scopeSelector")).get(
        "matchExpressions"))]


class ScopeError(ValueError):
    """A scope selector that cannot be evaluated (upstream's error text)."""


class Evaluator:
    """``quota.Evaluator`` for one group resource; the defaults are the object count's."""

    group = ""
    resource = ""

    def __init__(self, lister=None):
        #: ``lister(group, resource, namespace) -> [objects]``, for ``usage_stats``.
        self.lister = lister

    @property
    def group_resource(self) -> tuple[str, str]:
        return self.group, self.resource

    def handles(self, operation: str, subresource: str, obj=None, old=None) -> bool:
        return not subresource and operation == CREATE

    def matching_resources(self, names) -> list[str]:
        raise NotImplementedError

    def matches_scope(self, selector: dict, obj: dict) -> bool:
        """``MatchesScopeFunc``; only pods have scopes (``MatchesNoScopeFunc``)."""
        return False

    def matches(self, quota: dict, obj: dict) -> bool:
        """``generic.Matches``: the quota limits one of this resource's names and every one
        of its scopes matches ``obj``."""
        hard = _dict(_dict(quota.get("status")).get("hard"))
        if not self.matching_resources(list(hard)):
            return False
        return all(self.matches_scope(selector, obj) for selector in scope_selectors(quota))

    def matching_scopes(self, obj: dict, selectors: list[dict]) -> list[dict]:
        return [s for s in selectors if self.matches_scope(s, obj)]

    def uncovered_quota_scopes(self, limited: list[dict], matched: list[dict]) -> list[dict]:
        return []

    def constraints(self, required: list[str], obj: dict) -> str | None:
        """Why ``obj`` cannot be counted against ``required`` (``None``: it can)."""
        return None

    def usage(self, obj: dict) -> dict:
        raise NotImplementedError

    def usage_stats(self, namespace: str, names: list[str], scopes=(),
                    scope_selector: dict | None = None) -> dict:
        """``CalculateUsageStats``: what the namespace's objects that match the scopes use
        of ``names`` (each at least zero)."""
        used = {name: rl.quantity.new_quantity(0) for name in names}
        requirements = [{"scopeName": s, "operator": "Exists"} for s in scopes]
        requirements += [_dict(e) for e in _list(_dict(scope_selector).get("matchExpressions"))]
        for item in self.lister(self.group, self.resource, namespace):
            try:
                if not all(self.matches_scope(r, item) for r in requirements):
                    continue
            except ScopeError:
                return used
            used = rl.add(used, self.usage(item))
        return used


class ObjectCountEvaluator(Evaluator):
    """``objectCountEvaluator``: one per object, as ``count/<resource>.<group>`` (and a
    legacy alias for the four resources that have one)."""

    def __init__(self, group: str, resource: str, lister=None):
        super().__init__(lister)
        self.group, self.resource = group, resource
        self.names = [object_count_name(group, resource)]
        if (group, resource) in LEGACY_ALIASES:
            self.names.append(LEGACY_ALIASES[(group, resource)])

    def matching_resources(self, names) -> list[str]:
        return rl.intersection(names, self.names)

    def usage(self, obj: dict) -> dict:
        return {name: one() for name in self.names}


# -- pods -----------------------------------------------------------------------------------

POD_RESOURCES = ("count/pods", "cpu", "memory", "ephemeral-storage", "requests.cpu",
                 "requests.memory", "requests.ephemeral-storage", "limits.cpu",
                 "limits.memory", "limits.ephemeral-storage", "pods")
POD_RESOURCE_PREFIXES = ("hugepages-", "requests.hugepages-")
#: Quota names a pod must request explicitly when a quota limits them (a mistake upstream
#: keeps for compatibility).
VALIDATION_SET = frozenset({"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu",
                            "limits.memory"})


def _container_resources(container: dict, key: str) -> dict:
    return rl.from_json(_dict(_dict(container.get("resources")).get(key)))


def _aggregate(spec: dict, key: str) -> dict:
    """``aggregateContainerResourcesByFn`` of the spec's requests or limits: the sum over
    containers, against the largest need of any init container (restartable ones stay
    and add up)."""
    result: dict = {}
    for container in _list(spec.get("containers")):
        result = rl.add(result, _container_resources(_dict(container), key))
    restartable: dict = {}
    init_max: dict = {}
    for container in _list(spec.get("initContainers")):
        container = _dict(container)
        own = _container_resources(container, key)
        if container.get("restartPolicy") == "Always":
            result = rl.add(result, own)
            restartable = rl.add(restartable, own)
            need = restartable
        else:
            need = rl.add(own, restartable)
        init_max = rl.max_list(init_max, need)
    return rl.max_list(result, init_max)


def pod_requests(pod: dict) -> dict:
    """``resourcehelper.PodRequests``, overhead included."""
    spec = _dict(pod.get("spec"))
    requests = _aggregate(spec, "requests")
    return rl.add(requests, rl.from_json(spec.get("overhead")))


def pod_limits(pod: dict) -> dict:
    """``resourcehelper.PodLimits``: overhead added to the limits that are set."""
    spec = _dict(pod.get("spec"))
    limits = _aggregate(spec, "limits")
    for name, value in rl.from_json(spec.get("overhead")).items():
        if name in limits and not limits[name].is_zero():
            limits[name] = limits[name].add(value)
    return limits


def pod_compute_usage(requests: dict, limits: dict) -> dict:
    """``podComputeUsageHelper``."""
    result = {"pods": rl.quantity.parse("1")}
    for name in ("cpu", "memory", "ephemeral-storage"):
        if name in requests:
            result[name] = requests[name]
            result[f"requests.{name}"] = requests[name]
        if name in limits:
            result[f"limits.{name}"] = limits[name]
    for name, value in requests.items():
        if name.startswith("hugepages-"):
            result[name] = value
            result["requests." + name] = value
        if is_extended_resource_name(name):
            result["requests." + name] = value
    return result


def _parse_time(text) -> float | None:
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def quota_v1_pod(pod: dict, now: float | None = None) -> bool:
    """``QuotaV1Pod``: a pod is charged unless it finished or its deletion's grace period
    ran out."""
    if _dict(pod.get("status")).get("phase") in ("Failed", "Succeeded"):
        return False
    meta = _dict(pod.get("metadata"))
    deleted = _parse_time(meta.get("deletionTimestamp"))
    grace = meta.get("deletionGracePeriodSeconds")
    if deleted is not None and isinstance(grace, int):
        if (time.time() if now is None else now) > deleted + grace:
            return False
    return True


def _cross_namespace_term(term) -> bool:
    term = _dict(term)
    return bool(_list(term.get("namespaces"))) or term.get("namespaceSelector") is not None


def uses_cross_namespace_pod_affinity(pod: dict) -> bool:
    affinity = _dict(_dict(pod.get("spec")).get("affinity"))
    for kind in ("podAffinity", "podAntiAffinity"):
        terms = _dict(affinity.get(kind))
        if any(_cross_namespace_term(t) for t in
               _list(terms.get("requiredDuringSchedulingIgnoredDuringExecution"))):
            return True
        if any(_cross_namespace_term(_dict(t).get("podAffinityTerm")) for t in
               _list(terms.get("preferredDuringSchedulingIgnoredDuringExecution"))):
            return True
    return False


def _selector_matches(selector: dict, labels: dict) -> bool:
    """``ScopedResourceSelectorRequirementsAsSelector(selector).Matches(labels)``."""
    operator = selector.get("operator")
    if operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
        raise ScopeError(f"{operator!r} is not a valid scope selector operator")
    requirement = {"key": selector.get("scopeName", ""), "operator": operator}
    if _list(selector.get("values")):
        requirement["values"] = selector["values"]
    try:
        return selector_from_label_selector({"matchExpressions": [requirement]}).matches(labels)
    except (SelectorError, ValueError) as err:
        raise ScopeError(f"failed to parse and convert selector: {err}") from None


class PodEvaluator(Evaluator):
    """``podEvaluator``: pods' object count and compute resources, with scopes."""

    group, resource = "", "pods"

    def handles(self, operation, subresource, obj=None, old=None) -> bool:
        # Updates count only with InPlacePodVerticalScaling, off in 1.32.
        return not subresource and operation == CREATE

    def matching_resources(self, names) -> list[str]:
        result = rl.intersection(names, POD_RESOURCES)
        for name in names:
            if name.startswith(POD_RESOURCE_PREFIXES):
                result.append(name)
            if not is_native_resource(name) and name.startswith("requests."):
                result.append(name)
        return result

    def matches_scope(self, selector: dict, obj: dict) -> bool:
        scope = selector.get("scopeName")
        spec = _dict(obj.get("spec"))
        if scope in (TERMINATING, NOT_TERMINATING):
            deadline = spec.get("activeDeadlineSeconds")
            terminating = isinstance(deadline, int) and deadline >= 0
            return terminating if scope == TERMINATING else not terminating
        if scope in (BEST_EFFORT, NOT_BEST_EFFORT):
            best_effort = get_pod_qos(obj) == "BestEffort"
            return best_effort if scope == BEST_EFFORT else not best_effort
        if scope == PRIORITY_CLASS:
            name = spec.get("priorityClassName") or ""
            if selector.get("operator") == "Exists":
                return bool(name)
            return _selector_matches(selector, {PRIORITY_CLASS: name} if name else {})
        if scope == CROSS_NAMESPACE_POD_AFFINITY:
            return uses_cross_namespace_pod_affinity(obj)
        return False

    def uncovered_quota_scopes(self, limited, matched) -> list[dict]:
        names = {m.get("scopeName") for m in matched}
        return [s for s in limited if s.get("scopeName") not in names]

    def constraints(self, required, obj) -> str | None:
        """Every container must request what a quota limits of cpu and memory."""
        required = set(required) & VALIDATION_SET
        missing: dict[str, set] = {}
        spec = _dict(obj.get("spec"))
        for container in _list(spec.get("containers")) + _list(spec.get("initContainers")):
            container = _dict(container)
            usage = pod_compute_usage(_container_resources(container, "requests"),
                                      _container_resources(container, "limits"))
            for name in required - set(usage):
                missing.setdefault(name, set()).add(str(container.get("name", "")))
        if not missing:
            return None
        return "must specify " + "; ".join(
            f"{name} for: {','.join(sorted(missing[name]))}" for name in sorted(missing))

    def usage(self, obj: dict) -> dict:
        """``PodUsageFunc``: the object count always; compute resources while charged."""
        result = {"count/pods": one()}
        if not quota_v1_pod(obj):
            return result
        return rl.add(result, pod_compute_usage(pod_requests(obj), pod_limits(obj)))


# -- services -------------------------------------------------------------------------------

SERVICE_RESOURCES = ("count/services", "services", "services.nodeports",
                     "services.loadbalancers")


class ServiceEvaluator(Evaluator):
    """``serviceEvaluator``: services, and the node ports and load balancers they take."""

    group, resource = "", "services"

    def handles(self, operation, subresource, obj=None, old=None) -> bool:
        # Create and update: a service's type can change.
        return operation in (CREATE, UPDATE)

    def matching_resources(self, names) -> list[str]:
        return rl.intersection(names, SERVICE_RESOURCES)

    def usage(self, obj: dict) -> dict:
        spec = _dict(obj.get("spec"))
        ports = _list(spec.get("ports"))
        zero = rl.quantity.new_quantity(0)
        result = {"count/services": one(), "services": one(), "services.loadbalancers": zero,
                  "services.nodeports": zero}
        kind = spec.get("type")
        if kind == "NodePort":
            result["services.nodeports"] = rl.quantity.new_quantity(len(ports))
        elif kind == "LoadBalancer":
            if spec.get("allocateLoadBalancerNodePorts") is False:
                count = sum(1 for p in ports if _dict(p).get("nodePort"))
            else:
                count = len(ports)
            result["services.nodeports"] = rl.quantity.new_quantity(count)
            result["services.loadbalancers"] = one()
        return result


# -- persistent volume claims ---------------------------------------------------------------

STORAGE_CLASS_SUFFIX = ".storageclass.storage.k8s.io/"
PVC_RESOURCES = ("persistentvolumeclaims", "requests.storage")


def _round_up(value: Quantity) -> Quantity:
    """``RoundUp(0)``: whole bytes (quota validation wants them)."""
    whole = rl.quantity.new_quantity(value.value(), value.format or rl.quantity.DECIMAL_SI)
    return value if whole.cmp(value) == 0 else whole


def claim_class(pvc: dict) -> str:
    """``GetPersistentVolumeClaimClass``: the beta annotation, else the spec's class."""
    annotations = _dict(_dict(pvc.get("metadata")).get("annotations"))
    if "volume.beta.kubernetes.io/storage-class" in annotations:
        return annotations["volume.beta.kubernetes.io/storage-class"]
    name = _dict(pvc.get("spec")).get("storageClassName")
    return name if isinstance(name, str) else ""


class PersistentVolumeClaimEvaluator(Evaluator):
    """``pvcEvaluator``: claims and the storage they request, also per storage class."""

    group, resource = "", "persistentvolumeclaims"

    def handles(self, operation, subresource, obj=None, old=None) -> bool:
        if not subresource:
            return operation in (CREATE, UPDATE)
        if subresource == "status":
            def allocated(claim):
                value = _dict(_dict(_dict(claim).get("status")).get("allocatedResources")).get(
                    "storage")
                return rl.from_json({"storage": value}).get("storage") if value else None
            new, previous = allocated(obj), allocated(old)
            return (new is None) != (previous is None) or (
                new is not None and new.cmp(previous) != 0)
        return False

    def matching_resources(self, names) -> list[str]:
        result = []
        for name in names:
            if name == "count/persistentvolumeclaims" or name in PVC_RESOURCES or any(
                    name.endswith(STORAGE_CLASS_SUFFIX + r) for r in PVC_RESOURCES):
                result.append(name)
        return result

    def usage(self, obj: dict) -> dict:
        result = {"persistentvolumeclaims": one(), "count/persistentvolumeclaims": one()}
        storage_class = claim_class(obj)
        if storage_class:
            result[storage_class + STORAGE_CLASS_SUFFIX + "persistentvolumeclaims"] = one()
        requested = rl.from_json(_dict(_dict(_dict(obj.get("spec")).get("resources")).get(
            "requests"))).get("storage")
        if requested is not None:
            requested = _round_up(requested)
            result["requests.storage"] = requested
            if storage_class:
                result[storage_class + STORAGE_CLASS_SUFFIX + "requests.storage"] = requested
        return result


# -- the registry ---------------------------------------------------------------------------

class QuotaRegistry:
    """The evaluators by group resource (``generic.simpleRegistry``): pods, services, claims
    and the legacy object counts; ``object_count`` adds the generic one for others."""

    def __init__(self, lister):
        self.lister = lister
        evaluators = [PodEvaluator(lister), ServiceEvaluator(lister),
                      PersistentVolumeClaimEvaluator(lister)]
        evaluators += [ObjectCountEvaluator(g, r, lister) for g, r in LEGACY_ALIASES]
        self.evaluators = {e.group_resource: e for e in evaluators}

    def get(self, group: str, resource: str) -> Evaluator | None:
        return self.evaluators.get((group, resource))

    def get_or_count(self, group: str, resource: str) -> Evaluator:
        """The resource's evaluator, an object count one made for it if it has none."""
        evaluator = self.evaluators.get((group, resource))
        if evaluator is None:
            evaluator = self.evaluators.setdefault(
                (group, resource), ObjectCountEvaluator(group, resource, self.lister))
        return evaluator

    def list(self) -> list[Evaluator]:
        return list(self.evaluators.values())


def calculate_usage(namespace: str, scopes, hard: dict, evaluators,
                    scope_selector: dict | None = None) -> dict:
    """``quota.CalculateUsage``: what the namespace uses of each hard resource some
    evaluator tracks."""
    names = list(hard)
    potential = [n for e in evaluators for n in e.matching_resources(names)]
    matched = rl.intersection(names, potential)
    used: dict = {}
    for evaluator in evaluators:
        mine = evaluator.matching_resources(matched)
        if not mine:
            continue
        used = rl.add(used, evaluator.usage_stats(namespace, mine, scopes, scope_selector))
    return rl.mask(used, matched)
