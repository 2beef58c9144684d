"""Unknown fields (``fieldValidation``): of a kind described by OpenAPI definitions
(``SchemaFields``: the CRD kind, whose schema nests JSONSchemaProps in itself) and of built-in
kinds (the protobuf tables), named as upstream's strict decoding names them."""

import copy

from kapiserver.openapi import schemas
from kapiserver.runtime import protobuf, protobuf_schemas
from kapiserver.runtime.unknown_fields import SchemaFields, unknown_fields
from kapiserver_plugins.apiextensions.openapi import crd_definitions

CRD = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"


def fields():
    pool = {**schemas.builtin()["definitions"], **crd_definitions()}
    return SchemaFields({name: pool[name] for name in schemas.reachable([CRD], pool)}, CRD)


def crd(**extra_spec):
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com", "labels": {"a": "b"},
                     "managedFields": [{"manager": "m", "fieldsV1": {"f:spec": {}}}]},
        "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                "openAPIV3Schema": {
                    "type": "object",
                    "properties": {"spec": {
                        "type": "object", "default": {"any": {"thing": 1}},
                        "items": {"type": "string", "whatever": True},
                        "additionalProperties": {"type": "string", "loose": 1},
                        "x-kubernetes-validations": [{"rule": "self.x > 0"}]}}}}}],
            **extra_spec},
        "status": {"conditions": [{"type": "Established", "status": "True"}]}}


def test_a_valid_crd_has_no_unknown_fields_and_free_form_values_are_not_inspected():
    # default (JSON), items (JSONSchemaPropsOrArray) and additionalProperties
    # (JSONSchemaPropsOrBool) are decoded by custom unmarshallers upstream: not inspected.
    obj = crd()
    assert fields().unknown_fields(obj, prune=True) == []
    assert obj == crd()


def test_unknown_fields_are_named_by_path_and_pruned():
    obj = crd(bogus=1)
    obj["metadata"]["nope"] = 2
    version = obj["spec"]["versions"][0]
    version["extra"] = True
    schema = version["schema"]["openAPIV3Schema"]
    schema["properties"]["spec"]["typo"] = "x"
    schema["properties"]["spec"]["x-kubernetes-validations"][0]["rul"] = "y"
    obj["status"]["conditions"][0]["since"] = "now"
    original = copy.deepcopy(obj)
    # In document order; a map's key (properties.spec) reads as a field.
    assert fields().unknown_fields(obj) == [
        "metadata.nope",
        "spec.versions[0].schema.openAPIV3Schema.properties.spec.x-kubernetes-validations[0]"
        ".rul", "spec.versions[0].schema.openAPIV3Schema.properties.spec.typo",
        "spec.versions[0].extra", "spec.bogus", "status.conditions[0].since"]
    assert obj == original  # found, not pruned
    fields().unknown_fields(obj, prune=True)
    assert obj == crd()


def test_type_meta_is_never_unknown_at_the_top():
    assert fields().unknown_fields({"apiVersion": "x", "kind": "y"}) == []
    assert fields().unknown_fields({"apiVersion": "x", "other": 1}) == ["other"]


# -- built-in kinds (protobuf tables): the same paths ---------------------------------------

def test_builtin_list_items_are_indexed_as_upstream_names_them():
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
               "spec": {"ports": [{"port": 80}, {"port": 81, "bogus": 1}]}}
    assert unknown_fields(service, "v1", "Service", prune=True) == ["spec.ports[1].bogus"]
    assert service["spec"]["ports"] == [{"port": 80}, {"port": 81}]


def test_builtin_map_values_are_named_by_a_dotted_key_like_schema_ones():
    # No built-in kind has a map of messages yet: a test kind that has one.
    codec = protobuf.Codec({**protobuf_schemas.MESSAGES, "test/v1": {
        "Thing": {1: ("metadata", "ObjectMeta"), 2: ("partsByName", "map[string]Part"),
                  3: ("parts", "[]Part")},
        "Part": {1: ("name", "string")}}}, {"example.com/v1": ("test/v1", ("Thing",))})
    obj = {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"},
           "parts": [{"name": "a", "bogus": 1}],
           "partsByName": {"first": {"name": "a", "typo": 2}, "second.one": {"nme": "b"}}}
    assert unknown_fields(obj, "example.com/v1", "Thing", prune=True, codec=codec) == [
        "parts[0].bogus", "partsByName.first.typo", "partsByName.second.one.nme"]
    assert obj["partsByName"] == {"first": {"name": "a"}, "second.one": {}}
