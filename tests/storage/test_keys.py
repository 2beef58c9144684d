"""The storage key layout: kube-apiserver's, for every resource kapiserver stores."""

import os

import pytest

from kapiserver.registry.builtin import resources
from kapiserver.registry.keys import key_prefix, migrate_legacy_key, resource_prefix
from kapiserver.storage.sqlite import SQLiteStore

ALL_KEYS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "reference",
                        "wide", "etcd", "_all-keys.txt")


def captured_keys() -> list[str]:
    if not os.path.exists(ALL_KEYS):
        pytest.skip("no capture of kube-apiserver's etcd keys (../shared/reference)")
    with open(ALL_KEYS) as f:
        return [line.strip() for line in f if line.strip()]


@pytest.mark.parametrize("group, resource, prefix", [
    ("", "configmaps", "/registry/configmaps/"),
    ("", "services", "/registry/services/specs/"),
    ("", "endpoints", "/registry/services/endpoints/"),
    ("", "nodes", "/registry/minions/"),
    ("", "replicationcontrollers", "/registry/controllers/"),
    ("", "serviceaccounts", "/registry/serviceaccounts/"),
    ("apps", "deployments", "/registry/deployments/"),
    ("batch", "jobs", "/registry/jobs/"),
    ("rbac.authorization.k8s.io", "clusterroles", "/registry/clusterroles/"),
    ("networking.k8s.io", "ingresses", "/registry/ingress/"),
    ("events.k8s.io", "events", "/registry/events/"),
    ("apiextensions.k8s.io", "customresourcedefinitions",
     "/registry/apiextensions.k8s.io/customresourcedefinitions/"),
    ("apiregistration.k8s.io", "apiservices", "/registry/apiregistration.k8s.io/apiservices/"),
    ("capture.example.com", "gadgets", "/registry/capture.example.com/gadgets/"),
])
def test_prefixes_are_upstreams(group, resource, prefix):
    assert key_prefix(group, resource) == prefix


def test_every_captured_key_of_a_served_resource_is_where_kapiserver_looks():
    prefixes = {key_prefix(g, r) for g, _, r in resources() if "/" not in r}
    prefixes |= {key_prefix("apiextensions.k8s.io", "customresourcedefinitions"),
                 key_prefix("apiregistration.k8s.io", "apiservices"),
                 key_prefix("capture.example.com", "gadgets")}
    # upstream's own bookkeeping, which kapiserver keeps otherwise
    internal = ("/registry/masterleases/", "/registry/ranges/")
    for key in captured_keys():
        if key.startswith(internal):
            continue
        assert any(key.startswith(p) for p in prefixes), key


def test_no_resource_prefix_contains_another():
    segments = {resource_prefix(g, r) for g, _, r in resources() if "/" not in r}
    for a in segments:
        for b in segments:
            assert a == b or not (a + "/").startswith(b + "/"), (a, b)


@pytest.mark.parametrize("legacy, key", [
    ("/registry/apps/deployments/ns/d", "/registry/deployments/ns/d"),
    ("/registry/services/ns/s", "/registry/services/specs/ns/s"),
    ("/registry/endpoints/ns/s", "/registry/services/endpoints/ns/s"),
    ("/registry/nodes/n1", "/registry/minions/n1"),
    ("/registry/rbac.authorization.k8s.io/roles/ns/r", "/registry/roles/ns/r"),
    ("/registry/coordination.k8s.io/leases/kube-system/l", "/registry/leases/kube-system/l"),
    ("/registry/networking.k8s.io/ingresses/ns/i", "/registry/ingress/ns/i"),
    ("/registry/configmaps/ns/c", "/registry/configmaps/ns/c"),
    ("/registry/example.com/widgets/ns/w", "/registry/example.com/widgets/ns/w"),
    ("/registry/ranges/serviceips/10.0.0.1", "/registry/ranges/serviceips/10.0.0.1"),
])
def test_legacy_keys_move_to_upstreams_layout(legacy, key):
    assert migrate_legacy_key(legacy) == key


def test_sqlite_migration_moves_keys_once_and_keeps_history(tmp_path):
    path = tmp_path / "kapiserver.db"
    store = SQLiteStore(path)
    r1 = store.create("/registry/apps/deployments/ns/d", b"v1")
    r2 = store.update("/registry/apps/deployments/ns/d", b"v2", r1)
    store.create("/registry/services/ns/s", b"svc", ttl=3600)
    store.create("/registry/configmaps/ns/c", b"cm")
    assert store.migrate_keys("upstream-key-layout", migrate_legacy_key) == 2
    assert store.get("/registry/deployments/ns/d").value == b"v2"
    assert store.get("/registry/deployments/ns/d", revision=r1).value == b"v1"
    assert store.get("/registry/deployments/ns/d").create_revision == r1
    assert [kv.key for kv in store.list("/registry/services/").items] == [
        "/registry/services/specs/ns/s"]
    assert [e.key for e in store.events(r2 - 1)][0] == "/registry/deployments/ns/d"
    # once: a key written since in a legacy-looking place stays where it is
    store.create("/registry/services/x", b"later")
    assert store.migrate_keys("upstream-key-layout", migrate_legacy_key) == 0
    assert store.get("/registry/services/x").value == b"later"
    store.close()
    # the lease moved with its key: it still expires
    again = SQLiteStore(path, clock=lambda: 10 ** 12)
    assert again.expire() == 1
    with pytest.raises(Exception):
        again.get("/registry/services/specs/ns/s")
    again.close()


def test_a_new_file_is_marked_migrated(tmp_path):
    store = SQLiteStore(tmp_path / "new.db")
    assert store.migrate_keys("upstream-key-layout", migrate_legacy_key) == 0
    store.create("/registry/apps/deployments/ns/d", b"v")  # written after: never moved
    assert store.migrate_keys("upstream-key-layout", migrate_legacy_key) == 0
    assert store.get("/registry/apps/deployments/ns/d").value == b"v"
    store.close()
