"""StorageObjectInUseProtection: the protection finalizers of new claims and volumes."""

from kapiserver_plugins.core.persistentvolumeclaims import PERSISTENT_VOLUME_CLAIMS
from kapiserver_plugins.core.persistentvolumes import PERSISTENT_VOLUMES
from kapiserver_plugins.core.pods import PODS
from kapiserver_plugins.core.storageobjectinuseprotection import StorageObjectInUseProtection
from tests.support.admission import Attributes, run


def test_claims_and_volumes_get_their_finalizer_once():
    plugin = StorageObjectInUseProtection()
    claim = {"metadata": {"name": "c", "finalizers": ["example.com/keep"]}}
    run(plugin, Attributes(PERSISTENT_VOLUME_CLAIMS, claim))
    assert claim["metadata"]["finalizers"] == ["example.com/keep", "kubernetes.io/pvc-protection"]
    run(plugin, Attributes(PERSISTENT_VOLUME_CLAIMS, claim))
    assert claim["metadata"]["finalizers"] == ["example.com/keep", "kubernetes.io/pvc-protection"]
    volume = {"metadata": {"name": "v"}}
    run(plugin, Attributes(PERSISTENT_VOLUMES, volume))
    assert volume["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"]


def test_other_writes_are_left_alone():
    plugin = StorageObjectInUseProtection()
    for attributes in (Attributes(PODS, {"metadata": {"name": "p"}}),
                       Attributes(PERSISTENT_VOLUMES, {"metadata": {"name": "v"}},
                                  subresource="status")):
        run(plugin, attributes)
        assert "finalizers" not in attributes.object["metadata"]
    assert not plugin.handles("UPDATE")
