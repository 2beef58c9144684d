"""First built-in resources end to end: configmaps and namespaces with kubectl and the client."""

import json
import time

import pytest

from kapiserver.testing import assert_status

ADMIN = dict(user="admin", groups=["system:masters"])
#: The server tests run on each storage backend (tests/conftest.py).
STORAGE_BACKENDS = ("sqlite", "etcd3")


@pytest.fixture(scope="module")
def api(tmp_path_factory, kapiserver_storage):
    from kapiserver.testing import KapiserverProcess

    server = KapiserverProcess(str(tmp_path_factory.mktemp("core")), workers=2,
                               config=kapiserver_storage.config()).start()
    yield server
    server.stop()


def test_system_namespaces_exist_at_start(api):
    names = [ns["metadata"]["name"] for ns in api.get("/api/v1/namespaces", **ADMIN).json()["items"]]
    assert set(names) >= {"default", "kube-system", "kube-public", "kube-node-lease"}
    default = api.get("/api/v1/namespaces/default", **ADMIN).json()
    assert default["status"] == {"phase": "Active"}
    assert default["spec"] == {"finalizers": ["kubernetes"]}
    assert default["metadata"]["labels"] == {"kubernetes.io/metadata.name": "default"}


def test_discovery_documents(api):
    assert api.get("/api", **ADMIN).json()["versions"] == ["v1"]
    resources = {r["name"]: r for r in api.get("/api/v1", **ADMIN).json()["resources"]}
    assert resources["configmaps"] == {
        "name": "configmaps", "singularName": "configmap", "namespaced": True,
        "kind": "ConfigMap", "verbs": ["create", "delete", "deletecollection", "get", "list",
                                       "patch", "update", "watch"],
        "shortNames": ["cm"], "storageVersionHash": "qFsyl6wFWjQ="}
    assert api.get("/apis", **ADMIN).json()["kind"] == "APIGroupList"


def test_create_get_list_delete_configmap_with_the_python_client(api):
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    with api.python_client() as api_client:
        core = client.CoreV1Api(api_client)
        created = core.create_namespaced_config_map("default", client.V1ConfigMap(
            metadata=client.V1ObjectMeta(name="py-cm", labels={"app": "py"}), data={"a": "1"}))
        assert created.metadata.uid and int(created.metadata.resource_version) > 0
        assert created.metadata.creation_timestamp is not None
        fetched = core.read_namespaced_config_map("py-cm", "default")
        assert fetched.data == {"a": "1"}
        listed = core.list_namespaced_config_map("default", label_selector="app=py")
        assert [c.metadata.name for c in listed.items] == ["py-cm"]
        fetched.data["b"] = "2"
        updated = core.replace_namespaced_config_map("py-cm", "default", fetched)
        assert int(updated.metadata.resource_version) > int(fetched.metadata.resource_version)
        # A stale resourceVersion is a 409 with upstream's message.
        with pytest.raises(ApiException) as conflict:
            core.replace_namespaced_config_map("py-cm", "default", fetched)
        assert conflict.value.status == 409
        assert json.loads(conflict.value.body)["message"] == (
            'Operation cannot be fulfilled on configmaps "py-cm": the object has been '
            "modified; please apply your changes to the latest version and try again")
        core.delete_namespaced_config_map("py-cm", "default")
        with pytest.raises(ApiException) as missing:
            core.read_namespaced_config_map("py-cm", "default")
        assert missing.value.status == 404


CM_YAML = """apiVersion: v1
kind: ConfigMap
metadata:
  name: kc
  namespace: default
data:
  k: v
"""


def test_kubectl_create_get_delete(api):
    assert api.kubectl("create", "-f", "-", input=CM_YAML,
                       check=True).stdout.strip() == "configmap/kc created"
    table = api.kubectl("get", "configmaps", "-n", "default", check=True).stdout
    assert table.splitlines()[0].split() == ["NAME", "DATA", "AGE"]
    assert any(line.split()[:2] == ["kc", "1"] for line in table.splitlines())
    as_yaml = api.kubectl("get", "cm", "kc", "-n", "default", "-o", "yaml", check=True).stdout
    assert "k: v" in as_yaml and "uid:" in as_yaml
    assert api.kubectl("get", "ns", check=True).stdout.splitlines()[0].split() == \
        ["NAME", "STATUS", "AGE"]
    assert api.kubectl("delete", "cm", "kc", "-n", "default", check=True).stdout.strip() == \
        'configmap "kc" deleted'


def test_upstream_errors(api):
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dup"}, "data": {}}
    assert api.request("POST", "/api/v1/namespaces/default/configmaps", json=body,
                       **ADMIN).status_code == 201
    assert_status(api.request("POST", "/api/v1/namespaces/default/configmaps", json=body,
                              **ADMIN), 409, "AlreadyExists", 'configmaps "dup" already exists',
                  {"name": "dup", "kind": "configmaps"})
    assert_status(api.get("/api/v1/namespaces/default/configmaps/nope", **ADMIN), 404,
                  "NotFound", 'configmaps "nope" not found', {"name": "nope", "kind": "configmaps"})
    assert_status(api.request("POST", "/api/v1/namespaces/does-not-exist/configmaps",
                              json=body, **ADMIN), 404, "NotFound",
                  'namespaces "does-not-exist" not found',
                  {"name": "does-not-exist", "kind": "namespaces"})
    bad = dict(body, metadata={"name": "Bad_Name"})
    invalid = assert_status(api.request("POST", "/api/v1/namespaces/default/configmaps",
                                        json=bad, **ADMIN), 422, "Invalid")
    assert invalid["details"]["causes"][0]["field"] == "metadata.name"
    assert_status(api.request("DELETE", "/api/v1/namespaces/default", **ADMIN), 403,
                  "Forbidden", 'namespaces "default" is forbidden: this namespace may not be '
                               "deleted")


def test_pagination_is_consistent(api):
    api.request("POST", "/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                    "metadata": {"name": "pages"}}, **ADMIN)
    # The root-ca-cert-publisher adds kube-root-ca.crt to every new namespace: wait for it,
    # so that what is listed is known.
    deadline = time.monotonic() + 10
    while api.get("/api/v1/namespaces/pages/configmaps/kube-root-ca.crt",
                  **ADMIN).status_code != 200 and time.monotonic() < deadline:
        time.sleep(0.05)
    for i in range(5):
        api.request("POST", "/api/v1/namespaces/pages/configmaps", json={
            "metadata": {"name": f"cm{i}"}, "data": {}}, **ADMIN)
    first = api.get("/api/v1/namespaces/pages/configmaps?limit=2", **ADMIN).json()
    assert [i["metadata"]["name"] for i in first["items"]] == ["cm0", "cm1"]
    assert first["metadata"]["remainingItemCount"] == 4
    # A write between pages does not show up in the snapshot.
    api.request("POST", "/api/v1/namespaces/pages/configmaps", json={
        "metadata": {"name": "cm10"}, "data": {}}, **ADMIN)
    second = api.get("/api/v1/namespaces/pages/configmaps?limit=10&continue="
                     + first["metadata"]["continue"], **ADMIN).json()
    assert [i["metadata"]["name"] for i in second["items"]] == ["cm2", "cm3", "cm4",
                                                                 "kube-root-ca.crt"]
    assert second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert "continue" not in second["metadata"]


def test_namespace_delete_is_terminating_and_blocks_new_content(api):
    api.request("POST", "/api/v1/namespaces", json={"metadata": {"name": "doomed"}}, **ADMIN)
    # A finalizer holds the namespace in Terminating: the namespace controller would
    # otherwise remove an empty one before the next request.
    held = "/api/v1/namespaces/doomed/configmaps/held"
    api.request("POST", "/api/v1/namespaces/doomed/configmaps", json={
        "metadata": {"name": "held", "finalizers": ["example.com/hold"]}}, **ADMIN)
    deleted = api.request("DELETE", "/api/v1/namespaces/doomed", **ADMIN).json()
    assert deleted["kind"] == "Namespace" and deleted["status"]["phase"] == "Terminating"
    assert deleted["metadata"]["deletionTimestamp"]
    refused = api.request("POST", "/api/v1/namespaces/doomed/configmaps",
                          json={"metadata": {"name": "late"}}, **ADMIN)
    assert_status(refused, 403, "Forbidden",
                  'configmaps "late" is forbidden: unable to create new content in namespace '
                  "doomed because it is being terminated")
    api.request("PATCH", held, data=json.dumps({"metadata": {"finalizers": None}}),
                headers={"Content-Type": "application/merge-patch+json"}, **ADMIN)


def test_unconditional_update_and_immutable_configmap(api):
    path = "/api/v1/namespaces/default/configmaps/frozen"
    body = {"metadata": {"name": "frozen"}, "data": {"a": "1"}, "immutable": True}
    api.request("POST", "/api/v1/namespaces/default/configmaps", json=body, **ADMIN)
    # No resourceVersion: applies to what is stored, so validation sees the change itself.
    changed = api.request("PUT", path, json={"metadata": {"name": "frozen"}, "data": {"a": "2"},
                                             "immutable": True}, **ADMIN)
    body = assert_status(changed, 422, "Invalid")
    assert body["details"]["causes"] == [{"reason": "FieldValueForbidden",
                                          "message": "Forbidden: field is immutable when "
                                                     "`immutable` is set", "field": "data"}]
    same = api.request("PUT", path, json={"metadata": {"name": "frozen"}, "data": {"a": "1"},
                                          "immutable": True, "kind": "ConfigMap",
                                          "apiVersion": "v1"}, **ADMIN)
    assert same.status_code == 200, same.text
    assert api.get(path, **ADMIN).json()["data"] == {"a": "1"}


def test_kubectl_imperative_creates_send_protobuf(api):
    result = api.kubectl("create", "configmap", "imperative", "--from-literal=k=v", "-n",
                         "default")
    assert result.stdout.strip() == "configmap/imperative created", result.stderr
    assert api.get("/api/v1/namespaces/default/configmaps/imperative",
                   **ADMIN).json()["data"] == {"k": "v"}
    assert api.kubectl("create", "namespace", "made-by-kubectl").stdout.strip() == \
        "namespace/made-by-kubectl created"
    namespace = api.get("/api/v1/namespaces/made-by-kubectl", **ADMIN).json()
    assert namespace["status"] == {"phase": "Active"}


def test_unsupported_media_type_matches_upstream(api):
    response = api.request("POST", "/api/v1/namespaces/default/configmaps", data="x",
                           headers={"Content-Type": "text/plain"}, **ADMIN)
    assert_status(response, 415, "UnsupportedMediaType",
                  "the body of the request was in an unknown format - accepted media types "
                  "include: application/json, application/yaml, "
                  "application/vnd.kubernetes.protobuf")


def test_patch_types_and_kubectl_label_annotate(api):
    path = "/api/v1/namespaces/default/configmaps/patched"
    api.request("POST", "/api/v1/namespaces/default/configmaps",
                json={"metadata": {"name": "patched", "labels": {"app": "ref"}},
                      "data": {"a": "1"}}, **ADMIN)

    def patch(content_type, body):
        return api.request("PATCH", path, data=json.dumps(body),
                           headers={"Content-Type": content_type}, **ADMIN)

    assert patch("application/merge-patch+json", {"data": {"b": "2"}}).json()["data"] == \
        {"a": "1", "b": "2"}
    assert patch("application/json-patch+json", [{"op": "add", "path": "/data/c",
                                                  "value": "3"}]).json()["data"]["c"] == "3"
    labels = patch("application/strategic-merge-patch+json",
                   {"metadata": {"labels": {"s": "1"}}}).json()["metadata"]["labels"]
    assert labels == {"app": "ref", "s": "1"}
    assert patch("application/merge-patch+json", {"data": {"a": None}}).json()["data"] == \
        {"b": "2", "c": "3"}
    failed = patch("application/json-patch+json", [{"op": "test", "path": "/data/b",
                                                     "value": "nope"}])
    assert failed.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {},
                             "status": "Failure",
                             "message": "the server rejected our request due to an error in "
                                        "our request", "reason": "Invalid", "details": {},
                             "code": 422}
    stale = patch("application/merge-patch+json", {"metadata": {"resourceVersion": "1"}})
    assert_status(stale, 409, "Conflict")
    assert_status(patch("text/plain", {}), 415, "UnsupportedMediaType")
    assert_status(api.request("PATCH", "/api/v1/namespaces/default/configmaps/nope",
                              data="{}", headers={"Content-Type": "application/merge-patch+json"},
                              **ADMIN), 404, "NotFound")
    assert api.kubectl("label", "cm", "patched", "-n", "default", "tier=web",
                       check=True).stdout.strip() == "configmap/patched labeled"
    assert api.kubectl("annotate", "cm", "patched", "-n", "default", "note=hi",
                       check=True).stdout.strip() == "configmap/patched annotated"
    meta = api.get(path, **ADMIN).json()["metadata"]
    assert meta["labels"]["tier"] == "web" and meta["annotations"] == {"note": "hi"}
    assert api.kubectl("label", "cm", "patched", "-n", "default", "tier-",
                       check=True).returncode == 0
    assert "tier" not in api.get(path, **ADMIN).json()["metadata"]["labels"]
    assert api.kubectl("patch", "cm", "patched", "-n", "default", "--type=merge", "-p",
                       '{"data":{"z":"26"}}', check=True).returncode == 0
    assert api.get(path, **ADMIN).json()["data"]["z"] == "26"


def test_kubectl_delete_by_selector_and_deletecollection(api):
    for name, team in (("dc-a", "x"), ("dc-b", "x"), ("dc-c", "y")):
        api.request("POST", "/api/v1/namespaces/default/configmaps",
                    json={"metadata": {"name": name, "labels": {"dc": team}}}, **ADMIN)
    result = api.kubectl("delete", "cm", "-l", "dc=x", "-n", "default", check=True)
    assert sorted(result.stdout.split("\n")[:2]) == ['configmap "dc-a" deleted',
                                                     'configmap "dc-b" deleted']
    remaining = api.get("/api/v1/namespaces/default/configmaps?labelSelector=dc", **ADMIN).json()
    assert [i["metadata"]["name"] for i in remaining["items"]] == ["dc-c"]
    collection = api.request("DELETE", "/api/v1/namespaces/default/configmaps?labelSelector=dc=y",
                             **ADMIN)
    assert collection.status_code == 200
    assert collection.json()["kind"] == "ConfigMapList"
    assert [i["metadata"]["name"] for i in collection.json()["items"]] == ["dc-c"]


def test_managed_fields_match_upstream(api):
    path = "/api/v1/namespaces/default/configmaps"
    created = api.request("POST", path + "?fieldManager=capture", json={
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "owned", "labels": {"app": "ref"}}, "data": {"a": "1"}},
        **ADMIN).json()
    entry = created["metadata"]["managedFields"]
    assert [{k: v for k, v in e.items() if k != "time"} for e in entry] == [{
        "manager": "capture", "operation": "Update", "apiVersion": "v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:data": {".": {}, "f:a": {}}, "f:metadata": {"f:labels": {".": {},
                                                                               "f:app": {}}}}}]
    # A second writer, named by its User-Agent, owns only what it changed.
    patched = api.request("PATCH", f"{path}/owned", data=json.dumps(
        {"data": {"b": "2"}, "metadata": {"labels": {"s": "1"}}}),
        headers={"Content-Type": "application/merge-patch+json",
                 "User-Agent": "python-requests/2.32"}, **ADMIN).json()
    managers = {e["manager"]: e["fieldsV1"] for e in patched["metadata"]["managedFields"]}
    assert managers["python-requests"] == {"f:data": {"f:b": {}},
                                           "f:metadata": {"f:labels": {"f:s": {}}}}
    assert managers["capture"]["f:data"] == {".": {}, "f:a": {}}
    # A PUT records its writer too (kubectl replace, client-go Update).
    current = api.get(f"{path}/owned", **ADMIN).json()
    current["data"]["c"] = "3"
    replaced = api.request("PUT", f"{path}/owned?fieldManager=replacer", json=current,
                           **ADMIN).json()
    managers = {e["manager"]: e for e in replaced["metadata"]["managedFields"]}
    assert managers["replacer"]["operation"] == "Update"
    assert managers["replacer"]["fieldsV1"] == {"f:data": {"f:c": {}}}
    assert managers["capture"]["fieldsV1"]["f:data"] == {".": {}, "f:a": {}}
    # kubectl names itself; the system namespaces are kube-apiserver's.
    api.kubectl("label", "cm", "owned", "-n", "default", "k=v", check=True)
    owners = [e["manager"] for e in api.get(f"{path}/owned", **ADMIN).json()["metadata"]
              ["managedFields"]]
    assert "kubectl-label" in owners
    default = api.get("/api/v1/namespaces/default", **ADMIN).json()
    assert default["metadata"]["managedFields"][0]["manager"] == "kube-apiserver"


def test_expected_storage_errors_do_not_print_tracebacks(api):
    before = api.log().count("Traceback")
    for _ in range(5):
        assert api.get("/api/v1/namespaces/default/configmaps/absent", **ADMIN).status_code == 404
    assert api.log().count("Traceback") == before


def test_field_validation_strict_warn_and_pruning(api):
    path = "/api/v1/namespaces/default/configmaps"
    strict = api.request("POST", path + "?fieldValidation=Strict", json={
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm-strict"}, "data": {},
        "bogus": 1, "spec": {"x": 1}}, **ADMIN)
    assert_status(strict, 400, "BadRequest",
                  'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding '
                  'error: unknown field "bogus", unknown field "spec"')
    warned = api.request("POST", path + "?fieldValidation=Warn&dryRun=All", json={
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm-warn"}, "data": {},
        "bogus": 1}, **ADMIN)
    assert warned.status_code == 201
    assert warned.headers["Warning"] == '299 - "unknown field \\"bogus\\""'
    assert "bogus" not in warned.json()
    # The default is Warn; what is stored never holds unknown fields.
    default = api.request("POST", path, json={"metadata": {"name": "cm-pruned", "nope": 1},
                                              "data": {"a": "1"}, "extra": True}, **ADMIN)
    assert default.status_code == 201
    assert default.headers["Warning"] == ('299 - "unknown field \\"metadata.nope\\"", '
                                          '299 - "unknown field \\"extra\\""')
    stored = api.get(path + "/cm-pruned", **ADMIN).json()
    assert "extra" not in stored and "nope" not in stored["metadata"]
    assert_status(api.request("POST", path + "?fieldValidation=Loud", json={
        "metadata": {"name": "x"}}, **ADMIN), 400, "BadRequest",
        'fieldValidation parameter unsupported: "Loud". Valid values are: Ignore, Warn, Strict')


SERVICE_YAML = """apiVersion: v1
kind: Service
metadata:
  name: {name}
  namespace: default
spec:
  ports:
  - port: 80
    bogus: 1
"""


def test_kubectl_field_validation_names_a_list_item_field_as_upstream(api):
    # sigs.k8s.io/json's strict error path: a list index in brackets, fields after a dot.
    refused = api.kubectl("create", "--validate=strict", "-f", "-",
                          input=SERVICE_YAML.format(name="svc-strict"))
    assert refused.returncode == 1
    assert refused.stderr == (
        'Error from server (BadRequest): error when creating "STDIN": Service in version "v1" '
        'cannot be handled as a Service: strict decoding error: unknown field '
        '"spec.ports[0].bogus"\n'), refused.stderr
    warned = api.kubectl("create", "--validate=warn", "-f", "-",
                         input=SERVICE_YAML.format(name="svc-warn"))
    assert warned.returncode == 0, warned.stderr
    assert warned.stderr == 'Warning: unknown field "spec.ports[0].bogus"\n'
    stored = api.get("/api/v1/namespaces/default/services/svc-warn", **ADMIN).json()
    assert [set(port) for port in stored["spec"]["ports"]] == [{"port", "protocol",
                                                                 "targetPort"}]
    api.kubectl("delete", "service", "svc-warn", "-n", "default", check=True)


def test_field_validation_names_at_most_one_hundred_fields(api):
    body = {"metadata": {"name": "cm-many"}, **{f"f{i:03}": i for i in range(150)}}
    path = "/api/v1/namespaces/default/configmaps"
    strict = api.request("POST", path + "?fieldValidation=Strict", json=body, **ADMIN)
    assert_status(strict, 400, "BadRequest",
                  'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding '
                  'error: ' + ", ".join(f'unknown field "f{i:03}"' for i in range(100)))
    # One Warning header each (more than Python's http.client reads): ask kubectl.
    created = api.kubectl("create", "--validate=warn", "-n", "default", "-o", "json", "-f", "-",
                          input=json.dumps({"apiVersion": "v1", "kind": "ConfigMap", **body}))
    assert created.returncode == 0, created.stderr
    assert created.stderr.splitlines() == [
        f'Warning: unknown field "f{i:03}"' for i in range(100)]
    assert not [key for key in json.loads(created.stdout) if key.startswith("f")]


def test_field_validation_names_fields_a_body_sets_twice(api):
    path = "/api/v1/namespaces/default/configmaps"
    body = '{"metadata": {"name": "cm-twice"}, "data": {"a": "1", "a": "2"}, "bogus": 1}'
    json_body = {"Content-Type": "application/json"}
    strict = api.request("POST", path + "?fieldValidation=Strict", data=body,
                         headers=json_body, **ADMIN)
    assert_status(strict, 400, "BadRequest",
                  'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding '
                  'error: duplicate field "data.a", unknown field "bogus"')
    warned = api.request("POST", path, data=body, headers=json_body, **ADMIN)
    assert warned.status_code == 201, warned.text
    assert warned.headers["Warning"] == ('299 - "duplicate field \\"data.a\\"", '
                                         '299 - "unknown field \\"bogus\\""')
    assert warned.json()["data"] == {"a": "2"}  # the last one wins
    ignored = api.request("PUT", path + "/cm-twice?fieldValidation=Ignore", data=body,
                          headers=json_body, **ADMIN)
    assert ignored.status_code == 200 and "Warning" not in ignored.headers, ignored.text


def test_field_validation_on_patches(api):
    path = "/api/v1/namespaces/default/configmaps/cm-patched"
    api.request("POST", "/api/v1/namespaces/default/configmaps",
                json={"metadata": {"name": "cm-patched"}, "data": {"a": "1"}}, **ADMIN)
    merge = {"Content-Type": "application/merge-patch+json"}
    strict = api.request("PATCH", path + "?fieldValidation=Strict", headers=merge,
                         data='{"bogus": 1, "data": {"b": "2"}}', **ADMIN)
    # Upstream's patchers answer 422 on "patch": the patched JSON, the strict error.
    cause = assert_status(strict, 422, "Invalid")["details"]["causes"][0]
    assert cause["field"] == "patch" and cause["message"].startswith('Invalid value: "{')
    assert cause["message"].endswith('}": strict decoding error: unknown field "bogus"')
    assert '\\"bogus\\":1' in cause["message"]
    twice = api.request("PATCH", path + "?fieldValidation=Strict", headers=merge,
                        data='{"data": {"b": "2", "b": "3"}}', **ADMIN)
    assert assert_status(twice, 422, "Invalid")["message"].endswith(
        ': strict decoding error: duplicate field "data.b"')
    json_patch = api.request("PATCH", path + "?fieldValidation=Strict",
                             headers={"Content-Type": "application/json-patch+json"},
                             data='[{"op": "add", "path": "/bogus", "value": 1}]', **ADMIN)
    assert assert_status(json_patch, 422, "Invalid")["message"].endswith(
        ': strict decoding error: unknown field "bogus"')
    assert api.get(path, **ADMIN).json()["data"] == {"a": "1"}  # nothing was written
    warned = api.request("PATCH", path, data='{"bogus": 1, "data": {"b": "2"}}',
                         headers={"Content-Type": "application/strategic-merge-patch+json"},
                         **ADMIN)
    assert warned.status_code == 200
    assert warned.headers["Warning"] == '299 - "unknown field \\"bogus\\""'
    assert "bogus" not in warned.json() and warned.json()["data"] == {"a": "1", "b": "2"}
    ignored = api.request("PATCH", path + "?fieldValidation=Ignore", headers=merge,
                          data='{"bogus": 1}', **ADMIN)
    assert ignored.status_code == 200 and "Warning" not in ignored.headers


def test_aggregated_discovery(api):
    accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
    response = api.get("/api", **ADMIN, headers={"Accept": accept})
    assert response.headers["Content-Type"] == \
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    assert response.headers["Cache-Control"] == "public"
    body = response.json()
    assert body["kind"] == "APIGroupDiscoveryList" and body["metadata"] == {}
    core = body["items"][0]
    assert core["metadata"] == {"creationTimestamp": None}
    resources = {r["resource"]: r for r in core["versions"][0]["resources"]}
    assert resources["configmaps"] == {
        "resource": "configmaps", "responseKind": {"group": "", "version": "", "kind": "ConfigMap"},
        "scope": "Namespaced", "singularResource": "configmap",
        "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update",
                  "watch"], "shortNames": ["cm"]}
    assert {"subresource": "status", "responseKind": {"group": "", "version": "",
                                                      "kind": "Namespace"},
            "verbs": ["get", "patch", "update"]} in resources["namespaces"]["subresources"]
    cached = api.get("/api", **ADMIN, headers={"Accept": accept,
                                               "If-None-Match": response.headers["ETag"]})
    assert cached.status_code == 304
    groups = api.get("/apis", **ADMIN, headers={"Accept": accept}).json()["items"]
    assert "coordination.k8s.io" in [g["metadata"]["name"] for g in groups]
    # kubectl uses it: api-resources lists what aggregated discovery says.
    listed = api.kubectl("api-resources", check=True).stdout
    assert "configmaps" in listed and "leases" in listed
