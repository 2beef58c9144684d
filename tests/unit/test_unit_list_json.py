"""RegistryStore.list_json joins cached items into exactly what encoding the list gives."""

from kapiserver.apimachinery import labels
from kapiserver.registry.resource import ResourceSpec
from kapiserver.registry.store import RegistryStore
from kapiserver.registry.strategy import Strategy
from kapiserver.serialization import dumps_json
from kapiserver.storage.sqlite import SQLiteStore

SPEC = ResourceSpec(group="", version="v1", kind="ConfigMap", resource="configmaps",
                    singular="configmap", namespaced=True)


def test_list_json_matches_the_encoded_list(tmp_path):
    store = RegistryStore(SPEC, Strategy(SPEC), SQLiteStore(str(tmp_path / "db")))
    for i in range(7):
        store.create({"apiVersion": "v1", "kind": "ConfigMap",
                      "metadata": {"name": f"cm{i}", "labels": {"odd": str(i % 2)}},
                      "data": {"<i>": "&" * i}}, "ns")
    for kwargs in ({}, {"limit": 3}, {"label_selector": labels.parse("odd=1")}):
        expected = dumps_json(store.list("ns", **kwargs))
        assert store.list_json("ns", **kwargs) == expected  # cold cache
        assert store.list_json("ns", **kwargs) == expected  # from the cache
    obj = store.get("ns", "cm1")
    obj["data"] = {"changed": "yes"}
    store.update("ns", "cm1", obj)
    assert store.list_json("ns") == dumps_json(store.list("ns"))  # new revision, new entry
    assert b'"changed":"yes"' in store.list_json("ns")


def test_item_cache_is_bounded(tmp_path):
    store = RegistryStore(SPEC, Strategy(SPEC), SQLiteStore(str(tmp_path / "db")))
    store.item_cache.max_bytes = 2000
    for i in range(20):
        store.create({"metadata": {"name": f"cm{i}"}, "data": {"x": "y" * 200}}, "ns")
    store.list_json("ns")
    assert store.item_cache.size <= 2000 and store.item_cache.entries
