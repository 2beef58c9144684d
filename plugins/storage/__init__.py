"""The ``storage.k8s.io`` API group: StorageClasses, CSIDrivers, CSINodes,
CSIStorageCapacities and VolumeAttachments (with ``status``); the DefaultStorageClass and
PersistentVolumeClaimResize admission plugins, which apply StorageClasses to claims."""

from kapiserver.plugin_manager import hookimpl
from kapiserver.registry.store import RegistryStore
from kapiserver.server.apigroups import APIGroupInfo, APIGroupInstaller, builtin_handlers

from .csi import (CSI_DRIVERS, CSI_NODES, CSI_STORAGE_CAPACITIES, CSIDriverStrategy,
                  CSINodeStrategy, CSIStorageCapacityStrategy, csi_driver_generation)
from .defaultstorageclass import DefaultStorageClass
from .pvcresize import PersistentVolumeClaimResize
from .storageclasses import STORAGE_CLASSES, StorageClassStrategy
from .volumeattachments import VOLUME_ATTACHMENTS, VolumeAttachmentStrategy


class CSIDriverRegistry(RegistryStore):
    """CSIDrivers' storage: a driver is created without a generation and counts one for each
    update of its token requests, requiresRepublish or seLinuxMount (upstream's
    ``PrepareForUpdate``), which the generic store's all-or-nothing generation cannot say."""

    def _prepare_update(self, new, old):
        new = super()._prepare_update(new, old)
        generation = csi_driver_generation(new, old)
        if generation:
            new["metadata"]["generation"] = generation
        return new


class StorageV1(APIGroupInstaller):
    """Install ``storage.k8s.io/v1`` backed by the server's storage."""

    group = "storage.k8s.io"
    delegate = "kube"

    def install(self, server):
        handlers = builtin_handlers(server, CSIDriverStrategy(CSI_DRIVERS), CSIDriverRegistry)
        for strategy in (StorageClassStrategy(STORAGE_CLASSES), CSINodeStrategy(CSI_NODES),
                         CSIStorageCapacityStrategy(CSI_STORAGE_CAPACITIES),
                         VolumeAttachmentStrategy(VOLUME_ATTACHMENTS)):
            handlers.update(builtin_handlers(server, strategy))
        return APIGroupInfo(self.group, {"v1": handlers})


@hookimpl
def kapiserver_api_groups(config):
    return [StorageV1()]


@hookimpl
def kapiserver_admission_plugins(config):
    return {"DefaultStorageClass": DefaultStorageClass,
            "PersistentVolumeClaimResize": PersistentVolumeClaimResize}
