"""core/v1 Pods end to end: kubectl and the Python client against a real server —
create, Tables, watch, graceful deletion, status, binding, eviction, ephemeral containers,
and the kubelet subresources of pods no kubelet runs."""

import json
import os
import pathlib
import select
import subprocess
import time

import pytest

from kapiserver.testing import assert_status

ADMIN = dict(user="admin", groups=["system:masters"])
NS = "pods-e2e"
PODS = f"/api/v1/namespaces/{NS}/pods"
REFERENCE = pathlib.Path("/work/shared/reference")
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    server = KapiserverProcess(str(tmp_path_factory.mktemp("pods")), workers=1).start()
    server.request("POST", "/api/v1/namespaces", json={
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}, **ADMIN)
    yield server
    server.stop()


def manifest(name: str, **spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}], **spec}}


def create(api, name: str, **spec) -> dict:
    response = api.request("POST", PODS, json=manifest(name, **spec), **ADMIN)
    assert response.status_code == 201, response.text
    return response.json()


def bind(api, name: str, node: str = "node-1", **meta):
    return api.request("POST", f"{PODS}/{name}/binding", json={
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": name, **meta},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node}}, **ADMIN)


def get(api, name: str) -> dict:
    response = api.get(f"{PODS}/{name}", **ADMIN)
    assert response.status_code == 200, response.text
    return response.json()


def kubectl(api, *args, **kwargs):
    return api.kubectl("-n", NS, *args, **kwargs)


# -- discovery ------------------------------------------------------------------------------------

def test_discovery_lists_pods_their_subresources_and_bindings(api):
    expected = json.loads((REFERENCE / "discovery-api-v1.json").read_text())["response"]["body"]
    wanted = {r["name"]: r for r in expected["resources"]
              if r["name"].startswith("pods") or r["name"] == "bindings"}
    served = {r["name"]: r for r in api.get("/api/v1", **ADMIN).json()["resources"]}
    assert {name: served.get(name) for name in wanted} == wanted


def test_kubectl_api_resources_explain_and_get_all(api):
    resources = kubectl(api, "api-resources", "--api-group=", check=True).stdout
    assert any(line.split()[:2] == ["pods", "po"] for line in resources.splitlines())
    assert any(line.split()[0] == "bindings" for line in resources.splitlines())
    explained = kubectl(api, "explain", "pod.spec.containers", check=True).stdout
    assert "FIELD: containers <[]Container>" in explained
    create(api, "listed")
    assert "pod/listed" in kubectl(api, "get", "all", check=True).stdout


# -- create, Table, watch -----------------------------------------------------------------------

def test_kubectl_run_and_get_pods(api):
    result = kubectl(api, "run", "web", "--image=nginx")
    assert (result.returncode, result.stdout) == (0, "pod/web created\n"), result.stderr
    pod = get(api, "web")
    assert pod["metadata"]["uid"] and pod["metadata"]["creationTimestamp"]
    assert pod["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    assert pod["spec"]["containers"][0]["imagePullPolicy"] == "Always"
    lines = kubectl(api, "get", "pods", "web", check=True).stdout.splitlines()
    assert lines[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert lines[1].split()[:4] == ["web", "0/1", "Pending", "0"]
    wide = kubectl(api, "get", "pods", "web", "-o", "wide", check=True).stdout.splitlines()
    assert wide[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE",
                               "NOMINATED", "NODE", "READINESS", "GATES"]
    assert wide[1].split()[5:] == ["<none>", "<none>", "<none>", "<none>"]


def test_creates_warn_as_upstream(api):
    pod = manifest("my.pod", nodeSelector={"beta.kubernetes.io/os": "linux"})
    result = kubectl(api, "create", "-f", "-", input=json.dumps(pod))
    assert (result.returncode, result.stdout) == (0, "pod/my.pod created\n"), result.stderr
    assert result.stderr.splitlines() == [
        "Warning: metadata.name: this is used in the Pod's hostname, which can result in "
        "surprising behavior; a DNS label is recommended: [must not contain dots]",
        'Warning: spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use '
        '"kubernetes.io/os" instead']


def test_table_matches_upstreams_columns_and_cells(api):
    expected = json.loads((REFERENCE / "wide/kinds/pods-table-wide.json").read_text())
    create(api, "tabled")
    assert bind(api, "tabled", "node-ref1").status_code == 201
    table = api.get(f"{PODS}/tabled", headers={"Accept": TABLE}, **ADMIN).json()
    body = expected["response"]["body"]
    assert table["columnDefinitions"] == body["columnDefinitions"]
    cells = table["rows"][0]["cells"]
    assert cells[:4] + cells[5:] == ["tabled"] + body["rows"][0]["cells"][1:4] + \
        body["rows"][0]["cells"][5:]
    assert table["rows"][0]["object"]["kind"] == "PartialObjectMetadata"


def test_finished_pods_rows_carry_the_completed_condition(api):
    create(api, "finished")
    pod = get(api, "finished")
    pod["status"]["phase"] = "Succeeded"
    assert api.request("PUT", f"{PODS}/finished/status", json=pod, **ADMIN).status_code == 200
    row = api.get(f"{PODS}/finished", headers={"Accept": TABLE}, **ADMIN).json()["rows"][0]
    assert list(row) == ["cells", "conditions", "object"]
    assert row["conditions"] == [{"type": "Completed", "status": "True", "reason": "Succeeded",
                                  "message": "The pod has completed successfully."}]
    assert row["cells"][2] == "Succeeded"


def test_get_pods_watch_shows_each_change(api):
    create(api, "watched")
    process = subprocess.Popen(
        ["kubectl", "--kubeconfig", api.kubeconfig(), "-n", NS, "get", "pods", "watched", "-w",
         "--request-timeout=30s"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "Pending" in _read_until(process, "Pending", 10)
        assert bind(api, "watched").status_code == 201
        assert api.request("DELETE", f"{PODS}/watched", **ADMIN).status_code == 200
        output = _read_until(process, "Terminating", 10)
        assert "Terminating" in output
    finally:
        process.terminate()
        process.wait(10)


def _read_until(process, needle: str, timeout: float) -> str:
    output, deadline = "", time.monotonic() + timeout
    while time.monotonic() < deadline and needle not in output:
        ready, _, _ = select.select([process.stdout], [], [], 0.1)
        if ready:
            output += os.read(process.stdout.fileno(), 4096).decode()
    return output


def test_field_selectors(api):
    create(api, "selected-a")
    create(api, "selected-b")
    assert bind(api, "selected-b", "node-sel").status_code == 201
    listed = api.get(f"{PODS}?fieldSelector=spec.nodeName%3Dnode-sel", **ADMIN).json()
    assert [p["metadata"]["name"] for p in listed["items"]] == ["selected-b"]
    legacy = api.get(f"{PODS}?fieldSelector=spec.host%3Dnode-sel", **ADMIN).json()
    assert [p["metadata"]["name"] for p in legacy["items"]] == ["selected-b"]
    names = kubectl(api, "get", "pods", "--field-selector",
                    "status.phase=Pending,spec.restartPolicy=Always,spec.hostNetwork=false",
                    "-o", "name", check=True).stdout.split()
    assert {"pod/selected-a", "pod/selected-b"} <= set(names)
    assert_status(api.get(f"{PODS}?fieldSelector=spec.foo%3Dx", **ADMIN), 400, "BadRequest",
                  "field label not supported: spec.foo")


# -- graceful deletion ------------------------------------------------------------------------

def test_an_unbound_pod_is_deleted_at_once(api):
    create(api, "unbound")
    response = api.request("DELETE", f"{PODS}/unbound", **ADMIN)
    assert response.status_code == 200
    assert response.json()["kind"] == "Pod"
    assert response.json()["metadata"]["deletionGracePeriodSeconds"] == 0
    assert api.get(f"{PODS}/unbound", **ADMIN).status_code == 404


def test_a_bound_pod_waits_for_its_grace_period(api):
    create(api, "graceful", terminationGracePeriodSeconds=45)
    assert bind(api, "graceful").status_code == 201
    response = api.request("DELETE", f"{PODS}/graceful", **ADMIN)
    assert response.status_code == 200
    meta = response.json()["metadata"]
    assert meta["deletionGracePeriodSeconds"] == 45 and meta["deletionTimestamp"]
    assert get(api, "graceful")["metadata"]["deletionGracePeriodSeconds"] == 45
    # Still there while the period runs: updates keep it.
    assert kubectl(api, "label", "pod", "graceful", "x=y").returncode == 0
    assert kubectl(api, "get", "pod", "graceful", check=True).stdout.split()[7] == "Terminating"
    shorter = api.request("DELETE", f"{PODS}/graceful?gracePeriodSeconds=5", **ADMIN)
    assert shorter.json()["metadata"]["deletionGracePeriodSeconds"] == 5
    result = kubectl(api, "delete", "pod", "graceful", "--grace-period=0", "--force")
    assert result.returncode == 0, result.stderr
    assert api.get(f"{PODS}/graceful", **ADMIN).status_code == 404


def test_typed_clients_send_delete_options_in_protobuf(api):
    from kapiserver.runtime import protobuf

    create(api, "typed")
    assert bind(api, "typed").status_code == 201
    body = protobuf.encode({"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1",
                            "gracePeriodSeconds": 0})
    response = api.request("DELETE", f"{PODS}/typed", data=body,
                           headers={"Content-Type": protobuf.CONTENT_TYPE}, **ADMIN)
    assert response.status_code == 200, response.text
    assert api.get(f"{PODS}/typed", **ADMIN).status_code == 404


def test_kubectl_delete_waits_for_an_unbound_pod(api):
    create(api, "removed")
    result = kubectl(api, "delete", "pod", "removed", timeout=30)
    assert (result.returncode, result.stdout) == (0, 'pod "removed" deleted\n'), result.stderr


def test_delete_preconditions_and_bad_options(api):
    create(api, "guarded")
    response = api.request("DELETE", f"{PODS}/guarded", json={
        "kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": "nope"}}, **ADMIN)
    uid = get(api, "guarded")["metadata"]["uid"]
    assert_status(response, 409, "Conflict",
                  f'Operation cannot be fulfilled on Pod "guarded": the UID in the '
                  f'precondition (nope) does not match the UID in record ({uid}). The object '
                  'might have been deleted and then recreated')
    assert_status(api.request("DELETE", f"{PODS}/guarded?gracePeriodSeconds=x", **ADMIN),
                  400, "BadRequest", 'strconv.ParseInt: parsing "x": invalid syntax')
    assert get(api, "guarded")["metadata"].get("deletionTimestamp") is None


def test_python_client_delete_collection_and_dry_run(api):
    from kubernetes import client

    core = client.CoreV1Api(api.python_client())
    for name in ("coll-a", "coll-b"):
        create(api, name)
    assert bind(api, "coll-b").status_code == 201
    core.delete_namespaced_pod("coll-a", NS, dry_run="All")
    assert core.read_namespaced_pod("coll-a", NS).metadata.deletion_timestamp is None
    core.delete_collection_namespaced_pod(NS, label_selector="app in (coll-a,coll-b)")
    assert api.get(f"{PODS}/coll-a", **ADMIN).status_code == 404
    # The bound one waits for its kubelet.
    assert core.read_namespaced_pod("coll-b", NS).metadata.deletion_grace_period_seconds == 30
    core.delete_namespaced_pod("coll-b", NS, grace_period_seconds=0)
    assert api.get(f"{PODS}/coll-b", **ADMIN).status_code == 404


# -- status ----------------------------------------------------------------------------------

def test_status_writes_only_the_status(api):
    from kubernetes import client

    core = client.CoreV1Api(api.python_client())
    create(api, "stat")
    patched = core.patch_namespaced_pod_status("stat", NS, {
        "spec": {"nodeName": "sneaky"},
        "status": {"phase": "Running", "podIP": "10.1.2.3", "podIPs": [{"ip": "10.1.2.3"}]}})
    assert patched.status.phase == "Running" and patched.spec.node_name is None
    assert patched.status.qos_class == "BestEffort"
    assert core.read_namespaced_pod_status("stat", NS).status.pod_ip == "10.1.2.3"
    by_ip = api.get(f"{PODS}?fieldSelector=status.podIP%3D10.1.2.3", **ADMIN).json()
    assert [p["metadata"]["name"] for p in by_ip["items"]] == ["stat"]
    # The main resource keeps the status as it is.
    pod = get(api, "stat")
    pod["status"]["phase"] = "Failed"
    pod["metadata"]["labels"]["changed"] = "yes"
    updated = api.request("PUT", f"{PODS}/stat", json=pod, **ADMIN).json()
    assert updated["status"]["phase"] == "Running"
    assert updated["metadata"]["labels"]["changed"] == "yes"


def test_spec_updates_are_refused_as_upstream(api):
    create(api, "immutable")
    response = api.request("PATCH", f"{PODS}/immutable", data=json.dumps(
        {"spec": {"restartPolicy": "Never"}}),
        headers={"Content-Type": "application/merge-patch+json"}, **ADMIN)
    body = assert_status(response, 422, "Invalid")
    assert body["message"].startswith(
        'Pod "immutable" is invalid: spec: Forbidden: pod updates may not change fields other '
        "than `spec.containers[*].image`")
    image = api.request("PATCH", f"{PODS}/immutable", data=json.dumps(
        {"spec": {"containers": [{"name": "app", "image": "nginx:1.28"}]}}),
        headers={"Content-Type": "application/strategic-merge-patch+json"}, **ADMIN)
    assert image.status_code == 200, image.text
    assert image.json()["spec"]["containers"][0]["image"] == "nginx:1.28"


def test_invalid_pod_is_refused_with_upstreams_causes(api):
    exchange = json.loads((REFERENCE / "wide/kinds/pods-invalid.json").read_text())
    response = api.request("POST", PODS, json=exchange["request"]["body"], **ADMIN)
    assert (response.status_code, response.json()) == \
        (exchange["response"]["status"], exchange["response"]["body"])


# -- binding ----------------------------------------------------------------------------------

def test_binding_as_upstream(api):
    exchange = json.loads((REFERENCE / "wide/kinds/pods-binding.json").read_text())
    after = json.loads((REFERENCE / "wide/kinds/pods-after-binding.json").read_text())
    created = create(api, "p1")
    body = exchange["request"]["body"]
    response = api.request("POST", f"{PODS}/p1/binding", json=body, **ADMIN)
    assert (response.status_code, response.json()) == \
        (exchange["response"]["status"], exchange["response"]["body"])
    pod = get(api, "p1")
    expected = after["response"]["body"]
    assert pod["spec"]["nodeName"] == expected["spec"]["nodeName"]
    [condition] = pod["status"]["conditions"]
    assert set(condition) == set(expected["status"]["conditions"][0])
    assert (condition["type"], condition["status"], condition["lastProbeTime"]) == \
        ("PodScheduled", "True", None)
    assert list(pod["status"]) == list(expected["status"])
    # Binding writes no field ownership of its own.
    assert pod["metadata"]["managedFields"] == created["metadata"]["managedFields"]
    again = api.request("POST", f"{PODS}/p1/binding", json=body, **ADMIN)
    assert_status(again, 409, "Conflict", 'Operation cannot be fulfilled on pods/binding "p1": '
                                          'pod p1 is already assigned to node "node-ref1"',
                  {"name": "p1", "kind": "pods/binding"})


def test_binding_errors(api):
    create(api, "b-errors")
    mismatch = api.request("POST", f"{PODS}/b-errors/binding", json={
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "other"},
        "target": {"name": "n"}}, **ADMIN)
    assert_status(mismatch, 400, "BadRequest", "name in URL does not match name in Binding "
                                               "object")
    invalid = api.request("POST", f"{PODS}/b-errors/binding", json={
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "b-errors"},
        "target": {"kind": "Pod"}}, **ADMIN)
    body = assert_status(invalid, 422, "Invalid", 'Binding "b-errors" is invalid: '
                         '[target.kind: Unsupported value: "Pod": supported values: "Node", '
                         '"<empty>", target.name: Required value]')
    assert [(c["reason"], c["field"]) for c in body["details"]["causes"]] == [
        ("FieldValueNotSupported", "target.kind"), ("FieldValueRequired", "target.name")]
    stale = bind(api, "b-errors", uid="not-the-uid")
    body = assert_status(stale, 409, "Conflict")
    assert "Precondition failed: UID in precondition: not-the-uid" in body["message"]
    assert_status(bind(api, "missing"), 404, "NotFound", 'pods "missing" not found')
    assert get(api, "b-errors")["spec"].get("nodeName") is None


def test_legacy_bindings_and_the_python_client(api):
    from kubernetes import client

    core = client.CoreV1Api(api.python_client())
    create(api, "legacy")
    response = api.request("POST", f"/api/v1/namespaces/{NS}/bindings", json={
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "legacy", "uid": "ignored"},
        "target": {"kind": "Node", "name": "node-legacy"}}, **ADMIN)
    assert response.status_code == 201, response.text
    assert get(api, "legacy")["spec"]["nodeName"] == "node-legacy"
    create(api, "pyclient")
    body = client.V1Binding(metadata=client.V1ObjectMeta(name="pyclient"),
                            target=client.V1ObjectReference(kind="Node", name="node-py"))
    # The client cannot read a Status as a V1Binding: ask for the raw answer.
    result = core.create_namespaced_pod_binding("pyclient", NS, body, _preload_content=False)
    assert json.loads(result.data)["status"] == "Success"
    assert core.read_namespaced_pod("pyclient", NS).spec.node_name == "node-py"


# -- eviction ------------------------------------------------------------------------------------

def test_eviction_deletes_a_pending_pod_through_the_python_client(api):
    from kubernetes import client

    core = client.CoreV1Api(api.python_client())
    create(api, "evicted")
    eviction = client.V1Eviction(metadata=client.V1ObjectMeta(name="evicted", namespace=NS))
    core.create_namespaced_pod_eviction("evicted", NS, eviction, _preload_content=False)
    assert api.get(f"{PODS}/evicted", **ADMIN).status_code == 404


def test_eviction_bodies_and_errors(api):
    create(api, "ev-beta")
    dry = api.request("POST", f"{PODS}/ev-beta/eviction", json={
        "apiVersion": "policy/v1beta1", "kind": "Eviction", "metadata": {"name": "ev-beta"},
        "deleteOptions": {"dryRun": ["All"]}}, **ADMIN)
    assert (dry.status_code, dry.json()) == (201, {"kind": "Status", "apiVersion": "v1",
                                                   "metadata": {}, "status": "Success",
                                                   "code": 201})
    assert get(api, "ev-beta")["metadata"].get("deletionTimestamp") is None
    mismatch = api.request("POST", f"{PODS}/ev-beta/eviction", json={
        "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "x"}}, **ADMIN)
    assert_status(mismatch, 400, "BadRequest", "name in URL does not match name in Eviction "
                                               "object")
    wrong = api.request("POST", f"{PODS}/ev-beta/eviction", json={
        "apiVersion": "v1", "kind": "Eviction", "metadata": {"name": "ev-beta"}}, **ADMIN)
    assert_status(wrong, 400, "BadRequest")
    missing = api.request("POST", f"{PODS}/nope/eviction", json={
        "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "nope"}}, **ADMIN)
    assert_status(missing, 404, "NotFound", 'pods "nope" not found')
    twice = api.request("POST", f"{PODS}/ev-beta/eviction?dryRun=All", json={
        "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "ev-beta"},
        "deleteOptions": {"dryRun": ["All", "All"]}}, **ADMIN)
    assert_status(twice, 400, "BadRequest", "Non-matching dry-run options in request and "
                                            "content: [All] and [All All]")
    assert get(api, "ev-beta")["metadata"].get("deletionTimestamp") is None


def test_eviction_of_a_bound_pod_is_graceful(api):
    create(api, "ev-bound")
    assert bind(api, "ev-bound").status_code == 201
    response = api.request("POST", f"{PODS}/ev-bound/eviction", json={
        "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "ev-bound"}},
        **ADMIN)
    assert response.status_code == 201, response.text
    pod = get(api, "ev-bound")
    assert pod["metadata"]["deletionGracePeriodSeconds"] == 30
    target = [c for c in pod["status"]["conditions"] if c["type"] == "DisruptionTarget"]
    assert [(c["status"], c["reason"], c["message"]) for c in target] == \
        [("True", "EvictionByEvictionAPI", "Eviction API: evicting")]


# -- ephemeral containers ------------------------------------------------------------------------

def test_kubectl_debug_adds_an_ephemeral_container(api):
    create(api, "debugged")
    result = kubectl(api, "debug", "debugged", "--image=busybox", "--profile=general",
                     "--container=dbg", "--attach=false")
    assert result.returncode == 0, result.stderr
    pod = get(api, "debugged")
    [container] = pod["spec"]["ephemeralContainers"]
    assert (container["name"], container["image"]) == ("dbg", "busybox")
    assert container["terminationMessagePolicy"] == "File"
    owner = [e for e in pod["metadata"]["managedFields"]
             if e.get("subresource") == "ephemeralcontainers"]
    assert owner


def test_ephemeral_containers_subresource_changes_nothing_else(api):
    from kubernetes import client

    core = client.CoreV1Api(api.python_client())
    create(api, "eph")
    pod = core.read_namespaced_pod_ephemeralcontainers("eph", NS)
    pod.metadata.labels = {"changed": "yes"}
    pod.spec.ephemeral_containers = [client.V1EphemeralContainer(name="e1", image="busybox")]
    updated = core.replace_namespaced_pod_ephemeralcontainers("eph", NS, pod)
    assert updated.metadata.labels == {"app": "eph"}
    assert [c.name for c in updated.spec.ephemeral_containers] == ["e1"]
    # Ephemeral containers may be added, never changed or removed.
    removed = api.request("PATCH", f"{PODS}/eph/ephemeralcontainers",
                          data=json.dumps({"spec": {"ephemeralContainers": []}}),
                          headers={"Content-Type": "application/merge-patch+json"}, **ADMIN)
    assert_status(removed, 422, "Invalid")


# -- kubelet subresources of a pod no node runs ------------------------------------------------

def test_logs_of_a_pod_without_a_node_are_empty(api):
    from kubernetes import client

    core = client.CoreV1Api(api.python_client())
    create(api, "quiet")
    response = api.get(f"{PODS}/quiet/log", **ADMIN)
    assert (response.status_code, response.content) == (204, b"")
    result = kubectl(api, "logs", "quiet")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    # 204 No Content: the client reads no log at all.
    assert core.read_namespaced_pod_log("quiet", NS) is None
    assert_status(api.get(f"{PODS}/quiet/log?container=nope", **ADMIN), 400, "BadRequest",
                  "container nope is not valid for pod quiet")
    invalid = api.get(f"{PODS}/quiet/log?tailLines=-1&limitBytes=0", **ADMIN)
    assert assert_status(invalid, 422, "Invalid")["message"] == (
        'PodLogOptions "quiet" is invalid: [tailLines: Invalid value: -1: must be greater than '
        "or equal to 0, limitBytes: Invalid value: 0: must be greater than 0]")
    assert_status(api.get(f"{PODS}/quiet/log?tailLines=x", **ADMIN), 400, "BadRequest",
                  'strconv.ParseInt: parsing "x": invalid syntax')


def test_logs_of_a_bound_pod_need_its_node(api):
    create(api, "far")
    assert bind(api, "far", "no-such-node").status_code == 201
    assert_status(api.get(f"{PODS}/far/log", **ADMIN), 404, "NotFound",
                  'nodes "no-such-node" not found')
    result = kubectl(api, "logs", "far")
    assert result.returncode == 1
    assert result.stderr == 'Error from server (NotFound): nodes "no-such-node" not found\n'


def test_exec_attach_and_port_forward_need_a_host(api):
    create(api, "nohost")
    result = kubectl(api, "exec", "nohost", "--", "ls")
    assert result.returncode == 1
    assert result.stderr == "Error from server (BadRequest): pod nohost does not have a host " \
                            "assigned\n"
    for sub in ("exec", "attach", "portforward"):
        response = api.request("POST", f"{PODS}/nohost/{sub}?command=ls", **ADMIN)
        assert_status(response, 400, "BadRequest", "pod nohost does not have a host assigned")
    assert_status(api.request("POST", f"{PODS}/nohost/exec?container=x", **ADMIN), 400,
                  "BadRequest", "container x is not valid for pod nohost")
    assert_status(api.get(f"{PODS}/nohost/proxy/", **ADMIN), 400, "BadRequest",
                  "address not allowed")
    assert_status(api.get(f"/api/v1/namespaces/{NS}/pods/a:b:c:d/proxy/", **ADMIN), 400,
                  "BadRequest", 'invalid pod request "a:b:c:d"')


# -- kubelets: none at the node's address, or one that answers ------------------------------

class FakeKubelet:
    """An HTTPS server on loopback answering as a kubelet would: container logs, and 401
    to stream upgrades from a client without credentials."""

    def __init__(self, workdir: str):
        import http.server
        import ssl
        import threading

        from kapiserver.pki import PKI

        pki = PKI(workdir)
        pki.ensure_serving_cert(["127.0.0.1"])
        self.requests = []
        kubelet = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def answer(self, code: int, body: bytes):
                self.send_response(code)
                self.send_header("Content-Type", "text/plain; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                kubelet.requests.append(("GET", self.path, dict(self.headers)))
                if self.path.startswith("/containerLogs/"):
                    self.answer(200, b"first line\nsecond line\n")
                else:
                    self.answer(404, b"404 page not found\n")

            def do_POST(self):
                kubelet.requests.append(("POST", self.path, dict(self.headers)))
                self.answer(401, b"Unauthorized")

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(pki.serving_cert_file, pki.serving_key_file)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def node_at(api, name: str, addresses: list, port: int = 0) -> None:
    created = api.request("POST", "/api/v1/nodes", json={
        "apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}, **ADMIN)
    assert created.status_code == 201, created.text
    status = {"addresses": addresses, "daemonEndpoints": {"kubeletEndpoint": {"Port": port}}}
    patched = api.request("PATCH", f"/api/v1/nodes/{name}/status",
                          data=json.dumps({"status": status}),
                          headers={"Content-Type": "application/merge-patch+json"}, **ADMIN)
    assert patched.status_code == 200, patched.text


def test_a_node_without_addresses_has_no_kubelet_to_ask(api):
    exchange = json.loads((REFERENCE / "wide/kinds/pods-log.json").read_text())
    node_at(api, "addressless", [])
    create(api, "stranded")
    assert bind(api, "stranded", "addressless").status_code == 201
    response = api.get(f"{PODS}/stranded/log", **ADMIN)
    assert (response.status_code, response.json()) == \
        (exchange["response"]["status"], exchange["response"]["body"])
    result = kubectl(api, "logs", "stranded")
    assert result.stderr == "Error from server: no preferred addresses found; known " \
                            "addresses: []\n"
    result = kubectl(api, "exec", "stranded", "--", "ls")
    assert result.stderr == "Error from server: no preferred addresses found; known " \
                            "addresses: []\n"


def test_a_kubelet_that_cannot_be_reached(api):
    from kapiserver.testing import free_port

    port = free_port()  # nothing listens there
    node_at(api, "unreachable", [{"type": "Hostname", "address": "127.0.0.1"}], port)
    create(api, "cut-off")
    assert bind(api, "cut-off", "unreachable").status_code == 201
    refused = f"dial tcp 127.0.0.1:{port}: connect: connection refused"
    response = api.get(f"{PODS}/cut-off/log?tailLines=5&follow=true", **ADMIN)
    assert (response.status_code, response.json()) == (500, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": f'Get "https://127.0.0.1:{port}/containerLogs/{NS}/cut-off/app?follow=true'
                   f'&tailLines=5": {refused}', "code": 500})
    assert_status(api.request("POST", f"{PODS}/cut-off/exec?command=ls&stdout=true", **ADMIN),
                  400, "BadRequest", "Upgrade request required")
    upgrade = api.request("POST", f"{PODS}/cut-off/exec?command=ls&stdout=true", headers={
        "Connection": "Upgrade", "Upgrade": "SPDY/3.1",
        "X-Stream-Protocol-Version": "v4.channel.k8s.io"}, **ADMIN)
    assert upgrade.status_code == 500
    assert upgrade.json()["message"] == f"error dialing backend: {refused}"
    result = kubectl(api, "exec", "cut-off", "--", "ls")
    assert result.stderr == f"Error from server: error dialing backend: {refused}\n"


def test_a_kubelet_that_answers(api, tmp_path):
    kubelet = FakeKubelet(str(tmp_path))
    try:
        node_at(api, "reachable", [{"type": "InternalIP", "address": "127.0.0.1"}],
                kubelet.port)
        create(api, "chatty")
        assert bind(api, "chatty", "reachable").status_code == 201
        result = kubectl(api, "logs", "chatty", "--tail=2")
        assert (result.returncode, result.stdout) == (0, "first line\nsecond line\n")
        assert ("GET", f"/containerLogs/{NS}/chatty/app?tailLines=2") in \
            [(method, path) for method, path, _ in kubelet.requests]
        # The kubelet refuses a stream from a client it does not know: its answer is
        # passed on, as upstream's proxy passes it on.
        result = kubectl(api, "exec", "chatty", "--", "ls")
        assert result.returncode == 1
        assert result.stderr == "error: unable to upgrade connection: Unauthorized\n"
        method, path, headers = kubelet.requests[-1]
        assert (method, path) == ("POST", f"/exec/{NS}/chatty/app?command=ls&error=1&output=1")
        assert "Authorization" not in headers
    finally:
        kubelet.stop()


# -- kubectl drain, with PodDisruptionBudgets --------------------------------------------------

def running_on(api, name: str, node: str, labels: dict) -> None:
    pod = manifest(name)
    pod["metadata"]["labels"] = labels
    assert api.request("POST", PODS, json=pod, **ADMIN).status_code == 201
    assert bind(api, name, node).status_code == 201
    status = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    patched = api.request("PATCH", f"{PODS}/{name}/status", data=json.dumps({"status": status}),
                          headers={"Content-Type": "application/merge-patch+json"}, **ADMIN)
    assert patched.status_code == 200, patched.text


def budget(api, name: str, selector: dict, allowed: int) -> str:
    path = f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets"
    created = api.request("POST", path, json={
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": selector}}}, **ADMIN)
    assert created.status_code == 201, created.text
    set_budget(api, name, allowed)
    return f"{path}/{name}"


def set_budget(api, name: str, allowed: int) -> None:
    path = f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets/{name}/status"
    status = {"observedGeneration": 1, "disruptionsAllowed": allowed, "currentHealthy": 2,
              "desiredHealthy": 1, "expectedPods": 2}
    patched = api.request("PATCH", path, data=json.dumps({"status": status}),
                          headers={"Content-Type": "application/merge-patch+json"}, **ADMIN)
    assert patched.status_code == 200, patched.text


def test_kubectl_drain_evicts_within_the_disruption_budget(api):
    node_at(api, "drained", [])
    running_on(api, "guarded-a", "drained", {"drain": "x"})
    running_on(api, "unguarded", "drained", {"drain": "y"})
    pdb = budget(api, "drain-budget", {"drain": "x"}, allowed=0)

    refused = api.request("POST", f"{PODS}/guarded-a/eviction", json={
        "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "guarded-a"}},
        **ADMIN)
    assert_status(refused, 429, "TooManyRequests",
                  "Cannot evict pod as it would violate the pod's disruption budget.",
                  {"causes": [{"reason": "DisruptionBudget",
                               "message": "The disruption budget drain-budget needs 1 healthy "
                                          "pods and has 2 currently"}]})
    result = api.kubectl("drain", "drained", "--force", "--grace-period=0", "--timeout=3s",
                         timeout=60)
    assert result.returncode == 1
    assert "node/drained cordoned" in result.stdout
    assert 'error when evicting pods/"guarded-a" -n "pods-e2e" (will retry after 5s): Cannot ' \
           "evict pod as it would violate the pod's disruption budget." in result.stderr
    assert api.get(f"{PODS}/unguarded", **ADMIN).status_code == 404
    assert api.get("/api/v1/nodes/drained", **ADMIN).json()["spec"]["unschedulable"] is True

    set_budget(api, "drain-budget", 1)
    result = api.kubectl("drain", "drained", "--force", "--grace-period=0", "--timeout=20s",
                         timeout=60)
    assert result.returncode == 0, result.stderr
    assert "pod/guarded-a evicted" in result.stdout and "node/drained drained" in result.stdout
    status = api.get(pdb, **ADMIN).json()["status"]
    assert status["disruptionsAllowed"] == 0 and list(status["disruptedPods"]) == ["guarded-a"]
    assert [(c["type"], c["status"], c["reason"]) for c in status["conditions"]] == \
        [("DisruptionAllowed", "False", "InsufficientPods")]
    assert api.kubectl("uncordon", "drained").returncode == 0


# -- proxy ------------------------------------------------------------------------------------

def _global_ipv4() -> str | None:
    """An address of this host that upstream would proxy to (not loopback): the source
    address of a route out (connecting a UDP socket sends nothing)."""
    import ipaddress
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("203.0.113.1", 9))
            address = probe.getsockname()[0]
        except OSError:
            return None
    ip = ipaddress.ip_address(address)
    return None if ip.is_loopback or ip.is_unspecified or ip.is_link_local else address


def test_proxy_forwards_to_the_pods_ip(api, tmp_path):
    import http.server
    import threading

    address = _global_ipv4()
    if address is None:
        pytest.skip("this host has no address but loopback, which upstream never proxies to")
    (tmp_path / "hello.txt").write_text("hello from the pod\n")

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(tmp_path), **kwargs)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer((address, 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        create(api, "served", containers=[{"name": "app", "image": "nginx",
                                           "ports": [{"containerPort": port}]}])
        patched = api.request("PATCH", f"{PODS}/served/status", data=json.dumps(
            {"status": {"podIP": address, "podIPs": [{"ip": address}]}}),
            headers={"Content-Type": "application/merge-patch+json"}, **ADMIN)
        assert patched.status_code == 200, patched.text
        response = api.get(f"{PODS}/served/proxy/hello.txt", **ADMIN)
        assert (response.status_code, response.text) == (200, "hello from the pod\n")
        named = api.get(f"{PODS}/http:served:{port}/proxy/hello.txt", **ADMIN)
        assert named.text == "hello from the pod\n"
        missing = api.get(f"{PODS}/served/proxy/nope", **ADMIN)
        assert missing.status_code == 404
        closed = server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
    refused = api.get(f"{PODS}/served/proxy/hello.txt", **ADMIN)
    assert (refused.status_code, refused.json()["message"]) == \
        (500, f"dial tcp {address}:{closed}: connect: connection refused")
