"""How many seats a request takes (``util/flowcontrol/request``): a LIST one seat per 100
objects it reads (at most its level's maximum, never more than 10), anything else one.

Object counts come from ``ObjectCounts`` (upstream's ``ObjectCountTracker``): counted in the
store per resource, refreshed in the background when older than ``COUNT_TTL``, never on
the request's own time. A write costs one seat: upstream adds seats for the watch events
a write causes (``mutatingWorkEstimator``), which needs every worker's watcher counts per
resource; kapiserver does not estimate them.
"""

from __future__ import annotations

import logging
import math
import threading
import time

from .fairqueuing import WorkEstimate

log = logging.getLogger(__name__)

MINIMUM_SEATS = 1
MAXIMUM_SEATS = 10
OBJECTS_PER_SEAT = 100.0
#: Seconds a resource's object count is used before it is counted again.
COUNT_TTL = 10.0


class ObjectCounts:
    """Objects stored per (group, resource), counted in the background."""

    def __init__(self, server, ttl: float = COUNT_TTL, clock=time.monotonic):
        self.server = server
        self.ttl = ttl
        self.clock = clock
        self._counts: dict[tuple[str, str], tuple[int, float]] = {}
        self._counting: set[tuple[str, str]] = set()

    def get(self, group: str, resource: str) -> int | None:
        """The latest count, or None while none was made (a count is started)."""
        key = (group, resource)
        entry = self._counts.get(key)
        if (entry is None or self.clock() - entry[1] > self.ttl) and key not in self._counting \
                and key in self.server.registries:
            self._counting.add(key)
            threading.Thread(target=self._count, args=(key,), daemon=True,
                             name="apf-object-count").start()
        return None if entry is None else entry[0]

    def count_all(self) -> None:
        """Count every resource now (the ``storage-object-count-tracker-hook``)."""
        for key in list(self.server.registries):
            self._count(key)

    def _count(self, key) -> None:
        try:
            registry = self.server.registries[key]
            page = registry.storage.list(registry.spec.key_prefix(""), limit=1)
            self._counts[key] = (len(page.items) + page.remaining, self.clock())
        except Exception as err:  # the store is down: keep the last count
            log.debug("counting %s failed: %s", key, err)
        finally:
            self._counting.discard(key)


def _positive_int(value: str | None) -> int:
    """A LIST's ``limit`` as ``ListOptions`` converts it (ValueError when it is no
    integer)."""
    if not value:
        return 0
    return int(value)


class WorkEstimator:
    """``WorkEstimatorFunc``: ``estimate(info, args, level) -> WorkEstimate``."""

    def __init__(self, counts: ObjectCounts | None):
        self.counts = counts

    def __call__(self, info, args, level) -> WorkEstimate:
        if info.verb == "list" or (info.verb == "watch" and
                                   args.get("sendInitialEvents") == "true"):
            return WorkEstimate(self._list_seats(info, args, level))
        return WorkEstimate(MINIMUM_SEATS)

    def _list_seats(self, info, args, level) -> int:
        """``listWorkEstimator.estimate``."""
        most = level.max_seats
        if not most or most > MAXIMUM_SEATS:
            most = MAXIMUM_SEATS
        if info.name:
            return MINIMUM_SEATS  # served as a GET by the store
        try:
            limit = _positive_int(args.get("limit"))
        except ValueError:
            return most  # bound to fail validation: as upstream, the most seats
        stored = self.counts.get(info.api_group, info.resource) if self.counts else None
        if stored is None:
            return MINIMUM_SEATS  # an unknown count (upstream's ObjectCountNotFoundErr)
        match = args.get("resourceVersionMatch", "")
        version = args.get("resourceVersion", "")
        exact = limit > 0 and not match and version not in ("", "0")
        from_storage = bool(args.get("continue")) or \
            (match not in ("", "NotOlderThan")) or exact
        bounded = limit if 0 < limit < stored else stored
        if info.verb == "watch" or not from_storage:
            objects = stored
        elif args.get("fieldSelector") or args.get("labelSelector"):
            objects = stored + bounded
        else:
            objects = 2 * bounded
        return min(max(math.ceil(objects / OBJECTS_PER_SEAT), MINIMUM_SEATS), most)
