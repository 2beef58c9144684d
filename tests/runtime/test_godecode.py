"""godecode: what upstream's decoders say of JSON that does not fit a kind's Go types."""

import pytest

from kapiserver.runtime import decoding, godecode
from kapiserver.runtime.patched_json import json_patched, merge_patched
from kapiserver.runtime.protobuf import default_codec

CODEC = default_codec()
QUANTITY = ("quantities must match the regular expression "
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


def json_error(api_version, kind, obj, number_text=godecode.number_text):
    return godecode.json_error(CODEC._lookup(api_version, kind), obj, number_text)


def field(struct, path, type_name, value):
    return (f"json: cannot unmarshal {value} into Go struct field {struct}.{path} of type "
            f"{type_name}")


def pod_spec(**spec):
    return {"spec": {"containers": [{"name": "c", "image": "i"}], **spec}}


def container(**fields):
    return {"spec": {"containers": [{"name": "c", **fields}]}}


@pytest.mark.parametrize("api_version, kind, obj, error", [
    # maps, lists, named maps and their elements
    ("v1", "ConfigMap", {"data": ["a"]},
     field("ConfigMap", "data", "map[string]string", "array")),
    ("v1", "ConfigMap", {"data": "a"}, field("ConfigMap", "data", "map[string]string", "string")),
    ("v1", "ConfigMap", {"data": {"a": 1}}, field("ConfigMap", "data", "string", "number")),
    ("v1", "ConfigMap", {"data": {"a": {}}}, field("ConfigMap", "data", "string", "object")),
    ("v1", "ConfigMap", {"binaryData": {"a": 1}},
     field("ConfigMap", "binaryData", "[]uint8", "number")),
    ("v1", "ConfigMap", {"binaryData": {"a": "!"}}, "illegal base64 data at input byte 0"),
    ("v1", "Secret", {"data": {"a": "aGVsbG8"}}, "illegal base64 data at input byte 4"),
    ("v1", "ConfigMap", {"metadata": {"finalizers": [1]}},
     field("ObjectMeta", "metadata.finalizers", "string", "number")),
    ("v1", "ConfigMap", {"metadata": {"ownerReferences": {}}},
     field("ObjectMeta", "metadata.ownerReferences", "[]v1.OwnerReference", "object")),
    ("v1", "ConfigMap", {"metadata": {"ownerReferences": [{"controller": "yes"}]}},
     field("OwnerReference", "metadata.ownerReferences.controller", "bool", "string")),
    ("v1", "ConfigMap", {"metadata": "x"},
     field("ConfigMap", "metadata", "v1.ObjectMeta", "string")),
    # numbers: overflow, fractions, the literal quoted
    ("apps/v1", "Deployment", {"spec": {"replicas": 3000000000}},
     field("DeploymentSpec", "spec.replicas", "int32", "number 3000000000")),
    ("apps/v1", "Deployment", {"spec": {"replicas": -2147483649}},
     field("DeploymentSpec", "spec.replicas", "int32", "number -2147483649")),
    ("apps/v1", "Deployment", {"spec": {"replicas": 1.5}},
     field("DeploymentSpec", "spec.replicas", "int32", "number 1.5")),
    ("apps/v1", "Deployment", {"spec": {"replicas": "3"}},
     field("DeploymentSpec", "spec.replicas", "int32", "string")),
    ("apps/v1", "Deployment", {"spec": {"paused": 1}},
     field("DeploymentSpec", "spec.paused", "bool", "number")),
    ("apps/v1", "Deployment", {"spec": {"revisionHistoryLimit": True}},
     field("DeploymentSpec", "spec.revisionHistoryLimit", "int32", "bool")),
    ("v1", "Pod", pod_spec(activeDeadlineSeconds=2 ** 63),
     field("PodSpec", "spec.activeDeadlineSeconds", "int64", f"number {2 ** 63}")),
    # nesting: the innermost struct, the JSON path without indexes or keys
    ("v1", "Pod", container(ports=[{"containerPort": "80"}]),
     field("ContainerPort", "spec.containers.ports.containerPort", "int32", "string")),
    ("v1", "Pod", pod_spec(containers={}),
     field("PodSpec", "spec.containers", "[]v1.Container", "object")),
    ("v1", "Pod", pod_spec(containers=[1]),
     field("PodSpec", "spec.containers", "v1.Container", "number")),
    ("v1", "Pod", pod_spec(securityContext=[]),
     field("PodSpec", "spec.securityContext", "v1.PodSecurityContext", "array")),
    ("v1", "Pod", pod_spec(restartPolicy=1),
     field("PodSpec", "spec.restartPolicy", "v1.RestartPolicy", "number")),
    ("v1", "Pod", pod_spec(nodeSelector={"a": True}),
     field("PodSpec", "spec.nodeSelector", "string", "bool")),
    ("v1", "Pod", container(resources={"limits": []}),
     field("ResourceRequirements", "spec.containers.resources.limits", "v1.ResourceList",
           "array")),
    # an inline struct's fields belong to the struct embedding it
    ("v1", "Pod", pod_spec(volumes=[{"name": "v", "configMap": "x"}]),
     field("Volume", "spec.volumes.configMap", "v1.ConfigMapVolumeSource", "string")),
    ("v1", "Pod", container(env=[{"name": "e", "valueFrom": {"configMapKeyRef": {
        "name": 1}}}]),
     field("ConfigMapKeySelector", "spec.containers.env.valueFrom.configMapKeyRef.name",
           "string", "number")),
    # types that read themselves
    ("v1", "Pod", container(resources={"limits": {"cpu": "lots"}}), QUANTITY),
    ("v1", "Pod", container(resources={"limits": {"cpu": []}}), QUANTITY),
    ("v1", "Pod", container(resources={"limits": {"cpu": True}}), QUANTITY),
    ("v1", "Service", {"spec": {"ports": [{"port": 80, "targetPort": 1.5}]}},
     field("ServicePort", "spec.ports.targetPort", "int32", "number 1.5")),
    ("v1", "Service", {"spec": {"ports": [{"port": 80, "targetPort": {}}]}},
     field("ServicePort", "spec.ports.targetPort", "int32", "object")),
    ("v1", "Service", {"spec": {"ports": [{"port": 80, "targetPort": 2 ** 40}]}},
     field("ServicePort", "spec.ports.targetPort", "int32", f"number {2 ** 40}")),
    ("v1", "ConfigMap", {"metadata": {"creationTimestamp": 5}},
     field("ObjectMeta", "metadata.creationTimestamp", "string", "number")),
    ("v1", "ConfigMap", {"metadata": {"creationTimestamp": "yesterday"}},
     'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as '
     '"2006"'),
    ("coordination.k8s.io/v1", "Lease", {"spec": {"renewTime": "2024-01-01T00:00:00Z"}},
     'parsing time "2024-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot '
     'parse "Z" as ".000000"'),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition", {"spec": {"versions": [
        {"schema": {"openAPIV3Schema": {"additionalProperties": "x"}}}]}},
     "boolean or JSON schema expected"),
    # the schema a wrapper reads is named after the wrapper's field
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition", {"spec": {"versions": [
        {"schema": {"openAPIV3Schema": {"additionalProperties": {"type": 1}}}}]}},
     field("JSONSchemaProps",
           "spec.versions.schema.openAPIV3Schema.additionalProperties", "string", "number")),
    ("authentication.k8s.io/v1", "TokenReview", {"status": {"user": {"extra": {"a": "b"}}}},
     field("UserInfo", "status.user.extra", "v1.ExtraValue", "string")),
    ("v1", "Pod", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}},
     None),
])
def test_json_errors(api_version, kind, obj, error):
    assert json_error(api_version, kind, obj) == error


def test_the_first_type_error_in_the_document_is_kept():
    obj = {"spec": {"paused": 1, "replicas": "3"}}
    assert json_error("apps/v1", "Deployment", obj) == field(
        "DeploymentSpec", "spec.paused", "bool", "number")
    obj = {"spec": {"replicas": "3", "paused": 1}}
    assert json_error("apps/v1", "Deployment", obj) == field(
        "DeploymentSpec", "spec.replicas", "int32", "string")


def test_a_self_reading_types_error_wins_over_a_kept_one():
    obj = {"metadata": {"labels": {"a": 1}},
           "spec": {"containers": [{"resources": {"limits": {"cpu": "x"}}}]}}
    assert json_error("v1", "Pod", obj) == QUANTITY


def test_null_leaves_go_values_alone_but_not_a_duration():
    obj = {"metadata": None, "data": None, "immutable": None, "binaryData": {"a": None}}
    assert json_error("v1", "ConfigMap", obj) is None
    assert json_error("v1", "Pod", {"spec": {"containers": None}}) is None
    assert json_error("autoscaling/v2", "HorizontalPodAutoscaler", {
        "spec": {"metrics": [{"resource": {"target": {"averageValue": None}}}]}}) is None


def test_a_numbers_literal_is_quoted_as_written():
    texts = godecode.float_literals(b'{"spec":{"replicas":1.0,"minReadySeconds":1e3}}')
    assert texts == {1.0: "1.0", 1000.0: "1e3"}
    obj = {"spec": {"minReadySeconds": 1000.0}}
    assert json_error("apps/v1", "Deployment", obj, lambda v: texts[v]) == field(
        "DeploymentSpec", "spec.minReadySeconds", "int32", "number 1e3")
    # without the literal (YAML), the number is what Go's encoder writes: 1e3 is 1000
    assert json_error("apps/v1", "Deployment", obj) is None
    body = b'{"spec":{"replicas":2.0}}'
    assert decoding.type_error({"spec": {"replicas": 2.0}}, "apps/v1", "Deployment",
                               body) == field("DeploymentSpec", "spec.replicas", "int32",
                                              "number 2.0")
    assert decoding.type_error({"spec": {"replicas": 2.0}}, "apps/v1", "Deployment") is None


@pytest.mark.parametrize("value, text", [
    (1.0, "1"), (1.5, "1.5"), (1e21, "1e+21"), (1e20, "100000000000000000000"),
    (1e-7, "1e-7"), (0.000001, "0.000001"), (-2.5, "-2.5"), (123456789.0, "123456789")])
def test_go_json_float(value, text):
    assert godecode.go_json_float(value) == text


@pytest.mark.parametrize("text, error", [
    ("aGVsbG8=", None), ("aGVsbG8", 4), ("a", 0), ("abcd", None), ("ab==", None),
    ("ab=", 3), ("a===", 1), ("ab=c", 2), ("abcd=", 4), ("ab==x", 4), ("h\u00e9llo", 1),
    ("YQ==\n", None), ("Y\nQ==", None), ("!!!!", 0), ("", None)])
def test_base64_errors_are_gos(text, error):
    expected = None if error is None else f"illegal base64 data at input byte {error}"
    assert godecode.base64_error(text) == expected


def unstructured(api_version, kind, obj):
    return godecode.unstructured_error(CODEC._lookup(api_version, kind), obj), obj


@pytest.mark.parametrize("api_version, kind, obj, error", [
    ("v1", "ConfigMap", {"data": ["a"]}, "cannot restore map from slice"),
    ("v1", "ConfigMap", {"data": "a"}, "cannot restore map from string"),
    ("v1", "ConfigMap", {"data": {"a": 1}}, "cannot convert int64 to string"),
    ("v1", "ConfigMap", {"data": {"a": 1.5}}, "unrecognized type: string"),
    ("v1", "ConfigMap", {"metadata": {"finalizers": {}}}, "cannot restore slice from map"),
    ("v1", "ConfigMap", {"metadata": 5}, "cannot restore struct from: int64"),
    ("v1", "ConfigMap", {"kind": 5}, "cannot convert int64 to string"),
    ("v1", "Secret", {"data": {"a": "aGVsbG8"}},
     "error decoding from json: illegal base64 data at input byte 4"),
    ("apps/v1", "Deployment", {"spec": {"replicas": "3"}}, "unrecognized type: int32"),
    ("apps/v1", "Deployment", {"spec": {"replicas": 1.5}}, "cannot convert float64 to int32"),
    ("apps/v1", "Deployment", {"spec": {"paused": "yes"}}, "unrecognized type: bool"),
    ("v1", "Pod", pod_spec(restartPolicy=1), "cannot convert int64 to v1.RestartPolicy"),
    ("v1", "Pod", container(resources={"limits": {"cpu": "x"}}), QUANTITY),
    ("v1", "Pod", {"metadata": {"creationTimestamp": 5}},
     "json: cannot unmarshal number into Go value of type string"),
    ("v1", "Service", {"spec": {"ports": [{"port": 80, "targetPort": 1.5}]}},
     "json: cannot unmarshal number 1.5 into Go value of type int32"),
])
def test_unstructured_errors(api_version, kind, obj, error):
    assert unstructured(api_version, kind, obj)[0] == error


def test_the_unstructured_converter_converts_numbers_as_reflect_does():
    assert unstructured("apps/v1", "Deployment", {"spec": {"replicas": 3000000000}}) == (
        None, {"spec": {"replicas": -1294967296}})
    assert unstructured("apps/v1", "Deployment", {"spec": {"replicas": 2.0}}) == (
        None, {"spec": {"replicas": 2}})
    assert unstructured("v1", "Service", {"spec": {"ports": [{"targetPort": 8.0}]}}) == (
        None, {"spec": {"ports": [{"targetPort": 8}]}})


def test_go_type_names_come_from_the_go_layout():
    pod_spec_message = CODEC._messages["core/v1.PodSpec"]
    fields = pod_spec_message._by_json_name
    assert godecode.field_type(pod_spec_message, fields["containers"])[0] == "[]v1.Container"
    assert godecode.field_type(pod_spec_message, fields["securityContext"])[0] == \
        "*v1.PodSecurityContext"
    assert godecode.element_type(pod_spec_message, fields["overhead"]) == "resource.Quantity"
    assert godecode.message_type(pod_spec_message) == "v1.PodSpec"


CURRENT = {"kind": "ConfigMap", "apiVersion": "v1",
           "metadata": {"name": "c", "namespace": "d", "labels": {"z": "1", "a": "2"}},
           "data": {"b": "<1>", "a": "2"}}


def test_merge_patched_text_keeps_what_the_library_did_not_look_into():
    text = merge_patched(CURRENT, {"data": {"c": ["x"]}})
    # the document and the object merged into: sorted; the labels: as Go wrote them
    assert text == ('{"apiVersion":"v1","data":{"a":"2","b":"\\u003c1\\u003e","c":["x"]},'
                    '"kind":"ConfigMap","metadata":{"name":"c","namespace":"d","labels":'
                    '{"z":"1","a":"2"}}}')
    replaced = merge_patched(CURRENT, {"data": ["a", {"y": 1, "x": None}]})
    assert '"data":["a",{"y":1,"x":null}]' in replaced  # a value replacing an object: raw
    added = merge_patched(CURRENT, {"spec": {"y": 1, "x": None}})
    assert '"spec":{"y":1}' in added  # a new value: its nulls pruned


def test_json_patched_text_sorts_the_containers_on_the_path():
    text = json_patched(CURRENT, [{"op": "add", "path": "/metadata/labels/b", "value": 5}])
    assert ('"metadata":{"labels":{"a":"2","b":5,"z":"1"},"name":"c","namespace":"d"}'
            in text)
    assert '"data":{"b":"\\u003c1\\u003e","a":"2"}' in text
    moved = json_patched(CURRENT, [{"op": "move", "from": "/data", "path": "/spec"}])
    assert '"spec":{"b":"\\u003c1\\u003e","a":"2"}' in moved and '"data"' not in moved


def test_normalize_decoded_drops_empty_metadata_of_any_kind():
    obj = {"apiVersion": "example.com/v1", "kind": "Widget",
           "metadata": {"name": "w", "annotations": {}, "labels": {}, "finalizers": [],
                        "generateName": "", "bogus": 1},
           "spec": {"empty": {}}}
    decoding.normalize_decoded(obj, "example.com/v1", "Widget")
    assert obj == {"apiVersion": "example.com/v1", "kind": "Widget",
                   "metadata": {"name": "w"}, "spec": {"empty": {}}}
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
               "spec": {"externalIPs": [], "selector": {},
                        "ports": [{"port": 80, "nodePort": 0}]}}
    decoding.normalize_decoded(service, "v1", "Service")
    assert service["spec"] == {"ports": [{"port": 80}]}
