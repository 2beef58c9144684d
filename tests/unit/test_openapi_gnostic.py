"""The v2 document as gnostic's ``openapi.v2.Document`` protobuf, read back field by field."""

import json
import struct
from types import SimpleNamespace

import pytest
import yaml

from kapiserver.openapi.builder import OpenAPIBuilder
from kapiserver.openapi.gnostic import encode_document, parameter, schema
from kapiserver.runtime.protobuf_wire import read_varint
from kapiserver.server.apigroups import APIGroupInfo
from kapiserver.version import version_info
from kapiserver_plugins.core.configmaps import CONFIGMAPS
from kapiserver_plugins.core.services import SERVICES


def fields(data: bytes) -> list[tuple[int, object]]:
    """``(number, value)`` pairs: ints for varints, floats for fixed64, bytes otherwise."""
    out, pos = [], 0
    while pos < len(data):
        key, pos = read_varint(data, pos, len(data))
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = read_varint(data, pos, len(data))
        elif wire == 1:
            value, pos = struct.unpack("<d", data[pos:pos + 8])[0], pos + 8
        elif wire == 2:
            size, pos = read_varint(data, pos, len(data))
            value, pos = data[pos:pos + size], pos + size
        else:
            raise AssertionError(f"unexpected wire type {wire}")
        out.append((number, value))
    return out


def one(data: bytes, number: int):
    (value,) = [v for n, v in fields(data) if n == number]
    return value


def every(data: bytes, number: int) -> list:
    return [v for n, v in fields(data) if n == number]


def named(data: bytes, number: int) -> dict:
    """A repeated ``Named*`` field as ``{name: value bytes}``."""
    return {one(item, 1).decode(): one(item, 2) for item in every(data, number)}


def extensions(data: bytes, number: int) -> dict:
    return {name: yaml.safe_load(one(value, 2).decode())
            for name, value in named(data, number).items()}


@pytest.fixture(scope="module")
def swagger():
    groups = [APIGroupInfo("", {"v1": {"configmaps": SimpleNamespace(spec=CONFIGMAPS),
                                       "services": SimpleNamespace(spec=SERVICES)}})]
    return json.loads(OpenAPIBuilder(lambda: groups, version_info()).documents().v2_json)


@pytest.fixture(scope="module")
def message(swagger):
    return encode_document(swagger)


def test_document_header_info_and_security(message):
    assert one(message, 1) == b"2.0"
    info = one(message, 2)
    assert (one(info, 1), one(info, 2)) == (b"Kubernetes", b"1.32")
    requirement = one(message, 12)
    assert named(requirement, 1) == {"BearerToken": b""}  # an empty StringArray
    scheme = named(one(message, 13), 1)["BearerToken"]
    api_key = one(scheme, 2)
    assert [one(api_key, n) for n in (1, 2, 3, 4)] == [
        b"apiKey", b"authorization", b"header", b"Bearer Token authentication"]


def test_paths_operations_and_their_extensions(message, swagger):
    paths = named(one(message, 8), 2)
    assert list(paths) == list(swagger["paths"])
    item = paths["/api/v1/namespaces/{namespace}/configmaps/{name}"]
    patch = one(item, 8)
    assert one(patch, 5) == b"patchCoreV1NamespacedConfigMap"
    assert one(patch, 1) == b"core_v1"
    assert every(patch, 7) == [c.encode() for c in swagger["paths"][
        "/api/v1/namespaces/{namespace}/configmaps/{name}"]["patch"]["consumes"]]
    assert extensions(patch, 13) == {
        "x-kubernetes-action": "patch",
        "x-kubernetes-group-version-kind": {"group": "", "kind": "ConfigMap", "version": "v1"}}
    responses = named(one(patch, 9), 1)
    assert list(responses) == ["200", "201", "401"]
    ok = one(responses["200"], 1)
    assert one(ok, 1) == b"OK"
    assert one(one(one(ok, 2), 1), 1) == b"#/definitions/io.k8s.api.core.v1.ConfigMap"
    assert fields(one(responses["401"], 1)) == [(1, b"Unauthorized")]
    # Path-level parameters are references to the shared ones, but the name (its
    # description names the kind: never shared), inline.
    names = [p.get("name") for p in swagger["paths"][
        "/api/v1/namespaces/{namespace}/configmaps/{name}"]["parameters"]]
    assert names == ["name", None, None]
    encoded = every(item, 9)
    inline = one(one(one(encoded[0], 1), 2), 4)  # Parameter.non_body.path_parameter
    assert one(inline, 2) == b"path" and one(inline, 4) == b"name"
    references = [one(one(p, 2), 1).decode() for p in encoded[1:]]
    assert all(r.startswith("#/parameters/") for r in references)


def test_shared_parameters(message, swagger):
    shared = named(one(message, 10), 1)
    assert list(shared) == list(swagger["parameters"])
    (pretty,) = [v for k, v in shared.items() if k.startswith("pretty-")]
    query = one(one(pretty, 2), 3)
    assert one(query, 4) == b"pretty" and one(query, 2) == b"query"
    assert one(query, 6) == b"string" and one(query, 20) == 1
    (namespace,) = [v for k, v in shared.items() if k.startswith("namespace-")]
    path = one(one(namespace, 2), 4)
    assert (one(path, 1), one(path, 2), one(path, 5), one(path, 19)) == (1, b"path",
                                                                          b"string", 1)
    body = [v for k, v in shared.items() if k.startswith("body-")]
    assert body and all(one(one(b, 1), 2) == b"body" for b in body)


def test_definitions_keep_types_references_and_kubernetes_extensions(message):
    definitions = named(one(message, 9), 1)
    config_map = definitions["io.k8s.api.core.v1.ConfigMap"]
    assert one(one(config_map, 22), 1) == b"object"
    assert extensions(config_map, 31) == {"x-kubernetes-group-version-kind": [
        {"group": "", "kind": "ConfigMap", "version": "v1"}]}
    properties = named(one(config_map, 25), 1)
    data = properties["data"]
    assert one(one(data, 22), 1) == b"object"
    assert one(one(one(one(data, 21), 1), 22), 1) == b"string"  # additionalProperties
    assert one(properties["metadata"], 1) == \
        b"#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    ports = named(one(definitions["io.k8s.api.core.v1.ServiceSpec"], 25), 1)["ports"]
    assert extensions(ports, 31) == {"x-kubernetes-list-map-keys": ["port", "protocol"],
                                     "x-kubernetes-list-type": "map",
                                     "x-kubernetes-patch-merge-key": "port",
                                     "x-kubernetes-patch-strategy": "merge"}
    item = one(one(ports, 23), 1)
    assert one(item, 1) == b"#/definitions/io.k8s.api.core.v1.ServicePort"
    type_property = named(one(definitions["io.k8s.api.core.v1.ServiceSpec"], 25), 1)["type"]
    assert [yaml.safe_load(one(v, 2).decode()) for v in every(type_property, 20)] == [
        "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]


def test_schema_scalars_and_additional_properties_boolean():
    data = schema({"type": "integer", "format": "int32", "minimum": 1, "maximum": 2.5,
                   "maxLength": 3, "additionalProperties": False, "required": ["a", ""]})
    assert one(data, 2) == b"int32"
    assert one(data, 7) == 2.5 and one(data, 9) == 1.0 and one(data, 11) == 3
    assert every(data, 19) == [b"a", b""]
    assert fields(one(data, 21)) == [(2, 0)]  # a set oneof bool is written even when false


def test_body_and_header_parameters():
    body = parameter({"in": "body", "name": "body", "schema": {"$ref": "#/definitions/X"}})
    member = one(body, 1)
    assert (one(member, 2), one(member, 3)) == (b"body", b"body")
    assert one(one(member, 5), 1) == b"#/definitions/X"
    header = one(one(parameter({"in": "header", "name": "h", "type": "string"}), 2), 1)
    assert (one(header, 2), one(header, 4), one(header, 5)) == (b"header", b"h", b"string")
