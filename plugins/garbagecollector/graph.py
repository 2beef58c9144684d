"""The dependency graph: every object's uid, owners and dependents, built from changes.

Upstream's ``GraphBuilder`` (``pkg/controller/garbagecollector/graph_builder.go``): each
observed object is a ``Node`` keyed by uid, holding its identity (apiVersion, kind,
namespace, name, uid), its owner references and the nodes that name it as owner — never
the object itself. An owner referenced before it is observed is a *virtual* node, whose
existence the collector verifies. Changes put nodes on two queues: ``attempt_to_delete``
(dependents whose owners may be gone, owners waiting for their dependents, virtual nodes
to verify) and ``attempt_to_orphan`` (owners deleted with the ``orphan`` finalizer). A
dependent naming an owner in another namespace is reported with upstream's
``OwnerRefInvalidNamespace`` event.
"""

from __future__ import annotations

import collections
import heapq
import sys
import threading
import time
from typing import NamedTuple

from kapiserver.apimachinery.validation import (FINALIZER_DELETE_DEPENDENTS,
                                                FINALIZER_ORPHAN_DEPENDENTS)

ADD, UPDATE, DELETE = "add", "update", "delete"


class OwnerRef(NamedTuple):
    """One ``metav1.OwnerReference`` (``controller`` and ``block`` are None when unset)."""

    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool | None = None
    block: bool | None = None

    def coordinates(self) -> tuple:
        return (self.api_version, self.kind, self.name, self.uid)


class Identity(NamedTuple):
    """upstream's ``objectReference``: an object's coordinates and namespace."""

    api_version: str
    kind: str
    name: str
    uid: str
    namespace: str = ""

    def coordinates(self) -> tuple:
        return (self.api_version, self.kind, self.name, self.uid)

    def __str__(self) -> str:
        return (f"[{self.api_version}/{self.kind}, namespace: {self.namespace}, name: "
                f"{self.name}, uid: {self.uid}]")


def _text(value) -> str:
    # One copy of each name, uid, kind... however many objects repeat it (an owner's
    # coordinates in each of its dependents): the graph's memory is mostly strings.
    return sys.intern(value if isinstance(value, str) else str(value or ""))


def owner_refs(meta: dict) -> tuple[OwnerRef, ...]:
    """The owner references of an object's metadata (malformed entries skipped)."""
    refs = meta.get("ownerReferences")
    if not isinstance(refs, list):
        return ()
    result = []
    for ref in refs:
        if isinstance(ref, dict) and isinstance(ref.get("uid"), str) and ref["uid"]:
            controller, block = ref.get("controller"), ref.get("blockOwnerDeletion")
            result.append(OwnerRef(_text(ref.get("apiVersion")), _text(ref.get("kind")),
                                   _text(ref.get("name")), _text(ref["uid"]),
                                   controller if isinstance(controller, bool) else None,
                                   block if isinstance(block, bool) else None))
    return tuple(result)


class Observed(NamedTuple):
    """What a change says of an object: all the graph keeps of it."""

    identity: Identity
    owners: tuple
    being_deleted: bool
    orphan: bool  # has the ``orphan`` finalizer
    foreground: bool  # has the ``foregroundDeletion`` finalizer

    @classmethod
    def from_meta(cls, api_version: str, kind: str, meta: dict) -> "Observed":
        finalizers = meta.get("finalizers")
        finalizers = finalizers if isinstance(finalizers, list) else ()
        return cls(Identity(_text(api_version), _text(kind), _text(meta.get("name")),
                            _text(meta.get("uid")), _text(meta.get("namespace"))),
                   owner_refs(meta), bool(meta.get("deletionTimestamp")),
                   FINALIZER_ORPHAN_DEPENDENTS in finalizers,
                   FINALIZER_DELETE_DEPENDENTS in finalizers)


#: The dependents of a node that has none (most have none: a set each would cost more
#: than the rest of the node).
NO_DEPENDENTS = frozenset()


class Node:
    """One object (or virtual owner) of the graph."""

    __slots__ = ("identity", "owners", "dependents", "virtual", "being_deleted",
                 "deleting_dependents", "orphan", "foreground", "key")

    def __init__(self, identity: Identity, owners: tuple = (), virtual: bool = False):
        self.identity = identity
        self.owners = owners
        self.dependents: set[Node] | frozenset = NO_DEPENDENTS
        self.virtual = virtual
        self.being_deleted = False
        self.deleting_dependents = False
        #: The GC finalizers last observed (a transition is their arrival).
        self.orphan = False
        self.foreground = False
        #: The storage key of a stored object (its deletion event names only the key).
        self.key = None

    @property
    def uid(self) -> str:
        return self.identity.uid

    def add_dependent(self, node: "Node") -> None:
        if self.dependents is NO_DEPENDENTS:
            self.dependents = set()
        self.dependents.add(node)

    def remove_dependent(self, node: "Node") -> None:
        if self.dependents:
            self.dependents.discard(node)
            if not self.dependents:
                self.dependents = NO_DEPENDENTS

    def blocking_dependents(self) -> list["Node"]:
        """Dependents whose reference to this node has ``blockOwnerDeletion``."""
        return [dep for dep in self.dependents
                if any(ref.uid == self.uid and ref.block for ref in dep.owners)]

    def __repr__(self) -> str:
        return f"Node({self.identity}{', virtual' if self.virtual else ''})"


class WorkQueue:
    """Uids to process, each once however often added (first in, first out), and retries
    after a failure with a delay that doubles per key (client-go's rate-limited queue)."""

    FIRST_DELAY = 0.005
    MAX_DELAY = 30.0

    def __init__(self):
        self._ready: collections.OrderedDict = collections.OrderedDict()
        self._later: list = []  # heap of (due, seq, key)
        self._delays: dict = {}
        self._seq = 0

    def add(self, key) -> None:
        self._ready[key] = None

    def add_rate_limited(self, key) -> float:
        delay = min(self.MAX_DELAY, self._delays.get(key, self.FIRST_DELAY / 2) * 2)
        self._delays[key] = delay
        self._seq += 1
        heapq.heappush(self._later, (time.monotonic() + delay, self._seq, key))
        return delay

    def forget(self, key) -> None:
        self._delays.pop(key, None)

    def pop(self):
        """The next key due, or None."""
        now = time.monotonic()
        while self._later and self._later[0][0] <= now:
            self._ready[heapq.heappop(self._later)[2]] = None
        if not self._ready:
            return None
        return self._ready.popitem(last=False)[0]

    def next_due(self) -> float | None:
        """Seconds until the first delayed key is due (None: none waits)."""
        if self._ready:
            return 0.0
        return max(0.0, self._later[0][0] - time.monotonic()) if self._later else None

    def __len__(self) -> int:
        return len(self._ready) + len(self._later)

    def clear(self) -> None:
        self._ready.clear()
        self._later.clear()
        self._delays.clear()


class AbsentOwnerCache:
    """Identities verified absent (upstream's ``ReferenceCache``, an LRU of 500); the
    collector's workers share it."""

    def __init__(self, size: int = 500):
        self.size = size
        self._entries: collections.OrderedDict = collections.OrderedDict()
        self._lock = threading.Lock()

    def add(self, identity: Identity) -> None:
        with self._lock:
            self._entries[identity] = None
            self._entries.move_to_end(identity)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def __contains__(self, identity: Identity) -> bool:
        with self._lock:
            if identity in self._entries:
                self._entries.move_to_end(identity)
                return True
            return False

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


def references_diffs(old: tuple, new: tuple):
    """``referencesDiffs``: owner references added, removed and changed (old, new)."""
    old_by_uid = {ref.uid: ref for ref in old}
    added, changed = [], []
    for ref in new:
        previous = old_by_uid.pop(ref.uid, None)
        if previous is None:
            added.append(ref)
        elif previous != ref:
            changed.append((previous, ref))
    return added, list(old_by_uid.values()), changed


def partition_dependents(dependents, identity: Identity):
    """``partitionDependents``: dependents whose reference to ``identity.uid`` matches its
    coordinates (and namespace), and those with one that does not (a dependent can be in
    both)."""
    matching, nonmatching = [], []
    namespaced = bool(identity.namespace)
    coordinates = identity.coordinates()
    for dep in dependents:
        match = mismatch = False
        if namespaced and identity.namespace != dep.identity.namespace:
            mismatch = True
        else:
            for ref in dep.owners:
                if ref.uid == identity.uid:
                    if ref.coordinates() == coordinates:
                        match = True
                    else:
                        mismatch = True
        if match:
            matching.append(dep)
        if mismatch:
            nonmatching.append(dep)
    return matching, nonmatching


def _sort_key(identity: Identity) -> tuple:
    # ``referenceLessThan``: kind, apiVersion, namespace, name, uid.
    return (identity.kind, identity.api_version, identity.namespace, identity.name, identity.uid)


def alternate_owner_identity(deps, absent: Identity) -> Identity | None:
    """``getAlternateOwnerIdentity``: another identity the dependents give ``absent.uid``
    — the first following ``absent`` in upstream's order, else the first."""
    cluster_scoped = not absent.namespace
    seen = {absent}
    first = following = None
    for dep in deps:
        for ref in dep.owners:
            if ref.uid != absent.uid:
                continue
            if ref.coordinates() == absent.coordinates() and (
                    cluster_scoped or absent.namespace == dep.identity.namespace):
                continue
            candidate = Identity(*ref.coordinates(), dep.identity.namespace)
            if cluster_scoped and (candidate.api_version, candidate.kind) == (
                    absent.api_version, absent.kind):
                candidate = candidate._replace(namespace="")
            if candidate in seen:
                continue
            seen.add(candidate)
            if first is None or _sort_key(candidate) < _sort_key(first):
                first = candidate
            if _sort_key(absent) < _sort_key(candidate) and (
                    following is None or _sort_key(candidate) < _sort_key(following)):
                following = candidate
    return following or first


class Graph:
    """The graph and its queues (see the module docstring). Not thread-safe: one thread
    (the collector's) applies changes and processes the queues.

    ``report(dependent, owner_ref)`` is called for a dependent naming an owner observed
    in another namespace (the collector records the event).
    """

    def __init__(self, report=lambda node, ref: None):
        self.nodes: dict[str, Node] = {}
        self.by_key: dict[str, Node] = {}
        self.attempt_to_delete = WorkQueue()
        self.attempt_to_orphan = WorkQueue()
        self.absent = AbsentOwnerCache()
        self.report = report

    def clear(self) -> None:
        self.nodes.clear()
        self.by_key.clear()
        self.attempt_to_delete.clear()
        self.attempt_to_orphan.clear()
        self.absent.clear()

    # -- changes -------------------------------------------------------------------------

    def observe(self, seen: Observed, key: str | None = None) -> None:
        """An add or update of an object, as a monitor observed it."""
        uid = seen.identity.uid
        if not uid:
            return
        if key is not None:
            previous = self.by_key.get(key)
            if previous is not None and previous.uid != uid:
                # Deleted and made again under the same name between two observations.
                self.observe_deleted(key)
        existing = self.nodes.get(uid)
        if existing is not None and existing.virtual:
            self._mark_observed(existing, seen.identity)
        if existing is None:
            node = Node(seen.identity, seen.owners)
            node.being_deleted = seen.being_deleted
            node.deleting_dependents = seen.being_deleted and seen.foreground
            self._set_key(node, key)
            self.nodes[uid] = node
            self._add_dependent_to_owners(node, node.owners)
            self._transitions(None, seen, node)
            return
        if (existing.identity.api_version, existing.identity.kind) != (
                seen.identity.api_version, seen.identity.kind):
            existing.identity = existing.identity._replace(
                api_version=seen.identity.api_version, kind=seen.identity.kind)
        self._set_key(existing, key)
        added, removed, changed = references_diffs(existing.owners, seen.owners)
        if added or removed or changed:
            self._add_unblocked_owners(removed, changed)
            existing.owners = seen.owners
            self._add_dependent_to_owners(existing, added)
            self._remove_dependent_from_owners(existing, removed)
        old = (existing.being_deleted, existing.orphan, existing.foreground)
        if seen.being_deleted:
            existing.being_deleted = True
        self._transitions(old, seen, existing)

    def observe_deleted(self, key: str) -> None:
        """A stored object's deletion, named by its storage key."""
        node = self.by_key.get(key)
        if node is not None:
            self._delete(node, node.identity, virtual=False)

    def observe_deleted_identity(self, identity: Identity) -> None:
        """An object's deletion, as a monitor without storage keys observed it."""
        node = self.nodes.get(identity.uid)
        if node is not None:
            self._delete(node, identity, virtual=False)

    def virtual_delete(self, identity: Identity) -> None:
        """The collector verified that ``identity`` does not exist."""
        node = self.nodes.get(identity.uid)
        if node is not None:
            self._delete(node, identity, virtual=True)

    def forget(self, nodes) -> None:
        """Drop nodes whose resource is no longer watched; their dependents are checked."""
        for node in list(nodes):
            if self.nodes.get(node.uid) is node:
                self._remove(node)
                for dep in node.dependents:
                    self.attempt_to_delete.add(dep.uid)

    # -- upstream's processGraphChanges, piece by piece ------------------------------------

    def _set_key(self, node: Node, key: str | None) -> None:
        if key is not None and node.key != key:
            if node.key is not None and self.by_key.get(node.key) is node:
                del self.by_key[node.key]
            node.key = key
            self.by_key[key] = node

    def _mark_observed(self, node: Node, observed: Identity) -> None:
        if observed != node.identity:
            _, invalid = partition_dependents(node.dependents, observed)
            for dep in invalid:
                if observed.namespace and dep.identity.namespace != observed.namespace:
                    self._report(dep, observed.uid)
                self.attempt_to_delete.add(dep.uid)
            node.identity = observed
        node.virtual = False

    def _report(self, dependent: Node, owner_uid: str) -> None:
        for ref in dependent.owners:
            if ref.uid == owner_uid:
                self.report(dependent, ref)
                return

    def _add_dependent_to_owners(self, node: Node, owners) -> None:
        potentially_invalid = False
        for ref in owners:
            owner = self.nodes.get(ref.uid)
            if owner is None:
                owner = Node(Identity(*ref.coordinates(), node.identity.namespace),
                             virtual=True)
                self.nodes[ref.uid] = owner
                owner.add_dependent(node)
                self.attempt_to_delete.add(ref.uid)
                continue
            owner.add_dependent(node)
            if potentially_invalid:
                continue
            namespaced = bool(owner.identity.namespace)
            if namespaced and owner.identity.namespace != node.identity.namespace:
                if not owner.virtual:
                    self.report(node, ref)
                potentially_invalid = True
            elif ref.coordinates() != owner.identity.coordinates():
                potentially_invalid = True
            elif not namespaced and owner.identity.namespace != node.identity.namespace \
                    and owner.virtual:
                potentially_invalid = True
        if potentially_invalid:
            self.attempt_to_delete.add(node.uid)

    def _remove_dependent_from_owners(self, node: Node, owners) -> None:
        for ref in owners:
            owner = self.nodes.get(ref.uid)
            if owner is not None:
                owner.remove_dependent(node)

    def _add_unblocked_owners(self, removed, changed) -> None:
        unblocked = [ref for ref in removed if ref.block]
        unblocked += [new for old, new in changed if old.block and not new.block]
        for ref in unblocked:
            if ref.uid in self.nodes:
                self.attempt_to_delete.add(ref.uid)

    def _transitions(self, old, seen: Observed, node: Node) -> None:
        node.orphan, node.foreground = seen.orphan, seen.foreground
        if _starts(old, seen.being_deleted, seen.orphan, 1):
            self.attempt_to_orphan.add(node.uid)
            return
        if _starts(old, seen.being_deleted, seen.foreground, 2):
            node.deleting_dependents = True
            for dep in node.dependents:
                self.attempt_to_delete.add(dep.uid)
            self.attempt_to_delete.add(node.uid)

    def _remove(self, node: Node) -> None:
        del self.nodes[node.uid]
        if node.key is not None and self.by_key.get(node.key) is node:
            del self.by_key[node.key]
        self._remove_dependent_from_owners(node, node.owners)

    def _delete(self, existing: Node, deleted: Identity, virtual: bool) -> None:
        remove = True
        if virtual:
            if existing.virtual:
                matching, nonmatching = partition_dependents(existing.dependents, deleted)
                if nonmatching:
                    # Dependents disagree on the owner's coordinates: keep the virtual
                    # node for the others.
                    remove = False
                    if matching:
                        self.absent.add(deleted)
                        for dep in matching:
                            self.attempt_to_delete.add(dep.uid)
                    if existing.identity == deleted:
                        replacement = alternate_owner_identity(nonmatching, deleted)
                        if replacement is not None:
                            existing.identity = replacement
                            self.attempt_to_delete.add_rate_limited(existing.uid)
            elif existing.identity != deleted:
                # The observed object disagrees with the verified absent coordinates.
                remove = False
                matching, _ = partition_dependents(existing.dependents, deleted)
                if matching:
                    self.absent.add(deleted)
                    for dep in matching:
                        self.attempt_to_delete.add(dep.uid)
        if not remove:
            return
        self._remove(existing)
        if existing.dependents:
            self.absent.add(deleted)
        for dep in existing.dependents:
            self.attempt_to_delete.add(dep.uid)
        for ref in existing.owners:
            owner = self.nodes.get(ref.uid)
            if owner is not None and owner.deleting_dependents:
                self.attempt_to_delete.add(owner.uid)


def _starts(old, being_deleted: bool, has: bool, index: int) -> bool:
    """``deletionStartsWithFinalizer``: the object is being deleted with the finalizer
    now, and was not before (``old``: being deleted, orphan, foreground — or None)."""
    if not (being_deleted and has):
        return False
    return old is None or not old[0] or not old[index]
