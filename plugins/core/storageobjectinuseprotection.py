"""StorageObjectInUseProtection admission: new claims and volumes carry the protection
finalizers (``plugin/pkg/admission/storage/storageobjectinuseprotection``).

A PersistentVolumeClaim gets ``kubernetes.io/pvc-protection`` and a PersistentVolume
``kubernetes.io/pv-protection`` when created, so that deleting one still in use (a claim
a pod mounts, a bound volume) only marks it for deletion; the pvc-protection and
pv-protection controllers remove the finalizers once nothing uses it. Enabled by default,
as in kube-apiserver 1.32.
"""

from kapiserver.admission import CREATE, AdmissionPlugin

PVC_PROTECTION_FINALIZER = "kubernetes.io/pvc-protection"
PV_PROTECTION_FINALIZER = "kubernetes.io/pv-protection"
_FINALIZERS = {"persistentvolumeclaims": PVC_PROTECTION_FINALIZER,
               "persistentvolumes": PV_PROTECTION_FINALIZER}


class StorageObjectInUseProtection(AdmissionPlugin):
    """Append the protection finalizer to a claim or volume being created."""

    name = "StorageObjectInUseProtection"
    operations = frozenset({CREATE})

    def __init__(self, server=None):
        self.server = server

    def admit(self, attributes):
        spec = attributes.resource
        finalizer = _FINALIZERS.get(spec.resource) if spec.group == "" else None
        if finalizer is None or attributes.subresource:
            return
        meta = attributes.object.setdefault("metadata", {})
        finalizers = meta.get("finalizers")
        if not isinstance(finalizers, list):
            finalizers = []
        if finalizer not in finalizers:
            # The store puts metadata fields in ObjectMeta's order before writing.
            meta["finalizers"] = finalizers + [finalizer]
