"""PersistentVolumeClaimResize: a claim grows only when bound and its class allows it."""

import pytest

from kapiserver import errors
from kapiserver.admission import UPDATE
from kapiserver_plugins.core.persistentvolumeclaims import PERSISTENT_VOLUME_CLAIMS
from kapiserver_plugins.storage.pvcresize import PersistentVolumeClaimResize
from kapiserver_plugins.storage.storageclasses import STORAGE_CLASSES, StorageClassStrategy
from tests.support.admission import AdmissionServer, Attributes, run

NOT_ALLOWED = ('persistentvolumeclaims "data" is forbidden: only dynamically provisioned pvc '
               'can be resized and the storageclass that provisions the pvc must support resize')


@pytest.fixture
def server(tmp_path):
    s = AdmissionServer(str(tmp_path / "db.sqlite"),
                        kinds=((STORAGE_CLASSES, StorageClassStrategy),))
    for name, expand in (("grows", True), ("fixed", False)):
        s.create("storage.k8s.io", "storageclasses", {
            "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": name}, "provisioner": "example.com/disk",
            "allowVolumeExpansion": expand})
    yield s
    s.close()


def claim(size, class_name="grows", phase="Bound"):
    return {"metadata": {"name": "data", "namespace": "ns"},
            "spec": {"resources": {"requests": {"storage": size}},
                     "storageClassName": class_name},
            "status": {"phase": phase}}


def resize(server, new, old):
    run(PersistentVolumeClaimResize(server), Attributes(
        PERSISTENT_VOLUME_CLAIMS, new, UPDATE, old=old, namespace="ns", name="data"))


def refused(server, new, old) -> str:
    with pytest.raises(errors.Forbidden) as caught:
        resize(server, new, old)
    return caught.value.message


def test_a_class_that_allows_expansion(server):
    resize(server, claim("2Gi"), claim("1Gi"))
    resize(server, claim("1Gi", "fixed"), claim("2Gi", "fixed"))  # shrinking: not ours
    resize(server, claim("1024Mi", "fixed"), claim("1Gi", "fixed"))  # the same size


def test_refusals_word_for_word(server):
    assert refused(server, claim("2Gi", "fixed"), claim("1Gi", "fixed")) == NOT_ALLOWED
    assert refused(server, claim("2Gi", "missing"), claim("1Gi", "missing")) == NOT_ALLOWED
    assert refused(server, claim("2Gi", ""), claim("1Gi", "")) == NOT_ALLOWED
    # An unbound claim's spec is validation's to refuse (a 422), as upstream, which validates
    # before this plugin runs.
    resize(server, claim("2Gi", "fixed", phase="Pending"), claim("1Gi", "fixed", phase="Pending"))
