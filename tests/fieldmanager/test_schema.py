"""Tests for kapiserver.fieldmanager.schema: kinds' shapes and checking applied configs."""

import pytest

from kapiserver.fieldmanager.schema import (ANY, LIST, MAP, SCALAR, STRUCT, Node, gvk_string,
                                            shape_for_kind, validate)


def check(obj, api_version="v1", kind="ConfigMap"):
    return validate(obj, Node.root(api_version, kind))


def test_built_in_kinds_take_their_shape_from_the_protobuf_tables():
    service = shape_for_kind("v1", "Service")
    assert service.kind == STRUCT and set(service.fields()) >= {
        "apiVersion", "kind", "metadata", "spec", "status"}
    spec = service.field("spec")
    assert spec.field("ports").kind == LIST and spec.field("ports").element().kind == STRUCT
    assert spec.field("selector").kind == MAP
    assert spec.field("ports").element().field("targetPort").scalar == "untyped"
    assert spec.field("clusterIP").kind == SCALAR and spec.field("clusterIP").scalar == "string"
    assert service.field("nope") is None and service.element() is None


def test_kinds_without_a_schema_are_deduced_but_for_object_meta():
    shape = shape_for_kind("example.com/v1", "Widget")
    assert shape.field("metadata").field("labels").kind == MAP
    assert shape.field("spec") is None and shape.element().kind == ANY
    assert check({"spec": {"anything": [1, {"a": None}]}}, "example.com/v1", "Widget") == []


def test_a_valid_config_has_no_errors():
    assert check({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": "a", "labels": {"x": "y"}, "creationTimestamp": None,
        "finalizers": ["f"], "ownerReferences": [{"uid": "u", "apiVersion": "v1",
                                                  "kind": "K", "name": "n"}]},
        "data": {"a": "1", "b": None}, "immutable": True}) == []


@pytest.mark.parametrize("obj,error", [
    ({"status": {}}, ".status: field not declared in schema"),
    ({"metadata": {"unknownMeta": 1}}, ".metadata.unknownMeta: field not declared in schema"),
    ({"data": {"x": 1}}, ".data.x: expected string, got &value.valueUnstructured{Value:1}"),
    ({"data": {"x": True}}, ".data.x: expected string, got &value.valueUnstructured{Value:true}"),
    ({"data": {"x": ["a"]}},
     '.data.x: expected string, got &value.valueUnstructured{Value:[]interface {}{"a"}}'),
    ({"immutable": "yes"}, ".immutable: expected boolean, got &{yes}"),
    ({"data": "x"}, ".data: expected map, got &{x}"),
    ({"metadata": {"finalizers": "x"}}, ".metadata.finalizers: expected list, got &{x}"),
    ({"metadata": {"generation": "1"}},
     ".metadata.generation: expected numeric (int or float), got string"),
    ({"metadata": {"finalizers": ["a", None]}},
     ".metadata.finalizers: element 1: associative list without keys has an element that's "
     "an explicit null"),
])
def test_errors_are_worded_as_upstreams(obj, error):
    assert check(obj) == [error]


def test_keyed_lists_refuse_duplicates_and_missing_keys():
    assert validate({"spec": {"ports": [{"port": 80}, {"port": 80, "protocol": "TCP"}]}},
                    Node.root("v1", "Service")) == [
        '.spec.ports: duplicate entries for key [port=80,protocol="TCP"]']
    assert validate({"metadata": {"ownerReferences": [{"name": "x"}, {"uid": 1}]},
                     "secrets": [{"namespace": "x"}]}, Node.root("v1", "ServiceAccount")) == [
        ".metadata.ownerReferences[uid=1].uid: expected string, got "
        "&value.valueUnstructured{Value:1}",
        '.secrets: element 0: associative list with keys has an element that omits key field '
        '"name" (and doesn\'t have default value)']


def test_atomic_list_items_are_checked_by_index():
    assert validate({"spec": {"externalIPs": ["a", 1]}}, Node.root("v1", "Service")) == [
        ".spec.externalIPs[1]: expected string, got &value.valueUnstructured{Value:1}"]


def test_an_undeclared_field_stops_checking_its_map():
    assert check({"metadata": {"bad": 1, "worse": 2}, "data": {"x": 1}}) == [
        ".metadata.bad: field not declared in schema",
        ".data.x: expected string, got &value.valueUnstructured{Value:1}"]


@pytest.mark.parametrize("api_version,kind,text", [
    ("v1", "ConfigMap", "/v1, Kind=ConfigMap"),
    ("apps/v1", "Deployment", "apps/v1, Kind=Deployment"),
    (None, "ConfigMap", "/, Kind=ConfigMap"),
    ("a/b/c", "X", "/, Kind="),
    (1, None, "/, Kind="),
])
def test_gvk_string(api_version, kind, text):
    assert gvk_string(api_version, kind) == text
