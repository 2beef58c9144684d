"""/openapi/v2 and /openapi/v3 end to end: the documents, their HTTP semantics, and the
kubectl flows that read them (explain, client-side validation, apply, diff).

This module is also the server's plugin (``plugins=[__name__]``): it installs
``openapi.example.com/v1`` with a kind that brings its own schema (widgets) and one
that has none (gadgets), as a third-party plugin would.
"""

import gzip
import hashlib
import json
import os

import pytest

from kapiserver.plugin_manager import hookimpl
from kapiserver.registry.resource import ResourceSpec
from kapiserver.registry.strategy import Strategy
from kapiserver.server.apigroups import APIGroupInfo, APIGroupInstaller

ADMIN = dict(user="admin", groups=["system:masters"])
REFERENCE = "/work/shared/reference"
needs_reference = pytest.mark.skipif(not os.path.isdir(REFERENCE),
                                     reason="reference transcripts absent")
GROUP = "openapi.example.com"
OBJECT_META = "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
WIDGET_SCHEMA = {
    "description": "Widget is a test plugin's kind with its own schema.",
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"allOf": [{"$ref": OBJECT_META}]},
        "spec": {"description": "spec says how big the widget is.", "type": "object",
                 "properties": {"size": {"description": "size of the widget in cm.",
                                         "type": "integer", "format": "int32"}}},
    },
    "x-kubernetes-group-version-kind": [{"group": GROUP, "kind": "Widget", "version": "v1"}],
}
WIDGETS = ResourceSpec(group=GROUP, version="v1", kind="Widget", resource="widgets",
                       singular="widget", namespaced=True,
                       openapi_definitions={"com.example.openapi.v1.Widget": WIDGET_SCHEMA})
GADGETS = ResourceSpec(group=GROUP, version="v1", kind="Gadget", resource="gadgets",
                       singular="gadget", namespaced=True)


class ExampleGroup(APIGroupInstaller):
    """``openapi.example.com/v1``: widgets (typed) and gadgets (untyped)."""

    group = GROUP

    def install(self, server):
        return APIGroupInfo(GROUP, {"v1": {
            "widgets": server.rest_handler(WIDGETS, Strategy(WIDGETS)),
            "gadgets": server.rest_handler(GADGETS, Strategy(GADGETS)),
        }})


@hookimpl
def kapiserver_api_groups(config):
    return [ExampleGroup()]


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    workdir = tmp_path_factory.mktemp("openapi")
    server = KapiserverProcess(str(workdir), plugins=[__name__], workers=2).start()
    yield server
    server.stop()


def get(api, path, **kwargs):
    return api.get(path, **ADMIN, **kwargs)


def kubectl(api, *args, input=None):
    return api.kubectl(*args, input=input)


def reference(name):
    with open(os.path.join(REFERENCE, name)) as f:
        return json.load(f)["response"]["body"]


# -- documents -----------------------------------------------------------------------------------

def installed_documents(api) -> set:
    """The v3 documents a server with these groups serves, from its legacy discovery (and
    service-account issuer discovery's two)."""
    keys = {"version", "api", "apis", ".well-known/openid-configuration", "openid/v1/jwks"}
    keys |= {f"api/{v}" for v in get(api, "/api").json()["versions"]}
    for group in get(api, "/apis").json()["groups"]:
        keys.add(f"apis/{group['name']}")
        keys |= {f"apis/{v['groupVersion']}" for v in group["versions"]}
    return keys


def test_v3_index_lists_each_document_with_the_hash_of_its_bytes(api):
    response = get(api, "/openapi/v3", headers={"Accept": "application/json"})
    assert response.status_code == 200
    # As kube-apiserver's aggregator serves it: a sniffed content type, no ETag.
    assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert "ETag" not in response.headers
    assert response.headers["Cache-Control"] == "no-cache, private"
    paths = response.json()["paths"]
    assert set(paths) == installed_documents(api)
    assert {"api/v1", f"apis/{GROUP}/v1", "apis/coordination.k8s.io/v1",
            "apis/events.k8s.io/v1"} <= set(paths)
    for key, entry in paths.items():
        url = entry["serverRelativeURL"]
        path, _, query = url.partition("?")
        assert path == f"/openapi/v3/{key}" and query.startswith("hash=")
        document = get(api, url)
        assert document.status_code == 200, url
        assert query == "hash=" + hashlib.sha512(document.content).hexdigest().upper()
        assert document.headers["Cache-Control"] == "public, immutable"
        assert document.headers["Expires"].endswith(" UTC")
        assert document.headers["Content-Type"] == "application/json"


def test_both_workers_serve_the_same_documents(api):
    urls = {json.dumps(get(api, "/openapi/v3").json(), sort_keys=True) for _ in range(8)}
    assert len(urls) == 1
    etags = {get(api, "/openapi/v2").headers["ETag"] for _ in range(8)}
    assert len(etags) == 1


def _served_paths(theirs: dict, resources: set, prefix: str) -> set:
    out = set()
    for path in theirs["paths"]:
        parts = path[len(prefix):].strip("/").split("/")
        parts = parts[1:] if parts[:1] == ["watch"] else parts
        if parts[:2] == ["namespaces", "{namespace}"] and len(parts) > 2:
            parts = parts[2:]
        resource = f"{parts[0]}/{parts[2]}" if len(parts) >= 3 else parts[0]
        if resource in resources or resource == "":
            out.add(path)
    return out


@needs_reference
@pytest.mark.parametrize("key,transcript", [
    ("api/v1", "openapi-v3-api-v1.json"),
    ("apis/coordination.k8s.io/v1", "openapi-v3-coordination.json")])
def test_v3_documents_describe_served_resources_exactly_as_kube_apiserver(api, key, transcript):
    ours, theirs = get(api, f"/openapi/v3/{key}").json(), reference(transcript)
    resources = {r["name"] for r in get(api, f"/{key}").json()["resources"]}
    assert {"configmaps", "services/status", "namespaces/finalize", "leases"} & resources
    assert set(ours["paths"]) == _served_paths(theirs, resources, "/" + key)
    for path, item in ours["paths"].items():
        assert json.dumps(item) == json.dumps(theirs["paths"][path]), path
    for name, schema in ours["components"]["schemas"].items():
        assert schema == theirs["components"]["schemas"][name], name
    assert {k: v for k, v in ours.items() if k != "paths" and k != "components"} == \
        {k: v for k, v in theirs.items() if k != "paths" and k != "components"}


def test_configmap_operations_carry_upstream_ids_parameters_and_extensions(api):
    paths = get(api, "/openapi/v3/api/v1").json()["paths"]
    item = paths["/api/v1/namespaces/{namespace}/configmaps"]
    assert [(m, op["operationId"]) for m, op in item.items() if m != "parameters"] == [
        ("get", "listCoreV1NamespacedConfigMap"), ("post", "createCoreV1NamespacedConfigMap"),
        ("delete", "deleteCoreV1CollectionNamespacedConfigMap")]
    assert [p["name"] for p in item["parameters"]] == ["namespace", "pretty"]
    assert item["get"]["x-kubernetes-action"] == "list"
    patch = paths["/api/v1/namespaces/{namespace}/configmaps/{name}"]["patch"]
    assert [p["name"] for p in patch["parameters"]] == ["dryRun", "fieldManager",
                                                         "fieldValidation", "force"]
    assert sorted(patch["requestBody"]["content"]) == [
        "application/apply-patch+yaml", "application/json-patch+json",
        "application/merge-patch+json", "application/strategic-merge-patch+json"]
    finalize = paths["/api/v1/namespaces/{name}/finalize"]
    assert list(finalize) == ["put", "parameters"]
    assert finalize["put"]["operationId"] == "replaceCoreV1NamespaceFinalize"
    assert paths["/api/v1/namespaces/{namespace}/services/{name}/status"]["patch"][
        "operationId"] == "patchCoreV1NamespacedServiceStatus"


def test_plugin_kinds_are_described_by_their_schema_or_as_untyped(api):
    doc = get(api, f"/openapi/v3/apis/{GROUP}/v1").json()
    schemas = doc["components"]["schemas"]
    assert schemas["com.example.openapi.v1.Widget"] == WIDGET_SCHEMA
    assert schemas["com.example.openapi.v1.Gadget"]["x-kubernetes-preserve-unknown-fields"]
    assert schemas["com.example.openapi.v1.Gadget"]["x-kubernetes-group-version-kind"] == [
        {"group": GROUP, "kind": "Gadget", "version": "v1"}]
    post = doc["paths"][f"/apis/{GROUP}/v1/namespaces/{{namespace}}/widgets"]["post"]
    assert post["operationId"] == "createOpenapiExampleComV1NamespacedWidget"
    assert post["tags"] == ["openapiExampleCom_v1"]


# -- HTTP semantics ------------------------------------------------------------------------------

def test_stale_hash_redirects_permanently_to_the_current_document(api):
    current = get(api, "/openapi/v3").json()["paths"]["api/v1"]["serverRelativeURL"]
    response = get(api, "/openapi/v3/api/v1?hash=DEADBEEF", allow_redirects=False)
    assert response.status_code == 301
    assert response.headers["Location"] == current
    assert response.content == b""
    followed = get(api, "/openapi/v3/api/v1?hash=DEADBEEF")
    assert followed.status_code == 200 and followed.url.endswith(current)


def test_document_without_hash_is_not_cached_and_supports_if_none_match(api):
    response = get(api, "/openapi/v3/apis/coordination.k8s.io/v1")
    assert response.headers["Cache-Control"] == "no-cache, private"
    assert response.headers["Vary"] == "Accept"
    etag = response.headers["ETag"]
    assert etag == '"' + hashlib.sha512(response.content).hexdigest().upper() + '"'
    again = get(api, "/openapi/v3/apis/coordination.k8s.io/v1",
                headers={"If-None-Match": etag})
    assert (again.status_code, again.content) == (304, b"")
    assert again.headers["ETag"] == etag
    head = api.request("HEAD", "/openapi/v3/apis/coordination.k8s.io/v1", **ADMIN)
    assert (head.status_code, head.content) == (200, b"")
    assert head.headers["Content-Length"] == str(len(response.content))
    assert head.headers["ETag"] == etag


def test_unknown_document_and_unacceptable_media_types(api):
    missing = get(api, "/openapi/v3/apis/nope.example.com/v1")
    assert (missing.status_code, missing.content) == (404, b"")
    assert "Content-Type" not in missing.headers
    protobuf_v3 = get(api, "/openapi/v3/api/v1", headers={
        "Accept": "application/com.github.proto-openapi.spec.v3.v1.0+protobuf"})
    assert (protobuf_v3.status_code, protobuf_v3.content) == (406, b"")
    html = get(api, "/openapi/v2", headers={"Accept": "text/html"})
    assert (html.status_code, html.content) == (406, b"")
    assert html.headers["Vary"] == "Accept-Encoding, Accept"
    for path in ("/openapi", "/openapi/v2/x"):
        response = get(api, path)
        assert (response.status_code, response.text) == (404, "404 page not found\n")


def test_v2_json_protobuf_gzip_and_etag(api):
    response = get(api, "/openapi/v2")  # requests asks for gzip
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    assert response.headers["Content-Encoding"] == "gzip"
    swagger = response.json()
    assert swagger["swagger"] == "2.0"
    assert swagger["info"] == {"title": "Kubernetes", "version": "1.32"}
    assert "/api/v1/namespaces/{namespace}/configmaps/{name}" in swagger["paths"]
    assert f"/apis/{GROUP}/v1/namespaces/{{namespace}}/widgets" in swagger["paths"]
    assert "io.k8s.api.coordination.v1.Lease" in swagger["definitions"]
    etag = response.headers["ETag"]
    assert etag == '"' + hashlib.sha512(response.content).hexdigest().upper() + '"'
    protobuf = get(api, "/openapi/v2", headers={
        "Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
        "Accept-Encoding": "identity"})
    assert protobuf.status_code == 200
    assert protobuf.headers["Content-Type"] == \
        "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    assert protobuf.headers["ETag"] == etag
    assert protobuf.content[:5] == b"\x0a\x032.0"  # Document.swagger = "2.0"
    assert "Content-Encoding" not in protobuf.headers
    not_modified = get(api, "/openapi/v2", headers={"If-None-Match": etag})
    assert (not_modified.status_code, not_modified.content) == (304, b"")
    raw = get(api, "/openapi/v2", stream=True)
    assert json.loads(gzip.decompress(raw.raw.read(decode_content=False))) == swagger


# -- kubectl -------------------------------------------------------------------------------------

CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}
  namespace: default
data:
  key: "{value}"
"""


def test_kubectl_explain_reads_openapi_v3(api):
    result = kubectl(api, "explain", "configmap.data")
    assert result.returncode == 0, result.stderr
    assert "FIELD: data <map[string]string>" in result.stdout
    assert "Data contains the configuration data." in result.stdout
    recursive = kubectl(api, "explain", "secret", "--recursive")
    assert recursive.returncode == 0, recursive.stderr
    for field in ("stringData\t<map[string]string>", "managedFields\t<[]ManagedFieldsEntry>",
                  "type\t<string>"):
        assert field in recursive.stdout
    events = kubectl(api, "explain", "events", "--api-version=events.k8s.io/v1")
    assert "GROUP:      events.k8s.io" in events.stdout
    assert "regarding\t<ObjectReference>" in events.stdout
    lease = kubectl(api, "explain", "lease.spec.holderIdentity")
    assert "holderIdentity contains the identity of the holder" in lease.stdout
    widget = kubectl(api, "explain", "widgets.spec.size")
    assert "size of the widget in cm." in widget.stdout, widget.stderr
    gadget = kubectl(api, "explain", "gadgets")
    assert gadget.returncode == 0 and "KIND:       Gadget" in gadget.stdout


def test_kubectl_explain_openapiv2_reads_the_protobuf_document(api):
    result = kubectl(api, "explain", "service.spec.ports", "--output=plaintext-openapiv2",
                     "-v=6")
    assert result.returncode == 0, result.stderr
    assert "RESOURCE: ports <[]Object>" in result.stdout
    assert "The list of ports that are exposed by this service." in result.stdout
    assert "GET https://" in result.stderr and "/openapi/v2" in result.stderr


def test_kubectl_create_validates_without_flags_using_openapi_v3(api):
    result = kubectl(api, "create", "-f", "-", "-v=8",
                     input=CONFIGMAP.format(name="created", value="1"))
    assert result.returncode == 0, result.stderr
    assert "configmap/created created" in result.stdout
    # kubectl 1.32 checks in the v3 document that PATCH takes fieldValidation, then lets
    # the server validate; it never needs /openapi/v2.
    assert "/openapi/v3/api/v1?hash=" in result.stderr
    assert "fieldValidation=Strict" in result.stderr
    assert "/openapi/v2" not in result.stderr


def test_kubectl_strict_validation_names_the_unknown_field(api):
    manifest = CONFIGMAP.format(name="strict", value="1") + "bogus: 1\n"
    result = kubectl(api, "create", "--validate=strict", "-f", "-", input=manifest)
    assert result.returncode == 1
    assert 'strict decoding error: unknown field "bogus"' in result.stderr
    assert kubectl(api, "get", "configmap", "strict").returncode == 1


def test_kubectl_apply_twice_is_unchanged_then_configured(api):
    manifest = CONFIGMAP.format(name="applied", value="1")
    first = kubectl(api, "apply", "-f", "-", input=manifest)
    assert (first.returncode, first.stdout) == (0, "configmap/applied created\n"), first.stderr
    second = kubectl(api, "apply", "-f", "-", input=manifest)
    assert (second.returncode, second.stdout) == (0, "configmap/applied unchanged\n")
    changed = kubectl(api, "apply", "-f", "-", input=CONFIGMAP.format(name="applied", value="2"))
    assert (changed.returncode, changed.stdout) == (0, "configmap/applied configured\n")


def test_kubectl_apply_merges_lists_by_the_openapi_merge_key(api):
    service = """apiVersion: v1
kind: Service
metadata:
  name: merged
  namespace: default
spec:
  ports:
  - {{name: http, port: 80}}
  - {{name: other, port: {port}}}
"""
    assert kubectl(api, "apply", "-f", "-", input=service.format(port=443)).returncode == 0
    result = kubectl(api, "apply", "-f", "-", "-v=8", input=service.format(port=8443))
    assert result.returncode == 0, result.stderr
    # The patch kubectl computes from x-kubernetes-patch-merge-key: port.
    assert '\\"$setElementOrder/ports\\":[{\\"port\\":80},{\\"port\\":8443}]' in result.stderr
    ports = json.loads(kubectl(api, "get", "service", "merged", "-o",
                               "jsonpath={.spec.ports}").stdout)
    assert [(p["name"], p["port"]) for p in ports] == [("http", 80), ("other", 8443)]


def test_kubectl_diff_shows_the_change(api):
    kubectl(api, "apply", "-f", "-", input=CONFIGMAP.format(name="diffed", value="1"))
    same = kubectl(api, "diff", "-f", "-", input=CONFIGMAP.format(name="diffed", value="1"))
    assert (same.returncode, same.stdout) == (0, "")
    result = kubectl(api, "diff", "-f", "-", input=CONFIGMAP.format(name="diffed", value="2"))
    assert result.returncode == 1, result.stderr
    assert '-  key: "1"' in result.stdout and '+  key: "2"' in result.stdout


def test_kubectl_applies_plugin_kinds_with_and_without_a_schema(api):
    widget = f"""apiVersion: {GROUP}/v1
kind: Widget
metadata: {{name: w1, namespace: default}}
spec: {{size: {{size}}}}
"""
    gadget = f"""apiVersion: {GROUP}/v1
kind: Gadget
metadata: {{name: g1, namespace: default}}
anything: {{goes: here}}
"""
    created = kubectl(api, "apply", "-f", "-", input=widget.replace("{size}", "3"))
    assert created.stdout == f"widget.{GROUP}/w1 created\n", created.stderr
    again = kubectl(api, "apply", "-f", "-", input=widget.replace("{size}", "3"))
    assert again.stdout == f"widget.{GROUP}/w1 unchanged\n", again.stderr
    changed = kubectl(api, "apply", "-f", "-", input=widget.replace("{size}", "4"))
    assert changed.stdout == f"widget.{GROUP}/w1 configured\n", changed.stderr
    untyped = kubectl(api, "apply", "-f", "-", input=gadget)
    assert untyped.stdout == f"gadget.{GROUP}/g1 created\n", untyped.stderr


# -- rbac, authentication and authorization kinds ------------------------------------------------

ROLE = """apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {name}
  namespace: default
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list]
"""
REVIEW_KINDS = {
    "rbac.authorization.k8s.io/v1": ("Role", "RoleList", "ClusterRole", "ClusterRoleList",
                                     "RoleBinding", "RoleBindingList", "ClusterRoleBinding",
                                     "ClusterRoleBindingList"),
    "authentication.k8s.io/v1": ("TokenReview", "SelfSubjectReview"),
    "authorization.k8s.io/v1": ("SubjectAccessReview", "LocalSubjectAccessReview",
                                "SelfSubjectAccessReview", "SelfSubjectRulesReview"),
}


@pytest.mark.parametrize("group_version", sorted(REVIEW_KINDS))
def test_rbac_and_review_kinds_are_typed_as_upstream_types_them(api, group_version):
    group, version = group_version.split("/")
    schemas = get(api, f"/openapi/v3/apis/{group_version}").json()["components"]["schemas"]
    package = {"rbac.authorization.k8s.io": "rbac"}.get(group, group.split(".")[0])
    for kind in REVIEW_KINDS[group_version]:
        schema = schemas[f"io.k8s.api.{package}.{version}.{kind}"]
        assert "x-kubernetes-preserve-unknown-fields" not in schema, kind
        assert schema["x-kubernetes-group-version-kind"] == [
            {"group": group, "kind": kind, "version": version}]
    assert not [name for name, schema in schemas.items()
                if schema.get("x-kubernetes-preserve-unknown-fields")]
    if group == "rbac.authorization.k8s.io":
        rules = schemas["io.k8s.api.rbac.v1.Role"]["properties"]["rules"]
        assert rules["x-kubernetes-list-type"] == "atomic"
        assert schemas["io.k8s.api.rbac.v1.PolicyRule"]["required"] == ["verbs"]
        assert schemas["io.k8s.api.rbac.v1.RoleRef"]["x-kubernetes-map-type"] == "atomic"
        assert "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector" in schemas
    if group == "authorization.k8s.io":
        assert "io.k8s.apimachinery.pkg.apis.meta.v1.FieldSelectorRequirement" in schemas


def test_kubectl_explain_prints_upstream_rbac_field_docs(api):
    rules = kubectl(api, "explain", "role.rules")
    assert rules.returncode == 0, rules.stderr
    assert "FIELD: rules <[]PolicyRule>" in rules.stdout
    assert "Rules holds all the PolicyRules for this Role" in rules.stdout
    assert "verbs\t<[]string> -required-" in rules.stdout
    subjects = kubectl(api, "explain", "clusterrolebinding.subjects")
    assert subjects.returncode == 0, subjects.stderr
    assert "FIELD: subjects <[]Subject>" in subjects.stdout
    assert "Subjects holds references to the objects the role applies to." in subjects.stdout
    assert "kind\t<string> -required-" in subjects.stdout
    assert '"User", "Group", and "ServiceAccount"' in subjects.stdout


def test_kubectl_explain_recursive_prints_self_subject_access_review_spec(api):
    result = kubectl(api, "explain", "selfsubjectaccessreview.spec", "--recursive")
    assert result.returncode == 0, result.stderr
    assert "FIELD: spec <SelfSubjectAccessReviewSpec>" in result.stdout
    assert "SelfSubjectAccessReviewSpec is a description of the access request." in result.stdout
    assert "Spec holds information about the request being evaluated.  user and groups" \
        in result.stdout
    for field in ("nonResourceAttributes\t<NonResourceAttributes>",
                  "resourceAttributes\t<ResourceAttributes>",
                  "fieldSelector\t<FieldSelectorAttributes>",
                  "requirements\t<[]FieldSelectorRequirement>",
                  "labelSelector\t<LabelSelectorAttributes>",
                  "requirements\t<[]LabelSelectorRequirement>",
                  "operator\t<string> -required-", "subresource\t<string>"):
        assert field in result.stdout, field


def test_kubectl_applies_a_role_and_strict_validation_names_an_unknown_field(api):
    applied = kubectl(api, "apply", "-f", "-", input=ROLE.format(name="reader"))
    assert (applied.returncode, applied.stdout) == (
        0, "role.rbac.authorization.k8s.io/reader created\n"), applied.stderr
    again = kubectl(api, "apply", "-f", "-", input=ROLE.format(name="reader"))
    assert again.stdout == "role.rbac.authorization.k8s.io/reader unchanged\n", again.stderr
    manifest = ROLE.format(name="strict-role") + "  bogusRuleField: 1\n"
    strict = kubectl(api, "create", "--validate=strict", "-f", "-", input=manifest)
    assert strict.returncode == 1
    assert 'unknown field "rules[0].bogusRuleField"' in strict.stderr, strict.stderr
    assert kubectl(api, "get", "role", "strict-role").returncode == 1


# -- apiextensions.k8s.io and apiregistration.k8s.io kinds ---------------------------------------

CRD_MODEL = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1."
APISERVICE_MODEL = "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1."
CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gizmos.apply.example.com
spec:
  group: apply.example.com
  names: {{plural: gizmos, singular: gizmo, kind: Gizmo, shortNames: [{short_names}]}}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {{type: integer}}
"""


def words(text: str) -> str:
    """``text`` with its whitespace collapsed (kubectl explain wraps descriptions)."""
    return " ".join(text.split())


@pytest.mark.parametrize("group_version,model,kinds", [
    ("apiextensions.k8s.io/v1", CRD_MODEL, ("CustomResourceDefinition",
                                            "CustomResourceDefinitionList")),
    ("apiregistration.k8s.io/v1", APISERVICE_MODEL, ("APIService", "APIServiceList"))])
def test_crd_and_apiservice_documents_carry_upstream_schemas(api, group_version, model, kinds):
    group, version = group_version.split("/")
    document = get(api, f"/openapi/v3/apis/{group_version}").json()
    schemas = document["components"]["schemas"]
    for kind in kinds:
        assert schemas[model + kind]["x-kubernetes-group-version-kind"] == [
            {"group": group, "kind": kind, "version": version}]
        assert "x-kubernetes-preserve-unknown-fields" not in schemas[model + kind]
    assert not [name for name, schema in schemas.items()
                if schema.get("x-kubernetes-preserve-unknown-fields")]
    resource = kinds[0].lower() + "s"
    post = document["paths"][f"/apis/{group_version}/{resource}"]["post"]
    assert post["requestBody"]["content"]["*/*"]["schema"] == {
        "$ref": f"#/components/schemas/{model}{kinds[0]}"}
    if group == "apiextensions.k8s.io":
        spec = schemas[model + "CustomResourceDefinitionSpec"]
        assert spec["required"] == ["group", "names", "scope", "versions"]
        assert spec["properties"]["versions"]["x-kubernetes-list-type"] == "atomic"
        assert spec["properties"]["versions"]["items"] == {"default": {}, "allOf": [
            {"$ref": f"#/components/schemas/{model}CustomResourceDefinitionVersion"}]}
        conditions = schemas[model + "CustomResourceDefinitionStatus"]["properties"][
            "conditions"]
        assert (conditions["x-kubernetes-list-type"], conditions["x-kubernetes-list-map-keys"]) \
            == ("map", ["type"])
        props = schemas[model + "JSONSchemaProps"]["properties"]
        # Recursive, and the free-form wrappers carry only their description.
        assert props["properties"]["additionalProperties"]["allOf"] == [
            {"$ref": f"#/components/schemas/{model}JSONSchemaProps"}]
        assert props["x-kubernetes-validations"]["x-kubernetes-patch-merge-key"] == "rule"
        assert set(schemas[model + "JSON"]) == {"description"}
        assert schemas[model + "CustomResourceDefinitionVersion"]["properties"]["served"][
            "default"] is False
    else:
        spec = schemas[model + "APIServiceSpec"]
        assert spec["required"] == ["groupPriorityMinimum", "versionPriority"]
        assert spec["properties"]["caBundle"] == {
            "description": "CABundle is a PEM encoded CA bundle which will be used to validate "
                           "an API server's serving certificate. If unspecified, system trust "
                           "roots on the apiserver are used.",
            "type": "string", "format": "byte", "x-kubernetes-list-type": "atomic"}
        conditions = schemas[model + "APIServiceStatus"]["properties"]["conditions"]
        assert conditions["x-kubernetes-patch-strategy"] == "merge"
        assert conditions["x-kubernetes-list-map-keys"] == ["type"]


def test_v2_document_has_crd_and_apiservice_definitions_in_swagger_form(api):
    definitions = get(api, "/openapi/v2").json()["definitions"]
    crd = definitions[CRD_MODEL + "CustomResourceDefinition"]
    assert crd["properties"]["spec"] == {
        "description": "spec describes how the user wants the resources to appear",
        "$ref": f"#/definitions/{CRD_MODEL}CustomResourceDefinitionSpec"}
    assert crd["x-kubernetes-group-version-kind"] == [
        {"group": "apiextensions.k8s.io", "kind": "CustomResourceDefinition", "version": "v1"}]
    apiservice = definitions[APISERVICE_MODEL + "APIService"]
    assert apiservice["x-kubernetes-group-version-kind"] == [
        {"group": "apiregistration.k8s.io", "kind": "APIService", "version": "v1"}]
    assert "default" not in json.dumps(definitions[APISERVICE_MODEL + "APIServiceSpec"])
    assert definitions[CRD_MODEL + "JSONSchemaProps"]["properties"]["not"] == {
        "$ref": f"#/definitions/{CRD_MODEL}JSONSchemaProps"}


def test_kubectl_explain_prints_upstream_crd_and_apiservice_docs(api):
    schema = kubectl(api, "explain", "crd.spec.versions.schema")
    assert schema.returncode == 0, schema.stderr
    assert schema.stdout.startswith("GROUP:      apiextensions.k8s.io\n"
                                    "KIND:       CustomResourceDefinition\n"
                                    "VERSION:    v1\n\n"
                                    "FIELD: schema <CustomResourceValidation>\n")
    assert ("schema describes the schema used for validation, pruning, and defaulting of this "
            "version of the custom resource. CustomResourceValidation is a list of validation "
            "methods for CustomResources.") in words(schema.stdout)
    assert "openAPIV3Schema\t<JSONSchemaProps>" in schema.stdout
    short = kubectl(api, "explain", "customresourcedefinition.spec.names.shortNames")
    assert short.returncode == 0, short.stderr
    assert "KIND:       CustomResourceDefinition\n" in short.stdout
    assert "FIELD: shortNames <[]string>\n" in short.stdout
    assert ("shortNames are short names for the resource, exposed in API discovery documents, "
            "and used by clients to support invocations like `kubectl get <shortname>`. It "
            "must be all lowercase.") in words(short.stdout)
    versions = kubectl(api, "explain", "crd.spec.versions")
    for field in ("name\t<string> -required-", "served\t<boolean> -required-",
                  "selectableFields\t<[]SelectableField>", "schema\t<CustomResourceValidation>"):
        assert field in versions.stdout, field
    priority = kubectl(api, "explain", "apiservice.spec.groupPriorityMinimum")
    assert priority.returncode == 0, priority.stderr
    assert priority.stdout.startswith("GROUP:      apiregistration.k8s.io\n"
                                      "KIND:       APIService\n"
                                      "VERSION:    v1\n\n"
                                      "FIELD: groupPriorityMinimum <integer>\n")
    assert ("GroupPriorityMinimum is the priority this group should have at least. Higher "
            "priority means that the group is preferred by clients over lower priority ones."
            ) in words(priority.stdout)
    spec = kubectl(api, "explain", "apiservice.spec")
    assert "groupPriorityMinimum\t<integer> -required-" in spec.stdout
    assert "service\t<ServiceReference>" in spec.stdout


def test_kubectl_applies_a_crd_twice_without_falling_back(api):
    created = kubectl(api, "apply", "-f", "-", input=CRD.format(short_names="gz"))
    assert created.stdout == ("customresourcedefinition.apiextensions.k8s.io/"
                              "gizmos.apply.example.com created\n"), created.stderr
    same = kubectl(api, "apply", "-f", "-", input=CRD.format(short_names="gz"))
    assert same.stdout.endswith(" unchanged\n"), same.stderr
    changed = kubectl(api, "apply", "-f", "-", "-v=6",
                      input=CRD.format(short_names="gz, gzm"))
    assert changed.returncode == 0, changed.stderr
    assert changed.stdout.endswith("gizmos.apply.example.com configured\n")
    # kubectl found the fields it merges in the schema: no "unable to find api field".
    assert "warning" not in changed.stderr.lower() and "W1" not in changed.stderr
    quiet = kubectl(api, "apply", "-f", "-", input=CRD.format(short_names="gz, gzm, gzmo"))
    assert (quiet.returncode, quiet.stderr) == (0, "")
    names = kubectl(api, "get", "crd", "gizmos.apply.example.com", "-o",
                    "jsonpath={.spec.names.shortNames}")
    assert json.loads(names.stdout) == ["gz", "gzm", "gzmo"]


def test_kubectl_strict_validation_refuses_an_unknown_crd_field(api):
    manifest = CRD.replace("gizmos", "doodads").replace("Gizmo", "Doodad").replace(
        "gizmo", "doodad").format(short_names="dd") + "  bogus: 1\n"
    created = kubectl(api, "apply", "--validate=strict", "-f", "-", input=manifest)
    assert created.returncode == 1
    assert ('Error from server (BadRequest): error when creating "STDIN": '
            'CustomResourceDefinition in version "v1" cannot be handled as a '
            'CustomResourceDefinition: strict decoding error: unknown field "spec.bogus"'
            ) in created.stderr, created.stderr
    assert kubectl(api, "get", "crd", "doodads.apply.example.com").returncode == 1
    # On an existing CRD the patch is refused the same way, and nothing changes.
    good = manifest.replace("  bogus: 1\n", "")
    assert kubectl(api, "apply", "-f", "-", input=good).returncode == 0
    patched = kubectl(api, "apply", "--validate=strict", "-f", "-", input=manifest.replace(
        "openAPIV3Schema:\n", "openAPIV3Schema:\n        typo: x\n"))
    assert patched.returncode == 1
    # upstream's strategic merge patcher: 422 on "patch", the patch as %+v prints it
    assert 'The request is invalid: patch: Invalid value: "map[' in patched.stderr, \
        patched.stderr
    assert ': strict decoding error: unknown field' in patched.stderr
    for path in ("spec.bogus", "spec.versions[0].schema.openAPIV3Schema.typo"):
        assert f'unknown field "{path}"' in patched.stderr
    warned = kubectl(api, "apply", "--validate=warn", "-f", "-", input=manifest)
    assert warned.returncode == 0, warned.stderr
    assert 'Warning: unknown field "spec.bogus"' in warned.stderr
    stored = json.loads(kubectl(api, "get", "crd", "doodads.apply.example.com",
                                "-o", "json").stdout)
    assert "bogus" not in stored["spec"]


NESTED_CRD = CRD.replace("gizmos", "knobs").replace("Gizmo", "Knob").replace(
    "gizmo", "knob").replace(
    "    storage: true\n",
    "    storage: true\n    subresources:\n      status: {{}}\n").format(short_names="kn")


def test_kubectl_strict_validation_names_unknown_fields_in_list_items_and_empty_structs(api):
    # subresources.status is a struct without fields (CustomResourceSubresourceStatus);
    # spec.versions[0] a list item; items a schema decoded leniently (JSONSchemaPropsOrArray).
    manifest = NESTED_CRD.replace("status: {}", "status: {enabled: true}").replace(
        "    storage: true\n", "    storage: true\n    bogus: 1\n").replace(
        "size: {type: integer}",
        "size: {type: integer}\n              tags: {type: array, items: {type: string, "
        "whatever: 1}}")
    refused = kubectl(api, "apply", "--validate=strict", "-f", "-", input=manifest)
    assert refused.returncode == 1
    assert refused.stderr == (
        'Error from server (BadRequest): error when creating "STDIN": CustomResourceDefinition '
        'in version "v1" cannot be handled as a CustomResourceDefinition: strict decoding error: '
        'unknown field "spec.versions[0].bogus", '
        'unknown field "spec.versions[0].subresources.status.enabled"\n'), refused.stderr
    assert kubectl(api, "get", "crd", "knobs.apply.example.com").returncode == 1
    warned = kubectl(api, "apply", "--validate=warn", "-f", "-", input=manifest)
    assert warned.returncode == 0, warned.stderr
    assert warned.stderr == (
        'Warning: unknown field "spec.versions[0].bogus"\n'
        'Warning: unknown field "spec.versions[0].subresources.status.enabled"\n')
    stored = get(api, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                      "knobs.apply.example.com").json()
    version = stored["spec"]["versions"][0]
    assert "bogus" not in version and version["subresources"] == {"status": {}}
    # What the lenient decoder dropped is gone too, without a word.
    assert version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"][
        "tags"] == {"type": "array", "items": {"type": "string"}}
    assert kubectl(api, "delete", "crd", "knobs.apply.example.com").returncode == 0


APISERVICE = """apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1.fieldvalidation.example.com
spec:
  group: fieldvalidation.example.com
  version: v1
  groupPriorityMinimum: 1000
  versionPriority: 15
  insecureSkipTLSVerify: true
  service:
    namespace: default
    name: absent
    prot: 443
"""


def test_kubectl_strict_validation_names_an_unknown_apiservice_field(api):
    refused = kubectl(api, "apply", "--validate=strict", "-f", "-", input=APISERVICE)
    assert refused.returncode == 1
    assert refused.stderr == (
        'Error from server (BadRequest): error when creating "STDIN": APIService in version '
        '"v1" cannot be handled as a APIService: strict decoding error: unknown field '
        '"spec.service.prot"\n'), refused.stderr
    path = "/apis/apiregistration.k8s.io/v1/apiservices/v1.fieldvalidation.example.com"
    assert get(api, path).status_code == 404
    warned = kubectl(api, "apply", "--validate=warn", "-f", "-", input=APISERVICE)
    try:
        assert warned.returncode == 0, warned.stderr
        assert warned.stderr == 'Warning: unknown field "spec.service.prot"\n'
        assert get(api, path).json()["spec"]["service"] == {"namespace": "default",
                                                            "name": "absent", "port": 443}
    finally:
        api.request("DELETE", path, **ADMIN)
