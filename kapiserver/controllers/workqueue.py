"""WorkQueue: the keys a controller owes work for, fed by watches on storage prefixes.

What client-go's informers and workqueue give a kube-controller-manager controller, inside
the elected worker: each storage event under a followed prefix is turned into work keys
by the controller's own function, at once (the watch cache's feed hands events over as
it reads them, so a change made through any worker of any host reaches the leader within
the feed's tick), and the controller is woken to process them. A key that failed is
retried after a delay that doubles up to a bound (``retry``). The first ``start`` (and any
after a watch ended: the log compacted past it) asks for a full resync, as an informer's
initial list does; so does ``resync_due`` every ``resync`` seconds.
"""

from __future__ import annotations

import logging
import threading
import time

from . import Controller

log = logging.getLogger(__name__)

#: Delay before a failed key is retried the first time; it doubles up to ``MAX_DELAY``
#: (client-go's default controller rate limiter starts at 5 ms and caps at 1000 s; here the
#: cap is short, so that a key fails loudly but recovers soon after what held it back).
FIRST_DELAY = 0.05
MAX_DELAY = 30.0


class WorkQueue:
    """Work keys from events under ``routes``' prefixes (see the module docstring).

    ``routes`` maps a storage prefix to ``keys(event) -> iterable``; it runs in the watch
    cache's feed, under its lock, so it must be quick (read the key, not the database).
    ``wake()`` is called when keys arrive (the controller manager's wake-up).
    """

    def __init__(self, cache, routes: dict, wake, resync: float = 300.0):
        self.cache = cache
        self.routes = dict(routes)
        self.wake = wake
        self.resync = resync
        self._lock = threading.Lock()
        self._keys: set = set()
        #: key -> (monotonic time it is due again, its last delay)
        self._failed: dict = {}
        self._watchers: list = []
        self._next_resync = 0.0

    def start(self) -> bool:
        """Follow the prefixes if not already doing so; True when the caller must now
        enqueue everything (the watches are new, so events before them were missed)."""
        if self._watchers and not any(w.closed for w in self._watchers):
            return False
        for watcher in self._watchers:
            watcher.close()
        revision = self.cache.revision
        self._watchers = []
        for prefix, route in self.routes.items():
            watcher = self.cache.watch(prefix, revision)
            watcher.deliver = self._deliverer(route)
            for event in watcher.get(0):  # pushed before ``deliver`` was set
                watcher.deliver(event)
            self._watchers.append(watcher)
        self._next_resync = time.monotonic() + self.resync
        return True

    def resync_due(self) -> bool:
        """True once every ``resync`` seconds: time to enqueue everything again."""
        if time.monotonic() < self._next_resync:
            return False
        self._next_resync = time.monotonic() + self.resync
        return True

    def close(self) -> None:
        for watcher in self._watchers:
            watcher.close()
        self._watchers = []

    def _deliverer(self, route):
        def deliver(event) -> None:
            keys = list(route(event))
            if keys:
                self.add(*keys)
                self.wake()
        return deliver

    def add(self, *keys) -> None:
        with self._lock:
            self._keys.update(keys)

    def take(self) -> list:
        """Every key waiting now (those failed whose delay has passed included),
        sorted; each is gone from the queue until added again."""
        now = time.monotonic()
        with self._lock:
            due = [key for key, (when, _) in self._failed.items() if when <= now]
            keys = self._keys.union(due)
            self._keys.clear()
        return sorted(keys, key=repr)

    def done(self, key) -> None:
        """``key`` was processed: forget its failures."""
        with self._lock:
            self._failed.pop(key, None)

    def retry(self, key) -> float:
        """``key`` failed: try it again later; returns the delay."""
        with self._lock:
            _, delay = self._failed.get(key, (0.0, 0.0))
            delay = min(MAX_DELAY, delay * 2 if delay else FIRST_DELAY)
            self._failed[key] = (time.monotonic() + delay, delay)
        return delay

    def waiting(self) -> int:
        """How many keys wait (failed ones included)."""
        with self._lock:
            return len(self._keys | set(self._failed))


class QueueController(Controller):
    """A controller driven by a ``WorkQueue``: ``routes()`` says which events make which
    keys, ``all_keys()`` what a full resync enqueues, ``process(key)`` does the work for
    one key (raising to have it retried later).

    ``sync`` processes what is queued and returns; the manager calls it again when keys
    arrive (``wake``), and every ``interval`` seconds for retries and resyncs.
    """

    interval = 1.0
    #: Seconds between two full resyncs.
    resync = 300.0

    def __init__(self, server):
        self.server = server
        self.queue = WorkQueue(server.watch_cache, self.routes(), self._wake, self.resync)

    def routes(self) -> dict:
        raise NotImplementedError

    def all_keys(self):
        raise NotImplementedError

    def process(self, key) -> None:
        raise NotImplementedError

    def _wake(self) -> None:
        # The manager exists once every controller is built: look it up per event.
        manager = getattr(self.server, "controllers", None)
        if manager is not None:
            manager.wake(self.name)

    def _leading(self) -> bool:
        manager = getattr(self.server, "controllers", None)
        return manager is None or manager.elector.leading

    def sync(self) -> None:
        if self.queue.start() or self.queue.resync_due():
            self.queue.add(*self.all_keys())
        keys = self.queue.take()
        for index, key in enumerate(keys):
            if self.server.stopping.is_set() or not self._leading():
                self.queue.add(*keys[index:])  # for whoever leads next time here
                return
            try:
                self.process(key)
            except Exception as err:
                delay = self.queue.retry(key)
                log.warning("%s: syncing %r failed (retried in %.2gs): %s", self.name, key,
                            delay, getattr(err, "message", None) or err,
                            exc_info=not hasattr(err, "message"))
            else:
                self.queue.done(key)
