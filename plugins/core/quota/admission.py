"""ResourceQuota admission (``k8s.io/apiserver/pkg/admission/plugin/resourcequota``).

Last of the validating plugins. A create or update in a namespace with quotas is measured
by its resource's evaluator against every quota that matches it: refused when a quota's
usage is unknown yet (``status unknown for quota: q, resources: pods``), when a pod lacks
the requests a cpu or memory quota needs (``failed quota: q: must specify limits.cpu for:
c``) or when the new usage passes a hard limit (``exceeded quota: q, requested: pods=1,
used: pods=5, limited: pods=5``); otherwise the quotas' ``status.used`` is raised before
the object is stored, by updates conditional on each quota's resourceVersion, so that two
concurrent requests cannot both take the last unit: the one whose update conflicts reads
the quota again and is measured anew. Upstream's evaluator serializes a namespace's
requests in one goroutine and retries three times; here a worker serializes them with a
lock, and as several workers (and hosts) share the quotas, the retries go on while other
writers make progress (``RETRIES``).
The quota controller corrects usage afterwards (objects deleted, requests that failed
after admission).
"""

from __future__ import annotations

import copy
import logging
import threading
import zlib

from kapiserver import errors
from kapiserver.admission import CREATE, UPDATE, AdmissionPlugin
from kapiserver.admission.config import plugin_configuration
from kapiserver.admission.informers import informers_for
from kapiserver.errors import ConfigError

from . import resources as rl
from .evaluators import IGNORED_RESOURCES, QuotaRegistry, scope_selectors

log = logging.getLogger(__name__)

NAME = "ResourceQuota"
#: Attempts at writing the quotas' usage after conflicts (upstream's ``checkQuotas``
#: makes 3, its requests for a namespace being serialized already).
RETRIES = 16
#: Locks a namespace's requests are serialized by, in one worker (striped: bounded).
LOCK_STRIPES = 64
#: The field manager of the usage admission writes (upstream's loopback client's agent).
MANAGER = "kube-apiserver"
CONFIG_KINDS = (("apiserver.config.k8s.io/v1", "ResourceQuotaConfiguration"),
                ("apiserver.config.k8s.io/v1alpha1", "Configuration"),
                ("resourcequota.admission.k8s.io/v1", "Configuration"),
                ("resourcequota.admission.k8s.io/v1beta1", "Configuration"),
                ("resourcequota.admission.k8s.io/v1alpha1", "Configuration"))


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def parse_limited_resources(document: dict | None) -> list[dict]:
    """The ``limitedResources`` of the plugin's configuration: resources that may only be
    consumed when a quota covers them (``matchContains``) or scopes only usable under a
    quota (``matchScopes``)."""
    if document is None:
        return []
    prefix = "--admission-control-config-file: ResourceQuota"
    if (document.get("apiVersion"), document.get("kind")) not in CONFIG_KINDS and not (
            document.get("kind") == "Configuration"):
        raise ConfigError(f"{prefix}: expected a ResourceQuota Configuration")
    limited = document.get("limitedResources") or []
    if not isinstance(limited, list):
        raise ConfigError(f"{prefix}: limitedResources must be a list")
    problems = []
    for index, entry in enumerate(limited):
        if not isinstance(entry, dict) or not entry.get("resource"):
            problems.append(f"{prefix}: limitedResources[{index}].resource: Required value")
    if problems:
        raise ConfigError(problems)
    return [_dict(entry) for entry in limited]


class ResourceQuotaAdmission(AdmissionPlugin):
    """Enforce ResourceQuotas and charge their usage (see the module docstring)."""

    name = NAME
    operations = frozenset({CREATE, UPDATE})

    def __init__(self, server):
        self.server = server
        self.limited = parse_limited_resources(plugin_configuration(server.config, NAME))
        self.registry = QuotaRegistry(self._list_objects)
        self._status_store = None
        self._locks = [threading.Lock() for _ in range(LOCK_STRIPES)]

    # -- access ----------------------------------------------------------------------------

    def _list_objects(self, group: str, resource: str, namespace: str) -> list[dict]:
        registry = self.server.registries.get((group, resource))
        return [] if registry is None else registry.list(namespace)["items"]

    def get_quotas(self, namespace: str) -> list[dict]:
        return self._list_objects("", "resourcequotas", namespace)

    def has_quotas(self, namespace: str) -> bool:
        """Whether ``namespace`` has quotas, as of the request (upstream's lister): most
        namespaces have none, and their requests then need no read of their own."""
        return bool(informers_for(self.server).informer("", "resourcequotas").list(namespace))

    @property
    def status_store(self):
        """The ``resourcequotas/status`` store (built on first use: the server's storage
        opens after admission plugins are made)."""
        if self._status_store is None:
            from ..resourcequotas import RESOURCE_QUOTAS, ResourceQuotaStrategy

            strategy = ResourceQuotaStrategy(RESOURCE_QUOTAS).status_strategy()
            self._status_store = self.server.rest_handler(RESOURCE_QUOTAS, strategy,
                                                          "status").store
        return self._status_store

    def update_quota_status(self, quota: dict) -> None:
        """Write ``quota``'s status, conditional on its resourceVersion (``Conflict``)."""
        store = self.status_store
        meta = quota["metadata"]
        quota["kind"], quota["apiVersion"] = "ResourceQuota", "v1"  # list items have none
        store.update(meta["namespace"], meta["name"], quota,
                     manage=store.field_manager(MANAGER, "status"))

    # -- the plugin ------------------------------------------------------------------------

    def validate(self, attributes) -> None:
        namespace = attributes.namespace
        group, resource = attributes.gvr[0], attributes.gvr[2]
        if not namespace or (attributes.operation == CREATE
                             and (group, resource) == ("", "namespaces")):
            return
        if (group, resource) in IGNORED_RESOURCES:
            return
        evaluator = self.registry.get_or_count(group, resource)
        if not evaluator.handles(attributes.operation, attributes.subresource,
                                 attributes.object, attributes.old_object):
            return
        if not self.limited and not self.has_quotas(namespace):
            return
        with self._locks[zlib.crc32(namespace.encode()) % LOCK_STRIPES]:
            quotas = self.get_quotas(namespace)
            if not quotas and not self.limited:
                return
            self.check_quotas(quotas, attributes, evaluator, RETRIES)

    def check_quotas(self, quotas: list[dict], attributes, evaluator, retries: int) -> None:
        """``checkQuotas``: measure the request, then write the changed usages; quotas whose
        write conflicted are read again and the request measured against them anew."""
        new_quotas = self.check_request(quotas, attributes, evaluator)
        if attributes.dry_run:
            return
        changed = [new for old, new in zip(quotas, new_quotas)
                   if not rl.equals(_used(old), _used(new))]
        if not changed:
            return
        failed, last_error = [], None
        for quota in changed:
            try:
                self.update_quota_status(quota)
            except errors.StatusError as err:
                failed.append(quota["metadata"]["name"])
                last_error = err
        if not failed:
            return
        if retries <= 0:
            raise last_error
        namespace = quotas[0]["metadata"]["namespace"]
        try:
            fresh = self.get_quotas(namespace)
        except errors.StatusError:
            raise last_error from None
        again = [q for q in fresh if q["metadata"]["name"] in failed]
        self.check_quotas(again, attributes, evaluator, retries - 1)

    def check_request(self, quotas: list[dict], attributes, evaluator) -> list[dict]:
        """``CheckRequest``: the quotas with the request's usage added, or a 403 when it
        does not fit (the quotas given are not changed)."""
        obj = attributes.object if isinstance(attributes.object, dict) else {}
        group, resource = attributes.gvr[0], attributes.gvr[2]
        limited_scopes = [s for entry in self.limited for s in evaluator.matching_scopes(
            obj, [_dict(x) for x in entry.get("matchScopes") or []])]
        limited_names: set = set()
        limited_here = [e for e in self.limited if (e.get("apiGroup") or "", e.get("resource"))
                        == (group, resource)]
        if limited_here:
            usage = evaluator.usage(obj)
            for entry in limited_here:
                for name, value in usage.items():
                    if value.sign() == 1 and any(part in name for part in
                                                 entry.get("matchContains") or []):
                        limited_names.add(name)
        interesting, restricted_names, restricted_scopes = [], set(), []
        for index, quota in enumerate(quotas):
            name = quota["metadata"]["name"]
            restricted_scopes += evaluator.matching_scopes(obj, scope_selectors(quota))
            if not evaluator.matches(quota, obj):
                continue
            hard = rl.from_json(_dict(quota.get("status")).get("hard"))
            names = evaluator.matching_resources(list(hard))
            problem = evaluator.constraints(names, obj)
            if problem is not None:
                raise self._forbidden(attributes, f"failed quota: {name}: {problem}")
            used = _dict(_dict(quota.get("status")).get("used"))
            if any(n not in used for n in names if n in hard):
                raise self._forbidden(attributes, f"status unknown for quota: {name}, "
                                                  f"resources: {rl.pretty_print_names(names)}")
            interesting.append(index)
            restricted_names.update(names)
        delta = evaluator.usage(obj)
        negative = rl.is_negative(delta)
        if negative:
            raise self._forbidden(attributes, "quota usage is negative for resource(s): "
                                              f"{rl.pretty_print_names(negative)}")
        if attributes.operation == UPDATE:
            old = attributes.old_object
            if not isinstance(old, dict):
                raise self._forbidden(attributes, "unable to get previous usage since prior "
                                                  "version of object was not found")
            # Charged for the difference, unless this update creates the object.
            if _dict(old.get("metadata")).get("resourceVersion"):
                delta = rl.subtract_with_non_negative_result(delta, evaluator.usage(old))
        delta = rl.remove_zeros(delta)
        if not delta:
            return quotas
        uncovered = sorted(limited_names - restricted_names)
        if uncovered:
            raise self._forbidden(attributes,
                                  f"insufficient quota to consume: {','.join(uncovered)}")
        scopes = evaluator.uncovered_quota_scopes(limited_scopes, restricted_scopes)
        if scopes:
            # A plain error upstream, answered as a 500 without a reason.
            raise errors.Unknown("insufficient quota to match these scopes: "
                                 f"{_go_scope_list(scopes)}")
        if not interesting:
            return quotas
        out = [copy.deepcopy(q) for q in quotas]
        for index in interesting:
            quota = out[index]
            status = quota.setdefault("status", {})
            hard = rl.from_json(status.get("hard"))
            used = rl.from_json(status.get("used"))
            requested = rl.mask(delta, hard)
            new_used = rl.add(used, requested)
            allowed, exceeded = rl.less_than_or_equal(rl.mask(new_used, requested), hard)
            if not allowed:
                raise self._forbidden(attributes, (
                    f"exceeded quota: {quota['metadata']['name']}, "
                    f"requested: {rl.pretty_print(rl.mask(requested, exceeded))}, "
                    f"used: {rl.pretty_print(rl.mask(used, exceeded))}, "
                    f"limited: {rl.pretty_print(rl.mask(hard, exceeded))}"))
            status["used"] = rl.to_json(new_used)
        return out

    @staticmethod
    def _forbidden(attributes, message: str) -> errors.Forbidden:
        """``admission.NewForbidden``: named by the object's name or generateName."""
        meta = _dict(_dict(attributes.object).get("metadata"))
        name = meta.get("name") or meta.get("generateName") or "Unknown"
        group, resource = attributes.gvr[0], attributes.gvr[2]
        return errors.Forbidden.for_resource(group, resource, name, message)


def _used(quota: dict) -> dict:
    return rl.from_json(_dict(quota.get("status")).get("used"))


def _go_scope_list(scopes: list[dict]) -> str:
    """``%v`` of a ``[]ScopedResourceSelectorRequirement``: ``[{PriorityClass In [a]}]``."""
    parts = []
    for scope in scopes:
        values = " ".join(str(v) for v in scope.get("values") or [])
        parts.append(f"{{{scope.get('scopeName', '')} {scope.get('operator', '')} [{values}]}}")
    return "[" + " ".join(parts) + "]"
