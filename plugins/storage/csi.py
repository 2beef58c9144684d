"""CSIDrivers, CSINodes and CSIStorageCapacities: their validation
(``pkg/apis/storage/validation``), ``SetDefaults_CSIDriver`` and their registry strategies,
as in 1.32."""

from __future__ import annotations

from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue, go_quote
from kapiserver.apimachinery.quantity import QuantityError, from_json
from kapiserver.apimachinery.resource_validation import validate_nonnegative_quantity
from kapiserver.apimachinery.selector_validation import (LabelSelectorValidationOptions,
                                                         go_label_selector,
                                                         label_selector_has_invalid_label_value,
                                                         validate_label_selector)
from kapiserver.apimachinery.validation import (is_qualified_name, name_is_dns_subdomain,
                                                validate_core_object_meta,
                                                validate_core_object_meta_update,
                                                validate_immutable_field,
                                                validate_nonnegative_field)
from kapiserver.apis.core.validation.volumes import validate_csi_driver_name
from kapiserver.registry.builtin import builtin_spec
from kapiserver.registry.builtin_strategy import BuiltinStrategy
from kapiserver.registry.printers import AGE_COLUMN, NAME_COLUMN, age

CSI_DRIVERS = builtin_spec("storage.k8s.io", "v1", "csidrivers")
CSI_NODES = builtin_spec("storage.k8s.io", "v1", "csinodes")
CSI_STORAGE_CAPACITIES = builtin_spec("storage.k8s.io", "v1", "csistoragecapacities")
FS_GROUP_POLICIES = ("File", "None", "ReadWriteOnceWithFSType")
LIFECYCLE_MODES = ("Persistent", "Ephemeral")
#: ``csiNodeIDLongerMaxLength``: the strategy always allows long node IDs.
MAX_NODE_ID_LENGTH = 256
MIN_TOKEN_SECONDS = 10 * 60
MAX_TOKEN_SECONDS = 1 << 32


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value) -> list:
    return value if isinstance(value, list) else []


def _str(value) -> str:
    return value if isinstance(value, str) else ""


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _description(definition: str, field: str) -> str:
    """A field's description in the OpenAPI definitions (its ``SwaggerDoc``)."""
    from kapiserver.openapi import schemas

    props = schemas.builtin()["definitions"][definition].get("properties", {})
    return props.get(field, {}).get("description", "")


# -- CSIDrivers ----------------------------------------------------------------------------------

def set_csi_driver_defaults(obj: dict) -> None:
    """``SetDefaults_CSIDriver`` (SELinuxMountReadWriteOncePod is on in 1.32)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    for key, value in (("attachRequired", True), ("podInfoOnMount", False),
                       ("storageCapacity", False), ("fsGroupPolicy", "ReadWriteOnceWithFSType")):
        if spec.get(key) is None:
            spec[key] = value
    if not _list(spec.get("volumeLifecycleModes")):
        spec["volumeLifecycleModes"] = ["Persistent"]
    for key in ("requiresRepublish", "seLinuxMount"):
        if spec.get(key) is None:
            spec[key] = False


def _validate_token_requests(requests: list, path: FieldPath) -> list[FieldError]:
    """``validateTokenRequests``: audiences unique, expirations of 10 minutes to 2^32 s."""
    errs, audiences = [], set()
    for i, request in enumerate(requests):
        request = _dict(request)
        audience = _str(request.get("audience"))
        if audience in audiences:
            errs.append(FieldError.duplicate(path.index(i).child("audience"), audience))
            continue
        audiences.add(audience)
        seconds = request.get("expirationSeconds")
        if not _is_int(seconds):
            continue
        if seconds < MIN_TOKEN_SECONDS:
            errs.append(FieldError.invalid(path.index(i).child("expirationSeconds"), seconds,
                                           "may not specify a duration less than 10 minutes"))
        if seconds > MAX_TOKEN_SECONDS:
            errs.append(FieldError.invalid(path.index(i).child("expirationSeconds"), seconds,
                                           "may not specify a duration larger than 2^32 "
                                           "seconds"))
    return errs


def validate_csi_driver_spec(spec: dict, path: FieldPath) -> list[FieldError]:
    """``validateCSIDriverSpec``."""
    errs = []
    # Upstream reports attachRequired at "attachedRequired".
    for key, at in (("attachRequired", "attachedRequired"), ("podInfoOnMount", "podInfoOnMount"),
                    ("storageCapacity", "storageCapacity")):
        if spec.get(key) is None:
            errs.append(FieldError.required(path.child(at), ""))
    policy = spec.get("fsGroupPolicy")
    if policy is not None and policy not in FS_GROUP_POLICIES:
        errs.append(FieldError.not_supported(path.child("fsGroupPolicy"), policy,
                                             FS_GROUP_POLICIES))
    errs += _validate_token_requests(_list(spec.get("tokenRequests")), path.child("tokenRequests"))
    for mode in _list(spec.get("volumeLifecycleModes")):
        if mode not in LIFECYCLE_MODES:
            errs.append(FieldError.not_supported(path.child("volumeLifecycleModes"), mode,
                                                 LIFECYCLE_MODES))
    if spec.get("seLinuxMount") is None:
        errs.append(FieldError.required(path.child("seLinuxMount"), ""))
    return errs


def validate_csi_driver(obj: dict) -> list[FieldError]:
    """``ValidateCSIDriver``."""
    errs = validate_core_object_meta(_dict(obj.get("metadata")), False, name_is_dns_subdomain)
    return errs + validate_csi_driver_spec(_dict(obj.get("spec")), FieldPath("spec"))


def _go_modes(modes) -> GoValue:
    if not isinstance(modes, list):
        return GoValue("[]storage.VolumeLifecycleMode(nil)")
    return GoValue("[]storage.VolumeLifecycleMode{"
                   + ", ".join(go_quote(_str(m)) for m in modes) + "}")


def validate_csi_driver_update(new: dict, old: dict) -> list[FieldError]:
    """``ValidateCSIDriverUpdate``: attachRequired and volumeLifecycleModes never change."""
    spec, old_spec = _dict(new.get("spec")), _dict(old.get("spec"))
    errs = validate_core_object_meta_update(_dict(new.get("metadata")),
                                            _dict(old.get("metadata")))
    errs += validate_csi_driver_spec(spec, FieldPath("spec"))
    errs += validate_immutable_field(spec.get("attachRequired"), old_spec.get("attachRequired"),
                                     FieldPath("spec", "attachedRequired"))
    if spec.get("volumeLifecycleModes") != old_spec.get("volumeLifecycleModes"):
        errs.append(FieldError.invalid(FieldPath("spec", "volumeLifecycleModes"),
                                       _go_modes(spec.get("volumeLifecycleModes")),
                                       "field is immutable"))
    return errs


class CSIDriverStrategy(BuiltinStrategy):
    """``pkg/registry/storage/csidriver`` strategy: no generation on create; changes to the
    token requests, requiresRepublish or seLinuxMount count one (``CSIDriverRegistry``)."""

    #: Its upstream store is built with ``ReturnDeletedObject``: DELETE answers the object.
    return_deleted_object = True

    allow_unconditional_update = False

    def set_defaults(self, obj):
        set_csi_driver_defaults(obj)

    def validate(self, obj):
        return validate_csi_driver(obj)

    def validate_update(self, new, old):
        return validate_csi_driver(new) + validate_csi_driver_update(new, old)

    def table_cells(self, obj):
        meta, spec = _dict(obj.get("metadata")), _dict(obj.get("spec"))
        requests = spec.get("tokenRequests")
        tokens = ("<unset>" if requests is None
                  else ",".join(_str(_dict(r).get("audience")) for r in _list(requests)))
        modes = ",".join(_str(m) for m in _list(spec.get("volumeLifecycleModes")))
        return [meta.get("name", ""), spec.get("attachRequired") is not False,
                spec.get("podInfoOnMount") is True, spec.get("storageCapacity") is True, tokens,
                spec.get("requiresRepublish") is True, modes or "<none>",
                age(meta.get("creationTimestamp"))]


#: The spec fields whose changes bump a CSIDriver's generation.
GENERATION_FIELDS = ("tokenRequests", "requiresRepublish", "seLinuxMount")


def csi_driver_generation(new: dict, old: dict) -> int:
    """The generation of an updated CSIDriver (0 when it has none)."""
    generation = (old.get("metadata") or {}).get("generation") or 0
    spec, old_spec = _dict(new.get("spec")), _dict(old.get("spec"))
    if any(spec.get(key) != old_spec.get(key) for key in GENERATION_FIELDS):
        generation += 1
    return generation


# -- CSINodes ------------------------------------------------------------------------------------

def _validate_node_driver(driver: dict, names: set, path: FieldPath) -> list[FieldError]:
    """``validateCSINodeDriver``."""
    name = _str(driver.get("name"))
    errs = validate_csi_driver_name(name, path.child("name"))
    node_id = _str(driver.get("nodeID"))
    if not node_id:
        errs.append(FieldError.required(path.child("nodeID"), node_id))
    if len(node_id.encode()) > MAX_NODE_ID_LENGTH:
        errs.append(FieldError.invalid(path.child("nodeID"), node_id,
                                       f"must be {MAX_NODE_ID_LENGTH} characters or less"))
    count = _dict(driver.get("allocatable")).get("count")
    if _is_int(count):
        errs += validate_nonnegative_field(count, path.child("allocatable", "count"))
    if name in names:
        errs.append(FieldError.duplicate(path.child("name"), name))
    names.add(name)
    keys = set()
    for key in _list(driver.get("topologyKeys")):
        key = _str(key)
        if not key:
            errs.append(FieldError.required(path, key))
        if key in keys:
            errs.append(FieldError.duplicate(path, key))
        keys.add(key)
        errs += [FieldError.invalid(path, key, msg) for msg in is_qualified_name(key)]
    return errs


def validate_csi_node(obj: dict) -> list[FieldError]:
    """``ValidateCSINode`` (node IDs of up to 256 characters)."""
    errs = validate_core_object_meta(_dict(obj.get("metadata")), False, name_is_dns_subdomain)
    names: set = set()
    path = FieldPath("spec", "drivers")
    for i, driver in enumerate(_list(_dict(obj.get("spec")).get("drivers"))):
        errs += _validate_node_driver(_dict(driver), names, path.index(i))
    return errs


def _go_node_driver(driver: dict) -> GoValue:
    keys = driver.get("topologyKeys")
    allocatable = driver.get("allocatable")
    return GoValue(
        f"storage.CSINodeDriver{{Name:{go_quote(_str(driver.get('name')))}, "
        f"NodeID:{go_quote(_str(driver.get('nodeID')))}, TopologyKeys:"
        + ("[]string(nil)" if not isinstance(keys, list)
           else "[]string{" + ", ".join(go_quote(_str(k)) for k in keys) + "}")
        + ", Allocatable:(*storage.VolumeNodeResources)("
        + ("0xc000000000" if isinstance(allocatable, dict) else "nil") + ")}")


def validate_csi_node_update(new: dict, old: dict) -> list[FieldError]:
    """``ValidateCSINodeUpdate``: a driver, once listed, never changes."""
    errs = validate_core_object_meta_update(_dict(new.get("metadata")),
                                            _dict(old.get("metadata")))
    errs += validate_csi_node(new)
    new_drivers = [_dict(d) for d in _list(_dict(new.get("spec")).get("drivers"))]
    for old_driver in _list(_dict(old.get("spec")).get("drivers")):
        old_driver = _dict(old_driver)
        for driver in new_drivers:
            if driver.get("name") == old_driver.get("name") and driver != old_driver:
                errs.append(FieldError.invalid(FieldPath("spec", "drivers"),
                                               _go_node_driver(driver), "field is immutable"))
    return errs


class CSINodeStrategy(BuiltinStrategy):
    """``pkg/registry/storage/csinode`` strategy."""

    #: Its upstream store is built with ``ReturnDeletedObject``: DELETE answers the object.
    return_deleted_object = True

    allow_unconditional_update = False

    def validate(self, obj):
        return validate_csi_node(obj)

    def validate_update(self, new, old):
        return validate_csi_node_update(new, old)

    def table_columns(self):
        return [NAME_COLUMN, {"name": "Drivers", "type": "integer", "format": "",
                              "description": "Drivers indicates the number of CSI drivers "
                                             "registered on the node", "priority": 0},
                AGE_COLUMN]

    def table_cells(self, obj):
        meta = _dict(obj.get("metadata"))
        return [meta.get("name", ""), len(_list(_dict(obj.get("spec")).get("drivers"))),
                age(meta.get("creationTimestamp"))]


# -- CSIStorageCapacities ----------------------------------------------------------------------

def validate_csi_storage_capacity(obj: dict, allow_invalid_label_value: bool = False) -> list:
    """``ValidateCSIStorageCapacity``."""
    errs = validate_core_object_meta(_dict(obj.get("metadata")), True, name_is_dns_subdomain)
    if isinstance(obj.get("nodeTopology"), dict):
        options = LabelSelectorValidationOptions(
            allow_invalid_label_value=allow_invalid_label_value)
        errs += validate_label_selector(obj["nodeTopology"], options, FieldPath("nodeTopology"))
    class_name = _str(obj.get("storageClassName"))
    errs += [FieldError.invalid(FieldPath("storageClassName"), class_name, msg)
             for msg in name_is_dns_subdomain(class_name)]
    if obj.get("capacity") is not None:
        try:
            errs += validate_nonnegative_quantity(from_json(obj["capacity"]),
                                                  FieldPath("capacity"))
        except QuantityError:
            pass  # the decoder refused it already
    return errs


def validate_csi_storage_capacity_update(new: dict, old: dict) -> list[FieldError]:
    """The strategy's ``ValidateUpdate``: the capacity, then the immutable inputs of CSI's
    GetCapacity (node topology and storage class)."""
    allow = label_selector_has_invalid_label_value(old.get("nodeTopology"))
    errs = validate_csi_storage_capacity(new, allow)
    errs += validate_core_object_meta_update(_dict(new.get("metadata")),
                                             _dict(old.get("metadata")))
    if new.get("nodeTopology") != old.get("nodeTopology"):
        errs.append(FieldError.invalid(FieldPath("nodeTopology"),
                                       go_label_selector(new.get("nodeTopology")),
                                       "field is immutable"))
    if _str(new.get("storageClassName")) != _str(old.get("storageClassName")):
        errs.append(FieldError.invalid(FieldPath("storageClassName"),
                                       _str(new.get("storageClassName")), "field is immutable"))
    return errs


class CSIStorageCapacityStrategy(BuiltinStrategy):
    """``pkg/registry/storage/csistoragecapacity`` strategy."""

    allow_unconditional_update = False

    def validate(self, obj):
        return validate_csi_storage_capacity(obj)

    def validate_update(self, new, old):
        return validate_csi_storage_capacity_update(new, old)

    def table_columns(self):
        definition = "io.k8s.api.storage.v1.CSIStorageCapacity"
        return [NAME_COLUMN,
                {"name": "StorageClassName", "type": "string", "format": "",
                 "description": _description(definition, "storageClassName"), "priority": 0},
                {"name": "Capacity", "type": "string", "format": "",
                 "description": _description(definition, "capacity"), "priority": 0}]

    def table_cells(self, obj):
        meta = _dict(obj.get("metadata"))
        capacity = obj.get("capacity")
        if capacity is not None:
            try:
                capacity = str(from_json(capacity))
            except QuantityError:
                capacity = str(capacity)
        return [meta.get("name", ""), _str(obj.get("storageClassName")),
                "<unset>" if capacity is None else capacity]
