"""Requests in flight counted across gunicorn workers, for the max-in-flight filter
(``--max-requests-inflight`` and ``--max-mutating-requests-inflight`` are the server's
totals, not each worker's).

Design
------

The gunicorn master makes ``<data-dir>/inflight`` before any worker starts: a few
memory-mapped *slots*, two 64-bit counters each (read-only and mutating requests in
flight). Just before forking a worker it gives it a free slot (``pre_fork``); when a worker
ends, dead or not, it zeroes the slot and frees it (``child_exit``), so requests a killed
worker had in flight stop counting at once.

Each worker writes only its own slot and reads every slot:

* ``try_acquire`` sums the kind's counters over all slots (one ``struct.unpack_from`` of
  the whole file) and, below the limit, stores its own counter plus one; ``release`` stores
  it minus one. A worker keeps its counts in Python integers too, so it never reads its
  own slot back, and each counter has a single writer: no update is ever lost, with no
  lock and no system call.
* The check and the increment are not one atomic step, but a worker's greenlets never
  switch between them, so at most one check per worker is ever in that window: the limit
  may be exceeded by at most ``workers - 1`` requests, for the microseconds two workers
  take to pass their checks together. A file lock would make it exact at the cost of two
  system calls per request, and of a worker stalling whenever the holder of the lock is
  descheduled; an exact limit is not worth that here.
* Stores are aligned 8-byte writes, which x86-64 and arm64 make atomic, so a reader sees
  either the old count or the new one.

Cost on the request path (``tests/unit/test_unit_inflight.py`` measures it, with two
workers' worth of slots): 3.3 µs for an acquire and its release on the shared, busy
2-core development machine, where the same count kept in the process alone takes 1.0 µs;
the cheapest request the server answers takes about a millisecond.

A server built outside gunicorn (tests that build ``APIServer`` in-process) has no slot
and counts in its own process (``LocalCounters``).
"""

from __future__ import annotations

import logging
import mmap
import os
import struct

log = logging.getLogger(__name__)

#: Set in each worker by ``post_fork``: ``<path>:<slot>:<slots>``.
SLOT_ENV = "KAPISERVER_INFLIGHT_SLOT"
READ_ONLY, MUTATING = 0, 1
_SLOT_SIZE = 16


def slot_count(workers: int) -> int:
    """Slots for ``workers``: room for a whole set of replacements (a HUP starts new
    workers before the old ones have finished) and a spare."""
    return 2 * workers + 2


class LocalCounters:
    """In-flight counts of one process (no gunicorn master)."""

    def __init__(self):
        self.counts = [0, 0]

    def try_acquire(self, kind: int, limit: int) -> bool:
        if limit and self.counts[kind] >= limit:
            return False
        self.counts[kind] += 1
        return True

    def release(self, kind: int) -> None:
        self.counts[kind] -= 1

    def total(self, kind: int) -> int:
        return self.counts[kind]


class SharedCounters:
    """In-flight counts of every worker, in the master's file (see the module docstring)."""

    def __init__(self, path: str, slot: int, slots: int):
        fd = os.open(path, os.O_RDWR)
        try:
            self._map = mmap.mmap(fd, slots * _SLOT_SIZE)
        finally:
            os.close(fd)
        self._all = struct.Struct(f"<{2 * slots}q")
        self._one = struct.Struct("<q")
        self._offsets = (slot * _SLOT_SIZE, slot * _SLOT_SIZE + 8)
        self.counts = [0, 0]

    def total(self, kind: int) -> int:
        return sum(self._all.unpack_from(self._map, 0)[kind::2])

    def try_acquire(self, kind: int, limit: int) -> bool:
        if limit and sum(self._all.unpack_from(self._map, 0)[kind::2]) >= limit:
            return False
        count = self.counts[kind] = self.counts[kind] + 1
        self._one.pack_into(self._map, self._offsets[kind], count)
        return True

    def release(self, kind: int) -> None:
        count = self.counts[kind] = self.counts[kind] - 1
        self._one.pack_into(self._map, self._offsets[kind], count)

    def close(self) -> None:
        self._map.close()


def counters():
    """This worker's counters: shared when the gunicorn master gave it a slot."""
    value = os.environ.get(SLOT_ENV, "")
    path, _, rest = value.rpartition(":")
    path, _, slot = path.rpartition(":")
    if path and os.path.exists(path):
        try:
            return SharedCounters(path, int(slot), int(rest))
        except (OSError, ValueError) as err:
            log.warning("in-flight counters: cannot map %s (%s); counting per worker",
                        path, err)
    return LocalCounters()


class Slots:
    """The master's side: the file, and which slot each worker has."""

    def __init__(self, path: str, slots: int):
        self.path = path
        self.slots = slots
        #: The slots given to workers that have not ended (the worker object, which the
        #: master keeps, carries its slot).
        self.used: set[int] = set()

    def create(self) -> None:
        """Make the file, all zeroes (``on_starting``)."""
        with open(self.path, "wb") as f:
            f.write(bytes(self.slots * _SLOT_SIZE))
        os.chmod(self.path, 0o600)

    def pre_fork(self, worker) -> None:
        """In the master, before forking ``worker``: give it a free slot."""
        free = next((s for s in range(self.slots) if s not in self.used), None)
        if free is None:
            log.warning("in-flight counters: no free slot; the new worker counts alone")
        else:
            self.used.add(free)
        worker.kapiserver_inflight_slot = free

    def post_fork(self, worker) -> None:
        """In the new worker: name its slot for the app it is about to build."""
        slot = getattr(worker, "kapiserver_inflight_slot", None)
        if slot is None:
            os.environ.pop(SLOT_ENV, None)
        else:
            os.environ[SLOT_ENV] = f"{self.path}:{slot}:{self.slots}"

    def exited(self, worker) -> None:
        """A worker ended: what it had in flight no longer counts; its slot is free."""
        slot = getattr(worker, "kapiserver_inflight_slot", None)
        if slot is None:
            return
        self.used.discard(slot)
        try:
            with open(self.path, "r+b") as f:
                f.seek(slot * _SLOT_SIZE)
                f.write(bytes(_SLOT_SIZE))
        except OSError as err:
            log.warning("in-flight counters: cannot clear slot %d: %s", slot, err)
