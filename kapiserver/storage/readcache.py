"""ReadCache: GET and LIST served from each worker's memory, consistent, on any backend.

What is kept
------------
Per resource prefix (``/registry/configmaps/``), an ``Index``: every live key's
``KeyValue`` (its stored value, create and mod revision) and the keys in order. It is
built on the first read of the resource (one store read at the watch cache's revision)
and from then on fed by the watch cache's event feed, under the cache's lock: after
the feed reached revision R, every index holds the store's state at R exactly. The
values are the bytes the events carry (shared with the cache's ring buffer, not
copied). An object served as JSON is then held as its JSON list item instead
(``registry.store.ItemKeyValue``: a canonical value and its item differ only by the
kind/apiVersion head and the resourceVersion, so the value is rebuilt when asked
for): each object is kept once, and a LIST of cached objects is a slice of the key list
and a join of bytes. Memory is bounded: past ``max_bytes`` the least recently read
indexes are dropped (their resources are read from the store again for a while).
Upstream's cacher keeps every object of every resource decoded; here a resource
nobody reads costs nothing, and one read costs about its stored size per worker.

Consistent reads
----------------
A read with resourceVersion "" must see every write acknowledged before it, made by any
worker or any instance sharing the store. Upstream 1.32 (``cacher.go``:
``GetList`` with ``ConsistentListFromCache``) asks etcd for the current revision and
a watch progress notification (``RequestWatchProgress``), and waits until its cache
has reached that revision (``waitUntilFreshAndBlock``). etcd 3.4.23 has no
``RequestWatchProgress``, so ``ConsistentListFromCache`` is not possible as upstream
does it; here a consistent read learns the store's current revision with ONE cheap call
(``Store.current_revision``: SQLite reads ``sqlite_sequence``; etcd does a quorum
``Range`` with ``count_only`` on one key) and waits until the feed has reached it
(the feed follows the whole keyspace, so it reaches every revision the store reports;
see ``storage.etcd``). Concurrent readers share probes (``RevisionBarrier``): a reader
waits for the first probe that *started* after it arrived, whose answer is at least
every revision acknowledged before it — so 16 GETs in flight on etcd cost one or two
round trips, not sixteen.

What is delegated to the store (as upstream's ``shouldDelegateList``): a continue
token and an exact resourceVersion (a snapshot of the past, which the index does not
keep), a resource whose index is being built, anything read while the feed is behind by
more than ``FRESH_TIMEOUT`` (upstream falls back to etcd on ``TooLargeResourceVersion``
the same way), and reads made by the feed itself. Unlike upstream, GET with
resourceVersion "" is served from memory too (consistently, as above): upstream
delegates it to etcd for compatibility with older clients, which buys nothing here.
"""

from __future__ import annotations

import bisect
import logging
import threading
import time

from .interface import KeyValue, ListResult

log = logging.getLogger(__name__)

#: Seconds a consistent read waits for the feed before reading the store instead.
FRESH_TIMEOUT = 1.0
#: Bytes of stored values the indexes of one worker hold at most.
MAX_BYTES = 256 * 1024 * 1024
#: Seconds a resource whose index could not be built (or alone outgrew ``max_bytes``)
#: is read from the store before the next attempt: not one full read per request.
RETRY_BUILD = 30.0
#: A key not in the index (as opposed to ``None``: the index cannot answer).
ABSENT = object()


class RevisionBarrier:
    """The store's current revision, probed once for many concurrent readers.

    ``revision()`` returns a revision at least as new as every write acknowledged before
    it was called: the answer of a probe that started after the call. While a probe is
    in flight, new callers wait for the next one, which one of them starts when the
    first ends.
    """

    def __init__(self, probe):
        self.probe = probe
        self.cond = threading.Condition(threading.Lock())
        self.busy = False
        self.waiting = None  # the ticket the next probe will answer

    def revision(self) -> int:
        with self.cond:
            ticket = self.waiting
            if ticket is None:
                ticket = self.waiting = _Ticket()
            while not ticket.done:
                if not self.busy and self.waiting is ticket:
                    self.busy, self.waiting = True, None
                    break
                self.cond.wait()
            else:
                return ticket.result()
        try:
            ticket.value = self.probe()
        except BaseException as err:
            ticket.error = err
        with self.cond:
            ticket.done, self.busy = True, False
            self.cond.notify_all()
        return ticket.result()


class _Ticket:
    __slots__ = ("done", "value", "error")

    def __init__(self):
        self.done, self.value, self.error = False, 0, None

    def result(self) -> int:
        if self.error is not None:
            raise self.error
        return self.value


class Index:
    """One resource prefix's live keys at the feed's revision (see the module docstring)."""

    __slots__ = ("prefix", "entries", "keys", "bytes", "used", "pending", "ready")

    def __init__(self, prefix: str):
        self.prefix = prefix
        self.entries: dict[str, KeyValue] = {}
        self.keys: list[str] = []
        self.bytes = 0
        self.used = time.monotonic()
        #: Events that arrived while the index was being built (None once built).
        self.pending: list | None = []
        self.ready = False

    def apply(self, event) -> int:
        """Apply one event; return the change in bytes held."""
        key, entries = event.key, self.entries
        current = entries.get(key)
        if current is not None and current.mod_revision >= event.revision:
            return 0  # already in the snapshot the index was built from
        if event.value is None:  # DELETED
            if current is None:
                return 0
            del entries[key]
            keys = self.keys
            del keys[bisect.bisect_left(keys, key)]
            return -held(current)
        entries[key] = KeyValue(key, event.value, event.create_revision or event.revision,
                                event.revision)
        if current is None:
            bisect.insort(self.keys, key)
            return len(event.value)
        return len(event.value) - held(current)

    def load(self, items) -> None:
        for kv in items:
            self.entries[kv.key] = kv
            self.bytes += len(kv.value)
        self.keys = sorted(self.entries)


class ReadCache:
    """The indexes of one worker, fed by its ``WatchCache`` (see the module docstring)."""

    def __init__(self, cache, max_bytes: int = MAX_BYTES):
        self.cache = cache
        self.store = cache.store
        self.max_bytes = max_bytes
        self.bytes = 0
        self.indexes: dict[str, Index] = {}
        #: prefix -> monotonic time before which its index is not built again.
        self.not_before: dict[str, float] = {}
        self.barrier = RevisionBarrier(self.store.current_revision)

    # -- the feed (called by the watch cache, holding its lock) ---------------------------------

    def apply(self, event) -> None:
        indexes = self.indexes
        if not indexes:
            return
        key = event.key
        # A resource's prefix ends at one of the key's slashes: a few lookups, not one
        # comparison per index.
        slash = key.find("/", 1)
        while slash > 0:
            index = indexes.get(key[:slash + 1])
            if index is not None:
                if index.pending is not None:
                    index.pending.append(event)
                else:
                    grown = index.apply(event)
                    index.bytes += grown
                    self.bytes += grown
            slash = key.find("/", slash + 1)
        if self.bytes > self.max_bytes:
            self._evict()

    def reset(self) -> None:
        """The feed skipped events (the log was compacted past it): forget everything."""
        self.indexes = {}
        self.bytes = 0

    def _evict(self) -> None:
        for index in sorted(self.indexes.values(), key=lambda i: i.used):
            if self.bytes <= self.max_bytes:
                break
            self._drop(index)
            if index.bytes > self.max_bytes:
                self.not_before[index.prefix] = time.monotonic() + RETRY_BUILD

    def _drop(self, index: Index) -> None:
        if self.indexes.get(index.prefix) is index:
            del self.indexes[index.prefix]
            self.bytes -= index.bytes

    # -- reads ---------------------------------------------------------------------------------

    def fresh(self) -> bool:
        """Wait until the feed has every write acknowledged before this call; False when
        that cannot be done from here (then read the store)."""
        cache = self.cache
        if threading.current_thread() is cache.thread:
            return False  # the feed cannot wait for itself
        try:
            revision = self.barrier.revision()
        except Exception:  # the store's own read will say what is wrong
            return False
        return cache.revision >= revision or cache.wait_for(revision, FRESH_TIMEOUT)

    def _index(self, prefix: str) -> Index | None:
        """The built index of ``prefix``; built now if nobody is building it, else None."""
        cache = self.cache
        with cache.lock:
            index = self.indexes.get(prefix)
            if index is not None:
                if not index.ready:
                    return None
                index.used = time.monotonic()
                return index
            if cache.stopped or threading.current_thread() is cache.thread:
                return None
            if self.not_before and self.not_before.get(prefix, 0) > time.monotonic():
                return None
            index = self.indexes[prefix] = Index(prefix)
            revision = cache.revision
        try:
            # The store's state at the feed's revision; events after it queue meanwhile.
            items = self.store.list(prefix, revision=revision).items if revision else []
        except Exception as err:
            log.debug("read cache: cannot build the index of %s: %s", prefix, err)
            with cache.lock:
                self._drop(index)
                self.not_before[prefix] = time.monotonic() + RETRY_BUILD
            return None
        with cache.lock:
            if self.indexes.get(prefix) is not index:
                return None  # reset or evicted meanwhile
            index.load(items)
            pending, index.pending = index.pending, None
            for event in pending:
                index.bytes += index.apply(event)
            index.ready = True
            self.bytes += index.bytes
            if self.bytes > self.max_bytes:
                self._evict()
            return index if self.indexes.get(prefix) is index else None

    def list(self, index_prefix: str, prefix: str, start_key: str = "", limit: int = 0,
             consistent: bool = True) -> ListResult | None:
        """The keys under ``prefix`` (within the index of ``index_prefix``) from
        ``start_key``, as ``Store.list`` reads them, at the feed's revision; None when the
        store must answer. ``consistent``: first wait for every acknowledged write."""
        if consistent and not self.fresh():
            return None
        index = self._index(index_prefix)
        if index is None:
            return None
        with self.cache.lock:
            if not index.ready or self.indexes.get(index_prefix) is not index:
                return None
            keys = index.keys
            lo = bisect.bisect_left(keys, max(prefix, start_key))
            hi = bisect.bisect_left(keys, _prefix_end(prefix), lo) if prefix else len(keys)
            end = min(lo + limit, hi) if limit > 0 else hi
            entries = index.entries
            items = [entries[key] for key in keys[lo:end]]
            revision = self.cache.revision
        remaining = hi - end
        return ListResult(items=items, revision=revision, more=remaining > 0,
                          remaining=remaining)

    def replace(self, index_prefix: str, kv, replacement) -> None:
        """Hold ``replacement`` (the same key at the same revision, in another form: see
        ``registry.store.ItemKeyValue``) instead of ``kv``, if ``kv`` is still held."""
        with self.cache.lock:
            index = self.indexes.get(index_prefix)
            if index is not None and index.entries.get(kv.key) is kv:
                index.entries[kv.key] = replacement
                change = held(replacement) - held(kv)
                index.bytes += change
                self.bytes += change

    def get(self, index_prefix: str, key: str, consistent: bool = True):
        """The key's ``KeyValue``, ``ABSENT`` when it does not exist, or None when the
        store must answer."""
        if consistent and not self.fresh():
            return None
        index = self._index(index_prefix)
        if index is None:
            return None
        kv = index.entries.get(key)  # one dict read: atomic under the feed
        if self.indexes.get(index_prefix) is not index:
            return None  # dropped meanwhile (reset, evicted)
        return ABSENT if kv is None else kv


def held(kv) -> int:
    """Bytes of ``kv``'s value as held (a replacement's own forms, when it has them)."""
    item = getattr(kv, "item", None)
    if item is None:
        return len(kv.value)
    protobuf = getattr(kv, "protobuf", None)
    return len(item) + (len(protobuf) if protobuf is not None else 0)


def _prefix_end(prefix: str) -> str:
    """A string greater than every key starting with ``prefix`` (which ends with ``/``
    or another character below U+10FFFF)."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)
