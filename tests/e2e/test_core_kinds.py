"""The other core/v1 kinds end to end: nodes (status, proxy, cordon), persistent volumes
and claims, replication controllers (scale), pod templates, resource quotas, limit ranges
and component statuses, driven by kubectl and the official Python client."""

import http.server
import json
import socket
import ssl
import threading

import pytest

from kapiserver.testing import assert_status, free_port

ADMIN = dict(user="admin", groups=["system:masters"])
NS = "/api/v1/namespaces/default"
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}

MANIFEST = """
apiVersion: v1
kind: Node
metadata:
  name: worker-1
  labels:
    kubernetes.io/hostname: worker-1
    node-role.kubernetes.io/worker: ""
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: pv-1
spec:
  capacity: {storage: 2Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: /tmp/pv-1}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: claim-1
  namespace: default
spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests: {storage: 1Gi}
---
apiVersion: v1
kind: ReplicationController
metadata:
  name: web
  namespace: default
spec:
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - {name: nginx, image: "nginx:1.27"}
---
apiVersion: v1
kind: PodTemplate
metadata:
  name: tmpl
  namespace: default
template:
  metadata:
    labels: {app: batch}
  spec:
    containers:
    - {name: job, image: busybox}
---
apiVersion: v1
kind: ResourceQuota
metadata:
  name: quota
  namespace: default
spec:
  hard: {pods: "10", requests.cpu: "2", limits.memory: 4Gi}
---
apiVersion: v1
kind: LimitRange
metadata:
  name: limits
  namespace: default
spec:
  limits:
  - type: Container
    max: {cpu: "1"}
    min: {cpu: 50m}
"""


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    # The quota controller off: these tests write quota status themselves, as a test of the
    # API (tests/e2e/test_resourcequota.py has the controller).
    server = KapiserverProcess(str(tmp_path_factory.mktemp("core-kinds")), workers=2,
                               config={"controllers": ["*", "-resourcequota"]}).start()
    created = server.kubectl("create", "-f", "-", input=MANIFEST)
    assert created.returncode == 0, created.stderr
    server.created = created.stdout
    yield server
    server.stop()


def get(api, path, **kwargs):
    return api.get(path, **ADMIN, **kwargs).json()


def reasonless(response, message: str) -> None:
    """A 500 ``Status`` without a reason, as upstream answers a plain error."""
    assert response.status_code == 500, response.text
    assert response.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {},
                               "status": "Failure", "message": message, "code": 500}


def core(api):
    from kubernetes import client

    return client.CoreV1Api(api.python_client())


# -- kubectl create -f --------------------------------------------------------------------------

def test_kubectl_creates_every_kind_with_upstreams_defaults(api):
    assert api.created.splitlines() == [
        "node/worker-1 created", "persistentvolume/pv-1 created",
        "persistentvolumeclaim/claim-1 created", "replicationcontroller/web created",
        "podtemplate/tmpl created", "resourcequota/quota created", "limitrange/limits created"]
    node = get(api, "/api/v1/nodes/worker-1")
    assert node["spec"]["taints"] == [{"key": "node.kubernetes.io/not-ready",
                                       "effect": "NoSchedule"}]
    assert node["status"]["daemonEndpoints"] == {"kubeletEndpoint": {"Port": 0}}
    pv = get(api, "/api/v1/persistentvolumes/pv-1")
    assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert pv["spec"]["volumeMode"] == "Filesystem"
    assert pv["spec"]["hostPath"] == {"path": "/tmp/pv-1", "type": ""}
    assert pv["status"]["phase"] == "Pending" and pv["status"]["lastPhaseTransitionTime"]
    claim = get(api, f"{NS}/persistentvolumeclaims/claim-1")
    assert (claim["spec"]["volumeMode"], claim["status"]) == ("Filesystem",
                                                              {"phase": "Pending"})
    rc = get(api, f"{NS}/replicationcontrollers/web")
    assert (rc["spec"]["replicas"], rc["spec"]["selector"]) == (1, {"app": "web"})
    assert rc["metadata"]["labels"] == {"app": "web"}
    assert rc["metadata"]["generation"] == 1 and rc["status"] == {"replicas": 0}
    container = rc["spec"]["template"]["spec"]["containers"][0]
    assert container["imagePullPolicy"] == "IfNotPresent"
    template = get(api, f"{NS}/podtemplates/tmpl")
    assert template["metadata"]["generation"] == 1
    assert template["template"]["spec"]["restartPolicy"] == "Always"
    quota = get(api, f"{NS}/resourcequotas/quota")
    assert (quota["spec"]["hard"], quota["status"]) == (
        {"limits.memory": "4Gi", "pods": "10", "requests.cpu": "2"}, {})
    limits = get(api, f"{NS}/limitranges/limits")
    assert limits["spec"]["limits"] == [{"type": "Container", "max": {"cpu": "1"},
                                         "min": {"cpu": "50m"}, "default": {"cpu": "1"},
                                         "defaultRequest": {"cpu": "1"}}]


def test_kubectl_get_shows_upstreams_columns(api):
    pv = api.kubectl("get", "pv", "pv-1", check=True).stdout.split()
    assert pv[:14] == ["NAME", "CAPACITY", "ACCESS", "MODES", "RECLAIM", "POLICY", "STATUS",
                       "CLAIM", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "REASON", "AGE",
                       "pv-1", "2Gi"]
    claims = api.kubectl("get", "pvc", check=True).stdout.splitlines()
    assert claims[1].split()[:2] == ["claim-1", "Pending"]
    rcs = api.kubectl("get", "rc", "-o", "wide", check=True).stdout.splitlines()
    assert rcs[0].split() == ["NAME", "DESIRED", "CURRENT", "READY", "AGE", "CONTAINERS",
                              "IMAGES", "SELECTOR"]
    assert rcs[1].split()[:4] == ["web", "1", "0", "0"]
    assert rcs[1].split()[5:] == ["nginx", "nginx:1.27", "app=web"]
    templates = api.kubectl("get", "podtemplates", check=True).stdout.splitlines()
    assert templates[1].split() == ["tmpl", "job", "busybox", "app=batch"]
    quotas = api.kubectl("get", "quota", check=True).stdout.splitlines()
    assert quotas[0].split() == ["NAME", "AGE", "REQUEST", "LIMIT"]
    limits = api.kubectl("get", "limits", check=True).stdout.splitlines()
    assert limits[0].split() == ["NAME", "CREATED", "AT"]


# -- nodes ---------------------------------------------------------------------------------------

def test_get_nodes_wide(api):
    lines = api.kubectl("get", "nodes", "-o", "wide", check=True).stdout.splitlines()
    assert lines[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP",
                                "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME"]
    row = [line for line in lines if line.startswith("worker-1 ")][0].split()
    assert row[:3] == ["worker-1", "Unknown", "worker"]
    assert row[-5:] == ["<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"]


def test_cordon_and_uncordon(api):
    cordoned = api.kubectl("cordon", "worker-1")
    assert (cordoned.returncode, cordoned.stdout) == (0, "node/worker-1 cordoned\n")
    assert get(api, "/api/v1/nodes/worker-1")["spec"]["unschedulable"] is True
    row = api.kubectl("get", "node", "worker-1", "--no-headers", check=True).stdout.split()
    assert row[1] == "Unknown,SchedulingDisabled"
    listed = get(api, "/api/v1/nodes?fieldSelector=spec.unschedulable%3Dtrue")
    assert [n["metadata"]["name"] for n in listed["items"]] == ["worker-1"]
    uncordoned = api.kubectl("uncordon", "worker-1")
    assert (uncordoned.returncode, uncordoned.stdout) == (0, "node/worker-1 uncordoned\n")
    assert "unschedulable" not in get(api, "/api/v1/nodes/worker-1")["spec"]
    assert get(api, "/api/v1/nodes?fieldSelector=spec.unschedulable%3Dtrue")["items"] == []


def test_node_status_through_the_python_client(api):
    body = {"status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Ok"}],
                       "addresses": [{"type": "InternalIP", "address": "10.9.8.7"}],
                       "capacity": {"cpu": "4", "pods": "110"},
                       "nodeInfo": {"kubeletVersion": "v1.32.0", "osImage": "Debian",
                                    "kernelVersion": "6.1", "containerRuntimeVersion":
                                    "containerd://1.7", "machineID": "", "systemUUID": "",
                                    "bootID": "", "kubeProxyVersion": "",
                                    "operatingSystem": "linux", "architecture": "amd64"}},
            "spec": {"unschedulable": True}}
    node = core(api).patch_node_status("worker-1", body)
    assert node.status.allocatable == {"cpu": "4", "pods": "110"}
    assert not node.spec.unschedulable  # a status write keeps the spec
    row = api.kubectl("get", "node", "worker-1", "-o", "wide", "--no-headers",
                      check=True).stdout.split()
    assert row[:3] == ["worker-1", "Ready", "worker"]
    assert row[4:] == ["v1.32.0", "10.9.8.7", "<none>", "Debian", "6.1", "containerd://1.7"]
    # An update of the node itself keeps the status.
    node = core(api).read_node("worker-1")
    node.status.conditions = []
    node.metadata.labels["extra"] = "1"
    updated = core(api).replace_node("worker-1", node)
    assert updated.status.conditions[0].type == "Ready"


def test_invalid_node_updates(api):
    response = api.request("PATCH", "/api/v1/nodes/worker-1", **ADMIN,
                           headers={"Content-Type": "application/merge-patch+json"},
                           data=json.dumps({"spec": {"taints": [
                               {"key": "a", "effect": "NoSchedule"},
                               {"key": "a", "effect": "NoSchedule", "value": "b"}]}}))
    body = assert_status(response, 422, "Invalid")
    cause = {"reason": "FieldValueDuplicate", "field": "metadata.taints[1]",
             "message": 'Duplicate value: core.Taint{Key:"a", Value:"b", Effect:"NoSchedule", '
                        'TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect '
                        "pair"}
    # ValidateNode and ValidateNodeUpdate both check the taints: two causes, one message.
    assert body["details"]["causes"] == [cause, cause]
    assert body["message"] == f'Node "worker-1" is invalid: metadata.taints[1]: ' \
                              f'{cause["message"]}'


def _host_address() -> str | None:
    """A globally routable address of this machine (the kubelet proxy refuses others)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
        except OSError:
            return None
        address = probe.getsockname()[0]
    return None if address.startswith(("127.", "169.254.")) else address


def _node_at(api, name, address, port):
    status = {"addresses": [{"type": "InternalIP", "address": address}],
              "daemonEndpoints": {"kubeletEndpoint": {"Port": port}}}
    response = api.request("POST", "/api/v1/nodes", **ADMIN, json={
        "apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": status})
    assert response.status_code == 201, response.text


def test_node_proxy_without_a_usable_kubelet(api):
    api.request("POST", "/api/v1/nodes", **ADMIN, json={
        "apiVersion": "v1", "kind": "Node", "metadata": {"name": "no-address"}})
    reasonless(api.get("/api/v1/nodes/no-address/proxy/healthz", **ADMIN),
               "no preferred addresses found; known addresses: []")
    _node_at(api, "loopback", "127.0.0.1", free_port())
    assert_status(api.get("/api/v1/nodes/loopback/proxy/healthz", **ADMIN), 400, "BadRequest",
                  "address not allowed")
    assert_status(api.get("/api/v1/nodes/missing/proxy/", **ADMIN), 404, "NotFound",
                  'nodes "missing" not found')
    address = _host_address()
    if address is None:
        pytest.skip("no globally routable address on this machine")
    port = free_port()
    _node_at(api, "refusing", address, port)
    reasonless(api.get("/api/v1/nodes/refusing/proxy/healthz", **ADMIN),
               f"dial tcp {address}:{port}: connect: connection refused")


def test_node_proxy_reaches_a_kubelet(api):
    address = _host_address()
    if address is None:
        pytest.skip("no globally routable address on this machine")

    class Kubelet(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps({"path": self.path}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    kubelet = http.server.ThreadingHTTPServer((address, 0), Kubelet)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(api.pki.serving_cert_file, api.pki.serving_key_file)
    kubelet.socket = context.wrap_socket(kubelet.socket, server_side=True)
    threading.Thread(target=kubelet.serve_forever, daemon=True).start()
    try:
        _node_at(api, "kubelet", address, kubelet.server_address[1])
        response = api.get("/api/v1/nodes/kubelet/proxy/stats/summary?only=cpu", **ADMIN)
        assert (response.status_code, response.json()) == (200, {"path":
                                                                 "/stats/summary?only=cpu"})
        raw = api.kubectl("get", "--raw", "/api/v1/nodes/kubelet/proxy/pods", check=True)
        assert json.loads(raw.stdout) == {"path": "/pods"}
    finally:
        kubelet.shutdown()
        kubelet.server_close()


# -- volumes and claims -----------------------------------------------------------------------

def test_invalid_volumes_are_refused(api):
    response = api.request("POST", "/api/v1/persistentvolumes", **ADMIN, json={
        "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "bad"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                 "hostPath": {"path": "/a"}, "nfs": {"server": "s", "path": "/b"}}})
    assert_status(response, 422, "Invalid", 'PersistentVolume "bad" is invalid: spec.nfs: '
                  "Forbidden: may not specify more than 1 volume type")


def test_volume_sources_are_immutable(api):
    response = api.request("PATCH", "/api/v1/persistentvolumes/pv-1", **ADMIN,
                           headers={"Content-Type": "application/merge-patch+json"},
                           data=json.dumps({"spec": {"hostPath": {"path": "/elsewhere"},
                                                     "persistentVolumeReclaimPolicy": "Delete"}}))
    body = assert_status(response, 422, "Invalid")
    assert [c["field"] for c in body["details"]["causes"]] == ["spec.persistentvolumesource"]
    assert body["details"]["causes"][0]["message"].startswith(
        "Forbidden: spec.persistentvolumesource is immutable after creation\n")
    policy = api.kubectl("patch", "pv", "pv-1", "-p",
                         '{"spec":{"persistentVolumeReclaimPolicy":"Delete"}}')
    assert policy.returncode == 0, policy.stderr


def test_volume_status_phase_transitions(api):
    before = get(api, "/api/v1/persistentvolumes/pv-1")["status"]["lastPhaseTransitionTime"]
    volume = core(api).patch_persistent_volume_status(
        "pv-1", {"status": {"phase": "Available"}})
    assert volume.status.phase == "Available"
    assert volume.status.last_phase_transition_time is not None
    assert volume.spec.persistent_volume_reclaim_policy in ("Retain", "Delete")
    assert get(api, "/api/v1/persistentvolumes/pv-1")["status"]["lastPhaseTransitionTime"] \
        >= before


def test_claim_spec_is_immutable_until_bound(api):
    grow = api.kubectl("patch", "pvc", "claim-1", "-p",
                       '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}')
    assert grow.returncode == 1
    assert "spec is immutable after creation except resources.requests and " \
           "volumeAttributesClassName for bound claims" in grow.stderr
    claims = core(api)
    claim = claims.read_namespaced_persistent_volume_claim_status("claim-1", "default")
    claim.status.phase = "Bound"
    claim.status.capacity = {"storage": "1Gi"}
    claim.status.access_modes = ["ReadWriteOnce"]
    claim.spec.access_modes = ["ReadWriteMany"]  # ignored by a status write
    bound = claims.replace_namespaced_persistent_volume_claim_status("claim-1", "default",
                                                                     claim)
    assert (bound.status.phase, bound.spec.access_modes) == ("Bound", ["ReadWriteOnce"])
    volume = api.kubectl("patch", "pvc", "claim-1", "-p", '{"spec":{"volumeName":"pv-1"}}')
    assert volume.returncode == 0, volume.stderr
    # Validation lets a bound claim grow; PersistentVolumeClaimResize refuses it here, as
    # upstream does, since the claim has no StorageClass that allows expansion.
    grown = api.kubectl("patch", "pvc", "claim-1", "-p",
                        '{"spec":{"resources":{"requests":{"storage":"3Gi"}}}}')
    assert grown.returncode == 1
    assert "only dynamically provisioned pvc can be resized and the storageclass that " \
           "provisions the pvc must support resize" in grown.stderr
    shrunk = api.kubectl("patch", "pvc", "claim-1", "-p",
                         '{"spec":{"resources":{"requests":{"storage":"512Mi"}}}}')
    assert "field can not be less than status.capacity" in shrunk.stderr
    row = api.kubectl("get", "pvc", "claim-1", "--no-headers", check=True).stdout.split()
    assert row[:5] == ["claim-1", "Bound", "pv-1", "1Gi", "RWO"]


# -- replication controllers -------------------------------------------------------------------

def test_kubectl_scale_rc(api):
    scaled = api.kubectl("scale", "rc", "web", "--replicas=3")
    assert (scaled.returncode, scaled.stdout) == (0, "replicationcontroller/web scaled\n")
    scale = get(api, f"{NS}/replicationcontrollers/web/scale")
    assert (scale["kind"], scale["apiVersion"]) == ("Scale", "autoscaling/v1")
    assert scale["spec"] == {"replicas": 3}
    assert scale["status"] == {"replicas": 0, "selector": "app=web"}
    rc = get(api, f"{NS}/replicationcontrollers/web")
    assert (rc["spec"]["replicas"], rc["metadata"]["generation"]) == (3, 2)
    negative = api.kubectl("scale", "rc", "web", "--replicas=-1")
    assert negative.returncode == 1


def test_controller_status_through_the_python_client(api):
    rcs = core(api)
    rc = rcs.patch_namespaced_replication_controller_status(
        "web", "default", {"status": {"replicas": 3, "readyReplicas": 2,
                                      "availableReplicas": 2, "observedGeneration": 2},
                           "spec": {"replicas": 9}})
    assert (rc.status.ready_replicas, rc.spec.replicas) == (2, 3)
    bad = api.request("PATCH", f"{NS}/replicationcontrollers/web/status", **ADMIN,
                      headers={"Content-Type": "application/merge-patch+json"},
                      data=json.dumps({"status": {"readyReplicas": 5}}))
    assert_status(bad, 422, "Invalid", 'ReplicationController "web" is invalid: '
                  "status.readyReplicas: Invalid value: 5: cannot be greater than "
                  "status.replicas")
    listed = get(api, f"{NS}/replicationcontrollers?fieldSelector=status.replicas%3D3")
    assert [r["metadata"]["name"] for r in listed["items"]] == ["web"]


def test_controller_rules(api):
    response = api.request("POST", f"{NS}/replicationcontrollers", **ADMIN, json={
        "apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "odd"},
        "spec": {"selector": {"app": "a"}, "template": {
            "metadata": {"labels": {"app": "b"}},
            "spec": {"restartPolicy": "Never",
                     "containers": [{"name": "c", "image": "busybox"}]}}}})
    body = assert_status(response, 422, "Invalid")
    assert [c["field"] for c in body["details"]["causes"]] == [
        "spec.template.metadata.labels", "spec.template.spec.restartPolicy"]


# -- quotas and templates --------------------------------------------------------------------------

def test_quota_status_and_table(api):
    quota = core(api).patch_namespaced_resource_quota_status(
        "quota", "default", {"status": {"hard": {"pods": "10", "requests.cpu": "2",
                                                 "limits.memory": "4Gi"},
                                        "used": {"pods": "1", "requests.cpu": "500m"}}})
    assert quota.status.used == {"pods": "1", "requests.cpu": "500m"}
    row = get(api, f"{NS}/resourcequotas/quota", headers=TABLE)["rows"][0]["cells"]
    assert row[2:] == ["pods: 1/10, requests.cpu: 500m/2", "limits.memory: 0/4Gi"]
    immutable = api.request("PATCH", f"{NS}/resourcequotas/quota", **ADMIN,
                            headers={"Content-Type": "application/merge-patch+json"},
                            data=json.dumps({"spec": {"scopes": ["NotTerminating"]}}))
    assert_status(immutable, 422, "Invalid", 'ResourceQuota "quota" is invalid: spec.scopes: '
                  'Invalid value: []core.ResourceQuotaScope{"NotTerminating"}: field is '
                  "immutable")


def test_status_writes_through_kubectl(api):
    patched = api.kubectl("patch", "quota", "quota", "--subresource=status", "--type=merge",
                          "-p", '{"status":{"used":{"pods":"4"}},"spec":{"hard":{"pods":"1"}}}')
    assert patched.returncode == 0, patched.stderr
    quota = get(api, f"{NS}/resourcequotas/quota")
    assert (quota["status"]["used"]["pods"], quota["spec"]["hard"]["pods"]) == ("4", "10")
    node = api.kubectl("patch", "node", "worker-1", "--subresource=status", "--type=merge",
                       "-p", '{"status":{"addresses":[{"type":"Hostname","address":"w1"}]}}')
    assert node.returncode == 0, node.stderr
    assert get(api, "/api/v1/nodes/worker-1")["status"]["addresses"] == [
        {"type": "Hostname", "address": "w1"}]


def test_scale_through_the_python_client(api):
    rcs = core(api)
    scale = rcs.patch_namespaced_replication_controller_scale("web", "default",
                                                              {"spec": {"replicas": 2}})
    assert (scale.spec.replicas, scale.status.selector) == (2, "app=web")
    assert rcs.read_namespaced_replication_controller("web", "default").spec.replicas == 2


def test_template_changes_bump_the_generation(api):
    patched = api.kubectl("patch", "podtemplate", "tmpl", "-p",
                          '{"template":{"metadata":{"labels":{"app":"other"}}}}')
    assert patched.returncode == 0, patched.stderr
    assert get(api, f"{NS}/podtemplates/tmpl")["metadata"]["generation"] == 2
    labelled = api.kubectl("label", "podtemplate", "tmpl", "x=y")
    assert labelled.returncode == 0, labelled.stderr
    assert get(api, f"{NS}/podtemplates/tmpl")["metadata"]["generation"] == 2


def test_limit_ranges_keep_their_quantities_in_order(api):
    response = api.request("POST", f"{NS}/limitranges", **ADMIN, json={
        "apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "bad"},
        "spec": {"limits": [{"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}}]}})
    body = assert_status(response, 422, "Invalid")
    assert [c["field"] for c in body["details"]["causes"]][0] == "spec.limits[0].min[cpu]"


# -- component statuses ------------------------------------------------------------------------

def test_kubectl_get_cs(api):
    result = api.kubectl("get", "cs")
    assert result.returncode == 0, result.stderr
    assert "Warning: v1 ComponentStatus is deprecated in v1.19+" in result.stderr
    rows = {line.split()[0]: line for line in result.stdout.splitlines()[1:]}
    assert result.stdout.splitlines()[0].split() == ["NAME", "STATUS", "MESSAGE", "ERROR"]
    assert set(rows) == {"scheduler", "controller-manager", "sqlite-0"}
    assert rows["sqlite-0"].split()[1:] == ["Healthy", "ok"]
    assert rows["scheduler"].split()[1] == "Unhealthy"


def test_component_statuses_through_the_python_client(api):
    statuses = core(api).list_component_status()
    by_name = {s.metadata.name: s.conditions[0] for s in statuses.items}
    assert by_name["sqlite-0"].status == "True"
    scheduler = by_name["scheduler"]
    assert (scheduler.type, scheduler.status) == ("Healthy", "False")
    assert scheduler.message == ('Get "https://127.0.0.1:10259/healthz": dial tcp '
                                 "127.0.0.1:10259: connect: connection refused")
    one = core(api).read_component_status("sqlite-0")
    assert one.conditions[0].message == "ok"
    assert_status(api.get("/api/v1/componentstatuses/etcd-0", **ADMIN), 404, "NotFound",
                  "Component not found: etcd-0", {"name": "etcd-0", "kind": "componentstatuses"})
