"""CustomResourceDefinitions end to end: kubectl and the Python client on a 2-worker server.

The lifecycle (create, establish, discovery, OpenAPI, delete with cleanup), custom
resources through every verb, the schema (validation, defaulting, pruning, CEL with
optionalOldSelf, ratcheting), the status and scale subresources, printer columns and
selectable fields.
"""

import datetime
import json
import time

import pytest
import yaml

from kapiserver.testing import KapiserverProcess, assert_status
from tests.support.reference import transcript

ADMIN = dict(user="admin", groups=["system:masters"])
#: The server tests run on each storage backend (tests/conftest.py).
STORAGE_BACKENDS = ("sqlite", "etcd3")
NS = "crs"
GROUP = "example.com"

WIDGETS = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": f"widgets.{GROUP}"},
    "spec": {
        "group": GROUP, "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                  "shortNames": ["wd"], "categories": ["all"]},
        "versions": [{
            "name": "v1", "served": True, "storage": True,
            "subresources": {"status": {}, "scale": {
                "specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas",
                "labelSelectorPath": ".status.selector"}},
            "additionalPrinterColumns": [
                {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                {"name": "Color", "type": "string", "jsonPath": ".spec.color"},
                {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas",
                 "priority": 1},
                {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}],
            "selectableFields": [{"jsonPath": ".spec.color"}],
            "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {
                    "spec": {
                        "type": "object", "required": ["size"],
                        "x-kubernetes-validations": [
                            {"rule": "self.size <= self.maxSize",
                             "message": "size must not exceed maxSize"},
                            {"rule": "self.size >= oldSelf.size", "message": "size may not shrink",
                             "reason": "FieldValueForbidden"}],
                        "properties": {
                            "size": {"type": "integer", "minimum": 1,
                                     "description": "How big the widget is."},
                            "maxSize": {"type": "integer", "default": 10},
                            "color": {"type": "string", "enum": ["red", "green", "blue"],
                                      "default": "red"},
                            "replicas": {"type": "integer", "default": 1},
                            "tags": {"type": "array", "items": {"type": "string"},
                                     "x-kubernetes-list-type": "set"}}},
                    "status": {"type": "object", "properties": {
                        "replicas": {"type": "integer"}, "selector": {"type": "string"},
                        "phase": {"type": "string"}}}}}}}],
    }}


@pytest.fixture(scope="module")
def api(tmp_path_factory, kapiserver_storage):
    server = KapiserverProcess(str(tmp_path_factory.mktemp("crds")), workers=2,
                               config=kapiserver_storage.config()).start()
    try:
        server.kubectl("create", "namespace", NS, check=True)
        created = server.request("POST",
                                 "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                                 json=WIDGETS, **ADMIN)
        assert created.status_code == 201, created.text
        server.wait_established(f"widgets.{GROUP}")
        yield server
    finally:
        server.stop()


def widgets_path(name: str = "", namespace: str = NS) -> str:
    return f"/apis/{GROUP}/v1/namespaces/{namespace}/widgets" + (f"/{name}" if name else "")


def widget(name: str, **spec) -> dict:
    return {"apiVersion": f"{GROUP}/v1", "kind": "Widget", "metadata": {"name": name},
            "spec": spec}


def create(api, name: str, **spec):
    response = api.request("POST", widgets_path(), json=widget(name, **spec), **ADMIN)
    assert response.status_code == 201, response.text
    return response.json()


def crd_manifest(plural: str, kind: str, group: str = GROUP, **version) -> dict:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"plural": plural, "kind": kind},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": {
                                       "type": "object",
                                       "x-kubernetes-preserve-unknown-fields": True}},
                                   **version}]}}


# -- the CRD lifecycle ---------------------------------------------------------------------------


def test_create_answers_the_defaulted_crd_as_upstream(api):
    captured = transcript("crd-create.json")
    body = captured["request"]["body"]
    response = api.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                           json=body, **ADMIN)
    assert response.status_code == 201, response.text
    got, want = response.json(), captured["response"]["body"]
    assert got["spec"] == want["spec"]
    assert got["status"] == want["status"]
    assert got["metadata"]["generation"] == 1
    assert list(got) == list(want)
    api.wait_established("gadgets.capture.example.com")
    established = api.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                          "gadgets.capture.example.com", **ADMIN).json()
    want = transcript("crd-established.json")["response"]["body"]
    for entry in want["status"]["conditions"]:
        entry.pop("lastTransitionTime")
    conditions = [{k: v for k, v in c.items() if k != "lastTransitionTime"}
                  for c in established["status"]["conditions"]]
    assert conditions == want["status"]["conditions"]
    assert established["status"]["acceptedNames"] == want["status"]["acceptedNames"]
    status_entry = [m for m in established["metadata"]["managedFields"]
                    if m.get("subresource") == "status"]
    assert status_entry and status_entry[0]["operation"] == "Update"
    discovery = api.get("/apis/capture.example.com/v1", **ADMIN).json()
    assert discovery == transcript("crd-discovery-groupversion.json")["response"]["body"]


def test_openapi_v3_document_matches_upstream(api):
    """The CRD builder's document: JSON and YAML only, no strategic merge patch (which is
    how kubectl's apply knows to send a merge patch), no watch paths, its own info."""
    captured = transcript("crd-create.json")
    response = api.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                           json=captured["request"]["body"], **ADMIN)
    assert response.status_code in (201, 409), response.text
    api.wait_established("gadgets.capture.example.com")
    want = transcript("crd-openapi-v3.json")["response"]["body"]
    deadline = time.monotonic() + 10
    while True:
        response = api.get("/openapi/v3/apis/capture.example.com/v1", **ADMIN)
        if response.status_code == 200 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert response.json() == want
    index = api.get("/openapi/v3", **ADMIN).json()["paths"]
    assert "apis/capture.example.com/v1" in index
    assert "apis/capture.example.com" not in index


def test_server_side_apply_of_a_crd_keeps_its_empty_subresources(api):
    """``subresources: {status: {}}`` is a pointer to an empty struct: kept, as Go keeps it,
    so the CRD gets its status subresource, and applying it again conflicts with nobody."""
    manifest = json.dumps(crd_manifest("sprockets", "Sprocket", subresources={"status": {}}))
    for args in (["--server-side"], [], ["--server-side"], ["--server-side",
                                                            "--field-manager=other"]):
        applied = api.kubectl("apply", *args, "-f", "-", input=manifest)
        assert applied.returncode == 0, (args, applied.stderr)
    crd = api.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/sprockets.{GROUP}",
                  **ADMIN).json()
    assert crd["spec"]["versions"][0]["subresources"] == {"status": {}}
    api.wait_established(f"sprockets.{GROUP}")
    resources = api.get(f"/apis/{GROUP}/v1", **ADMIN).json()["resources"]
    assert "sprockets/status" in [r["name"] for r in resources]


SHAPES_SCHEMA = {"type": "object", "properties": {"spec": {
    "type": "object", "required": ["note"], "properties": {
        "note": {"type": "string", "nullable": True},
        "port": {"x-kubernetes-int-or-string": True,
                 "anyOf": [{"type": "integer"}, {"type": "string"}]},
        "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                     "x-kubernetes-preserve-unknown-fields": True},
        "pod": {"type": "object", "x-kubernetes-embedded-resource": True, "properties": {
            "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}}}


def test_openapi_schemas_of_embedded_resources_and_for_v2(api):
    """Embedded resources get TypeMeta and ObjectMeta (v3 and v2); v2 gets the schema as
    upstream's ToStructuralOpenAPIV2 leaves it, and a root keeping unknown fields is a
    bare object there."""
    for crd in (crd_manifest("shapes", "Shape", schema={"openAPIV3Schema": SHAPES_SCHEMA}),
                crd_manifest("blobs", "Blob")):
        created = api.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                              json=crd, **ADMIN)
        assert created.status_code == 201, created.text
        api.wait_established(crd["metadata"]["name"])
    meta = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    embedded = {"apiVersion": {"description": "apiVersion defines the versioned schema of this "
                                              "representation of an object. More info: https://"
                                              "git.k8s.io/community/contributors/devel/"
                                              "sig-architecture/api-conventions.md#resources",
                               "type": "string"},
                "kind": {"description": "kind is a string value representing the type of this "
                                        "object. In CamelCase. More info: https://git.k8s.io/"
                                        "community/contributors/devel/sig-architecture/"
                                        "api-conventions.md#types-kinds", "type": "string"}}
    deadline = time.monotonic() + 10
    while True:
        v3 = api.get(f"/openapi/v3/apis/{GROUP}/v1", **ADMIN).json()["components"]["schemas"]
        v2 = api.get("/openapi/v2", **ADMIN,
                     headers={"Accept": "application/json"}).json()["definitions"]
        if "com.example.v1.Blob" in v2 and "com.example.v1.Shape" in v3 \
                or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    spec3 = v3["com.example.v1.Shape"]["properties"]["spec"]["properties"]
    assert spec3["note"] == {"type": "string", "nullable": True}
    assert {k: spec3["template"]["properties"][k] for k in ("apiVersion", "kind")} == embedded
    assert spec3["template"]["properties"]["metadata"]["allOf"] == [
        {"$ref": f"#/components/schemas/{meta}"}]
    assert spec3["pod"]["required"] == ["kind", "apiVersion"]
    spec2 = v2["com.example.v1.Shape"]["properties"]["spec"]
    assert "required" not in spec2  # its only entry is nullable
    assert spec2["properties"]["note"] == {}
    assert spec2["properties"]["port"] == {"x-kubernetes-int-or-string": True}
    assert spec2["properties"]["template"] == {
        "type": "object", "x-kubernetes-embedded-resource": True,
        "x-kubernetes-preserve-unknown-fields": True}
    pod = spec2["properties"]["pod"]
    assert pod["required"] == ["kind", "apiVersion"]
    assert pod["properties"]["metadata"]["$ref"] == f"#/definitions/{meta}"
    assert v2["com.example.v1.Blob"] == {
        "type": "object",
        "x-kubernetes-group-version-kind": [{"group": GROUP, "kind": "Blob", "version": "v1"}],
        "x-kubernetes-selectable-fields": []}


def _seconds(timestamp: str) -> float:
    return datetime.datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ").timestamp()


def test_apply_then_wait_established_within_a_second(api):
    manifest = crd_manifest("gizmos", "Gizmo", shortNames=None)
    manifest["spec"]["names"]["shortNames"] = ["gz"]
    out = api.kubectl("apply", "-f", "-", input=yaml.safe_dump(manifest), check=True)
    assert out.stdout == f"customresourcedefinition.apiextensions.k8s.io/gizmos.{GROUP} created\n"
    waited = api.kubectl("wait", "--for=condition=established", f"crd/gizmos.{GROUP}",
                         "--timeout=5s")
    if waited.returncode and "accessor error: <nil>" in waited.stderr:
        # kubectl wait fails outright while a new CRD's status.conditions is still null,
        # as it is until the naming controller's first write (kube-apiserver's too): a
        # user runs it again.
        waited = api.kubectl("wait", "--for=condition=established", f"crd/gizmos.{GROUP}",
                             "--timeout=5s")
    assert waited.returncode == 0, waited.stderr
    # Established within a second of its creation, by the server's own clock (second
    # resolution): the kubectl processes' start-up on a busy machine is not the server's.
    crd = json.loads(api.kubectl("get", f"crd/gizmos.{GROUP}", "-o", "json",
                                 check=True).stdout)
    established, = [c for c in crd["status"]["conditions"] if c["type"] == "Established"]
    assert established["status"] == "True"
    assert _seconds(established["lastTransitionTime"]) - \
        _seconds(crd["metadata"]["creationTimestamp"]) <= 1
    # Every worker serves it at once: ask several times (connections land on both workers).
    for index in range(6):
        out = api.kubectl("create", "-n", NS, "-f", "-", input=yaml.safe_dump({
            "apiVersion": f"{GROUP}/v1", "kind": "Gizmo", "metadata": {"name": f"g{index}"},
            "anything": {"goes": index}}), check=True)
        assert out.stdout == f"gizmo.{GROUP}/g{index} created\n"
    out = api.kubectl("get", "gz", "-n", NS, "-o", "name", check=True)
    assert out.stdout.split() == [f"gizmo.{GROUP}/g{i}" for i in range(6)]


def test_discovery_lists_established_crds_with_names(api):
    resources = api.get(f"/apis/{GROUP}/v1", **ADMIN).json()["resources"]
    by_name = {r["name"]: r for r in resources}
    assert by_name["widgets"]["shortNames"] == ["wd"]
    assert by_name["widgets"]["categories"] == ["all"]
    assert by_name["widgets"]["verbs"] == ["delete", "deletecollection", "get", "list", "patch",
                                           "create", "update", "watch"]
    assert by_name["widgets/status"]["verbs"] == ["get", "patch", "update"]
    assert by_name["widgets/scale"]["group"] == "autoscaling"
    groups = api.get("/apis", **ADMIN).json()["groups"]
    assert GROUP in [g["name"] for g in groups]
    aggregated = api.get("/apis", headers={
        "Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"},
        **ADMIN).json()
    names = [item["metadata"]["name"] for item in aggregated["items"]]
    assert GROUP in names
    out = api.kubectl("api-resources", "--api-group", GROUP, check=True).stdout
    assert "widgets" in out and "wd" in out
    # The "all" category: kubectl get all lists widgets too.
    create(api, "in-all", size=1)
    out = api.kubectl("get", "all", "-n", NS, check=True).stdout
    assert f"widget.{GROUP}/in-all" in out
    api.request("DELETE", widgets_path("in-all"), **ADMIN)


def test_explain_reads_the_crd_schema(api):
    out = api.kubectl("explain", "widget.spec.size", check=True).stdout
    assert "KIND:       Widget" in out and "How big the widget is." in out
    assert "FIELD: size <integer>" in out


def test_explain_right_after_each_new_crd(api):
    # kubectl caches /openapi/v3 and revalidates it by date: each CRD, made within a
    # second of the last explain, must still reach the next one.
    for index in range(6):
        manifest = crd_manifest(f"levers{index}", f"Lever{index}")
        manifest["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = {
            "type": "object", "properties": {"spec": {"type": "object", "properties": {
                "arm": {"type": "integer", "description": f"Arm {index}."}}}}}
        api.kubectl("apply", "-f", "-", input=yaml.safe_dump(manifest), check=True)
        api.wait_established(f"levers{index}.{GROUP}")
        out = api.kubectl("explain", f"lever{index}.spec.arm")
        assert out.returncode == 0, out.stderr
        assert f"Arm {index}." in out.stdout


def test_crud_with_the_python_client(api):
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    objects = client.CustomObjectsApi(api.python_client())
    created = objects.create_namespaced_custom_object(GROUP, "v1", NS, "widgets",
                                                      widget("py", size=2))
    assert created["metadata"]["generation"] == 1
    # Defaults applied on create.
    assert created["spec"] == {"color": "red", "maxSize": 10, "replicas": 1, "size": 2}
    got = objects.get_namespaced_custom_object(GROUP, "v1", NS, "widgets", "py")
    assert got == created
    listed = objects.list_namespaced_custom_object(GROUP, "v1", NS, "widgets")
    assert "py" in [item["metadata"]["name"] for item in listed["items"]]
    assert listed["kind"] == "WidgetList" and listed["items"][0]["kind"] == "Widget"
    patched = objects.patch_namespaced_custom_object(GROUP, "v1", NS, "widgets", "py",
                                                     {"spec": {"size": 3}})
    assert patched["spec"]["size"] == 3 and patched["metadata"]["generation"] == 2
    stale = dict(got)
    stale["spec"] = dict(got["spec"], size=4)
    with pytest.raises(ApiException) as err:
        objects.replace_namespaced_custom_object(GROUP, "v1", NS, "widgets", "py", stale)
    assert err.value.status == 409
    assert json.loads(err.value.body)["message"] == (
        f'Operation cannot be fulfilled on widgets.{GROUP} "py": the object has been modified; '
        "please apply your changes to the latest version and try again")
    objects.delete_namespaced_custom_object(GROUP, "v1", NS, "widgets", "py")
    with pytest.raises(ApiException) as err:
        objects.get_namespaced_custom_object(GROUP, "v1", NS, "widgets", "py")
    assert err.value.status == 404
    assert json.loads(err.value.body)["message"] == f'widgets.{GROUP} "py" not found'


def test_json_is_written_with_sorted_keys(api):
    response = api.request("POST", widgets_path(), json=widget("sorted", size=1), **ADMIN)
    body = response.json()
    assert list(body) == sorted(body)
    assert list(body["metadata"]) == sorted(body["metadata"])
    text = api.get(widgets_path(), **ADMIN).text
    listed = json.loads(text)
    assert list(listed) == ["apiVersion", "items", "kind", "metadata"]
    assert listed["metadata"]["continue"] == ""


def test_kubectl_everyday_commands(api):
    manifest = yaml.safe_dump(widget("k1", size=3, color="green"))
    assert api.kubectl("apply", "-n", NS, "-f", "-", input=manifest, check=True).stdout == \
        f"widget.{GROUP}/k1 created\n"
    out = api.kubectl("get", "widgets", "k1", "-n", NS, check=True).stdout.splitlines()
    assert out[0].split() == ["NAME", "SIZE", "COLOR", "AGE"]
    assert out[1].split()[:3] == ["k1", "3", "green"]
    wide = api.kubectl("get", "wd", "k1", "-n", NS, "-o", "wide", check=True).stdout.splitlines()
    assert wide[0].split() == ["NAME", "SIZE", "COLOR", "REPLICAS", "AGE"]
    api.kubectl("label", "-n", NS, "widget/k1", "tier=gold", check=True)
    api.kubectl("annotate", "-n", NS, "widget/k1", "note=hi", check=True)
    got = json.loads(api.kubectl("get", "widget", "k1", "-n", NS, "-o", "json",
                                 check=True).stdout)
    assert got["metadata"]["labels"] == {"tier": "gold"}
    assert got["metadata"]["annotations"]["note"] == "hi"
    described = api.kubectl("describe", "widget", "k1", "-n", NS, check=True).stdout
    assert "Size:" in described and "Kind:         Widget" in described
    out = api.kubectl("apply", "--server-side", "-n", NS, "-f", "-",
                      input=yaml.safe_dump(widget("k1", size=4, color="green")), check=True)
    assert out.stdout == f"widget.{GROUP}/k1 serverside-applied\n"
    assert api.kubectl("delete", "-n", NS, "widget", "k1", check=True).stdout == \
        f'widget.{GROUP} "k1" deleted\n'


def test_table_matches_upstream_columns(api):
    create(api, "tbl", size=3, color="red")
    accept = "application/json;as=Table;v=v1;g=meta.k8s.io"
    table = api.get(widgets_path() + "?fieldSelector=metadata.name%3Dtbl",
                    headers={"Accept": accept}, **ADMIN).json()
    names = [c["name"] for c in table["columnDefinitions"]]
    assert names == ["Name", "Size", "Color", "Replicas", "Age"]
    size = table["columnDefinitions"][1]
    assert size == {"name": "Size", "type": "integer", "format": "",
                    "description": "Custom resource definition column (in JSONPath format): "
                                   ".spec.size", "priority": 0}
    assert table["columnDefinitions"][3]["priority"] == 1
    assert table["rows"][0]["cells"][:4] == ["tbl", 3, "red", 1]
    assert table["rows"][0]["object"]["kind"] == "PartialObjectMetadata"


def test_strategic_merge_patch_and_protobuf_are_refused_as_upstream(api):
    create(api, "sm", size=1)
    response = api.request("PATCH", widgets_path("sm"), data=b'{"spec":{"size":2}}',
                           headers={"Content-Type": "application/strategic-merge-patch+json"},
                           **ADMIN)
    want = transcript("cr-strategic-patch-unsupported.json")["response"]
    assert response.status_code == 415
    assert response.json() == want["body"]
    response = api.get(widgets_path("sm"), headers={
        "Accept": "application/vnd.kubernetes.protobuf"}, **ADMIN)
    assert response.status_code == 406
    assert response.headers["Content-Type"] == "application/vnd.kubernetes.protobuf"
    assert b"only the following media types are accepted" in response.content


def test_status_subresource_writes_only_status(api):
    created = create(api, "st", size=2)
    obj = dict(created, status={"phase": "Running", "replicas": 1})
    response = api.request("PUT", widgets_path("st") + "/status", json=obj, **ADMIN)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == {"phase": "Running", "replicas": 1}
    assert body["metadata"]["generation"] == 1
    # The main resource ignores status and bumps generation on spec changes only.
    body["spec"]["size"] = 5
    body["status"] = {"phase": "Lost"}
    updated = api.request("PUT", widgets_path("st"), json=body, **ADMIN).json()
    assert updated["status"] == {"phase": "Running", "replicas": 1}
    assert updated["metadata"]["generation"] == 2
    # A status write cannot change the spec.
    updated["spec"]["size"] = 9
    updated["status"]["phase"] = "Done"
    after = api.request("PUT", widgets_path("st") + "/status", json=updated, **ADMIN).json()
    assert after["spec"]["size"] == 5 and after["status"]["phase"] == "Done"


def test_scale_subresource_and_kubectl_scale(api):
    create(api, "sc", size=1, replicas=2)
    scale = api.get(widgets_path("sc") + "/scale", **ADMIN).json()
    assert scale["kind"] == "Scale" and scale["apiVersion"] == "autoscaling/v1"
    assert scale["spec"] == {"replicas": 2} and scale["status"] == {"replicas": 0}
    assert api.kubectl("scale", "-n", NS, "widget/sc", "--replicas=5", check=True).stdout == \
        f"widget.{GROUP}/sc scaled\n"
    assert api.get(widgets_path("sc"), **ADMIN).json()["spec"]["replicas"] == 5
    response = api.request("PATCH", widgets_path("sc") + "/scale",
                           data=b'{"spec":{"replicas":-1}}',
                           headers={"Content-Type": "application/merge-patch+json"}, **ADMIN)
    assert_status(response, 422, "Invalid")


def test_selectable_fields_drive_field_selectors(api):
    create(api, "blue1", size=1, color="blue")
    listed = api.get(widgets_path() + "?fieldSelector=spec.color%3Dblue", **ADMIN).json()
    assert [i["metadata"]["name"] for i in listed["items"]] == ["blue1"]
    response = api.get(widgets_path() + "?fieldSelector=spec.size%3D1", **ADMIN)
    assert_status(response, 400, "BadRequest")


def test_schema_violations_are_reported_as_upstream(api):
    captured = transcript("cr-invalid.json")
    body = dict(captured["request"]["body"])
    body["apiVersion"], body["kind"] = f"{GROUP}/v1", "Widget"
    response = api.request("POST", widgets_path(), json=body, **ADMIN)
    assert response.status_code == 422, response.text
    want = captured["response"]["body"]
    got = response.json()
    # The captured CRD has no CEL rules; widgets have, and upstream's hasBlockingErr adds one
    # more cause when type errors keep the rules from running.
    skipped = ('<nil>: Invalid value: "null": some validation rules were not checked because '
               "the object was invalid; correct the existing errors to complete validation")
    assert got["details"]["causes"] == want["details"]["causes"] + [{
        "reason": "FieldValueInvalid", "message": skipped.removeprefix("<nil>: "),
        "field": "<nil>"}]
    assert got["message"] == want["message"].replace(
        "Gadget.capture.example.com", f"Widget.{GROUP}")[:-1] + f", {skipped}]"


def test_unknown_fields_are_pruned_or_refused(api):
    body = widget("pr", size=1, bogus=True)
    body["metadata"]["junk"] = 1
    response = api.request("POST", widgets_path(), json=body, **ADMIN)
    assert response.status_code == 201
    assert "bogus" not in response.json()["spec"]
    warnings = response.headers.get("Warning", "")
    assert 'unknown field \\"spec.bogus\\"' in warnings
    assert 'unknown field \\"metadata.junk\\"' in warnings
    response = api.request("POST", widgets_path() + "?fieldValidation=Strict",
                           json=widget("pr2", size=1, bogus=True), **ADMIN)
    assert_status(response, 400, "BadRequest",
                  'Widget in version "v1" cannot be handled as a Widget: strict decoding '
                  'error: unknown field "spec.bogus"')


def test_cel_rules_and_transition_rules(api):
    response = api.request("POST", widgets_path(), json=widget("cel", size=20), **ADMIN)
    body = assert_status(response, 422, "Invalid")
    assert body["details"]["causes"] == [{"reason": "FieldValueInvalid",
                                          "message": 'Invalid value: "object": size must not '
                                                     "exceed maxSize",
                                          "field": "spec"}]
    # A required field missing: the rules are not run (upstream's hasBlockingErr).
    response = api.request("POST", widgets_path(), json=widget("cel-none", color="red"),
                           **ADMIN)
    body = assert_status(response, 422, "Invalid")
    assert body["details"]["causes"] == [
        {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.size"},
        {"reason": "FieldValueInvalid",
         "message": "Invalid value: \"null\": some validation rules were not checked because "
                    "the object was invalid; correct the existing errors to complete "
                    "validation", "field": "<nil>"}]
    create(api, "cel", size=5)
    response = api.request("PATCH", widgets_path("cel"), data=b'{"spec":{"size":4}}',
                           headers={"Content-Type": "application/merge-patch+json"}, **ADMIN)
    body = assert_status(response, 422, "Invalid")
    assert body["details"]["causes"][0]["reason"] == "FieldValueForbidden"
    assert body["details"]["causes"][0]["field"] == "spec"
    assert "size may not shrink" in body["details"]["causes"][0]["message"]


def test_server_side_apply_refuses_fields_the_schema_does_not_declare(api):
    """An applied config must fit the CRD's schema whatever fieldValidation says, as
    upstream's typed conversion: an unknown field is 'not declared in schema'."""
    def apply(config: str, validation: str = "Strict"):
        return api.request("PATCH", widgets_path("w-ssa") + "?fieldManager=t&fieldValidation="
                           + validation, data=config.encode(),
                           headers={"Content-Type": "application/apply-patch+yaml"}, **ADMIN)

    head = f"apiVersion: {GROUP}/v1\nkind: Widget\nmetadata:\n  name: w-ssa\n"
    # the config's own namespace (none) names it, as upstream's objectGVKNN
    where = f"failed to create typed patch object (/w-ssa; {GROUP}/v1, Kind=Widget): "
    for validation in ("Strict", "Warn", "Ignore"):
        for body, error in (
                ("unknownField: x\nspec:\n  size: 1\n", ".unknownField: field not declared "
                                                         "in schema"),
                ("spec:\n  size: 1\n  junk: 1\n", ".spec.junk: field not declared in schema"),
                ("spec:\n  size: one\n", ".spec.size: expected numeric (int or float), got "
                                          "string"),
                ("spec:\n  size: 1\nstatus:\n  phase: {a: 1}\n",
                 ".status.phase: expected string, got &value.valueUnstructured{Value:"
                 "map[string]interface {}{\"a\":1}}")):
            response = apply(head + body, validation)
            # upstream's words; not its plain error's 500 (kubernetes/kubernetes#122480)
            assert (response.status_code, response.json()) == (400, {
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": where + error, "reason": "BadRequest", "code": 400})
    assert api.get(widgets_path("w-ssa"), **ADMIN).status_code == 404
    created = apply(head + "spec:\n  size: 2\n  tags: [a]\n")
    assert created.status_code == 201, created.text
    assert created.json()["spec"] == {"size": 2, "tags": ["a"], "maxSize": 10, "color": "red",
                                      "replicas": 1}


# -- validation ratcheting ----------------------------------------------------------------------

RATCHETS = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": f"ratchets.{GROUP}"},
    "spec": {"group": GROUP, "scope": "Namespaced",
             "names": {"plural": "ratchets", "kind": "Ratchet"},
             "versions": [{"name": "v1", "served": True, "storage": True,
                           "subresources": {"status": {}},
                           "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                               "spec": {"type": "object", "properties": {
                                   "name": {"type": "string"}, "size": {"type": "integer"},
                                   "note": {"type": "string"}}},
                               "status": {"type": "object", "properties": {
                                   "phase": {"type": "string"}}}}}}}]}}
TIGHTENED = [
    {"op": "add", "path": "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/"
                          "name/maxLength", "value": 5},
    {"op": "add", "path": "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/"
                          "size/x-kubernetes-validations",
     "value": [{"rule": "self <= 10", "message": "size must be at most 10"}]}]
MERGE_PATCH = {"Content-Type": "application/merge-patch+json"}


def ratchets_path(name: str = "") -> str:
    return f"/apis/{GROUP}/v1/namespaces/{NS}/ratchets" + (f"/{name}" if name else "")


def ratchet(object_name: str, **spec) -> dict:
    return {"apiVersion": f"{GROUP}/v1", "kind": "Ratchet", "metadata": {"name": object_name},
            "spec": spec}


def wait_refused(api, body: dict, times: int = 8, timeout: float = 20) -> None:
    """Wait until ``times`` dry-run creates of ``body`` in a row are refused: both workers
    serve the CRD's new schema."""
    deadline, refused = time.monotonic() + timeout, 0
    while refused < times:
        assert time.monotonic() < deadline, "the tightened schema was not served in time"
        response = api.request("POST", ratchets_path() + "?dryRun=All", json=body, **ADMIN)
        refused = refused + 1 if response.status_code == 422 else 0
        if not refused:
            time.sleep(0.05)


def test_updates_after_the_schema_was_tightened_ratchet_as_upstream(api):
    response = api.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                           json=RATCHETS, **ADMIN)
    assert response.status_code == 201, response.text
    api.wait_established(f"ratchets.{GROUP}")
    for name in ("r1", "r2"):
        response = api.request("POST", ratchets_path(),
                               json=ratchet(name, name="much-too-long", size=20, note="a"),
                               **ADMIN)
        assert response.status_code == 201, response.text
    api.kubectl("patch", "crd", f"ratchets.{GROUP}", "--type=json", "-p",
                json.dumps(TIGHTENED), check=True)
    wait_refused(api, ratchet("new", name="much-too-long", size=1))
    wait_refused(api, ratchet("new", name="ok", size=20))
    warned = 'Warning: spec.size: Invalid value: "integer": size must be at most 10\n'

    # What the updates leave alone is forgiven; the CEL rule that fails where nothing
    # changed is a warning, as upstream's.
    labelled = api.kubectl("label", "-n", NS, "ratchet", "r1", "team=a")
    assert (labelled.returncode, labelled.stdout) == (0, f"ratchet.{GROUP}/r1 labeled\n")
    assert labelled.stderr == warned
    status = api.kubectl("patch", "-n", NS, "ratchet", "r1", "--subresource=status",
                         "--type=merge", "-p", '{"status":{"phase":"Ready"}}')
    assert (status.returncode, status.stdout, status.stderr) == (
        0, f"ratchet.{GROUP}/r1 patched\n", warned)
    noted = api.kubectl("patch", "-n", NS, "ratchet", "r1", "--type=merge", "-p",
                        '{"spec":{"note":"b"}}')
    assert (noted.returncode, noted.stdout, noted.stderr) == (
        0, f"ratchet.{GROUP}/r1 patched\n", warned)
    current = api.get(ratchets_path("r1"), **ADMIN).json()
    assert current["metadata"]["labels"] == {"team": "a"}
    assert current["spec"] == {"name": "much-too-long", "size": 20, "note": "b"}
    assert current["status"] == {"phase": "Ready"}
    assert current["metadata"]["generation"] == 2

    # Changing the offending field to another invalid value is refused: upstream's 422.
    response = api.request("PATCH", ratchets_path("r1"), data=b'{"spec":{"size":30}}',
                           headers=MERGE_PATCH, **ADMIN)
    assert_status(response, 422, "Invalid",
                  f'Ratchet.{GROUP} "r1" is invalid: spec.size: Invalid value: "integer": '
                  "size must be at most 10",
                  {"name": "r1", "group": GROUP, "kind": "Ratchet", "causes": [
                      {"reason": "FieldValueInvalid",
                       "message": 'Invalid value: "integer": size must be at most 10',
                       "field": "spec.size"}]})
    skipped = ("some validation rules were not checked because the object was invalid; "
               "correct the existing errors to complete validation")
    response = api.request("PATCH", ratchets_path("r1"),
                           data=b'{"spec":{"name":"still-too-long"}}', headers=MERGE_PATCH,
                           **ADMIN)
    assert_status(response, 422, "Invalid",
                  f'Ratchet.{GROUP} "r1" is invalid: [spec.name: Too long: may not be more '
                  f'than 5 bytes, <nil>: Invalid value: "null": {skipped}]',
                  {"name": "r1", "group": GROUP, "kind": "Ratchet", "causes": [
                      {"reason": "FieldValueTooLong",
                       "message": "Too long: may not be more than 5 bytes",
                       "field": "spec.name"},
                      {"reason": "FieldValueInvalid",
                       "message": f'Invalid value: "null": {skipped}', "field": "<nil>"}]})
    refused = api.kubectl("patch", "-n", NS, "ratchet", "r2", "--type=merge", "-p",
                          '{"spec":{"name":"still-too-long","note":"c"}}')
    assert refused.returncode == 1
    assert refused.stderr.startswith(f'The Ratchet "r2" is invalid: \n* spec.name: Too long: '
                                     "may not be more than 5 bytes\n")
    # A status write can make the status invalid in a new way only.
    response = api.request("PATCH", ratchets_path("r2") + "/status",
                           data=b'{"status":{"phase":7}}', headers=MERGE_PATCH, **ADMIN)
    assert_status(response, 422, "Invalid")
    assert response.json()["details"]["causes"][0] == {
        "reason": "FieldValueTypeInvalid",
        "message": 'Invalid value: "integer": phase in body must be of type string: '
                   '"integer"', "field": "status.phase"}


# -- optionalOldSelf ----------------------------------------------------------------------------

GAUGES = crd_manifest("gauges", "Gauge", schema={"openAPIV3Schema": {
    "type": "object", "properties": {"spec": {
        "type": "object", "properties": {"size": {"type": "integer"}},
        "x-kubernetes-validations": [
            {"rule": "!oldSelf.hasValue() || self.size >= oldSelf.value().size",
             "message": "size may not shrink", "optionalOldSelf": True},
            {"rule": "oldSelf.hasValue() || self.size <= 10",
             "message": "size starts at most 10", "optionalOldSelf": True}]}}}})


def gauges_path(name: str = "") -> str:
    return f"/apis/{GROUP}/v1/namespaces/{NS}/gauges" + (f"/{name}" if name else "")


def gauge(name: str, size: int) -> dict:
    return {"apiVersion": f"{GROUP}/v1", "kind": "Gauge", "metadata": {"name": name},
            "spec": {"size": size}}


def test_optional_old_self_rules_on_create_and_update(api):
    applied = api.kubectl("apply", "-f", "-", input=json.dumps(GAUGES))
    assert (applied.returncode, applied.stdout) == (
        0, f"customresourcedefinition.apiextensions.k8s.io/gauges.{GROUP} created\n"), applied
    api.wait_established(f"gauges.{GROUP}")
    stored = api.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gauges.{GROUP}",
                     **ADMIN).json()
    rules = stored["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "x-kubernetes-validations"]
    assert rules == GAUGES["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"][
        "spec"]["x-kubernetes-validations"]

    # On create oldSelf is optional.none(): the rules run.
    response = api.request("POST", gauges_path(), json=gauge("g1", 20), **ADMIN)
    assert_status(response, 422, "Invalid",
                  f'Gauge.{GROUP} "g1" is invalid: spec: Invalid value: "object": size '
                  "starts at most 10",
                  {"name": "g1", "group": GROUP, "kind": "Gauge", "causes": [
                      {"reason": "FieldValueInvalid",
                       "message": 'Invalid value: "object": size starts at most 10',
                       "field": "spec"}]})
    created = api.kubectl("create", "-n", NS, "-f", "-", input=json.dumps(gauge("g1", 5)))
    assert (created.returncode, created.stdout) == (0, f"gauge.{GROUP}/g1 created\n"), created

    # On update oldSelf is optional.of(the old value).
    response = api.request("PATCH", gauges_path("g1"), data=b'{"spec":{"size":3}}',
                           headers=MERGE_PATCH, **ADMIN)
    assert_status(response, 422, "Invalid",
                  f'Gauge.{GROUP} "g1" is invalid: spec: Invalid value: "object": size may '
                  "not shrink",
                  {"name": "g1", "group": GROUP, "kind": "Gauge", "causes": [
                      {"reason": "FieldValueInvalid",
                       "message": 'Invalid value: "object": size may not shrink',
                       "field": "spec"}]})
    refused = api.kubectl("patch", "-n", NS, "gauge", "g1", "--type=merge", "-p",
                          '{"spec":{"size":4}}')
    assert refused.returncode == 1
    assert refused.stderr == (f'The Gauge "g1" is invalid: spec: Invalid value: "object": '
                              "size may not shrink\n")
    grown = api.kubectl("patch", "-n", NS, "gauge", "g1", "--type=merge", "-p",
                        '{"spec":{"size":20}}')
    assert (grown.returncode, grown.stdout) == (0, f"gauge.{GROUP}/g1 patched\n"), grown
    current = api.get(gauges_path("g1"), **ADMIN).json()
    response = api.request("PUT", gauges_path("g1"), json={**current, "spec": {"size": 19}},
                           **ADMIN)
    assert_status(response, 422, "Invalid")
    assert response.json()["details"]["causes"][0]["message"] == (
        'Invalid value: "object": size may not shrink')


# -- set and map lists in rules -------------------------------------------------------------------

ROUTES = crd_manifest("routes", "Route", schema={"openAPIV3Schema": {
    "type": "object", "properties": {"spec": {"type": "object", "properties": {
        "hosts": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set",
                  "x-kubernetes-validations": [
                      {"rule": "self == oldSelf", "message": "hosts are immutable"}]},
        "ports": {"type": "array", "x-kubernetes-list-type": "map",
                  "x-kubernetes-list-map-keys": ["name"],
                  "x-kubernetes-validations": [
                      {"rule": "self == oldSelf", "message": "ports are immutable"}],
                  "items": {"type": "object", "required": ["name"], "properties": {
                      "name": {"type": "string"}, "port": {"type": "integer"}}}}}}}}})
ROUTE = """apiVersion: example.com/v1
kind: Route
metadata:
  name: r1
  namespace: crs
spec:
  hosts: [{hosts}]
  ports:
{ports}"""


def route(hosts: str, *ports: tuple) -> str:
    return ROUTE.format(hosts=hosts, ports="".join(
        f"  - name: {name}\n    port: {port}\n" for name, port in ports))


def test_immutable_set_and_map_lists_may_be_reordered(api):
    """``self == oldSelf`` on a set or map list ignores order, as upstream's list values."""
    applied = api.kubectl("apply", "-f", "-", input=json.dumps(ROUTES))
    assert applied.returncode == 0, applied.stderr
    api.wait_established(f"routes.{GROUP}")
    created = api.kubectl("apply", "-f", "-",
                          input=route("a.io, b.io", ("http", 80), ("https", 443)))
    assert (created.returncode, created.stdout) == (0, f"route.{GROUP}/r1 created\n"), created
    reordered = api.kubectl("apply", "-f", "-",
                            input=route("b.io, a.io", ("https", 443), ("http", 80)))
    assert (reordered.returncode, reordered.stdout) == (
        0, f"route.{GROUP}/r1 configured\n"), reordered
    stored = api.get(f"/apis/{GROUP}/v1/namespaces/{NS}/routes/r1", **ADMIN).json()
    assert stored["spec"] == {"hosts": ["b.io", "a.io"], "ports": [
        {"name": "https", "port": 443}, {"name": "http", "port": 80}]}

    changed = api.kubectl("apply", "-f", "-",
                          input=route("b.io, c.io", ("https", 443), ("http", 8080)))
    assert changed.returncode == 1
    assert changed.stderr == (
        'The Route "r1" is invalid: \n'
        '* spec.hosts: Invalid value: "array": hosts are immutable\n'
        '* spec.ports: Invalid value: "array": ports are immutable\n')
    response = api.request("PATCH", f"/apis/{GROUP}/v1/namespaces/{NS}/routes/r1",
                           data=b'{"spec":{"ports":[{"name":"http","port":80}]}}',
                           headers=MERGE_PATCH, **ADMIN)
    assert_status(response, 422, "Invalid",
                  f'Route.{GROUP} "r1" is invalid: spec.ports: Invalid value: "array": ports '
                  "are immutable")


def test_watch_sees_changes_while_the_crd_is_updated(api):
    from kubernetes import client, watch

    objects = client.CustomObjectsApi(api.python_client())
    create(api, "w0", size=1)
    rv = api.get(widgets_path(), **ADMIN).json()["metadata"]["resourceVersion"]
    stream = watch.Watch()
    seen = []
    # Change the CRD (a printer column) while a watch is open, then write objects.
    patch = [{"op": "add", "path": "/spec/versions/0/additionalPrinterColumns/-",
              "value": {"name": "Phase", "type": "string", "jsonPath": ".status.phase"}}]
    response = api.request("PATCH", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                           f"widgets.{GROUP}", data=json.dumps(patch),
                           headers={"Content-Type": "application/json-patch+json"}, **ADMIN)
    assert response.status_code == 200, response.text
    create(api, "w1", size=1)
    create(api, "w2", size=1)
    for event in stream.stream(objects.list_namespaced_custom_object, GROUP, "v1", NS,
                               "widgets", resource_version=rv, timeout_seconds=5):
        seen.append((event["type"], event["object"]["metadata"]["name"]))
        if len(seen) == 2:
            stream.stop()
    assert seen == [("ADDED", "w1"), ("ADDED", "w2")]


def test_conflicting_names_are_not_served_twice(api):
    # "wd" is the widgets' short name: a second CRD asking for it is not accepted.
    manifest = crd_manifest("doohickeys", "Doohickey")
    manifest["spec"]["names"]["shortNames"] = ["wd"]
    api.kubectl("apply", "-f", "-", input=yaml.safe_dump(manifest), check=True)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        crd = api.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                      f"doohickeys.{GROUP}", **ADMIN).json()
        names = {c["type"]: c for c in (crd["status"].get("conditions") or [])}
        if "NamesAccepted" in names:
            break
        time.sleep(0.1)
    assert names["NamesAccepted"]["status"] == "False"
    assert names["NamesAccepted"]["reason"] == "ShortNamesConflict"
    assert names["NamesAccepted"]["message"] == '"wd" is already in use'
    assert names["Established"]["status"] == "False"
    resources = api.get(f"/apis/{GROUP}/v1", **ADMIN).json()["resources"]
    assert "doohickeys" not in [r["name"] for r in resources]


def test_namespace_deletion_deletes_custom_resources(api):
    api.kubectl("create", "namespace", "doomed", check=True)
    api.request("POST", widgets_path(namespace="doomed"), json=widget("d1", size=1), **ADMIN)
    api.kubectl("delete", "namespace", "doomed", "--timeout=20s", check=True)
    assert api.get(widgets_path("d1", namespace="doomed"), **ADMIN).status_code == 404


def test_deleting_a_crd_deletes_its_objects_honouring_finalizers(api):
    manifest = crd_manifest("sprockets", "Sprocket")
    api.kubectl("apply", "-f", "-", input=yaml.safe_dump(manifest), check=True)
    api.wait_established(f"sprockets.{GROUP}")
    path = f"/apis/{GROUP}/v1/namespaces/{NS}/sprockets"
    for name, finalizers in (("s1", []), ("s2", ["example.com/hold"])):
        response = api.request("POST", path, json={
            "apiVersion": f"{GROUP}/v1", "kind": "Sprocket",
            "metadata": {"name": name, "finalizers": finalizers}}, **ADMIN)
        assert response.status_code == 201, response.text
    response = api.request("DELETE", f"/apis/apiextensions.k8s.io/v1/"
                           f"customresourcedefinitions/sprockets.{GROUP}", **ADMIN)
    assert response.status_code == 200
    body = response.json()
    assert body["metadata"]["finalizers"] == ["customresourcecleanup.apiextensions.k8s.io"]
    assert body["metadata"]["deletionTimestamp"]
    terminating = [c for c in body["status"]["conditions"] if c["type"] == "Terminating"][0]
    assert terminating["reason"] == "InstanceDeletionPending"
    # While terminating, creates are refused; the held object waits for its finalizer.
    response = api.request("POST", path, json={"apiVersion": f"{GROUP}/v1", "kind": "Sprocket",
                                               "metadata": {"name": "s3"}}, **ADMIN)
    assert_status(response, 405, "MethodNotAllowed",
                  "create not allowed while custom resource definition is terminating")
    deadline = time.monotonic() + 10
    while api.get(f"{path}/s1", **ADMIN).status_code != 404 and time.monotonic() < deadline:
        time.sleep(0.1)
    held = api.get(f"{path}/s2", **ADMIN).json()
    assert held["metadata"]["deletionTimestamp"]
    crd_path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/sprockets.{GROUP}"
    assert api.get(crd_path, **ADMIN).status_code == 200
    api.request("PATCH", f"{path}/s2", data=b'{"metadata":{"finalizers":null}}',
                headers={"Content-Type": "application/merge-patch+json"}, **ADMIN)
    deadline = time.monotonic() + 10
    while api.get(crd_path, **ADMIN).status_code != 404 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert api.get(crd_path, **ADMIN).status_code == 404
    assert api.get(f"/apis/{GROUP}/v1/namespaces/{NS}/sprockets", **ADMIN).status_code == 404
    resources = api.get(f"/apis/{GROUP}/v1", **ADMIN).json()["resources"]
    assert "sprockets" not in [r["name"] for r in resources]


def test_watch_from_before_the_crd_existed_is_expired(api):
    import json as _json

    before = api.get("/api/v1/namespaces", **ADMIN).json()["metadata"]["resourceVersion"]
    crd = crd_manifest("ticks", "Tick")
    assert api.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                       json=crd, **ADMIN).status_code == 201
    api.wait_established(f"ticks.{GROUP}")
    created = api.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/ticks.{GROUP}",
                      **ADMIN).json()
    path = f"/apis/{GROUP}/v1/namespaces/{NS}/ticks?watch=1&resourceVersion={before}"
    with api.get(path, stream=True, timeout=10, **ADMIN) as response:
        event = _json.loads(next(line for line in response.iter_lines() if line))
    assert event["type"] == "ERROR"
    status = event["object"]
    assert (status["code"], status["reason"]) == (410, "Expired")
    assert status["message"].startswith(f"too old resource version: {before} (")
    floor = int(status["message"].rsplit("(", 1)[1].rstrip(")"))
    assert int(before) < floor <= int(created["metadata"]["resourceVersion"])
    # From the CRD's own revision on, the watch is served.
    with api.get(f"/apis/{GROUP}/v1/namespaces/{NS}/ticks?watch=1&resourceVersion={floor}"
                 "&timeoutSeconds=1", stream=True, timeout=10, **ADMIN) as response:
        assert response.status_code == 200
        assert not any(b"ERROR" in line for line in response.iter_lines() if line)
