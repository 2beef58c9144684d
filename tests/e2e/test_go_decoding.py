"""Built-in objects decoded into their Go types end to end: wrong types refused in
upstream's words (create, replace, patches, apply), nothing stored changed, and Go's
omitempty on what is stored, answered and owned — through raw HTTP and kubectl."""

import json

import pytest

from kapiserver.testing import assert_status

ADMIN = dict(user="admin", groups=["system:masters"])
NS = "default"
CM = f"/api/v1/namespaces/{NS}/configmaps"
DEPLOYMENTS = f"/apis/apps/v1/namespaces/{NS}/deployments"
QUANTITY_RE = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    server = KapiserverProcess(str(tmp_path_factory.mktemp("godecode")), workers=1).start()
    yield server
    server.stop()


def send(api, method, path, body, content_type="application/json", **params):
    data = body if isinstance(body, (str, bytes)) else json.dumps(body)
    return api.request(method, path, data=data, params=params or None,
                       headers={"Content-Type": content_type}, **ADMIN)


def cannot_handle(kind: str, error: str, version: str = "v1") -> str:
    return f'{kind} in version "{version}" cannot be handled as a {kind}: {error}'


def deployment(name: str, **spec) -> dict:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": labels}, "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}, **spec}}


@pytest.mark.parametrize("body, kind, path, error", [
    ({"metadata": {"name": "x"}, "data": ["a"]}, "ConfigMap", CM,
     "json: cannot unmarshal array into Go struct field ConfigMap.data of type "
     "map[string]string"),
    ({"metadata": {"name": "x"}, "data": {"a": 1}}, "ConfigMap", CM,
     "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"),
    ({"metadata": {"name": "x", "labels": []}}, "ConfigMap", CM,
     "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type "
     "map[string]string"),
    ({"metadata": {"name": "x", "finalizers": "a"}}, "ConfigMap", CM,
     "json: cannot unmarshal string into Go struct field ObjectMeta.metadata.finalizers of "
     "type []string"),
    ({"metadata": {"name": "x"}, "binaryData": {"a": "aGVsbG8"}}, "ConfigMap", CM,
     "illegal base64 data at input byte 4"),
    ({"metadata": {"name": "x"}, "immutable": "yes"}, "ConfigMap", CM,
     "json: cannot unmarshal string into Go struct field ConfigMap.immutable of type bool"),
    (deployment("x", replicas="3"), "Deployment", DEPLOYMENTS,
     "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of "
     "type int32"),
    (deployment("x", replicas=3000000000), "Deployment", DEPLOYMENTS,
     "json: cannot unmarshal number 3000000000 into Go struct field "
     "DeploymentSpec.spec.replicas of type int32"),
    (deployment("x", replicas=1.5), "Deployment", DEPLOYMENTS,
     "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas "
     "of type int32"),
    ('{"metadata":{"name":"x"},"spec":{"replicas":1.0,"selector":{}}}', "Deployment",
     DEPLOYMENTS, "json: cannot unmarshal number 1.0 into Go struct field "
     "DeploymentSpec.spec.replicas of type int32"),
    (deployment("x", minReadySeconds=True), "Deployment", DEPLOYMENTS,
     "json: cannot unmarshal bool into Go struct field DeploymentSpec.spec.minReadySeconds "
     "of type int32"),
    (deployment("x", strategy=[]), "Deployment", DEPLOYMENTS,
     "json: cannot unmarshal array into Go struct field DeploymentSpec.spec.strategy of type "
     "v1.DeploymentStrategy"),
])
def test_a_body_of_the_wrong_type_is_refused_as_upstream_refuses_it(api, body, kind, path,
                                                                     error):
    response = send(api, "POST", path, body)
    assert_status(response, 400, "BadRequest", cannot_handle(kind, error))
    assert api.get(f"{path}/x", **ADMIN).status_code == 404


PODS = f"/api/v1/namespaces/{NS}/pods"


def pod(**container) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "nginx", **container}]}}


@pytest.mark.parametrize("body, error", [
    (pod(ports=[{"containerPort": "80"}]),
     "json: cannot unmarshal string into Go struct field ContainerPort.spec.containers.ports."
     "containerPort of type int32"),
    (pod(resources={"limits": {"cpu": "lots"}}), QUANTITY_RE),
    (pod(resources={"limits": []}),
     "json: cannot unmarshal array into Go struct field ResourceRequirements.spec.containers."
     "resources.limits of type v1.ResourceList"),
    (pod(imagePullPolicy=1),
     "json: cannot unmarshal number into Go struct field Container.spec.containers."
     "imagePullPolicy of type v1.PullPolicy"),
    (pod(livenessProbe={"httpGet": {"port": 1.5}}),
     "json: cannot unmarshal number 1.5 into Go struct field HTTPGetAction.spec.containers."
     "livenessProbe.httpGet.port of type int32"),
    (pod(securityContext=[]),
     "json: cannot unmarshal array into Go struct field Container.spec.containers."
     "securityContext of type v1.SecurityContext"),
    ({**pod(), "metadata": {"name": "p", "creationTimestamp": "yesterday"}},
     'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as '
     '"2006"'),
])
def test_pods_of_the_wrong_type_name_the_innermost_struct_and_the_whole_path(api, body,
                                                                            error):
    assert_status(send(api, "POST", PODS, body), 400, "BadRequest", cannot_handle("Pod", error))


def test_yaml_bodies_reach_go_as_go_writes_their_numbers(api):
    # sigs.k8s.io/yaml turns 2.0 into JSON's 2, which an int32 takes
    body = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: yaml-two}\nspec:\n"
            "  replicas: 2.0\n  selector: {matchLabels: {app: y}}\n  template:\n"
            "    metadata: {labels: {app: y}}\n    spec: {containers: [{name: c, image: x}]}\n")
    created = send(api, "POST", DEPLOYMENTS, body, "application/yaml")
    assert created.status_code == 201, created.text
    assert created.json()["spec"]["replicas"] == 2
    wrong = send(api, "POST", DEPLOYMENTS, body.replace("2.0", "2.5").replace(
        "yaml-two", "yaml-half"), "application/yaml")
    assert_status(wrong, 400, "BadRequest", cannot_handle(
        "Deployment", "json: cannot unmarshal number 2.5 into Go struct field "
        "DeploymentSpec.spec.replicas of type int32"))


def test_replace_with_a_wrong_type_changes_nothing(api):
    created = send(api, "POST", CM, {"metadata": {"name": "put-me"}, "data": {"a": "1"}})
    assert created.status_code == 201, created.text
    body = created.json()
    body["data"] = {"a": ["1"]}
    response = send(api, "PUT", f"{CM}/put-me", body)
    assert_status(response, 400, "BadRequest", cannot_handle(
        "ConfigMap", "json: cannot unmarshal array into Go struct field ConfigMap.data of "
                     "type string"))
    stored = api.get(f"{CM}/put-me", **ADMIN).json()
    assert stored["data"] == {"a": "1"}
    assert stored["metadata"]["resourceVersion"] == body["metadata"]["resourceVersion"]


def test_patches_of_the_wrong_type_are_refused_as_upstreams_patchers_refuse_them(api):
    created = send(api, "POST", CM, {"metadata": {"name": "patch-me"}, "data": {"a": "1"}})
    assert created.status_code == 201, created.text
    rv = created.json()["metadata"]["resourceVersion"]
    path = f"{CM}/patch-me"

    merge = send(api, "PATCH", path, {"data": ["a"]}, "application/merge-patch+json")
    status = assert_status(merge, 422, "Invalid")
    error = ("json: cannot unmarshal array into Go struct field ConfigMap.data of type "
             "map[string]string")
    cause = status["details"]["causes"][0]
    assert cause["field"] == "patch" and cause["reason"] == "FieldValueInvalid"
    patched = json.loads(json.loads(cause["message"][len("Invalid value: "):
                                                     -len(": " + error)]))
    assert patched["data"] == ["a"] and patched["metadata"]["name"] == "patch-me"
    # the library writes the objects it merged with sorted keys
    assert list(patched) == sorted(patched)
    assert status["message"].startswith(' "" is invalid: patch: Invalid value: "{')
    assert status["message"].endswith(error)
    assert "name" not in status["details"] and "kind" not in status["details"]

    json_patch = send(api, "PATCH", path, [{"op": "replace", "path": "/data/a", "value": 5}],
                      "application/json-patch+json")
    status = assert_status(json_patch, 422, "Invalid")
    assert status["details"]["causes"][0]["message"].endswith(
        "json: cannot unmarshal number into Go struct field ConfigMap.data of type string")

    strategic = send(api, "PATCH", path, {"data": ["a"]},
                     "application/strategic-merge-patch+json")
    assert_status(strategic, 422, "Invalid", ' "" is invalid: patch: Invalid value: '
                  '"map[data:[a]]": cannot restore map from slice',
                  {"causes": [{"reason": "FieldValueInvalid", "field": "patch",
                               "message": 'Invalid value: "map[data:[a]]": cannot restore '
                                          'map from slice'}]})
    stored = api.get(path, **ADMIN).json()
    assert stored["data"] == {"a": "1"} and stored["metadata"]["resourceVersion"] == rv


def test_strict_field_validation_of_a_strategic_patch_quotes_the_patch(api):
    created = send(api, "POST", CM, {"metadata": {"name": "smp-strict"}, "data": {"a": "1"}})
    assert created.status_code == 201, created.text
    response = send(api, "PATCH", f"{CM}/smp-strict", {"zeta": 1, "alpha": {"b": 2}},
                    "application/strategic-merge-patch+json", fieldValidation="Strict")
    # the unstructured converter's unknown fields come sorted
    assert_status(response, 422, "Invalid", ' "" is invalid: patch: Invalid value: '
                  '"map[alpha:map[b:2] zeta:1]": strict decoding error: unknown field '
                  '"alpha", unknown field "zeta"')


def test_a_strategic_patch_converts_numbers_as_reflect_does(api):
    created = send(api, "POST", DEPLOYMENTS, deployment("smp-numbers"))
    assert created.status_code == 201, created.text
    path = f"{DEPLOYMENTS}/smp-numbers"
    smp = "application/strategic-merge-patch+json"
    whole = send(api, "PATCH", path, {"spec": {"replicas": 2.0}}, smp)
    assert whole.status_code == 200, whole.text
    assert whole.json()["spec"]["replicas"] == 2
    half = send(api, "PATCH", path, {"spec": {"replicas": 2.5}}, smp)
    assert_status(half, 422, "Invalid", ' "" is invalid: patch: Invalid value: '
                  '"map[spec:map[replicas:2.5]]": cannot convert float64 to int32')
    text = send(api, "PATCH", path, {"spec": {"replicas": "3"}}, smp)
    assert_status(text, 422, "Invalid", ' "" is invalid: patch: Invalid value: '
                  '"map[spec:map[replicas:3]]": unrecognized type: int32')


def test_apply_of_what_go_cannot_convert_is_upstreams_500(api):
    config = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ssa-half}\nspec:\n"
              "  replicas: 1.5\n  selector: {matchLabels: {app: s}}\n  template:\n"
              "    metadata: {labels: {app: s}}\n    spec: {containers: [{name: c, image: x}]}\n")
    response = api.request("PATCH", f"{DEPLOYMENTS}/ssa-half", data=config,
                           params={"fieldManager": "me"},
                           headers={"Content-Type": "application/apply-patch+yaml"}, **ADMIN)
    # a plain error upstream: a 500 without a reason
    assert response.status_code == 500
    assert response.json() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "failed to convert new object (/ssa-half; apps/v1, Kind=Deployment) to "
                   "proper version: unable to convert unstructured object to apps/v1, "
                   "Kind=Deployment: cannot convert float64 to int32", "code": 500}
    assert api.get(f"{DEPLOYMENTS}/ssa-half", **ADMIN).status_code == 404


def test_empty_optional_fields_are_dropped_as_go_drops_them(api):
    body = {"metadata": {"name": "empties", "annotations": {}, "labels": None,
                         "finalizers": [], "generateName": ""},
            "data": {"a": "1"}, "binaryData": {}}
    created = send(api, "POST", CM, body, fieldManager="writer")
    assert created.status_code == 201, created.text
    obj = created.json()
    assert set(obj) == {"kind", "apiVersion", "metadata", "data"}
    meta = obj["metadata"]
    assert not {"annotations", "labels", "finalizers", "generateName"} & set(meta)
    # what Go dropped is owned by no one
    assert meta["managedFields"][0]["fieldsV1"] == {"f:data": {".": {}, "f:a": {}}}
    assert api.get(f"{CM}/empties", **ADMIN).json() == obj
    # an object with nothing but empties owns nothing at all
    bare = send(api, "POST", CM, {"metadata": {"name": "bare", "annotations": {}},
                                  "data": {}})
    assert bare.status_code == 201, bare.text
    assert set(bare.json()) == {"kind", "apiVersion", "metadata"}
    assert "managedFields" not in bare.json()["metadata"]


def test_a_services_empty_lists_and_zero_node_ports_are_dropped(api):
    body = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc-empties"},
            "spec": {"ports": [{"port": 80, "nodePort": 0}], "externalIPs": [],
                     "selector": {}}}
    created = send(api, "POST", f"/api/v1/namespaces/{NS}/services", body)
    assert created.status_code == 201, created.text
    spec = created.json()["spec"]
    assert "externalIPs" not in spec and "selector" not in spec
    assert "nodePort" not in spec["ports"][0]


def test_roles_and_service_accounts_drop_empty_lists(api):
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "r-empties"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"],
                       "resourceNames": []}]}
    created = send(api, "POST", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/roles",
                   role)
    assert created.status_code == 201, created.text
    assert "resourceNames" not in created.json()["rules"][0]
    account = {"apiVersion": "v1", "kind": "ServiceAccount",
               "metadata": {"name": "sa-empties"}, "secrets": []}
    created = send(api, "POST", f"/api/v1/namespaces/{NS}/serviceaccounts", account)
    assert created.status_code == 201, created.text
    assert "secrets" not in created.json()


def test_kubectl_apply_of_empty_annotations_then_diff_shows_nothing(api, tmp_path):
    manifest = tmp_path / "cm.yaml"
    manifest.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: diff-me\n"
                        f"  namespace: {NS}\n  annotations: {{}}\n  labels: {{}}\n"
                        "data:\n  a: '1'\n")
    applied = api.kubectl("apply", "-f", str(manifest))
    assert applied.returncode == 0, applied.stderr
    stored = api.get(f"{CM}/diff-me", **ADMIN).json()
    annotations = stored["metadata"]["annotations"]  # only kubectl's last-applied record
    assert list(annotations) == ["kubectl.kubernetes.io/last-applied-configuration"]
    assert "labels" not in stored["metadata"]
    owned = stored["metadata"]["managedFields"][0]["fieldsV1"]
    assert "f:labels" not in owned["f:metadata"]
    diff = api.kubectl("diff", "-f", str(manifest))
    assert diff.returncode == 0, diff.stdout + diff.stderr
    assert diff.stdout == ""


def test_server_side_apply_of_empty_maps_then_diff_shows_nothing(api, tmp_path):
    manifest = tmp_path / "ssa.yaml"
    manifest.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa-diff\n"
                        f"  namespace: {NS}\n  annotations: {{}}\ndata:\n  a: '1'\n")
    applied = api.kubectl("apply", "--server-side", "-f", str(manifest))
    assert applied.returncode == 0, applied.stderr
    stored = api.get(f"{CM}/ssa-diff", **ADMIN).json()
    assert "annotations" not in stored["metadata"]
    diff = api.kubectl("diff", "--server-side", "-f", str(manifest))
    assert diff.returncode == 0, diff.stdout + diff.stderr


def test_kubectl_reports_upstreams_decoding_error(api, tmp_path):
    manifest = tmp_path / "bad.yaml"
    manifest.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad-cm\n"
                        f"  namespace: {NS}\ndata:\n  a: [1]\n")
    created = api.kubectl("create", "-f", str(manifest))
    assert created.returncode != 0
    assert ("json: cannot unmarshal array into Go struct field ConfigMap.data of type string"
            in created.stderr), created.stderr


def test_custom_resources_drop_empty_metadata(api, tmp_path):
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "gadgets.go.example.com"},
           "spec": {"group": "go.example.com", "scope": "Namespaced",
                    "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                        "openAPIV3Schema": {"type": "object",
                                            "x-kubernetes-preserve-unknown-fields": True}}}]}}
    response = send(api, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                    crd)
    assert response.status_code == 201, response.text
    api.wait_established("gadgets.go.example.com")
    body = {"apiVersion": "go.example.com/v1", "kind": "Gadget",
            "metadata": {"name": "g", "annotations": {}, "labels": {}, "finalizers": [],
                         "generateName": ""}, "spec": {"empty": {}}}
    created = send(api, "POST", f"/apis/go.example.com/v1/namespaces/{NS}/gadgets", body)
    assert created.status_code == 201, created.text
    obj = created.json()
    assert not {"annotations", "labels", "finalizers", "generateName"} & set(obj["metadata"])
    assert obj["spec"] == {"empty": {}}  # unstructured: the rest is kept as sent
