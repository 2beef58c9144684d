"""The per-worker watch cache: fan-out, resume, compaction and resync, slow watchers."""

from __future__ import annotations

import os
import time

import pytest

from kapiserver.storage import ADDED, DELETED, MODIFIED
from kapiserver.storage.sqlite import SQLiteStore
from kapiserver.storage.watchcache import TooOldResourceVersion, WatchCache


@pytest.fixture
def path(tmp_path):
    return tmp_path / "kv.db"


@pytest.fixture
def store(path):
    store = SQLiteStore(path)
    yield store
    store.close()


def drain(watcher, count: int, timeout: float = 5.0) -> list:
    events, deadline = [], time.monotonic() + timeout
    while len(events) < count and time.monotonic() < deadline and not watcher.closed:
        events += watcher.get(0.1)
    return events


def test_watchers_get_their_prefix_in_order_including_other_processes_writes(store, path):
    cache = WatchCache(store, interval=0.01)
    other = SQLiteStore(path)  # another worker: its writes are only seen by polling
    try:
        cms = cache.watch("/registry/configmaps/", store.current_revision())
        rev = store.create("/registry/configmaps/a/x", b"1")
        other.create("/registry/secrets/a/s", b"s")
        rev = other.update("/registry/configmaps/a/x", b"2", rev)
        store.delete("/registry/configmaps/a/x", rev)
        cache.notify()
        events = drain(cms, 3)
        assert [(e.type, e.key) for e in events] == [
            (ADDED, "/registry/configmaps/a/x"), (MODIFIED, "/registry/configmaps/a/x"),
            (DELETED, "/registry/configmaps/a/x")]
        assert [e.revision for e in events] == sorted(e.revision for e in events)
    finally:
        other.close()
        cache.close()


def test_resume_from_the_buffer_and_from_the_store_before_it(store):
    start = store.current_revision()
    for i in range(5):
        store.create(f"/k/{i}", b"v")
    cache = WatchCache(store, interval=0.01, capacity=2)  # buffers only what follows
    try:
        rev = store.create("/k/5", b"v")
        assert cache.wait_for(rev, 5)
        from_buffer = drain(cache.watch("/k/", rev - 1), 1)
        assert [e.key for e in from_buffer] == ["/k/5"]
        from_store = drain(cache.watch("/k/", start), 6)
        assert [e.key for e in from_store] == [f"/k/{i}" for i in range(6)]
    finally:
        cache.close()


def test_the_buffer_is_bounded_in_bytes_and_older_events_come_from_the_store(store):
    start = store.current_revision()
    cache = WatchCache(store, interval=0.01, max_bytes=2500)
    try:
        for i in range(10):
            rev = store.create(f"/k/{i}", b"v" * 1000)
        assert cache.wait_for(rev, 5)
        assert cache.buffer_bytes <= 2500 and len(cache.buffer) == 2
        assert cache.buffer_bytes == sum(len(e.value) for e in cache.buffer)
        resumed = drain(cache.watch("/k/", start), 10)
        assert [e.key for e in resumed] == [f"/k/{i}" for i in range(10)]
        assert all(e.value == b"v" * 1000 for e in resumed)
    finally:
        cache.close()


def test_a_compacted_revision_is_too_old_on_every_worker(store):
    cache = WatchCache(store, interval=0.01)
    try:
        first = store.create("/k/a", b"1")
        for i in range(3):
            store.create(f"/k/{i}", b"v")
        store.compact(store.current_revision())
        with pytest.raises(TooOldResourceVersion):
            cache.watch("/k/", first - 1)
    finally:
        cache.close()


def test_compaction_past_the_feed_closes_watchers_and_the_cache_resyncs(store, path):
    cache = WatchCache(store, interval=3600)  # polls only when told to
    writer = SQLiteStore(path)  # writes the cache is not told about
    try:
        watcher = cache.watch("/k/", store.current_revision())
        for i in range(3):
            writer.create(f"/k/{i}", b"v")
        writer.compact(writer.current_revision())  # the feed's position is gone
        cache.notify()
        deadline = time.monotonic() + 5
        while not watcher.closed and time.monotonic() < deadline:
            watcher.get(0.05)
        assert watcher.closed
        assert "compacted" in watcher.close_reason
        assert cache.revision == writer.current_revision()
        # The cache goes on from the current revision: new watchers get new events.
        fresh = cache.watch("/k/", cache.revision)
        writer.create("/k/after", b"v")
        cache.notify()
        assert [e.key for e in drain(fresh, 1)] == ["/k/after"]
    finally:
        writer.close()
        cache.close()


def test_a_slow_watcher_is_closed_and_never_stalls_the_others(store):
    cache = WatchCache(store, interval=0.01, max_pending=3)
    try:
        slow = cache.watch("/k/", store.current_revision())
        fast = cache.watch("/k/", store.current_revision())
        received = []
        for i in range(6):
            store.create(f"/k/{i}", b"v")
            cache.notify()
            received += drain(fast, 1)
        assert len(received) == 6
        assert slow.closed and "behind" in slow.close_reason
        assert slow not in cache.watchers
    finally:
        cache.close()


def test_a_write_wakes_the_other_workers_cache_at_once(store, path):
    from kapiserver.storage.wakeups import PeerWakeups

    # Two "workers" in one process: distinct wake-up sockets, one store file.
    first, second = PeerWakeups(str(path)), PeerWakeups(str(path), pid=os.getpid() + 100000)
    other = SQLiteStore(path)
    writer = WatchCache(store, interval=3600, peers=first)   # polls only when woken
    reader = WatchCache(other, interval=3600, peers=second)
    try:
        watcher = reader.watch("/k/", other.current_revision())
        store.create("/k/a", b"1")
        started = time.monotonic()
        writer.written()
        assert [e.key for e in drain(watcher, 1, timeout=3)] == ["/k/a"]
        assert time.monotonic() - started < 1.0
    finally:
        writer.close()
        reader.close()
        other.close()
        first.close()
        second.close()


def test_list_and_follow_misses_nothing_written_while_it_lists(store):
    cache = WatchCache(store, interval=0.01)
    try:
        store.create("/registry/configmaps/a/one", b"1")
        state, applied = {}, []

        def snapshot(kvs):
            # Written after the listing was read, before the watch starts: it must come
            # as an event, after the listing is in place.
            store.create("/registry/configmaps/a/two", b"2")
            return {kv.key: kv.value for kv in kvs}

        def install(listed):
            assert not applied
            state.clear()
            state.update(listed)

        def apply(event):
            applied.append(event.key)
            if event.value is None:
                state.pop(event.key, None)
            else:
                state[event.key] = event.value

        watcher = cache.list_and_follow("/registry/configmaps/", snapshot, install, apply)
        rev = store.delete("/registry/configmaps/a/one")[0]
        assert cache.wait_for(rev, 5)
        assert applied == ["/registry/configmaps/a/two", "/registry/configmaps/a/one"]
        assert state == {"/registry/configmaps/a/two": b"2"}
        assert not watcher.closed
    finally:
        cache.close()
