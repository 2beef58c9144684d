"""Nodes (with ``status`` and ``proxy``): ``pkg/registry/core/node``.

Unlike other kinds a Node may be created with its status (kubelets register so); an
update keeps the stored status and ``nodes/status`` keeps the stored spec. ``podCIDRs``
and ``providerID`` may only go from unset to set, ``externalID`` never changes; taints
must be unique by key and effect. The ``node.kubernetes.io/not-ready`` taint a new node
gets comes from the TaintNodesByCondition admission plugin (``nodetaint``), as upstream.
``spec.configSource`` (DynamicKubeletConfig, removed) is dropped unless already stored.
``spec.unschedulable`` is a field selector (``kubectl cordon`` sets it). ``nodes/proxy``
is served by ``node_proxy``.
"""

import ipaddress
import json

from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue
from kapiserver.apimachinery.gosyntax import go_pointer, go_str, go_struct
from kapiserver.apimachinery.resource_validation import validate_resource_quantity_value
from kapiserver.apimachinery.validation import (is_config_map_key, is_valid_cidr,
                                                is_valid_label_value, name_is_dns_subdomain,
                                                validate_core_object_meta_update,
                                                validate_label_name)
from kapiserver.apis.core.validation.scheduling import validate_taint_effect
from kapiserver.registry.builtin import builtin_spec
from kapiserver.registry.printers import age

from .kind_helpers import (CoreStrategy, as_dict, as_list, as_str, meta_of, resource_list, spec_of,
                           status_of)

NODES = builtin_spec("", "v1", "nodes", selectable_fields=("spec.unschedulable",))
METADATA = FieldPath("metadata")
ANNOTATIONS = METADATA.child("annotations")
TAINTS_ANNOTATION = "scheduler.alpha.kubernetes.io/taints"
PREFER_AVOID_PODS_ANNOTATION = "scheduler.alpha.kubernetes.io/preferAvoidPods"
ROLE_LABEL_PREFIX = "node-role.kubernetes.io/"
ROLE_LABEL = "kubernetes.io/role"
POD_CIDR_CHANGE = 'node updates may not change podCIDR except from "" to valid'


# -- taints ----------------------------------------------------------------------------------

def _go_taint(taint: dict) -> GoValue:
    return GoValue(go_struct("core.Taint", (
        ("Key", go_str(taint.get("key"))), ("Value", go_str(taint.get("value"))),
        ("Effect", go_str(taint.get("effect"))),
        ("TimeAdded", go_pointer("v1.Time", taint.get("timeAdded") is not None)))))


def validate_taints(taints, path: FieldPath) -> list:
    """``validateNodeTaints``: key, value and effect of each; unique by key and effect."""
    errs, seen = [], set()
    for index, taint in enumerate(as_list(taints)):
        taint, taint_path = as_dict(taint), path.index(index)
        key, value = as_str(taint.get("key")), as_str(taint.get("value"))
        effect = as_str(taint.get("effect"))
        errs += validate_label_name(key, taint_path.child("key"))
        messages = is_valid_label_value(value)
        if messages:
            errs.append(FieldError.invalid(taint_path.child("value"), value, ";".join(messages)))
        errs += validate_taint_effect(effect, False, taint_path.child("effect"))
        if (key, effect) in seen:
            errs.append(FieldError("FieldValueDuplicate", taint_path, _go_taint(taint),
                                   "taints must be unique by key and effect pair"))
            continue
        seen.add((key, effect))
    return errs


def _annotation_json(annotations: dict, key: str, path: FieldPath):
    """The JSON value of an annotation, or the error of its decoding."""
    try:
        return json.loads(annotations[key]), []
    except ValueError as err:
        return None, [FieldError.invalid(path, key, str(err))]


def validate_node_annotations(annotations: dict, path: FieldPath = ANNOTATIONS) -> list:
    """``ValidateNodeSpecificAnnotations``: the taints and avoid-pods annotations."""
    errs = []
    if annotations.get(TAINTS_ANNOTATION):
        taints, errors = _annotation_json(annotations, TAINTS_ANNOTATION, path)
        if errors or (taints is not None and not isinstance(taints, list)):
            errs += errors or [FieldError.invalid(path, TAINTS_ANNOTATION,
                                                  "json: cannot unmarshal into []core.Taint")]
        elif taints:
            errs += validate_taints(taints, path.child(TAINTS_ANNOTATION))
    if annotations.get(PREFER_AVOID_PODS_ANNOTATION):
        avoids, errors = _annotation_json(annotations, PREFER_AVOID_PODS_ANNOTATION,
                                          path.child("AvoidPods"))
        errs += errors
        for index, entry in enumerate(as_list(as_dict(avoids).get("preferAvoidPods"))):
            entry_path = path.child(PREFER_AVOID_PODS_ANNOTATION).index(index)
            controller = as_dict(as_dict(entry).get("podSignature")).get("podController")
            if not isinstance(controller, dict):
                errs.append(FieldError.required(entry_path.child("PodSignature")))
            elif controller.get("controller") is not True:
                errs.append(FieldError.invalid(
                    entry_path.child("PodSignature", "PodController", "Controller"),
                    bool(controller.get("controller")), "must point to a controller"))
    return errs


# -- the node --------------------------------------------------------------------------------

def validate_node_resources(node: dict) -> list:
    """``ValidateNodeResources``: capacity and allocatable quantities."""
    errs = []
    status = status_of(node)
    for field in ("capacity", "allocatable"):
        for name, quantity in resource_list(status.get(field)):
            errs += validate_resource_quantity_value(name, quantity,
                                                     FieldPath("status", field, name))
    return errs


def _validate_pod_cidrs(cidrs: list) -> list:
    path = FieldPath("spec", "podCIDRs")
    errs = []
    for index, value in enumerate(cidrs):
        errs += is_valid_cidr(path.index(index), as_str(value))
    if len(cidrs) > 1:
        try:
            families = {ipaddress.ip_network(as_str(c), strict=False).version for c in cidrs}
        except ValueError as err:
            errs.append(FieldError.internal(path, f"invalid PodCIDRs. failed to check with dual "
                                                  f"stack with error:{err}"))
            families = set()
        if len(families) != 2 or len(cidrs) > 2:
            errs.append(FieldError.invalid(path, GoValue(_go_strings(cidrs)),
                                           "may specify no more than one CIDR for each IP "
                                           "family"))
        seen = set()
        for index, value in enumerate(cidrs):
            if value in seen:
                errs.append(FieldError.duplicate(path.index(index), value))
            seen.add(value)
    return errs


def _go_strings(values) -> str:
    from kapiserver.apimachinery.gosyntax import go_string_slice

    return go_string_slice([as_str(v) for v in values])


def validate_node(node: dict, validate_meta) -> list:
    """``ValidateNode``. Upstream reports the spec's taints under ``metadata.taints``."""
    meta = meta_of(node)
    errs = validate_meta(meta)
    errs += validate_node_annotations(as_dict(meta.get("annotations")))
    taints = as_list(spec_of(node).get("taints"))
    if taints:
        errs += validate_taints(taints, METADATA.child("taints"))
    errs += validate_node_resources(node)
    cidrs = as_list(spec_of(node).get("podCIDRs"))
    if cidrs:
        errs += _validate_pod_cidrs(cidrs)
    return errs


def _validate_config_map_source(source: dict, path: FieldPath, in_status: bool) -> list:
    """The ``configMap`` of a (deprecated) ``NodeConfigSource``."""
    errs = []
    if in_status:
        if not source.get("uid"):
            errs.append(FieldError.required(path.child("uid"), "uid must be set in status"))
        if not source.get("resourceVersion"):
            errs.append(FieldError.required(path.child("resourceVersion"),
                                            "resourceVersion must be set in status"))
    else:
        if source.get("uid"):
            errs.append(FieldError.forbidden(path.child("uid"), "uid must not be set in spec"))
        if source.get("resourceVersion"):
            errs.append(FieldError.forbidden(path.child("resourceVersion"),
                                             "resourceVersion must not be set in spec"))
    namespace, name = as_str(source.get("namespace")), as_str(source.get("name"))
    key = as_str(source.get("kubeletConfigKey"))
    if not namespace:
        errs.append(FieldError.required(path.child("namespace"), "namespace must be set"))
    else:
        from kapiserver.apimachinery.validation import name_is_dns_label

        errs += [FieldError.invalid(path.child("namespace"), namespace, msg)
                 for msg in name_is_dns_label(namespace)]
    if not name:
        errs.append(FieldError.required(path.child("name"), "name must be set"))
    else:
        errs += [FieldError.invalid(path.child("name"), name, msg)
                 for msg in name_is_dns_subdomain(name)]
    if not key:
        errs.append(FieldError.required(path.child("kubeletConfigKey"),
                                        "kubeletConfigKey must be set"))
    else:
        errs += [FieldError.invalid(path.child("kubeletConfigKey"), key, msg)
                 for msg in is_config_map_key(key)]
    return errs


def _validate_config_source(source: dict, path: FieldPath, in_status: bool) -> list:
    config_map = source.get("configMap")
    errs = []
    if isinstance(config_map, dict):
        errs += _validate_config_map_source(config_map, path.child("configMap"), in_status)
    else:
        errs.append(FieldError.invalid(path, GoValue(go_struct("core.NodeConfigSource", (
            ("ConfigMap", go_pointer("core.ConfigMapNodeConfigSource", False)),))),
            "exactly one reference subfield must be non-nil"))
    return errs


def validate_node_update(new: dict, old: dict) -> list:
    """``ValidateNodeUpdate`` beyond the metadata's update rules."""
    errs = validate_node_annotations(as_dict(meta_of(new).get("annotations")))
    errs += validate_node_resources(new)
    seen = set()
    for index, address in enumerate(as_list(status_of(new).get("addresses"))):
        address = as_dict(address)
        pair = (as_str(address.get("type")), as_str(address.get("address")))
        if pair in seen:
            errs.append(FieldError.duplicate(
                FieldPath("status", "addresses").index(index),
                GoValue(go_struct("core.NodeAddress", (("Type", go_str(pair[0])),
                                                       ("Address", go_str(pair[1])))))))
        seen.add(pair)
    new_spec, old_spec = spec_of(new), spec_of(old)
    old_cidrs, new_cidrs = as_list(old_spec.get("podCIDRs")), as_list(new_spec.get("podCIDRs"))
    if old_cidrs:
        cidr_path = FieldPath("spec", "podCIDRs")
        if len(old_cidrs) != len(new_cidrs):
            errs.append(FieldError.forbidden(cidr_path, POD_CIDR_CHANGE))
        else:
            errs += [FieldError.forbidden(cidr_path, POD_CIDR_CHANGE)
                     for before, after in zip(old_cidrs, new_cidrs) if before != after]
    old_provider = as_str(old_spec.get("providerID"))
    if old_provider and old_provider != as_str(new_spec.get("providerID")):
        errs.append(FieldError.forbidden(FieldPath("spec", "providerID"),
                                         'node updates may not change providerID except from "" '
                                         'to valid'))
    if isinstance(new_spec.get("configSource"), dict):
        errs += _validate_config_source(new_spec["configSource"],
                                        FieldPath("spec", "configSource"), False)
    config = status_of(new).get("config")
    if isinstance(config, dict):
        for part in ("assigned", "active", "lastKnownGood"):
            if isinstance(config.get(part), dict):
                errs += _validate_config_source(config[part],
                                                FieldPath("status", "config", part), True)
    taints = as_list(new_spec.get("taints"))
    if taints:
        errs += validate_taints(taints, METADATA.child("taints"))
    if as_str(new_spec.get("externalID")) != as_str(old_spec.get("externalID")):
        errs.append(FieldError.forbidden(FieldPath("spec", "externalID"), "may not be updated"))
    return errs


def set_node_defaults(obj: dict) -> None:
    """``SetObjectDefaults_Node``: allocatable defaults to capacity; quantities rounded up
    to thousandths."""
    from kapiserver.apis.core.defaults import set_resource_list_defaults

    status = obj.get("status")
    if not isinstance(status, dict):
        return
    if status.get("allocatable") is None and isinstance(status.get("capacity"), dict):
        status["allocatable"] = dict(status["capacity"])
    set_resource_list_defaults(status.get("capacity"))
    set_resource_list_defaults(status.get("allocatable"))


# -- the table -------------------------------------------------------------------------------

def node_roles(labels: dict) -> str:
    """``findNodeRoles``: ``node-role.kubernetes.io/<role>`` labels and ``kubernetes.io/role``."""
    roles = set()
    for key, value in labels.items():
        if key.startswith(ROLE_LABEL_PREFIX) and key[len(ROLE_LABEL_PREFIX):]:
            roles.add(key[len(ROLE_LABEL_PREFIX):])
        elif key == ROLE_LABEL and value:
            roles.add(value)
    return ",".join(sorted(roles)) or "<none>"


def node_status_text(node: dict) -> str:
    """``Ready``, ``NotReady`` or ``Unknown`` from the Ready condition, and
    ``SchedulingDisabled`` for a cordoned node."""
    status = []
    for condition in as_list(status_of(node).get("conditions")):
        condition = as_dict(condition)
        if condition.get("type") == "Ready":
            status = ["Ready" if condition.get("status") == "True" else "NotReady"]
    status = status or ["Unknown"]
    if spec_of(node).get("unschedulable") is True:
        status.append("SchedulingDisabled")
    return ",".join(status)


def _address(node: dict, kind: str) -> str:
    for address in as_list(status_of(node).get("addresses")):
        if as_dict(address).get("type") == kind:
            return as_str(address.get("address"))
    return "<none>"


class NodeStrategy(CoreStrategy):
    """``node.Strategy`` and its status strategy."""

    def name_validator(self):
        return name_is_dns_subdomain

    def set_defaults(self, obj):
        set_node_defaults(obj)

    def prepare_for_create(self, obj):
        # Nodes may set their status on create: nothing is cleared but the removed
        # dynamic kubelet config.
        spec_of(obj).pop("configSource", None)
        status_of(obj).pop("config", None)
        self.normalize(obj)

    def on_update(self, new, old):
        if spec_of(old).get("configSource") is None:
            spec_of(new).pop("configSource", None)

    def validate(self, obj):
        return validate_node(obj, self.validate_meta)

    def validate_update(self, new, old):
        return validate_node(new, self.validate_meta) + \
            validate_core_object_meta_update(meta_of(new), meta_of(old)) + \
            validate_node_update(new, old)

    def prepare_status_update(self, new, old):
        super().prepare_status_update(new, old)
        if status_of(old).get("config") is None:
            status_of(new).pop("config", None)

    def validate_status(self, new, old):
        return validate_node_update(new, old)

    def selectable_fields(self, obj):
        fields = super().selectable_fields(obj)
        fields["spec.unschedulable"] = "true" if spec_of(obj).get("unschedulable") is True \
            else "false"
        return fields

    def table_cells(self, obj):
        meta = meta_of(obj)
        info = as_dict(status_of(obj).get("nodeInfo"))
        return [meta.get("name", ""), node_status_text(obj),
                node_roles(as_dict(meta.get("labels"))), age(meta.get("creationTimestamp")),
                as_str(info.get("kubeletVersion")), _address(obj, "InternalIP"),
                _address(obj, "ExternalIP"), as_str(info.get("osImage")) or "<unknown>",
                as_str(info.get("kernelVersion")) or "<unknown>",
                as_str(info.get("containerRuntimeVersion")) or "<unknown>"]


def install(server) -> dict:
    """The handlers of this module's resources, keyed as ``APIGroupInfo`` keys them."""
    from kapiserver.server.apigroups import builtin_handlers

    from .node_proxy import NodeProxyHandler

    handlers = builtin_handlers(server, NodeStrategy(NODES))
    handlers["nodes/proxy"] = NodeProxyHandler(handlers["nodes"].store, server)
    return handlers
