"""Tests of custom-resource defaulting (structuraldefaulting.Default)."""

from kapiserver_plugins.apiextensions.schema import default, prune_nulls


def test_missing_property_gets_default():
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "replicas": {"type": "integer", "default": 1}}}}}
    obj = {"spec": {}}
    default(schema, obj)
    assert obj == {"spec": {"replicas": 1}}


def test_present_value_is_kept():
    schema = {"type": "object", "properties": {"a": {"type": "string", "default": "x"}}}
    obj = {"a": "y"}
    default(schema, obj)
    assert obj == {"a": "y"}


def test_missing_parent_is_not_created():
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "a": {"type": "string", "default": "x"}}}}}
    obj = {}
    default(schema, obj)
    assert obj == {}


def test_defaults_inside_a_default_apply():
    schema = {"type": "object", "properties": {"spec": {
        "type": "object", "default": {},
        "properties": {"a": {"type": "string", "default": "x"}}}}}
    obj = {}
    default(schema, obj)
    assert obj == {"spec": {"a": "x"}}


def test_null_of_non_nullable_is_defaulted():
    schema = {"type": "object", "properties": {"a": {"type": "string", "default": "x"},
                                               "b": {"type": "string", "default": "y",
                                                     "nullable": True}}}
    obj = {"a": None, "b": None}
    default(schema, obj)
    assert obj == {"a": "x", "b": None}


def test_null_default_means_no_default():
    schema = {"type": "object", "properties": {"a": {"type": "string", "nullable": True,
                                                     "default": None}}}
    obj = {}
    default(schema, obj)
    assert obj == {}


def test_array_items_are_defaulted():
    schema = {"type": "array", "items": {"type": "object", "default": {"z": 0}, "properties": {
        "n": {"type": "integer", "default": 5}}}}
    obj = [{}, {"n": 1}, None]
    default(schema, obj)
    assert obj == [{"n": 5}, {"n": 1}, {"z": 0, "n": 5}]


def test_additional_properties_values_are_defaulted():
    schema = {"type": "object", "additionalProperties": {
        "type": "object", "default": {}, "properties": {"n": {"type": "integer", "default": 5}}}}
    obj = {"a": {}, "b": None}
    default(schema, obj)
    assert obj == {"a": {"n": 5}, "b": {"n": 5}}


def test_defaults_are_deep_copied():
    schema = {"type": "object", "properties": {"a": {"type": "object", "default": {"l": [1]}}}}
    first, second = {}, {}
    default(schema, first)
    default(schema, second)
    first["a"]["l"].append(2)
    assert second == {"a": {"l": [1]}}
    assert schema["properties"]["a"]["default"] == {"l": [1]}


def test_scalars_and_missing_schema_are_left_alone():
    default({"type": "string", "default": "x"}, "v")
    default(None, {"a": 1})
    obj = {"a": 1}
    default({"type": "object"}, obj)
    assert obj == {"a": 1}


def test_prune_nulls_drops_nulls_without_default_or_nullable():
    schema = {"type": "object", "properties": {
        "a": {"type": "string"}, "b": {"type": "string", "default": "x"},
        "c": {"type": "string", "nullable": True},
        "l": {"type": "array", "items": {"type": "object", "properties": {
            "d": {"type": "string"}}}}}}
    obj = {"a": None, "b": None, "c": None, "u": None, "l": [{"d": None}, None]}
    prune_nulls(schema, obj)
    assert obj == {"b": None, "c": None, "u": None, "l": [{}, None]}
