"""Keys written with a ``ttl`` are deleted once it runs out (etcd-lease semantics)."""

from __future__ import annotations

import pytest

from kapiserver.storage import DELETED, KeyNotFound
from kapiserver.storage.sqlite import SQLiteStore


class Clock:
    def __init__(self):
        self.now = 1_000_000.0

    def __call__(self):
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def store(tmp_path, clock):
    store = SQLiteStore(tmp_path / "kv.db", clock=clock)
    yield store
    store.close()


def test_key_is_deleted_after_its_ttl_and_watchers_see_it(store, clock):
    created = store.create("/e/a", b"1", ttl=10)
    store.create("/e/forever", b"x")
    clock.now += 9.9
    assert store.expire() == 0
    clock.now += 0.2
    assert store.expire() == 1
    with pytest.raises(KeyNotFound):
        store.get("/e/a")
    assert store.get("/e/forever").value == b"x"
    (event,) = [e for e in store.events(created) if e.key == "/e/a"]
    assert event.type == DELETED and event.prev_value == b"1"
    assert store.expire() == 0  # nothing is deleted twice


def test_each_write_takes_a_new_lease_or_none(store, clock):
    rev = store.create("/e/a", b"1", ttl=10)
    clock.now += 8
    rev = store.update("/e/a", b"2", rev, ttl=10)  # refreshed: 10 s from now
    clock.now += 8
    assert store.expire() == 0
    store.update("/e/a", b"3", rev)  # written without a ttl: kept for good
    clock.now += 100
    assert store.expire() == 0
    assert store.get("/e/a").value == b"3"


def test_a_key_rewritten_after_expiry_was_read_is_kept(store, clock):
    # Another worker rewrote the key after this one read the due lease: the lease row
    # still names the old revision, and the delete's precondition protects the new value.
    old = store.create("/e/a", b"1", ttl=1)
    store.update("/e/a", b"2", old, ttl=100)
    with store._write() as conn:
        conn.execute("UPDATE lease SET rev = ?, expires = ? WHERE key = ?",
                     (old, clock.now - 1, "/e/a"))
    assert store.expire() == 0
    assert store.get("/e/a").value == b"2"
    assert store.expire() == 0  # the stale lease is gone


def test_deleted_and_recreated_key_does_not_inherit_the_old_lease(store, clock):
    store.create("/e/a", b"1", ttl=5)
    store.delete("/e/a")
    store.create("/e/a", b"2")
    clock.now += 10
    assert store.expire() == 0
    assert store.get("/e/a").value == b"2"


def test_leases_survive_a_restart(tmp_path, clock):
    first = SQLiteStore(tmp_path / "kv.db", clock=clock)
    first.create("/e/a", b"1", ttl=5)
    first.close()
    clock.now += 6
    second = SQLiteStore(tmp_path / "kv.db", clock=clock)
    try:
        assert second.expire() == 1
    finally:
        second.close()
