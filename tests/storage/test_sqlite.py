"""Tests of the SQLite store: semantics, snapshots, compaction, processes, crashes, size."""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import threading

import pytest

from kapiserver.storage import (ADDED, DELETED, MODIFIED, Compacted, Conflict, Event,
                                KeyExists, KeyNotFound, KeyValue, StorageError)
from kapiserver.storage.sqlite import SQLiteStore, prefix_end


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "kapiserver.db")


@pytest.fixture
def store(path):
    s = SQLiteStore(path)
    yield s
    s.close()


def keys(result):
    return [kv.key for kv in result.items]


# -- opening -------------------------------------------------------------------------


def test_new_file_is_wal_with_incremental_auto_vacuum(store, path):
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2  # INCREMENTAL
    finally:
        conn.close()


def test_empty_store(store):
    assert store.current_revision() == 0
    assert store.compacted_revision() == 0
    with pytest.raises(KeyNotFound):
        store.get("/a")
    result = store.list("/")
    assert (result.items, result.revision) == ([], 0)
    assert (result.more, result.remaining) == (False, 0)
    assert store.events(0) == []


def test_invalid_synchronous_mode(path):
    with pytest.raises(ValueError, match="NORMAL"):
        SQLiteStore(path, synchronous="sometimes")


def test_synchronous_full(path):
    s = SQLiteStore(path, synchronous="full")
    try:
        assert s._conn().execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert s.create("/a", b"1") == 1
    finally:
        s.close()


def test_reopen_keeps_data_and_compaction(path):
    s = SQLiteStore(path)
    s.create("/a", b"1")
    s.update("/a", b"2", 1)
    s.compact(2)
    s.close()
    s = SQLiteStore(path)
    try:
        assert s.get("/a") == KeyValue("/a", b"2", 1, 2)
        assert s.current_revision() == 2
        assert s.compacted_revision() == 2
        assert s.create("/b", b"") == 3
    finally:
        s.close()


def test_close_closes_every_thread_connection(path):
    s = SQLiteStore(path)
    opened = []

    def use():
        s.current_revision()
        opened.append(s._local.conn)

    t = threading.Thread(target=use)
    t.start()
    t.join()
    s.close()
    for conn in opened:
        with pytest.raises(sqlite3.ProgrammingError):
            conn.execute("SELECT 1")
    with pytest.raises(StorageError, match="closed"):
        s.get("/a")
    with pytest.raises(StorageError, match="closed"):
        s.create("/a", b"")


def test_connections_of_finished_threads_are_released(store):
    threads = [threading.Thread(target=store.current_revision) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    gc.collect()
    assert len(store._connections) == 1  # only the main thread's


def open_and_create(path, worker, barrier, queue):
    barrier.wait()
    queue.put(create_many(path, worker, 20))


def test_processes_open_a_new_file_at_once(path):
    ctx = mp_context()
    barrier, queue = ctx.Barrier(6), ctx.Queue()
    procs = [ctx.Process(target=open_and_create, args=(path, w, barrier, queue))
             for w in range(6)]
    for p in procs:
        p.start()
    revs = sorted(r for _ in procs for r in queue.get(timeout=60))
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    assert revs == list(range(1, 121))
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2
    finally:
        conn.close()


# -- create / get --------------------------------------------------------------------


def test_create_and_get(store):
    assert store.create("/a", b"one") == 1
    assert store.create("/b", b"") == 2
    assert store.get("/a") == KeyValue("/a", b"one", 1, 1)
    assert store.get("/b") == KeyValue("/b", b"", 2, 2)
    assert store.current_revision() == 2


def test_create_existing_key(store):
    store.create("/a", b"one")
    with pytest.raises(KeyExists):
        store.create("/a", b"two")
    assert store.get("/a").value == b"one"
    assert store.current_revision() == 1  # a failed write uses no revision
    assert store.create("/b", b"") == 2   # and leaves no transaction open


def test_create_after_delete_is_a_new_incarnation(store):
    store.create("/a", b"one")
    store.delete("/a")
    assert store.create("/a", b"two") == 3
    assert store.get("/a") == KeyValue("/a", b"two", 3, 3)


def test_get_missing_and_deleted(store):
    with pytest.raises(KeyNotFound):
        store.get("/missing")
    store.create("/a", b"1")
    store.delete("/a")
    with pytest.raises(KeyNotFound):
        store.get("/a")


def test_get_at_past_revision(store):
    store.create("/a", b"1")          # 1
    store.create("/other", b"x")      # 2
    store.update("/a", b"2", 1)       # 3
    store.delete("/a")                # 4
    store.create("/a", b"3")          # 5
    with pytest.raises(KeyNotFound):
        store.get("/never", 1)
    assert store.get("/a", 1) == KeyValue("/a", b"1", 1, 1)
    assert store.get("/a", 2) == KeyValue("/a", b"1", 1, 1)
    assert store.get("/a", 3) == KeyValue("/a", b"2", 1, 3)
    with pytest.raises(KeyNotFound):
        store.get("/a", 4)
    assert store.get("/a", 5) == KeyValue("/a", b"3", 5, 5)
    with pytest.raises(KeyNotFound):
        store.get("/other", 1)
    # A revision beyond the current one reads the current state.
    assert store.get("/a", 100) == KeyValue("/a", b"3", 5, 5)


def test_binary_values_round_trip(store):
    value = bytes(range(256)) * 4
    store.create("/bin", value)
    assert store.get("/bin").value == value


# -- update --------------------------------------------------------------------------


def test_update(store):
    store.create("/a", b"1")
    store.create("/b", b"x")
    assert store.update("/a", b"2", 1) == 3
    assert store.get("/a") == KeyValue("/a", b"2", 1, 3)
    assert store.update("/a", b"3", 3) == 4
    assert store.get("/a") == KeyValue("/a", b"3", 1, 4)


def test_update_conflict_carries_current_value(store):
    store.create("/a", b"1")
    store.update("/a", b"2", 1)
    with pytest.raises(Conflict) as info:
        store.update("/a", b"3", 1)
    assert info.value.current == KeyValue("/a", b"2", 1, 2)
    assert store.get("/a").value == b"2"
    assert store.current_revision() == 2


def test_update_missing_or_deleted(store):
    with pytest.raises(KeyNotFound):
        store.update("/a", b"1", 1)
    store.create("/a", b"1")
    store.delete("/a")
    with pytest.raises(KeyNotFound):
        store.update("/a", b"2", 1)
    with pytest.raises(KeyNotFound):
        store.update("/a", b"2", 0)
    assert store.current_revision() == 2


def test_update_without_precondition(store):
    store.create("/a", b"1")
    store.update("/a", b"2", 1)
    assert store.update("/a", b"3", 0) == 3
    assert store.get("/a") == KeyValue("/a", b"3", 1, 3)


# -- delete --------------------------------------------------------------------------


def test_delete_returns_revision_and_deleted_value(store):
    store.create("/a", b"1")
    store.update("/a", b"2", 1)
    rev, kv = store.delete("/a")
    assert rev == 3
    assert kv == KeyValue("/a", b"2", 1, 2)
    with pytest.raises(KeyNotFound):
        store.get("/a")


def test_delete_with_precondition(store):
    store.create("/a", b"1")
    store.update("/a", b"2", 1)
    with pytest.raises(Conflict) as info:
        store.delete("/a", expected_mod_revision=1)
    assert info.value.current == KeyValue("/a", b"2", 1, 2)
    assert store.get("/a").value == b"2"
    rev, kv = store.delete("/a", expected_mod_revision=2)
    assert (rev, kv.mod_revision) == (3, 2)


def test_delete_missing_or_deleted(store):
    with pytest.raises(KeyNotFound):
        store.delete("/a")
    store.create("/a", b"1")
    store.delete("/a")
    with pytest.raises(KeyNotFound):
        store.delete("/a")
    with pytest.raises(KeyNotFound):
        store.delete("/a", expected_mod_revision=2)
    assert store.current_revision() == 2


def test_revisions_strictly_increase_across_keys_and_writes(store):
    revs = []
    for i in range(20):
        revs.append(store.create(f"/k{i}", b"v"))
        revs.append(store.update(f"/k{i}", b"w", revs[-1]))
        if i % 2:
            revs.append(store.delete(f"/k{i}")[0])
    assert revs == list(range(1, len(revs) + 1))
    assert store.current_revision() == revs[-1]


# -- list ----------------------------------------------------------------------------


def fill(store, names):
    for name in names:
        store.create(name, name.encode())


def test_list_prefix_and_order(store):
    names = ["/r/pods/b", "/r/pods/a", "/r/pods", "/r/podsx/a", "/r/pods/c/d", "/r/s/a"]
    fill(store, names)
    result = store.list("/r/pods/")
    assert keys(result) == ["/r/pods/a", "/r/pods/b", "/r/pods/c/d"]
    assert result.items[0] == KeyValue("/r/pods/a", b"/r/pods/a", 2, 2)
    assert (result.revision, result.more, result.remaining) == (6, False, 0)
    assert keys(store.list("")) == sorted(names)
    assert keys(store.list("/nothing/")) == []


def test_list_skips_deleted_and_shows_latest(store):
    fill(store, ["/p/a", "/p/b", "/p/c"])
    store.delete("/p/b")
    store.update("/p/c", b"new", 3)
    result = store.list("/p/")
    assert [(kv.key, kv.value, kv.mod_revision) for kv in result.items] == [
        ("/p/a", b"/p/a", 1), ("/p/c", b"new", 5)]


def test_list_limit_more_remaining(store):
    fill(store, [f"/p/{i:02d}" for i in range(10)])
    store.delete("/p/07")
    page = store.list("/p/", limit=4)
    assert keys(page) == ["/p/00", "/p/01", "/p/02", "/p/03"]
    assert (page.more, page.remaining) == (True, 5)
    page = store.list("/p/", limit=4, start_key="/p/03\x00")
    assert keys(page) == ["/p/04", "/p/05", "/p/06", "/p/08"]
    assert (page.more, page.remaining) == (True, 1)
    page = store.list("/p/", limit=1, start_key="/p/09")
    assert keys(page) == ["/p/09"]
    assert (page.more, page.remaining) == (False, 0)
    page = store.list("/p/", limit=9)
    assert (len(page.items), page.more, page.remaining) == (9, False, 0)
    page = store.list("/p/", limit=100)
    assert (len(page.items), page.more, page.remaining) == (9, False, 0)


def test_list_start_key_bounds(store):
    fill(store, ["/a/1", "/p/1", "/p/2", "/q/1"])
    assert keys(store.list("/p/", start_key="/p/2")) == ["/p/2"]      # inclusive
    assert keys(store.list("/p/", start_key="/a/")) == ["/p/1", "/p/2"]  # before prefix
    assert keys(store.list("/p/", start_key="/q/")) == []               # after prefix
    assert keys(store.list("", start_key="/p/1\x00")) == ["/p/2", "/q/1"]


def test_list_non_ascii_prefix(store):
    fill(store, ["/ns/é/a", "/ns/é/b", "/ns/éa", "/ns/f", "/ns/\U0001f600/x"])
    assert keys(store.list("/ns/é/")) == ["/ns/é/a", "/ns/é/b"]
    assert keys(store.list("/ns/\U0001f600")) == ["/ns/\U0001f600/x"]


def test_prefix_end():
    assert prefix_end("") is None
    assert prefix_end("/a/") == "/a0"
    assert prefix_end("a\U0010ffff") == "b"
    assert prefix_end("\U0010ffff") is None
    assert prefix_end("a\ud7ff") == "a\ue000"


def test_list_at_past_revision(store):
    fill(store, ["/p/a", "/p/b"])             # 1, 2
    store.update("/p/a", b"a2", 1)            # 3
    store.delete("/p/b")                      # 4
    store.create("/p/c", b"c")                # 5
    at2 = store.list("/p/", revision=2)
    assert at2.revision == 2
    assert [(kv.key, kv.value) for kv in at2.items] == [("/p/a", b"/p/a"),
                                                          ("/p/b", b"/p/b")]
    at4 = store.list("/p/", revision=4)
    assert [(kv.key, kv.value) for kv in at4.items] == [("/p/a", b"a2")]
    assert keys(store.list("/p/", revision=0)) == ["/p/a", "/p/c"]
    # A revision beyond the current one reads (and reports) the current one.
    assert store.list("/p/", revision=99).revision == 5


def test_list_leaves_out_the_values_the_caller_has(store):
    fill(store, ["/p/a", "/p/b"])             # 1, 2
    store.update("/p/a", b"a2", 1)            # 3
    for _ in range(2):  # more values than one statement asks for at a time
        fill(store, [f"/p/x{i:04d}" for i in range(300)])
        for i in range(300):
            store.delete(f"/p/x{i:04d}")
    fill(store, [f"/p/y{i:04d}" for i in range(700)])
    full = store.list("/p/")
    have = {("/p/a", 3), ("/p/b", 1), ("/p/y0007", 0)}  # /p/b and /p/y0007: other revisions
    page = store.list("/p/", have=have)
    assert [(kv.key, kv.create_revision, kv.mod_revision) for kv in page.items] == [
        (kv.key, kv.create_revision, kv.mod_revision) for kv in full.items]
    assert [kv.value for kv in page.items] == [None] + [kv.value for kv in full.items[1:]]
    at2 = store.list("/p/", revision=2, have={("/p/b", 2)}, limit=1, start_key="/p/b")
    assert [(kv.key, kv.value) for kv in at2.items] == [("/p/b", None)]
    assert (at2.more, at2.revision) == (False, 2)


def test_pagination_is_a_consistent_snapshot_while_writes_continue(store):
    fill(store, [f"/p/{i:03d}" for i in range(30)])
    expected = {kv.key: kv for kv in store.list("/p/").items}
    first = store.list("/p/", limit=7)
    snapshot = first.revision
    seen, page = list(first.items), first
    n = 0
    while page.more:
        # Writes between pages: updates, deletes and creates, before and after the cursor.
        store.update(f"/p/{n:03d}", b"changed", 0)
        store.delete(f"/p/{29 - n:03d}")
        store.create(f"/p/{n:03d}x", b"new")
        n += 1
        page = store.list("/p/", revision=snapshot, limit=7,
                          start_key=seen[-1].key + "\x00")
        assert page.revision == snapshot
        assert page.remaining == 30 - len(seen) - len(page.items)
        seen.extend(page.items)
    assert {kv.key: kv for kv in seen} == expected
    assert [kv.key for kv in seen] == sorted(expected)


def test_pagination_snapshot_with_concurrent_writer_thread(store):
    fill(store, [f"/p/{i:03d}" for i in range(200)])
    first = store.list("/p/", limit=10)
    expected = store.list("/p/", revision=first.revision)
    stop = threading.Event()

    def writer():
        i = 0
        while not stop.is_set():
            store.update(f"/p/{i % 200:03d}", b"x%d" % i, 0)
            store.create(f"/p/{i % 200:03d}-{i}", b"n")
            i += 1

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        seen, page = list(first.items), first
        while page.more:
            page = store.list("/p/", revision=first.revision, limit=10,
                              start_key=seen[-1].key + "\x00")
            seen.extend(page.items)
    finally:
        stop.set()
        thread.join()
    assert seen == expected.items
    assert store.current_revision() > first.revision


# -- compaction ----------------------------------------------------------------------


def history(store):
    """a: 1 create, 3 update, 6 update; b: 2 create, 4 delete; c: 5 create."""
    store.create("/p/a", b"a1")        # 1
    store.create("/p/b", b"b1")        # 2
    store.update("/p/a", b"a2", 1)     # 3
    store.delete("/p/b")               # 4
    store.create("/p/c", b"c1")        # 5
    store.update("/p/a", b"a3", 3)     # 6


def test_compaction_forbids_older_reads_and_keeps_newer(store):
    history(store)
    store.compact(5)
    assert store.compacted_revision() == 5
    for rev in (1, 4):
        with pytest.raises(Compacted) as info:
            store.get("/p/a", rev)
        assert (info.value.requested, info.value.compacted) == (rev, 5)
        with pytest.raises(Compacted):
            store.list("/p/", revision=rev)
    at5 = store.list("/p/", revision=5)
    assert [(kv.key, kv.value, kv.mod_revision) for kv in at5.items] == [
        ("/p/a", b"a2", 3), ("/p/c", b"c1", 5)]
    assert store.get("/p/a", 5).value == b"a2"
    with pytest.raises(KeyNotFound):
        store.get("/p/b", 5)
    assert store.get("/p/a") == KeyValue("/p/a", b"a3", 1, 6)
    assert keys(store.list("/p/")) == ["/p/a", "/p/c"]


def test_compaction_removes_superseded_rows_and_tombstones(store, path):
    history(store)
    store.compact(6)
    conn = sqlite3.connect(path)
    try:
        revs = [r for (r,) in conn.execute("SELECT rev FROM kv ORDER BY rev")]
    finally:
        conn.close()
    # a keeps 3 (newest below 6, the prev_value of event 6) and 6; b's rows are gone.
    assert revs == [3, 5, 6]


def test_pagination_across_a_compaction_raises_compacted(store):
    fill(store, [f"/p/{i}" for i in range(10)])
    first = store.list("/p/", limit=3)
    for i in range(5):
        store.update(f"/p/{i}", b"x", 0)
    store.compact(first.revision + 2)
    with pytest.raises(Compacted):
        store.list("/p/", revision=first.revision, limit=3,
                   start_key=first.items[-1].key + "\x00")
    assert len(store.list("/p/").items) == 10


def test_events_after_compaction(store):
    history(store)
    store.compact(6)
    # events(C - 1) is the oldest allowed: the write at C comes with its prev_value.
    assert store.events(5) == [Event(MODIFIED, "/p/a", b"a3", b"a2", 6, 1)]
    with pytest.raises(Compacted) as info:
        store.events(4)
    assert (info.value.requested, info.value.compacted) == (5, 6)
    store.delete("/p/a")  # 7
    assert store.events(5) == [Event(MODIFIED, "/p/a", b"a3", b"a2", 6, 1),
                               Event(DELETED, "/p/a", None, b"a3", 7, 1)]
    assert store.events(7) == []


def test_compact_beyond_current_or_backwards(store):
    history(store)
    store.compact(100)
    assert store.compacted_revision() == 6
    store.compact(3)
    assert store.compacted_revision() == 6
    assert store.get("/p/a", 6).value == b"a3"
    assert store.create("/p/d", b"d") == 7


def test_repeated_compaction_keeps_latest_values(store):
    for i in range(10):
        store.create(f"/k/{i}", b"0")
    for round_ in range(1, 6):
        for i in range(10):
            if not 1 <= i < round_:  # keys deleted in earlier rounds stay deleted
                store.update(f"/k/{i}", str(round_).encode(), 0)
        store.delete(f"/k/{round_}")
        store.compact(store.current_revision() - 3)
    latest = {kv.key: kv.value for kv in store.list("/k/").items}
    assert latest == {"/k/0": b"5", "/k/6": b"5", "/k/7": b"5", "/k/8": b"5", "/k/9": b"5"}
    c = store.compacted_revision()
    revisions = [e.revision for e in store.events(c - 1)]
    assert revisions == list(range(c, store.current_revision() + 1))


def test_revisions_never_repeat_after_compaction(store, path):
    store.create("/a", b"1")
    store.update("/a", b"2", 1)
    store.delete("/a")
    store.compact(3)
    store.close()
    s = SQLiteStore(path)
    try:
        assert s.create("/a", b"x") == 4
    finally:
        s.close()


# -- events --------------------------------------------------------------------------


def test_events_types_order_prev_value(store):
    history(store)
    assert store.events(0) == [
        Event(ADDED, "/p/a", b"a1", None, 1, 1),
        Event(ADDED, "/p/b", b"b1", None, 2, 2),
        Event(MODIFIED, "/p/a", b"a2", b"a1", 3, 1),
        Event(DELETED, "/p/b", None, b"b1", 4, 2),
        Event(ADDED, "/p/c", b"c1", None, 5, 5),
        Event(MODIFIED, "/p/a", b"a3", b"a2", 6, 1),
    ]
    store.create("/p/b", b"b2")
    assert store.events(6) == [Event(ADDED, "/p/b", b"b2", None, 7, 7)]


def test_events_after_and_limit(store):
    history(store)
    assert [e.revision for e in store.events(2, limit=3)] == [3, 4, 5]
    assert [e.revision for e in store.events(4)] == [5, 6]
    assert store.events(6) == []
    assert store.events(60) == []


# -- concurrency ---------------------------------------------------------------------


def test_threads_create_with_distinct_revisions(store):
    revs = []
    lock = threading.Lock()

    def work(t):
        mine = [store.create(f"/t/{t}/{i}", b"v") for i in range(50)]
        with lock:
            revs.extend(mine)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(revs) == list(range(1, 401))
    assert store.list("/t/").remaining == 0 and len(store.list("/t/").items) == 400


def increment(path, times=25):
    """Read-modify-write a shared counter, retrying on Conflict; return the revisions."""
    s = SQLiteStore(path)
    revs = []
    try:
        for _ in range(times):
            while True:
                kv = s.get("/counter")
                try:
                    revs.append(s.update("/counter", b"%d" % (int(kv.value) + 1),
                                         kv.mod_revision))
                    break
                except Conflict:
                    continue
    finally:
        s.close()
    return revs


def create_many(path, worker, count=50):
    s = SQLiteStore(path)
    try:
        return [s.create(f"/w/{worker}/{i}", b"v") for i in range(count)]
    finally:
        s.close()


def mp_context():
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def test_processes_increment_a_counter(store, path):
    store.create("/counter", b"0")
    with mp_context().Pool(8) as pool:
        results = pool.starmap(increment, [(path, 25)] * 8)
    revs = [r for result in results for r in result]
    assert len(revs) == 200 and len(set(revs)) == 200
    assert store.get("/counter").value == b"200"
    events = store.events(0, limit=10000)
    assert [e.revision for e in events] == list(range(1, 202))
    assert [e.value for e in events] == [b"%d" % i for i in range(201)]


def test_processes_create_with_distinct_revisions(store, path):
    with mp_context().Pool(8) as pool:
        results = pool.starmap(create_many, [(path, w) for w in range(8)])
    revs = sorted(r for result in results for r in result)
    assert revs == list(range(1, 401))
    assert len(store.list("/w/").items) == 400


def use_inherited_store(store, queue):
    queue.put(store.create("/child", b"forked"))


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                    reason="needs fork")
def test_store_survives_fork(store):
    store.create("/parent", b"p")  # the parent's connection is open across the fork
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=use_inherited_store, args=(store, queue))
    child.start()
    rev = queue.get(timeout=30)
    child.join(30)
    assert child.exitcode == 0
    assert store.get("/child") == KeyValue("/child", b"forked", rev, rev)
    assert store.create("/parent2", b"p") == rev + 1


# -- durability and size -------------------------------------------------------------


CRASH_CHILD = """
import sys
from kapiserver.storage.sqlite import SQLiteStore
s = SQLiteStore(sys.argv[1])
s.create("/durable", b"yes")
print("OK", flush=True)
i = 0
while True:
    s.create("/k/%d" % i, b"x" * 100)
    print(i, flush=True)
    i += 1
"""


def test_acknowledged_writes_survive_kill_9(path):
    child = subprocess.Popen([sys.executable, "-c", CRASH_CHILD, path],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "OK"
        acked = [int(child.stdout.readline()) for _ in range(200)]
        os.kill(child.pid, signal.SIGKILL)  # mid-write: the child keeps creating
    finally:
        child.kill()
        child.wait()
        child.stdout.close()
    s = SQLiteStore(path)
    try:
        assert s.get("/durable").value == b"yes"
        for i in acked:
            assert s.get(f"/k/{i}").value == b"x" * 100
        assert s._conn().execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert s.create("/after", b"") == s.current_revision()
    finally:
        s.close()


def file_size(path):
    return sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))


def test_file_size_is_bounded_under_churn(store, path):
    value = os.urandom(1024)
    for k in range(50):
        store.create(f"/churn/{k}", value)
    largest = 0
    for i in range(5000):
        store.update(f"/churn/{i % 50}", os.urandom(1024), 0)
        if i % 100 == 99:
            largest = max(largest, file_size(path))
        if i % 500 == 499:
            store.compact(store.current_revision() - 100)
    assert len(store.list("/churn/").items) == 50
    # What stays: ~150 rows of 1 KiB plus the compaction's TRUNCATE-d WAL.
    assert file_size(path) < 1024 * 1024
    # Between compactions the WAL grows until SQLite's auto-checkpoint (1000 pages,
    # ~4 MiB) and is then reused from its start; without compaction and vacuum the
    # database alone would pass 5 MiB here.
    assert largest < 6 * 1024 * 1024
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA freelist_count").fetchone()[0] < 50
        assert conn.execute("SELECT COUNT(*) FROM kv").fetchone()[0] <= 50 + 600
    finally:
        conn.close()


def test_processes_opening_a_new_file_together_all_get_it_in_wal(tmp_path):
    # Workers on an empty data dir open the file at once; switching it to WAL needs the
    # file to itself, and SQLite refuses at once rather than waiting: they must retry.
    # The race is narrow: try it on many new files.
    for attempt in range(30):
        path = str(tmp_path / f"fresh-{attempt}.db")
        errors, barrier = [], threading.Barrier(12)

        def open_store(path=path, errors=errors, barrier=barrier):
            barrier.wait()
            try:
                store = SQLiteStore(path)
                store.create("/registry/x/" + threading.current_thread().name, b"{}")
                store.close()
            except Exception as err:  # reported below
                errors.append(err)

        threads = [threading.Thread(target=open_store, name=f"t{i}") for i in range(12)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert errors == [], attempt
        store = SQLiteStore(path)
        assert store._conn().execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        store.close()
