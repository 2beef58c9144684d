"""PriorityClasses: ``ValidatePriorityClass``, the reserved ``system-`` names, and the
system classes, which exist from the start and can be neither changed nor deleted."""

from kapiserver import errors
from kapiserver.apimachinery.field_errors import FieldError, FieldPath
from kapiserver.apimachinery.validation import validate_immutable_field
from kapiserver.registry.builtin import builtin_spec
from kapiserver.registry.builtin_strategy import BuiltinStrategy
from kapiserver.registry.printers import age
from kapiserver.registry.store import RegistryStore

PRIORITY_CLASSES = builtin_spec("scheduling.k8s.io", "v1", "priorityclasses")
SYSTEM_PREFIX = "system-"
#: ``scheduling.HighestUserDefinablePriority``.
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
#: ``scheduling.SystemCriticalPriority``.
SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
PREEMPTION_POLICIES = ("Never", PREEMPT_LOWER_PRIORITY)
#: ``schedulingapiv1.SystemPriorityClasses()``: made at start, never changed or deleted.
SYSTEM_CLASSES = (
    {"name": "system-node-critical", "value": SYSTEM_CRITICAL_PRIORITY + 1000,
     "description": "Used for system critical pods that must not be moved from their "
                    "current node."},
    {"name": "system-cluster-critical", "value": SYSTEM_CRITICAL_PRIORITY,
     "description": "Used for system critical pods that must run in the cluster, but can "
                    "be moved to another node if necessary."},
)


def _known_system_class(name: str, value, global_default: bool) -> str:
    """``IsKnownSystemPriorityClass``: ``""`` when it is one, else why not."""
    for system in SYSTEM_CLASSES:
        if system["name"] == name:
            if system["value"] != value:
                return f"value of {name} PriorityClass must be {system['value']}"
            if global_default:
                return f"globalDefault of {name} PriorityClass must be false"
            return ""
    return f"{name} is not a known system priority class"


def validate_priority_class(obj: dict) -> list:
    """``ValidatePriorityClass`` beyond metadata."""
    errs = []
    name = (obj.get("metadata") or {}).get("name") or ""
    value = obj.get("value", 0)
    if name.startswith(SYSTEM_PREFIX):
        why = _known_system_class(name, value, bool(obj.get("globalDefault")))
        if why:
            errs.append(FieldError.forbidden(
                FieldPath("metadata", "name"),
                f"priority class names with '{SYSTEM_PREFIX}' prefix are reserved for system "
                f"use only. error: {why}"))
    elif isinstance(value, int) and value > HIGHEST_USER_DEFINABLE_PRIORITY:
        errs.append(FieldError.forbidden(
            FieldPath("value"),
            f"maximum allowed value of a user defined priority is "
            f"{HIGHEST_USER_DEFINABLE_PRIORITY}"))
    policy = obj.get("preemptionPolicy")
    if policy is not None and policy not in PREEMPTION_POLICIES:
        errs.append(FieldError.not_supported(FieldPath("preemptionPolicy"), policy,
                                             PREEMPTION_POLICIES))
    return errs


class PriorityClassStrategy(BuiltinStrategy):
    """``pkg/registry/scheduling/priorityclass`` strategy."""

    # Generation is 1 from the create on: the strategy never bumps it.
    has_generation = True

    def set_defaults(self, obj):
        # SetDefaults_PriorityClass
        if obj.get("preemptionPolicy") is None:
            obj["preemptionPolicy"] = PREEMPT_LOWER_PRIORITY

    def spec_changed(self, new, old):
        return False

    def validate(self, obj):
        return super().validate(obj) + validate_priority_class(obj)

    def validate_update(self, new, old):
        from kapiserver.apimachinery.validation import validate_object_meta_update

        errs = validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        if new.get("value") != old.get("value"):
            errs.append(FieldError.forbidden(FieldPath("value"), "may not be changed in an "
                                                                 "update."))
        errs += validate_immutable_field(new.get("preemptionPolicy"),
                                         old.get("preemptionPolicy"),
                                         FieldPath("preemptionPolicy"))
        return errs

    def table_cells(self, obj):
        meta = obj.get("metadata") or {}
        return [meta.get("name", ""), obj.get("value", 0), bool(obj.get("globalDefault")),
                age(meta.get("creationTimestamp")), obj.get("preemptionPolicy") or ""]


class PriorityClassRegistry(RegistryStore):
    """PriorityClasses' storage: the system classes cannot be deleted (upstream's REST)."""

    def delete(self, namespace, name, *args, **kwargs):
        if any(system["name"] == name for system in SYSTEM_CLASSES):
            raise errors.Forbidden.for_resource(
                "scheduling.k8s.io", "priorityclasses", name,
                "this is a system priority class and cannot be deleted")
        return super().delete(namespace, name, *args, **kwargs)


def ensure_system_priority_classes(server) -> None:
    """Create the system priority classes that are missing (post-start hook; any worker
    may race). As upstream, an existing class of that name is left as it is."""
    registry = server.registries[("scheduling.k8s.io", "priorityclasses")]
    manage = registry.field_manager("kube-apiserver")
    for system in SYSTEM_CLASSES:
        try:
            registry.get("", system["name"])
        except errors.NotFound:
            obj = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                   "metadata": {"name": system["name"]}, "value": system["value"],
                   "description": system["description"]}
            try:
                registry.create(obj, manage=manage)
            except errors.AlreadyExists:
                pass
