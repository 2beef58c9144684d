"""EventRecorder: the ``v1`` Events a controller inside the server reports, as client-go's
recorder writes them (``tools/record``).

An event is named ``<object name>.<nanoseconds in hex>`` in the object's namespace (the
``default`` namespace for a cluster-scoped object), with ``source.component`` and
``reportingComponent`` naming the controller; the same event again (same object, type,
reason and message) counts up ``count`` and moves ``lastTimestamp`` on the one already
written, as the recorder's correlator does. Events are written straight to the events
registry; a controller's events never make its work fail.
"""

from __future__ import annotations

import collections
import logging
import time

from .. import errors

log = logging.getLogger(__name__)

#: How many recent events are remembered for counting repeats.
REMEMBERED = 4096


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class EventRecorder:
    """Record events about objects for ``component`` (see the module docstring)."""

    def __init__(self, server, component: str):
        self.server = server
        self.component = component
        self._recent: collections.OrderedDict = collections.OrderedDict()

    def event(self, involved: dict, type_: str, reason: str, message: str) -> None:
        """Record an event about ``involved`` (an ``ObjectReference``: kind, namespace,
        name, uid, apiVersion)."""
        registry = self.server.registries.get(("", "events"))
        if registry is None:
            return
        namespace = involved.get("namespace") or "default"
        key = (tuple(sorted(involved.items())), type_, reason, message)
        try:
            name = self._recent.get(key)
            if name is not None and self._count_again(registry, namespace, name):
                self._recent.move_to_end(key)
                return
            now = _now()
            created = registry.create({
                "kind": "Event", "apiVersion": "v1",
                "metadata": {"name": f"{involved.get('name', '')}.{time.time_ns():x}",
                             "namespace": namespace},
                "involvedObject": {k: involved[k] for k in
                                   ("kind", "namespace", "name", "uid", "apiVersion")
                                   if involved.get(k)},
                "reason": reason, "message": message,
                "source": {"component": self.component},
                "firstTimestamp": now, "lastTimestamp": now, "count": 1, "type": type_,
                "eventTime": None, "reportingComponent": self.component,
                "reportingInstance": ""}, namespace)
        except errors.StatusError as err:
            log.warning("%s: cannot record event %s about %s/%s: %s", self.component, reason,
                        namespace, involved.get("name"), err.message)
            return
        self._recent[key] = created["metadata"]["name"]
        while len(self._recent) > REMEMBERED:
            self._recent.popitem(last=False)

    @staticmethod
    def _count_again(registry, namespace: str, name: str) -> bool:
        def again(event: dict) -> dict:
            event["count"] = int(event.get("count") or 1) + 1
            event["lastTimestamp"] = _now()
            return event

        try:
            registry.guaranteed_update(namespace, name, again)
        except errors.NotFound:
            return False  # expired (--event-ttl): write a new one
        return True
