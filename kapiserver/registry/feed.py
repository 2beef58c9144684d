"""ResourceFeed: one cluster-scoped resource's objects, decoded, kept current from the
watch cache — what the server's own consumers of configuration objects read (flow
control's FlowSchemas and priority levels, admission policies and their bindings,
webhook configurations), as upstream's read informers."""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)


class ResourceFeed:
    """The objects of one cluster-scoped resource by name, listed once and then followed
    (``WatchCache.list_and_follow``).

    ``replaced(objects)`` is called when a listing put every object in place, and
    ``updated(name, obj)`` (``obj`` None for a deletion) after each later change; both run
    under the watch cache's lock, so they must be quick. An object that cannot be decoded
    is logged and skipped (the feed goes on). Once the cache ended the watch (``live()``
    is False), ``load()`` lists again.
    """

    def __init__(self, server, what: str, registry=None, replaced=None, updated=None):
        #: Whose watch cache to follow (the server's, once it has one).
        self.server = server
        #: Names the feed in the log ("admission policies", "priority and fairness").
        self.what = what
        self.registry = registry
        self.replaced = replaced
        self.updated = updated
        #: name -> decoded object; replaced whole by a listing (never changed while read
        #: elsewhere than under the cache's lock).
        self.objects: dict[str, dict] = {}
        self.watcher = None

    def live(self) -> bool:
        return self.watcher is not None and not self.watcher.closed

    def load(self, registry=None) -> None:
        """List and follow the resource of ``registry`` (the last one given by default)."""
        if registry is not None:
            self.registry = registry
        registry = self.registry
        prefix = registry.spec.key_prefix()

        def snapshot(kvs) -> dict:
            return {(obj.get("metadata") or {}).get("name", ""): obj
                    for obj in registry.decode_many(kvs)}

        self.watcher = self.server.watch_cache.list_and_follow(
            prefix, snapshot, self._install, lambda event: self._apply(prefix, event),
            storage=registry.storage)

    def _install(self, objects: dict) -> None:
        self.objects = objects
        if self.replaced is not None:
            self.replaced(objects)

    def _apply(self, prefix: str, event) -> None:
        name = event.key[len(prefix):]
        obj = None
        if event.value is None:
            self.objects.pop(name, None)
        else:
            try:
                obj = self.registry.decode(event.value, event.revision)
            except Exception:  # one bad object must not stop the feed
                log.exception("%s: cannot decode %s", self.what, event.key)
                return
            self.objects[name] = obj
        if self.updated is not None:
            self.updated(name, obj)
