"""Server-side apply end to end: raw PATCH requests, kubectl apply --server-side, and the
official Python client, against a real server; answers compared with kube-apiserver's."""

import json
import re
import zlib

import pytest

from kapiserver.testing import assert_status
from tests.fieldmanager.transcripts import reference, reference_body

ADMIN = dict(user="admin", groups=["system:masters"])
#: The server tests run on each storage backend (tests/conftest.py).
STORAGE_BACKENDS = ("sqlite", "etcd3")
APPLY = "application/apply-patch+yaml"
CM = "/api/v1/namespaces/{ns}/configmaps"
#: kubectl validates manifests against the server's OpenAPI unless told not to; until
#: /openapi is served, --validate=false keeps kubectl from refusing to send them.
NO_CLIENT_VALIDATION = "--validate=false"


@pytest.fixture(scope="module")
def api(tmp_path_factory, kapiserver_storage):
    from kapiserver.testing import KapiserverProcess

    server = KapiserverProcess(str(tmp_path_factory.mktemp("ssa")), workers=2,
                               config=kapiserver_storage.config()).start()
    yield server
    server.stop()


@pytest.fixture
def ns(api, request):
    """A fresh namespace for one test."""
    words = re.sub("[^a-z0-9]+", "-", request.node.name.lower()[5:])
    name = f"ssa-{words[:36].strip('-')}-{zlib.crc32(request.node.name.encode()) % 10000}"
    response = api.request("POST", "/api/v1/namespaces", json={
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}, **ADMIN)
    assert response.status_code == 201, response.text
    return name


def apply(api, path, body, query="", **kwargs):
    data = body if isinstance(body, (str, bytes)) else json.dumps(body)
    headers = {"Content-Type": APPLY, **kwargs.pop("headers", {})}
    return api.request("PATCH", path + (f"?{query}" if query else ""), data=data,
                       headers=headers, **ADMIN, **kwargs)


def cm_yaml(name: str, **data) -> str:
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata:", f"  name: {name}"]
    if data:
        lines.append("data:")
        lines += [f"  {key}: '{value}'" for key, value in data.items()]
    return "\n".join(lines) + "\n"


def managed(obj: dict) -> list:
    """managedFields without their times (which vary), in the order served."""
    return [{k: v for k, v in entry.items() if k != "time"}
            for entry in obj["metadata"].get("managedFields", [])]


def entry(manager, fields, operation="Apply", **extra):
    return {"manager": manager, "operation": operation, "apiVersion": "v1",
            "fieldsType": "FieldsV1", "fieldsV1": fields, **extra}


def get(api, path) -> dict:
    response = api.get(path, **ADMIN)
    assert response.status_code == 200, response.text
    return response.json()


# -- the reference transcripts ----------------------------------------------------------------

def test_create_on_apply_answers_like_the_reference(api, ns):
    exchange = reference("apply-create.json")
    path = f"{CM.format(ns=ns)}/cm-ssa"
    response = apply(api, path, exchange["request"]["body"], "fieldManager=mgr-a")
    assert response.status_code == 201, response.text
    assert response.headers["Content-Type"] == "application/json"
    body, expected = response.json(), exchange["response"]["body"]
    assert body["kind"] == "ConfigMap" and body["apiVersion"] == "v1"
    assert body["data"] == expected["data"]
    meta = body["metadata"]
    assert sorted(meta) == sorted(expected["metadata"])
    assert meta["name"] == "cm-ssa" and meta["namespace"] == ns
    assert managed(body) == managed(expected)
    assert meta["managedFields"][0]["time"] == meta["creationTimestamp"]
    assert get(api, path) == body


def test_a_conflict_answers_like_the_reference(api, ns):
    path = f"{CM.format(ns=ns)}/cm-ssa"
    assert apply(api, path, cm_yaml("cm-ssa", x=1), "fieldManager=mgr-a").status_code == 201
    exchange = reference("apply-conflict.json")
    response = apply(api, path, exchange["request"]["body"], "fieldManager=mgr-b")
    assert response.status_code == 409
    assert response.json() == exchange["response"]["body"]


def test_apply_without_a_field_manager_answers_like_the_reference(api, ns):
    exchange = reference("error-apply-no-field-manager.json")
    response = apply(api, f"{CM.format(ns=ns)}/cm-ssa", exchange["request"]["body"])
    assert response.status_code == 422
    assert response.json() == exchange["response"]["body"]


# -- ownership --------------------------------------------------------------------------------

def test_force_takes_ownership(api, ns):
    path = f"{CM.format(ns=ns)}/c"
    assert apply(api, path, cm_yaml("c", x=1, w=1), "fieldManager=a").status_code == 201
    response = apply(api, path, cm_yaml("c", x=2), "fieldManager=b&force=true")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["data"] == {"x": "2", "w": "1"}
    assert managed(body) == [entry("a", {"f:data": {"f:w": {}}}),
                             entry("b", {"f:data": {"f:x": {}}})]


def test_fields_left_out_are_removed_unless_another_manager_owns_them(api, ns):
    path = f"{CM.format(ns=ns)}/c"
    apply(api, path, cm_yaml("c", x=1, w=1, z=1), "fieldManager=a")
    apply(api, path, cm_yaml("c", x=1), "fieldManager=b")  # b co-owns x
    body = apply(api, path, cm_yaml("c", z=1), "fieldManager=a").json()
    assert body["data"] == {"x": "1", "z": "1"}  # w had no other owner: gone; x stays
    assert {e["manager"]: e["fieldsV1"] for e in body["metadata"]["managedFields"]} == {
        "a": {"f:data": {"f:z": {}}}, "b": {"f:data": {"f:x": {}}}}


def test_reapplying_the_same_configuration_writes_nothing(api, ns):
    path = f"{CM.format(ns=ns)}/c"
    first = apply(api, path, cm_yaml("c", x=1), "fieldManager=a").json()
    again = apply(api, path, cm_yaml("c", x=1), "fieldManager=a")
    assert again.status_code == 200 and again.json() == first


def test_an_update_by_another_manager_takes_the_fields_it_changed(api, ns):
    path = f"{CM.format(ns=ns)}/c"
    apply(api, path, cm_yaml("c", x=1, w=1), "fieldManager=a")
    patched = api.request("PATCH", path, json={"data": {"x": "9"}}, **ADMIN,
                          headers={"Content-Type": "application/merge-patch+json",
                                   "User-Agent": "editor/1.0"})
    assert patched.status_code == 200, patched.text
    assert managed(patched.json()) == [entry("a", {"f:data": {"f:w": {}}}),
                                       entry("editor", {"f:data": {"f:x": {}}}, "Update")]
    response = apply(api, path, cm_yaml("c", x=1, w=1), "fieldManager=a")
    assert_status(response, 409, "Conflict",
                  'Apply failed with 1 conflict: conflict with "editor" using v1: .data.x')


def test_keyed_lists_sets_and_atomic_maps_on_a_service(api, ns):
    path = f"/api/v1/namespaces/{ns}/services/web"
    config = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
              "spec": {"selector": {"app": "web"},
                       "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}}
    created = apply(api, path, config, "fieldManager=a")
    assert created.status_code == 201, created.text
    svc = created.json()
    assert svc["spec"]["clusterIP"] and svc["spec"]["type"] == "ClusterIP"  # defaulted
    assert managed(svc) == [entry("a", {"f:spec": {
        "f:ports": {'k:{"port":80,"protocol":"TCP"}': {
            ".": {}, "f:name": {}, "f:port": {}, "f:targetPort": {}}},
        "f:selector": {}}})]
    more = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
            "spec": {"ports": [{"name": "dns", "port": 53, "protocol": "UDP"}]}}
    svc = apply(api, path, more, "fieldManager=b").json()
    assert [(p["port"], p["protocol"]) for p in svc["spec"]["ports"]] == [
        (80, "TCP"), (53, "UDP")]
    response = apply(api, path, dict(more, spec={"selector": {"app": "x"}}), "fieldManager=b")
    assert_status(response, 409, "Conflict",
                  'Apply failed with 1 conflict: conflict with "a": .spec.selector')
    again = apply(api, path, config, "fieldManager=a")
    assert again.json()["metadata"]["resourceVersion"] == svc["metadata"]["resourceVersion"]


# -- options ----------------------------------------------------------------------------------

def test_dry_run_neither_creates_nor_changes(api, ns):
    path = f"{CM.format(ns=ns)}/c"
    response = apply(api, path, cm_yaml("c", x=1), "fieldManager=a&dryRun=All")
    assert response.status_code == 201 and response.json()["data"] == {"x": "1"}
    assert "resourceVersion" not in response.json()["metadata"]
    assert api.get(path, **ADMIN).status_code == 404
    live = apply(api, path, cm_yaml("c", x=1), "fieldManager=a").json()
    response = apply(api, path, cm_yaml("c", x=2), "fieldManager=a&dryRun=All")
    assert response.status_code == 200 and response.json()["data"] == {"x": "2"}
    assert get(api, path) == live


DUPLICATED = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  x: '1'\n  x: '2'\n"


def test_field_validation_judges_keys_set_twice(api, ns):
    path = f"{CM.format(ns=ns)}/c"
    assert_status(apply(api, path, DUPLICATED, "fieldManager=a&fieldValidation=Strict"), 400,
                  "BadRequest", "error strict decoding YAML: error converting YAML to JSON: "
                  'yaml: unmarshal errors:\n  line 7: key "x" already set in map')
    warned = apply(api, path, DUPLICATED, "fieldManager=a")  # Warn is the default
    assert warned.status_code == 201 and warned.json()["data"] == {"x": "2"}
    assert warned.headers["Warning"] == '299 - "line 7: key \\"x\\" already set in map"'
    ignored = apply(api, path, DUPLICATED, "fieldManager=a&fieldValidation=Ignore")
    assert ignored.status_code == 200 and "Warning" not in ignored.headers


@pytest.mark.parametrize("mode", ["Strict", "Warn", "Ignore"])
def test_unknown_fields_are_a_bad_request_whatever_the_mode(api, ns, mode):
    """Upstream's words; not its 500 (kubernetes/kubernetes#122480)."""
    body = cm_yaml("c", x=1) + "bogus: 1\n"
    response = apply(api, f"{CM.format(ns=ns)}/c", body, f"fieldManager=a&fieldValidation={mode}")
    assert response.status_code == 400
    assert response.json() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "failed to create typed patch object (/c; /v1, Kind=ConfigMap): .bogus: "
                   "field not declared in schema", "reason": "BadRequest", "code": 400}


def test_resource_version_in_the_configuration_is_a_precondition(api, ns):
    path = f"{CM.format(ns=ns)}/c"
    live = apply(api, path, cm_yaml("c", x=1), "fieldManager=a").json()
    config = {"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": "c", "resourceVersion": "1"}, "data": {"x": "2"}}
    assert_status(apply(api, path, config, "fieldManager=a"), 409, "Conflict",
                  'Operation cannot be fulfilled on configmaps "c": the object has been '
                  "modified; please apply your changes to the latest version and try again")
    config["metadata"]["resourceVersion"] = live["metadata"]["resourceVersion"]
    assert apply(api, path, config, "fieldManager=a").json()["data"] == {"x": "2"}


@pytest.mark.parametrize("head,message", [
    ("apiVersion: apps/v1\nkind: ConfigMap\n", "invalid object type: apps/v1, Kind=ConfigMap"),
    ("apiVersion: v1\nkind: Secret\n", "invalid object type: /v1, Kind=Secret"),
    ("kind: ConfigMap\n", "invalid object type: /, Kind=ConfigMap"),
])
def test_another_type_is_refused(api, ns, head, message):
    response = apply(api, f"{CM.format(ns=ns)}/c", head + "metadata:\n  name: c\n",
                     "fieldManager=a")
    assert_status(response, 400, "BadRequest", message)


def test_the_object_must_be_the_one_the_url_names(api, ns):
    path = f"{CM.format(ns=ns)}/c"
    assert_status(apply(api, path, cm_yaml("other"), "fieldManager=a"), 400, "BadRequest",
                  "the name of the object (other) does not match the name on the URL (c)")
    body = cm_yaml("c") + "  namespace: elsewhere\n"
    assert_status(apply(api, path, body, "fieldManager=a"), 400,
                  "BadRequest", f"the namespace of the object (elsewhere) does not match the "
                                f"namespace on the request ({ns})")
    body = cm_yaml("c") + "  uid: '1234'\n"
    assert_status(apply(api, path, body, "fieldManager=a"), 409,
                  "Conflict", 'Operation cannot be fulfilled on configmaps "c": uid mismatch: '
                              "the provided object specified uid 1234, and no existing object "
                              "was found")


def test_creating_in_a_missing_namespace_is_refused_by_admission(api):
    response = apply(api, f"{CM.format(ns='does-not-exist')}/c", cm_yaml("c"),
                     "fieldManager=a")
    assert response.status_code == 404
    assert response.json() == reference_body("error-namespace-not-found-on-create.json")


def test_patch_options_and_media_types(api, ns):
    path = f"{CM.format(ns=ns)}/c"
    apply(api, path, cm_yaml("c", x=1), "fieldManager=a")
    response = api.request("PATCH", path + "?force=true", json={"data": {"x": "2"}}, **ADMIN,
                           headers={"Content-Type": "application/merge-patch+json"})
    assert_status(response, 422, "Invalid", 'PatchOptions.meta.k8s.io "" is invalid: force: '
                                            "Forbidden: may not be specified for non-apply patch")
    response = api.request("PATCH", path, data="x", **ADMIN,
                           headers={"Content-Type": "text/plain"})
    assert_status(response, 415, "UnsupportedMediaType",
                  "the body of the request was in an unknown format - accepted media types "
                  "include: application/json-patch+json, application/merge-patch+json, "
                  "application/strategic-merge-patch+json, application/apply-patch+yaml")


# -- subresources -----------------------------------------------------------------------------

def test_apply_to_namespace_status(api, ns):
    path = f"/api/v1/namespaces/{ns}/status"
    config = {"apiVersion": "v1", "kind": "Namespace",
              "metadata": {"name": ns, "labels": {"watched": "yes"}},
              "spec": {"finalizers": []},
              "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    response = apply(api, path, config, "fieldManager=ctl")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["spec"] == {"finalizers": ["kubernetes"]}  # the status strategy kept it
    assert body["metadata"]["labels"]["watched"] == "yes"  # metadata is written, as upstream
    assert body["status"]["conditions"] == [{"type": "Ready", "status": "True",
                                             "lastTransitionTime": None}]
    assert managed(body)[0] == entry("ctl", {
        "f:metadata": {"f:labels": {"f:watched": {}}},
        "f:status": {"f:conditions": {
            'k:{"type":"Ready"}': {".": {}, "f:status": {}, "f:type": {}}}}},
        subresource="status")
    assert get(api, f"/api/v1/namespaces/{ns}") == body


def test_apply_to_service_status(api, ns):
    path = f"/api/v1/namespaces/{ns}/services/lb"
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "lb"},
           "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}}
    assert apply(api, path, svc, "fieldManager=a").status_code == 201
    status = dict(svc, spec={"type": "ClusterIP"},
                  status={"loadBalancer": {"ingress": [{"ip": "192.0.2.7"}]}})
    response = apply(api, path + "/status", status, "fieldManager=lb-ctl")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["spec"]["type"] == "LoadBalancer"
    # (ipMode is defaulted, as upstream does for an ingress with an IP)
    assert body["status"] == {"loadBalancer": {"ingress": [{"ip": "192.0.2.7",
                                                           "ipMode": "VIP"}]}}
    assert managed(body)[1] == entry("lb-ctl", {"f:status": {"f:loadBalancer": {
        "f:ingress": {}}}}, subresource="status")


def test_a_subresource_never_creates(api, ns):
    response = apply(api, f"/api/v1/namespaces/{ns}/services/none/status",
                     {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "none"}},
                     "fieldManager=a")
    assert_status(response, 404, "NotFound", 'services "none" not found')


# -- kubectl --------------------------------------------------------------------------------

def kubectl_apply(api, ns, manifest, *flags):
    return api.kubectl("apply", "--server-side", NO_CLIENT_VALIDATION, "-n", ns, "-f", "-",
                       *flags, input=manifest)


def test_kubectl_server_side_round_trip(api, ns):
    first = kubectl_apply(api, ns, cm_yaml("app", color="blue", size="m"))
    assert first.returncode == 0, first.stderr
    assert first.stdout == "configmap/app serverside-applied\n"
    live = get(api, f"{CM.format(ns=ns)}/app")
    again = kubectl_apply(api, ns, cm_yaml("app", color="blue", size="m"))
    assert again.stdout == "configmap/app serverside-applied\n"
    assert get(api, f"{CM.format(ns=ns)}/app") == live  # nothing written

    changed = kubectl_apply(api, ns, cm_yaml("app", color="green"))
    assert changed.returncode == 0, changed.stderr
    live = get(api, f"{CM.format(ns=ns)}/app")
    assert live["data"] == {"color": "green"}  # size left the manifest: removed
    assert managed(live) == [entry("kubectl", {"f:data": {"f:color": {}}})]

    conflict = kubectl_apply(api, ns, cm_yaml("app", color="red"), "--field-manager=other")
    assert conflict.returncode == 1
    assert conflict.stderr.startswith(
        'error: Apply failed with 1 conflict: conflict with "kubectl": .data.color\n'
        "Please review the fields above--they currently have other managers.")

    forced = kubectl_apply(api, ns, cm_yaml("app", color="red"), "--field-manager=other",
                           "--force-conflicts")
    assert forced.returncode == 0, forced.stderr
    live = get(api, f"{CM.format(ns=ns)}/app")
    assert live["data"] == {"color": "red"}
    assert managed(live) == [entry("other", {"f:data": {"f:color": {}}})]


def test_kubectl_upgrades_from_client_side_apply(api, ns):
    client_side = api.kubectl("apply", NO_CLIENT_VALIDATION, "-n", ns, "-f", "-",
                              input=cm_yaml("legacy", a=1, b=1))
    assert client_side.returncode == 0, client_side.stderr
    # kubectl's own field manager may take over what its client-side apply set
    upgraded = kubectl_apply(api, ns, cm_yaml("legacy", a=2, b=1))
    assert upgraded.returncode == 0, upgraded.stderr
    live = get(api, f"{CM.format(ns=ns)}/legacy")
    assert live["data"] == {"a": "2", "b": "1"}
    annotation = live["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
    assert json.loads(annotation)["data"] == {"a": "2", "b": "1"}
    assert "kubectl" in [e["manager"] for e in live["metadata"]["managedFields"]]


def test_kubectl_diff_and_dry_run_server(api, ns):
    assert kubectl_apply(api, ns, cm_yaml("d", a=1)).returncode == 0
    dry = kubectl_apply(api, ns, cm_yaml("d", a=2), "--dry-run=server", "-o", "json")
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["data"] == {"a": "2"}
    assert get(api, f"{CM.format(ns=ns)}/d")["data"] == {"a": "1"}


# -- the Python client ------------------------------------------------------------------------

def test_python_client_apply(api, ns):
    from kubernetes import client

    core = client.CoreV1Api(api.python_client())
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "py"},
            "data": {"k": "v"}}
    created = core.patch_namespaced_config_map("py", ns, body, field_manager="py-ctl",
                                               _content_type=APPLY)
    assert created.data == {"k": "v"}
    assert created.metadata.managed_fields[0].manager == "py-ctl"
    assert created.metadata.managed_fields[0].operation == "Apply"
    with pytest.raises(client.ApiException) as caught:
        core.patch_namespaced_config_map("py", ns, dict(body, data={"k": "w"}),
                                         field_manager="other", _content_type=APPLY)
    assert caught.value.status == 409
    assert json.loads(caught.value.body)["details"]["causes"][0]["field"] == ".data.k"
