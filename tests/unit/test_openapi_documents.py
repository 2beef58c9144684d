"""OpenAPIBuilder: the v2 and v3 documents of installed groups, compared with what
kube-apiserver v1.32 serves for the same resources."""

import hashlib
import json
import os
from types import SimpleNamespace

import pytest

from kapiserver.openapi.builder import AggregatedSpec, OpenAPIBuilder, encode
from kapiserver.openapi.routes import valid_operation_id
from kapiserver.registry.resource import ResourceSpec
from kapiserver.server.apigroups import APIGroupInfo
from kapiserver.version import version_info
from kapiserver_plugins.coordination.leases import LEASES
from kapiserver_plugins.core.configmaps import CONFIGMAPS
from kapiserver_plugins.core.endpoints import ENDPOINTS
from kapiserver_plugins.core.events import EVENTS
from kapiserver_plugins.core.namespaces import NAMESPACES, NamespaceStrategy
from kapiserver_plugins.core.secrets import SECRETS
from kapiserver_plugins.core.serviceaccounts import SERVICEACCOUNTS, ServiceAccountStrategy
from kapiserver_plugins.core.services import SERVICES, ServiceStrategy
from kapiserver_plugins.events.events import EVENTS as EVENTS_V1

REFERENCE = "/work/shared/reference"
needs_reference = pytest.mark.skipif(not os.path.isdir(REFERENCE),
                                     reason="reference transcripts absent")
STATUS_VERBS = ("get", "patch", "update")
#: serviceaccounts/token's own kind, as the core plugin declares it.
TOKENREQUEST = ResourceSpec(group="authentication.k8s.io", version="v1", kind="TokenRequest",
                            resource="serviceaccounts", singular="", namespaced=True,
                            verbs=("create",))
#: The resources kapiserver's built-in plugins install, as they install them.
SERVED = {"": {"configmaps": (CONFIGMAPS, None), "namespaces": (NAMESPACES, None),
               "namespaces/status": (NAMESPACES, STATUS_VERBS),
               "namespaces/finalize": (NAMESPACES, ("update",)),
               "secrets": (SECRETS, None), "serviceaccounts": (SERVICEACCOUNTS, None),
               "serviceaccounts/token": (TOKENREQUEST, None),
               "events": (EVENTS, None), "endpoints": (ENDPOINTS, None),
               "services": (SERVICES, None), "services/status": (SERVICES, STATUS_VERBS)},
          "coordination.k8s.io": {"leases": (LEASES, None)},
          "events.k8s.io": {"events": (EVENTS_V1, None)}}


#: The strategies whose store answers DELETE with the object, as the plugins declare them.
STRATEGIES = {SERVICES.resource: ServiceStrategy, SERVICEACCOUNTS.resource: ServiceAccountStrategy,
              NAMESPACES.resource: NamespaceStrategy}


def handler(spec, verbs=None):
    strategy = STRATEGIES.get(spec.resource) if spec.group == "" else None
    strategy = strategy(spec) if strategy else None
    return SimpleNamespace(spec=spec, verbs=tuple(verbs or spec.verbs),
                           store=SimpleNamespace(strategy=strategy))


def built_in_groups():
    return [APIGroupInfo(group, {"v1": {path: handler(spec, verbs)
                                        for path, (spec, verbs) in resources.items()}})
            for group, resources in SERVED.items()]


@pytest.fixture(scope="module")
def documents():
    groups = built_in_groups()
    return OpenAPIBuilder(lambda: groups, version_info()).documents()


def v3(documents, key):
    return json.loads(documents.v3[key][0])


def reference(name):
    with open(os.path.join(REFERENCE, name)) as f:
        return json.load(f)["response"]["body"]


def resource_of(path: str, prefix: str) -> str:
    """``configmaps`` or ``namespaces/status`` for a path under ``prefix``."""
    parts = path[len(prefix):].strip("/").split("/")
    if parts[:1] == ["watch"]:
        parts = parts[1:]
    if parts[:2] == ["namespaces", "{namespace}"] and len(parts) > 2:
        parts = parts[2:]
    if len(parts) >= 3:
        return f"{parts[0]}/{parts[2]}"
    return parts[0] if parts and parts[0] else ""


# -- v3: what kube-apiserver serves --------------------------------------------------------------

@needs_reference
@pytest.mark.parametrize("key,transcript", [("api/v1", "openapi-v3-api-v1.json"),
                                            ("apis/coordination.k8s.io/v1",
                                             "openapi-v3-coordination.json")])
def test_v3_paths_are_kube_apiservers_byte_for_byte(documents, key, transcript):
    ours, theirs = v3(documents, key), reference(transcript)
    prefix = "/" + key
    served = set(SERVED["" if key == "api/v1" else "coordination.k8s.io"])
    expected = {path for path in theirs["paths"] if resource_of(path, prefix) in served | {""}}
    assert set(ours["paths"]) == expected
    for path, item in ours["paths"].items():
        # Same content and the same key order (what a client hashing the bytes sees).
        assert json.dumps(item) == json.dumps(theirs["paths"][path]), path
    assert ours["openapi"] == theirs["openapi"] and ours["info"] == theirs["info"]
    assert ours["components"]["securitySchemes"] == theirs["components"]["securitySchemes"]
    for name, schema in ours["components"]["schemas"].items():
        assert json.dumps(schema) == json.dumps(theirs["components"]["schemas"][name]), name


@needs_reference
def test_v3_components_are_the_definitions_the_paths_reach(documents):
    ours = v3(documents, "apis/coordination.k8s.io/v1")
    assert list(ours["components"]["schemas"]) == sorted(
        reference("openapi-v3-coordination.json")["components"]["schemas"])


def test_index_lists_every_document_with_its_content_hash(documents):
    index = json.loads(documents.index)
    assert list(index) == ["paths"]
    assert list(index["paths"]) == sorted([
        "api", "api/v1", "apis", "apis/coordination.k8s.io", "apis/coordination.k8s.io/v1",
        "apis/events.k8s.io", "apis/events.k8s.io/v1", "version"])
    for key, entry in index["paths"].items():
        data, digest = documents.v3[key]
        assert digest == hashlib.sha512(data).hexdigest().upper()
        assert entry == {"serverRelativeURL": f"/openapi/v3/{key}?hash={digest}"}


def test_documents_are_encoded_as_go_json_marshal_does():
    assert encode({"a": "<b>&c", "d": [1, "é"]}) == \
        '{"a":"\\u003cb\\u003e\\u0026c","d":[1,"é"]}'.encode()


def test_events_k8s_io_v1_is_described_as_upstream_names_it(documents):
    doc = v3(documents, "apis/events.k8s.io/v1")
    item = doc["paths"]["/apis/events.k8s.io/v1/namespaces/{namespace}/events/{name}"]
    assert item["patch"]["operationId"] == "patchEventsV1NamespacedEvent"
    assert item["patch"]["tags"] == ["events_v1"]
    assert item["patch"]["x-kubernetes-group-version-kind"] == {
        "group": "events.k8s.io", "version": "v1", "kind": "Event"}
    assert [p["name"] for p in item["parameters"]] == ["name", "namespace", "pretty"]
    assert doc["paths"]["/apis/events.k8s.io/v1/events"]["get"]["operationId"] == \
        "listEventsV1EventForAllNamespaces"
    assert doc["paths"]["/apis/events.k8s.io/v1/watch/namespaces/{namespace}/events"][
        "get"]["operationId"] == "watchEventsV1NamespacedEventList"
    schemas = doc["components"]["schemas"]
    event = schemas["io.k8s.api.events.v1.Event"]
    assert event["required"] == ["eventTime"]
    assert event["properties"]["regarding"]["allOf"] == [
        {"$ref": "#/components/schemas/io.k8s.api.core.v1.ObjectReference"}]
    assert "io.k8s.api.events.v1.EventSeries" in schemas
    assert "io.k8s.api.core.v1.Event" not in schemas


def test_a_subresource_of_another_kind_is_named_after_its_parent(documents):
    item = v3(documents, "api/v1")["paths"][
        "/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token"]
    post = item["post"]
    assert post["operationId"] == "createCoreV1NamespacedServiceAccountToken"
    assert post["description"] == "create token of a ServiceAccount"
    assert post["x-kubernetes-group-version-kind"] == {
        "group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest"}
    assert post["requestBody"]["content"]["*/*"]["schema"] == {
        "$ref": "#/components/schemas/io.k8s.api.authentication.v1.TokenRequest"}


def test_discovery_and_version_documents(documents):
    api = v3(documents, "api")["paths"]["/api/"]["get"]
    assert (api["operationId"], api["tags"]) == ("getCoreAPIVersions", ["core"])
    apis = v3(documents, "apis")["paths"]["/apis/"]["get"]
    assert (apis["operationId"], apis["tags"]) == ("getAPIVersions", ["apis"])
    group = v3(documents, "apis/coordination.k8s.io")
    get = group["paths"]["/apis/coordination.k8s.io/"]["get"]
    assert (get["operationId"], get["tags"]) == ("getCoordinationAPIGroup", ["coordination"])
    assert set(group["components"]["schemas"]) == {
        "io.k8s.apimachinery.pkg.apis.meta.v1." + n
        for n in ("APIGroup", "GroupVersionForDiscovery", "ServerAddressByClientCIDR")}
    version = v3(documents, "version")["paths"]["/version/"]["get"]
    assert version["operationId"] == "getCodeVersion"
    assert list(version["responses"]["200"]["content"]) == ["application/json"]


@pytest.mark.parametrize("text,capitalize,expected", [
    ("coordination", True, "Coordination"), ("rbac.authorization", True, "RbacAuthorization"),
    ("rbac.authorization", False, "rbacAuthorization"), ("v1beta1", True, "V1beta1"),
    ("1abc", False, "Abc"), ("example-group.io", False, "exampleGroupIo")])
def test_valid_operation_id(text, capitalize, expected):
    assert valid_operation_id(text, capitalize) == expected


# -- v2 ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def swagger(documents):
    return json.loads(documents.v2_json)


def walk(value):
    yield value
    if isinstance(value, dict):
        for child in value.values():
            yield from walk(child)
    elif isinstance(value, list):
        for child in value:
            yield from walk(child)


def test_v2_is_one_swagger_document_with_every_path(documents, swagger):
    assert swagger["swagger"] == "2.0"
    assert swagger["info"] == {"title": "Kubernetes", "version": "1.32"}
    every = set()
    for key in documents.v3:
        every |= set(v3(documents, key)["paths"])
    assert set(swagger["paths"]) == every
    assert swagger["securityDefinitions"] == {"BearerToken": {
        "description": "Bearer Token authentication", "in": "header", "name": "authorization",
        "type": "apiKey"}}
    assert swagger["security"] == [{"BearerToken": []}]


def test_v2_operations_carry_consumes_produces_and_kubernetes_extensions(swagger):
    patch = swagger["paths"]["/api/v1/namespaces/{namespace}/configmaps/{name}"]["patch"]
    assert patch["consumes"] == ["application/json-patch+json", "application/merge-patch+json",
                                 "application/strategic-merge-patch+json",
                                 "application/apply-patch+yaml"]
    assert patch["produces"] == ["application/json", "application/yaml",
                                 "application/vnd.kubernetes.protobuf"]
    assert patch["schemes"] == ["https"]
    assert patch["operationId"] == "patchCoreV1NamespacedConfigMap"
    assert patch["responses"]["200"] == {
        "description": "OK", "schema": {"$ref": "#/definitions/io.k8s.api.core.v1.ConfigMap"}}
    assert patch["responses"]["401"] == {"description": "Unauthorized"}
    assert patch["x-kubernetes-group-version-kind"] == {"group": "", "kind": "ConfigMap",
                                                        "version": "v1"}
    # kubectl looks for dryRun and fieldValidation inline: kube-openapi never shares them.
    assert [p.get("name") for p in patch["parameters"]] == [
        None, "dryRun", None, "fieldValidation", None]
    parameters = [swagger["parameters"][p["$ref"].rsplit("/", 1)[1]] if "$ref" in p else p
                  for p in patch["parameters"]]
    assert [p["name"] for p in parameters] == ["body", "dryRun", "fieldManager",
                                                "fieldValidation", "force"]
    assert parameters[0] == {"in": "body", "name": "body", "required": True,
                             "schema": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis."
                                                "meta.v1.Patch"}}
    assert parameters[4] == {"name": "force", "in": "query", "description": parameters[4][
        "description"], "type": "boolean", "uniqueItems": True}


def test_v2_shares_parameters_and_every_reference_resolves(swagger):
    refs = {v["$ref"] for v in walk(swagger["paths"]) if isinstance(v, dict) and "$ref" in v}
    parameter_refs = {r for r in refs if r.startswith("#/parameters/")}
    assert {r.rsplit("/", 1)[1] for r in parameter_refs} == set(swagger["parameters"])
    definition_refs = {v["$ref"] for v in walk([swagger["paths"], swagger["parameters"],
                                               swagger["definitions"]])
                       if isinstance(v, dict) and isinstance(v.get("$ref"), str)
                       and v["$ref"].startswith("#/definitions/")}
    assert {r.rsplit("/", 1)[1] for r in definition_refs} <= set(swagger["definitions"])
    assert "pretty" in {p["name"] for p in swagger["parameters"].values()}


def test_v2_definitions_are_swagger_2_schemas(swagger):
    definitions = swagger["definitions"]
    for value in walk(definitions):
        if isinstance(value, dict):
            assert "allOf" not in value and "oneOf" not in value
            assert not any(isinstance(r, str) and r.startswith("#/components/")
                           for r in value.values())
    # Pruned defaults: no schema has one (a property may still be *named* default).
    assert "default" not in definitions["io.k8s.api.core.v1.ConfigMap"]["properties"]["data"][
        "additionalProperties"]
    metadata = definitions["io.k8s.api.core.v1.ConfigMap"]["properties"]["metadata"]
    assert metadata == {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
                        "description": metadata["description"]}
    assert definitions["io.k8s.apimachinery.pkg.util.intstr.IntOrString"] == {
        "description": definitions["io.k8s.apimachinery.pkg.util.intstr.IntOrString"][
            "description"], "type": "string", "format": "int-or-string"}
    ports = definitions["io.k8s.api.core.v1.ServiceSpec"]["properties"]["ports"]
    assert ports["x-kubernetes-patch-merge-key"] == "port"
    assert ports["x-kubernetes-patch-strategy"] == "merge"
    assert ports["x-kubernetes-list-map-keys"] == ["port", "protocol"]
    assert ports["x-kubernetes-list-type"] == "map"


# -- plugin kinds and rebuilding -----------------------------------------------------------------

WIDGET = {
    "description": "Widget is a plugin's kind.",
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"},
        "metadata": {"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis."
                                         "meta.v1.ObjectMeta"}]},
        "spec": {"description": "What the widget should be.", "type": "object",
                 "properties": {"size": {"type": "integer", "format": "int32"}}},
    },
    "x-kubernetes-group-version-kind": [{"group": "example.com", "kind": "Widget",
                                         "version": "v1"}],
}
WIDGETS = ResourceSpec(group="example.com", version="v1", kind="Widget", resource="widgets",
                       singular="widget", namespaced=True,
                       openapi_definitions={"com.example.v1.Widget": WIDGET})
GADGETS = ResourceSpec(group="example.com", version="v1", kind="Gadget", resource="gadgets",
                       singular="gadget", namespaced=False, verbs=("get", "list"))


def test_plugin_kinds_use_their_definitions_or_an_untyped_schema():
    groups = [APIGroupInfo("example.com", {"v1": {"widgets": handler(WIDGETS),
                                                  "gadgets": handler(GADGETS)}})]
    documents = OpenAPIBuilder(lambda: groups, version_info()).documents()
    doc = v3(documents, "apis/example.com/v1")
    schemas = doc["components"]["schemas"]
    assert schemas["com.example.v1.Widget"] == WIDGET
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in schemas
    # No list definition given: one is built as upstream builds a custom resource's list.
    widget_list = schemas["com.example.v1.WidgetList"]
    assert widget_list["properties"]["items"]["items"] == {
        "$ref": "#/components/schemas/com.example.v1.Widget"}
    assert widget_list["x-kubernetes-group-version-kind"] == [
        {"group": "example.com", "kind": "WidgetList", "version": "v1"}]
    gadget = schemas["com.example.v1.Gadget"]
    assert gadget["x-kubernetes-preserve-unknown-fields"] is True
    assert gadget["type"] == "object"
    assert set(gadget["properties"]) == {"apiVersion", "kind", "metadata"}
    assert gadget["x-kubernetes-group-version-kind"] == [
        {"group": "example.com", "kind": "Gadget", "version": "v1"}]
    # Only the verbs served get paths.
    assert set(doc["paths"]) == {"/apis/example.com/v1/", "/apis/example.com/v1/gadgets",
                                 "/apis/example.com/v1/gadgets/{name}",
                                 "/apis/example.com/v1/namespaces/{namespace}/widgets",
                                 "/apis/example.com/v1/namespaces/{namespace}/widgets/{name}",
                                 "/apis/example.com/v1/watch/namespaces/{namespace}/widgets",
                                 "/apis/example.com/v1/watch/namespaces/{namespace}/widgets/"
                                 "{name}",
                                 "/apis/example.com/v1/widgets",
                                 "/apis/example.com/v1/watch/widgets"}
    assert list(doc["paths"]["/apis/example.com/v1/gadgets/{name}"]) == ["get", "parameters"]
    assert doc["paths"]["/apis/example.com/v1/gadgets"]["get"]["operationId"] == \
        "listExampleComV1Gadget"
    swagger = json.loads(documents.v2_json)
    assert swagger["definitions"]["com.example.v1.Widget"]["properties"]["metadata"] == {
        "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}


@pytest.mark.parametrize("group,expected", [
    ("", "io.k8s.api.core.v1.Thing"), ("rbac.authorization.k8s.io", "io.k8s.api.rbac.v1.Thing"),
    ("example.com", "com.example.v1.Thing"), ("a.b.example.org", "org.example.b.a.v1.Thing")])
def test_untyped_kinds_are_named_as_upstream_names_them(group, expected):
    from kapiserver.openapi.schemas import untyped_name

    assert untyped_name(group, "v1", "Thing") == expected


def test_openapi_model_names_a_definition_without_a_gvk():
    spec = ResourceSpec(group="example.com", version="v1", kind="Widget", resource="widgets",
                        singular="widget", namespaced=True, openapi_model="Widget",
                        openapi_definitions={"Widget": {"type": "object"}})
    groups = [APIGroupInfo("example.com", {"v1": {"widgets": handler(spec)}})]
    doc = v3(OpenAPIBuilder(lambda: groups, version_info()).documents(), "apis/example.com/v1")
    post = doc["paths"]["/apis/example.com/v1/namespaces/{namespace}/widgets"]["post"]
    assert post["requestBody"]["content"]["*/*"]["schema"] == {
        "$ref": "#/components/schemas/Widget"}


def test_documents_are_cached_until_invalidated():
    groups = built_in_groups()[:1]
    builder = OpenAPIBuilder(lambda: groups, version_info())
    first = builder.documents()
    assert builder.documents() is first
    groups.append(built_in_groups()[1])
    assert "apis/coordination.k8s.io/v1" not in builder.documents().v3  # still cached
    builder.invalidate()
    rebuilt = builder.documents()
    assert rebuilt is not first
    assert "apis/coordination.k8s.io/v1" in rebuilt.v3
    assert rebuilt.v3["api/v1"] == first.v3["api/v1"]  # unchanged documents keep their hash
    assert rebuilt.v2_etag != first.v2_etag


def _extension_swagger():
    """An extension server's v2 document, reduced to its /apis/ paths."""
    other = OpenAPIBuilder(lambda: [APIGroupInfo("example.com", {"v1": {
        "widgets": handler(WIDGETS)}})] + built_in_groups()[2:], version_info()).documents()
    from kapiserver.openapi.merge import filter_by_paths

    return other, filter_by_paths(json.loads(other.v2_json), ["/apis/"])


def test_aggregated_documents_are_served_beside_the_local_ones():
    groups = built_in_groups()
    builder = OpenAPIBuilder(lambda: groups, version_info())
    first = builder.documents()
    other, swagger = _extension_swagger()
    widgets_v3 = other.v3["apis/example.com/v1"][0]
    builder.set_aggregated([
        AggregatedSpec("v1.example.com", swagger, {
            "apis/example.com/v1": widgets_v3,
            # A key this server serves itself keeps its own document.
            "apis/events.k8s.io/v1": b'{"theirs": true}'}),
        AggregatedSpec("v1.later.example.com", None, {"apis/example.com/v1": b"{}"})])
    documents = builder.documents()
    assert documents is not first
    # Served as the extension served it, listed with the hash of its bytes.
    data, digest = documents.v3["apis/example.com/v1"]
    assert data == widgets_v3
    assert digest == hashlib.sha512(data).hexdigest().upper()
    index = json.loads(documents.index)["paths"]
    assert index["apis/example.com/v1"]["serverRelativeURL"] == \
        f"/openapi/v3/apis/example.com/v1?hash={digest}"
    assert documents.v3["apis/events.k8s.io/v1"] == first.v3["apis/events.k8s.io/v1"]
    # v2: the extension's paths and definitions merged in, in Go's key order.
    merged = json.loads(documents.v2_json)
    assert "/apis/example.com/v1/namespaces/{namespace}/widgets" in merged["paths"]
    assert merged["definitions"]["com.example.v1.Widget"]["properties"]["spec"]
    assert list(merged["paths"]) == sorted(merged["paths"])
    assert list(merged["definitions"]) == sorted(merged["definitions"])
    assert merged["paths"]["/api/v1/namespaces"] == \
        json.loads(first.v2_json)["paths"]["/api/v1/namespaces"]
    builder.set_aggregated([])
    assert builder.documents().v2_json == first.v2_json
    assert "apis/example.com/v1" not in builder.documents().v3


def test_two_builders_share_no_state():
    one = OpenAPIBuilder(lambda: built_in_groups()[:1], version_info())
    two = OpenAPIBuilder(lambda: built_in_groups(), version_info())
    assert "apis/events.k8s.io/v1" not in one.documents().v3
    assert "apis/events.k8s.io/v1" in two.documents().v3
