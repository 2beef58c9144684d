"""The etcd store against a real etcd 3.4: the storage contract, leases, compaction, the watch
feed and the watch cache on it, TLS with client certificates, and kube-apiserver's values."""

from __future__ import annotations

import base64
import json
import os
import threading
import time
import uuid

import pytest

from kapiserver.etcdtesting import EtcdProcess, etcd_available
from kapiserver.storage import (ADDED, DELETED, MODIFIED, Compacted, Conflict, KeyExists,
                                KeyNotFound, StorageError)
from kapiserver.storage.watchcache import TooOldResourceVersion, WatchCache

pytest.importorskip("pyetcd", reason="the etcd extra is not installed")
pytestmark = pytest.mark.skipif(not etcd_available(), reason="etcd is not installed")

from kapiserver.storage.etcd import EtcdStore, parse_server  # noqa: E402

WIDE_ETCD = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "reference",
                         "wide", "etcd")


@pytest.fixture
def store(kapiserver_etcd):
    """A store with a key prefix of its own in the session's etcd."""
    s = EtcdStore([kapiserver_etcd.url], prefix=f"/t-{uuid.uuid4().hex[:8]}")
    yield s
    s.close()


def keys(result):
    return [kv.key for kv in result.items]


def test_servers_are_urls():
    assert parse_server("http://127.0.0.1:2379") == ("127.0.0.1", 2379, False)
    assert parse_server("https://etcd-0.example.com:12379") == ("etcd-0.example.com", 12379,
                                                                True)
    with pytest.raises(ValueError):
        parse_server("ftp://x:1")


def test_create_get_update_delete(store):
    r1 = store.create("/registry/configmaps/ns/a", b'{"v":1}')
    with pytest.raises(KeyExists):
        store.create("/registry/configmaps/ns/a", b"again")
    got = store.get("/registry/configmaps/ns/a")
    assert (got.value, got.create_revision, got.mod_revision) == (b'{"v":1}', r1, r1)
    r2 = store.update("/registry/configmaps/ns/a", b'{"v":2}', r1)
    assert r2 > r1
    with pytest.raises(Conflict) as conflict:
        store.update("/registry/configmaps/ns/a", b'{"v":3}', r1)
    assert conflict.value.current.value == b'{"v":2}'
    assert conflict.value.current.mod_revision == r2
    r3 = store.update("/registry/configmaps/ns/a", b'{"v":3}', 0)  # no precondition
    assert store.get("/registry/configmaps/ns/a", revision=r1).value == b'{"v":1}'
    with pytest.raises(Conflict):
        store.delete("/registry/configmaps/ns/a", r2)
    at, deleted = store.delete("/registry/configmaps/ns/a", r3)
    assert at > r3 and deleted.value == b'{"v":3}' and deleted.mod_revision == r3
    for call in (lambda: store.get("/registry/configmaps/ns/a"),
                 lambda: store.update("/registry/configmaps/ns/a", b"x", 0),
                 lambda: store.delete("/registry/configmaps/ns/a")):
        with pytest.raises(KeyNotFound):
            call()
    again = store.create("/registry/configmaps/ns/a", b"new")
    assert store.get("/registry/configmaps/ns/a").create_revision == again


def test_keys_live_under_the_etcd_prefix(kapiserver_etcd):
    prefix = f"/p-{uuid.uuid4().hex[:8]}"
    store = EtcdStore([kapiserver_etcd.url], prefix=prefix)
    other = EtcdStore([kapiserver_etcd.url], prefix=prefix + "x")
    try:
        store.create("/registry/configmaps/ns/a", b"1")
        other.create("/registry/configmaps/ns/a", b"2")
        import pyetcd

        raw = pyetcd.client(host="127.0.0.1", port=kapiserver_etcd.client_port)
        assert raw.get(f"{prefix}/configmaps/ns/a")[0] == b"1"
        assert keys(store.list("/registry/")) == ["/registry/configmaps/ns/a"]
        assert store.get("/registry/configmaps/ns/a").value == b"1"
        raw.close()
    finally:
        store.close()
        other.close()


def test_list_pages_remaining_and_snapshots(store):
    for i in range(5):
        store.create(f"/registry/pods/ns/p{i}", f"{i}".encode())
    store.create("/registry/podtemplates/ns/t", b"t")
    first = store.list("/registry/pods/", limit=2)
    assert keys(first) == ["/registry/pods/ns/p0", "/registry/pods/ns/p1"]
    assert (first.more, first.remaining) == (True, 3)
    store.create("/registry/pods/ns/p10", b"late")
    store.delete("/registry/pods/ns/p3")
    rest = store.list("/registry/pods/", revision=first.revision, limit=10,
                      start_key=first.items[-1].key + "\x00")
    assert keys(rest) == ["/registry/pods/ns/p2", "/registry/pods/ns/p3", "/registry/pods/ns/p4"]
    assert (rest.more, rest.remaining, rest.revision) == (False, 0, first.revision)
    now = store.list("/registry/pods/")
    assert keys(now) == ["/registry/pods/ns/p0", "/registry/pods/ns/p1", "/registry/pods/ns/p10",
                         "/registry/pods/ns/p2", "/registry/pods/ns/p4"]
    assert now.revision == store.current_revision()
    assert store.list("/registry/pods/", revision=now.revision + 1000).revision == now.revision


def test_events_types_and_previous_values(store):
    start = store.current_revision()
    r1 = store.create("/registry/secrets/ns/s", b"1")
    r2 = store.update("/registry/secrets/ns/s", b"2", r1)
    r3, _ = store.delete("/registry/secrets/ns/s")
    events = store.events(start)
    assert [(e.type, e.revision, e.value, e.prev_value) for e in events] == [
        (ADDED, r1, b"1", None), (MODIFIED, r2, b"2", b"1"), (DELETED, r3, None, b"2")]
    assert [e.revision for e in store.events(start, limit=2)] == [r1, r2]
    assert store.events(r3) == []


def test_ttl_keys_expire_through_leases(store):
    r = store.create("/registry/events/ns/short", b"e", ttl=1)
    store.create("/registry/events/ns/other", b"e", ttl=1)
    store.create("/registry/configmaps/ns/kept", b"c")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and store.list("/registry/events/").items:
        time.sleep(0.2)
    assert store.list("/registry/events/").items == []
    assert store.get("/registry/configmaps/ns/kept").value == b"c"
    deleted = [e for e in store.events(r - 1) if e.type == DELETED]
    assert {e.key for e in deleted} == {"/registry/events/ns/short", "/registry/events/ns/other"}
    assert store.expire() == 0  # etcd expires them itself


def test_one_lease_carries_a_burst_of_writes(store):
    for i in range(5):
        store.create(f"/registry/events/ns/e{i}", b"e", ttl=3600)
    lease_ids = set()
    import pyetcd

    raw = pyetcd.client(host="127.0.0.1", port=int(store.servers[0].rsplit(":", 1)[1]))
    try:
        for kv in store.list("/registry/events/").items:
            _, meta = raw.get(store._key(kv.key).decode())
            lease_ids.add(meta.lease_id)
    finally:
        raw.close()
    assert len(lease_ids) == 1 and 0 not in lease_ids


def test_compaction_is_coordinated_through_compact_rev_key(kapiserver_etcd):
    prefix = f"/c-{uuid.uuid4().hex[:8]}"
    a = EtcdStore([kapiserver_etcd.url], prefix=prefix)
    b = EtcdStore([kapiserver_etcd.url], prefix=prefix)
    try:
        r1 = a.create("/registry/configmaps/ns/x", b"1")
        r2 = a.update("/registry/configmaps/ns/x", b"2", r1)
        # Both know the current compaction round; only the first of them compacts.
        for store in (a, b):
            store.compact(store.compacted_revision())
        target = a.current_revision()
        a.compact(r2)
        b.compact(target)  # lost the round: learns it, compacts nothing
        assert a.compacted_revision() == r2 and b.compacted_revision() == r2
        with pytest.raises(Compacted) as err:
            a.get("/registry/configmaps/ns/x", revision=r1)
        assert err.value.compacted == r2
        assert a.get("/registry/configmaps/ns/x", revision=r2).value == b"2"
        with pytest.raises(Compacted):
            a.list("/registry/", revision=r1)
        with pytest.raises(Compacted):
            b.events(r1 - 1)
        assert [e.revision for e in b.events(r2 - 1)][:1] == [r2]
        b.compact(target)  # its next round
        assert a.compacted_revision() == target
    finally:
        a.close()
        b.close()


def test_the_watch_cache_follows_the_etcd_watch(store):
    cache = WatchCache(store)
    try:
        watcher = cache.watch("/registry/configmaps/", cache.revision)
        r1 = store.create("/registry/configmaps/ns/a", b"1")
        store.create("/registry/secrets/ns/s", b"s")
        r2 = store.update("/registry/configmaps/ns/a", b"2", r1)
        assert cache.wait_for(r2, 5)
        seen = []
        deadline = time.monotonic() + 5
        while len(seen) < 2 and time.monotonic() < deadline:
            seen += watcher.get(0.5)
        assert [(e.type, e.revision) for e in seen] == [(ADDED, r1), (MODIFIED, r2)]
        # A write outside the prefix (compaction's bookkeeping, another tenant) is a
        # revision the cache reaches too: waiting for the current revision never hangs.
        foreign = EtcdStore(store.servers, prefix=store.prefix + "-other")
        foreign.create("/registry/configmaps/ns/a", b"elsewhere")
        foreign.close()
        current = store.current_revision()
        assert current > r2
        assert cache.wait_for(current, 5)
        # History older than the cache's buffer is read from etcd.
        late = cache.watch("/registry/", r1 - 1)
        got = late.get(1)
        assert [e.revision for e in got][:3] == [r1, r1 + 1, r2]
    finally:
        cache.close()


def test_a_broken_stream_resumes_from_the_last_revision(store):
    cache = WatchCache(store)
    try:
        watcher = cache.watch("/registry/configmaps/", cache.revision)
        r1 = store.create("/registry/configmaps/ns/a", b"1")
        assert cache.wait_for(r1, 5)
        cache._stream.close()  # as a lost connection ends it
        r2 = store.update("/registry/configmaps/ns/a", b"2", r1)
        r3 = store.update("/registry/configmaps/ns/a", b"3", r2)
        assert cache.wait_for(r3, 10)
        seen = []
        deadline = time.monotonic() + 5
        while len(seen) < 3 and time.monotonic() < deadline:
            seen += watcher.get(0.5)
        assert [e.revision for e in seen] == [r1, r2, r3]  # nothing lost, nothing twice
    finally:
        cache.close()


def test_a_watch_from_a_compacted_revision_is_too_old(store):
    cache = WatchCache(store)
    try:
        r1 = store.create("/registry/configmaps/ns/a", b"1")
        r2 = store.update("/registry/configmaps/ns/a", b"2", r1)
        store.compact(store.compacted_revision())  # join the compaction rounds
        store.compact(r2)
        with pytest.raises(TooOldResourceVersion):
            cache.watch("/registry/configmaps/", r1 - 1)
        cache.watch("/registry/configmaps/", r2 - 1).close()
    finally:
        cache.close()


def test_an_unreachable_etcd_is_a_storage_error_within_the_timeout(tmp_path):
    port = EtcdProcess(str(tmp_path)).client_port  # nothing listens there
    store = EtcdStore([f"http://127.0.0.1:{port}"], timeout=1.0)
    try:
        started = time.monotonic()
        with pytest.raises(StorageError):
            store.get("/registry/configmaps/ns/a")
        assert time.monotonic() - started < 5
        assert store.health(0.5)
    finally:
        store.close()


def test_failover_to_another_member(tmp_path):
    from kapiserver.etcdtesting import EtcdCluster

    cluster = EtcdCluster(str(tmp_path), size=3).start()
    try:
        store = EtcdStore(cluster.urls, timeout=3.0)
        store.create("/registry/configmaps/ns/a", b"1")
        cluster.members[0].kill()
        for i in range(20):  # every call answered, by whichever member is up
            store.create(f"/registry/configmaps/ns/b{i}", b"x") if i % 2 else \
                store.get("/registry/configmaps/ns/a")
        assert len(store.list("/registry/configmaps/").items) == 11
        store.close()
    finally:
        cluster.stop()


def test_tls_with_client_certificates(tmp_path):
    from kapiserver.pki import PKI

    pki = PKI(str(tmp_path / "pki"))
    pki.ensure_serving_cert(["127.0.0.1", "localhost"])
    cert_pem, key_pem = pki.issue_client_cert("kapiserver")
    client_cert, client_key = tmp_path / "client.crt", tmp_path / "client.key"
    client_cert.write_bytes(cert_pem)
    client_key.write_bytes(key_pem)
    etcd = EtcdProcess(str(tmp_path / "etcd"), tls=(pki.ca_cert_file, pki.serving_cert_file,
                                                    pki.serving_key_file),
                       client=(str(client_cert), str(client_key))).start()
    try:
        assert etcd.url.startswith("https://")
        store = EtcdStore([etcd.url], ca_file=pki.ca_cert_file, cert_file=str(client_cert),
                          key_file=str(client_key))
        r = store.create("/registry/configmaps/ns/a", b"1")
        assert store.get("/registry/configmaps/ns/a").mod_revision == r
        store.close()
        # Without a client certificate etcd refuses the connection.
        anonymous = EtcdStore([etcd.url], ca_file=pki.ca_cert_file, timeout=2.0)
        with pytest.raises(StorageError):
            anonymous.get("/registry/configmaps/ns/a")
        anonymous.close()
    finally:
        etcd.stop()


def captured_values():
    if not os.path.isdir(WIDE_ETCD):
        return []
    return sorted(name for name in os.listdir(WIDE_ETCD) if name.endswith(".json"))


@pytest.mark.parametrize("name", captured_values())
def test_kube_apiservers_values_read_as_json(store, name):
    with open(os.path.join(WIDE_ETCD, name)) as f:
        capture = json.load(f)
    value = base64.b64decode(capture["value_base64"])
    key = capture["key"]
    import pyetcd

    raw = pyetcd.client(host="127.0.0.1", port=int(store.servers[0].rsplit(":", 1)[1]))
    try:
        raw.put(store._key(key).decode(), value)
    finally:
        raw.close()
    read = store.get(key)
    obj = json.loads(read.value)
    assert obj["metadata"]["name"] == key.rsplit("/", 1)[1]
    assert obj["kind"] and obj["apiVersion"]
    if capture["format"] == "protobuf":
        from kapiserver.runtime.protobuf import decode

        assert obj == decode(value)
    else:
        assert obj == json.loads(value)


def test_a_lease_expiring_deletes_its_keys_at_one_revision_and_watchers_see_each(store):
    cache = WatchCache(store)
    try:
        watcher = cache.watch("/registry/events/", cache.revision)
        store.create("/registry/events/ns/a", b"a", ttl=1)
        store.create("/registry/events/ns/b", b"b", ttl=1)
        deleted = []
        deadline = time.monotonic() + 10
        while len(deleted) < 2 and time.monotonic() < deadline:
            deleted += [e for e in watcher.get(0.5) if e.type == DELETED]
        assert sorted(e.key for e in deleted) == ["/registry/events/ns/a",
                                                  "/registry/events/ns/b"]
        assert deleted[0].revision == deleted[1].revision
        assert cache.shared(deleted[0]) is not cache.shared(deleted[1])
        # A watch resuming before that revision replays both, from etcd too.
        assert len([e for e in store.events(deleted[0].revision - 1, limit=1)
                    if e.type == DELETED]) == 2
    finally:
        cache.close()


def test_a_member_left_running_ends_with_the_process_that_started_it(tmp_path):
    import subprocess
    import sys

    # The process starts a member and exits without stopping it (no teardown ran).
    script = ("import sys\nfrom kapiserver.etcdtesting import EtcdProcess\n"
              "member = EtcdProcess(sys.argv[1]).start()\nprint(member.process.pid)\n")
    started = subprocess.run([sys.executable, "-c", script, str(tmp_path / "etcd")],
                             capture_output=True, text=True, timeout=60)
    assert started.returncode == 0, started.stderr
    pid = int(started.stdout.split()[-1])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and os.path.exists(f"/proc/{pid}"):
        time.sleep(0.1)
    assert not os.path.exists(f"/proc/{pid}")
