"""VolumeAttachments (with ``status``): ``ValidateVolumeAttachment`` (and its v1 extras),
``ValidateVolumeAttachmentUpdate`` and the ``volumeattachment`` registry strategy of 1.32:
the spec never changes; the status is written through ``volumeattachments/status``."""

from __future__ import annotations

from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue, go_quote
from kapiserver.apimachinery.validation import (inclusive_range_error, name_is_dns_subdomain,
                                                validate_core_object_meta,
                                                validate_core_object_meta_update)
from kapiserver.apis.core.validation.volumes import validate_csi_driver_name
from kapiserver.registry.builtin import builtin_spec
from kapiserver.registry.builtin_strategy import BuiltinStrategy
from kapiserver.registry.printers import AGE_COLUMN, NAME_COLUMN, age

from .csi import _description

VOLUME_ATTACHMENTS = builtin_spec("storage.k8s.io", "v1", "volumeattachments")
MAX_METADATA_SIZE = 256 * (1 << 10)
MAX_ERROR_MESSAGE_SIZE = 1024
MAX_INT32 = (1 << 31) - 1
#: What a status write may not change of the metadata (``metav1.ResetObjectMetaForStatus``).
STATUS_KEPT_METADATA = ("deletionTimestamp", "generation", "selfLink", "labels",
                        "annotations", "finalizers", "ownerReferences")


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _str(value) -> str:
    return value if isinstance(value, str) else ""


def _validate_source(source: dict, path: FieldPath) -> list[FieldError]:
    """``validateVolumeAttachmentSource``: exactly one of a PV name and an inline spec."""
    inline, name = source.get("inlineVolumeSpec"), source.get("persistentVolumeName")
    message = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"
    if inline is None and name is None:
        return [FieldError.required(path, message)]
    if inline is not None and name is not None:
        return [FieldError.forbidden(path, message)]
    if name is not None:
        if not _str(name):
            return [FieldError.required(path.child("persistentVolumeName"),
                                        "must specify non empty persistentVolumeName")]
        return []
    return validate_inline_volume_spec(_dict(inline), path.child("inlineVolumeSpec"))


def validate_inline_volume_spec(spec: dict, path: FieldPath) -> list[FieldError]:
    """``ValidatePersistentVolumeSpec`` of an inline volume: a CSI source, access modes, no
    claim reference, capacity or node affinity."""
    from kapiserver_plugins.core.persistentvolumes import (RECLAIM_POLICIES, VOLUME_MODES,
                                                           validate_access_modes,
                                                           validate_class_name)
    from kapiserver_plugins.core.pv_sources import validate_sources

    inline = "may not be specified in the context of inline volumes"
    errs = []
    if spec.get("claimRef") is not None:
        errs.append(FieldError.forbidden(path.child("claimRef"), inline))
    if spec.get("capacity"):
        errs.append(FieldError.forbidden(path.child("capacity"), inline))
    if spec.get("csi") is None:
        errs.append(FieldError.required(path.child("csi"),
                                        "has to be specified in the context of inline volumes"))
    modes = spec.get("accessModes") if isinstance(spec.get("accessModes"), list) else []
    if not modes:
        errs.append(FieldError.required(path.child("accessModes"), ""))
    errs += validate_access_modes(modes, path.child("accessModes"))
    policy = spec.get("persistentVolumeReclaimPolicy")
    if policy and policy not in RECLAIM_POLICIES:
        errs.append(FieldError.not_supported(path.child("persistentVolumeReclaimPolicy"),
                                             policy, RECLAIM_POLICIES))
    if spec.get("nodeAffinity") is not None:
        errs.append(FieldError.forbidden(path.child("nodeAffinity"), inline))
    errs += validate_sources(spec, "", path, False)
    if _str(spec.get("storageClassName")):
        errs += validate_class_name(spec["storageClassName"], path.child("storageClassName"))
    mode = spec.get("volumeMode")
    if mode is not None and mode not in VOLUME_MODES:
        errs.append(FieldError.not_supported(path.child("volumeMode"), mode, VOLUME_MODES))
    return errs


def _validate_volume_error(error, path: FieldPath) -> list[FieldError]:
    """``validateVolumeError``."""
    if not isinstance(error, dict):
        return []
    errs = []
    if len(_str(error.get("message")).encode()) > MAX_ERROR_MESSAGE_SIZE:
        # Upstream names the metadata's limit here.
        errs.append(FieldError.too_long(path.child("message"), "", MAX_METADATA_SIZE))
    code = error.get("errorCode")
    if isinstance(code, int) and not isinstance(code, bool) and code < 0:
        errs.append(FieldError.invalid(path.child("errorCode"), code,
                                       inclusive_range_error(0, MAX_INT32)))
    return errs


def validate_volume_attachment_status(status: dict, path: FieldPath) -> list[FieldError]:
    """``validateVolumeAttachmentStatus``."""
    errs = []
    metadata = _dict(status.get("attachmentMetadata"))
    size = sum(len(k.encode()) + len(_str(v).encode()) for k, v in metadata.items())
    if size > MAX_METADATA_SIZE:
        errs.append(FieldError.too_long(path.child("attachmentMetadata"), "", MAX_METADATA_SIZE))
    errs += _validate_volume_error(status.get("attachError"), path.child("attachError"))
    return errs + _validate_volume_error(status.get("detachError"), path.child("detachError"))


def validate_volume_attachment(obj: dict) -> list[FieldError]:
    """``ValidateVolumeAttachment``."""
    errs = validate_core_object_meta(_dict(obj.get("metadata")), False, name_is_dns_subdomain)
    spec, path = _dict(obj.get("spec")), FieldPath("spec")
    attacher = _str(spec.get("attacher"))
    if not attacher:
        errs.append(FieldError.required(path.child("attacher"), attacher))
    errs += _validate_source(_dict(spec.get("source")), path.child("source"))
    node = _str(spec.get("nodeName"))
    errs += [FieldError.invalid(path.child("nodeName"), node, msg)
             for msg in name_is_dns_subdomain(node)]
    return errs + validate_volume_attachment_status(_dict(obj.get("status")),
                                                    FieldPath("status"))


def validate_volume_attachment_v1(obj: dict) -> list[FieldError]:
    """``ValidateVolumeAttachmentV1``: what v1 creates check beyond the common rules."""
    spec = _dict(obj.get("spec"))
    errs = validate_csi_driver_name(_str(spec.get("attacher")), FieldPath("spec.attacher"))
    name = _dict(spec.get("source")).get("persistentVolumeName")
    if name is not None:
        errs += [FieldError.invalid(FieldPath("spec.source.persistentVolumeName"), _str(name),
                                    msg) for msg in name_is_dns_subdomain(_str(name))]
    return errs


def _go_spec(spec: dict) -> GoValue:
    """A ``storage.VolumeAttachmentSpec`` as ``%#v`` prints it."""
    source = _dict(spec.get("source"))

    def pointer(go_type: str, value) -> str:
        return f"(*{go_type})({'0xc000000000' if value is not None else 'nil'})"

    return GoValue(
        f"storage.VolumeAttachmentSpec{{Attacher:{go_quote(_str(spec.get('attacher')))}, "
        "Source:storage.VolumeAttachmentSource{PersistentVolumeName:"
        + pointer("string", source.get("persistentVolumeName")) + ", InlineVolumeSpec:"
        + pointer("core.PersistentVolumeSpec", source.get("inlineVolumeSpec"))
        + f"}}, NodeName:{go_quote(_str(spec.get('nodeName')))}}}")


def validate_volume_attachment_update(new: dict, old: dict) -> list[FieldError]:
    """``ValidateVolumeAttachmentUpdate``: the spec is read-only."""
    errs = validate_core_object_meta_update(_dict(new.get("metadata")),
                                            _dict(old.get("metadata")))
    errs += validate_volume_attachment(new)
    if _dict(new.get("spec")) != _dict(old.get("spec")):
        errs.append(FieldError.invalid(FieldPath("spec"), _go_spec(_dict(new.get("spec"))),
                                       "field is immutable"))
    return errs


class VolumeAttachmentStrategy(BuiltinStrategy):
    """``pkg/registry/storage/volumeattachment`` strategy."""

    #: Its upstream store is built with ``ReturnDeletedObject``: DELETE answers the object.
    return_deleted_object = True

    allow_unconditional_update = False

    def set_defaults(self, obj):
        # An inline volume spec is a core PersistentVolumeSpec: its defaults apply.
        inline = _dict(_dict(obj.get("spec")).get("source")).get("inlineVolumeSpec")
        if isinstance(inline, dict):
            from kapiserver.apis.core.defaults import set_resource_list_defaults
            from kapiserver_plugins.core.pv_sources import set_source_defaults

            # SetDefaults_PersistentVolumeSpec, and the sources' and the capacity's.
            if inline.get("volumeMode") is None:
                inline["volumeMode"] = "Filesystem"
            set_resource_list_defaults(inline.get("capacity"))
            set_source_defaults(inline)

    def validate(self, obj):
        return validate_volume_attachment(obj) + validate_volume_attachment_v1(obj)

    def validate_update(self, new, old):
        return validate_volume_attachment_update(new, old)

    def prepare_status_update(self, new, old):
        super().prepare_status_update(new, old)
        meta, old_meta = new.setdefault("metadata", {}), _dict(old.get("metadata"))
        for key in STATUS_KEPT_METADATA:
            if key in old_meta:
                meta[key] = old_meta[key]
            else:
                meta.pop(key, None)

    def validate_status_update(self, new, old):
        return validate_volume_attachment_update(new, old)

    def table_columns(self):
        spec = "io.k8s.api.storage.v1.VolumeAttachmentSpec"
        return [NAME_COLUMN,
                {"name": "Attacher", "type": "string", "format": "name",
                 "description": _description(spec, "attacher"), "priority": 0},
                {"name": "PV", "type": "string", "format": "",
                 "description": _description("io.k8s.api.storage.v1.VolumeAttachmentSource",
                                              "persistentVolumeName"), "priority": 0},
                {"name": "Node", "type": "string", "format": "",
                 "description": _description(spec, "nodeName"), "priority": 0},
                {"name": "Attached", "type": "boolean", "format": "",
                 "description": _description("io.k8s.api.storage.v1.VolumeAttachmentStatus",
                                             "attached"), "priority": 0},
                AGE_COLUMN]

    def table_cells(self, obj):
        meta, spec = _dict(obj.get("metadata")), _dict(obj.get("spec"))
        return [meta.get("name", ""), _str(spec.get("attacher")),
                _str(_dict(spec.get("source")).get("persistentVolumeName")),
                _str(spec.get("nodeName")), _dict(obj.get("status")).get("attached") is True,
                age(meta.get("creationTimestamp"))]
