"""StorageClasses: ``ValidateStorageClass``/``Update``, ``SetDefaults_StorageClass`` and the
``storageclass`` registry strategy of 1.32: a provisioner is required; parameters,
provisioner, reclaimPolicy and volumeBindingMode never change."""

from __future__ import annotations

from kapiserver.apimachinery.field_errors import FieldError, FieldPath
from kapiserver.apimachinery.validation import (is_qualified_name, name_is_dns_subdomain,
                                                validate_core_object_meta,
                                                validate_core_object_meta_update,
                                                validate_immutable_field, validate_label_name)
from kapiserver.registry.builtin import builtin_spec
from kapiserver.registry.builtin_strategy import BuiltinStrategy
from kapiserver.registry.printers import age

STORAGE_CLASSES = builtin_spec("storage.k8s.io", "v1", "storageclasses")
RECLAIM_POLICIES = ("Delete", "Retain")
BINDING_MODES = ("Immediate", "WaitForFirstConsumer")
MAX_PARAMETERS = 512
MAX_PARAMETERS_SIZE = 256 * (1 << 10)
#: ``storageutil.IsDefaultAnnotation``: either annotation set to "true" marks the default.
DEFAULT_CLASS_ANNOTATIONS = ("storageclass.kubernetes.io/is-default-class",
                             "storageclass.beta.kubernetes.io/is-default-class")


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value) -> list:
    return value if isinstance(value, list) else []


def _str(value) -> str:
    return value if isinstance(value, str) else ""


def set_storage_class_defaults(obj: dict) -> None:
    """``SetDefaults_StorageClass``."""
    if obj.get("reclaimPolicy") is None:
        obj["reclaimPolicy"] = "Delete"
    if obj.get("volumeBindingMode") is None:
        obj["volumeBindingMode"] = "Immediate"


def validate_provisioner(provisioner: str, path: FieldPath) -> list[FieldError]:
    """``validateProvisioner``: required, and a qualified name once lowercased."""
    if not provisioner:
        return [FieldError.required(path, provisioner)]
    lowered = provisioner.lower()
    return [FieldError.invalid(path, lowered, msg) for msg in is_qualified_name(lowered)]


def validate_parameters(params: dict, path: FieldPath, allow_empty: bool = True) -> list:
    """``validateParameters``: at most 512 keys, none empty, 256 KiB in all."""
    if len(params) > MAX_PARAMETERS:
        return [FieldError.too_long(path, "", MAX_PARAMETERS)]
    errs, size = [], 0
    for key, value in params.items():
        if not key:
            errs.append(FieldError.invalid(path, key, "field can not be empty."))
        size += len(key.encode()) + len(_str(value).encode())
    if size > MAX_PARAMETERS_SIZE:
        errs.append(FieldError.too_long(path, "", MAX_PARAMETERS_SIZE))
    if not allow_empty and not params:
        errs.append(FieldError.required(path, "must contain at least one key/value pair"))
    return errs


def _validate_topology_term(term: dict, path: FieldPath) -> tuple[dict, list[FieldError]]:
    """``ValidateTopologySelectorTerm``: the term's keys with their value sets, and errors."""
    errs, keys = [], {}
    expressions_path = path.child("matchLabelExpressions")
    for i, requirement in enumerate(_list(term.get("matchLabelExpressions"))):
        requirement = _dict(requirement)
        at = expressions_path.index(i)
        values = [_str(v) for v in _list(requirement.get("values"))]
        if not values:
            errs.append(FieldError.required(at.child("values"), ""))
        seen = set()
        for j, value in enumerate(values):
            if value in seen:
                errs.append(FieldError.duplicate(at.child("values").index(j), value))
            seen.add(value)
        key = _str(requirement.get("key"))
        errs += validate_label_name(key, at.child("key"))
        if key in keys:
            errs.append(FieldError.duplicate(at.child("key"), key))
        keys[key] = frozenset(seen)
    return keys, errs


def validate_allowed_topologies(topologies: list, path: FieldPath) -> list[FieldError]:
    """``validateAllowedTopologies``: valid terms, none repeated.

    Upstream compares each term with a list that starts with one empty entry per term, so
    a term without expressions is reported once per term, and once per such term before
    it."""
    if not topologies:
        return []
    errs, seen = [], [{} for _ in topologies]
    for i, term in enumerate(topologies):
        keys, term_errs = _validate_topology_term(_dict(term), path.index(i))
        errs += term_errs
        errs += [FieldError.duplicate(path.index(i).child("matchLabelExpressions"), "")
                 for other in seen if other == keys]
        seen.append(keys)
    return errs


def validate_storage_class(obj: dict) -> list[FieldError]:
    """``ValidateStorageClass``."""
    errs = validate_core_object_meta(_dict(obj.get("metadata")), False, name_is_dns_subdomain)
    errs += validate_provisioner(_str(obj.get("provisioner")), FieldPath("provisioner"))
    errs += validate_parameters(_dict(obj.get("parameters")), FieldPath("parameters"))
    policy = _str(obj.get("reclaimPolicy"))
    if policy and policy not in RECLAIM_POLICIES:
        errs.append(FieldError.not_supported(FieldPath("reclaimPolicy"), policy,
                                             RECLAIM_POLICIES))
    mode = obj.get("volumeBindingMode")
    if mode is None:
        errs.append(FieldError.required(FieldPath("volumeBindingMode"), ""))
    elif mode not in BINDING_MODES:
        errs.append(FieldError.not_supported(FieldPath("volumeBindingMode"), mode,
                                             BINDING_MODES))
    return errs + validate_allowed_topologies(_list(obj.get("allowedTopologies")),
                                              FieldPath("allowedTopologies"))


def validate_storage_class_update(new: dict, old: dict) -> list[FieldError]:
    """``ValidateStorageClassUpdate``."""
    errs = validate_core_object_meta_update(_dict(new.get("metadata")),
                                            _dict(old.get("metadata")))
    if (new.get("parameters") or {}) != (old.get("parameters") or {}):
        errs.append(FieldError.forbidden(FieldPath("parameters"),
                                         "updates to parameters are forbidden."))
    if _str(new.get("provisioner")) != _str(old.get("provisioner")):
        errs.append(FieldError.forbidden(FieldPath("provisioner"),
                                         "updates to provisioner are forbidden."))
    if new.get("reclaimPolicy") != old.get("reclaimPolicy"):
        errs.append(FieldError.forbidden(FieldPath("reclaimPolicy"),
                                         "updates to reclaimPolicy are forbidden."))
    return errs + validate_immutable_field(new.get("volumeBindingMode"),
                                           old.get("volumeBindingMode"),
                                           FieldPath("volumeBindingMode"))


def is_default_class(meta: dict) -> bool:
    annotations = _dict(meta.get("annotations"))
    return any(annotations.get(key) == "true" for key in DEFAULT_CLASS_ANNOTATIONS)


class StorageClassStrategy(BuiltinStrategy):
    """``pkg/registry/storage/storageclass`` strategy: no generation."""

    #: Its upstream store is built with ``ReturnDeletedObject``: DELETE answers the object.
    return_deleted_object = True

    def set_defaults(self, obj):
        set_storage_class_defaults(obj)

    def validate(self, obj):
        return validate_storage_class(obj)

    def validate_update(self, new, old):
        return validate_storage_class(new) + validate_storage_class_update(new, old)

    def table_cells(self, obj):
        meta = _dict(obj.get("metadata"))
        name = meta.get("name", "") + (" (default)" if is_default_class(meta) else "")
        expansion = obj.get("allowVolumeExpansion")
        return [name, _str(obj.get("provisioner")), _str(obj.get("reclaimPolicy")) or "Delete",
                _str(obj.get("volumeBindingMode")) or "Immediate", expansion is True,
                age(meta.get("creationTimestamp"))]
