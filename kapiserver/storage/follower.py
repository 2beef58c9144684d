"""PrefixFollower: keep one worker's in-memory view of a storage prefix current.

Servers that route by stored objects (the CRDs apiextensions serves, the APIServices the
aggregator proxies to) load every object under a prefix, then follow changes through the
worker's watch cache, so a write made through any worker reaches every worker.
``refresh()`` lets a request that finds nothing catch up at once (bounded) instead of
waiting for the feed: a client that has just written through another worker may ask this
one next.
"""

from __future__ import annotations

import json
import logging
import threading

log = logging.getLogger(__name__)

#: How long ``refresh()`` waits for the watch cache to reach the store's revision.
CATCH_UP_WAIT = 1.0


class PrefixFollower:
    """Call ``apply(key, obj_or_None)`` for every object under ``prefix``, then for every
    change; ``publish()`` after each batch that changed something. Both run under
    ``lock``; ``listeners`` are called with each changed key after it is released."""

    def __init__(self, server, prefix: str, apply, publish, name: str,
                 defaults: dict | None = None, convert=None):
        self.server = server
        self.prefix = prefix
        self.apply = apply
        self.publish = publish
        self.name = name
        #: Fields set on every decoded object when absent (kind, apiVersion).
        self.defaults = dict(defaults or {})
        #: ``convert(obj) -> obj`` of each decoded object: a stored form another server
        #: wrote (kube-apiserver's v1beta1 CRDs) as this one serves it.
        self.convert = convert
        self.lock = threading.RLock()
        self.loaded = threading.Event()
        self.revision = 0
        self.watcher = None
        self.listeners: list = []
        #: The keys applied and not deleted since.
        self.keys: set[str] = set()

    def decode(self, value: bytes, revision: int) -> dict:
        obj = json.loads(value)
        obj.setdefault("metadata", {})["resourceVersion"] = str(revision)
        for key, default in self.defaults.items():
            obj.setdefault(key, default)
        return self.convert(obj) if self.convert is not None else obj

    def start(self, server=None) -> None:
        """Load everything and follow changes (usable as a post-start hook)."""
        self._load()
        self.loaded.set()
        threading.Thread(target=self._follow, name=self.name, daemon=True).start()

    def _load(self) -> None:
        storage, cache = self.server.storage, self.server.watch_cache
        with self.lock:
            revision = storage.current_revision()
            cache.wait_for(revision, 3.0)
            self.watcher = cache.watch(self.prefix, revision)
            present = set()
            for kv in storage.list(self.prefix, revision=revision).items:
                self.apply(kv.key, self.decode(kv.value, kv.mod_revision))
                present.add(kv.key)
            for key in self.keys - present:  # deleted while the watch was down
                self.apply(key, None)
            self.keys = present
            self.revision = revision
            self.publish()

    def _follow(self) -> None:
        stopping = self.server.stopping
        while not stopping.is_set():
            watcher = self.watcher
            watcher.ready.wait(1.0)
            try:
                self._drain()
                if watcher.closed and not stopping.is_set():
                    log.info("%s: watch ended (%s); reloading", self.name,
                             watcher.close_reason)
                    self._load()
            except Exception:
                log.exception("%s: feed failed", self.name)
                stopping.wait(1.0)

    def _drain(self) -> None:
        with self.lock:
            changed = []
            for event in self.watcher.get(0):
                value = (self.decode(event.value, event.revision)
                         if event.value is not None else None)
                self.apply(event.key, value)
                if value is None:
                    self.keys.discard(event.key)
                else:
                    self.keys.add(event.key)
                changed.append(event.key)
                self.revision = max(self.revision, event.revision)
            if changed:
                self.publish()
        for key in changed:
            for listener in list(self.listeners):
                try:
                    listener(key)
                except Exception:
                    log.exception("%s: listener failed", self.name)

    def refresh(self) -> None:
        """Catch up with the store now, waiting at most ``CATCH_UP_WAIT`` seconds."""
        if not self.loaded.wait(CATCH_UP_WAIT):
            return
        current = self.server.storage.current_revision()
        if current <= self.revision:
            return
        if self.server.watch_cache.wait_for(current, CATCH_UP_WAIT):
            self._drain()
            with self.lock:
                self.revision = max(self.revision, current)
