"""PersistentVolumeClaim specs and templates, as generic ephemeral volumes embed them
(``ValidatePersistentVolumeClaimTemplate``, ``ValidatePersistentVolumeClaimSpec``,
``ValidateTemplateObjectMeta``; 1.32, VolumeAttributesClass off)."""

from __future__ import annotations

from ....apimachinery import quantity as _quantity
from ....apimachinery import validation as apivalidation
from ....apimachinery.field_errors import FieldError, FieldPath, GoValue
from ....apimachinery.gosyntax import POINTER_ADDRESS
from ....apimachinery.resource_validation import (validate_positive_quantity_value,
                                                  validate_resource_quantity_value)
from ....apimachinery.selector_validation import (LabelSelectorValidationOptions,
                                                  validate_label_selector)
from .common import d, opt, opt_str, s, strs, validate_name

ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
VOLUME_MODES = ("Block", "Filesystem")

#: ObjectMeta's fields in Go's order, as ``validateFieldAllowList`` names them (the first
#: letter lowered: ``UID`` becomes ``uID``); a template may set only labels and annotations.
_OBJECT_META_FIELDS = (
    ("name", "name"), ("generateName", "generateName"), ("namespace", "namespace"),
    ("selfLink", "selfLink"), ("uid", "uID"), ("resourceVersion", "resourceVersion"),
    ("generation", "generation"), ("creationTimestamp", "creationTimestamp"),
    ("deletionTimestamp", "deletionTimestamp"),
    ("deletionGracePeriodSeconds", "deletionGracePeriodSeconds"),
    ("ownerReferences", "ownerReferences"), ("finalizers", "finalizers"),
    ("managedFields", "managedFields"),
)


def _is_set(value) -> bool:
    return value not in (None, "", 0, False) and not (isinstance(value, (list, dict))
                                                      and not value)


def validate_template_object_meta(meta: dict, path: FieldPath) -> list[FieldError]:
    """``ValidateTemplateObjectMeta``: annotations and labels, nothing else."""
    annotations, labels = meta.get("annotations"), meta.get("labels")
    errs = apivalidation.validate_annotations(annotations if isinstance(annotations, dict)
                                              else {}, path.child("annotations"))
    errs += apivalidation.validate_labels(labels if isinstance(labels, dict) else {},
                                          path.child("labels"))
    for key, name in _OBJECT_META_FIELDS:
        if _is_set(meta.get(key)):
            errs.append(FieldError.forbidden(path.child(name), "cannot be set"))
    return errs


def _validate_data_source(source: dict, path: FieldPath) -> list[FieldError]:
    errs = []
    if not s(source, "name"):
        errs.append(FieldError.required(path.child("name"), ""))
    kind = s(source, "kind")
    if not kind:
        errs.append(FieldError.required(path.child("kind"), ""))
    if not (opt_str(source, "apiGroup") or "") and kind != "PersistentVolumeClaim":
        errs.append(FieldError.invalid(path, kind, "must be 'PersistentVolumeClaim' when "
                                                   "referencing the default apiGroup"))
    return errs


def _go_path(path: FieldPath) -> GoValue:
    # upstream passes a *field.Path as the bad value; ErrorBody dereferences it and
    # %#v prints the struct (its parent an address).
    return GoValue(f'field.Path{{name:"{path.name}", index:"", '
                   f"parent:(*field.Path)({POINTER_ADDRESS})}}")


def validate_persistent_volume_claim_spec(spec: dict, path: FieldPath) -> list[FieldError]:
    """``ValidatePersistentVolumeClaimSpec``."""
    errs = []
    modes = strs(spec.get("accessModes"))
    if not modes:
        errs.append(FieldError.required(path.child("accessModes"),
                                        "at least 1 access mode is required"))
    selector = opt(spec, "selector")
    if selector is not None:
        errs += validate_label_selector(selector, LabelSelectorValidationOptions(),
                                        path.child("selector"))
    once_pod = other = False
    for mode in modes:
        if mode not in ACCESS_MODES:
            errs.append(FieldError.not_supported(path.child("accessModes"), mode, ACCESS_MODES))
        if mode == "ReadWriteOncePod":
            once_pod = True
        elif mode in ACCESS_MODES:
            other = True
    if once_pod and other:
        errs.append(FieldError.forbidden(path.child("accessModes"),
                                         "may not use ReadWriteOncePod with other access modes"))
    storage_path = path.child("resources").key("storage")
    requests = d(d(spec, "resources"), "requests")
    if "storage" not in requests:
        errs.append(FieldError.required(storage_path, ""))
    else:
        try:
            storage = _quantity.from_json(requests["storage"])
        except (_quantity.QuantityError, ValueError, TypeError) as err:
            errs.append(FieldError.invalid(storage_path, requests["storage"], str(err)))
        else:
            positive = validate_positive_quantity_value(storage, storage_path)
            errs += positive or validate_resource_quantity_value("storage", storage,
                                                                 storage_path)
    class_name = opt_str(spec, "storageClassName")
    if class_name:
        errs += validate_name(apivalidation.name_is_dns_subdomain, class_name,
                              path.child("storageClassName"))
    volume_mode = opt_str(spec, "volumeMode")
    if volume_mode is not None and volume_mode not in VOLUME_MODES:
        errs.append(FieldError.not_supported(path.child("volumeMode"), volume_mode, VOLUME_MODES))
    source, ref = opt(spec, "dataSource"), opt(spec, "dataSourceRef")
    if source is not None:
        errs += _validate_data_source(source, path.child("dataSource"))
    if ref is not None:
        errs += _validate_data_source(ref, path.child("dataSourceRef"))
        namespace = opt_str(ref, "namespace")
        if namespace:
            errs += validate_name(apivalidation.validate_namespace_name, namespace,
                                  path.child("dataSourceRef", "namespace"))
    if ref is not None and opt_str(ref, "namespace"):
        if source is not None:
            errs.append(FieldError.invalid(path, _go_path(path.child("dataSource")),
                                           "may not be specified when dataSourceRef.namespace "
                                           "is specified"))
    elif source is not None and ref is not None:
        if (opt_str(source, "apiGroup"), s(source, "kind"), s(source, "name")) != \
                (opt_str(ref, "apiGroup"), s(ref, "kind"), s(ref, "name")):
            errs.append(FieldError.invalid(path, _go_path(path.child("dataSource")),
                                           "must match dataSourceRef"))
    return errs


def validate_persistent_volume_claim_template(template: dict,
                                              path: FieldPath) -> list[FieldError]:
    """``ValidatePersistentVolumeClaimTemplate``: the template's metadata and spec."""
    errs = validate_template_object_meta(d(template, "metadata"), path.child("metadata"))
    return errs + validate_persistent_volume_claim_spec(d(template, "spec"), path.child("spec"))
