"""The namespace controller: empty a terminating namespace, then let it go.

Upstream's ``namespace`` controller (kube-controller-manager, ``namespaced_resources_deleter
.go``), run by the elected worker. For every namespace with a ``deletionTimestamp`` and the
``kubernetes`` finalizer it discovers the namespaced resources — those stored here (built-in
or added by plugins, custom resources) and those of every content provider registered with
``server.add_namespace_content`` (the aggregator's extension servers) — and for each that
can be deleted: ``deletecollection`` where supported, else list and delete each object,
then lists what is left. It records the outcome in the namespace's status conditions
(``namespace_conditions``), and once nothing is left, nothing failed and every group was
discovered, removes the ``kubernetes`` finalizer through the ``finalize`` subresource's
rules, which deletes the namespace. A pass that fails (a group that cannot be discovered,
a deletion refused) is retried with a growing delay, or at once when what the providers
discover changes (an extension server is back); objects held by finalizers are waited for.
"""

from __future__ import annotations

import collections
import logging
import time

from kapiserver import errors
from kapiserver.controllers import Controller, concurrently
from kapiserver.controllers.namespace_content import (ContentError, ContentResource,
                                                      NamespaceContent,
                                                      discovery_failure_message)

from .namespace_conditions import ConditionUpdater
from .namespaces import FINALIZER

log = logging.getLogger(__name__)
#: Upstream's default wait for objects held by finalizers (``finalizerEstimateSeconds``).
FINALIZER_ESTIMATE = 15
#: A failed pass is retried after this, doubled each time up to ``MAX_RETRY_DELAY``
#: (upstream's rate limiter starts at 5 ms and grows to 1000 s; a namespace here should go
#: soon after the server that held it up is back).
MAX_RETRY_DELAY = 16.0
MANAGER = "kube-controller-manager"
#: The deleter's DeleteOptions: objects go at once, the garbage collector takes their
#: dependents (upstream's ``namespacedResourcesDeleter`` deletes in the background).
BACKGROUND = {"propagationPolicy": "Background"}
#: How many of a resource's objects are deleted at a time (their waits on the store
#: overlap: 100 take a tenth of the time they take one by one).
DELETE_WORKERS = 8


class LocalContent(NamespaceContent):
    """The namespaced resources stored by this server (``server.registries``)."""

    name = "local"

    def __init__(self, server):
        self.server = server

    def _registry(self, resource: ContentResource):
        return self.server.registries.get((resource.group, resource.resource))

    def discover(self):
        resources = [ContentResource(registry.spec.group, registry.spec.version,
                                     registry.spec.resource, frozenset(registry.spec.verbs))
                     for registry in list(self.server.registries.values())
                     if registry.spec.namespaced]
        return resources, {}

    def delete_collection(self, resource, namespace):
        registry = self._registry(resource)
        if registry is None:
            return False
        names = [item["metadata"]["name"] for item in registry.list(namespace)["items"]
                 if not item["metadata"].get("deletionTimestamp")]  # others wait for finalizers
        failures = []

        def delete(name: str) -> None:
            try:
                registry.delete(namespace, name, options=BACKGROUND)
            except errors.NotFound:
                pass
            except errors.StatusError as err:
                failures.append(err.message)

        concurrently(delete, names, DELETE_WORKERS)
        if failures:
            raise ContentError(failures[0])
        return True

    def list(self, resource, namespace):
        registry = self._registry(resource)
        return None if registry is None else registry.list(namespace)["items"]

    def delete(self, resource, namespace, name):
        registry = self._registry(resource)
        try:
            if registry is not None:
                registry.delete(namespace, name, options=BACKGROUND)
        except errors.NotFound:
            pass
        except errors.StatusError as err:
            raise ContentError(err.message) from None


class ContentResult:
    """One pass over a namespace's content: how long to wait for finalizers
    (``estimate``, seconds), the errors met, and the conditions they make."""

    def __init__(self):
        self.estimate = 0
        self.errors: list[str] = []
        self.conditions = ConditionUpdater()


def discover(providers) -> tuple[list, dict]:
    """Every provider's resources, as ``(provider, resource)``, and the group versions
    whose discovery failed."""
    found, failures = [], {}
    for provider in providers:
        resources, failed = provider.discover()
        found += [(provider, resource) for resource in resources]
        failures.update(failed)
    return found, failures


def delete_all_content(providers, namespace: str, discovered=None) -> ContentResult:
    """Upstream's ``deleteAllContent`` over every provider's resources (``discovered``:
    what ``discover(providers)`` found, when the caller has it already)."""
    result = ContentResult()
    found, failures = discovered or discover(providers)
    if failures:
        # Not fatal: what was discovered is deleted all the same.
        message = discovery_failure_message(failures)
        result.errors.append(message)
        result.conditions.discovery_failed(len(failures), message)
    remaining: dict[tuple[str, str], int] = {}
    finalizers: collections.Counter = collections.Counter()
    for provider, resource in found:
        if "delete" not in resource.verbs:
            continue
        try:
            estimate, left, held = _delete_resource(provider, resource, namespace)
        except ContentError as err:
            result.errors.append(str(err))
            result.conditions.delete_content_failed(str(err))
            continue
        result.estimate = max(result.estimate, estimate)
        if left:
            remaining[(resource.group, resource.resource)] = left
            finalizers.update(held)
    result.conditions.content_totals(remaining, finalizers)
    return result


def _delete_resource(provider, resource: ContentResource, namespace: str):
    """``deleteAllContentForGroupVersionResource``: ``(estimate, objects left, their
    finalizers counted)``; raises ``ContentError``."""
    supported = ("deletecollection" in resource.verbs
                 and provider.delete_collection(resource, namespace))
    if not supported:
        for item in (provider.list(resource, namespace) if "list" in resource.verbs
                     else None) or []:
            provider.delete(resource, namespace, item["metadata"]["name"])
    items = provider.list(resource, namespace) if "list" in resource.verbs else None
    if not items:
        return 0, 0, collections.Counter()
    held = collections.Counter(finalizer for item in items
                               for finalizer in item["metadata"].get("finalizers") or [])
    if held:
        return FINALIZER_ESTIMATE, len(items), held
    raise ContentError(f"unexpected items still remain in namespace: {namespace} for gvr: "
                       f"{resource}")


class NamespaceController(Controller):
    """Finish the deletion of terminating namespaces (see module docstring)."""

    name = "namespace"
    interval = 0.25

    def __init__(self, server, finalize_registry, status_registry):
        self.server = server
        self.finalize_registry = finalize_registry
        self.status_registry = status_registry
        self.manage = status_registry.field_manager(MANAGER, "status")
        self.local = LocalContent(server)
        #: namespace -> (monotonic time of the next attempt, last delay, what was
        #: discovered then), after a failed pass.
        self._retry: dict[str, tuple[float, float, tuple]] = {}

    def sync(self) -> None:
        namespaces = self.server.registries[("", "namespaces")]
        terminating = set()
        now = time.monotonic()
        discovered = None
        for namespace in namespaces.list("")["items"]:
            meta = namespace["metadata"]
            if not (meta.get("deletionTimestamp") and FINALIZER in (
                    (namespace.get("spec") or {}).get("finalizers") or [])):
                continue
            terminating.add(meta["name"])
            if discovered is None:
                discovered = discover(self.providers())
            retry = self._retry.get(meta["name"])
            if retry is not None and now < retry[0] and retry[2] == _signature(discovered):
                continue
            self._finish(namespace, discovered)
        for name in set(self._retry) - terminating:
            del self._retry[name]

    def providers(self) -> list:
        return [self.local, *self.server.namespace_content]

    def _finish(self, namespace: dict, discovered) -> None:
        name = namespace["metadata"]["name"]
        result = delete_all_content(self.providers(), name, discovered)
        # Always: a condition that was bad and is fine now says so.
        self._update_conditions(name, result.conditions)
        if result.errors:
            _, delay, _ = self._retry.get(name, (0.0, 0.0, ()))
            delay = min(MAX_RETRY_DELAY, max(self.interval, delay * 2))
            self._retry[name] = (time.monotonic() + delay, delay, _signature(discovered))
            log.info("namespace %s: deletion of its content failed (retried in %.2gs): %s",
                     name, delay, "; ".join(result.errors))
            return
        self._retry.pop(name, None)
        if result.estimate:
            return  # objects held by finalizers: look again at the next pass
        try:
            self.finalize_registry.guaranteed_update(
                "", name, lambda ns: _without_kubernetes_finalizer(ns))
            log.info("namespace %s finalized", name)
        except errors.NotFound:
            pass

    def _update_conditions(self, name: str, conditions: ConditionUpdater) -> None:
        def mutate(namespace):
            if not conditions.update(namespace):
                raise _Unchanged
            return namespace

        try:
            self.status_registry.guaranteed_update("", name, mutate, manage=self.manage)
        except (_Unchanged, errors.NotFound):
            pass
        except errors.StatusError as err:
            log.info("couldn't update status condition for namespace %r: %s", name,
                     err.message)


def _signature(discovered) -> tuple:
    found, failures = discovered
    return (frozenset(resource for _, resource in found), frozenset(failures.items()))


class _Unchanged(Exception):
    """The conditions are as they were: nothing to write."""


def _without_kubernetes_finalizer(namespace: dict) -> dict:
    spec = namespace.setdefault("spec", {})
    spec["finalizers"] = [f for f in spec.get("finalizers") or [] if f != FINALIZER]
    return namespace
