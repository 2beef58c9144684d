"""DefaultStorageClass admission: a claim that names no class gets the default one
(``plugin/pkg/admission/storage/storageclass/setdefault``, 1.32).

A new PersistentVolumeClaim without ``storageClassName`` (nor the beta
``volume.beta.kubernetes.io/storage-class`` annotation) gets the name of the StorageClass
annotated ``storageclass.kubernetes.io/is-default-class: "true"`` (or the beta
annotation); of several defaults the newest wins (then the first by name), as
``GetDefaultClass`` picks since 1.26. Without a default the claim is left alone. Enabled
by default, as in kube-apiserver 1.32.
"""

from __future__ import annotations

from kapiserver.admission import CREATE, AdmissionPlugin
from kapiserver.admission.helpers import set_field
from kapiserver.admission.informers import informers_for
from kapiserver.apis.core.fieldorder import json_order

GROUP = "storage.k8s.io"
DEFAULT_ANNOTATIONS = ("storageclass.kubernetes.io/is-default-class",
                       "storageclass.beta.kubernetes.io/is-default-class")
BETA_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"


def is_default(storage_class: dict) -> bool:
    """``IsDefaultAnnotation``: either annotation says ``"true"``."""
    annotations = (storage_class.get("metadata") or {}).get("annotations") or {}
    return any(annotations.get(key) == "true" for key in DEFAULT_ANNOTATIONS)


def claim_has_class(claim: dict) -> bool:
    """``PersistentVolumeClaimHasClass``: the claim names a class, even the empty one."""
    annotations = (claim.get("metadata") or {}).get("annotations") or {}
    spec = claim.get("spec") if isinstance(claim.get("spec"), dict) else {}
    return BETA_CLASS_ANNOTATION in annotations or spec.get("storageClassName") is not None


def _meta(storage_class: dict) -> dict:
    meta = storage_class.get("metadata")
    return meta if isinstance(meta, dict) else {}


def default_class(classes: list[dict]) -> dict | None:
    """``GetDefaultClass``: the newest default class, by name among equally new ones."""
    defaults = [c for c in classes if is_default(c)]
    if not defaults:
        return None
    defaults.sort(key=lambda c: _meta(c).get("name", ""))
    # creationTimestamps are RFC 3339 in UTC to the second: their text sorts as their time.
    # (A stable sort: the first by name stays first among equally new ones.)
    defaults.sort(key=lambda c: _meta(c).get("creationTimestamp") or "", reverse=True)
    return defaults[0]


class DefaultStorageClass(AdmissionPlugin):
    """Give new claims without a class the default StorageClass's name."""

    name = "DefaultStorageClass"
    operations = frozenset({CREATE})

    def __init__(self, server):
        self.server = server

    def admit(self, attributes):
        spec = attributes.resource
        if spec.group != "" or spec.resource != "persistentvolumeclaims" or \
                attributes.subresource:
            return
        claim = attributes.object
        if claim_has_class(claim):
            return
        found = default_class(informers_for(self.server).informer(GROUP, "storageclasses")
                              .list())
        if found is None:
            return
        claim_spec = claim.setdefault("spec", {})
        set_field(claim_spec, "storageClassName", _meta(found).get("name", ""),
                  json_order("PersistentVolumeClaimSpec"))
