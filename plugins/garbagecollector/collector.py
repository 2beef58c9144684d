"""GarbageCollector: kube-controller-manager's ``garbage-collector-controller``, run by the
elected worker.

It follows every deletable resource (``resources``): stored ones through one watch of the
worker's watch cache on the whole store, each listed once — metadata only — when it
appears in discovery (custom resources come and go with their CRDs); aggregated ones
through the aggregator's proxy (``remote``). Changes build the dependency ``graph``; its
queues drive upstream's workers (``pkg/controller/garbagecollector/garbagecollector.go``):

* ``attempt_to_delete``: a dependent whose owners may all be gone is read live, each owner
  looked up by name and checked by uid (a missing owner, or one with another uid, is gone;
  verified absences are cached); with no owner left it is deleted — in the foreground if
  an owner waits for it and it has dependents itself, else as its own finalizers say
  (background by default) — and the owners that remain lose the references to the gone
  ones. An owner deleted in the foreground (``foregroundDeletion``) keeps the finalizer
  until no dependent blocks it (``blockOwnerDeletion``); a dependent that is itself
  waiting is unblocked first, which resolves dependency cycles.
* ``attempt_to_orphan``: an owner deleted with the ``orphan`` finalizer has its dependents'
  references to it removed, then the finalizer.

Reads go to storage (or through the proxy), never to a copy: the graph only says where to
look. Writes go through the registries as ``kube-controller-manager``'s.
"""

from __future__ import annotations

import collections
import json
import logging
import threading

from kapiserver import errors
from kapiserver.apimachinery.validation import (FINALIZER_DELETE_DEPENDENTS,
                                                FINALIZER_ORPHAN_DEPENDENTS)
from kapiserver.controllers import Controller, concurrently
from kapiserver.controllers.events import EventRecorder
from kapiserver.controllers.remote import RemoteError
from kapiserver.registry.keys import ROOT
from kapiserver.registry.propagation import BACKGROUND, FOREGROUND, ORPHAN
from kapiserver.storage import Compacted
from kapiserver.storage.interface import DELETED

from .graph import Graph, Identity, Node, Observed, owner_refs
from .remote import RemoteChange, RemoteMonitors, RemoteResource
from .resources import (IGNORED, KeyIndex, LocalResource, Unchanged, local_resources,
                        served_kinds)

log = logging.getLogger(__name__)

NAME = "garbage-collector-controller"
LIST_PAGE = 500
#: Items processed at a time, and how many of them concurrently.
BATCH, WORKERS = 64, 16
FORGET, REQUEUE = "forget", "requeue"


class RestMappingError(Exception):
    """An owner's apiVersion and kind name no resource served now (may be transient: a
    CRD not yet established); retried."""

    def __init__(self, api_version: str, kind: str):
        super().__init__(f"unable to get REST mapping for {kind}.{api_version}.")


class _VirtualDeleteEnqueued(Exception):
    """The item is gone: its node left the graph."""


class _NamespacedOwnerOfClusterScoped(Exception):
    """A cluster-scoped object names a namespaced owner: retrying will not help."""


class GarbageCollector(Controller):
    """See the module docstring."""

    name = NAME
    interval = 1.0

    def __init__(self, server):
        self.server = server
        self.recorder = EventRecorder(server, NAME)
        self.graph = Graph(report=self._report_invalid_namespace)
        #: Storage events (and remote monitors' changes) waiting to reach the graph.
        self.changes: collections.deque = collections.deque()
        self._watcher = None
        self._discovery = None
        self._list_revision = 0
        #: storage prefix -> the LocalResource followed there
        self._local: dict[str, LocalResource] = {}
        self._index = KeyIndex([])
        #: (group, version, kind) -> (group, resource), of everything discovery lists
        self._kinds: dict = {}
        #: (group, resource) -> Resource to read and write objects of
        self._resources: dict = {}
        #: The aggregated resources followed through the server's RemoteAPI providers.
        self.remote = RemoteMonitors(getattr(server, "remote_apis", []), self._deliver_remote,
                                     self._leading)
        #: The graph actions of the item a worker thread processes (``_work``).
        self._item = threading.local()

    # -- the manager's entry point -------------------------------------------------------

    def sync(self) -> None:
        if not self._leading():
            return
        if self._watcher is None or self._watcher.closed:
            self._start()
        graph = self.graph
        while not self.server.stopping.is_set() and self._leading():
            if self.server.discovery is not self._discovery:
                self._sync_resources()
            self._drain()
            batch = self._batch(graph.attempt_to_orphan, self._orphan_worker, BATCH)
            batch += self._batch(graph.attempt_to_delete, self._delete_worker,
                                 BATCH - len(batch))
            if not batch:
                if not self.changes:
                    break
                continue
            # The items wait on the store: several at a time, as upstream's 20 workers.
            # Only this thread changes the graph: between the batches.
            results = {}
            concurrently(lambda item: results.__setitem__(item, self._work(*item)), batch,
                         WORKERS)
            for item in batch:
                self._apply(item, *results[item])
        due = [d for d in (graph.attempt_to_delete.next_due(),
                           graph.attempt_to_orphan.next_due()) if d is not None]
        self.interval = max(0.005, min([1.0, *due]))

    @staticmethod
    def _batch(queue, worker, size: int) -> list:
        batch = []
        while len(batch) < size:
            uid = queue.pop()
            if uid is None:
                break
            batch.append((worker, queue, uid))
        return batch

    def _work(self, worker, queue, uid):
        """Run one item in a worker thread: ``(outcome, graph actions)``; the graph is
        only read meanwhile, the actions are applied after the batch."""
        self._item.actions = actions = []
        try:
            return worker(uid), actions
        finally:
            self._item.actions = None

    def _apply(self, item, outcome: str, actions: list) -> None:
        _, queue, uid = item
        for action, argument in actions:
            if action == "virtual-delete":
                self.graph.virtual_delete(argument)
            elif action == "deleted":
                node = self.graph.nodes.get(argument)
                if node is not None:
                    node.being_deleted = True
            else:
                self.graph.attempt_to_delete.add(argument)
        if outcome == REQUEUE:
            queue.add_rate_limited(uid)
        else:
            queue.forget(uid)

    def _leading(self) -> bool:
        manager = getattr(self.server, "controllers", None)
        return manager is None or manager.elector.leading

    def _wake(self) -> None:
        manager = getattr(self.server, "controllers", None)
        if manager is not None:
            manager.wake(self.name)

    # -- following the store ---------------------------------------------------------------

    def _start(self) -> None:
        """Follow the whole store from now on, and (re)build the graph from lists."""
        if self._watcher is not None:
            self._watcher.close()
        self.remote.stop()
        self.graph.clear()
        self.changes.clear()
        self._local.clear()
        cache = self.server.watch_cache
        with cache.lock:
            revision = cache.revision
            self._watcher = watcher = cache.watch(ROOT + "/", revision)
            watcher.deliver = self._deliver
            self.changes.extend(watcher.get(0))
        self._list_revision = revision
        self._discovery = None
        log.info("garbage collector: building the dependency graph")

    def _deliver(self, event) -> None:
        # Called by the watch cache's feed, under its lock: no work here.
        if not self._leading():
            # Another worker leads: stop following; whoever leads here next starts over.
            self._watcher.close()
            return
        self.changes.append(event)
        self._wake()

    def _deliver_remote(self, change) -> None:
        # Called by a remote monitor's thread.
        self.changes.append(change)
        self._wake()

    def _sync_resources(self) -> None:
        """Follow what discovery lists now: list the resources that appeared, forget
        those that went."""
        discovery = self.server.discovery
        self._discovery = discovery
        current = {r.prefix: r for r in local_resources(discovery)}
        gone = [prefix for prefix in self._local if prefix not in current]
        if gone:
            self.graph.forget(node for key, node in list(self.graph.by_key.items())
                              if any(key.startswith(prefix) for prefix in gone))
        for prefix, resource in current.items():
            known = self._local.get(prefix)
            if known is not None:
                known.registry = resource.registry  # a CRD's new store, same objects
                current[prefix] = known
                continue
            self._list(resource, self._list_revision)
        self._list_revision = 0
        self._local = current
        self._index = KeyIndex(current.values())
        self._kinds = served_kinds(discovery)
        followed = self.remote.sync(discovery)
        for key, resource in self._resources.items():
            if isinstance(resource, RemoteResource) and followed.get(key) is not resource:
                self.graph.forget(self.graph.nodes[uid] for uid in resource.uids
                                  if uid in self.graph.nodes)
        self._resources = {(r.group, r.resource): r for r in current.values()}
        self._resources.update(followed)
        log.info("garbage collector: following %d resources, %d objects",
                 len(self._resources), len(self.graph.nodes))

    def _list(self, resource: LocalResource, revision: int) -> None:
        storage, start = resource.registry.storage, ""
        while True:
            try:
                page = storage.list(resource.prefix, revision=revision, limit=LIST_PAGE,
                                    start_key=start)
            except Compacted:
                revision, start = 0, ""
                continue
            revision = page.revision
            for kv in page.items:
                meta = json.loads(kv.value).get("metadata") or {}
                self.graph.observe(Observed.from_meta(resource.api_version, resource.kind,
                                                      meta), kv.key)
            if not page.more:
                break
            start = page.items[-1].key + "\x00"
        resource.listed_at = revision

    def _drain(self) -> None:
        graph, changes, index = self.graph, self.changes, self._index
        while changes:
            event = changes.popleft()
            if isinstance(event, RemoteChange):
                if self.remote.following(event.resource):
                    RemoteMonitors.apply(event, graph)
                continue
            resource = index.find(event.key)
            if resource is None or event.revision <= resource.listed_at:
                continue
            if event.type == DELETED:
                graph.observe_deleted(event.key)
                continue
            try:
                meta = json.loads(event.value).get("metadata") or {}
            except ValueError:
                continue
            graph.observe(Observed.from_meta(resource.api_version, resource.kind, meta),
                          event.key)

    # -- reading and writing objects -----------------------------------------------------

    def resource_for(self, api_version: str, kind: str):
        """The resource of an apiVersion and kind (upstream's REST mapping)."""
        group, _, version = api_version.rpartition("/")
        gr = self._kinds.get((group, version, kind))
        if gr is None:
            raise RestMappingError(api_version, kind)  # retried: discovery may change
        resource = self._resources.get(gr)
        if resource is None:
            # Served but not followed (no list, watch or delete, or ignored): read only.
            registry = self.server.registries.get(gr)
            if registry is None:
                raise RestMappingError(api_version, kind)
            spec = registry.spec
            resource = LocalResource(spec.group, version, spec.resource, kind, spec.namespaced,
                                     registry=registry, prefix=spec.key_prefix())
            self._resources[gr] = resource
        return resource

    def _get(self, identity: Identity) -> dict | None:
        """``getObject``: the live metadata of ``identity`` (None when absent)."""
        resource = self.resource_for(identity.api_version, identity.kind)
        if resource.namespaced and not identity.namespace:
            # Only a cluster-scoped object can name a namespaced owner without namespace.
            raise _NamespacedOwnerOfClusterScoped
        return resource.get(identity.namespace if resource.namespaced else "", identity.name)

    def _update(self, identity: Identity, mutate) -> None:
        resource = self.resource_for(identity.api_version, identity.kind)
        resource.update_meta(identity.namespace if resource.namespaced else "", identity.name,
                             identity.uid, mutate)

    def _delete_object(self, identity: Identity, resource_version: str, owners,
                       policy: str) -> None:
        """``deleteObject``: with uid and resourceVersion preconditions; a conflict where
        the owner references did not change is retried without the resourceVersion."""
        resource = self.resource_for(identity.api_version, identity.kind)
        namespace = identity.namespace if resource.namespaced else ""
        try:
            resource.delete(namespace, identity.name, identity.uid, resource_version, policy)
        except errors.Conflict:
            live = resource.get(namespace, identity.name)
            if live is None:
                return  # gone: what was asked
            if (live.get("uid") != identity.uid or live.get("resourceVersion") ==
                    resource_version or owner_refs(live) != owners):
                raise
            resource.delete(namespace, identity.name, identity.uid, "", policy)

    # -- attemptToDelete ---------------------------------------------------------------------

    def _delete_worker(self, uid: str) -> str:
        node = self.graph.nodes.get(uid)
        if node is None:
            return FORGET
        try:
            self._attempt_to_delete(node)
        except (_VirtualDeleteEnqueued, _NamespacedOwnerOfClusterScoped):
            return FORGET
        except RestMappingError as err:
            log.debug("garbage collector: %s: %s", node.identity, err)
            return REQUEUE
        except Exception as err:  # retried: a failure must not stop the others
            log.warning("garbage collector: error syncing item %s: %s", node.identity,
                        getattr(err, "message", None) or err,
                        exc_info=not isinstance(err, (errors.StatusError, RemoteError)))
            return REQUEUE
        # Not observed yet: look again until it is, or is verified absent.
        return REQUEUE if node.virtual else FORGET

    def _attempt_to_delete(self, node: Node) -> None:
        """``attemptToDeleteItem``."""
        if node.being_deleted and not node.deleting_dependents:
            return  # gone soon: its dependents are looked at when it is
        latest = self._get(node.identity)
        if latest is None or latest.get("uid") != node.uid:
            self._virtual_delete(node.identity)
        if node.deleting_dependents:
            self._process_deleting_dependents(node)
            return
        refs = owner_refs(latest)
        if not refs:
            return
        solid, dangling, waiting = self._classify(node, refs)
        if solid:
            if not dangling and not waiting:
                return
            gone = {ref.uid for ref in dangling + waiting}
            self._remove_owner_refs(node.identity, gone)
            return
        finalizers = latest.get("finalizers") or ()
        if waiting and node.dependents:
            if any(dep.deleting_dependents for dep in node.dependents):
                # Its owner and one of its dependents both wait: unblock its references
                # so that the cycle ends, then delete it in the foreground.
                self._unblock_owner_refs(node.identity)
            policy = FOREGROUND
        elif FINALIZER_ORPHAN_DEPENDENTS in finalizers:
            policy = ORPHAN
        elif FINALIZER_DELETE_DEPENDENTS in finalizers:
            policy = FOREGROUND
        else:
            policy = BACKGROUND
        log.debug("garbage collector: deleting %s (%s)", node.identity, policy)
        try:
            self._delete_object(node.identity, latest.get("resourceVersion", ""), refs, policy)
        except errors.NotFound:
            self._virtual_delete(node.identity)
        # Gone, or going (held by finalizers): until its event arrives, an owner waiting
        # for it (that asks again as each dependent goes) need not have it read again.
        self._item.actions.append(("deleted", node.uid))

    def _virtual_delete(self, identity: Identity) -> None:
        self._item.actions.append(("virtual-delete", identity))
        raise _VirtualDeleteEnqueued

    def _classify(self, node: Node, refs):
        """``classifyReferences``: solid, dangling and waiting-for-dependents owners."""
        solid, dangling, waiting = [], [], []
        for ref in refs:
            gone, owner = self._is_dangling(ref, node)
            if gone:
                dangling.append(ref)
            elif owner.get("deletionTimestamp") and FINALIZER_DELETE_DEPENDENTS in (
                    owner.get("finalizers") or ()):
                waiting.append(ref)
            else:
                solid.append(ref)
        return solid, dangling, waiting

    def _is_dangling(self, ref, node: Node):
        """``isDangling``: whether the owner is gone, and its live metadata if not."""
        absent = self.graph.absent
        key = Identity(*ref.coordinates())
        if key in absent:
            return True, None
        namespace = node.identity.namespace
        key = key._replace(namespace=namespace)
        if key in absent:
            return True, None
        resource = self.resource_for(ref.api_version, ref.kind)
        if not resource.namespaced:
            key = key._replace(namespace="")
        if not namespace and resource.namespaced:
            raise _NamespacedOwnerOfClusterScoped
        owner = resource.get(namespace if resource.namespaced else "", ref.name)
        if owner is None or owner.get("uid") != ref.uid:
            absent.add(key)
            return True, None
        return False, owner

    def _process_deleting_dependents(self, node: Node) -> None:
        """``processDeletingDependentsItem``: the owner loses ``foregroundDeletion`` once
        no dependent blocks it; until then the blocking ones are deleted."""
        blocking = node.blocking_dependents()
        if not blocking:
            self._remove_finalizer(node, FINALIZER_DELETE_DEPENDENTS)
            return
        for dep in blocking:
            if not dep.deleting_dependents:
                self._item.actions.append(("attempt-to-delete", dep.uid))

    # -- attemptToOrphan ---------------------------------------------------------------------

    def _orphan_worker(self, uid: str) -> str:
        owner = self.graph.nodes.get(uid)
        if owner is None:
            return FORGET
        try:
            for dep in list(owner.dependents):
                try:
                    self._remove_owner_refs(dep.identity, {uid})
                except errors.NotFound:
                    pass
            self._remove_finalizer(owner, FINALIZER_ORPHAN_DEPENDENTS)
        except Exception as err:
            log.warning("garbage collector: orphaning the dependents of %s failed: %s",
                        owner.identity, getattr(err, "message", None) or err,
                        exc_info=not isinstance(err, (errors.StatusError, RestMappingError,
                                                      RemoteError)))
            return REQUEUE
        return FORGET

    # -- patches -----------------------------------------------------------------------------

    def _remove_owner_refs(self, identity: Identity, uids: set) -> None:
        def mutate(meta: dict) -> None:
            refs = meta.get("ownerReferences") or []
            kept = [ref for ref in refs if not (isinstance(ref, dict) and ref.get("uid") in uids)]
            if len(kept) == len(refs):
                raise Unchanged
            if kept:
                meta["ownerReferences"] = kept
            else:
                meta.pop("ownerReferences", None)

        self._update(identity, mutate)

    def _unblock_owner_refs(self, identity: Identity) -> None:
        def mutate(meta: dict) -> None:
            changed = False
            for ref in meta.get("ownerReferences") or []:
                if isinstance(ref, dict) and ref.get("blockOwnerDeletion") is True:
                    ref["blockOwnerDeletion"] = False
                    changed = True
            if not changed:
                raise Unchanged

        self._update(identity, mutate)

    def _remove_finalizer(self, node: Node, finalizer: str) -> None:
        def mutate(meta: dict) -> None:
            finalizers = meta.get("finalizers") or []
            if finalizer not in finalizers:
                raise Unchanged
            kept = [f for f in finalizers if f != finalizer]
            if kept:
                meta["finalizers"] = kept
            else:
                meta.pop("finalizers", None)

        try:
            self._update(node.identity, mutate)
        except errors.NotFound:
            pass

    # -- events ------------------------------------------------------------------------------

    def _report_invalid_namespace(self, dependent: Node, ref) -> None:
        """``reportInvalidNamespaceOwnerRef``: upstream's event on the dependent."""
        identity = dependent.identity
        invalid = Identity(ref.api_version, ref.kind, ref.name, ref.uid, identity.namespace)
        self.recorder.event(
            {"kind": identity.kind, "namespace": identity.namespace, "name": identity.name,
             "uid": identity.uid, "apiVersion": identity.api_version},
            "Warning", "OwnerRefInvalidNamespace",
            f"ownerRef {invalid} does not exist in namespace {json.dumps(identity.namespace)}")


__all__ = ["GarbageCollector", "IGNORED", "NAME", "RestMappingError"]
