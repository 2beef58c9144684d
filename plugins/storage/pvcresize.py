"""PersistentVolumeClaimResize admission: a claim grows only if its class allows it
(``plugin/pkg/admission/storage/persistentvolume/resize``).

Raising a bound claim's storage request is refused unless its StorageClass (the same
before and after, and not empty) has ``allowVolumeExpansion: true``; shrinking or keeping
the size is never this plugin's business, and validation refuses any change to the spec of
a claim that is not bound. Enabled by default,
as in kube-apiserver 1.32.
"""

from __future__ import annotations

from kapiserver.admission import UPDATE, AdmissionPlugin
from kapiserver.admission.helpers import forbidden
from kapiserver.admission.informers import informers_for
from kapiserver.apimachinery import quantity

from .defaultstorageclass import BETA_CLASS_ANNOTATION

GROUP = "storage.k8s.io"


def _storage_request(claim: dict) -> quantity.Quantity:
    spec = claim.get("spec") if isinstance(claim.get("spec"), dict) else {}
    resources = spec.get("resources") if isinstance(spec.get("resources"), dict) else {}
    requests = resources.get("requests") if isinstance(resources.get("requests"), dict) else {}
    try:
        return quantity.from_json(requests.get("storage"))
    except (quantity.QuantityError, ValueError, TypeError):
        return quantity.Quantity()


def claim_class(claim: dict) -> str:
    """``GetPersistentVolumeClaimClass``: the beta annotation, else ``storageClassName``."""
    annotations = (claim.get("metadata") or {}).get("annotations") or {}
    if BETA_CLASS_ANNOTATION in annotations:
        return annotations[BETA_CLASS_ANNOTATION]
    spec = claim.get("spec") if isinstance(claim.get("spec"), dict) else {}
    return spec.get("storageClassName") or ""


class PersistentVolumeClaimResize(AdmissionPlugin):
    """Refuse growing a claim its class does not let grow."""

    name = "PersistentVolumeClaimResize"
    operations = frozenset({UPDATE})

    def __init__(self, server):
        self.server = server

    def _allows_resize(self, new: dict, old: dict) -> bool:
        name, old_name = claim_class(new), claim_class(old)
        if not name or not old_name or name != old_name:
            return False
        found = informers_for(self.server).informer(GROUP, "storageclasses").get("", name)
        return found is not None and found.get("allowVolumeExpansion") is True

    def validate(self, attributes):
        spec = attributes.resource
        if spec.group != "" or spec.resource != "persistentvolumeclaims" or \
                attributes.subresource:
            return
        new, old = attributes.object, attributes.old_object
        if not isinstance(old, dict):
            return
        if _storage_request(new).cmp(_storage_request(old)) <= 0:
            return
        if ((old.get("status") or {}).get("phase")) != "Bound":
            # Upstream refuses this ("Only bound persistent volume claims can be expanded")
            # only after validation, which refuses every spec change of a claim that is not
            # bound (a 422): kapiserver validates after admission, so the 422 is left to it.
            return
        if not self._allows_resize(new, old):
            raise forbidden(attributes, "only dynamically provisioned pvc can be resized and "
                                        "the storageclass that provisions the pvc must support "
                                        "resize")
