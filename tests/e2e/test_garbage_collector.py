"""The garbage collector end to end, with kubectl and the Python client: each deletion
policy, blockOwnerDeletion, cycles, custom and cluster-scoped owners, invalid references
and their event, each kind's default policy, and a graph rebuilt after a restart."""

import json
import time

import pytest
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

from kapiserver.testing import KapiserverProcess, assert_status

ADMIN = dict(user="admin", groups=["system:masters"])
NS = "gc"
CM = f"/api/v1/namespaces/{NS}/configmaps"
MERGE = {"Content-Type": "application/merge-patch+json"}
WAIT = 10.0


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    server = KapiserverProcess(str(tmp_path_factory.mktemp("gc")), workers=2).start()
    server.kubectl("create", "namespace", NS, check=True)
    server.kubectl("create", "namespace", f"{NS}-other", check=True)
    yield server
    server.stop()


def post(api, path, body):
    response = api.request("POST", path, json=body, **ADMIN)
    assert response.status_code == 201, response.text
    return response.json()


def get(api, path):
    return api.request("GET", path, **ADMIN)


def ref(obj, block=None, controller=None):
    owner = {"apiVersion": obj["apiVersion"], "kind": obj["kind"],
             "name": obj["metadata"]["name"], "uid": obj["metadata"]["uid"]}
    if controller is not None:
        owner["controller"] = controller
    if block is not None:
        owner["blockOwnerDeletion"] = block
    return owner


def configmap(api, name, owners=(), finalizers=(), namespace=NS):
    meta = {"name": name}
    if owners:
        meta["ownerReferences"] = list(owners)
    if finalizers:
        meta["finalizers"] = list(finalizers)
    return post(api, f"/api/v1/namespaces/{namespace}/configmaps", {"metadata": meta})


def wait_for(check, what, timeout=WAIT):
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"{what}: not after {timeout}s"
        time.sleep(0.05)


def gone(api, path):
    return get(api, path).status_code == 404


def release(api, path):
    """Take the test's finalizer off an object (merge patch)."""
    response = api.request("PATCH", path, data=json.dumps({"metadata": {"finalizers": None}}),
                           headers=MERGE, **ADMIN)
    assert response.status_code in (200, 404), response.text


# -- the deletion policies ------------------------------------------------------------------

def test_kubectl_background_deletes_the_dependents(api):
    owner = configmap(api, "bg-owner")
    for i in range(3):
        configmap(api, f"bg-dep{i}", [ref(owner)])
    result = api.kubectl("delete", "configmap", "bg-owner", "-n", NS, "--cascade=background",
                         check=True)
    assert result.stdout.strip() == 'configmap "bg-owner" deleted'
    wait_for(lambda: all(gone(api, f"{CM}/bg-dep{i}") for i in range(3)), "dependents gone")


def test_kubectl_foreground_waits_for_the_blocking_dependents(api):
    owner = configmap(api, "fg-owner")
    configmap(api, "fg-blocking", [ref(owner, block=True)], ["example.com/hold"])
    configmap(api, "fg-other", [ref(owner)], ["example.com/hold"])
    api.kubectl("delete", "configmap", "fg-owner", "-n", NS, "--cascade=foreground",
                "--wait=false", check=True)
    # The owner stays, marked, while a dependent that blocks it exists; both dependents
    # are deleted (each waits for its own finalizer).
    wait_for(lambda: all(get(api, f"{CM}/{name}").json()["metadata"].get("deletionTimestamp")
                         for name in ("fg-blocking", "fg-other")), "dependents deleted")
    meta = get(api, f"{CM}/fg-owner").json()["metadata"]
    assert meta["deletionTimestamp"] and meta["finalizers"] == ["foregroundDeletion"]
    release(api, f"{CM}/fg-other")  # not blocking: the owner still waits
    wait_for(lambda: gone(api, f"{CM}/fg-other"), "non-blocking dependent gone")
    time.sleep(0.5)
    assert get(api, f"{CM}/fg-owner").status_code == 200
    release(api, f"{CM}/fg-blocking")
    wait_for(lambda: gone(api, f"{CM}/fg-owner"), "owner gone")


def test_kubectl_foreground_waits_for_the_whole_tree(api):
    owner = configmap(api, "tree-owner")
    child = configmap(api, "tree-child", [ref(owner, block=True)])
    configmap(api, "tree-grandchild", [ref(child, block=True)], ["example.com/hold"])
    api.kubectl("delete", "configmap", "tree-owner", "-n", NS, "--cascade=foreground",
                "--wait=false", check=True)
    # The child is deleted in the foreground too: it waits for the grandchild.
    wait_for(lambda: get(api, f"{CM}/tree-child").json()["metadata"].get("finalizers") ==
             ["foregroundDeletion"], "child deleted in the foreground")
    assert get(api, f"{CM}/tree-owner").status_code == 200
    release(api, f"{CM}/tree-grandchild")
    wait_for(lambda: gone(api, f"{CM}/tree-owner"), "the whole tree gone")
    assert gone(api, f"{CM}/tree-child") and gone(api, f"{CM}/tree-grandchild")


def test_kubectl_orphan_keeps_the_dependents_without_their_reference(api):
    owner = configmap(api, "or-owner")
    other = configmap(api, "or-other")
    configmap(api, "or-dep", [ref(owner), ref(other)])
    result = api.kubectl("delete", "configmap", "or-owner", "-n", NS, "--cascade=orphan",
                         check=True)
    assert result.stdout.strip() == 'configmap "or-owner" deleted'
    assert gone(api, f"{CM}/or-owner")  # kubectl waited for it: the finalizer is off
    meta = get(api, f"{CM}/or-dep").json()["metadata"]
    assert meta["ownerReferences"] == [ref(other)]


def test_python_client_policies_and_the_finalizers_they_set(api):
    core = k8s.CoreV1Api(api.python_client())
    owner = configmap(api, "py-owner", finalizers=["example.com/hold"])
    configmap(api, "py-dep", [ref(owner)])
    # The kept object comes back (the client declares a Status: it gives the raw dict).
    deleted = core.delete_namespaced_config_map(
        "py-owner", NS, body=k8s.V1DeleteOptions(propagation_policy="Orphan"))
    assert deleted["metadata"]["finalizers"] == ["example.com/hold", "orphan"]
    wait_for(lambda: get(api, f"{CM}/py-owner").json()["metadata"]["finalizers"] ==
             ["example.com/hold"], "the orphan finalizer done")
    assert "ownerReferences" not in get(api, f"{CM}/py-dep").json()["metadata"]
    # Another DELETE changes the policy of an object already being deleted; with no
    # dependent left, the collector takes the foreground finalizer off at once.
    deleted = core.delete_namespaced_config_map("py-owner", NS, propagation_policy="Foreground")
    assert deleted["metadata"]["finalizers"] == ["example.com/hold", "foregroundDeletion"]
    wait_for(lambda: get(api, f"{CM}/py-owner").json()["metadata"]["finalizers"] ==
             ["example.com/hold"], "foregroundDeletion removed")
    release(api, f"{CM}/py-owner")
    assert get(api, f"{CM}/py-dep").status_code == 200
    # The deprecated option: orphanDependents=false deletes in the background, with 202
    # for an object that is kept.
    kept = configmap(api, "py-kept", finalizers=["example.com/hold"])
    response = api.request("DELETE", f"{CM}/py-kept", json={"orphanDependents": False},
                           **ADMIN)
    assert response.status_code == 202, response.text
    assert response.json()["metadata"]["finalizers"] == ["example.com/hold"]
    release(api, f"{CM}/py-kept")
    assert kept


def test_bad_delete_options_are_refused_as_upstream_words_it(api):
    configmap(api, "bad-options")
    body = assert_status(api.request("DELETE", f"{CM}/bad-options", json={
        "propagationPolicy": "Sideways"}, **ADMIN), 422, "Invalid")
    assert body["message"] == (
        'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: '
        '"Sideways": supported values: "Foreground", "Background", "Orphan", "nil"')
    assert body["details"] == {"group": "meta.k8s.io", "kind": "DeleteOptions", "causes": [{
        "reason": "FieldValueNotSupported", "field": "propagationPolicy",
        "message": 'Unsupported value: "Sideways": supported values: "Foreground", '
                   '"Background", "Orphan", "nil"'}]}
    core = k8s.CoreV1Api(api.python_client())
    with pytest.raises(ApiException) as info:
        core.delete_namespaced_config_map("bad-options", NS, body=k8s.V1DeleteOptions(
            propagation_policy="Orphan", orphan_dependents=True))
    assert info.value.status == 422
    assert json.loads(info.value.body)["message"] == (
        'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": '
        'orphanDependents and deletionPropagation cannot be both set')
    assert get(api, f"{CM}/bad-options").status_code == 200  # untouched


def test_deletecollection_passes_the_policy_to_every_object(api):
    core = k8s.CoreV1Api(api.python_client())
    owners = [configmap(api, f"coll-{i}", finalizers=["example.com/hold"]) for i in range(2)]
    core.delete_collection_namespaced_config_map(
        NS, label_selector="", field_selector="metadata.name=coll-0",
        propagation_policy="Orphan")
    core.delete_collection_namespaced_config_map(
        NS, field_selector="metadata.name=coll-1", propagation_policy="Foreground")
    assert get(api, f"{CM}/coll-0").json()["metadata"]["finalizers"][-1] in (
        "orphan", "example.com/hold")
    wait_for(lambda: get(api, f"{CM}/coll-0").json()["metadata"]["finalizers"] ==
             ["example.com/hold"], "the orphan finalizer done")
    wait_for(lambda: get(api, f"{CM}/coll-1").json()["metadata"]["finalizers"] ==
             ["example.com/hold"], "the foreground finalizer done")
    for owner in owners:
        release(api, f"{CM}/{owner['metadata']['name']}")


# -- each kind's default ----------------------------------------------------------------------

def test_jobs_orphan_their_pods_by_default_and_say_so(api):
    job = post(api, f"/apis/batch/v1/namespaces/{NS}/jobs", {
        "metadata": {"name": "old-style"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
            {"name": "c", "image": "busybox"}]}}}})
    wait_for(lambda: get(api, f"/api/v1/namespaces/{NS}/serviceaccounts/default")
             .status_code == 200, "default service account")
    pod = post(api, f"/api/v1/namespaces/{NS}/pods", {
        "metadata": {"name": "old-style-pod", "ownerReferences": [
            ref(job, block=True, controller=True)]},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    response = api.request("DELETE", f"/apis/batch/v1/namespaces/{NS}/jobs/old-style",
                           **ADMIN)
    assert response.status_code == 200
    assert response.headers["Warning"] == (
        '299 - "child pods are preserved by default when jobs are deleted; set '
        'propagationPolicy=Background to remove them or set propagationPolicy=Orphan to '
        'suppress this warning"')
    wait_for(lambda: gone(api, f"/apis/batch/v1/namespaces/{NS}/jobs/old-style"), "job gone")
    kept = get(api, f"/api/v1/namespaces/{NS}/pods/old-style-pod").json()
    assert kept["metadata"]["uid"] == pod["metadata"]["uid"]
    assert "ownerReferences" not in kept["metadata"]
    # kubectl asks for the background: the pods go with the job, without the warning.
    job = post(api, f"/apis/batch/v1/namespaces/{NS}/jobs", {
        "metadata": {"name": "new-style"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
            {"name": "c", "image": "busybox"}]}}}})
    post(api, f"/api/v1/namespaces/{NS}/pods", {
        "metadata": {"name": "new-style-pod", "ownerReferences": [ref(job, block=True)]},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    result = api.kubectl("delete", "job", "new-style", "-n", NS, check=True)
    assert "Warning" not in result.stderr
    wait_for(lambda: gone(api, f"/api/v1/namespaces/{NS}/pods/new-style-pod"), "pod gone")


def test_replication_controllers_orphan_by_default(api):
    rc = post(api, f"/api/v1/namespaces/{NS}/replicationcontrollers", {
        "metadata": {"name": "rc"}, "spec": {"replicas": 0, "selector": {"app": "rc"},
                                             "template": {"metadata": {"labels": {"app": "rc"}},
                                                          "spec": {"containers": [
                                                              {"name": "c", "image": "x"}]}}}})
    configmap(api, "rc-dep", [ref(rc)])
    deleted = api.request("DELETE", f"/api/v1/namespaces/{NS}/replicationcontrollers/rc",
                          **ADMIN).json()
    assert deleted["metadata"]["finalizers"] == ["orphan"]
    wait_for(lambda: gone(api, f"/api/v1/namespaces/{NS}/replicationcontrollers/rc"),
             "rc gone")
    assert "ownerReferences" not in get(api, f"{CM}/rc-dep").json()["metadata"]


# -- references -------------------------------------------------------------------------------

def test_a_dependent_whose_owner_never_existed_or_was_replaced_goes(api):
    owner = configmap(api, "replaced")
    stale = ref(owner)
    api.request("DELETE", f"{CM}/replaced", **ADMIN)
    configmap(api, "replaced")  # same name, another uid
    configmap(api, "stale-dep", [stale])
    configmap(api, "never-dep", [dict(stale, name="never", uid="0000-never")])
    wait_for(lambda: gone(api, f"{CM}/stale-dep") and gone(api, f"{CM}/never-dep"),
             "dependents of absent owners gone")
    assert get(api, f"{CM}/replaced").status_code == 200


def test_one_owner_left_keeps_the_dependent_and_drops_the_gone_reference(api):
    first, second = configmap(api, "two-a"), configmap(api, "two-b")
    configmap(api, "two-dep", [ref(first), ref(second)])
    api.kubectl("delete", "configmap", "two-a", "-n", NS, check=True)
    wait_for(lambda: get(api, f"{CM}/two-dep").json()["metadata"].get("ownerReferences") ==
             [ref(second)], "the gone owner's reference removed")
    api.kubectl("delete", "configmap", "two-b", "-n", NS, check=True)
    wait_for(lambda: gone(api, f"{CM}/two-dep"), "dependent gone with its last owner")


def test_a_cycle_in_the_foreground_ends(api):
    a = configmap(api, "cycle-a")
    b = configmap(api, "cycle-b", [ref(a, block=True)])
    response = api.request("PATCH", f"{CM}/cycle-a", data=json.dumps(
        {"metadata": {"ownerReferences": [ref(b, block=True)]}}), headers=MERGE, **ADMIN)
    assert response.status_code == 200
    api.kubectl("delete", "configmap", "cycle-a", "-n", NS, "--cascade=foreground",
                "--timeout=20s", check=True)
    wait_for(lambda: gone(api, f"{CM}/cycle-a") and gone(api, f"{CM}/cycle-b"),
             "both gone")


def test_a_custom_resource_owns_built_in_objects(api):
    api.kubectl("apply", "-f", "-", input=json.dumps({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "apps.gc.example.com"},
        "spec": {"group": "gc.example.com", "scope": "Namespaced",
                 "names": {"plural": "apps", "singular": "app", "kind": "App"},
                 "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                     "openAPIV3Schema": {"type": "object",
                                         "x-kubernetes-preserve-unknown-fields": True}}}]}}),
                check=True)
    api.wait_established("apps.gc.example.com")
    apps = f"/apis/gc.example.com/v1/namespaces/{NS}/apps"
    wait_for(lambda: get(api, apps).status_code == 200, "custom resource served")
    app = post(api, apps, {"apiVersion": "gc.example.com/v1", "kind": "App",
                           "metadata": {"name": "web"}})
    configmap(api, "web-config", [ref(app, block=True, controller=True)])
    post(api, f"/api/v1/namespaces/{NS}/secrets", {"metadata": {
        "name": "web-secret", "ownerReferences": [ref(app)]}})
    # ... and a custom resource owned by a built-in object.
    holder = configmap(api, "app-holder")
    post(api, apps, {"apiVersion": "gc.example.com/v1", "kind": "App",
                     "metadata": {"name": "held-app", "ownerReferences": [ref(holder)]}})
    api.kubectl("delete", "app", "web", "-n", NS, "--cascade=foreground", check=True)
    assert gone(api, f"{CM}/web-config")
    wait_for(lambda: gone(api, f"/api/v1/namespaces/{NS}/secrets/web-secret"), "secret gone")
    api.kubectl("delete", "configmap", "app-holder", "-n", NS, check=True)
    wait_for(lambda: gone(api, f"{apps}/held-app"), "the owned custom resource gone")


def test_a_cluster_scoped_owner_owns_namespaced_objects(api):
    role = post(api, "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
        "metadata": {"name": "gc-owner-role"}, "rules": []})
    configmap(api, "by-role", [ref(role)])
    configmap(api, "by-role-elsewhere", [ref(role)], namespace=f"{NS}-other")
    binding = post(api, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
        "metadata": {"name": "gc-owned-binding", "ownerReferences": [ref(role)]},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "gc-owner-role"}})
    time.sleep(0.5)
    assert get(api, f"{CM}/by-role").status_code == 200  # the owner exists: kept
    api.kubectl("delete", "clusterrole", "gc-owner-role", check=True)
    wait_for(lambda: gone(api, f"{CM}/by-role") and gone(
        api, f"/api/v1/namespaces/{NS}-other/configmaps/by-role-elsewhere") and gone(
        api, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/gc-owned-binding"),
        "the namespaced and cluster-scoped dependents gone")
    assert binding


def events_about(api, namespace, name):
    items = get(api, f"/api/v1/namespaces/{namespace}/events?fieldSelector="
                     f"involvedObject.name%3D{name}").json()["items"]
    return [e for e in items if e["reason"] == "OwnerRefInvalidNamespace"]


def test_an_owner_in_another_namespace_is_reported_and_treated_as_absent(api):
    owner = configmap(api, "elsewhere-owner", namespace=f"{NS}-other")
    dep = configmap(api, "cross-dep", [ref(owner)])
    wait_for(lambda: gone(api, f"{CM}/cross-dep"), "the cross-namespace dependent gone")
    wait_for(lambda: events_about(api, NS, "cross-dep"), "the event")
    (event,) = events_about(api, NS, "cross-dep")
    uid = owner["metadata"]["uid"]
    assert event["type"] == "Warning"
    assert event["message"] == (f'ownerRef [v1/ConfigMap, namespace: {NS}, name: '
                                f'elsewhere-owner, uid: {uid}] does not exist in namespace '
                                f'"{NS}"')
    assert event["involvedObject"] == {"kind": "ConfigMap", "namespace": NS,
                                       "name": "cross-dep", "uid": dep["metadata"]["uid"],
                                       "apiVersion": "v1"}
    assert event["source"] == {"component": "garbage-collector-controller"}
    assert get(api, f"/api/v1/namespaces/{NS}-other/configmaps/elsewhere-owner")\
        .status_code == 200
    # kubectl finds it as the documentation says.
    listed = api.kubectl("get", "events", "-A", "--field-selector",
                         "reason=OwnerRefInvalidNamespace", "-o", "name", check=True)
    assert listed.stdout.strip()


def test_a_cluster_scoped_dependent_of_a_namespaced_owner_is_reported_and_kept(api):
    owner = configmap(api, "ns-owner")
    role = post(api, "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
        "metadata": {"name": "gc-invalid-dep", "ownerReferences": [ref(owner)]},
        "rules": []})
    wait_for(lambda: events_about(api, "default", "gc-invalid-dep"), "the event")
    (event,) = events_about(api, "default", "gc-invalid-dep")
    assert event["message"] == (f'ownerRef [v1/ConfigMap, namespace: , name: ns-owner, uid: '
                                f'{owner["metadata"]["uid"]}] does not exist in namespace ""')
    assert event["involvedObject"]["kind"] == "ClusterRole"
    assert "namespace" not in event["involvedObject"]
    api.kubectl("delete", "configmap", "ns-owner", "-n", NS, check=True)
    time.sleep(1.0)
    kept = get(api, "/apis/rbac.authorization.k8s.io/v1/clusterroles/gc-invalid-dep").json()
    assert kept["metadata"]["uid"] == role["metadata"]["uid"]


def test_namespace_deletion_deletes_in_the_background(api):
    api.kubectl("create", "namespace", "gc-going", check=True)
    owner = configmap(api, "outside-owner")
    # A dependent inside the namespace, of an owner outside: deleted with the namespace.
    configmap(api, "inside", [dict(ref(owner), name="outside-owner")], namespace="gc-going")
    api.kubectl("delete", "namespace", "gc-going", "--timeout=30s", check=True)
    assert gone(api, "/api/v1/namespaces/gc-going")


def test_a_namespace_owns_cluster_scoped_objects(api):
    roles = "/apis/rbac.authorization.k8s.io/v1/clusterroles"
    for name, cascade in (("gc-ns-background", "background"), ("gc-ns-orphan", "orphan")):
        namespace = post(api, "/api/v1/namespaces", {"metadata": {"name": name}})
        post(api, roles, {"metadata": {"name": f"{name}-role",
                                       "ownerReferences": [ref(namespace)]}, "rules": []})
        api.kubectl("delete", "namespace", name, f"--cascade={cascade}", "--timeout=30s",
                    check=True)
        assert gone(api, f"/api/v1/namespaces/{name}")
    wait_for(lambda: gone(api, f"{roles}/gc-ns-background-role"), "the namespace's role gone")
    kept = get(api, f"{roles}/gc-ns-orphan-role").json()
    assert "ownerReferences" not in kept["metadata"]


# -- restarts -------------------------------------------------------------------------------------

def test_the_graph_is_rebuilt_after_a_restart(tmp_path):
    workdir = str(tmp_path / "restarted")
    off = KapiserverProcess(workdir, {"controllers": "*,-garbage-collector-controller"}).start()
    try:
        off.kubectl("create", "namespace", NS, check=True)
        owner = configmap(off, "owner")
        configmap(off, "dep", [ref(owner)])
        waiting = configmap(off, "waiting")
        configmap(off, "holding", [ref(waiting, block=True)], ["example.com/hold"])
        assert off.request("DELETE", f"{CM}/owner", **ADMIN).status_code == 200
        assert off.request("DELETE", f"{CM}/waiting", json={"propagationPolicy": "Foreground"},
                           **ADMIN).status_code == 200
        time.sleep(1.0)
        assert get(off, f"{CM}/dep").status_code == 200  # nobody collects
    finally:
        off.stop()
    on = KapiserverProcess(workdir, {"controllers": "*"}).start()
    try:
        wait_for(lambda: gone(on, f"{CM}/dep"), "the dependent of the owner deleted meanwhile")
        wait_for(lambda: get(on, f"{CM}/holding").json()["metadata"].get("deletionTimestamp"),
                 "the foreground deletion goes on")
        release(on, f"{CM}/holding")
        wait_for(lambda: gone(on, f"{CM}/waiting"), "the owner waiting before the restart")
    finally:
        on.stop()


def test_controllers_off_by_their_former_names_and_unknown_names_refused(tmp_path):
    server = KapiserverProcess(str(tmp_path / "off"), {"controllers": "*,-garbagecollector"})
    server.start()
    try:
        owner = configmap(server, "owner", namespace="default")
        configmap(server, "dep", [ref(owner)], namespace="default")
        server.request("DELETE", "/api/v1/namespaces/default/configmaps/owner", **ADMIN)
        time.sleep(1.0)
        assert get(server, "/api/v1/namespaces/default/configmaps/dep").status_code == 200
        assert "garbage-collector-controller" not in server.log().split(
            "controllers: ")[-1].splitlines()[0]
    finally:
        server.stop()
    bad = KapiserverProcess(str(tmp_path / "bad"), {"controllers": "*,-garbage-collector"})
    with pytest.raises(RuntimeError) as info:
        bad.start(timeout=20)
    assert "--controllers: unknown controller(s) -garbage-collector; valid choices: *, " in \
        str(info.value)
