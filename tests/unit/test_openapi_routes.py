"""What upstream's installer learns from a storage's interfaces, as handlers say it: connect
subresources, GETs with options, what DELETE answers; and kube-openapi's v2 parameter
sharing."""

import json
from types import SimpleNamespace

from kapiserver.openapi import schemas, v2
from kapiserver.openapi.builder import OpenAPIBuilder
from kapiserver.registry.resource import ResourceSpec
from kapiserver.server.apigroups import APIGroupInfo
from kapiserver.version import version_info

GROUP = "tunnels.example.com"
TUNNELS = ResourceSpec(group=GROUP, version="v1", kind="Tunnel", resource="tunnels",
                       singular="tunnel", namespaced=False)
DIAL = ResourceSpec(group=GROUP, version="v1", kind="TunnelDialOptions", resource="tunnels",
                    singular="", namespaced=False, verbs=("create", "get"))
DUMP = ResourceSpec(group=GROUP, version="v1", kind="Tunnel", resource="tunnels",
                    singular="", namespaced=False, verbs=("get",))


def documents(**attributes):
    dial = SimpleNamespace(spec=DIAL, verbs=DIAL.verbs, connect_methods=("GET", "POST"),
                           connect_subpath=True)
    dump = SimpleNamespace(spec=DUMP, verbs=DUMP.verbs, produces_mime_types=("text/plain",),
                           produces_object="string")
    tunnels = SimpleNamespace(spec=TUNNELS, verbs=TUNNELS.verbs,
                              store=SimpleNamespace(strategy=SimpleNamespace(**attributes)))
    groups = [APIGroupInfo(GROUP, {"v1": {"tunnels": tunnels, "tunnels/dial": dial,
                                          "tunnels/dump": dump}})]
    built = OpenAPIBuilder(lambda: groups, version_info(), issuer_discovery=True).documents()
    return built, json.loads(built.v3[f"apis/{GROUP}/v1"][0])


def test_a_connect_subresource_has_a_route_per_method_and_a_path_variant():
    _, document = documents()
    item = document["paths"][f"/apis/{GROUP}/v1/tunnels/{{name}}/dial"]
    assert [m for m in item if m != "parameters"] == ["get", "post"]
    assert item["post"]["operationId"] == "connectTunnelsExampleComV1PostTunnelDial"
    assert item["post"]["description"] == "connect POST requests to dial of Tunnel"
    assert item["post"]["x-kubernetes-group-version-kind"]["kind"] == "TunnelDialOptions"
    assert item["parameters"] == [{"name": "name", "in": "path",
                                   "description": "name of the TunnelDialOptions",
                                   "required": True,
                                   "schema": {"type": "string", "uniqueItems": True}}]
    with_path = document["paths"][f"/apis/{GROUP}/v1/tunnels/{{name}}/dial/{{path}}"]
    assert with_path["get"]["operationId"] == "connectTunnelsExampleComV1GetTunnelDialWithPath"
    assert [p["name"] for p in with_path["parameters"]] == ["name", "path"]
    # An options kind no definition describes is no schema either.
    assert not any(name.endswith("TunnelDialOptions") for name in document["components"][
        "schemas"])


def test_a_get_may_produce_text_as_a_string():
    _, document = documents()
    get = document["paths"][f"/apis/{GROUP}/v1/tunnels/{{name}}/dump"]["get"]
    assert get["operationId"] == "readTunnelsExampleComV1TunnelDump"
    assert get["responses"]["200"]["content"]["text/plain"] == {"schema": {"type": "string"}}


def test_delete_documents_the_object_when_the_store_returns_it():
    for attributes, answer in (({}, "Status"), ({"return_deleted_object": True}, "Tunnel"),
                               ({"return_deleted_object": True,
                                 "delete_returns_object": False}, "Status")):
        _, document = documents(**attributes)
        delete = document["paths"][f"/apis/{GROUP}/v1/tunnels/{{name}}"]["delete"]
        schema = delete["responses"]["200"]["content"]["application/json"]["schema"]
        assert schema["$ref"].endswith("." + answer), attributes


def test_issuer_discovery_documents_have_no_schemas():
    built, _ = documents()
    jwks = json.loads(built.v3["openid/v1/jwks"][0])
    assert list(jwks["components"]) == ["securitySchemes"]
    assert jwks["paths"]["/openid/v1/jwks/"]["get"]["responses"]["200"]["content"] == {
        "application/jwk-set+json": {"schema": {"type": "string"}}}
    swagger = json.loads(built.v2_json)
    assert "consumes" not in swagger["paths"]["/openid/v1/jwks/"]["get"]


def test_shipped_options_parameters_are_the_options_fields():
    options = schemas.builtin()["options_parameters"]
    assert [p["name"] for p in options["io.k8s.api.core.v1.PodExecOptions"]] == [
        "command", "container", "stderr", "stdin", "stdout", "tty"]
    assert [p["name"] for p in options["io.k8s.api.core.v1.PodLogOptions"]] == [
        "container", "follow", "insecureSkipTLSVerifyBackend", "limitBytes", "previous",
        "sinceSeconds", "stream", "tailLines", "timestamps"]
    assert all(p["in"] == "query" for params in options.values() for p in params)


def test_v2_shared_parameters_are_named_as_kube_openapi_names_them():
    pretty = {"name": "pretty", "in": "query", "description": (
        "If 'true', then the output is pretty printed. Defaults to 'false' unless the "
        "user-agent indicates a browser or command-line HTTP tool (curl and wget)."),
        "schema": {"type": "string", "uniqueItems": True}}
    dry_run = {"name": "dryRun", "in": "query", "description": "x",
               "schema": {"type": "string", "uniqueItems": True}}
    name = {"name": "name", "in": "path", "description": "name of the Tunnel",
            "required": True, "schema": {"type": "string", "uniqueItems": True}}
    own_body = {"name": "body", "in": "body", "required": True,
                "schema": {"$ref": "#/definitions/com.example.v1.Tunnel"}}
    patch_body = {"name": "body", "in": "body", "required": True,
                  "schema": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}}
    paths = {"/x": {"get": {"parameters": [v2.parameter_v2(p) for p in (pretty, dry_run, name)]
                            + [own_body, patch_body]}}}
    shared = v2.share_parameters(paths)
    # Upstream's names (kube-apiserver 1.32's /openapi/v2): FNV-1 of Go's JSON.
    assert sorted(shared) == ["body-78PwaGsr", "pretty-tJGM1-ng"]
    assert list(shared["pretty-tJGM1-ng"]) == ["uniqueItems", "type", "description", "name",
                                               "in"]
    assert [p.get("$ref", p.get("name")) for p in paths["/x"]["get"]["parameters"]] == [
        "#/parameters/pretty-tJGM1-ng", "dryRun", "name", "body", "#/parameters/body-78PwaGsr"]
