"""The config consumer (``apf_controller.go``'s informers and status writer): keeps one
worker's ``FlowControl`` current with the stored FlowSchemas and
PriorityLevelConfigurations, and writes each FlowSchema's ``Dangling`` condition.

Both resources are listed once, then the worker's watch cache hands over every later
write (``registry.feed.ResourceFeed``, as for the admission policies' source); a change
is digested on a background greenlet, never on a request's time. Every worker digests
the same objects and comes to the same conditions; each writes a condition only when the
stored object does not have it yet, so a second worker usually finds nothing left to
write.
"""

from __future__ import annotations

import logging
import threading

from .. import errors
from ..registry.feed import ResourceFeed
from ..registry.store import now_rfc3339

log = logging.getLogger(__name__)

GROUP = "flowcontrol.apiserver.k8s.io"
FLOW_SCHEMAS, PRIORITY_LEVELS = "flowschemas", "prioritylevelconfigurations"
#: The field manager of the status conditions, upstream's.
STATUS_MANAGER = "api-priority-and-fairness-config-consumer-v1"


class ConfigConsumer:
    """Feeds ``flow_control`` from the server's store (see the module docstring)."""

    def __init__(self, server, flow_control):
        self.server = server
        self.flow_control = flow_control
        self.feeds: dict[str, ResourceFeed] = {}
        self._scheduled = False
        self._status_store = None

    def start(self, server=None) -> None:
        """Load both resources and digest them (the ``priority-and-fairness-config-consumer``
        post-start hook). Without the flowcontrol API only the mandatory objects apply."""
        for resource in (PRIORITY_LEVELS, FLOW_SCHEMAS):
            registry = self.server.registries.get((GROUP, resource))
            if registry is not None:
                self.feeds[resource] = ResourceFeed(
                    self.server, "priority and fairness", registry,
                    updated=lambda name, obj: self.changed())
        self.refresh()

    def refresh(self) -> None:
        """Reload any feed whose watch ended, then digest."""
        for feed in self.feeds.values():
            if not feed.live():
                try:
                    feed.load()
                except Exception as err:
                    log.warning("priority and fairness: cannot load %s: %s",
                                feed.registry.spec.resource, err)
        self.digest()

    def changed(self) -> None:
        """A feed changed: digest soon, on a greenlet of its own."""
        if not self._scheduled:
            self._scheduled = True
            threading.Thread(target=self.digest, daemon=True, name="apf-config").start()

    def digest(self) -> None:
        self._scheduled = False
        levels = list(self.feeds[PRIORITY_LEVELS].objects.values()) \
            if PRIORITY_LEVELS in self.feeds else []
        schemas = list(self.feeds[FLOW_SCHEMAS].objects.values()) \
            if FLOW_SCHEMAS in self.feeds else []
        updates = self.flow_control.apply_config(levels, schemas)
        for schema, condition in updates:
            try:
                self._write_condition(schema, condition)
            except errors.NotFound:
                pass  # deleted meanwhile
            except Exception as err:
                log.warning("priority and fairness: cannot set the Dangling condition of "
                            "FlowSchema %s: %s", (schema.get("metadata") or {}).get("name"),
                            err)

    def _store(self):
        if self._status_store is None:
            from ..registry.store import RegistryStore

            registry = self.server.registries[(GROUP, FLOW_SCHEMAS)]
            self._status_store = RegistryStore(
                registry.spec, registry.strategy.status_strategy(), registry.storage,
                self.server.watch_cache.written)
        return self._status_store

    def _write_condition(self, schema: dict, condition: dict) -> None:
        store = self._store()
        name = (schema.get("metadata") or {}).get("name", "")
        current = store.get("", name)
        wanted = dict(condition)

        def same(existing) -> bool:
            return all(existing.get(k) == wanted[k] for k in ("status", "reason", "message"))

        for existing in (current.get("status") or {}).get("conditions") or ():
            if isinstance(existing, dict) and existing.get("type") == wanted["type"] and \
                    same(existing):
                return  # another worker wrote it

        def mutate(obj: dict) -> dict:
            status = obj.setdefault("status", {})
            conditions = [c for c in status.get("conditions") or ()
                          if not (isinstance(c, dict) and c.get("type") == wanted["type"])]
            conditions.append({"type": wanted["type"], "status": wanted["status"],
                               "lastTransitionTime": now_rfc3339(),
                               "reason": wanted["reason"], "message": wanted["message"]})
            status["conditions"] = conditions
            return obj

        store.guaranteed_update("", name, mutate,
                                manage=store.field_manager(STATUS_MANAGER, subresource="status"))
