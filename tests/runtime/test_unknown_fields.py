"""Unknown fields (``fieldValidation``): of kinds described by OpenAPI definitions
(``SchemaFields``: the CRD kind, whose schema nests JSONSchemaProps in itself, APIService,
wardle's Flunder, test kinds) and of built-in kinds (the protobuf tables), named as
upstream's strict decoding names them."""

import copy
import dataclasses
import types

import pytest

from kapiserver import errors
from kapiserver.endpoints.handlers import RESTHandler
from kapiserver.openapi import schemas
from kapiserver.runtime import protobuf, protobuf_schemas
from kapiserver.runtime.unknown_fields import MAX_REPORTED, SchemaFields, unknown_fields
from kapiserver_plugins.aggregator.apiservices import APISERVICES
from kapiserver_plugins.aggregator.apiservices import openapi_definitions as apiservice_defs
from kapiserver_plugins.apiextensions.crds import CRDS
from kapiserver_plugins.apiextensions.openapi import crd_definitions, crd_unmarshalers
from kapiserver_plugins.wardle.resources import FLUNDERS

CRD = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"
APISERVICE = "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService"
REF = "#/components/schemas/"


def described(own: dict, model: str, unmarshalers=None) -> SchemaFields:
    pool = {**schemas.builtin()["definitions"], **own}
    return SchemaFields({name: pool[name] for name in schemas.reachable([model], pool)}, model,
                        unmarshalers)


def fields():
    return described(crd_definitions(), CRD, crd_unmarshalers())


def crd(**extra_spec):
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com", "labels": {"a": "b"},
                     "managedFields": [{"manager": "m", "fieldsV1": {"f:spec": {}}}]},
        "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [{"name": "v1", "served": True, "storage": True,
                          "subresources": {"status": {}},
                          "schema": {"openAPIV3Schema": {
                              "type": "object",
                              "properties": {"spec": {
                                  "type": "object", "default": {"any": {"thing": 1}},
                                  "enum": [{"free": "form"}],
                                  "items": {"type": "string"},
                                  "additionalProperties": {"type": "string"},
                                  "x-kubernetes-validations": [{"rule": "self.x > 0"}]}}}}}],
            **extra_spec},
        "status": {"conditions": [{"type": "Established", "status": "True"}]}}


def test_a_valid_crd_has_no_unknown_fields_and_raw_json_values_are_kept():
    # default and enum are JSON (UnmarshalJSON keeps the bytes); fieldsV1 is FieldsV1.
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
    # In document order; a map's key (properties.spec) is joined with a dot, as
    # sigs.k8s.io/json's appendStrictFieldStackKey joins map keys and struct fields alike.
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


# -- empty structs and free-form values --------------------------------------------------

def test_a_struct_without_fields_reports_every_key():
    # CustomResourceSubresourceStatus is a Go struct{}: its schema is a bare type: object.
    obj = crd()
    obj["spec"]["versions"][0]["subresources"]["status"] = {"enabled": True, "path": ".s"}
    assert fields().unknown_fields(obj, prune=True) == [
        "spec.versions[0].subresources.status.enabled",
        "spec.versions[0].subresources.status.path"]
    assert obj == crd()
    # So is wardle's FlunderStatus.
    flunder = {"apiVersion": "wardle.example.com/v1alpha1", "kind": "Flunder",
               "metadata": {"name": "f"}, "spec": {"reference": "x"},
               "status": {"phase": "Ready"}}
    flunders = described(FLUNDERS.openapi_definitions, "io.k8s.sample-apiserver.pkg.apis."
                         "wardle.v1alpha1.Flunder")
    assert flunders.unknown_fields(flunder, prune=True) == ["status.phase"]
    assert flunder["status"] == {}


THING = "com.example.v1.Thing"
THING_DEFINITIONS = {
    THING: {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"}, "kind": {"type": "string"},
            "metadata": {"default": {}, "allOf": [
                {"$ref": REF + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]},
            "raw": {"allOf": [{"$ref": REF + "io.k8s.apimachinery.pkg.runtime.RawExtension"}]},
            "json": {"$ref": REF + "com.example.v1.JSON"},
            "open": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            "embedded": {"type": "object", "x-kubernetes-embedded-resource": True,
                         "x-kubernetes-preserve-unknown-fields": True},
            "anything": {"type": "object", "additionalProperties": True},
            "untyped": {"type": "object", "additionalProperties": {}},
            "strings": {"type": "object", "additionalProperties": {"type": "string"}},
            "rawList": {"type": "array", "items": {
                "$ref": REF + "io.k8s.apimachinery.pkg.runtime.RawExtension"}},
            "empty": {"allOf": [{"$ref": REF + "com.example.v1.Empty"}]},
            "parts": {"type": "array", "items": {"default": {}, "allOf": [
                {"$ref": REF + "com.example.v1.Part"}]}},
            "partsByName": {"type": "object", "additionalProperties": {"default": {}, "allOf": [
                {"$ref": REF + "com.example.v1.Part"}]}},
            "grid": {"type": "array", "items": {"type": "array", "items": {
                "$ref": REF + "com.example.v1.Part"}}},
        },
        "x-kubernetes-group-version-kind": [
            {"group": "example.com", "kind": "Thing", "version": "v1"}]},
    "com.example.v1.JSON": {"description": "Any JSON value (a custom OpenAPISchemaType)."},
    "com.example.v1.Empty": {"type": "object"},
    "com.example.v1.Part": {"type": "object", "properties": {"name": {"type": "string"}}},
}


def thing(**fields_):
    return {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"},
            **fields_}


def test_free_form_values_are_neither_reported_nor_pruned():
    free = dict(raw={"apiVersion": "v1", "kind": "Pod", "any": {"x": 1}},
                json={"any": ["thing"]}, open={"x": {"y": 1}},
                embedded={"apiVersion": "v1", "kind": "X", "z": 1},
                anything={"a": {"b": 1}}, untyped={"a": {"b": 1}}, strings={"a": "b"},
                rawList=[{"a": 1}, {"b": 2}])
    obj = thing(**copy.deepcopy(free))
    assert described(THING_DEFINITIONS, THING).unknown_fields(obj, prune=True) == []
    assert obj == thing(**free)


def test_unknown_fields_in_list_items_and_map_values():
    obj = thing(empty={"x": 1}, parts=[{"name": "a"}, {"name": "b", "bogus": 1}],
                partsByName={"first": {"name": "a", "typo": 2}, "second.one": {"nme": "b"}},
                grid=[[{"name": "a"}], [{"name": "b", "z": 0}]])
    assert described(THING_DEFINITIONS, THING).unknown_fields(obj, prune=True) == [
        "empty.x", "parts[1].bogus", "partsByName.first.typo", "partsByName.second.one.nme",
        "grid[1][0].z"]
    assert obj == thing(empty={}, parts=[{"name": "a"}, {"name": "b"}],
                        partsByName={"first": {"name": "a"}, "second.one": {}},
                        grid=[[{"name": "a"}], [{"name": "b"}]])


def test_the_value_of_an_unknown_field_is_not_inspected():
    obj = thing(parts=[{"name": "a", "extra": {"deep": {"er": 1}}}])
    assert described(THING_DEFINITIONS, THING).unknown_fields(obj) == ["parts[0].extra"]


def test_lenient_unmarshalers_drop_unknown_fields_without_a_word():
    # items (JSONSchemaPropsOrArray), additionalProperties (JSONSchemaPropsOrBool) and
    # dependencies' values (JSONSchemaPropsOrStringArray) decode with the non-strict
    # json.Unmarshal: what they do not know is gone, and never reported.
    obj = crd()
    spec = obj["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["items"] = {"type": "object", "whatever": True,
                     "properties": {"a": {"type": "string", "deeper": 1}},
                     "default": {"kept": 1}}
    spec["additionalProperties"] = {"type": "string", "loose": 1}
    spec["dependencies"] = {"a": {"type": "object", "odd": 1}, "b": ["c"]}
    spec["not"] = {"type": "string", "reported": 1}
    kept = copy.deepcopy(obj)
    assert fields().unknown_fields(obj) == [
        "spec.versions[0].schema.openAPIV3Schema.properties.spec.not.reported"]
    assert obj == kept  # found, nothing pruned
    assert fields().unknown_fields(obj, prune=True) == [
        "spec.versions[0].schema.openAPIV3Schema.properties.spec.not.reported"]
    assert spec["items"] == {"type": "object", "properties": {"a": {"type": "string"}},
                             "default": {"kept": 1}}
    assert spec["additionalProperties"] == {"type": "string"}
    assert spec["dependencies"] == {"a": {"type": "object"}, "b": ["c"]}
    assert spec["not"] == {"type": "string"}
    # A list of schemas (JSONSchemaPropsOrArray's other form) is decoded the same way.
    spec["items"] = [{"type": "string", "x": 1}, {"type": "integer"}]
    assert fields().unknown_fields(obj, prune=True) == []
    assert spec["items"] == [{"type": "string"}, {"type": "integer"}]


def test_an_unmarshaler_must_decode_into_a_known_definition():
    with pytest.raises(ValueError, match="com.example.v1.Missing"):
        described(THING_DEFINITIONS, THING, {"com.example.v1.JSON": "com.example.v1.Missing"})


def test_at_most_one_hundred_are_reported_and_all_are_pruned():
    obj = thing(**{f"f{i:03}": i for i in range(150)})
    found = described(THING_DEFINITIONS, THING).unknown_fields(obj, prune=True)
    assert found == [f"f{i:03}" for i in range(MAX_REPORTED)]
    assert obj == thing()


def test_apiservice_service_reference():
    apiservice = {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
                  "metadata": {"name": "v1.example.com"},
                  "spec": {"group": "example.com", "version": "v1",
                           "service": {"namespace": "ns", "name": "api", "bogus": 1}},
                  "status": {"conditions": [{"type": "Available", "why": "x"}]}}
    assert described(apiservice_defs(), APISERVICE).unknown_fields(apiservice, prune=True) == [
        "spec.service.bogus", "status.conditions[0].why"]
    assert apiservice["spec"]["service"] == {"namespace": "ns", "name": "api"}


# -- built-in kinds (protobuf tables): the same paths ---------------------------------------

def test_builtin_list_items_are_indexed_as_upstream_names_them():
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
               "spec": {"ports": [{"port": 80}, {"port": 81, "bogus": 1}]}}
    assert unknown_fields(service, "v1", "Service", prune=True) == ["spec.ports[1].bogus"]
    assert service["spec"]["ports"] == [{"port": 80}, {"port": 81}]


def test_builtin_map_values_are_named_by_a_dotted_key_like_schema_ones():
    codec = protobuf.Codec({**protobuf_schemas.MESSAGES, "test/v1": {
        "Thing": {1: ("metadata", "ObjectMeta"), 2: ("partsByName", "map[string]Part"),
                  3: ("parts", "[]Part")},
        "Part": {1: ("name", "string")}}}, {"example.com/v1": ("test/v1", ("Thing",))})
    obj = thing(parts=[{"name": "a", "bogus": 1}],
                partsByName={"first": {"name": "a", "typo": 2}, "second.one": {"nme": "b"}})
    expected = ["parts[0].bogus", "partsByName.first.typo", "partsByName.second.one.nme"]
    assert unknown_fields(copy.deepcopy(obj), "example.com/v1", "Thing", codec=codec) == expected
    assert described(THING_DEFINITIONS, THING).unknown_fields(obj) == expected


def test_builtin_kinds_report_at_most_one_hundred():
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
           **{f"f{i:03}": i for i in range(101)}}
    assert len(unknown_fields(obj, "v1", "ConfigMap", prune=True)) == MAX_REPORTED
    assert obj == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}


# -- the handler's answers: upstream's texts -------------------------------------------------

def handler(spec):
    return RESTHandler(types.SimpleNamespace(spec=spec), server=None)


def context(mode: str):
    return types.SimpleNamespace(request=types.SimpleNamespace(args={"fieldValidation": mode}),
                                 warnings=[])


def test_strict_refuses_a_crd_with_upstreams_message():
    from kapiserver_plugins.apiextensions import APIExtensionsV1

    spec = APIExtensionsV1().install(types.SimpleNamespace(
        rest_handler=lambda spec, *args, **kwargs: spec)).versions["v1"][
        "customresourcedefinitions"]
    assert spec.openapi_unmarshalers == crd_unmarshalers()
    obj = crd()
    obj["spec"]["versions"][0]["bogus"] = 1
    obj["spec"]["versions"][0]["subresources"]["status"]["enabled"] = True
    with pytest.raises(errors.BadRequest) as refused:
        handler(spec).check_unknown_fields(context("Strict"), copy.deepcopy(obj))
    assert refused.value.message == (
        'CustomResourceDefinition in version "v1" cannot be handled as a '
        'CustomResourceDefinition: strict decoding error: unknown field '
        '"spec.versions[0].subresources.status.enabled", unknown field "spec.versions[0].bogus"')
    warned = context("Warn")
    handler(spec).check_unknown_fields(warned, obj)
    assert warned.warnings == ['unknown field "spec.versions[0].subresources.status.enabled"',
                               'unknown field "spec.versions[0].bogus"']
    assert obj == crd()
    ignored = context("Ignore")
    obj["spec"]["versions"][0]["bogus"] = 1
    handler(spec).check_unknown_fields(ignored, obj)
    assert (ignored.warnings, obj) == ([], crd())
    assert CRDS.openapi_unmarshalers == {}  # the spec installed carries them, not the default


def test_warn_names_an_apiservice_field_and_drops_it():
    spec = dataclasses.replace(APISERVICES, openapi_definitions=apiservice_defs())
    obj = {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
           "metadata": {"name": "v1.example.com"},
           "spec": {"group": "example.com", "version": "v1",
                    "service": {"namespace": "ns", "name": "api", "prot": 443}}}
    warned = context("Warn")
    handler(spec).check_unknown_fields(warned, obj)
    assert warned.warnings == ['unknown field "spec.service.prot"']
    assert obj["spec"]["service"] == {"namespace": "ns", "name": "api"}
