"""Compactor: the server compacts its own store on a schedule (upstream's etcd compactor).

Every ``interval`` seconds it compacts to the revision it saw one interval earlier, so
roughly one interval of history stays available for watches resuming from an older
``resourceVersion`` (upstream's default: 5 minutes). Several workers or hosts may run it:
compaction is idempotent.
"""

from __future__ import annotations

import logging
import threading

log = logging.getLogger(__name__)


class Compactor:
    """Compact ``store`` every ``interval`` seconds until ``stopping`` is set."""

    def __init__(self, store, interval: float, stopping: threading.Event):
        self.store = store
        self.interval = interval
        self.stopping = stopping
        self.thread = None

    def start(self) -> None:
        if self.interval > 0:
            self.thread = threading.Thread(target=self._run, name="compactor", daemon=True)
            self.thread.start()

    def _run(self) -> None:
        previous = self.store.current_revision()
        while not self.stopping.wait(self.interval):
            try:
                current = self.store.current_revision()
                if previous > self.store.compacted_revision():
                    self.store.compact(previous)
                    log.debug("compacted storage to revision %d", previous)
                previous = current
            except Exception:  # a failed compaction is retried at the next tick
                log.exception("storage compaction failed")
