"""Tests of CRD defaulting and validation, against kube-apiserver v1.32's messages and paths."""

import copy
import json

import pytest

from kapiserver import errors as status_errors
from kapiserver.apimachinery.field_errors import FieldPath
from kapiserver_plugins.apiextensions.crd_validation import (set_defaults, validate_crd,
                                                             validate_crd_status,
                                                             validate_crd_update)
from kapiserver_plugins.apiextensions.crd_validation.regexp import regexp_error
from tests.support.reference import transcript

GROUP = "example.com"


def schema(**spec_props):
    return {"type": "object", "properties": {
        "spec": {"type": "object", "properties": spec_props or {"size": {"type": "integer"}}},
        "status": {"type": "object", "properties": {"phase": {"type": "string"}}}}}


def crd(openapi=None, plural="widgets", kind="Widget", group=GROUP, **version):
    """A defaulted CRD as the strategy validates it on create (status from PrepareForCreate)."""
    obj = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": f"{plural}.{group}"},
           "spec": {"group": group, "scope": "Namespaced",
                    "names": {"plural": plural, "kind": kind},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": openapi or schema()},
                                  **version}]}}
    return prepared(obj)


def prepared(obj):
    set_defaults(obj)
    # upstream's PrepareForCreate stores every version marked as storage
    stored = [v["name"] for v in obj["spec"]["versions"] or [] if v.get("storage")]
    obj["status"] = {"conditions": None, "acceptedNames": {"plural": "", "kind": ""},
                     "storedVersions": stored}
    return obj


def errors(obj):
    return [str(e) for e in validate_crd(obj)]


def spec_errors(openapi, **version):
    """The errors of a CRD whose only version has the schema ``openapi``."""
    return errors(crd(openapi, **version))


ROOT = "spec.validation.openAPIV3Schema"


# -- defaulting -----------------------------------------------------------------------------


def test_defaulting_matches_kube_apiserver():
    captured = transcript("crd-create.json")
    body = copy.deepcopy(captured["request"]["body"])
    set_defaults(body)
    want = captured["response"]["body"]["spec"]
    assert body["spec"] == want
    # the same bytes: Go's field order, sorted schema properties
    assert json.dumps(body["spec"]) == json.dumps(want)


def test_defaults_names_conversion_and_webhook_port():
    obj = {"spec": {"group": GROUP, "names": {"plural": "gadgets", "kind": "Gadget"},
                    "scope": "Cluster", "versions": [],
                    "conversion": {"strategy": "Webhook", "webhook": {"clientConfig": {
                        "service": {"namespace": "ns", "name": "svc"}}}}}}
    set_defaults(obj)
    spec = obj["spec"]
    assert spec["names"] == {"plural": "gadgets", "singular": "gadget", "kind": "Gadget",
                             "listKind": "GadgetList"}
    # conversionReviewVersions has no omitempty: null when not given
    assert spec["conversion"] == {"strategy": "Webhook", "webhook": {
        "clientConfig": {"service": {"namespace": "ns", "name": "svc", "port": 443}},
        "conversionReviewVersions": None}}
    obj = {"spec": {"names": {"plural": "gadgets", "kind": "Gadget"}}}
    set_defaults(obj)
    assert obj["spec"]["conversion"] == {"strategy": "None"}
    assert list(obj["spec"]) == ["group", "names", "scope", "versions", "conversion"]
    assert obj["spec"]["versions"] is None


def test_defaults_write_the_spec_as_go_encodes_it():
    obj = {"spec": {"group": GROUP, "scope": "Namespaced", "bogus": 1,
                    "preserveUnknownFields": False,
                    "names": {"kind": "Gadget", "plural": "gadgets"},
                    "versions": [{"storage": True, "name": "v1", "served": True,
                                  "deprecated": False, "extra": "x",
                                  "subresources": {"status": {"x": 1}},
                                  "schema": {"openAPIV3Schema": {
                                      "type": "object", "nullable": False, "unknown": 1,
                                      "properties": {"b": {"type": "number", "minimum": 1.0,
                                                           "default": None},
                                                     "a": {"type": "object",
                                                           "default": {"z": 1, "y": 2}}}}}}]}}
    set_defaults(obj)
    version = obj["spec"]["versions"][0]
    assert list(version) == ["name", "served", "storage", "schema", "subresources"]
    assert version["subresources"] == {"status": {}}
    openapi = version["schema"]["openAPIV3Schema"]
    assert openapi == {"type": "object", "properties": {
        "a": {"type": "object", "default": {"y": 2, "z": 1}},
        "b": {"type": "number", "minimum": 1}}}
    assert list(openapi["properties"]) == ["a", "b"]
    assert list(openapi["properties"]["a"]["default"]) == ["y", "z"]
    assert "bogus" not in obj["spec"] and "preserveUnknownFields" not in obj["spec"]


@pytest.mark.parametrize("change,message", [
    (lambda spec: spec["versions"][0].update(served="yes"),
     "json: cannot unmarshal string into Go struct field CustomResourceDefinitionVersion"
     ".spec.versions.served of type bool"),
    # map keys are not part of Go's path: the message real servers give for a bad property
    (lambda spec: spec["versions"][0]["schema"]["openAPIV3Schema"].update(
        properties={"spec": "object"}),
     "json: cannot unmarshal string into Go struct field JSONSchemaProps"
     ".spec.versions.schema.openAPIV3Schema.properties of type v1.JSONSchemaProps"),
    (lambda spec: spec["versions"][0]["schema"]["openAPIV3Schema"].update(maxProperties=1.5),
     "json: cannot unmarshal number 1.5 into Go struct field JSONSchemaProps"
     ".spec.versions.schema.openAPIV3Schema.maxProperties of type int64"),
    (lambda spec: spec["versions"][0]["schema"]["openAPIV3Schema"].update(
        additionalProperties="yes"),
     "boolean or JSON schema expected"),
    (lambda spec: spec.update(versions={"name": "v1"}),
     "json: cannot unmarshal object into Go struct field CustomResourceDefinitionSpec"
     ".spec.versions of type []v1.CustomResourceDefinitionVersion"),
])
def test_values_of_the_wrong_type_are_refused_as_gos_decoder_does(change, message):
    obj = copy.deepcopy(transcript("crd-create.json")["request"]["body"])
    change(obj["spec"])
    with pytest.raises(status_errors.BadRequest) as err:
        set_defaults(obj)
    assert err.value.message == (
        'CustomResourceDefinition in version "v1" cannot be handled as a '
        f"CustomResourceDefinition: {message}")


def test_defaults_stored_versions_of_a_status_without_any():
    obj = {"spec": {"names": {"plural": "a", "kind": "A"}, "versions": [
        {"name": "v1", "served": True, "storage": False},
        {"name": "v2", "served": True, "storage": True}]}, "status": {}}
    set_defaults(obj)
    assert obj["status"] == {"storedVersions": ["v2"]}


# -- the CRD and its names ------------------------------------------------------------------


def test_the_reference_crd_is_valid():
    body = copy.deepcopy(transcript("crd-create.json")["request"]["body"])
    assert errors(prepared(body)) == []


def test_name_must_be_plural_dot_group():
    obj = crd()
    obj["metadata"]["name"] = "x.y.z"
    assert errors(obj) == ['metadata.name: Invalid value: "x.y.z": must be '
                           'spec.names.plural+"."+spec.group']


@pytest.mark.parametrize("group,message", [
    ("", "spec.group: Required value"),
    ("Example.com", 'spec.group: Invalid value: "Example.com": a lowercase RFC 1123 subdomain '
                    "must consist of lower case alphanumeric characters, '-' or '.', and must "
                    "start and end with an alphanumeric character (e.g. 'example.com', regex "
                    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]"
                    "([-a-z0-9]*[a-z0-9])?)*')"),
    ("example", 'spec.group: Invalid value: "example": should be a domain with at least one '
                "dot"),
])
def test_group(group, message):
    obj = crd(group=group)
    assert message in errors(obj)


def test_scope():
    obj = crd()
    obj["spec"]["scope"] = "Global"
    assert errors(obj) == ['spec.scope: Unsupported value: "Global": supported values: '
                           '"Cluster", "Namespaced"']
    obj["spec"]["scope"] = ""
    assert errors(obj) == ["spec.scope: Required value"]


def test_names():
    obj = crd(plural="Widgets", kind="Wid_get")
    obj["metadata"]["name"] = "Widgets.example.com"
    obj["spec"]["names"].update(shortNames=["ok", "no way"], categories=["all", "Bad"],
                                listKind="Wid_get")
    got = errors(obj)
    dns1035 = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
               "start with an alphabetic character, and end with an alphanumeric character "
               "(e.g. 'my-name',  or 'abc-123', regex used for validation is "
               "'[a-z]([-a-z0-9]*[a-z0-9])?')")
    assert f'spec.names.plural: Invalid value: "Widgets": {dns1035}' in got
    assert ('spec.names.kind: Invalid value: "Wid_get": may have mixed case, but should '
            f"otherwise match: {dns1035}") in got
    assert f'spec.names.shortNames[1]: Invalid value: "no way": {dns1035}' in got
    assert f'spec.names.categories[1]: Invalid value: "Bad": {dns1035}' in got
    assert 'spec.names.listKind: Invalid value: "Wid_get": kind and listKind may not be ' \
           "the same" in got


def test_names_are_required():
    obj = {"metadata": {"name": "widgets.example.com"},
           "spec": {"group": GROUP, "scope": "Namespaced", "names": {"plural": "widgets"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": schema()}}]}}
    # without a kind, defaulting gives no singular and no listKind either
    assert errors(prepared(obj)) == ["spec.names.singular: Required value",
                                     "spec.names.kind: Required value",
                                     "spec.names.listKind: Required value"]


# -- versions -------------------------------------------------------------------------------


def two_versions(**second):
    obj = crd()
    obj["spec"]["versions"].append({**copy.deepcopy(obj["spec"]["versions"][0]),
                                    "name": "v2", "storage": False, **second})
    return obj


def test_exactly_one_storage_version():
    obj = two_versions(storage=True)
    obj["status"]["storedVersions"] = ["v1", "v2"]
    assert errors(obj) == [
        "spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{"
        'apiextensions.CustomResourceDefinitionVersion{Name:"v1", Served:true, Storage:true, '
        "Deprecated:false, DeprecationWarning:(*string)(nil), "
        "Schema:(*apiextensions.CustomResourceValidation)(nil), "
        "Subresources:(*apiextensions.CustomResourceSubresources)(nil), "
        "AdditionalPrinterColumns:[]apiextensions.CustomResourceColumnDefinition(nil), "
        "SelectableFields:[]apiextensions.SelectableField(nil)}, "
        'apiextensions.CustomResourceDefinitionVersion{Name:"v2", Served:true, Storage:true, '
        "Deprecated:false, DeprecationWarning:(*string)(nil), "
        "Schema:(*apiextensions.CustomResourceValidation)(nil), "
        "Subresources:(*apiextensions.CustomResourceSubresources)(nil), "
        "AdditionalPrinterColumns:[]apiextensions.CustomResourceColumnDefinition(nil), "
        "SelectableFields:[]apiextensions.SelectableField(nil)}}: must have exactly one "
        "version marked as storage version"]


def test_version_names_are_unique_dns_labels():
    obj = two_versions(name="v1")
    got = errors(obj)
    assert len(got) == 1 and got[0].startswith("spec.versions: Invalid value: []apiextensions.")
    assert got[0].endswith(": must contain unique version names")
    obj = crd()
    obj["spec"]["versions"][0]["name"] = "V1"
    obj["status"]["storedVersions"] = ["V1"]
    dns1035 = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
               "start with an alphabetic character, and end with an alphanumeric character "
               "(e.g. 'my-name',  or 'abc-123', regex used for validation is "
               "'[a-z]([-a-z0-9]*[a-z0-9])?')")
    # the first version's name is also the internal spec.version
    assert errors(obj) == [f'spec.versions[0].name: Invalid value: "V1": {dns1035}',
                           f'spec.version: Invalid value: "V1": {dns1035}']


def test_every_version_needs_a_schema():
    obj = two_versions()
    del obj["spec"]["versions"][1]["schema"]
    assert errors(obj) == ["spec.versions[1].schema.openAPIV3Schema: Required value: schemas "
                           "are required"]


def test_errors_of_differing_schemas_are_reported_per_version():
    obj = two_versions()
    del obj["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["properties"]["spec"]["type"]
    assert errors(obj) == ["spec.versions[1].schema.openAPIV3Schema.properties[spec].type: "
                           "Required value: must not be empty for specified object fields"]


def test_deprecation_warning():
    assert spec_errors(None, deprecationWarning="old") == [
        'spec.versions[0].deprecationWarning: Invalid value: "old": can only be set for '
        "deprecated versions"]
    assert spec_errors(None, deprecated=True, deprecationWarning="x" * 257) == [
        f'spec.versions[0].deprecationWarning: Invalid value: "{"x" * 257}": must be <= 256 '
        "characters long"]
    assert spec_errors(None, deprecated=True, deprecationWarning="a\tb") == [
        'spec.versions[0].deprecationWarning: Invalid value: "a\\tb": must only contain '
        "printable UTF-8 characters; non-printable character found at index 1"]


# -- subresources, columns, selectable fields -----------------------------------------------


def test_scale_subresource_paths():
    got = spec_errors(None, subresources={"scale": {
        "specReplicasPath": ".status.replicas", "statusReplicasPath": "",
        "labelSelectorPath": "selector"}})
    assert got == [
        'spec.subresources.scale.specReplicasPath: Invalid value: ".status.replicas": should '
        "be a json path under .spec",
        "spec.subresources.scale.statusReplicasPath: Required value",
        'spec.subresources.scale.labelSelectorPath: Invalid value: "selector": must be a '
        "simple json path starting with ."]
    got = spec_errors(None, subresources={"scale": {
        "specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas",
        "labelSelectorPath": ".metadata.labels"}})
    assert got == ['spec.subresources.scale.labelSelectorPath: Invalid value: '
                   '".metadata.labels": should be a json path under either .spec or .status']


def test_printer_columns():
    got = spec_errors(None, additionalPrinterColumns=[
        {"name": "", "type": "float", "format": "uuid", "jsonPath": "spec.size"},
        {"name": "A", "type": "", "jsonPath": ""}])
    assert got == [
        "spec.additionalPrinterColumns[0].name: Required value",
        'spec.additionalPrinterColumns[0].type: Invalid value: "float": must be one of '
        "boolean,date,integer,number,string",
        'spec.additionalPrinterColumns[0].format: Invalid value: "uuid": must be one of '
        "byte,date,date-time,double,float,int32,int64,password",
        'spec.additionalPrinterColumns[0].JSONPath: Invalid value: "spec.size": must be a '
        "simple json path starting with .",
        "spec.additionalPrinterColumns[1].type: Required value: must be one of "
        "boolean,date,integer,number,string",
        "spec.additionalPrinterColumns[1].JSONPath: Required value"]


def test_selectable_fields():
    openapi = schema(size={"type": "integer"}, color={"type": "string"},
                     tags={"type": "array", "items": {"type": "string"}})
    got = spec_errors(openapi, selectableFields=[
        {"jsonPath": ".spec.size"}, {"jsonPath": ".spec.nope"}, {"jsonPath": ".spec.tags"},
        {"jsonPath": ".spec.size"}, {"jsonPath": "spec.color"}, {"jsonPath": ""},
        {"jsonPath": ".spec['color']"}])
    assert got == [
        'spec.selectableFields[1].jsonPath: Invalid value: ".spec.nope": is an invalid path: '
        "does not refer to a valid field",
        'spec.selectableFields[2].jsonPath: Invalid value: ".spec.tags": must point to a field '
        "of type string, boolean or integer. Enum string fields and strings with formats are "
        "allowed.",
        'spec.selectableFields[3].jsonPath: Duplicate value: ".spec.size"',
        'spec.selectableFields[4].jsonPath: Invalid value: "spec.color": is an invalid path: '
        "expected [ or . but got: spec",
        "spec.selectableFields[5].jsonPath: Required value",
        'spec.selectableFields[6].jsonPath: Invalid value: ".spec[\'color\']": is an invalid '
        "path: array notation is not allowed"]
    many = {f"f{i}": {"type": "string"} for i in range(9)}
    got = spec_errors(schema(**many), selectableFields=[{"jsonPath": f".spec.f{i}"}
                                                        for i in range(9)])
    assert got == ["spec.selectableFields: Too many: 9: must have at most 8 items"]


# -- the schema -----------------------------------------------------------------------------


def test_structural_schema_type_is_required():
    openapi = schema()
    del openapi["properties"]["spec"]["type"]
    assert spec_errors(openapi) == [f"{ROOT}.properties[spec].type: Required value: must not "
                                    "be empty for specified object fields"]


def test_structural_root_and_items():
    assert spec_errors({"type": "array", "items": {"type": "string"}}) == [
        f'{ROOT}.type: Invalid value: "array": must be object at the root']
    assert spec_errors(schema(tags={"type": "array"})) == [
        f"{ROOT}.properties[spec].properties[tags].items: Required value: must be specified"]
    assert spec_errors(schema(tags={"type": "array", "items": {}})) == [
        f"{ROOT}.properties[spec].properties[tags].items.type: Required value: must not be "
        "empty for specified array items"]
    assert spec_errors({"properties": {}}) == [
        f"{ROOT}.type: Required value: must not be empty at the root"]


def test_structural_value_validation_may_not_give_structure():
    openapi = schema(x={"type": "string", "anyOf": [{"type": "string", "description": "d"}]},
                     y={"type": "object", "allOf": [{"properties": {"z": {"minimum": 1}}}]})
    assert spec_errors(openapi) == [
        f"{ROOT}.properties[spec].properties[x].anyOf[0].description: Forbidden: must be "
        "empty to be structural",
        f"{ROOT}.properties[spec].properties[x].anyOf[0].type: Forbidden: must be empty to be "
        "structural"]
    # completeness is checked at the root: what value validation names must exist
    openapi = schema()
    openapi["anyOf"] = [{"properties": {"other": {"minLength": 1}}}]
    assert spec_errors(openapi) == [
        f"{ROOT}.properties[other]: Required value: because it is defined in "
        f"{ROOT}.anyOf[0].properties[other]"]


def test_int_or_string_patterns_are_structural():
    openapi = schema(port={"x-kubernetes-int-or-string": True,
                           "anyOf": [{"type": "integer"}, {"type": "string"}]})
    assert spec_errors(openapi) == []


def test_metadata_may_only_restrict_name_and_generate_name():
    openapi = schema()
    openapi["properties"]["metadata"] = {"type": "object", "properties": {
        "name": {"type": "string", "maxLength": 10}}}
    assert spec_errors(openapi) == []
    openapi["properties"]["metadata"]["properties"]["labels"] = {"type": "object"}
    assert spec_errors(openapi) == [
        f"{ROOT}.properties[metadata]: Forbidden: must not specify anything other than name "
        "and generateName, but metadata is implicitly specified"]


def test_additional_properties():
    openapi = schema(m={"type": "object", "properties": {"a": {"type": "string"}},
                        "additionalProperties": {"type": "string"}})
    assert spec_errors(openapi) == [
        f"{ROOT}.properties[spec].properties[m].additionalProperties: Forbidden: "
        "additionalProperties and properties are mutual exclusive"]
    openapi = {"type": "object", "additionalProperties": {"type": "string"}}
    assert spec_errors(openapi) == [
        f"{ROOT}.additionalProperties: Forbidden: must not be used at the root"]


def test_unsupported_keywords():
    got = spec_errors(schema(a={"type": "string", "$ref": "#/x"},
                             b={"type": "array", "items": [{"type": "string"}]},
                             c={"type": "array", "items": {"type": "string"},
                                "uniqueItems": True},
                             d={"type": "null"}))
    assert f"{ROOT}.properties[spec].properties[a].$ref: Forbidden: $ref is not supported" in got
    assert (f"{ROOT}.properties[spec].properties[b].items: Forbidden: items must be a schema "
            "object and not an array") in got
    assert (f"{ROOT}.properties[spec].properties[c].uniqueItems: Forbidden: uniqueItems cannot "
            "be set to true since the runtime complexity becomes quadratic") in got
    assert (f'{ROOT}.properties[spec].properties[d].type: Unsupported value: "null": supported '
            'values: "array", "boolean", "integer", "number", "object", "string"') in got
    assert (f"{ROOT}.properties[spec].properties[d].type: Forbidden: type cannot be set to "
            "null, use nullable as an alternative") in got


def test_kubernetes_extensions():
    got = spec_errors(schema(
        a={"type": "object", "x-kubernetes-preserve-unknown-fields": False},
        b={"type": "string", "x-kubernetes-embedded-resource": True},
        c={"type": "string", "x-kubernetes-list-type": "set"},
        d={"type": "object", "x-kubernetes-map-type": "loose"}))
    spec = f"{ROOT}.properties[spec].properties"
    # x-kubernetes-preserve-unknown-fields: false keeps the schema from being converted to a
    # structural one, so the structural checks (b's type) do not run
    assert got == [
        f"{spec}[a].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true "
        "or undefined",
        f'{spec}[c].type: Invalid value: "string": must be array if x-kubernetes-list-type is '
        "specified",
        f'{spec}[d].x-kubernetes-map-type: Unsupported value: "loose": supported values: '
        '"atomic", "granular"']


def test_list_types():
    item = {"type": "object", "properties": {"name": {"type": "string"},
                                             "spec": {"type": "object"}}}
    got = spec_errors(schema(
        a={"type": "array", "items": item, "x-kubernetes-list-type": "map",
           "x-kubernetes-list-map-keys": ["name", "spec", "port"]},
        b={"type": "array", "items": item, "x-kubernetes-list-type": "set"},
        c={"type": "array", "items": {"type": "string"}, "x-kubernetes-list-map-keys": ["x"]}))
    spec = f"{ROOT}.properties[spec].properties"
    assert got == [
        f'{spec}[a].items.properties[spec].type: Invalid value: "object": must be a scalar type '
        "if parent array's x-kubernetes-list-type is map",
        f'{spec}[a].x-kubernetes-list-map-keys: Invalid value: []string{{"name", "spec", '
        '"port"}: entries must all be names of item properties',
        f"{spec}[a].items.properties[name].default: Required value: this property is in "
        "x-kubernetes-list-map-keys, so it must have a default or be a required property",
        f"{spec}[a].items.properties[spec].default: Required value: this property is in "
        "x-kubernetes-list-map-keys, so it must have a default or be a required property",
        f'{spec}[b].items.x-kubernetes-map-type: Invalid value: "null": must be atomic as item '
        "of a list with x-kubernetes-list-type=set",
        f"{spec}[c].x-kubernetes-list-type: Required value: must be map if "
        "x-kubernetes-list-map-keys is non-empty"]


def test_defaults_must_validate_and_be_pruned():
    got = spec_errors(schema(
        size={"type": "integer", "default": "big"},
        obj={"type": "object", "properties": {"a": {"type": "string"}},
             "default": {"a": "x", "b": 1}}))
    spec = f"{ROOT}.properties[spec].properties"
    # the default is validated on its own: kube-openapi names it "" (hence two spaces)
    assert got == [
        f'{spec}[obj].default: Invalid value: map[string]interface {{}}{{"a":"x", "b":1}}: must '
        "not have unknown fields",
        f'{spec}[size].default: Invalid value: "string":  in body must be of type integer: '
        '"string"']
    got = spec_errors(schema(n={"type": "integer", "minimum": 5, "default": 1}))
    assert got == [f"{spec}[n].default: Invalid value: 1:  in body should be greater than or "
                   "equal to 5"]


def test_defaults_must_pass_the_cel_rules_of_their_schema():
    got = spec_errors({"type": "object", "properties": {"spec": {
        "type": "object", "default": {"size": 20},
        "x-kubernetes-validations": [{"rule": "self.size <= 10", "message": "too big"}],
        "properties": {
            "size": {"type": "integer", "default": 50,
                     "x-kubernetes-validations": [{"rule": "self < 40"}]},
            # checked as a create too: no old value
            "fresh": {"type": "integer", "default": 3, "x-kubernetes-validations": [
                {"rule": "oldSelf.hasValue() || self < 2", "optionalOldSelf": True}]},
            # checked as an update from the default itself
            "grows": {"type": "integer", "default": 3,
                      "x-kubernetes-validations": [{"rule": "self >= oldSelf"}]}}}}})
    spec = f"{ROOT}.properties[spec]"
    assert got == [
        f'{spec}.default: Invalid value: "object": too big',
        f'{spec}.properties[fresh].default: Invalid value: "integer": failed rule: '
        "oldSelf.hasValue() || self < 2",
        f'{spec}.properties[size].default: Invalid value: "integer": failed rule: self < 40']


def test_defaults_are_forbidden_in_top_level_metadata():
    openapi = schema()
    openapi["properties"]["metadata"] = {"type": "object", "properties": {
        "name": {"type": "string", "default": "x"}}}
    assert spec_errors(openapi) == [
        f"{ROOT}.properties[metadata].properties[name].default: Forbidden: must not be set in "
        "top-level metadata"]


def test_invalid_patterns_are_reported_with_gos_error():
    assert spec_errors(schema(s={"type": "string", "pattern": "a(b"})) == [
        f'{ROOT}.properties[spec].properties[s].pattern: Invalid value: "a(b": must be a valid '
        "regular expression, but isn't: error parsing regexp: missing closing ): `a(b`"]


@pytest.mark.parametrize("pattern,error", [
    ("^[a-z]([-a-z0-9]*[a-z0-9])?$", ""),
    ("(?i)abc", ""), ("(?P<n>a)|(?<m>b)", ""), ("a{2,3}b*?", ""), ("\\d+\\.\\pL\\p{Greek}", ""),
    ("x)", "error parsing regexp: unexpected ): `x)`"),
    ("a**", "error parsing regexp: invalid nested repetition operator: `**`"),
    ("+a", "error parsing regexp: missing argument to repetition operator: `+`"),
    ("a{3,2}", "error parsing regexp: invalid repeat count: `{3,2}`"),
    ("[b-a]", "error parsing regexp: invalid character class range: `b-a`"),
    ("[ab", "error parsing regexp: missing closing ]: `[ab`"),
    ("\\1", "error parsing regexp: invalid escape sequence: `\\1`"),
    ("(?=a)", "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"),
    ("a\\", "error parsing regexp: trailing backslash at end of expression: ``"),
])
def test_go_regexp_errors(pattern, error):
    assert regexp_error(pattern) == error


def test_status_subresource_restricts_the_root():
    openapi = schema()
    openapi["anyOf"] = [{"required": ["spec"]}]
    got = spec_errors(openapi, subresources={"status": {}})
    assert len(got) == 1
    assert got[0].startswith(f"{ROOT}: Invalid value: apiextensions.JSONSchemaProps{{ID:\"\", ")
    assert got[0].endswith(": only [Description Type Format Title Maximum ExclusiveMaximum "
                           "Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems "
                           "MinItems UniqueItems MultipleOf Required Items Properties "
                           "ExternalDocs Example XPreserveUnknownFields XValidations] fields "
                           "are allowed at the root of the schema if the status subresource is "
                           "enabled")
    openapi = dict(schema(), nullable=True)
    assert spec_errors(openapi) == [
        "spec.validation.openAPIV3Schema.nullable: Forbidden: nullable cannot be true at the root"]


def test_validation_rules_static_checks():
    got = spec_errors(schema(x={"type": "string", "x-kubernetes-validations": [
        {"rule": "  "},
        {"rule": "self != ''", "message": "two\nlines"},
        {"rule": "self != ''", "reason": "FieldValueBad"},
        {"rule": "self != ''", "fieldPath": ".nope"}]}))
    at = f"{ROOT}.properties[spec].properties[x].x-kubernetes-validations"
    assert got == [
        f"{at}[0].rule: Required value: rule is not specified",
        f'{at}[1].message: Invalid value: "two\\nlines": message must not contain line breaks',
        f'{at}[2].reason: Unsupported value: "FieldValueBad": supported values: '
        '"FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"',
        f'{at}[3].fieldPath: Invalid value: ".nope": fieldPath must be a valid path']


def test_validation_rules_are_compiled_only_in_a_sound_schema():
    rule = {"type": "string", "x-kubernetes-validations": [{"rule": "self.nope > 1"}]}
    got = spec_errors(schema(x=rule))
    at = f"{ROOT}.properties[spec].properties[x].x-kubernetes-validations[0].rule"
    assert len(got) == 1 and got[0].startswith(
        f'{at}: Invalid value: apiextensions.ValidationRule{{Rule:"self.nope > 1", ')
    assert "compilation failed: ERROR: <input>:1:5:" in got[0]
    # with another error in the schema, upstream does not compile the rules
    assert spec_errors(schema(x=rule, y={"type": "string", "$ref": "#/y"})) == [
        f"{ROOT}.properties[spec].properties[y].$ref: Forbidden: $ref is not supported"]


# -- conversion -----------------------------------------------------------------------------


def with_conversion(conversion):
    obj = crd()
    obj["spec"]["conversion"] = conversion
    set_defaults(obj)
    return errors(obj)


def test_webhook_conversion():
    assert with_conversion({"strategy": "Webhook"}) == [
        "spec.conversion.webhookClientConfig: Required value: required when strategy is set "
        "to Webhook",
        "spec.conversion.conversionReviewVersions: Required value"]
    assert with_conversion({"strategy": "Webhook", "webhook": {
        "clientConfig": {"url": "http://h/p?q=1"}, "conversionReviewVersions": ["v2", "v2"]}}) == [
        "spec.conversion.webhookClientConfig.url: Invalid value: \"http\": 'https' is the only "
        "allowed URL scheme; desired format: https://host[/path]",
        'spec.conversion.webhookClientConfig.url: Invalid value: "q=1": query parameters are '
        "not permitted in the URL",
        'spec.conversion.conversionReviewVersions[1]: Invalid value: "v2": duplicate version',
        'spec.conversion.conversionReviewVersions: Invalid value: []string{"v2", "v2"}: must '
        "include at least one of v1, v1beta1"]
    # upstream swaps name and namespace when it checks a service reference
    assert with_conversion({"strategy": "Webhook", "webhook": {
        "clientConfig": {"service": {"namespace": "ns", "name": "", "port": 0}},
        "conversionReviewVersions": ["v1"]}}) == [
        "spec.conversion.webhookClientConfig.service.namespace: Required value: service "
        "namespace is required",
        "spec.conversion.webhookClientConfig.service.port: Invalid value: 0: port is not "
        "valid: must be between 1 and 65535, inclusive"]
    assert with_conversion({"strategy": "Webhook", "webhook": {
        "clientConfig": {"url": "https://h", "service": {"namespace": "a", "name": "b"}},
        "conversionReviewVersions": ["v1"]}}) == [
        "spec.conversion.webhookClientConfig: Required value: exactly one of url or service "
        "is required"]


def test_none_conversion_forbids_a_webhook():
    assert with_conversion({"strategy": "None", "webhook": {
        "clientConfig": {"url": "https://h"}, "conversionReviewVersions": ["v1"]}}) == [
        "spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is "
        "not set to Webhook",
        "spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy "
        "is not set to Webhook"]
    assert with_conversion({"strategy": "Magic"}) == [
        'spec.conversion.strategy: Unsupported value: "Magic": supported values: "None", '
        '"Webhook"']


def test_preserve_unknown_fields_must_be_false():
    obj = crd()
    obj["spec"]["preserveUnknownFields"] = True
    assert errors(obj) == ["spec.preserveUnknownFields: Invalid value: true: cannot set to "
                           "true, set x-kubernetes-preserve-unknown-fields to true in "
                           "spec.versions[*].schema instead"]


def test_protected_groups_need_api_approval():
    obj = crd(group="stuff.k8s.io")
    assert errors(obj) == [
        "metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups "
        'must have approval annotation "api-approved.kubernetes.io", see '
        "https://github.com/kubernetes/enhancements/pull/1111"]
    obj["metadata"]["annotations"] = {"api-approved.kubernetes.io": "yes"}
    assert errors(obj) == [
        'metadata.annotations[api-approved.kubernetes.io]: Invalid value: "yes": protected '
        'groups must have approval annotation "api-approved.kubernetes.io" with either a URL '
        'or a reason starting with "unapproved", see '
        "https://github.com/kubernetes/enhancements/pull/1111"]
    for value in ("unapproved, experimental", "https://github.com/kubernetes/kubernetes/pull/1"):
        obj["metadata"]["annotations"]["api-approved.kubernetes.io"] = value
        assert errors(obj) == []


# -- update and status ----------------------------------------------------------------------


def stored(obj, established=False):
    old = copy.deepcopy(obj)
    old["metadata"].update(resourceVersion="5", uid="u", generation=1,
                           creationTimestamp="2024-01-01T00:00:00Z")
    if established:
        old["status"]["conditions"] = [{"type": "Established", "status": "True"}]
    return old


def updated(old, change):
    new = copy.deepcopy(old)
    change(new)
    set_defaults(new)
    return [str(e) for e in validate_crd_update(new, old)]


def test_update_immutable_fields():
    old = stored(crd())

    def change(new):
        new["spec"]["group"] = "other.com"
        new["spec"]["names"]["plural"] = "things"
        new["spec"]["scope"] = "Cluster"
        new["spec"]["names"]["kind"] = "Thing"

    assert updated(old, change) == [
        'spec.group: Invalid value: "other.com": field is immutable',
        'spec.names.plural: Invalid value: "things": field is immutable']
    assert updated(stored(crd(), established=True), change) == [
        'spec.scope: Invalid value: "Cluster": field is immutable',
        'spec.names.kind: Invalid value: "Thing": field is immutable',
        'spec.group: Invalid value: "other.com": field is immutable',
        'spec.names.plural: Invalid value: "things": field is immutable']


def test_update_keeps_stored_versions_served():
    old = two_versions()
    old["status"]["storedVersions"] = ["v1", "v2"]
    old = stored(old)

    def drop_v2(new):
        new["spec"]["versions"].pop()

    assert updated(old, drop_v2) == [
        'status.storedVersions[1]: Invalid value: "v2": missing from spec.versions; v2 was '
        "previously a storage version, and must remain in spec.versions until a storage "
        "migration ensures no data remains persisted in v2 and removes v2 from "
        "status.storedVersions"]


def test_update_ratchets_what_the_stored_crd_already_breaks():
    bad = schema(x={"type": "str"})
    old = stored(crd(bad))
    message = (f'{ROOT}.properties[spec].properties[x].type: Unsupported value: "str": '
               'supported values: "array", "boolean", "integer", "number", "object", "string"')
    assert message in errors(crd(bad))

    def relabel(new):
        new["metadata"]["labels"] = {"a": "b"}

    assert updated(old, relabel) == []
    # metadata rules of an update still apply
    new = copy.deepcopy(old)
    new["metadata"]["resourceVersion"] = ""
    assert [str(e) for e in validate_crd_update(new, old)] == [
        'metadata.resourceVersion: Invalid value: "": must be specified for an update']


def test_status_accepted_names():
    status = {"acceptedNames": {"plural": "Bad", "kind": "Widget"}}
    assert [str(e) for e in validate_crd_status(status, FieldPath("status"))] == [
        'status.acceptedNames.plural: Invalid value: "Bad": a DNS-1035 label must consist of '
        "lower case alphanumeric characters or '-', start with an alphabetic character, and "
        "end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
        "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"]


def test_every_storage_version_is_stored_and_only_the_storage_rule_complains():
    from kapiserver_plugins.apiextensions.crds import CRDS, CRDStrategy

    obj = crd()
    obj["spec"]["versions"].append(dict(copy.deepcopy(obj["spec"]["versions"][0]), name="v2"))
    set_defaults(obj)
    CRDStrategy(CRDS).prepare_for_create(obj)
    assert obj["status"]["storedVersions"] == ["v1", "v2"]
    got = [str(e) for e in validate_crd(obj)]
    assert len(got) == 1 and got[0].startswith("spec.versions: Invalid value: ")
    assert got[0].endswith("must have exactly one version marked as storage version")
    # An update that moves the storage version adds it to the stored versions.
    old = crd()
    set_defaults(old)
    CRDStrategy(CRDS).prepare_for_create(old)
    new = copy.deepcopy(old)
    new["spec"]["versions"][0]["storage"] = False
    new["spec"]["versions"].append(dict(copy.deepcopy(old["spec"]["versions"][0]),
                                        name="v2", storage=True))
    CRDStrategy(CRDS).prepare_for_update(new, old)
    assert new["status"]["storedVersions"] == ["v1", "v2"]
