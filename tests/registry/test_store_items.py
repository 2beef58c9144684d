"""Stored values and the JSON list items the read cache holds in their place."""

from __future__ import annotations

import json

import pytest

from kapiserver.registry.store import ItemKeyValue, _json_item_parts, encode, json_item
from kapiserver.serialization import dumps_json
from kapiserver.storage import KeyValue


def configmap(**data) -> dict:
    return {"kind": "ConfigMap", "apiVersion": "v1",
            "metadata": {"name": "cm", "namespace": "ns", "uid": "u-1",
                         "creationTimestamp": "2024-01-01T00:00:00Z",
                         "labels": {"a": "b"}},
            "data": data}


@pytest.mark.parametrize("data", [{"k": "v"}, {"k": "é ünïcode"}, {"k": "line\u2028sep"}, {}])
def test_an_item_held_gives_back_the_value_byte_for_byte(data):
    value = encode(configmap(**data))
    kv = KeyValue("/registry/configmaps/ns/cm", value, 7, 1234)
    item, start, end, escaped = _json_item_parts(value, kv.mod_revision)
    assert escaped == any("\u2028" in text for text in data.values())
    if escaped:
        return  # held as the value: a translated item does not give it back
    held = ItemKeyValue(kv, item, value[:start], 1 + end - start)
    assert held.value == value
    assert (held.key, held.create_revision, held.mod_revision) == (kv.key, 7, 1234)
    assert held.item == json_item(value, 1234)
    obj = configmap(**data)
    obj["metadata"]["resourceVersion"] = "1234"
    del obj["kind"], obj["apiVersion"]
    assert json.loads(held.item) == obj


def test_items_are_what_the_encoder_writes():
    obj = configmap(html="<b>&</b>")
    value = encode(obj)
    obj["metadata"] = {**obj["metadata"], "resourceVersion": "9"}
    obj["metadata"] = {k: obj["metadata"][k] for k in (
        "name", "namespace", "uid", "resourceVersion", "creationTimestamp", "labels")}
    expected = dumps_json({k: v for k, v in obj.items() if k not in ("kind", "apiVersion")})
    assert json_item(value, 9) == expected[:-1]
    assert _json_item_parts(value, 9)[3]  # escaped: never held as an item


@pytest.fixture
def registry(tmp_path):
    from kapiserver.storage.sqlite import SQLiteStore
    from kapiserver.storage.watchcache import WatchCache
    from kapiserver.registry.store import RegistryStore
    from kapiserver_plugins.core.configmaps import CONFIGMAPS, ConfigMapStrategy

    store = SQLiteStore(tmp_path / "kv.db")
    cache = WatchCache(store, interval=0.01)
    yield RegistryStore(CONFIGMAPS, ConfigMapStrategy(CONFIGMAPS), store, cache.written)
    cache.close()
    store.close()


@pytest.mark.parametrize("canonical", [True, False])
def test_a_list_from_memory_is_the_stores_and_decodes_each_object_once(registry, canonical):
    for i in range(20):
        obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i:02d}"},
               "data": {"i": str(i), "html": "<&>" if i == 3 else ""}}
        if canonical:
            obj = {"kind": obj.pop("kind"), **obj}
        registry.create(obj, "ns")
    reads = registry.read_cache
    first = registry.list_json("ns")
    decodes = []
    decode = registry.decode
    registry.decode = lambda value, revision: decodes.append(revision) or decode(value,
                                                                                 revision)
    assert registry.list_json("ns") == first
    assert registry.get_json("ns", "cm-05") == registry.get_json("ns", "cm-05")
    assert decodes == []
    registry.read_cache = None  # the same answers from the store
    assert json.loads(registry.list_json("ns")) == json.loads(first)
    registry.read_cache = reads
    held = reads.indexes[registry._index_prefix].entries
    kinds = {type(kv).__name__ for key, kv in held.items() if not key.endswith("cm-03")}
    assert kinds == ({"ItemKeyValue"} if canonical else {"KeyValue"})
    assert type(held["/registry/configmaps/ns/cm-03"]).__name__ == "KeyValue"  # escaped
    assert registry.get("ns", "cm-07")["data"]["i"] == "7"  # decoded from the item


def test_a_protobuf_list_from_memory_is_the_stores_and_is_held_with_each_object(registry):
    from kapiserver.runtime import protobuf

    for i in range(20):
        registry.create({"kind": "ConfigMap", "apiVersion": "v1",
                         "metadata": {"name": f"cm-{i:02d}"},
                         "data": {"i": str(i), "sep": "\u2028" if i == 4 else ""}}, "ns")
    reads = registry.read_cache
    first = registry.list_protobuf("ns")
    assert registry.list_protobuf("ns") == first
    registry.read_cache = None  # the same bytes from the store
    assert registry.list_protobuf("ns") == first
    registry.read_cache = reads
    held = reads.indexes[registry._index_prefix].entries
    assert {key for key, kv in held.items() if getattr(kv, "protobuf", None) is None} == {
        "/registry/configmaps/ns/cm-04"}  # escaped: not held as an item
    listed = protobuf.decode(first)
    assert [item["data"]["i"] for item in listed["items"]] == [str(i) for i in range(20)]
    assert listed["items"][4]["data"]["sep"] == "\u2028"
    # A new revision is listed as itself; the JSON list beside it still agrees.
    changed = registry.get("ns", "cm-07")
    changed["data"]["i"] = "seven"
    registry.update("ns", "cm-07", changed)
    after = protobuf.decode(registry.list_protobuf("ns"))
    assert after["items"][7]["data"]["i"] == "seven"
    as_json = json.loads(registry.list_json("ns"))
    assert after["items"] == as_json["items"]
    assert after["metadata"]["resourceVersion"] == as_json["metadata"]["resourceVersion"]
