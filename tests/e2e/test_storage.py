"""storage.k8s.io/v1 end to end: StorageClasses, CSIDrivers, CSINodes,
CSIStorageCapacities and VolumeAttachments, with kubectl and the Python client."""

import json

import pytest

from kapiserver.testing import assert_status

ADMIN = dict(user="admin", groups=["system:masters"])
API = "/apis/storage.k8s.io/v1"
MERGE = {"Content-Type": "application/merge-patch+json"}
CLASS_YAML = """
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: fast
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: example.com/ssd
parameters:
  type: pd-ssd
allowVolumeExpansion: true
"""


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    server = KapiserverProcess(str(tmp_path_factory.mktemp("storage")), workers=1).start()
    yield server
    server.stop()


def test_storage_classes(api):
    from kubernetes import client

    api.kubectl("apply", "-f", "-", input=CLASS_YAML, check=True)
    rows = api.kubectl("get", "sc", check=True).stdout.splitlines()
    assert rows[0].split() == ["NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE",
                               "ALLOWVOLUMEEXPANSION", "AGE"]
    assert rows[1].split()[:6] == ["fast", "(default)", "example.com/ssd", "Delete",
                                   "Immediate", "true"]
    fast = client.StorageV1Api(api.python_client()).read_storage_class("fast")
    assert (fast.reclaim_policy, fast.volume_binding_mode) == ("Delete", "Immediate")
    # Labels may change; what the provisioner was given may not.
    api.kubectl("label", "sc", "fast", "tier=1", check=True)
    response = api.request("PATCH", f"{API}/storageclasses/fast", headers=MERGE, json={
        "parameters": {"type": "pd-standard"}, "reclaimPolicy": "Retain"}, **ADMIN)
    assert_status(response, 422, "Invalid",
                  'StorageClass.storage.k8s.io "fast" is invalid: [parameters: Forbidden: '
                  "updates to parameters are forbidden., reclaimPolicy: Forbidden: updates to "
                  "reclaimPolicy are forbidden.]")
    response = api.request("POST", f"{API}/storageclasses", json={
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "x"}},
        **ADMIN)
    assert_status(response, 422, "Invalid",
                  'StorageClass.storage.k8s.io "x" is invalid: provisioner: Required value')


def test_csi_drivers_and_nodes(api):
    from kubernetes import client

    storage = client.StorageV1Api(api.python_client())
    storage.create_csi_driver({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
                               "metadata": {"name": "csi.example.com"},
                               "spec": {"podInfoOnMount": True}})
    driver = storage.read_csi_driver("csi.example.com")
    assert (driver.spec.attach_required, driver.spec.pod_info_on_mount,
            driver.spec.volume_lifecycle_modes, driver.spec.fs_group_policy,
            driver.spec.se_linux_mount) == (True, True, ["Persistent"],
                                            "ReadWriteOnceWithFSType", False)
    assert driver.metadata.generation is None
    rows = api.kubectl("get", "csidrivers", check=True).stdout.splitlines()
    assert rows[1].split()[:7] == ["csi.example.com", "true", "true", "false", "<unset>",
                                   "false", "Persistent"]
    storage.patch_csi_driver("csi.example.com", {"spec": {"requiresRepublish": True}})
    assert storage.read_csi_driver("csi.example.com").metadata.generation == 1
    response = api.request("PATCH", f"{API}/csidrivers/csi.example.com", headers=MERGE,
                           json={"spec": {"attachRequired": False}}, **ADMIN)
    assert_status(response, 422, "Invalid",
                  'CSIDriver.storage.k8s.io "csi.example.com" is invalid: '
                  "spec.attachedRequired: Invalid value: false: field is immutable")
    storage.create_csi_node({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
                             "metadata": {"name": "node-1"},
                             "spec": {"drivers": [{"name": "csi.example.com",
                                                   "nodeID": "node-1",
                                                   "topologyKeys": ["zone"]}]}})
    rows = api.kubectl("get", "csinodes", check=True).stdout.splitlines()
    assert rows[0].split() == ["NAME", "DRIVERS", "AGE"]
    assert rows[1].split()[:2] == ["node-1", "1"]


def test_storage_capacities_and_attachments(api):
    from kubernetes import client

    storage = client.StorageV1Api(api.python_client())
    storage.create_namespaced_csi_storage_capacity("default", {
        "apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
        "metadata": {"name": "cap"}, "storageClassName": "fast", "capacity": "100Gi",
        "nodeTopology": {"matchLabels": {"zone": "a"}}})
    rows = api.kubectl("get", "csistoragecapacities", "-n", "default",
                       check=True).stdout.splitlines()
    assert rows[0].split() == ["NAME", "STORAGECLASSNAME", "CAPACITY"]
    assert rows[1].split() == ["cap", "fast", "100Gi"]
    storage.create_volume_attachment({
        "apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
        "metadata": {"name": "va"},
        "spec": {"attacher": "csi.example.com", "nodeName": "node-1",
                 "source": {"persistentVolumeName": "pv-1"}}})
    storage.patch_volume_attachment_status("va", {"status": {"attached": True,
                                                             "attachmentMetadata": {"a": "b"}}})
    attachment = storage.read_volume_attachment("va")
    assert attachment.status.attached is True
    rows = api.kubectl("get", "volumeattachments", check=True).stdout.splitlines()
    assert rows[0].split() == ["NAME", "ATTACHER", "PV", "NODE", "ATTACHED", "AGE"]
    assert rows[1].split()[:5] == ["va", "csi.example.com", "pv-1", "node-1", "true"]
    response = api.request("PATCH", f"{API}/volumeattachments/va", headers=MERGE,
                           json={"spec": {"nodeName": "node-2"}}, **ADMIN)
    body = assert_status(response, 422, "Invalid")
    assert body["details"]["causes"][0]["field"] == "spec"
    table = json.loads(api.kubectl("get", "volumeattachments", "-o", "json",
                                   check=True).stdout)
    assert table["items"][0]["spec"]["nodeName"] == "node-1"
