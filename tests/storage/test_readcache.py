"""The read cache: GET and LIST from each worker's memory, consistent, on both backends.

The store is shared with a second client (another worker or instance) whose writes the
cache is never told about: a consistent read must see them all the same.
"""

from __future__ import annotations

import threading
import time
import uuid

import pytest

from kapiserver.etcdtesting import etcd_available
from kapiserver.storage.readcache import ABSENT, RevisionBarrier
from kapiserver.storage.sqlite import SQLiteStore
from kapiserver.storage.watchcache import WatchCache

PREFIX = "/registry/configmaps/"


@pytest.fixture(params=["sqlite", "etcd3"])
def stores(request, tmp_path):
    """(the cache's store, another client of the same data) for each backend."""
    if request.param == "sqlite":
        path = tmp_path / "kv.db"
        pair = SQLiteStore(path), SQLiteStore(path)
    else:
        if not etcd_available():
            pytest.skip("etcd is not installed")
        pytest.importorskip("pyetcd", reason="the etcd extra is not installed")
        from kapiserver.storage.etcd import EtcdStore

        etcd = request.getfixturevalue("kapiserver_etcd")
        prefix = f"/t-{uuid.uuid4().hex[:8]}"
        pair = EtcdStore([etcd.url], prefix=prefix), EtcdStore([etcd.url], prefix=prefix)
    yield pair
    for store in pair:
        store.close()


@pytest.fixture
def cache(stores):
    # A long poll interval: only a consistent read's wait makes SQLite's feed read the
    # log early (etcd's feed is pushed anyway).
    cache = WatchCache(stores[0], interval=30)
    yield cache
    cache.close()


def keys(result) -> list[str]:
    return [kv.key for kv in result.items]


def test_a_consistent_list_sees_every_write_acknowledged_before_it(stores, cache):
    _, other = stores
    for name in ("b", "a", "c"):
        other.create(f"{PREFIX}ns1/{name}", f'{{"n":"{name}"}}'.encode())
    other.create(f"{PREFIX}ns2/x", b"{}")
    other.create("/registry/secrets/ns1/s", b"{}")
    reads = cache.reads
    first = reads.list(PREFIX, PREFIX)
    assert keys(first) == [f"{PREFIX}ns1/a", f"{PREFIX}ns1/b", f"{PREFIX}ns1/c",
                           f"{PREFIX}ns2/x"]
    assert first.revision == other.current_revision()
    for round_ in range(20):  # each write is seen by the very next read
        revision = other.create(f"{PREFIX}ns1/n{round_:02d}", b"{}")
        listed = reads.list(PREFIX, f"{PREFIX}ns1/")
        assert listed is not None and listed.revision >= revision
        assert f"{PREFIX}ns1/n{round_:02d}" in keys(listed)
        assert f"{PREFIX}ns2/x" not in keys(listed)
    kv = other.get(f"{PREFIX}ns1/a")
    updated = other.update(kv.key, b'{"n":"A"}', kv.mod_revision)
    deleted, _ = other.delete(f"{PREFIX}ns1/b")
    got = reads.get(PREFIX, f"{PREFIX}ns1/a")
    assert (got.value, got.mod_revision, got.create_revision) == (
        b'{"n":"A"}', updated, kv.create_revision)
    assert reads.get(PREFIX, f"{PREFIX}ns1/b") is ABSENT
    assert cache.revision >= deleted


def test_pages_are_the_stores_at_the_same_revision(stores, cache):
    _, other = stores
    for i in range(25):
        other.create(f"{PREFIX}ns/{i:03d}", b"{}")
    other.delete(f"{PREFIX}ns/007")
    reads = cache.reads
    page = reads.list(PREFIX, f"{PREFIX}ns/", limit=10)
    stored = other.list(f"{PREFIX}ns/", revision=page.revision, limit=10)
    assert keys(page) == keys(stored)
    assert (page.more, page.remaining) == (True, stored.remaining) == (True, 14)
    rest = reads.list(PREFIX, f"{PREFIX}ns/", start_key=page.items[-1].key + "\x00",
                      limit=100)
    assert len(rest.items) == 14 and not rest.more and rest.remaining == 0
    assert [kv.mod_revision for kv in page.items] == [kv.mod_revision for kv in stored.items]


def test_any_version_reads_without_asking_the_store(stores, cache):
    _, other = stores
    other.create(f"{PREFIX}ns/a", b"{}")
    reads = cache.reads
    assert keys(reads.list(PREFIX, PREFIX)) == [f"{PREFIX}ns/a"]  # builds the index
    probes = []
    reads.barrier = RevisionBarrier(lambda: probes.append(1) or 0)
    assert keys(reads.list(PREFIX, PREFIX, consistent=False)) == [f"{PREFIX}ns/a"]
    assert reads.get(PREFIX, f"{PREFIX}ns/a", consistent=False).key == f"{PREFIX}ns/a"
    assert probes == []


def test_concurrent_readers_share_probes_and_none_reads_an_older_revision():
    current = [0]
    calls = []

    def probe():
        seen = current[0]
        calls.append(seen)
        time.sleep(0.02)
        return seen

    barrier = RevisionBarrier(probe)
    failures = []

    def reader():
        for _ in range(5):
            current[0] += 1  # a write acknowledged before this read began
            wanted = current[0]
            if barrier.revision() < wanted:
                failures.append(wanted)

    threads = [threading.Thread(target=reader) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert len(calls) < 40  # 40 reads, fewer probes


def test_a_failing_probe_fails_its_readers_and_the_next_probe_runs_anew():
    outcomes = iter([RuntimeError("no quorum"), 7])

    def probe():
        outcome = next(outcomes)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    barrier = RevisionBarrier(probe)
    with pytest.raises(RuntimeError):
        barrier.revision()
    assert barrier.revision() == 7


def test_over_its_budget_the_cache_drops_indexes_and_the_store_answers(stores, cache):
    _, other = stores
    for i in range(10):
        other.create(f"{PREFIX}ns/{i}", b"x" * 1000)
        other.create(f"/registry/secrets/ns/{i}", b"x" * 1000)
    reads = cache.reads
    reads.max_bytes = 15_000
    assert len(reads.list(PREFIX, PREFIX).items) == 10
    assert len(reads.list("/registry/secrets/", "/registry/secrets/").items) == 10
    assert list(reads.indexes) == ["/registry/secrets/"]  # the least recently read went
    reads.max_bytes = 5_000
    assert reads.list(PREFIX, PREFIX) is None  # alone past the budget: read the store
    assert reads.bytes <= reads.max_bytes
    assert PREFIX in reads.not_before  # and not built again at every read
    reads.max_bytes = 1_000_000
    assert reads.list(PREFIX, PREFIX) is None
    reads.not_before.clear()
    assert len(reads.list(PREFIX, PREFIX).items) == 10


def test_a_resync_forgets_the_indexes(stores, cache):
    _, other = stores
    other.create(f"{PREFIX}ns/a", b"{}")
    reads = cache.reads
    assert reads.list(PREFIX, PREFIX) is not None
    cache._resync()
    assert reads.indexes == {}
    other.create(f"{PREFIX}ns/b", b"{}")
    assert keys(reads.list(PREFIX, PREFIX)) == [f"{PREFIX}ns/a", f"{PREFIX}ns/b"]


def test_the_feed_itself_reads_the_store(stores, cache):
    """A reader on the feed's own thread cannot wait for the feed: None (read the store)."""
    _, other = stores
    other.create(f"{PREFIX}ns/a", b"{}")
    answers = []
    real = cache.thread
    cache.thread = threading.current_thread()
    try:
        answers.append(cache.reads.list(PREFIX, PREFIX))
    finally:
        cache.thread = real
    assert answers == [None]
