"""The resources the garbage collector follows, as discovery lists them, and how it reads,
deletes and updates their objects.

Upstream's collector watches every resource discovery lists with the ``list``, ``watch``
and ``delete`` verbs (``GetDeletableResources``), events excepted, and finds an owner's
resource from its reference's apiVersion and kind (the REST mapper). Here the same list
comes from the server's own discovery: the resources stored here (built-in kinds, those
of plugins, custom resources while their CRD is served) are ``LocalResource``s, read
straight from storage — metadata only — and written through their registries, without a
network hop; the resources of aggregated APIServices are ``RemoteResource``s
(``remote.py``), reached through the aggregator's proxy.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from kapiserver import errors
from kapiserver.registry.keys import ROOT
from kapiserver.registry.store import Preconditions
from kapiserver.storage import KeyNotFound

#: Resources the collector never follows (upstream's ``DefaultIgnoredResources``).
IGNORED = frozenset({("", "events"), ("events.k8s.io", "events")})
DELETABLE = ("delete", "list", "watch")
#: The field manager of the collector's writes, as kube-controller-manager's appear.
MANAGER = "kube-controller-manager"


class Unchanged(Exception):
    """An update found nothing to change: nothing is written."""


@dataclass(eq=False)
class Resource:
    """One followed resource; ``version`` is the one the collector observes it in (its
    group's preferred version that has it)."""

    group: str
    version: str
    resource: str
    kind: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def get(self, namespace: str, name: str) -> dict | None:
        """The object's metadata (``resourceVersion`` set), or None when it is absent."""
        raise NotImplementedError

    def delete(self, namespace: str, name: str, uid: str, resource_version: str,
               policy: str) -> None:
        """Delete with the uid (and resourceVersion) as preconditions and the propagation
        policy; raises ``errors.NotFound`` or ``errors.Conflict``."""
        raise NotImplementedError

    def update_meta(self, namespace: str, name: str, uid: str, mutate) -> None:
        """Change the object's metadata: ``mutate(meta)`` edits it in place (raising
        ``Unchanged`` when nothing is to change); retried on conflicts. Raises
        ``errors.NotFound`` when the object, with that uid, is gone."""
        raise NotImplementedError


@dataclass(eq=False)
class LocalResource(Resource):
    """A resource stored by this server, read from storage and written through its
    registry (see the module docstring)."""

    registry: object = None
    prefix: str = ""
    #: Where the resource's events are delivered from: the revision its objects were
    #: listed at (events up to it are in the list already).
    listed_at: int = 0
    _manage: object = field(default=None, repr=False)

    def get(self, namespace, name):
        registry = self.registry
        try:
            kv = registry.storage.get(registry.spec.key(namespace, name))
        except KeyNotFound:
            return None
        meta = json.loads(kv.value).get("metadata") or {}
        meta["resourceVersion"] = str(kv.mod_revision)
        return meta

    def delete(self, namespace, name, uid, resource_version, policy):
        self.registry.delete(namespace, name, Preconditions(uid, resource_version),
                             options={"propagationPolicy": policy})

    def update_meta(self, namespace, name, uid, mutate):
        if self._manage is None:
            self._manage = self.registry.field_manager(MANAGER)

        def update(obj: dict) -> dict:
            meta = obj.setdefault("metadata", {})
            if meta.get("uid") != uid:
                raise errors.NotFound.for_object(self.group, self.resource, name)
            mutate(meta)
            return obj

        try:
            self.registry.guaranteed_update(namespace, name, update, manage=self._manage)
        except Unchanged:
            pass


def local_resources(discovery, ignored=IGNORED) -> list[LocalResource]:
    """The stored resources discovery lists that can be listed, watched and deleted, once
    each (one storage prefix each), in their group's preferred version."""
    found, prefixes = [], set()
    for group in discovery.groups:
        for version, paths in group.versions.items():
            for path, handler in paths.items():
                spec, store = getattr(handler, "spec", None), getattr(handler, "store", None)
                if "/" in path or spec is None or store is None:
                    continue
                if (spec.group, spec.resource) in ignored:
                    continue
                if not all(verb in getattr(handler, "verbs", ()) for verb in DELETABLE):
                    continue
                prefix = store.spec.key_prefix()
                if prefix in prefixes:
                    continue
                prefixes.add(prefix)
                found.append(LocalResource(spec.group, version, spec.resource, spec.kind,
                                           spec.namespaced, registry=store, prefix=prefix))
    return found


def served_kinds(discovery) -> dict[tuple[str, str, str], tuple[str, str]]:
    """``(group, version, kind) -> (group, resource)`` of every resource discovery lists
    here or for an aggregated server: what an owner reference can name."""
    kinds = {}
    for group in discovery.all_groups:
        if getattr(group, "remote", False):
            for version, entries in group.versions.items():
                for entry in entries or ():
                    kind = (entry.get("responseKind") or {}).get("kind")
                    if kind and entry.get("resource"):
                        kinds.setdefault((group.name, version, kind),
                                         (group.name, entry["resource"]))
            continue
        for version, paths in group.versions.items():
            for path, handler in paths.items():
                spec = getattr(handler, "spec", None)
                if "/" not in path and spec is not None:
                    kinds.setdefault((spec.group, version, spec.kind), (spec.group, spec.resource))
    return kinds


class KeyIndex:
    """Find the local resource of a storage key: ``/registry/<prefix>/...`` where the
    prefix is one segment (``configmaps``) or two (``services/specs``,
    ``example.com/widgets``)."""

    def __init__(self, resources):
        self.by_prefix = {r.prefix: r for r in resources}

    def find(self, key: str) -> LocalResource | None:
        if not key.startswith(ROOT + "/"):
            return None
        first = key.find("/", len(ROOT) + 1)
        if first < 0:
            return None
        second = key.find("/", first + 1)
        if second >= 0:
            found = self.by_prefix.get(key[:second + 1])
            if found is not None:
                return found
        return self.by_prefix.get(key[:first + 1])
