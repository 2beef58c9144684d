"""PersistentVolumes (with ``status``): ``pkg/registry/core/persistentvolume``.

Defaults: reclaim policy ``Retain``, ``volumeMode: Filesystem``, the sources' ``+default``
values, capacities rounded up to thousandths. A new volume starts ``Pending`` with its
``lastPhaseTransitionTime`` set (PersistentVolumeLastPhaseTransitionTime, GA in 1.31); a
status write that changes the phase stamps the time again. ``ValidatePersistentVolume``
wants access modes, a ``storage`` capacity and exactly one volume source; the source and
the volume mode are immutable, node affinity once set. The ``kubernetes.io/pv-protection``
finalizer is the StorageObjectInUseProtection admission plugin's, not this strategy's.
``spec.volumeAttributesClassName`` is dropped (VolumeAttributesClass is off in 1.32) unless
the stored volume already has one.
"""

from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue
from kapiserver.apimachinery.gosyntax import go_pointer, go_struct
from kapiserver.apimachinery.resource_validation import (validate_basic_resource,
                                                         validate_positive_quantity_value)
from kapiserver.apimachinery.validation import name_is_dns_subdomain
from kapiserver.apis.core.validation.scheduling import validate_node_selector
from kapiserver.registry.builtin import builtin_spec
from kapiserver.registry.printers import age
from kapiserver.registry.store import now_rfc3339

from .kind_helpers import (BETA_STORAGE_CLASS_ANNOTATION, CoreStrategy, access_modes_text, as_dict,
                           as_list, as_str, meta_of, parse_quantity, resource_list, spec_diff,
                           spec_of, status_of)
from .pv_sources import PV_SOURCES, host_path_is_root, set_source_defaults, validate_sources

#: Upstream's GetAttrs also offers a legacy "name" field, which the default field label
#: conversion of PersistentVolumes and claims refuses before it is ever read: only the
#: metadata fields select.
PERSISTENT_VOLUMES = builtin_spec("", "v1", "persistentvolumes")
SPEC = FieldPath("spec")
#: ``supportedAccessModes``, ``supportedReclaimPolicy`` and ``supportedVolumeModes``, each
#: sorted as ``sets.List`` sorts them.
ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")
VOLUME_MODES = ("Block", "Filesystem")
#: ``api.MountOptionAnnotation`` and the sources that may carry mount options.
MOUNT_OPTIONS_ANNOTATION = "volume.beta.kubernetes.io/mount-options"
_MOUNTABLE_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "glusterfs", "nfs", "rbd",
                      "quobyte", "iscsi", "cinder", "cephfs", "azureFile", "vsphereVolume",
                      "azureDisk", "photonPersistentDisk")


# -- access modes, shared with claims ----------------------------------------------------------

def validate_access_modes(modes, path: FieldPath) -> list:
    """Each mode supported, and ``ReadWriteOncePod`` alone."""
    errs, once_pod, others = [], False, False
    for mode in as_list(modes):
        if mode not in ACCESS_MODES:
            errs.append(FieldError.not_supported(path, mode, ACCESS_MODES))
        if mode == "ReadWriteOncePod":
            once_pod = True
        elif mode in ACCESS_MODES:
            others = True
    if once_pod and others:
        errs.append(FieldError.forbidden(path, "may not use ReadWriteOncePod with other access "
                                               "modes"))
    return errs


def validate_class_name(name: str, path: FieldPath) -> list:
    """``ValidateClassName`` (a DNS subdomain) reported as ``Invalid`` at ``path``."""
    return [FieldError.invalid(path, name, msg) for msg in name_is_dns_subdomain(name)]


# -- node affinity -------------------------------------------------------------------------------

def _validate_node_affinity(affinity: dict, path: FieldPath) -> list:
    """``validateVolumeNodeAffinity``."""
    required = affinity.get("required")
    if not isinstance(required, dict):
        return [FieldError.required(path.child("required"),
                                    "must specify required node constraints")]
    return validate_node_selector(required, path.child("required"))


def _go_node_affinity(affinity) -> GoValue | None:
    if not isinstance(affinity, dict):
        return None
    return GoValue(go_struct("core.VolumeNodeAffinity", (
        ("Required", go_pointer("core.NodeSelector", isinstance(affinity.get("required"),
                                                                dict))),)))


# -- the volume ------------------------------------------------------------------------------

def _go_resource_list(capacity: dict) -> GoValue:
    """``%#v`` of a ``core.ResourceList`` (the quantities' structs, keys sorted)."""
    items = ", ".join(f'"{name}":{quantity.go_syntax()}'
                      for name, quantity in resource_list(capacity))
    return GoValue("core.ResourceList{" + items + "}")


def validate_volume_spec(spec: dict, pv_name: str, path: FieldPath = SPEC,
                         attributes_class: bool = False) -> list:
    """``ValidatePersistentVolumeSpec`` of a PersistentVolume (not an inline one)."""
    errs = []
    modes = as_list(spec.get("accessModes"))
    if not modes:
        errs.append(FieldError.required(path.child("accessModes")))
    errs += validate_access_modes(modes, path.child("accessModes"))
    capacity = as_dict(spec.get("capacity"))
    if not capacity:
        errs.append(FieldError.required(path.child("capacity")))
    if "storage" not in capacity or len(capacity) > 1:
        errs.append(FieldError.not_supported(path.child("capacity"), _go_resource_list(capacity),
                                             ("storage",)))
    for name, quantity in resource_list(capacity):
        errs += validate_basic_resource(quantity, path.child("capacity").key(name))
        errs += validate_positive_quantity_value(quantity, path.child("capacity").key(name))
    policy = spec.get("persistentVolumeReclaimPolicy")
    if policy and policy not in RECLAIM_POLICIES:
        errs.append(FieldError.not_supported(path.child("persistentVolumeReclaimPolicy"),
                                             policy, RECLAIM_POLICIES))
    affinity = spec.get("nodeAffinity")
    if isinstance(affinity, dict):
        errs += _validate_node_affinity(affinity, path.child("nodeAffinity"))
    errs += validate_sources(spec, pv_name, path, isinstance(affinity, dict))
    if host_path_is_root(spec) and policy == "Recycle":
        errs.append(FieldError.forbidden(path.child("persistentVolumeReclaimPolicy"),
                                         "may not be 'recycle' for a hostPath mount of '/'"))
    class_name = as_str(spec.get("storageClassName"))
    if class_name:
        errs += validate_class_name(class_name, path.child("storageClassName"))
    mode = spec.get("volumeMode")
    if mode is not None and mode not in VOLUME_MODES:
        errs.append(FieldError.not_supported(path.child("volumeMode"), mode, VOLUME_MODES))
    attributes = spec.get("volumeAttributesClassName")
    if attributes is not None and attributes_class:
        attributes_path = path.child("volumeAttributesClassName")
        if not attributes:
            errs.append(FieldError.required(attributes_path, "an empty string is disallowed"))
        else:
            errs += validate_class_name(as_str(attributes), attributes_path)
        if spec.get("csi") is None:
            errs.append(FieldError.required(path.child("csi"), "has to be specified when using "
                                                               "volumeAttributesClassName"))
    return errs


def validate_mount_options(obj: dict) -> list:
    """``pkg/volume/validation.ValidatePersistentVolume``: the mount options annotation
    only on sources that can mount with options."""
    spec = spec_of(obj)
    if any(spec.get(source) is not None for source in _MOUNTABLE_SOURCES):
        return []
    if MOUNT_OPTIONS_ANNOTATION in as_dict(meta_of(obj).get("annotations")):
        return [FieldError.forbidden(FieldPath("metadata", "annotations", MOUNT_OPTIONS_ANNOTATION),
                                     "may not specify mount options for this volume type")]
    return []


def _sources(spec: dict) -> dict:
    return {key: spec[key] for key in PV_SOURCES if spec.get(key) is not None}


def validate_volume_update(new: dict, old: dict, validate) -> list:
    """``ValidatePersistentVolumeUpdate`` (which validates the new volume again)."""
    errs = validate(new)
    new_spec, old_spec = spec_of(new), spec_of(old)
    new_sources, old_sources = _sources(new_spec), _sources(old_spec)
    old_csi, new_csi = old_sources.get("csi"), new_sources.get("csi")
    if isinstance(old_csi, dict) and isinstance(new_csi, dict) and \
            old_csi.get("controllerExpandSecretRef") is None:
        # A controller expand secret may be added to a CSI volume that had none.
        new_sources["csi"] = {k: v for k, v in new_csi.items()
                              if k != "controllerExpandSecretRef"}
    if new_sources != old_sources:
        errs.append(FieldError.forbidden(
            FieldPath("spec", "persistentvolumesource"),
            "spec.persistentvolumesource is immutable after creation\n" +
            spec_diff("core.PersistentVolumeSource", old_sources, new_sources)))
    if new_spec.get("volumeMode") != old_spec.get("volumeMode"):
        errs.append(FieldError.invalid(FieldPath("volumeMode"), new_spec.get("volumeMode"),
                                       "field is immutable"))
    old_affinity = old_spec.get("nodeAffinity")
    if old_affinity is not None and new_spec.get("nodeAffinity") != old_affinity:
        errs.append(FieldError.invalid(FieldPath("nodeAffinity"),
                                       _go_node_affinity(new_spec.get("nodeAffinity")),
                                       "field is immutable"))
    if new_spec.get("volumeAttributesClassName") != old_spec.get("volumeAttributesClassName"):
        errs.append(FieldError.forbidden(FieldPath("spec", "volumeAttributesClassName"),
                                         "update is forbidden when the VolumeAttributesClass "
                                         "feature gate is disabled"))
    return errs


def set_volume_defaults(obj: dict) -> None:
    """``SetObjectDefaults_PersistentVolume``."""
    from kapiserver.apis.core.defaults import set_resource_list_defaults

    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    status = obj.get("status")
    if isinstance(status, dict) and not status.get("phase"):
        status["phase"] = "Pending"
    if not spec.get("persistentVolumeReclaimPolicy"):
        spec["persistentVolumeReclaimPolicy"] = "Retain"
    if spec.get("volumeMode") is None:
        spec["volumeMode"] = "Filesystem"
    set_resource_list_defaults(spec.get("capacity"))
    set_source_defaults(spec)


def _drop_attributes_class(new: dict, old: dict | None) -> None:
    """``DropDisabledSpecFields``: VolumeAttributesClass is off in 1.32."""
    if old is None or spec_of(old).get("volumeAttributesClassName") is None:
        spec_of(new).pop("volumeAttributesClassName", None)


class PersistentVolumeStrategy(CoreStrategy):
    """``persistentvolume.Strategy`` and its status strategy."""

    #: Its upstream store is built with ``ReturnDeletedObject``: DELETE answers the object.
    return_deleted_object = True

    def set_defaults(self, obj):
        set_volume_defaults(obj)

    def on_create(self, obj):
        obj["status"] = {"phase": "Pending", "lastPhaseTransitionTime": now_rfc3339()}
        _drop_attributes_class(obj, None)

    def on_update(self, new, old):
        _drop_attributes_class(new, old)

    def validate(self, obj):
        return super().validate(obj) + self._validate_volume(obj, attributes_class=False) + \
            validate_mount_options(obj)

    def _validate_volume(self, obj, attributes_class):
        return validate_volume_spec(spec_of(obj), meta_of(obj).get("name", ""),
                                    attributes_class=attributes_class)

    def validate_update(self, new, old):
        from kapiserver.apimachinery.validation import validate_core_object_meta_update

        attributes_class = spec_of(old).get("volumeAttributesClassName") is not None

        def validate(obj):
            return self.validate_meta(meta_of(obj)) + \
                self._validate_volume(obj, attributes_class)

        errs = validate(new) + validate_mount_options(new)
        errs += validate_volume_update(new, old, validate)
        return validate_core_object_meta_update(meta_of(new), meta_of(old)) + errs

    def prepare_status_update(self, new, old):
        super().prepare_status_update(new, old)
        status, old_status = new.get("status"), status_of(old)
        if not isinstance(status, dict):
            return
        phase, old_phase = status.get("phase"), old_status.get("phase")
        stamp, old_stamp = status.get("lastPhaseTransitionTime"), \
            old_status.get("lastPhaseTransitionTime")
        if phase == old_phase and stamp is None:
            if old_stamp is not None:
                status["lastPhaseTransitionTime"] = old_stamp
        elif phase != old_phase and (stamp is None or stamp == old_stamp):
            status["lastPhaseTransitionTime"] = now_rfc3339()

    def validate_status(self, new, old):
        if not meta_of(new).get("resourceVersion"):
            return [FieldError.required(FieldPath("resourceVersion"))]
        return []

    def table_cells(self, obj):
        meta, spec, status = meta_of(obj), spec_of(obj), status_of(obj)
        claim = spec.get("claimRef")
        claim_text = f"{as_str(claim.get('namespace'))}/{as_str(claim.get('name'))}" \
            if isinstance(claim, dict) else ""
        capacity = parse_quantity(as_dict(spec.get("capacity")).get("storage"))
        phase = "Terminating" if meta.get("deletionTimestamp") else as_str(status.get("phase"))
        annotations = as_dict(meta.get("annotations"))
        storage_class = annotations[BETA_STORAGE_CLASS_ANNOTATION] \
            if BETA_STORAGE_CLASS_ANNOTATION in annotations \
            else as_str(spec.get("storageClassName"))
        attributes = spec.get("volumeAttributesClassName")
        mode = spec.get("volumeMode")
        return [meta.get("name", ""), capacity.canonical() if capacity else "0",
                access_modes_text(spec.get("accessModes")),
                as_str(spec.get("persistentVolumeReclaimPolicy")), phase, claim_text,
                storage_class, "<unset>" if attributes is None else as_str(attributes),
                as_str(status.get("reason")), age(meta.get("creationTimestamp")),
                "<unset>" if mode is None else as_str(mode)]


def install(server) -> dict:
    """The handlers of this module's resources, keyed as ``APIGroupInfo`` keys them."""
    from kapiserver.server.apigroups import builtin_handlers

    return builtin_handlers(server, PersistentVolumeStrategy(PERSISTENT_VOLUMES))

