"""Group commit in the SQLite store: concurrent writes share a transaction (and its
fsync), each keeps its own answer, and a failing one rolls back alone."""

import sqlite3
import threading
import time

import pytest

from kapiserver.storage import sqlite as sqlite_module
from kapiserver.storage.interface import Conflict, KeyExists, KeyNotFound, StorageError
from kapiserver.storage.sqlite import SQLiteStore


@pytest.fixture
def store(tmp_path):
    s = SQLiteStore(tmp_path / "kv.db")
    yield s
    s.close()


@pytest.fixture
def batches(monkeypatch):
    """The sizes of the transactions the group commit made; each one is slowed down a
    little so that writes arriving meanwhile queue up behind it."""
    sizes = []
    apply = sqlite_module._GroupCommit._apply

    def slow_apply(self, batch):
        sizes.append(len(batch))
        time.sleep(0.02)
        return apply(self, batch)

    monkeypatch.setattr(sqlite_module._GroupCommit, "_apply", slow_apply)
    return sizes


def _in_threads(count, target):
    results, errors = [None] * count, [None] * count

    def run(i):
        try:
            results[i] = target(i)
        except Exception as e:  # the test looks at what each thread got
            errors[i] = e

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return results, errors


def test_durable_by_default(store, tmp_path):
    assert store.synchronous == "FULL"
    assert store._conn().execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    normal = SQLiteStore(tmp_path / "normal.db", synchronous="normal")
    try:
        assert normal._conn().execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    finally:
        normal.close()


def test_concurrent_writes_share_transactions(store, batches):
    results, errors = _in_threads(24, lambda i: store.create(f"/k/{i:02}", b"v%d" % i))
    assert errors == [None] * 24
    assert sum(batches) == 24 and len(batches) < 24 and max(batches) > 1
    # Every write has its own revision; together they are gap-free.
    start = min(results)
    assert sorted(results) == list(range(start, start + 24))
    for i, rev in enumerate(results):
        kv = store.get(f"/k/{i:02}")
        assert (kv.value, kv.mod_revision, kv.create_revision) == (b"v%d" % i, rev, rev)


def test_a_failing_write_rolls_back_alone(store, batches):
    store.create("/taken", b"old")
    updated = store.create("/counter", b"0")

    def write(i):
        if i % 3 == 0:
            return store.create("/taken", b"new")  # KeyExists
        if i % 3 == 1:
            return store.update("/counter", b"x", updated + 10_000)  # Conflict
        return store.create(f"/free/{i}", b"ok")

    results, errors = _in_threads(18, write)
    assert max(batches) > 1
    for i in range(18):
        if i % 3 == 0:
            assert isinstance(errors[i], KeyExists)
        elif i % 3 == 1:
            assert isinstance(errors[i], Conflict) and errors[i].current.value == b"0"
        else:
            assert errors[i] is None and store.get(f"/free/{i}").mod_revision == results[i]
    assert store.get("/taken").value == b"old"
    assert store.get("/counter").value == b"0"
    # The failed writes took no revision: the successful ones are consecutive.
    good = sorted(r for r in results if r is not None)
    assert good == list(range(good[0], good[0] + len(good)))


def test_writes_in_one_batch_see_each_other(store, batches):
    """Queued writes apply in order inside one transaction: a delete after a create of
    the same key finds it, and a second create of one key is refused."""
    store.create("/seed", b"s")
    gate = threading.Event()

    def write(i):
        gate.wait(5)
        time.sleep(0.005 * i)  # queue in order behind the first
        if i == 0:
            return store.update("/seed", b"first", 0)
        return store.create("/same", b"%d" % i)

    gate.set()
    results, errors = _in_threads(4, write)
    created = [i for i in range(1, 4) if errors[i] is None]
    assert len(created) == 1
    assert all(isinstance(errors[i], KeyExists) for i in range(1, 4) if i not in created)
    assert store.get("/same").value == b"%d" % created[0]


def test_an_sqlite_error_in_one_write_is_a_storage_error_for_it_only(store, batches):
    def write(i):
        if i == 3:
            return store._commit(lambda conn: conn.execute("SELECT * FROM no_such_table"))
        return store.create(f"/e/{i}", b"v")

    results, errors = _in_threads(8, write)
    assert isinstance(errors[3], StorageError)
    assert [e for i, e in enumerate(errors) if i != 3] == [None] * 7
    assert store.get("/e/7").value == b"v"


def test_a_failed_begin_fails_the_batch_cleanly(store, monkeypatch):
    """When the write lock cannot be had, every write of the batch gets a StorageError
    and the next write works."""
    holder = sqlite3.connect(store.path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    monkeypatch.setattr(sqlite_module, "BUSY_TIMEOUT", 0.05)
    store.close()
    fresh = SQLiteStore.__new__(SQLiteStore)
    fresh.path, fresh.synchronous, fresh._clock, fresh._closed = (
        store.path, "FULL", time.time, False)
    fresh._reset_connections()
    try:
        with pytest.raises(StorageError):
            fresh.create("/blocked", b"v")
        holder.execute("ROLLBACK")
        assert fresh.create("/blocked", b"v") > 0
        with pytest.raises(KeyNotFound):
            fresh.update("/missing", b"v", 0)
    finally:
        holder.close()
        fresh.close()
