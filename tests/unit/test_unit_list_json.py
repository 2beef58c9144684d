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
    assert store.list_json("other") == dumps_json(store.list("other"))  # no items


def test_item_cache_is_bounded(tmp_path):
    store = RegistryStore(SPEC, Strategy(SPEC), SQLiteStore(str(tmp_path / "db")))
    store.item_cache.max_bytes = 2000
    for i in range(20):
        store.create({"metadata": {"name": f"cm{i}"}, "data": {"x": "y" * 200}}, "ns")
    store.list_json("ns")
    assert store.item_cache.size <= 2000 and store.item_cache.entries


def test_protobuf_lists_and_gets_match_the_encoded_objects(tmp_path):
    from kapiserver.runtime.protobuf import default_codec

    codec = default_codec()
    store = RegistryStore(SPEC, Strategy(SPEC), SQLiteStore(str(tmp_path / "db")))
    for i in range(5):
        store.create({"apiVersion": "v1", "kind": "ConfigMap",
                      "metadata": {"name": f"cm{i}", "labels": {"odd": str(i % 2)}},
                      "data": {"k": "v" * i}}, "ns")
    for kwargs in ({}, {"limit": 2}, {"label_selector": labels.parse("odd=1")}):
        expected = codec.encode(store.list("ns", **kwargs))
        assert store.list_protobuf("ns", **kwargs) == expected  # cold cache
        assert store.list_protobuf("ns", **kwargs) == expected  # from the cache
    one = dict(store.get("ns", "cm3"), kind="ConfigMap", apiVersion="v1")
    assert store.get_protobuf("ns", "cm3") == codec.encode(one)
    assert store.get_protobuf("ns", "cm3") == codec.encode(one)  # from the cache
    assert codec.decode(store.list_protobuf("ns", limit=0))["items"][3] == {
        k: v for k, v in one.items() if k not in ("kind", "apiVersion")}
    assert store.list_protobuf("other") == codec.encode(store.list("other"))  # no items


def test_items_dropped_from_the_cache_while_listing_are_read_again(tmp_path):
    store = RegistryStore(SPEC, Strategy(SPEC), SQLiteStore(str(tmp_path / "db")))
    for i in range(4):
        store.create({"metadata": {"name": f"cm{i}"}, "data": {"x": str(i)}}, "ns")
    expected = store.list_json("ns")  # every item cached: the next list reads no value
    storage_list = store.storage.list

    def list_then_forget(*args, **kwargs):
        page = storage_list(*args, **kwargs)
        assert all(kv.value is None for kv in page.items)
        store.item_cache.entries.clear()  # another request's items pushed these out
        store.item_cache.size = 0
        return page

    store.storage.list = list_then_forget
    assert store.list_json("ns") == expected
