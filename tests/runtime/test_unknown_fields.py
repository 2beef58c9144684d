"""Unknown fields of a kind described by OpenAPI definitions (``SchemaFields``): the CRD kind,
whose schema nests JSONSchemaProps in itself."""

import copy

from kapiserver.openapi import schemas
from kapiserver.runtime.unknown_fields import SchemaFields
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
