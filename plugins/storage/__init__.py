"""The ``storage.k8s.io`` API group: StorageClasses, CSIDrivers, CSINodes, CSIStorageCapacities and VolumeAttachments."""
