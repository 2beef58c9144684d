"""The pvc-protection and pv-protection controllers: finalizers off once nothing uses the
claim or volume, on for those that lack them."""

import pytest

from kapiserver import errors
from kapiserver_plugins.core.persistentvolumeclaims import (PERSISTENT_VOLUME_CLAIMS,
                                                            PersistentVolumeClaimStrategy)
from kapiserver_plugins.core.persistentvolumes import (PERSISTENT_VOLUMES,
                                                       PersistentVolumeStrategy)
from kapiserver_plugins.core.pods import PODS, PodStrategy
from kapiserver_plugins.core.volumeprotection import (PVCProtectionController,
                                                      PVProtectionController, pod_uses_claim)
from tests.support.admission import AdmissionServer

NS = "ns"
PVC_FINALIZER = "kubernetes.io/pvc-protection"


@pytest.fixture
def server(tmp_path):
    s = AdmissionServer(str(tmp_path / "db.sqlite"), kinds=(
        (PERSISTENT_VOLUME_CLAIMS, PersistentVolumeClaimStrategy),
        (PERSISTENT_VOLUMES, PersistentVolumeStrategy), (PODS, PodStrategy)))
    yield s
    s.close()


def claim(name, finalizers=(PVC_FINALIZER,)):
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "finalizers": list(finalizers)},
            "spec": {"accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "1Gi"}}}}


def pod(name, claim_name, node="node-1", **volume):
    volume = volume or {"persistentVolumeClaim": {"claimName": claim_name}}
    spec = {"containers": [{"name": "app", "image": "nginx"}],
            "volumes": [{"name": "data", **volume}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def get(server, resource, name, namespace=NS):
    try:
        return server.registries[("", resource)].get(namespace, name)
    except errors.NotFound:
        return None


def test_a_deleted_claim_goes_once_no_scheduled_pod_mounts_it(server):
    controller = PVCProtectionController(server)
    server.create("", "persistentvolumeclaims", claim("used"), NS)
    server.create("", "persistentvolumeclaims", claim("free"), NS)
    server.create("", "pods", pod("runner", "used"), NS)
    server.create("", "pods", pod("unscheduled", "free", node=None), NS)
    claims = server.registries[("", "persistentvolumeclaims")]
    claims.delete(NS, "used")
    claims.delete(NS, "free")
    controller.sync()
    assert get(server, "persistentvolumeclaims", "free") is None
    kept = get(server, "persistentvolumeclaims", "used")
    assert kept["metadata"]["deletionTimestamp"] and kept["metadata"]["finalizers"] == \
        [PVC_FINALIZER]
    server.registries[("", "pods")].delete(NS, "runner")
    controller.sync()
    assert get(server, "persistentvolumeclaims", "used") is None


def test_claims_without_the_finalizer_get_it(server):
    claims = server.registries[("", "persistentvolumeclaims")]
    claims.create(claim("old", finalizers=()), NS, manage=claims.field_manager("kubectl"))
    PVCProtectionController(server).sync()
    stored = get(server, "persistentvolumeclaims", "old")
    assert stored["metadata"]["finalizers"] == [PVC_FINALIZER]
    assert {m["manager"] for m in stored["metadata"]["managedFields"]} == {
        "kubectl", "kube-controller-manager"}


def test_a_deleted_volume_goes_once_unbound(server):
    volumes = server.registries[("", "persistentvolumes")]
    server.create("", "persistentvolumes", {
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": "pv", "finalizers": ["kubernetes.io/pv-protection"]},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                 "hostPath": {"path": "/tmp/x"}}})
    bound = volumes.get("", "pv")
    bound["status"] = {"phase": "Bound"}
    volumes.storage.update(volumes.spec.key("", "pv"), volumes.encode(bound),
                           int(bound["metadata"]["resourceVersion"]))
    volumes.delete("", "pv")
    controller = PVProtectionController(server)
    controller.sync()
    assert get(server, "persistentvolumes", "pv", "") is not None
    released = volumes.get("", "pv")
    released["status"] = {"phase": "Released"}
    volumes.storage.update(volumes.spec.key("", "pv"), volumes.encode(released),
                           int(released["metadata"]["resourceVersion"]))
    controller.sync()
    assert get(server, "persistentvolumes", "pv", "") is None


def test_what_counts_as_using_a_claim():
    assert pod_uses_claim(pod("p", "c"), "c")
    assert not pod_uses_claim(pod("p", "c"), "other")
    assert not pod_uses_claim(pod("p", "c", node=None), "c")
    ephemeral = pod("web", None, ephemeral={"volumeClaimTemplate": {"spec": {}}})
    assert pod_uses_claim(ephemeral, "web-data")
    ephemeral["status"] = {"phase": "Succeeded"}
    assert not pod_uses_claim(ephemeral, "web-data")
