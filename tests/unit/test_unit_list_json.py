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
    expected = store.list_protobuf("ns")  # every item cached: the next list reads no value
    storage_list = store.storage.list

    def list_then_forget(*args, **kwargs):
        page = storage_list(*args, **kwargs)
        assert all(kv.value is None for kv in page.items)
        store.protobuf_cache.entries.clear()  # another request's items pushed these out
        store.protobuf_cache.size = 0
        return page

    store.storage.list = list_then_forget
    assert store.list_protobuf("ns") == expected


def test_canonical_stored_values_are_their_own_items(tmp_path):
    from kapiserver.registry.store import CANONICAL, encode, json_item

    store = RegistryStore(SPEC, Strategy(SPEC), SQLiteStore(str(tmp_path / "db")))
    for i in range(3):
        store.create({"kind": "ConfigMap", "apiVersion": "v1",
                      "metadata": {"name": f"cm{i}", "annotations": {"a": "<b> & \u2028 é"},
                                   "ownerReferences": [{"apiVersion": "v1", "kind": "K", "uid": "o",
                                                        "name": "x"}]},
                      "data": {"<i>": '"uid":"' * i}}, "ns")
    kv = store.storage.get("/registry/configmaps/ns/cm1")
    assert kv.value.endswith(CANONICAL)
    assert store.list_json("ns") == dumps_json(store.list("ns"))
    assert not store.item_cache.entries  # no item needed caching
    one = dict(store.get("ns", "cm2"), kind="ConfigMap", apiVersion="v1")
    assert store.get_json("ns", "cm2") == dumps_json(
        {"kind": "ConfigMap", "apiVersion": "v1",
         **{k: v for k, v in one.items() if k not in ("kind", "apiVersion")}})
    # Not canonical: no kind first, metadata out of order, no uid, a resourceVersion kept.
    for obj in ({"metadata": {"name": "a", "uid": "u"}},
                {"kind": "K", "apiVersion": "v1", "metadata": {"uid": "u", "name": "a"}},
                {"kind": "K", "apiVersion": "v1", "metadata": {"name": "a"}},
                {"kind": 'K"', "apiVersion": "v1", "metadata": {"name": "a", "uid": "u"}}):
        assert json_item(encode(obj), 5) is None
    store.storage.update(kv.key, encode({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {
        "uid": "u", "name": "cm1", "namespace": "ns"}}), kv.mod_revision)
    assert store.list_json("ns") == dumps_json(store.list("ns"))  # reordered when decoded
    assert len(store.item_cache.entries) == 1


def test_a_large_list_packs_its_new_items_in_one_block(tmp_path, monkeypatch):
    from kapiserver.registry import store as store_module

    monkeypatch.setattr(store_module, "RELEASE_AFTER_BYTES", 100)
    store = RegistryStore(SPEC, Strategy(SPEC), SQLiteStore(str(tmp_path / "db")))
    for i in range(5):
        store.create({"metadata": {"name": f"cm{i}"}, "data": {"x": "y" * i}}, "ns")
    expected = dumps_json(store.list("ns"))
    assert store.list_json("ns") == expected  # cold: the items packed
    items = list(store.item_cache.entries.values())
    assert all(isinstance(item, memoryview) for item in items)
    assert len({item.obj for item in items}) == 1  # one block
    assert store.list_json("ns") == expected  # from the packed cache
    assert store.get_json("ns", "cm3") == dumps_json(dict(
        {"kind": "ConfigMap", "apiVersion": "v1"}, **store.get("ns", "cm3")))
