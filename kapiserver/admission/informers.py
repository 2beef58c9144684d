"""Informers: one worker's copy of a resource's objects, kept current from the watch cache.

Upstream's admission plugins read listers: informer caches that a list and a watch keep
up to date, so that admitting a pod reads PriorityClasses and LimitRanges from memory and
never calls the API. Here each server (each worker) loads a resource once from the store
and then has the watch cache hand it every later write under the resource's key prefix
(``Watcher.deliver``, called by the cache's feed as it reads the log). Reads are dict
lookups; before answering, a read waits (briefly) until the cache has seen the store's
latest revision, so a request sees what an earlier request wrote, whichever worker
served that one — something upstream's informers do not promise but a client expects
from one server (``kubectl create -f`` of a PriorityClass and a pod that names it).

Objects handed out are the cached ones: callers must not change them (copy first).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from contextvars import ContextVar

log = logging.getLogger(__name__)

#: Seconds a read waits for the watch cache to reach the store's latest revision.
SYNC_TIMEOUT = 1.0
#: Within ``caught_up_once``: the ids of the watch caches that reached, in this block, a
#: revision read from the store after the block began. Private to the request's greenlet
#: or thread.
_CAUGHT_UP: ContextVar[set | None] = ContextVar("kapiserver.informers.caught_up",
                                               default=None)


@contextlib.contextmanager
def caught_up_once(caches: set | None = None):
    """Informer reads in the block sync with the store once per watch cache rather than
    once each (``_CAUGHT_UP``): the revision read first is already past every write
    made before the block began, which is all a read must see (a request's admission
    wraps its plugins in it). ``caches``, a set kept from an earlier block of the same
    request (its other admission phase), carries what that block already did."""
    token = _CAUGHT_UP.set(set() if caches is None else caches)
    try:
        yield
    finally:
        _CAUGHT_UP.reset(token)


def catch_up(server, storage, what: str) -> None:
    """Wait (at most ``SYNC_TIMEOUT``) until ``server``'s watch cache has every write the
    store had made when called: one look at the store's revision, or none inside a
    ``caught_up_once`` block that already looked. ``what`` names the caller in the log."""
    cache = server.watch_cache
    caught_up = _CAUGHT_UP.get()
    if caught_up is not None and id(cache) in caught_up:
        return
    # Concurrent requests share one look at the store's revision (the read cache's
    # barrier: each waits for a look that began after it arrived, just as good).
    reads = getattr(cache, "reads", None)
    if reads is not None and cache.store is storage:
        target = reads.barrier.revision()
    else:
        target = storage.current_revision()
    if cache.revision < target and not cache.wait_for(target, SYNC_TIMEOUT):
        log.warning("%s: watch cache behind revision %d after %.1fs", what, target,
                    SYNC_TIMEOUT)
    if caught_up is not None:
        caught_up.add(id(cache))


class Informer:
    """The objects of one resource (``(group, resource)``), by namespace and name."""

    def __init__(self, server, group: str, resource: str):
        self.server = server
        self.group = group
        self.resource = resource
        #: namespace ("" for cluster-scoped objects) -> name -> object
        self._objects: dict[str, dict[str, dict]] = {}
        self._watcher = None
        self._lock = threading.Lock()
        self._load_lock = threading.Lock()

    # -- feed ----------------------------------------------------------------------------------

    @property
    def registry(self):
        """The resource's ``RegistryStore``, or None when this server does not serve it."""
        return self.server.registries.get((self.group, self.resource))

    def _ensure_loaded(self, registry) -> None:
        watcher = self._watcher
        if watcher is not None and not watcher.closed:
            return
        with self._load_lock:
            watcher = self._watcher
            if watcher is not None and not watcher.closed:
                return
            if watcher is not None:
                log.info("informer %s: watch ended (%s); reloading", self._name,
                         watcher.close_reason)
            self._load(registry)

    def _load(self, registry) -> None:
        def snapshot(kvs) -> dict:
            objects: dict[str, dict[str, dict]] = {}
            for obj in registry.decode_many(kvs):
                meta = obj.get("metadata") or {}
                objects.setdefault(meta.get("namespace", ""), {})[meta.get("name", "")] = obj
            return objects

        def install(objects: dict) -> None:
            with self._lock:
                self._objects = objects

        self._watcher = self.server.watch_cache.list_and_follow(
            registry.spec.key_prefix(), snapshot, install,
            lambda event: self._apply(registry, event), storage=registry.storage, settle=3.0)

    def _apply(self, registry, event) -> None:
        namespace, name = self._split(registry, event.key)
        if name is None:
            return
        obj = None
        if event.value is not None:
            try:
                obj = registry.decode(event.value, event.revision)
            except Exception:  # one bad object must not stop the feed for the rest
                log.exception("informer %s: cannot decode %s", self._name, event.key)
                return
        with self._lock:
            if obj is not None:
                self._objects.setdefault(namespace, {})[name] = obj
                return
            names = self._objects.get(namespace)
            if names is not None:
                names.pop(name, None)
                if not names:
                    del self._objects[namespace]

    @staticmethod
    def _split(registry, key: str) -> tuple[str, str | None]:
        rest = key[len(registry.spec.key_prefix()):]
        parts = rest.split("/")
        if registry.spec.namespaced:
            return (parts[0], parts[1]) if len(parts) == 2 else ("", None)
        return ("", parts[0]) if len(parts) == 1 else ("", None)

    @property
    def _name(self) -> str:
        return f"{self.resource}.{self.group}" if self.group else self.resource

    def sync(self) -> bool:
        """Bring this informer up to the store's latest revision (bounded wait); False when
        the resource is not served here (the informer then holds nothing)."""
        registry = self.registry
        if registry is None:
            return False
        self._ensure_loaded(registry)
        catch_up(self.server, registry.storage, f"informer {self._name}")
        return True

    # -- reading -------------------------------------------------------------------------------

    def get(self, namespace: str, name: str) -> dict | None:
        """The object, or None (``namespace`` is "" for a cluster-scoped resource)."""
        if not self.sync():
            return None
        with self._lock:
            return self._objects.get(namespace, {}).get(name)

    def list(self, namespace: str | None = None) -> list[dict]:
        """The objects of ``namespace`` (None: of every namespace), ordered by namespace
        and name as the store lists them."""
        if not self.sync():
            return []
        with self._lock:
            objects = self._objects
            if namespace is not None:
                names = objects.get(namespace, {})
                return [names[name] for name in sorted(names)]
            return [names[name] for ns in sorted(objects) for names in (objects[ns],)
                    for name in sorted(names)]


class SharedInformers:
    """The informers of one server, one per resource, shared by every plugin that reads it
    (upstream's ``SharedInformerFactory``)."""

    def __init__(self, server):
        self.server = server
        self._informers: dict[tuple[str, str], Informer] = {}
        self._lock = threading.Lock()

    def informer(self, group: str, resource: str) -> Informer:
        """The informer of ``(group, resource)``, created (not loaded) on first use."""
        key = (group, resource)
        informer = self._informers.get(key)
        if informer is None:
            with self._lock:
                informer = self._informers.setdefault(key, Informer(self.server, group,
                                                                    resource))
        return informer


def informers_for(server) -> SharedInformers:
    """The server's one ``SharedInformers``, created on first use (state lives on the server
    object, so that two servers in one process do not share it)."""
    informers = server.__dict__.get("admission_informers")
    if informers is None:
        informers = server.__dict__.setdefault("admission_informers", SharedInformers(server))
    return informers
