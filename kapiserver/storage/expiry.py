"""Expirer: deletes keys whose ``ttl`` ran out (upstream relies on etcd leases for this).

Every ``interval`` seconds it asks the store to expire what is due; a deletion is an
ordinary write, so watchers see ``DELETED``. Several workers or hosts may run it: a key
is deleted once, at the revision its lease was taken for.
"""

from __future__ import annotations

import logging
import threading

log = logging.getLogger(__name__)


class Expirer:
    """Call ``store.expire()`` every ``interval`` seconds until ``stopping`` is set."""

    def __init__(self, store, interval: float, stopping: threading.Event):
        self.store = store
        self.interval = interval
        self.stopping = stopping

    def start(self) -> None:
        threading.Thread(target=self._run, name="expirer", daemon=True).start()

    def _run(self) -> None:
        while not self.stopping.wait(self.interval):
            try:
                count = self.store.expire()
                if count:
                    log.debug("deleted %d expired key(s)", count)
            except Exception:  # retried at the next tick
                log.exception("expiring storage keys failed")
