"""StatefulSets: ``SetDefaults_StatefulSet`` (and the claim templates' defaults),
``ValidateStatefulSet``/``…Update``/``…Status``, ``status`` and ``scale``, and the READY
Table. Names are DNS labels (they become pod hostnames); an update may change only the
replicas, ordinals, template, update strategy, claim retention and minReadySeconds."""

import copy

from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue
from kapiserver.apimachinery.gosyntax import go_int, go_pointer, go_str, go_struct
from kapiserver.apimachinery.selector_validation import go_label_selector
from kapiserver.apimachinery.validation import (name_is_dns_label, validate_nonnegative_field,
                                                validate_object_meta_update)
from kapiserver.apis.core.defaults import (set_persistent_volume_claim_spec_defaults,
                                          set_resource_list_defaults)
from kapiserver.registry.builtin import builtin_spec
from kapiserver.registry.builtin_strategy import ScaleAccessor

from . import workloads as w
from .base import AppsStrategy

STATEFULSETS = builtin_spec("apps", "v1", "statefulsets")
ORDERED_READY, PARALLEL = "OrderedReady", "Parallel"
ROLLING_UPDATE, ON_DELETE = "RollingUpdate", "OnDelete"
RETAIN, DELETE = "Retain", "Delete"
#: What an update may change in the spec (``ValidateStatefulSetUpdate``).
MUTABLE_SPEC = ("replicas", "template", "updateStrategy", "minReadySeconds", "ordinals",
                "persistentVolumeClaimRetentionPolicy")
FORBIDDEN_UPDATE = ("updates to statefulset spec for fields other than 'replicas', 'ordinals', "
                    "'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and "
                    "'minReadySeconds' are forbidden")
STATUS_COUNTERS = ("replicas", "readyReplicas", "currentReplicas", "updatedReplicas",
                   "availableReplicas")


def set_claim_template_defaults(claim: dict) -> None:
    """A claim template's defaults: ``SetDefaults_PersistentVolumeClaim`` (phase
    ``Pending``), its spec's, and its status' resource lists."""
    spec = claim.get("spec")
    if not isinstance(spec, dict):
        spec = claim["spec"] = {}
    set_persistent_volume_claim_spec_defaults(spec)
    status = claim.get("status")
    if not isinstance(status, dict):
        status = claim["status"] = {}
    if not status.get("phase"):
        status["phase"] = "Pending"
    set_resource_list_defaults(status.get("capacity"))
    set_resource_list_defaults(status.get("allocatedResources"))


def set_stateful_set_defaults(obj: dict) -> None:
    """``SetDefaults_StatefulSet``, with the features 1.32 enables (claim retention; not
    ``maxUnavailable``, which is alpha), and the template's and claims' defaults."""
    spec = obj.setdefault("spec", {})
    if not spec.get("podManagementPolicy"):
        spec["podManagementPolicy"] = ORDERED_READY
    strategy = spec.get("updateStrategy")
    if not isinstance(strategy, dict):
        strategy = spec["updateStrategy"] = {}
    if not strategy.get("type"):
        strategy["type"] = ROLLING_UPDATE
        if not isinstance(strategy.get("rollingUpdate"), dict):
            strategy["rollingUpdate"] = {}
    rolling = strategy.get("rollingUpdate")
    if strategy["type"] == ROLLING_UPDATE and isinstance(rolling, dict):
        if rolling.get("partition") is None:
            rolling["partition"] = 0
    retention = spec.get("persistentVolumeClaimRetentionPolicy")
    if not isinstance(retention, dict):
        retention = spec["persistentVolumeClaimRetentionPolicy"] = {}
    for key in ("whenDeleted", "whenScaled"):
        if not retention.get(key):
            retention[key] = RETAIN
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    w.set_template_defaults(spec)
    for claim in w.as_list(spec.get("volumeClaimTemplates")):
        if isinstance(claim, dict):
            set_claim_template_defaults(claim)


def drop_disabled_fields(new: dict, old: dict | None) -> None:
    """``dropStatefulSetDisabledFields``: ``rollingUpdate.maxUnavailable`` needs the alpha
    MaxUnavailableStatefulSet gate, so it goes unless the old object used it."""
    old_rolling = w.as_dict(w.as_dict(w.spec_of(old or {}).get("updateStrategy"))
                            .get("rollingUpdate"))
    if old_rolling.get("maxUnavailable") is not None:
        return
    rolling = w.as_dict(w.spec_of(new).get("updateStrategy")).get("rollingUpdate")
    if isinstance(rolling, dict):
        rolling.pop("maxUnavailable", None)


def _go_rolling_update(rolling: dict) -> GoValue:
    return GoValue(go_struct("apps.RollingUpdateStatefulSetStrategy", (
        ("Partition", go_int(rolling.get("partition"))),
        ("MaxUnavailable", go_pointer("intstr.IntOrString",
                                      rolling.get("maxUnavailable") is not None)))))


def _go_strategy(strategy: dict) -> GoValue:
    return GoValue(go_struct("apps.StatefulSetUpdateStrategy", (
        ("Type", go_str(strategy.get("type"))),
        ("RollingUpdate", go_pointer("apps.RollingUpdateStatefulSetStrategy",
                                     isinstance(strategy.get("rollingUpdate"), dict))))))


def validate_rolling_update(rolling: dict, path: FieldPath) -> list[FieldError]:
    """``validateRollingUpdateStatefulSet``."""
    errs = w.nonnegative(rolling, "partition", path)
    unavailable = rolling.get("maxUnavailable")
    if unavailable is not None:
        errs += w.validate_positive_int_or_percent(unavailable, path.child("maxUnavailable"))
        if w.int_or_percent_value(unavailable) == 0:
            errs.append(FieldError.invalid(path.child("maxUnavailable"),
                                           w.go_int_or_string(unavailable), "cannot be 0"))
        errs += w.not_more_than_100_percent(unavailable, path.child("maxUnavailable"))
    return errs


def validate_update_strategy(strategy: dict, path: FieldPath) -> list[FieldError]:
    kind = strategy.get("type") or ""
    rolling = strategy.get("rollingUpdate")
    if not kind:
        return [FieldError.required(path, "")]
    if kind == ON_DELETE:
        if isinstance(rolling, dict):
            return [FieldError.invalid(path.child("rollingUpdate"), _go_rolling_update(rolling),
                                       f"only allowed for updateStrategy '{ROLLING_UPDATE}'")]
        return []
    if kind == ROLLING_UPDATE:
        if isinstance(rolling, dict):
            return validate_rolling_update(rolling, path.child("rollingUpdate"))
        return []
    return [FieldError.invalid(path, _go_strategy(strategy),
                               f"must be '{ROLLING_UPDATE}' or '{ON_DELETE}'")]


def validate_retention_policy(policy, path: FieldPath) -> list[FieldError]:
    """``ValidatePersistentVolumeClaimRetentionPolicy``."""
    if not isinstance(policy, dict):
        return []
    errs = []
    for key in ("whenDeleted", "whenScaled"):
        value = policy.get(key) or ""
        if value not in (RETAIN, DELETE):
            errs.append(FieldError.not_supported(path.child(key), value, [RETAIN, DELETE]))
    return errs


def validate_stateful_set_spec(spec: dict, path: FieldPath, opts) -> list[FieldError]:
    """``ValidateStatefulSetSpec``. The pod spec of the template is not validated (as
    upstream: only its labels and annotations are)."""
    errs = []
    policy = spec.get("podManagementPolicy") or ""
    if not policy:
        errs.append(FieldError.required(path.child("podManagementPolicy"), ""))
    elif policy not in (ORDERED_READY, PARALLEL):
        errs.append(FieldError.invalid(path.child("podManagementPolicy"), policy,
                                       f"must be '{ORDERED_READY}' or '{PARALLEL}'"))
    errs += validate_update_strategy(w.as_dict(spec.get("updateStrategy")),
                                     path.child("updateStrategy"))
    errs += validate_retention_policy(spec.get("persistentVolumeClaimRetentionPolicy"),
                                      path.child("persistentVolumeClaimRetentionPolicy"))
    errs += w.nonnegative(spec, "replicas", path)
    errs += w.nonnegative(spec, "minReadySeconds", path)
    ordinals = spec.get("ordinals")
    if isinstance(ordinals, dict):
        # Upstream names the field with a dot in one path element.
        errs += validate_nonnegative_field(w.as_int(ordinals.get("start")),
                                           path.child("ordinals.start"))
    errs += w.validate_selector(spec, path, "statefulset")
    selector = w.parse_selector(spec)
    template = w.template_of(spec)
    if selector is None:
        errs.append(FieldError.invalid(path.child("selector"),
                                       go_label_selector(spec.get("selector")), ""))
    else:
        errs += w.selector_mismatch(selector, template, path.child("template"))
        errs += w.validate_template_metadata(template, path.child("template"), opts)
    errs += w.validate_restart_policy(w.as_dict(template.get("spec")),
                                      path.child("template", "spec"), "StatefulSet")
    return errs


def validate_stateful_set_status(status: dict, path: FieldPath) -> list[FieldError]:
    """``ValidateStatefulSetStatus``."""
    errs = w.validate_counters(status, path, STATUS_COUNTERS)
    errs += w.nonnegative_if_set(status, "observedGeneration", path)
    errs += w.nonnegative_if_set(status, "collisionCount", path)
    for key in ("readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"):
        errs += w.not_above(status, key, "replicas", path)
    errs += w.not_above(status, "availableReplicas", "readyReplicas", path,
                        "cannot be greater than status.readyReplicas")
    return errs


class StatefulSetStrategy(AppsStrategy):
    """``pkg/registry/apps/statefulset`` strategy."""

    template_path = "spec.template"
    has_generation = True
    scale = ScaleAccessor()

    def name_validator(self):
        return name_is_dns_label

    def set_defaults(self, obj):
        set_stateful_set_defaults(obj)

    def on_create(self, obj):
        drop_disabled_fields(obj, None)

    def on_update(self, new, old):
        drop_disabled_fields(new, old)

    def spec_changed(self, new, old):
        return new.get("spec") != old.get("spec")

    def validate(self, obj):
        spec = w.spec_of(obj)
        opts = w.pod_validation_options(w.template_of(spec))
        return super().validate(obj) + validate_stateful_set_spec(spec, FieldPath("spec"), opts)

    def validate_update(self, new, old):
        """``ValidateStatefulSetUpdate``: the name is not checked again (old objects may
        have subdomain names)."""
        spec, old_spec = w.spec_of(new), w.spec_of(old)
        opts = w.pod_validation_options(w.template_of(spec), w.template_of(old_spec))
        errs = validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        errs += validate_stateful_set_spec(spec, FieldPath("spec"), opts)
        unchanged = copy.deepcopy(spec)
        for key in MUTABLE_SPEC:
            unchanged.pop(key, None)
            if key in old_spec:
                unchanged[key] = old_spec[key]
        if unchanged != old_spec:
            errs.append(FieldError.forbidden(FieldPath("spec"), FORBIDDEN_UPDATE))
        return errs

    def validate_status_update(self, new, old):
        """``ValidateStatefulSetStatusUpdate``: the status first, then the metadata."""
        status, old_status = w.as_dict(new.get("status")), w.as_dict(old.get("status"))
        errs = validate_stateful_set_status(status, FieldPath("status"))
        errs += validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        return errs + w.collision_count_decremented(status, old_status, FieldPath("status"))

    def table_cells(self, obj):
        spec, status = w.spec_of(obj), w.as_dict(obj.get("status"))
        names, images = w.container_cells(w.template_spec_of(spec))
        return [obj["metadata"].get("name", ""),
                f"{w.as_int(status.get('readyReplicas'))}/{w.as_int(spec.get('replicas'))}",
                w.created(obj), names, images]
