"""Tests of custom-resource pruning (pruning.PruneWithOptions with tracked paths)."""

from kapiserver_plugins.apiextensions.schema import prune

SCHEMA = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
    "a": {"type": "string"},
    "items": {"type": "array", "items": {"type": "object", "properties": {
        "n": {"type": "integer"}}}},
    "labels": {"type": "object", "additionalProperties": {"type": "object", "properties": {
        "v": {"type": "string"}}}},
}}}}


def test_unknown_fields_are_dropped_and_reported_sorted():
    obj = {"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "x"},
           "spec": {"a": "1", "zz": 1, "b": 2,
                    "items": [{"n": 1, "bar": 2}, {"baz": 3}],
                    "labels": {"k": {"v": "1", "w": 2}}},
           "status": {}}
    assert prune(SCHEMA, obj) == ["spec.b", "spec.items[0].bar", "spec.items[1].baz",
                                  "spec.labels.k.w", "spec.zz", "status"]
    assert obj == {"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "x"},
                   "spec": {"a": "1", "items": [{"n": 1}, {}], "labels": {"k": {"v": "1"}}}}


def test_root_type_and_object_meta_are_kept_at_the_root():
    obj = {"apiVersion": "v1", "kind": "K", "metadata": {"x": 1}}
    assert prune(SCHEMA, obj) == []
    assert obj == {"apiVersion": "v1", "kind": "K", "metadata": {"x": 1}}


def test_type_meta_of_a_non_resource_root_goes_unreported():
    obj = {"apiVersion": "v1", "kind": "K", "other": 1}
    assert prune(SCHEMA, obj, is_resource_root=False) == ["other"]
    assert obj == {}


def test_type_meta_is_kept_whatever_its_type():
    obj = {"apiVersion": 1, "kind": "K", "metadata": "m"}
    assert prune(SCHEMA, obj) == []
    assert obj == {"apiVersion": 1, "kind": "K", "metadata": "m"}


def test_preserve_unknown_fields_keeps_unknown_but_prunes_known():
    schema = {"type": "object", "properties": {"spec": {
        "type": "object", "x-kubernetes-preserve-unknown-fields": True,
        "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}}}}}
    obj = {"spec": {"other": {"deep": 1}, "known": {"a": "x", "b": "y"}}}
    assert prune(schema, obj) == ["spec.known.b"]
    assert obj == {"spec": {"other": {"deep": 1}, "known": {"a": "x"}}}


def test_preserve_unknown_fields_in_array_items():
    schema = {"type": "object", "properties": {"l": {"type": "array", "items": {
        "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}
    obj = {"l": [{"a": 1}]}
    assert prune(schema, obj) == []
    assert obj == {"l": [{"a": 1}]}


def test_embedded_resource_keeps_type_meta_and_cuts_metadata():
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                     "properties": {"spec": {"type": "object", "properties": {
                         "x": {"type": "string"}}}}}}}}}
    obj = {"spec": {"template": {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "n", "labels": {"a": "b"}, "bogus": 1},
        "spec": {"x": "1", "y": 2}, "other": 3}}}
    assert prune(schema, obj) == ["spec.template.other", "spec.template.spec.y",
                                  "spec.template.metadata.bogus"]
    assert obj == {"spec": {"template": {"apiVersion": "v1", "kind": "Pod",
                                         "metadata": {"name": "n", "labels": {"a": "b"}},
                                         "spec": {"x": "1"}}}}


def test_embedded_metadata_untouched_without_preserve_metadata():
    schema = {"type": "object", "properties": {"t": {
        "type": "object", "x-kubernetes-embedded-resource": True,
        "x-kubernetes-preserve-unknown-fields": True}}}
    obj = {"t": {"apiVersion": "v1", "kind": "Pod", "metadata": {"bogus": 1}}}
    assert prune(schema, obj, preserve_metadata=False) == []
    assert obj["t"]["metadata"] == {"bogus": 1}


def test_additional_properties_true_keeps_keys_but_not_their_fields():
    # upstream prunes below a schema-less additionalProperties as below no schema at all
    schema = {"type": "object", "properties": {"m": {
        "type": "object", "additionalProperties": True}}}
    obj = {"m": {"a": {"b": 1}, "s": "x"}}
    assert prune(schema, obj) == ["m.a.b"]
    assert obj == {"m": {"a": {}, "s": "x"}}


def test_disallowed_nulls_are_dropped_unreported():
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "a": {"type": "string"}, "b": {"type": "string", "nullable": True}}}}}
    obj = {"spec": {"a": None, "b": None}}
    assert prune(schema, obj) == []
    assert obj == {"spec": {"b": None}}


def test_empty_schema_prunes_everything_but_type_meta():
    obj = {"apiVersion": "v1", "kind": "K", "metadata": {}, "spec": {"a": 1}}
    assert prune({}, obj) == ["spec"]
