"""DefaultStorageClass: claims without a class get the default one (the newest of several)."""

import pytest

from kapiserver_plugins.core.persistentvolumeclaims import PERSISTENT_VOLUME_CLAIMS
from kapiserver_plugins.storage.defaultstorageclass import DefaultStorageClass, default_class
from kapiserver_plugins.storage.storageclasses import STORAGE_CLASSES, StorageClassStrategy
from tests.support.admission import AdmissionServer, Attributes, run

DEFAULT = {"storageclass.kubernetes.io/is-default-class": "true"}
BETA_DEFAULT = {"storageclass.beta.kubernetes.io/is-default-class": "true"}


@pytest.fixture
def server(tmp_path):
    s = AdmissionServer(str(tmp_path / "db.sqlite"),
                        kinds=((STORAGE_CLASSES, StorageClassStrategy),))
    yield s
    s.close()


def storage_class(name, annotations=None, created=None):
    meta = {"name": name, "annotations": annotations or {}}
    if created:
        meta["creationTimestamp"] = created
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": meta,
            "provisioner": "example.com/disk"}


def claim(class_name=None, annotations=None):
    spec = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
            "volumeMode": "Filesystem"}
    if class_name is not None:
        spec["storageClassName"] = class_name
    return {"metadata": {"name": "c", "namespace": "ns", "annotations": annotations or {}},
            "spec": spec}


def admit(server, obj):
    run(DefaultStorageClass(server), Attributes(PERSISTENT_VOLUME_CLAIMS, obj, namespace="ns"))
    return obj["spec"]


def test_claims_without_a_class_get_the_default(server):
    assert "storageClassName" not in admit(server, claim())
    server.create("storage.k8s.io", "storageclasses", storage_class("slow"))
    server.create("storage.k8s.io", "storageclasses", storage_class("fast", DEFAULT))
    spec = admit(server, claim())
    assert spec["storageClassName"] == "fast"
    assert list(spec) == ["accessModes", "resources", "storageClassName", "volumeMode"]


def test_a_class_asked_for_is_kept(server):
    server.create("storage.k8s.io", "storageclasses", storage_class("fast", DEFAULT))
    assert admit(server, claim("slow"))["storageClassName"] == "slow"
    # The empty class means "no class" (a pre-provisioned volume without one).
    assert admit(server, claim(""))["storageClassName"] == ""
    beta = claim(annotations={"volume.beta.kubernetes.io/storage-class": "slow"})
    assert "storageClassName" not in admit(server, beta)


def test_of_several_defaults_the_newest_wins_then_the_first_name():
    classes = [storage_class("old", DEFAULT, "2024-01-01T00:00:00Z"),
               storage_class("newer-b", DEFAULT, "2024-06-01T00:00:00Z"),
               storage_class("newer-a", BETA_DEFAULT, "2024-06-01T00:00:00Z"),
               storage_class("newest-not-default", {}, "2025-01-01T00:00:00Z")]
    assert default_class(classes)["metadata"]["name"] == "newer-a"
    assert default_class(classes[:1])["metadata"]["name"] == "old"
    assert default_class(classes[3:]) is None
