"""WatchCache: one event feed per worker, fanned out to every watcher in memory.

A single background loop follows the store's events: a store with a push feed
(``event_stream``: etcd's watch) is followed as it delivers, restarted from the last
revision when it breaks; otherwise the loop reads the event log (``Store.events``) —
woken at once by writes made in this worker, and every ``interval`` seconds for writes
made by other workers or hosts. It keeps the recent events in a ring buffer (bounded in events and in
bytes of values: a worker keeps a window of recent history, not a copy of the store; a
watch from before it reads the older events from the store), and hands each event to
the watchers whose key prefix it matches, and to ``reads`` (``storage.readcache``: the
indexes GET and LIST are served from). Watchers never touch the database; a watcher that
falls ``max_pending`` events behind is closed (as upstream closes a blocked watcher), so a
slow client never stalls the others. Plain Python: ``threading`` primitives, which the
gevent worker turns into greenlet ones.
"""

from __future__ import annotations

import collections
import logging
import threading

from .interface import Compacted
from .readcache import ReadCache

log = logging.getLogger(__name__)


class TooOldResourceVersion(Exception):
    """The watch asks for events that are no longer available (a 410 for the client)."""

    def __init__(self, requested: int, oldest: int):
        super().__init__(f"too old resource version: {requested} ({oldest})")
        self.requested = requested
        self.oldest = oldest


class Watcher:
    """One watch: the events after its start revision under ``prefix``, in order.

    ``get(timeout)`` returns the pending events (possibly none after ``timeout``);
    ``closed`` is set when the cache ended it (overflow, resync, shutdown) and
    ``close_reason`` says why. A watcher given a ``deliver`` function (once nothing is
    pending) has each later event handed to it by the feed instead: the direct write
    path of ``endpoints.watchsink``.
    """

    def __init__(self, cache: "WatchCache", prefix: str, max_pending: int,
                 after_revision: int = 0):
        self.cache = cache
        self.prefix = prefix
        self.max_pending = max_pending
        #: The watch's start: a cache that has not read that far yet still hands over the
        #: events up to it, which the watcher skips.
        self.after_revision = after_revision
        self.pending: collections.deque = collections.deque()
        self.ready = threading.Event()
        self.closed = False
        self.close_reason = ""
        self.deliver = None

    def push(self, event) -> None:
        if self.closed or event.revision <= self.after_revision:
            return
        if self.deliver is not None:
            try:
                self.deliver(event)
            except Exception:  # one watch's failure must not stop the feed for the rest
                log.exception("delivering a watch event failed")
                self.close("delivering an event failed")
            return
        if len(self.pending) >= self.max_pending:
            self.close("watcher fell too far behind")
            return
        self.pending.append(event)
        self.ready.set()

    def get(self, timeout: float) -> list:
        if not self.pending and not self.closed:
            self.ready.wait(timeout)
        self.ready.clear()
        events = list(self.pending)
        self.pending.clear()
        return events

    def close(self, reason: str = "") -> None:
        if not self.closed:
            self.closed = True
            self.close_reason = reason
            self.ready.set()
            self.cache.remove(self)


class WatchCache:
    """The worker's window on the store's event log (see the module docstring)."""

    def __init__(self, store, interval: float = 0.02, capacity: int = 10_000,
                 max_pending: int = 10_000, peers=None, max_bytes: int = 8 * 1024 * 1024):
        self.store = store
        #: ``PeerWakeups`` of the other workers on this host, or None (poll only).
        self.peers = peers
        self.interval = interval
        self.max_pending = max_pending
        self.buffer: collections.deque = collections.deque(maxlen=capacity)
        #: Bytes of the values (and previous values) the buffer holds, at most ``max_bytes``.
        self.buffer_bytes = 0
        self.max_bytes = max_bytes
        self.revision = store.current_revision()
        self.watchers: set[Watcher] = set()
        # Reentrant: a watcher closed while events are dispatched removes itself.
        self.lock = threading.RLock()
        self.wake = threading.Event()
        self.progress = threading.Condition(self.lock)
        self.stopped = False
        #: (revision, key) -> per-event work shared by every watcher (decoded objects, lines).
        self.memo: collections.OrderedDict = collections.OrderedDict()
        self.memo_size = 256
        #: GET and LIST from memory, fed by this feed (``storage.readcache``).
        self.reads = ReadCache(self)
        self.thread = threading.Thread(target=self._run, name="watch-cache", daemon=True)
        self.thread.start()
        if peers is not None:
            threading.Thread(target=self._listen, name="watch-cache-wakeups",
                             daemon=True).start()

    # -- the feed ------------------------------------------------------------------------------

    def notify(self) -> None:
        """Read the log now rather than at the next tick."""
        self.wake.set()

    def written(self) -> None:
        """A write happened in this process: read the log now, and so should the peers."""
        self.wake.set()
        if self.peers is not None:
            self.peers.notify_peers()

    def _listen(self) -> None:
        while not self.stopped:
            if self.peers.wait(1.0):
                self.wake.set()

    def _run(self) -> None:
        if getattr(self.store, "event_stream", None) is not None:
            self._follow_stream()
            return
        while not self.stopped:
            self.wake.wait(self.interval)
            self.wake.clear()
            try:
                while not self.stopped and self._poll():
                    pass
            except Exception:  # the feed must survive a transient storage failure
                log.exception("watch cache feed failed; retrying")

    def _poll(self) -> bool:
        """Read one batch of events; True when there may be more right away."""
        try:
            events = self.store.events(self.revision, 1000)
        except Compacted:
            self._resync()
            return False
        if not events:
            return False
        with self.lock:
            apply = self.reads.apply
            for event in events:
                self._buffer(event)
                apply(event)
                for watcher in list(self.watchers):
                    if event.key.startswith(watcher.prefix):
                        watcher.push(event)
                self.revision = event.revision
            self.progress.notify_all()
        return len(events) == 1000

    def _follow_stream(self) -> None:
        """Follow the store's push feed; after a break, start again from ``revision``."""
        failures = 0
        while not self.stopped:
            try:
                self._stream = stream = self.store.event_stream(self.revision)
            except Exception:
                log.exception("watch cache: cannot start the store's event stream")
                self.wake.wait(min(0.1 * 2 ** failures, 2.0))
                failures += 1
                continue
            resumed_after = self.revision
            try:
                for events, revision in stream:
                    failures = 0
                    self._deliver(events, revision, resumed_after)
                    if self.stopped:
                        break
            except Compacted:
                self._resync()
            except Exception as err:  # a broken stream: resume from the last revision
                if not self.stopped:
                    log.warning("watch cache: event stream ended (%s); resuming after "
                                "revision %d", err, self.revision)
                    self.wake.wait(min(0.1 * 2 ** failures, 2.0))
                    failures += 1
            finally:
                stream.close()

    def _deliver(self, events, revision: int, resumed_after: int) -> None:
        with self.lock:
            for event in events:
                # One revision may carry several events (a lease expiring deletes all of
                # its keys at once): skip only what came before this stream started.
                if event.revision <= resumed_after:
                    continue
                self._buffer(event)
                self.reads.apply(event)
                for watcher in list(self.watchers):
                    if event.key.startswith(watcher.prefix):
                        watcher.push(event)
                self.revision = event.revision
            if revision > self.revision:
                self.revision = revision
            self.progress.notify_all()

    def _buffer(self, event) -> None:
        buffer = self.buffer
        if len(buffer) == buffer.maxlen:
            self.buffer_bytes -= _size(buffer[0])
        buffer.append(event)
        self.buffer_bytes += _size(event)
        while self.buffer_bytes > self.max_bytes and len(buffer) > 1:
            self.buffer_bytes -= _size(buffer.popleft())

    def _resync(self) -> None:
        """The log was compacted past us: every watcher must start over (410 on resume)."""
        with self.lock:
            self.revision = self.store.current_revision()
            self.buffer.clear()
            self.buffer_bytes = 0
            self.reads.reset()
            for watcher in list(self.watchers):
                watcher.close("the watch cache was compacted past its position")
            self.progress.notify_all()

    # -- watching ------------------------------------------------------------------------------

    def wait_for(self, revision: int, timeout: float) -> bool:
        """Wait until the cache has seen ``revision``; False on timeout."""
        if self.revision >= revision:
            return True
        self.notify()
        with self.lock:
            return self.progress.wait_for(lambda: self.revision >= revision, timeout)

    def list_and_follow(self, prefix: str, snapshot, install, apply, storage=None,
                        settle: float = 0.0) -> Watcher:
        """Read ``prefix`` from the store once, then follow it: upstream's list-then-watch of
        an informer, with nothing missed or applied twice in between.

        ``snapshot(kvs)`` turns the listed ``KeyValue`` s into the caller's state (outside
        any lock: it may decode thousands of objects); ``install(state)`` puts it in place
        and ``apply(event)`` takes each later event, both under the cache's lock, in order
        (``apply`` is called by the feed: it must be quick and must not raise). ``storage``
        is the store to list (the cache's own by default); ``settle`` is how long to wait
        first for the cache to reach the store's revision, so the watch starts from the
        ring buffer rather than from a read of the store's history. The returned
        ``Watcher`` is ``closed`` once the feed ended it: list and follow again."""
        storage = storage if storage is not None else self.store
        revision = storage.current_revision()
        if settle:
            self.wait_for(revision, settle)
        page = storage.list(prefix, revision=revision)
        state = snapshot(page.items)
        watcher = self.watch(prefix, page.revision)
        with self.lock:
            install(state)
            for event in list(watcher.pending):  # replayed since the listing
                apply(event)
            watcher.pending.clear()
            watcher.deliver = apply
        return watcher

    def watch(self, prefix, after_revision: int) -> Watcher:
        """Start a watcher receiving every event under ``prefix`` after ``after_revision``.

        ``prefix`` is a key prefix or a tuple of them (``str.startswith``'s rule).

        Events older than the ring buffer are read from the store; raise
        ``TooOldResourceVersion`` when the store has compacted them away.
        """
        # History the store compacted away is gone for watchers too, even if buffered
        # here: every worker must answer the same resourceVersion the same way.
        compacted = self.store.compacted_revision()
        if after_revision < compacted - 1:
            raise TooOldResourceVersion(after_revision, compacted)
        with self.lock:
            oldest_buffered = self.buffer[0].revision - 1 if self.buffer else self.revision
            if after_revision >= oldest_buffered:
                replay = [e for e in self.buffer if e.revision > after_revision]
            else:
                replay = self._history(after_revision)
            watcher = Watcher(self, prefix, self.max_pending, after_revision)
            for event in replay:
                if event.key.startswith(prefix):
                    watcher.push(event)
            self.watchers.add(watcher)
            return watcher

    def _history(self, after_revision: int) -> list:
        """Events from the store between ``after_revision`` and the cache's position."""
        events, cursor = [], after_revision
        try:
            while cursor < self.revision:
                batch = self.store.events(cursor, 1000)
                if not batch:
                    break
                batch = [e for e in batch if e.revision <= self.revision]
                events.extend(batch)
                if not batch:
                    break
                cursor = batch[-1].revision
        except Compacted as err:
            raise TooOldResourceVersion(after_revision, err.compacted) from None
        return events

    def shared(self, event) -> dict:
        """A dict shared by all watchers for ``event``: compute an event's decoding or
        encoding once, not once per watcher (the fan-out's main cost)."""
        # By revision and key: one revision may carry several events (etcd deletes the
        # keys of an expired lease at one revision).
        memo_key = (event.revision, event.key)
        entry = self.memo.get(memo_key)
        if entry is None:
            entry = self.memo[memo_key] = {}
            while len(self.memo) > self.memo_size:
                self.memo.popitem(last=False)
        return entry

    def remove(self, watcher: Watcher) -> None:
        with self.lock:
            self.watchers.discard(watcher)

    def close(self) -> None:
        """End every watcher and stop the feed; once this returns the store is not in use
        by the cache (closing a SQLite connection a thread still reads crashes)."""
        self.stopped = True
        self.wake.set()
        stream = getattr(self, "_stream", None)
        if stream is not None:
            stream.close()
        with self.lock:
            watchers = list(self.watchers)
        for watcher in watchers:
            watcher.close("the server is shutting down")
        if threading.current_thread() is not self.thread:
            self.thread.join(10)


def _size(event) -> int:
    return len(event.value or b"") + len(event.prev_value or b"")
