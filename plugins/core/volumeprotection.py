"""The pvc-protection and pv-protection controllers: the protection finalizers come off once
nothing uses the claim or volume (``pkg/controller/volume/pvcprotection``,
``pvprotection``).

StorageObjectInUseProtection gives every new claim ``kubernetes.io/pvc-protection`` and
every volume ``kubernetes.io/pv-protection``; without these controllers (which
kube-controller-manager runs) a deleted claim or volume would never go, nor would a
namespace holding one. A claim being deleted loses its finalizer when no scheduled pod of
its namespace mounts it (or, through a generic ephemeral volume, still runs with it); a
volume when it is not ``Bound``. Like upstream's, they also give the finalizer to claims
and volumes that lack it and are not being deleted (made before the plugin was enabled).
Writes are recorded in ``managedFields`` as kube-controller-manager's.
"""

from __future__ import annotations

import copy
import logging

from kapiserver import errors
from kapiserver.admission.informers import informers_for
from kapiserver.controllers import Controller

from .storageobjectinuseprotection import PV_PROTECTION_FINALIZER, PVC_PROTECTION_FINALIZER

log = logging.getLogger(__name__)

MANAGER = "kube-controller-manager"
_SHUT_DOWN = ("Succeeded", "Failed")


def _meta(obj: dict) -> dict:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _finalizers(obj: dict) -> list:
    finalizers = _meta(obj).get("finalizers")
    return finalizers if isinstance(finalizers, list) else []


def pod_uses_claim(pod: dict, claim_name: str) -> bool:
    """``podUsesPVC``: a scheduled pod mounting the claim, or whose generic ephemeral volume
    it is while the pod has not finished."""
    spec = pod.get("spec") if isinstance(pod.get("spec"), dict) else {}
    if not spec.get("nodeName"):
        return False  # a kubelet refuses to start a pod whose claim is being deleted
    shut_down = ((pod.get("status") or {}).get("phase")) in _SHUT_DOWN
    pod_name = _meta(pod).get("name", "")
    for volume in spec.get("volumes") or []:
        if not isinstance(volume, dict):
            continue
        source = volume.get("persistentVolumeClaim")
        if isinstance(source, dict) and source.get("claimName") == claim_name:
            return True
        if not shut_down and isinstance(volume.get("ephemeral"), dict) and \
                f"{pod_name}-{volume.get('name', '')}" == claim_name:
            return True
    return False


class _ProtectionController(Controller):
    """One pass over the objects of a resource, whenever the store moved on."""

    interval = 1.0
    resource = ""
    finalizer = ""

    def __init__(self, server):
        self.server = server
        self.seen_revision = -1

    @property
    def registry(self):
        return self.server.registries.get(("", self.resource))

    def sync(self) -> None:
        revision = self.server.watch_cache.revision
        if revision == self.seen_revision or self.registry is None:
            return
        informer = informers_for(self.server).informer("", self.resource)
        for obj in informer.list():
            meta = _meta(obj)
            protected = self.finalizer in _finalizers(obj)
            if meta.get("deletionTimestamp"):
                if protected and not self.in_use(obj):
                    self._write(obj, [f for f in _finalizers(obj) if f != self.finalizer])
            elif not protected:
                self._write(obj, _finalizers(obj) + [self.finalizer])
        self.seen_revision = revision

    def in_use(self, obj: dict) -> bool:
        raise NotImplementedError

    def _write(self, obj: dict, finalizers: list) -> None:
        updated = copy.deepcopy(obj)
        meta = _meta(updated)
        if finalizers:
            meta["finalizers"] = finalizers
        else:
            meta.pop("finalizers", None)
        registry = self.registry
        try:
            registry.update(meta.get("namespace", ""), meta.get("name", ""), updated,
                            manage=registry.field_manager(MANAGER))
        except (errors.Conflict, errors.NotFound):
            self.seen_revision = -1  # changed or gone meanwhile: look again next pass
        except errors.StatusError as err:
            log.warning("%s: cannot update %s %s/%s: %s", self.name, self.resource,
                        meta.get("namespace", ""), meta.get("name", ""), err.message)
            self.seen_revision = -1


class PVCProtectionController(_ProtectionController):
    """``pvc-protection``: a deleted claim goes once no pod uses it."""

    name = "pvc-protection"
    resource = "persistentvolumeclaims"
    finalizer = PVC_PROTECTION_FINALIZER

    def in_use(self, claim: dict) -> bool:
        meta = _meta(claim)
        pods = informers_for(self.server).informer("", "pods").list(meta.get("namespace", ""))
        return any(pod_uses_claim(pod, meta.get("name", "")) for pod in pods)


class PVProtectionController(_ProtectionController):
    """``pv-protection``: a deleted volume goes once it is no longer bound."""

    name = "pv-protection"
    resource = "persistentvolumes"
    finalizer = PV_PROTECTION_FINALIZER

    def in_use(self, volume: dict) -> bool:
        return ((volume.get("status") or {}).get("phase")) == "Bound"
