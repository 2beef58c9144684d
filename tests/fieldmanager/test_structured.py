"""Tests for kapiserver.fieldmanager.structured: field sets, merge, removal of typed values."""

import json

import pytest

from kapiserver.fieldmanager import ListTypes, PathElement, Set, make_path
from kapiserver.fieldmanager.schema import ANY_SHAPE, Node
from kapiserver.fieldmanager.structured import (MISSING, merge, remove_items, to_field_set,
                                                to_object)

V, K = PathElement.value, PathElement.key


def paths(*dotted):
    return Set(make_path(*p.split(".")) for p in dotted)


def deduced(lists=None, atomic=()):
    """A schemaless root (every map a deduced, separable map) with these list types."""
    types = ListTypes(lists, atomic=atomic)
    return Node(ANY_SHAPE, types.cursor(), types)


def configmap():
    return Node.root("v1", "ConfigMap")


def service():
    return Node.root("v1", "Service")


# -- ToFieldSet -------------------------------------------------------------------------------

def test_struct_fields_are_not_members_but_map_entries_are():
    # upstream's apply entries: f:data holds f:x, without "." for data itself
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "labels": {"l": "1"}},
           "data": {"x": "1"}}
    assert to_field_set(obj, configmap()) == Set([
        make_path("apiVersion"), make_path("kind"), make_path("metadata", "name"),
        make_path("metadata", "labels", "l"), make_path("data", "x")])


def test_empty_and_null_containers_set_nothing_but_null_map_entries_do():
    obj = {"data": {}, "binaryData": None, "metadata": {"labels": {"gone": None}}}
    assert to_field_set(obj, configmap()) == paths("metadata.labels.gone")


def test_deduced_maps_track_every_key():
    assert to_field_set({"spec": {"a": {"b": 1}}}, deduced()) == paths(
        "spec", "spec.a", "spec.a.b")


def test_atomic_maps_and_lists_are_one_member():
    obj = {"spec": {"selector": {"app": "web"}, "externalIPs": ["1.2.3.4"]}}
    assert to_field_set(obj, service()) == paths("spec.selector", "spec.externalIPs")


def test_list_items_are_members_with_their_fields():
    obj = {"spec": {"ports": [{"port": 80, "name": "http"}]},
           "metadata": {"finalizers": ["a", "b"]}}
    item = K({"port": 80, "protocol": "TCP"})  # protocol takes its schema default
    assert to_field_set(obj, service()) == Set([
        make_path("spec", "ports", item), make_path("spec", "ports", item, "port"),
        make_path("spec", "ports", item, "name"),
        make_path("metadata", "finalizers", V("a")), make_path("metadata", "finalizers", V("b"))])


def test_field_set_fields_v1_form_of_a_service_port():
    obj = {"spec": {"ports": [{"port": 80, "protocol": "UDP", "targetPort": 53}]}}
    assert to_field_set(obj, service()).to_fields_v1() == {"f:spec": {"f:ports": {
        'k:{"port":80,"protocol":"UDP"}': {".": {}, "f:port": {}, "f:protocol": {},
                                           "f:targetPort": {}}}}}


# -- Merge: upstream's typed/merge_test.go triplets -------------------------------------------

MERGE_TYPES = {"setStr": "set", "setBool": "set", "setNumeric": "set",
               "list": ("map", ("key", "id"))}

MERGES = [
    ('{"setStr":["a","b","c"]}', '{"setStr":["a","b"]}', '{"setStr":["a","b","c"]}'),
    ('{"setStr":["a","b"]}', '{"setStr":["a","b","c"]}', '{"setStr":["a","b","c"]}'),
    ('{"setStr":["a","b","c"]}', '{"setStr":[]}', '{"setStr":["a","b","c"]}'),
    ('{"setStr":[]}', '{"setStr":["a","b","c"]}', '{"setStr":["a","b","c"]}'),
    ('{"setStr":["a","b"]}', '{"setStr":["b","a"]}', '{"setStr":["b","a"]}'),
    ('{"setStr":["a","b","c"]}', '{"setStr":["d","e","f"]}',
     '{"setStr":["a","b","c","d","e","f"]}'),
    ('{"setStr":["a","b","c","g","f"]}', '{"setStr":["c","d","e","f"]}',
     '{"setStr":["a","b","c","g","d","e","f"]}'),
    ('{"setStr":["c","d","e","f"]}', '{"setStr":["a","c","e"]}',
     '{"setStr":["a","c","d","e","f"]}'),
    ('{"setStr":["a","b","c","x","y","z"]}', '{"setStr":["d","e","f","x","y","z"]}',
     '{"setStr":["a","b","c","d","e","f","x","y","z"]}'),
    ('{"setStr":["c","a","g","f"]}', '{"setStr":["c","f","a","g"]}',
     '{"setStr":["c","f","a","g"]}'),
    ('{"setStr":["a","b","c","d"]}', '{"setStr":["d","e","f","a"]}',
     '{"setStr":["b","c","d","e","f","a"]}'),
    ('{"setStr":["c","d","e","f","g","h","i","j"]}', '{"setStr":["2","h","3","e","4","k","l"]}',
     '{"setStr":["c","d","f","g","2","h","i","j","3","e","4","k","l"]}'),
    ('{"setStr":["a","b","c","d","e","f","g","h","i","j"]}',
     '{"setStr":["1","b","2","h","3","e","4","k","l"]}',
     '{"setStr":["a","1","b","c","d","f","g","2","h","i","j","3","e","4","k","l"]}'),
    ('{"setBool":[true]}', '{"setBool":[false]}', '{"setBool":[true,false]}'),
    ('{"setNumeric":[1,2,3.14159]}', '{"setNumeric":[1,2,3]}',
     '{"setNumeric":[1,2,3.14159,3]}'),
    ('{"list":[{"key":"a","id":1,"value":{"a":"a"}}]}',
     '{"list":[{"key":"a","id":2,"value":{"a":"a"}}]}',
     '{"list":[{"key":"a","id":1,"value":{"a":"a"}},{"key":"a","id":2,"value":{"a":"a"}}]}'),
    ('{"list":[{"key":"b","id":2}]}',
     '{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}',
     '{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}'),
    ('{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}',
     '{"list":[{"key":"c","id":3},{"key":"b","id":2}]}',
     '{"list":[{"key":"a","id":1},{"key":"c","id":3},{"key":"b","id":2}]}'),
    ('{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}',
     '{"list":[{"key":"c","id":3},{"key":"a","id":1}]}',
     '{"list":[{"key":"b","id":2},{"key":"c","id":3},{"key":"a","id":1}]}'),
    ('{"atomicList":["a","a","a"]}', '{"atomicList":null}', '{"atomicList":null}'),
    ('{"atomicList":["a","b","c"]}', '{"atomicList":[]}', '{"atomicList":[]}'),
    ('{"inner":{}}', '{"inner":null}', '{"inner":null}'),
    ('{"inner":null}', '{"inner":{}}', '{"inner":{}}'),
    ('{"key":"foo"}', '{"value":true}', '{"key":"foo","value":true}'),
]


@pytest.mark.parametrize("lhs,rhs,out", MERGES)
def test_merge_matches_upstreams_cases(lhs, rhs, out):
    assert merge(json.loads(lhs), json.loads(rhs), deduced(MERGE_TYPES)) == json.loads(out)


def test_merge_keeps_live_key_order_then_adds_the_configs():
    merged = merge({"b": 1, "a": {"x": 1}}, {"c": 3, "a": {"y": 2}, "b": 2}, deduced())
    assert list(merged) == ["b", "a", "c"] and list(merged["a"]) == ["x", "y"]
    assert merged == {"b": 2, "a": {"x": 1, "y": 2}, "c": 3}


def test_merge_replaces_atomic_values_whole():
    live = {"spec": {"selector": {"a": "1", "b": "2"}, "externalIPs": ["1.1.1.1", "2.2.2.2"]}}
    config = {"spec": {"selector": {"a": "9"}, "externalIPs": ["3.3.3.3"]}}
    assert merge(live, config, service()) == config


def test_merging_null_into_a_struct_keeps_the_live_one():
    # a null facing a map is an empty one: nothing to merge in
    live = {"metadata": {"labels": {"a": "1"}}}
    assert merge(live, {"metadata": {"labels": None}}, configmap()) == live


def test_merge_of_nothing():
    assert merge(MISSING, MISSING, deduced()) is MISSING
    assert merge({"a": 1}, MISSING, deduced()) == {"a": 1}


# -- RemoveItems --------------------------------------------------------------------------

def test_remove_items_drops_members_and_what_is_below_them():
    value = {"data": {"x": "1", "y": "2"}, "metadata": {"name": "a", "labels": {"l": "1"}}}
    assert remove_items(value, paths("data.x", "metadata.labels"), configmap()) == {
        "data": {"y": "2"}, "metadata": {"name": "a"}}


def test_remove_items_leaves_emptied_containers_null():
    assert remove_items({"data": {"x": "1"}, "kind": "ConfigMap"}, paths("data.x"),
                        configmap()) == {"data": None, "kind": "ConfigMap"}


def test_remove_items_from_keyed_lists_and_sets():
    item80, item53 = K({"port": 80, "protocol": "TCP"}), K({"port": 53, "protocol": "UDP"})
    value = {"spec": {"ports": [{"port": 80, "name": "a"}, {"port": 53, "protocol": "UDP"}]},
             "metadata": {"finalizers": ["a", "b"]}}
    fields = Set([make_path("spec", "ports", item53), make_path("spec", "ports", item80, "name"),
                  make_path("metadata", "finalizers", V("a"))])
    assert remove_items(value, fields, service()) == {
        "spec": {"ports": [{"port": 80}]}, "metadata": {"finalizers": ["b"]}}


def test_remove_items_does_not_change_its_input():
    value = {"data": {"x": "1", "y": "2"}}
    remove_items(value, paths("data.x"), configmap())
    assert value == {"data": {"x": "1", "y": "2"}}


# -- to_object ----------------------------------------------------------------------------

def test_null_string_map_values_become_empty_strings_other_nulls_go():
    # what decoding the unstructured result into Go types does
    value = {"data": {"x": None, "y": "1"}, "metadata": {"name": "a", "labels": None},
             "immutable": None}
    assert to_object(value, configmap()) == {"data": {"x": "", "y": "1"},
                                             "metadata": {"name": "a"}}


def test_to_object_keeps_free_form_values():
    assert to_object({"spec": {"a": None, "b": [None]}}, deduced()) == {"spec": {"b": [None]}}
