"""Codec.normalize: decode(encode(obj)) without the bytes, on generated objects and on what
kube-apiserver wrote."""

import base64
import json
import pathlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kapiserver.runtime import protobuf as pb
from kapiserver.runtime.protobuf_wire import ProtobufError

from .protobuf_objects import kind_object

REFERENCE = pathlib.Path("/work/shared/reference")
CODEC = pb.default_codec()


def ordered(value):
    """``value`` with every dict's key order made visible to ``==``."""
    if isinstance(value, dict):
        return [(key, ordered(item)) for key, item in value.items()]
    if isinstance(value, list):
        return [ordered(item) for item in value]
    return value


def assert_normalize_is_decode_of_encode(obj):
    try:
        expected = CODEC.decode(CODEC.encode(obj))
    except ProtobufError:
        with pytest.raises(ProtobufError):
            CODEC.normalize(obj)
        return
    normalized = CODEC.normalize(obj)
    assert ordered(normalized) == ordered(expected)
    assert ordered(CODEC.normalize(normalized)) == ordered(normalized)


# Kinds with inline structs, every special type, deep nesting, lists and maps of messages.
KINDS = [("v1", "Pod"), ("v1", "PersistentVolume"), ("v1", "Service"), ("v1", "Secret"),
         ("v1", "Node"), ("v1", "Event"), ("apps/v1", "StatefulSet"),
         ("apps/v1", "ControllerRevision"), ("batch/v1", "CronJob"),
         ("autoscaling/v2", "HorizontalPodAutoscaler"), ("networking.k8s.io/v1", "Ingress"),
         ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
         ("authentication.k8s.io/v1", "TokenRequest"),
         ("flowcontrol.apiserver.k8s.io/v1", "FlowSchema"),
         ("certificates.k8s.io/v1", "CertificateSigningRequest"),
         ("coordination.k8s.io/v1", "Lease"), ("v1", "Status"),
         ("meta.k8s.io/v1", "PartialObjectMetadataList")]


@pytest.mark.parametrize("api_version, kind", KINDS, ids=[k for _, k in KINDS])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_normalize_is_decode_of_encode(api_version, kind, data):
    assert_normalize_is_decode_of_encode(data.draw(kind_object(CODEC, api_version, kind)))


def reference_objects():
    """Every object kube-apiserver wrote as JSON in the transcripts, of a known kind."""
    paths = [path for pattern in ("*.json", "wide/*.json", "wide/kinds/*.json",
                                  "wide/protocols/*.json")
             for path in sorted(REFERENCE.glob(pattern))]
    for path in paths:
        body = (json.loads(path.read_text()).get("response") or {}).get("body")
        if isinstance(body, dict) and CODEC.known(body.get("apiVersion"), body.get("kind")):
            yield pytest.param(body, id=f"{path.relative_to(REFERENCE)}-{body['kind']}")
    for path in sorted(REFERENCE.glob("wide/etcd/*.json")):
        capture = json.loads(path.read_text())
        if capture["format"] == "json":
            body = json.loads(base64.b64decode(capture["value_base64"]))
            if CODEC.known(body.get("apiVersion"), body.get("kind")):
                yield pytest.param(body, id=path.stem)


@pytest.mark.parametrize("obj", list(reference_objects()))
def test_what_kube_apiserver_wrote_is_already_normal(obj):
    if obj["kind"] == "PartialObjectMetadataList":
        # Upstream sets each item's kind and apiVersion, which the wire does not carry.
        obj = {**obj, "items": [{k: v for k, v in item.items()
                                 if k not in ("kind", "apiVersion")} for item in obj["items"]]}
    if obj["kind"].endswith("List") and obj["items"] == []:
        # The list handler makes the empty items slice itself; read from JSON it is empty
        # and from protobuf nil, and Go writes a nil one as null.
        obj = {**obj, "items": None}
    assert ordered(CODEC.normalize(obj)) == ordered(obj)
    assert_normalize_is_decode_of_encode(obj)


def test_unknown_fields_go_and_the_go_order_comes():
    pod = {"spec": {"containers": [{"image": "nginx", "name": "app", "bogus": 1}],
                    "volumes": [{"secret": {"secretName": "s"}, "name": "v", "junk": {}}]},
           "metadata": {"name": "p", "extra": True}, "apiVersion": "v1", "kind": "Pod",
           "status": {}}
    assert CODEC.normalize(pod) == {
        "kind": "Pod", "apiVersion": "v1",
        "metadata": {"name": "p", "creationTimestamp": None},
        "spec": {"volumes": [{"name": "v", "secret": {"secretName": "s"}}],
                 "containers": [{"name": "app", "image": "nginx", "resources": {}}]},
        "status": {}}
    assert list(CODEC.normalize(pod)["spec"]["volumes"][0]) == ["name", "secret"]


def test_pointers_without_omitempty_are_null_and_structs_are_written():
    request = CODEC.normalize({"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
                               "spec": {"audiences": []}})
    assert request["spec"] == {"audiences": None, "expirationSeconds": None,
                               "boundObjectRef": None}
    assert request["status"] == {"token": "", "expirationTimestamp": None}


@pytest.mark.parametrize("patch, message", [
    ({"metadata": {"labels": {"a": 1}}}, "metadata.labels.a: want a string, got int"),
    ({"metadata": {"generation": "1"}}, "metadata.generation: want an integer"),
    ({"metadata": {"ownerReferences": [{}, {"controller": "yes"}]}},
     "metadata.ownerReferences[1].controller: want a boolean"),
    ({"metadata": {"creationTimestamp": "now"}}, "metadata.creationTimestamp: 'now' is not"),
    ({"binaryData": {"b": "not base64!"}}, "binaryData.b: illegal base64"),
    ({"data": ["a"]}, "data: want an object"),
    ({"metadata": "x"}, "metadata: want an object"),
    ({"metadata": {"finalizers": "x"}}, "metadata.finalizers: want a list"),
    ({"metadata": {"finalizers": ["a", 7]}}, "metadata.finalizers[1]: want a string"),
])
def test_errors_are_encodes(patch, message):
    cm = {"kind": "ConfigMap", "apiVersion": "v1", **patch}
    with pytest.raises(ProtobufError) as normalized:
        CODEC.normalize(cm)
    with pytest.raises(ProtobufError) as encoded:
        CODEC.encode(cm)
    assert message in str(normalized.value)
    assert str(normalized.value) == str(encoded.value)


def test_unknown_kinds_are_refused():
    with pytest.raises(ProtobufError, match="no protobuf schema for kind 'Gadget'"):
        CODEC.normalize({"kind": "Gadget", "apiVersion": "capture.example.com/v1"})
