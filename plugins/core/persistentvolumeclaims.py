"""PersistentVolumeClaims (with ``status``): ``pkg/registry/core/persistentvolumeclaim``.

A claim needs access modes and a ``storage`` request (``ValidatePersistentVolumeClaim``);
its spec is immutable afterwards, except that the binder may set ``volumeName`` once and,
for a bound claim, ``resources.requests.storage`` may grow (whether the storage class
allows the expansion is the PersistentVolumeClaimResize admission plugin's question) or,
as RecoverVolumeExpansionFailure (beta, on in 1.32) allows, shrink while it stays above
``status.capacity``. New claims are ``Pending``. ``dataSource`` and ``dataSourceRef`` mirror
each other (AnyVolumeDataSource); a ``dataSourceRef.namespace`` and
``volumeAttributesClassName`` are dropped, as their features are off in 1.32. The
``kubernetes.io/pvc-protection`` finalizer is added by the StorageObjectInUseProtection
admission plugin, not here.

``validate_claim_spec`` is ``ValidatePersistentVolumeClaimSpec``, which ephemeral volumes
and StatefulSets' claim templates use too.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue
from kapiserver.apimachinery.gosyntax import go_pointer, go_str, go_struct
from kapiserver.apimachinery.resource_validation import (is_native_resource,
                                                         validate_basic_resource,
                                                         validate_positive_quantity_value,
                                                         validate_resource_quantity_value)
from kapiserver.apimachinery.selector_validation import (LabelSelectorValidationOptions,
                                                         validate_label_selector)
from kapiserver.apimachinery.validation import (is_dns1123_label, is_dns1123_subdomain,
                                                is_qualified_name,
                                                validate_core_object_meta_update)
from kapiserver.registry.builtin import builtin_spec
from kapiserver.registry.printers import age

from .kind_helpers import (BETA_STORAGE_CLASS_ANNOTATION, CoreStrategy, access_modes_text, as_dict,
                           as_list, as_str, meta_of, parse_quantity, resource_list, spec_of,
                           status_of)
from .persistentvolumes import VOLUME_MODES, validate_access_modes, validate_class_name

PERSISTENT_VOLUME_CLAIMS = builtin_spec("", "v1", "persistentvolumeclaims")
SPEC, STATUS = FieldPath("spec"), FieldPath("status")
#: ``resizeStatusSet``, sorted as ``sets.List`` sorts it.
RESIZE_STATUSES = ("ControllerResizeFailed", "ControllerResizeInProgress", "NodeResizeFailed",
                   "NodeResizeInProgress", "NodeResizePending")
SNAPSHOT_GROUP = "snapshot.storage.k8s.io"
IMMUTABLE_SPEC = ("spec is immutable after creation except resources.requests and "
                  "volumeAttributesClassName for bound claims")


@dataclass(frozen=True)
class ClaimValidationOptions:
    """``PersistentVolumeClaimSpecValidationOptions``."""

    #: RecoverVolumeExpansionFailure (beta, on in 1.32).
    recover_from_expansion_failure: bool = True
    allow_invalid_label_value_in_selector: bool = False
    allow_invalid_api_group_in_data_source: bool = False
    #: VolumeAttributesClass is off in 1.32: only a claim that has a class keeps checking it.
    volume_attributes_class: bool = False


def validation_options(new: dict, old: dict | None) -> ClaimValidationOptions:
    """``ValidationOptionsForPersistentVolumeClaim``: what the old claim lets the new keep."""
    if old is None:
        return ClaimValidationOptions()
    old_spec = spec_of(old)
    selector_errors = validate_label_selector(old_spec.get("selector") if isinstance(
        old_spec.get("selector"), dict) else None, LabelSelectorValidationOptions(),
        FieldPath("spec", "selector"))
    return ClaimValidationOptions(
        allow_invalid_label_value_in_selector=bool(selector_errors),
        allow_invalid_api_group_in_data_source=any(
            isinstance(old_spec.get(key), dict) and old_spec[key].get("apiGroup") is not None
            for key in ("dataSource", "dataSourceRef")),
        volume_attributes_class=old_spec.get("volumeAttributesClassName") is not None)


# -- the spec --------------------------------------------------------------------------------

def _go_path(path: FieldPath) -> GoValue:
    """A ``*field.Path`` passed as a bad value: ``%#v`` of the struct it points to."""
    parent = path.parent
    return GoValue(go_struct("field.Path", (
        ("name", go_str(path.name)), ("index", go_str(path.subscript)),
        ("parent", go_pointer("field.Path", parent is not None)))))


def _validate_data_source(source: dict, path: FieldPath, allow_invalid_group: bool,
                          with_namespace: bool) -> list:
    """``validateDataSource`` and ``validateDataSourceRef``."""
    errs = []
    if not source.get("name"):
        errs.append(FieldError.required(path.child("name")))
    kind = as_str(source.get("kind"))
    if not kind:
        errs.append(FieldError.required(path.child("kind")))
    group = as_str(source.get("apiGroup"))
    if not group and kind != "PersistentVolumeClaim":
        errs.append(FieldError.invalid(path, kind, "must be 'PersistentVolumeClaim' when "
                                                   "referencing the default apiGroup"))
    if group and not allow_invalid_group:
        errs += [FieldError.invalid(path.child("apiGroup"), group, msg)
                 for msg in is_dns1123_subdomain(group)]
    namespace = source.get("namespace")
    if with_namespace and namespace:
        errs += [FieldError.invalid(path.child("namespace"), namespace, msg)
                 for msg in is_dns1123_label(as_str(namespace))]
    return errs


def validate_claim_spec(spec: dict, path: FieldPath,
                        opts: ClaimValidationOptions = ClaimValidationOptions()) -> list:
    """``ValidatePersistentVolumeClaimSpec``."""
    errs = []
    modes = as_list(spec.get("accessModes"))
    if not modes:
        errs.append(FieldError.required(path.child("accessModes"),
                                        "at least 1 access mode is required"))
    selector = spec.get("selector")
    if isinstance(selector, dict):
        errs += validate_label_selector(selector, LabelSelectorValidationOptions(
            allow_invalid_label_value=opts.allow_invalid_label_value_in_selector),
            path.child("selector"))
    errs += validate_access_modes(modes, path.child("accessModes"))
    storage_path = path.child("resources").key("storage")
    requests = as_dict(as_dict(spec.get("resources")).get("requests"))
    storage = parse_quantity(requests["storage"]) if "storage" in requests else None
    if storage is None:
        if "storage" not in requests:
            errs.append(FieldError.required(storage_path))
    else:
        positive = validate_positive_quantity_value(storage, storage_path)
        errs += positive or validate_resource_quantity_value("storage", storage, storage_path)
    class_name = spec.get("storageClassName")
    if class_name:
        errs += validate_class_name(as_str(class_name), path.child("storageClassName"))
    mode = spec.get("volumeMode")
    if mode is not None and mode not in VOLUME_MODES:
        errs.append(FieldError.not_supported(path.child("volumeMode"), mode, VOLUME_MODES))
    source, ref = spec.get("dataSource"), spec.get("dataSourceRef")
    if isinstance(source, dict):
        errs += _validate_data_source(source, path.child("dataSource"),
                                      opts.allow_invalid_api_group_in_data_source, False)
    if isinstance(ref, dict):
        errs += _validate_data_source(ref, path.child("dataSourceRef"),
                                      opts.allow_invalid_api_group_in_data_source, True)
    if isinstance(ref, dict) and ref.get("namespace"):
        if isinstance(source, dict):
            errs.append(FieldError.invalid(path, _go_path(path.child("dataSource")),
                                           "may not be specified when dataSourceRef.namespace "
                                           "is specified"))
    elif isinstance(source, dict) and isinstance(ref, dict):
        if any(source.get(key) != ref.get(key) for key in ("apiGroup", "kind", "name")):
            errs.append(FieldError.invalid(path, _go_path(path.child("dataSource")),
                                           "must match dataSourceRef"))
    attributes = spec.get("volumeAttributesClassName")
    if attributes and opts.volume_attributes_class:
        errs += validate_class_name(as_str(attributes), path.child("volumeAttributesClassName"))
    return errs


def validate_claim(obj: dict, validate_meta, opts: ClaimValidationOptions) -> list:
    """``ValidatePersistentVolumeClaim``."""
    return validate_meta(meta_of(obj)) + validate_claim_spec(spec_of(obj), SPEC, opts)


def _storage(resources: dict):
    value = as_dict(resources).get("storage")
    return parse_quantity(value) if value is not None else None


def validate_claim_update(new: dict, old: dict, validate_meta,
                          opts: ClaimValidationOptions) -> list:
    """``ValidatePersistentVolumeClaimUpdate``."""
    errs = validate_core_object_meta_update(meta_of(new), meta_of(old))
    errs += validate_claim(new, validate_meta, opts)
    new_spec, old_spec = copy.deepcopy(spec_of(new)), copy.deepcopy(spec_of(old))
    if not old_spec.get("volumeName"):
        # The binder sets volumeName once.
        if "volumeName" in new_spec:
            old_spec["volumeName"] = new_spec["volumeName"]
        else:
            old_spec.pop("volumeName", None)
    new_annotations = as_dict(meta_of(new).get("annotations"))
    old_annotations = as_dict(meta_of(old).get("annotations"))
    old_class, new_class = old_spec.get("storageClassName"), new_spec.get("storageClassName")
    if BETA_STORAGE_CLASS_ANNOTATION in old_annotations and old_class is None and \
            new_class is not None and \
            new_class == old_annotations[BETA_STORAGE_CLASS_ANNOTATION] and \
            new_annotations.get(BETA_STORAGE_CLASS_ANNOTATION,
                                new_class) == old_annotations[BETA_STORAGE_CLASS_ANNOTATION]:
        # The class may move from the beta annotation into the field.
        new_spec.pop("storageClassName", None)
    else:
        new_value = new_annotations.get(BETA_STORAGE_CLASS_ANNOTATION, "")
        if new_value != old_annotations.get(BETA_STORAGE_CLASS_ANNOTATION, ""):
            errs.append(FieldError.invalid(
                FieldPath("metadata", "annotations", BETA_STORAGE_CLASS_ANNOTATION), new_value,
                "field is immutable"))
        if new_class is not None and old_class is None and (
                BETA_STORAGE_CLASS_ANNOTATION not in old_annotations
                or new_class == old_annotations[BETA_STORAGE_CLASS_ANNOTATION]):
            # A claim without a class may get one (the default class, set later).
            new_spec.pop("storageClassName")
    bound = status_of(new).get("phase") == "Bound"
    new_requests = as_dict(as_dict(new_spec.get("resources")).get("requests"))
    if bound and "requests" in as_dict(new_spec.get("resources")):
        old_storage = as_dict(as_dict(old_spec.get("resources")).get("requests")).get("storage")
        if old_storage is None:
            new_requests.pop("storage", None)
        else:
            new_requests["storage"] = old_storage
    for spec in (new_spec, old_spec):
        spec.pop("volumeAttributesClassName", None)
    if _semantic(new_spec) != _semantic(old_spec):
        errs.append(FieldError.forbidden(SPEC, IMMUTABLE_SPEC + "\n" +
                                         _claim_spec_diff(old_spec, new_spec)))
    new_size = _storage(as_dict(spec_of(new).get("resources")).get("requests"))
    old_size = _storage(as_dict(spec_of(old).get("resources")).get("requests"))
    status_size = _storage(status_of(old).get("capacity"))
    zero = parse_quantity("0")
    if (new_size or zero).cmp(old_size or zero) < 0:
        storage_path = FieldPath("spec", "resources", "requests", "storage")
        if not opts.recover_from_expansion_failure:
            errs.append(FieldError.forbidden(storage_path,
                                             "field can not be less than previous value"))
        elif (new_size or zero).cmp(status_size or zero) <= 0:
            errs.append(FieldError.forbidden(storage_path,
                                             "field can not be less than status.capacity"))
    if spec_of(new).get("volumeMode") != spec_of(old).get("volumeMode"):
        errs.append(FieldError.invalid(FieldPath("volumeMode"), spec_of(new).get("volumeMode"),
                                       "field is immutable"))
    new_attributes = spec_of(new).get("volumeAttributesClassName")
    old_attributes = spec_of(old).get("volumeAttributesClassName")
    if new_attributes != old_attributes:
        attributes_path = FieldPath("spec", "volumeAttributesClassName")
        errs.append(FieldError.forbidden(attributes_path, "update is forbidden when the "
                                                          "VolumeAttributesClass feature gate "
                                                          "is disabled"))
        if opts.volume_attributes_class and old_attributes is not None:
            if new_attributes is None:
                errs.append(FieldError.forbidden(attributes_path,
                                                 "update from non-nil value to nil is "
                                                 "forbidden"))
            elif not new_attributes:
                errs.append(FieldError.forbidden(attributes_path,
                                                 "update from non-nil value to an empty string "
                                                 "is forbidden"))
    return errs


def _claim_spec_diff(old: dict, new: dict) -> str:
    """``cmp.Diff`` of the internal ``core.PersistentVolumeClaimSpec``, as upstream prints
    it after the immutability error."""
    from kapiserver.apis.core import gocmp, gotypes

    spec_type = gotypes.go_type("PersistentVolumeClaimSpec")
    return gocmp.diff(spec_type, gotypes.to_go(spec_type, old), gotypes.to_go(spec_type, new))


def _semantic(spec: dict) -> dict:
    """A spec compared as ``Semantic.DeepEqual`` compares it: quantities by value."""
    out = copy.deepcopy(spec)
    resources = as_dict(out.get("resources"))
    for key in ("limits", "requests"):
        if isinstance(resources.get(key), dict):
            resources[key] = {name: quantity.canonical()
                              for name, quantity in resource_list(resources[key])}
    return {key: value for key, value in out.items() if value not in (None, {}, [])}


def _validate_resource_key(name: str, path: FieldPath) -> list:
    """``validatePersistentVolumeClaimResourceKey``: a qualified name; ``storage`` if
    native."""
    errs = [FieldError.invalid(path, name, msg) for msg in is_qualified_name(name)]
    if not errs and is_native_resource(name) and name != "storage":
        errs.append(FieldError.not_supported(path, name, ("storage",)))
    return errs


def validate_claim_status_update(new: dict, old: dict, opts: ClaimValidationOptions) -> list:
    """``ValidatePersistentVolumeClaimStatusUpdate`` beyond metadata."""
    errs = []
    if not meta_of(new).get("resourceVersion"):
        errs.append(FieldError.required(FieldPath("resourceVersion")))
    if not as_list(spec_of(new).get("accessModes")):
        errs.append(FieldError.required(FieldPath("Spec", "accessModes")))
    status = status_of(new)
    for name, quantity in resource_list(status.get("capacity")):
        errs += validate_basic_resource(quantity, STATUS.child("capacity").key(name))
    if opts.recover_from_expansion_failure:
        statuses_path = STATUS.child("allocatedResourceStatus")
        statuses = as_dict(status.get("allocatedResourceStatuses"))
        for name in sorted(statuses):
            errs += _validate_resource_key(name, statuses_path)
            if statuses[name] not in RESIZE_STATUSES:
                errs.append(FieldError.not_supported(statuses_path, GoValue(name),
                                                     RESIZE_STATUSES))
        allocated_path = STATUS.child("allocatedResources")
        for name, quantity in resource_list(status.get("allocatedResources")):
            key_errors = _validate_resource_key(name, allocated_path)
            if key_errors:
                errs += key_errors
                continue
            basic = validate_basic_resource(quantity, allocated_path.key(name))
            errs += basic or validate_resource_quantity_value("storage", quantity,
                                                              allocated_path.key(name))
    return errs


# -- defaults and data sources -----------------------------------------------------------------

def set_claim_defaults(obj: dict) -> None:
    """``SetObjectDefaults_PersistentVolumeClaim``."""
    from kapiserver.apis.core.defaults import (set_persistent_volume_claim_spec_defaults,
                                               set_resource_list_defaults)

    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    status = obj.get("status")
    if isinstance(status, dict):
        if not status.get("phase"):
            status["phase"] = "Pending"
        set_resource_list_defaults(status.get("capacity"))
        set_resource_list_defaults(status.get("allocatedResources"))
    set_persistent_volume_claim_spec_defaults(spec)


def _is_claim_or_snapshot(source: dict) -> bool:
    group, kind = as_str(source.get("apiGroup")), source.get("kind")
    return (kind == "PersistentVolumeClaim" and not group) or \
        (kind == "VolumeSnapshot" and group == SNAPSHOT_GROUP)


def drop_disabled_fields(spec: dict, old_spec: dict | None) -> None:
    """``DropDisabledFields`` and ``EnforceDataSourceBackwardsCompatibility``."""
    if old_spec is None or old_spec.get("volumeAttributesClassName") is None:
        spec.pop("volumeAttributesClassName", None)
    ref = spec.get("dataSourceRef")
    if isinstance(ref, dict) and ref.get("namespace") and \
            not (old_spec and old_spec.get("dataSourceRef") is not None):
        ref.pop("namespace")  # CrossNamespaceVolumeDataSource is off
    if old_spec is not None and old_spec.get("dataSource") is not None:
        return
    source = spec.get("dataSource")
    if spec.get("dataSourceRef") is None and isinstance(source, dict) and \
            not _is_claim_or_snapshot(source):
        del spec["dataSource"]


def normalize_data_sources(spec: dict) -> None:
    """``NormalizeDataSources``: the one of dataSource and dataSourceRef set fills the
    other (a namespaced reference has no local twin)."""
    source, ref = spec.get("dataSource"), spec.get("dataSourceRef")
    keys = ("apiGroup", "kind", "name")
    if isinstance(source, dict) and ref is None:
        spec["dataSourceRef"] = {key: source[key] for key in keys if key in source}
    elif isinstance(ref, dict) and source is None and not ref.get("namespace"):
        spec["dataSource"] = {key: ref[key] for key in keys if key in ref}


def _drop_disabled_status_fields(new: dict, old: dict) -> None:
    """``DropDisabledFieldsFromStatus``: the attributes class fields, off in 1.32."""
    status, old_status = new.get("status"), status_of(old)
    if isinstance(status, dict):
        for key in ("currentVolumeAttributesClassName", "modifyVolumeStatus"):
            if old_status.get(key) is None:
                status.pop(key, None)


class PersistentVolumeClaimStrategy(CoreStrategy):
    """``persistentvolumeclaim.Strategy`` and its status strategy."""

    #: Its upstream store is built with ``ReturnDeletedObject``: DELETE answers the object.
    return_deleted_object = True

    def set_defaults(self, obj):
        set_claim_defaults(obj)

    def on_create(self, obj):
        obj["status"] = {"phase": "Pending"}
        spec = obj.setdefault("spec", {})
        drop_disabled_fields(spec, None)
        normalize_data_sources(spec)

    def on_update(self, new, old):
        drop_disabled_fields(new.setdefault("spec", {}), spec_of(old))

    def validate(self, obj):
        return validate_claim(obj, self.validate_meta, validation_options(obj, None))

    def validate_update(self, new, old):
        opts = validation_options(new, old)
        return validate_claim(new, self.validate_meta, opts) + \
            validate_claim_update(new, old, self.validate_meta, opts)

    def prepare_status_update(self, new, old):
        super().prepare_status_update(new, old)
        _drop_disabled_status_fields(new, old)

    def validate_status(self, new, old):
        return validate_claim_status_update(new, old, validation_options(new, old))

    def table_cells(self, obj):
        meta, spec, status = meta_of(obj), spec_of(obj), status_of(obj)
        phase = "Terminating" if meta.get("deletionTimestamp") else as_str(status.get("phase"))
        volume = as_str(spec.get("volumeName"))
        capacity = modes = ""
        if volume:
            modes = access_modes_text(status.get("accessModes"))
            size = _storage(status.get("capacity"))
            capacity = size.canonical() if size else "0"
        annotations = as_dict(meta.get("annotations"))
        storage_class = annotations[BETA_STORAGE_CLASS_ANNOTATION] \
            if BETA_STORAGE_CLASS_ANNOTATION in annotations \
            else as_str(spec.get("storageClassName"))
        attributes, mode = spec.get("volumeAttributesClassName"), spec.get("volumeMode")
        return [meta.get("name", ""), phase, volume, capacity, modes, storage_class,
                "<unset>" if attributes is None else as_str(attributes),
                age(meta.get("creationTimestamp")), "<unset>" if mode is None else as_str(mode)]


def install(server) -> dict:
    """The handlers of this module's resources, keyed as ``APIGroupInfo`` keys them."""
    from kapiserver.server.apigroups import builtin_handlers

    return builtin_handlers(server, PersistentVolumeClaimStrategy(PERSISTENT_VOLUME_CLAIMS))
