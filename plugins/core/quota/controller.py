"""The ResourceQuota controller (kube-controller-manager's ``resourcequota``), run by the
elected worker.

For each quota it writes ``status.hard`` (the spec's hard limits) and ``status.used``
(what the namespace's objects use of each, counted by the quota evaluators, scopes
applied), as ``syncResourceQuota`` does: when a quota is created or its hard limits
change, when objects it may count are deleted or change in a way that gives usage back (a
pod that finished, a service whose type changed, a claim's allocated storage), and on a
full resync every ``resync`` seconds. Creations are not recounted, as upstream's quota
monitors do not: admission charged them already, before they were stored, and a count
made between the charge and the write would take the charge back. Writes go through
``resourcequotas/status``, conditional on the quota's resourceVersion; a conflict is
retried.
"""

from __future__ import annotations

import logging

from kapiserver import errors
from kapiserver.controllers.workqueue import QueueController
from kapiserver.storage.interface import DELETED, MODIFIED

from . import resources as rl
from .evaluators import (IGNORED_RESOURCES, ObjectCountEvaluator, QuotaRegistry,
                         calculate_usage, quota_v1_pod)

log = logging.getLogger(__name__)

NAME = "resourcequota"
MANAGER = "kube-controller-manager"
#: ``--resource-quota-sync-period``'s default.
RESYNC_PERIOD = 300.0


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _service_type(service: dict) -> str:
    """``GetQuotaServiceType``: the types quota charges for."""
    kind = _dict(service.get("spec")).get("type")
    return kind if kind in ("NodePort", "LoadBalancer") else ""


def _allocated_storage(claim: dict):
    return _dict(_dict(claim.get("status")).get("allocatedResources")).get("storage")


#: ``install.DefaultUpdateFilter``: the updates of these resources that change usage.
UPDATE_FILTERS = {
    ("", "pods"): lambda old, new: quota_v1_pod(old) and not quota_v1_pod(new),
    ("", "services"): lambda old, new: _service_type(old) != _service_type(new),
    ("", "persistentvolumeclaims"): lambda old, new: (_allocated_storage(old)
                                                      != _allocated_storage(new)),
}


class ResourceQuotaController(QueueController):
    """Keep every quota's ``status`` current (see the module docstring).

    Keys are ``("quota", namespace, name)`` (sync that quota) and ``("replenish",
    namespace, group, resource)`` (sync the namespace's quotas that count that resource).
    """

    name = NAME
    resync = RESYNC_PERIOD

    def __init__(self, server):
        from ..resourcequotas import RESOURCE_QUOTAS, ResourceQuotaStrategy

        self.quotas = server.registries[("", "resourcequotas")]
        self.status = server.rest_handler(
            RESOURCE_QUOTAS, ResourceQuotaStrategy(RESOURCE_QUOTAS).status_strategy(),
            "status").store
        self.manage = self.status.field_manager(MANAGER, "status")
        self.registry = QuotaRegistry(self._list_objects)
        super().__init__(server)

    # -- what to follow ----------------------------------------------------------------------

    def _list_objects(self, group: str, resource: str, namespace: str) -> list[dict]:
        registry = self.server.registries.get((group, resource))
        return [] if registry is None else registry.list(namespace)["items"]

    def _counted(self) -> list:
        """The stored namespaced resources quota may count (upstream's quota monitors
        follow every resource discovery lists, less the ignored ones)."""
        return [registry for (group, resource), registry in list(self.server.registries.items())
                if registry.spec.namespaced and (group, resource) not in IGNORED_RESOURCES
                and "create" in registry.spec.verbs]

    def routes(self) -> dict:
        quota_prefix = self.quotas.spec.key_prefix()
        quotas = self.quotas

        def quota_keys(event):
            namespace, _, name = event.key[len(quota_prefix):].partition("/")
            if event.type == MODIFIED:
                # Status writes (this controller's, admission's) do not change the limits.
                old = quotas.decode(event.prev_value, event.revision)
                new = quotas.decode(event.value, event.revision)
                if rl.equals(rl.from_json(_dict(old.get("spec")).get("hard")),
                             rl.from_json(_dict(new.get("spec")).get("hard"))):
                    return []
            elif event.type == DELETED:
                return []
            return [("quota", namespace, name)]

        routes = {}
        for registry in self._counted():
            if (registry.spec.group, registry.spec.resource) == ("", "resourcequotas"):
                continue
            routes[registry.spec.key_prefix()] = self._replenisher(registry)
        # Quotas count themselves (``count/resourcequotas``): both routes for their prefix.
        replenish_quotas = self._replenisher(self.quotas)
        routes[quota_prefix] = lambda event: [*quota_keys(event), *replenish_quotas(event)]
        return routes

    @staticmethod
    def _replenisher(registry):
        group, resource = registry.spec.group, registry.spec.resource
        prefix = registry.spec.key_prefix()
        changed = UPDATE_FILTERS.get((group, resource))

        def keys(event):
            namespace = event.key[len(prefix):].partition("/")[0]
            if event.type == MODIFIED:
                if changed is None or not changed(
                        registry.decode(event.prev_value, event.revision),
                        registry.decode(event.value, event.revision)):
                    return []
            elif event.type != DELETED:
                return []
            return [("replenish", namespace, group, resource)]
        return keys

    def all_keys(self):
        return [("quota", q["metadata"]["namespace"], q["metadata"]["name"])
                for q in self.quotas.list("")["items"]]

    # -- work --------------------------------------------------------------------------------

    def evaluators(self) -> list:
        """The core evaluators and an object count one for every other counted resource."""
        evaluators = {e.group_resource: e for e in self.registry.list()}
        for registry in self._counted():
            key = (registry.spec.group, registry.spec.resource)
            if key not in evaluators:
                evaluators[key] = ObjectCountEvaluator(*key, self._list_objects)
        return list(evaluators.values())

    def process(self, key) -> None:
        if key[0] == "quota":
            _, namespace, name = key
            try:
                quota = self.quotas.get(namespace, name)
            except errors.NotFound:
                return
            self.sync_quota(quota)
            return
        _, namespace, group, resource = key
        evaluator = self.registry.get(group, resource) or ObjectCountEvaluator(group, resource)
        for quota in self.quotas.list(namespace)["items"]:
            status = _dict(quota.get("status"))
            hard = list(_dict(status.get("hard")))
            # ``replenishQuota``: the quotas that count this resource, and any whose usage
            # is not known yet.
            if evaluator.matching_resources(hard) or set(hard) - set(
                    _dict(status.get("used"))):
                self.sync_quota(quota)

    def sync_quota(self, quota: dict) -> None:
        """``syncResourceQuota``: status.hard from the spec, status.used counted anew."""
        meta, spec, status = quota["metadata"], _dict(quota.get("spec")), _dict(
            quota.get("status"))
        spec_hard = rl.from_json(spec.get("hard"))
        dirty = status.get("hard") is None or status.get("used") is None or not rl.equals(
            spec_hard, rl.from_json(status.get("hard")))
        used = rl.from_json(status.get("used"))
        counted = calculate_usage(meta["namespace"], spec.get("scopes") or [], spec_hard,
                                  self.evaluators(), spec.get("scopeSelector"))
        used.update(counted)
        used = rl.mask(used, spec_hard)
        dirty = dirty or not rl.equals(used, rl.from_json(status.get("used")))
        if not dirty:
            return
        quota = dict(quota, kind="ResourceQuota", apiVersion="v1")
        quota["status"] = {"hard": rl.to_json(spec_hard), "used": rl.to_json(used)}
        try:
            self.status.update(meta["namespace"], meta["name"], quota, manage=self.manage)
        except errors.NotFound:
            return
        log.debug("resource quota %s/%s: used %s", meta["namespace"], meta["name"],
                  rl.pretty_print(used))
