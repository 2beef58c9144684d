"""Tests for kapiserver.fieldmanager.fieldpath: path elements, FieldsV1, set algebra."""

import json

import pytest

from kapiserver.fieldmanager import ListTypes, for_kind, PathElement, Set, make_path, path_string
from kapiserver.fieldmanager.fieldpath import value_order
from tests.fieldmanager.transcripts import reference_body, reference_item

F, K, V, I = PathElement.field, PathElement.key, PathElement.value, PathElement.index


def dumps(value) -> str:
    """JSON text keeping key order: what a client sees, so order matters."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# -- path elements ----------------------------------------------------------------------------

@pytest.mark.parametrize("pe, text", [
    (F("data"), "f:data"),
    (F("kubernetes.io/metadata.name"), "f:kubernetes.io/metadata.name"),
    (K({"protocol": "TCP", "port": 80}), 'k:{"port":80,"protocol":"TCP"}'),
    (K({"uid": "a-b"}), 'k:{"uid":"a-b"}'),
    (V("kubernetes"), 'v:"kubernetes"'),
    (V(3), "v:3"),
    (V(True), "v:true"),
    (I(4), "i:4"),
    # Go's encoder escapes HTML characters and U+2028 inside embedded JSON
    (K({"name": "a<b>&c\u2028"}), 'k:{"name":"a\\u003cb\\u003e\\u0026c\\u2028"}'),
    (V("tab\there\x01"), 'v:"tab\\there\\u0001"'),
    (V("é"), 'v:"é"'),
    (V(1.5), "v:1.5"),
    (V(2.0), "v:2"),
])
def test_serialize_and_parse_back(pe, text):
    assert pe.serialize() == text
    assert PathElement.deserialize(text) == pe


def test_elements_sort_by_kind_then_value():
    elements = [I(0), V("a"), K({"name": "a"}), F("b"), F("a"), V(1), V(None), V(False),
                K({"name": "B"})]
    assert sorted(elements) == [F("a"), F("b"), K({"name": "B"}), K({"name": "a"}),
                                V(1), V("a"), V(False), V(None), I(0)]


def test_value_order_is_upstreams_total_order():
    # numbers (int and float numerically) < strings < booleans < lists < maps < null
    values = [None, {"a": 1}, [1], True, False, "b", "a", 2.5, 2, -1]
    assert sorted(values, key=value_order) == [-1, 2, 2.5, "a", "b", False, True, [1],
                                               {"a": 1}, None]
    assert V(80) == V(80.0) and hash(V(80)) == hash(V(80.0))
    assert V(1) != V(True)


def test_keys_compare_field_by_field():
    assert K({"port": 80, "protocol": "TCP"}) < K({"port": 80, "protocol": "UDP"})
    assert K({"port": 80, "protocol": "UDP"}) < K({"port": 443, "protocol": "TCP"})
    assert K({"a": 1}) < K({"a": 1, "b": 1})


@pytest.mark.parametrize("text", ["f", "fx", "k:[1]", "i:x", "v:{"])
def test_malformed_elements_are_errors(text):
    with pytest.raises(ValueError):
        PathElement.deserialize(text)


def test_unknown_element_kinds_are_skipped():
    assert PathElement.deserialize("z:whatever") is None
    assert Set.from_fields_v1({"z:x": {}, "f:a": {}}) == Set([make_path("a")])


def test_path_strings():
    path = make_path("spec", "ports", {"port": 80, "protocol": "TCP"}, "name")
    assert path_string(path) == '.spec.ports[port=80,protocol="TCP"].name'
    assert path_string((F("m"), V("x"), I(2))) == '.m[="x"][2]'


# -- FieldsV1 -----------------------------------------------------------------------------

def reference_fields():
    created = reference_body("create-configmap.json")["metadata"]["managedFields"]
    updated = reference_item("list-configmaps-limit.json", "cm1")["metadata"]["managedFields"]
    applied = reference_body("apply-create.json")["metadata"]["managedFields"]
    namespace = reference_body("namespace-delete.json")["metadata"]["managedFields"]
    return [entry["fieldsV1"] for entry in created + updated + applied + namespace]


@pytest.mark.parametrize("fields", reference_fields())
def test_reference_fields_round_trip_byte_for_byte(fields):
    assert dumps(Set.from_fields_v1(fields).to_fields_v1()) == dumps(fields)


#: What a v1.32 server records for ``kubectl create service clusterip`` (kubectl-create).
SERVICE_FIELDS = {
    "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
    "f:spec": {
        "f:internalTrafficPolicy": {},
        "f:ports": {".": {}, 'k:{"port":80,"protocol":"TCP"}': {
            ".": {}, "f:name": {}, "f:port": {}, "f:protocol": {}, "f:targetPort": {}}},
        "f:selector": {}, "f:sessionAffinity": {}, "f:type": {}},
}


def test_nested_keys_round_trip():
    assert dumps(Set.from_fields_v1(SERVICE_FIELDS).to_fields_v1()) == dumps(SERVICE_FIELDS)


def test_serialization_sorts_whatever_the_input_order():
    shuffled = {"f:spec": {"f:type": {}, "f:ports": {
        'k:{"protocol":"TCP","port":80}': {"f:targetPort": {}, "f:port": {}, ".": {},
                                           "f:protocol": {}, "f:name": {}},
        ".": {}}, "f:selector": {}, "f:sessionAffinity": {}, "f:internalTrafficPolicy": {}},
        "f:metadata": {"f:labels": {"f:app": {}, ".": {}}}}
    assert dumps(Set.from_fields_v1(shuffled).to_fields_v1()) == dumps(SERVICE_FIELDS)


def test_dot_marks_a_member_that_has_members_beneath():
    fields = Set([make_path("data"), make_path("data", "a"), make_path("metadata", "x")])
    assert dumps(fields.to_fields_v1()) == \
        '{"f:data":{".":{},"f:a":{}},"f:metadata":{"f:x":{}}}'
    assert Set.from_fields_v1({"f:a": {".": {}}}) == Set([make_path("a")])
    assert Set.from_fields_v1({}).empty()


def test_set_and_key_items_in_fields_v1():
    fields = Set([make_path("metadata", "finalizers"),
                  make_path("metadata", "finalizers", V("kubernetes")),
                  make_path("metadata", "finalizers", V("a/b"))])
    assert dumps(fields.to_fields_v1()) == \
        '{"f:metadata":{"f:finalizers":{".":{},"v:\\"a/b\\"":{},"v:\\"kubernetes\\"":{}}}}'


@pytest.mark.parametrize("bad", [[], {"f:a": []}, {"f:a": {"f:b": "x"}}, {"k:nope": {}}])
def test_malformed_fields_are_errors(bad):
    with pytest.raises(ValueError):
        Set.from_fields_v1(bad)


# -- algebra --------------------------------------------------------------------------------

def paths(*dotted):
    return Set(make_path(*p.split(".")) for p in dotted)


def test_union_intersection_difference():
    a = paths("data", "data.a", "metadata.labels.x")
    b = paths("data.a", "data.b", "spec")
    assert a.union(b) == paths("data", "data.a", "data.b", "metadata.labels.x", "spec")
    assert a | b == a.union(b)
    assert a.intersection(b) == paths("data.a")
    assert a & b == a.intersection(b)
    assert a.difference(b) == paths("data", "metadata.labels.x")
    assert a - b == a.difference(b)
    assert b.difference(a) == paths("data.b", "spec")
    # operands are never changed
    assert a == paths("data", "data.a", "metadata.labels.x")


def test_difference_is_by_member_as_upstream():
    # parent - child = parent; child - parent = child (only RecursiveDifference prunes)
    assert paths("a").difference(paths("a.b")) == paths("a")
    assert paths("a.b").difference(paths("a")) == paths("a.b")
    assert paths("a", "a.b", "c").recursive_difference(paths("a")) == paths("c")
    assert paths("s.x.y", "s.z").recursive_difference(paths("s.x")) == paths("s.z")


def test_empty_len_has_and_iteration_order():
    assert Set().empty() and not Set() and len(Set()) == 0
    s = paths("metadata.labels", "metadata.labels.b", "data.a", "data", "metadata.labels.a")
    assert not s.empty() and len(s) == 5
    assert s.has(make_path("data")) and make_path("data", "a") in s
    assert not s.has(make_path("metadata")) and not s.has(())
    # a node's members first, then its children, each sorted
    assert [path_string(p) for p in s] == [".data", ".data.a", ".metadata.labels",
                                           ".metadata.labels.a", ".metadata.labels.b"]
    assert [path_string(p) for p in s.leaf_paths()] == [".data.a", ".metadata.labels.a",
                                                        ".metadata.labels.b"]
    assert s.leaves() == paths("data.a", "metadata.labels.a", "metadata.labels.b")
    assert s.with_prefix(F("data")) == paths("a")
    assert Set([()]).empty()  # the whole object is never tracked


def test_emptied_nodes_disappear():
    s = paths("a.b").difference(paths("a.b"))
    assert s.empty() and s.to_fields_v1() == {}
    assert paths("a.b").intersection(paths("a.c")).to_fields_v1() == {}


# -- from_object ------------------------------------------------------------------------------

def test_from_object_of_the_reference_configmap():
    body = reference_body("create-configmap.json")
    fields = Set.from_object(body, for_kind("v1", "ConfigMap"))
    assert paths("data", "data.a", "metadata.labels", "metadata.labels.app").difference(
        fields).empty()
    assert fields.has(make_path("metadata", "name"))
    assert not fields.has(make_path("metadata"))  # present in the zero object too
    assert Set.from_object(body).has(make_path("metadata"))  # unknown kinds have none


def test_from_object_keys_lists_as_the_table_says():
    types = ListTypes({"spec.ports": ("map", ("port", "protocol"), {"protocol": "TCP"}),
                       "metadata.finalizers": "set"}, atomic=("spec.selector",))
    obj = {"metadata": {"finalizers": ["b", "a"]},
           "spec": {"ports": [{"port": 80, "name": "http"}], "selector": {"app": "x"},
                    "ips": ["1.1.1.1"]}}
    port = K({"port": 80, "protocol": "TCP"})
    assert Set.from_object(obj, types) == Set([
        make_path("metadata"), make_path("metadata", "finalizers"),
        make_path("metadata", "finalizers", V("a")), make_path("metadata", "finalizers", V("b")),
        make_path("spec"), make_path("spec", "ports"), make_path("spec", "ports", port),
        make_path("spec", "ports", port, "port"), make_path("spec", "ports", port, "name"),
        make_path("spec", "selector"), make_path("spec", "ips")])
