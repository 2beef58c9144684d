"""Deployments: ``SetDefaults_Deployment``, ``ValidateDeployment``/``…Update``/``…Status``,
the strategy (generation bumped by spec and annotation changes, an immutable selector),
``status`` (which keeps labels) and ``scale``, and the READY/UP-TO-DATE/AVAILABLE Table."""

from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue
from kapiserver.apimachinery.gosyntax import go_pointer, go_str, go_struct
from kapiserver.apimachinery.selector_validation import go_label_selector
from kapiserver.apimachinery.validation import validate_object_meta_update
from kapiserver.registry.builtin import builtin_spec
from kapiserver.registry.builtin_strategy import ScaleAccessor

from . import workloads as w
from .base import AppsStrategy

DEPLOYMENTS = builtin_spec("apps", "v1", "deployments")
ROLLING_UPDATE = "RollingUpdate"
RECREATE = "Recreate"
STATUS_COUNTERS = ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas",
                   "availableReplicas", "unavailableReplicas")


def set_deployment_defaults(obj: dict) -> None:
    """``SetDefaults_Deployment`` and the pod template's defaults."""
    spec = obj.setdefault("spec", {})
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    strategy = spec.get("strategy")
    if not isinstance(strategy, dict):
        strategy = spec["strategy"] = {}
    if not strategy.get("type"):
        strategy["type"] = ROLLING_UPDATE
    if strategy["type"] == ROLLING_UPDATE:
        rolling = strategy.get("rollingUpdate")
        if not isinstance(rolling, dict):
            rolling = strategy["rollingUpdate"] = {}
        for key in ("maxUnavailable", "maxSurge"):
            if rolling.get(key) is None:
                rolling[key] = "25%"
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    if spec.get("progressDeadlineSeconds") is None:
        spec["progressDeadlineSeconds"] = 600
    w.set_template_defaults(spec)


def _go_strategy(strategy: dict) -> GoValue:
    return GoValue(go_struct("apps.DeploymentStrategy", (
        ("Type", go_str(strategy.get("type"))),
        ("RollingUpdate", go_pointer("apps.RollingUpdateDeployment",
                                     isinstance(strategy.get("rollingUpdate"), dict))))))


def validate_rolling_update(rolling: dict, path: FieldPath) -> list[FieldError]:
    """``ValidateRollingUpdateDeployment``."""
    unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
    errs = w.validate_positive_int_or_percent(unavailable, path.child("maxUnavailable"))
    errs += w.validate_positive_int_or_percent(surge, path.child("maxSurge"))
    if w.int_or_percent_value(unavailable) == 0 and w.int_or_percent_value(surge) == 0:
        errs.append(FieldError.invalid(path.child("maxUnavailable"),
                                       w.go_int_or_string(unavailable),
                                       "may not be 0 when `maxSurge` is 0"))
    errs += w.not_more_than_100_percent(unavailable, path.child("maxUnavailable"))
    return errs


def validate_strategy(strategy: dict, path: FieldPath) -> list[FieldError]:
    """``ValidateDeploymentStrategy``."""
    kind = strategy.get("type") or ""
    rolling = strategy.get("rollingUpdate")
    if kind == RECREATE:
        if rolling is not None:
            return [FieldError.forbidden(path.child("rollingUpdate"),
                                         "may not be specified when strategy `type` is "
                                         f"'{RECREATE}'")]
        return []
    if kind == ROLLING_UPDATE:
        if not isinstance(rolling, dict):
            return [FieldError.required(path.child("rollingUpdate"),
                                        "this should be defaulted and never be nil")]
        return validate_rolling_update(rolling, path.child("rollingUpdate"))
    return [FieldError.not_supported(path, _go_strategy(strategy), [RECREATE, ROLLING_UPDATE])]


def validate_deployment_spec(spec: dict, path: FieldPath, opts) -> list[FieldError]:
    """``ValidateDeploymentSpec``."""
    errs = w.nonnegative(spec, "replicas", path)
    errs += w.validate_selector(spec, path, "deployment")
    selector = w.parse_selector(spec)
    if selector is None:
        errs.append(FieldError.invalid(path.child("selector"),
                                       go_label_selector(spec.get("selector")),
                                       "invalid label selector"))
    else:
        errs += w.validate_pod_template_for_replica_set(w.template_of(spec), selector,
                                                        path.child("template"), opts)
    errs += validate_strategy(w.as_dict(spec.get("strategy")), path.child("strategy"))
    errs += w.nonnegative(spec, "minReadySeconds", path)
    errs += w.nonnegative_if_set(spec, "revisionHistoryLimit", path)
    deadline = spec.get("progressDeadlineSeconds")
    if isinstance(deadline, int) and not isinstance(deadline, bool):
        errs += w.nonnegative_if_set(spec, "progressDeadlineSeconds", path)
        if deadline <= w.as_int(spec.get("minReadySeconds")):
            errs.append(FieldError.invalid(path.child("progressDeadlineSeconds"), deadline,
                                           "must be greater than minReadySeconds"))
    return errs


def validate_deployment_status(status: dict, path: FieldPath) -> list[FieldError]:
    """``ValidateDeploymentStatus``."""
    errs = w.validate_counters(status, path, STATUS_COUNTERS)
    errs += w.nonnegative_if_set(status, "collisionCount", path)
    for key in ("updatedReplicas", "readyReplicas", "availableReplicas"):
        errs += w.not_above(status, key, "replicas", path)
    errs += w.not_above(status, "availableReplicas", "readyReplicas", path,
                        "cannot be greater than readyReplicas")
    return errs


class DeploymentStrategy(AppsStrategy):
    """``pkg/registry/apps/deployment`` strategy."""

    template_path = "spec.template"
    has_generation = True
    scale = ScaleAccessor()

    def set_defaults(self, obj):
        set_deployment_defaults(obj)

    def spec_changed(self, new, old):
        # Annotations are copied to the ReplicaSets, so they bump the generation too.
        return (new.get("spec") != old.get("spec")
                or w.as_dict(new["metadata"].get("annotations"))
                != w.as_dict(old["metadata"].get("annotations")))

    def validate(self, obj):
        spec = w.spec_of(obj)
        opts = w.pod_validation_options(w.template_of(spec))
        return super().validate(obj) + validate_deployment_spec(spec, FieldPath("spec"), opts)

    def warnings_on_create(self, obj):
        return w.name_warnings(obj)

    def validate_update(self, new, old):
        spec, old_spec = w.spec_of(new), w.spec_of(old)
        opts = w.pod_validation_options(w.template_of(spec), w.template_of(old_spec))
        errs = validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        errs += validate_deployment_spec(spec, FieldPath("spec"), opts)
        return errs + w.selector_immutable(spec, old_spec)

    def prepare_status_update(self, new, old):
        # deploymentStatusStrategy: the spec and the labels stay as they were.
        super().prepare_status_update(new, old)
        labels = old["metadata"].get("labels")
        if labels is None:
            new["metadata"].pop("labels", None)
        else:
            new["metadata"]["labels"] = labels

    def validate_status(self, new, old):
        status, old_status = w.as_dict(new.get("status")), w.as_dict(old.get("status"))
        return (validate_deployment_status(status, FieldPath("status"))
                + w.collision_count_decremented(status, old_status, FieldPath("status")))

    def table_cells(self, obj):
        spec, status = w.spec_of(obj), w.as_dict(obj.get("status"))
        selector = w.parse_selector(spec)
        names, images = w.container_cells(w.template_spec_of(spec))
        return [obj["metadata"].get("name", ""),
                f"{w.as_int(status.get('readyReplicas'))}/{w.as_int(spec.get('replicas'))}",
                w.as_int(status.get("updatedReplicas")), w.as_int(status.get("availableReplicas")),
                w.created(obj), names, images,
                "<invalid>" if selector is None else str(selector)]
