"""DaemonSets: ``SetDefaults_DaemonSet``, ``ValidateDaemonSet``/``…Update``/``…Status``,
the template generation kept in the ``deprecated.daemonset.template.generation``
annotation, ``status``, and the DESIRED/CURRENT/READY/UP-TO-DATE/AVAILABLE Table."""

from kapiserver import errors
from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue, go_quote
from kapiserver.apimachinery.gosyntax import go_pointer, go_str, go_struct
from kapiserver.apimachinery.selector_validation import (go_label_selector,
                                                         validate_label_selector)
from kapiserver.apimachinery.validation import validate_object_meta_update
from kapiserver.apis.core.validation import validate_pod_template_spec
from kapiserver.registry.builtin import builtin_spec

from . import workloads as w
from .base import AppsStrategy

DAEMONSETS = builtin_spec("apps", "v1", "daemonsets")
ROLLING_UPDATE, ON_DELETE = "RollingUpdate", "OnDelete"
#: ``appsv1.DeprecatedTemplateGeneration``: apps/v1 carries the internal
#: ``spec.templateGeneration`` in this annotation.
TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"
STATUS_COUNTERS = ("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled",
                   "numberReady", "observedGeneration", "updatedNumberScheduled",
                   "numberAvailable", "numberUnavailable")


def template_generation(obj: dict) -> int:
    """The template generation the annotation holds (0 without one), parsed as upstream's
    conversion parses it: a value that is no int64 fails the decoding (400)."""
    value = w.as_dict(w.as_dict(obj.get("metadata")).get("annotations")).get(TEMPLATE_GENERATION)
    if value is None:
        return 0
    text = value if isinstance(value, str) else str(value)
    try:
        number = int(text, 10) if text.strip() == text and "_" not in text else None
    except ValueError:
        number = None
    if number is None or not -(1 << 63) <= number < (1 << 63):
        raise errors.BadRequest(f"strconv.ParseInt: parsing {go_quote(text)}: "
                                + ("value out of range" if number is not None
                                   else "invalid syntax"))
    return number


def set_template_generation(obj: dict, generation: int) -> None:
    meta = obj.setdefault("metadata", {})
    annotations = meta.get("annotations")
    if not isinstance(annotations, dict):
        annotations = meta["annotations"] = {}
    annotations[TEMPLATE_GENERATION] = str(generation)


def set_daemon_set_defaults(obj: dict) -> None:
    """``SetDefaults_DaemonSet`` and the pod template's defaults; the generation annotation
    is always there, as the conversion to apps/v1 always writes it."""
    set_template_generation(obj, template_generation(obj))
    spec = obj.setdefault("spec", {})
    strategy = spec.get("updateStrategy")
    if not isinstance(strategy, dict):
        strategy = spec["updateStrategy"] = {}
    if not strategy.get("type"):
        strategy["type"] = ROLLING_UPDATE
    if strategy["type"] == ROLLING_UPDATE:
        rolling = strategy.get("rollingUpdate")
        if not isinstance(rolling, dict):
            rolling = strategy["rollingUpdate"] = {}
        if rolling.get("maxUnavailable") is None:
            rolling["maxUnavailable"] = 1
        if rolling.get("maxSurge") is None:
            rolling["maxSurge"] = 0
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    w.set_template_defaults(spec)


def _go_strategy(strategy: dict) -> GoValue:
    return GoValue(go_struct("apps.DaemonSetUpdateStrategy", (
        ("Type", go_str(strategy.get("type"))),
        ("RollingUpdate", go_pointer("apps.RollingUpdateDaemonSet",
                                     isinstance(strategy.get("rollingUpdate"), dict))))))


def validate_rolling_update(rolling: dict, path: FieldPath) -> list[FieldError]:
    """``ValidateRollingUpdateDaemonSet``: exactly one of maxUnavailable and maxSurge is
    not zero."""
    unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
    errs = w.validate_positive_int_or_percent(unavailable, path.child("maxUnavailable"))
    errs += w.validate_positive_int_or_percent(surge, path.child("maxSurge"))
    errs += w.not_more_than_100_percent(unavailable, path.child("maxUnavailable"))
    errs += w.not_more_than_100_percent(surge, path.child("maxSurge"))
    has_unavailable = w.int_or_percent_value(unavailable) != 0
    has_surge = w.int_or_percent_value(surge) != 0
    if has_unavailable and has_surge:
        errs.append(FieldError.invalid(path.child("maxSurge"), w.go_int_or_string(surge),
                                       "may not be set when maxUnavailable is non-zero"))
    elif not has_unavailable and not has_surge:
        errs.append(FieldError.required(path.child("maxUnavailable"),
                                        "cannot be 0 when maxSurge is 0"))
    return errs


def validate_update_strategy(strategy: dict, path: FieldPath) -> list[FieldError]:
    """``ValidateDaemonSetUpdateStrategy``."""
    kind = strategy.get("type") or ""
    if kind == ON_DELETE:
        return []
    if kind == ROLLING_UPDATE:
        rolling = strategy.get("rollingUpdate")
        if not isinstance(rolling, dict):
            return [FieldError.required(path.child("rollingUpdate"), "")]
        return validate_rolling_update(rolling, path.child("rollingUpdate"))
    return [FieldError.not_supported(path, _go_strategy(strategy), [ROLLING_UPDATE, ON_DELETE])]


def validate_daemon_set_spec(spec: dict, path: FieldPath, opts) -> list[FieldError]:
    """``ValidateDaemonSetSpec``. A missing selector is not "required" here: it selects
    nothing, so the template's labels do not match it."""
    selector_value = spec.get("selector")
    errs = validate_label_selector(selector_value if isinstance(selector_value, dict) else None,
                                   w.label_selector_options(opts),
                                   path.child("selector"))
    selector = w.parse_selector(spec)
    template = w.template_of(spec)
    labels = w.as_dict(w.as_dict(template.get("metadata")).get("labels"))
    if selector is not None and not selector.matches(labels):
        errs.append(FieldError.invalid(path.child("template", "metadata", "labels"),
                                       w.template_labels_value(template), w.DOES_NOT_MATCH))
    if isinstance(selector_value, dict) and not w.as_dict(selector_value.get("matchLabels")) \
            and not w.as_list(selector_value.get("matchExpressions")):
        errs.append(FieldError.invalid(path.child("selector"), go_label_selector(selector_value),
                                       "empty selector is invalid for daemonset"))
    errs += validate_pod_template_spec(template, path.child("template"), opts)
    errs += w.validate_restart_policy(w.as_dict(template.get("spec")),
                                      path.child("template", "spec"), "DaemonSet")
    errs += w.nonnegative(spec, "minReadySeconds", path)
    errs += validate_update_strategy(w.as_dict(spec.get("updateStrategy")),
                                     path.child("updateStrategy"))
    errs += w.nonnegative_if_set(spec, "revisionHistoryLimit", path)
    return errs


def validate_daemon_set_status(status: dict, path: FieldPath) -> list[FieldError]:
    """``validateDaemonSetStatus``."""
    return (w.validate_counters(status, path, STATUS_COUNTERS)
            + w.nonnegative_if_set(status, "collisionCount", path))


class DaemonSetStrategy(AppsStrategy):
    """``pkg/registry/apps/daemonset`` strategy."""

    template_path = "spec.template"
    has_generation = True

    def set_defaults(self, obj):
        set_daemon_set_defaults(obj)

    def on_create(self, obj):
        # PrepareForCreate: the template generation starts at 1.
        set_template_generation(obj, max(template_generation(obj), 1))

    def on_update(self, new, old):
        # A write cannot set the template generation; a template change bumps it (and
        # the generation, as any spec change does).
        generation = template_generation(old)
        if w.spec_of(new).get("template") != w.spec_of(old).get("template"):
            generation += 1
        set_template_generation(new, generation)

    def validate(self, obj):
        spec = w.spec_of(obj)
        opts = w.pod_validation_options(w.template_of(spec))
        return super().validate(obj) + validate_daemon_set_spec(spec, FieldPath("spec"), opts)

    def validate_update(self, new, old):
        # ValidateDaemonSet and ValidateDaemonSetUpdate (the spec again), then the
        # selector's immutability: upstream's ValidateUpdate, repeats included.
        spec, old_spec = w.spec_of(new), w.spec_of(old)
        opts = w.allow_invalid_selector_values(
            w.pod_validation_options(w.template_of(spec), w.template_of(old_spec)),
            old_spec.get("selector"))
        errs = super().validate(new)
        errs += validate_daemon_set_spec(spec, FieldPath("spec"), opts)
        errs += validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        errs += validate_daemon_set_spec(spec, FieldPath("spec"), opts)
        return errs + w.selector_immutable(spec, old_spec)

    def prepare_status_update(self, new, old):
        super().prepare_status_update(new, old)
        # The spec, template generation included, is the stored one.
        set_template_generation(new, template_generation(old))

    def validate_status(self, new, old):
        status, old_status = w.as_dict(new.get("status")), w.as_dict(old.get("status"))
        return (validate_daemon_set_status(status, FieldPath("status"))
                + w.collision_count_decremented(status, old_status, FieldPath("status")))

    def table_cells(self, obj):
        spec, status = w.spec_of(obj), w.as_dict(obj.get("status"))
        template_spec = w.template_spec_of(spec)
        names, images = w.container_cells(template_spec)
        return [obj["metadata"].get("name", ""),
                *(w.as_int(status.get(key)) for key in (
                    "desiredNumberScheduled", "currentNumberScheduled", "numberReady",
                    "updatedNumberScheduled", "numberAvailable")),
                w.format_labels(template_spec.get("nodeSelector")), w.created(obj),
                names, images, w.format_label_selector(spec.get("selector"))]
