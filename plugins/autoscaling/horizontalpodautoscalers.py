"""HorizontalPodAutoscalers (with ``status``): ``pkg/registry/autoscaling/
horizontalpodautoscaler`` and ``pkg/apis/autoscaling/{v2,validation}`` of kube-apiserver
1.32.

One object, stored in its ``autoscaling/v2`` form, is served as v2 and as v1 (as upstream
stores HPAs once, as autoscaling/v2). Validation, the status rules and the table work on
the v2 form, which is upstream's internal type with JSON names: a v1 write is converted
first, so its errors name v2 fields (``spec.metrics[0].resource.target...``) as
upstream's do. v2 defaults (``minReplicas``, the 80% CPU metric, the scaling behavior's
unset rules) apply to every object read from storage, as decoding applies them upstream.
"""

from __future__ import annotations

from kapiserver.apimachinery import quantity as quantities
from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue
from kapiserver.apimachinery.resource_validation import validate_container_resource_name
from kapiserver.apimachinery.validation import (is_dns1123_label, validate_nonnegative_field,
                                                validate_path_segment_name)
from kapiserver.registry import builtin
from kapiserver.registry.builtin import builtin_spec
from kapiserver.registry.printers import age
from kapiserver_plugins.apps.base import AppsStrategy

from . import conversion

HPAS_V2 = builtin_spec("autoscaling", "v2", "horizontalpodautoscalers")
HPAS_V1 = builtin_spec("autoscaling", "v1", "horizontalpodautoscalers")
SPEC = FieldPath("spec")
#: ``MaxPeriodSeconds`` and ``MaxStabilizationWindowSeconds``.
MAX_PERIOD_SECONDS = 1800
MAX_STABILIZATION_WINDOW_SECONDS = 3600
METRIC_SOURCE_TYPES = ("ContainerResource", "External", "Object", "Pods", "Resource")
SELECT_POLICIES = ("Disabled", "Max", "Min")
POLICY_TYPES = ("Percent", "Pods")
#: The defaults of a behavior's rules (``defaultHPAScaleUpRules``/``...ScaleDownRules``);
#: scale-down has no stabilization window: the controller's flag decides it.
SCALE_UP_RULES = {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                  "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                               {"type": "Percent", "value": 100, "periodSeconds": 15}]}
SCALE_DOWN_RULES = {"selectPolicy": "Max",
                    "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value) -> list:
    return value if isinstance(value, list) else []


def _int(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _str(value) -> str:
    return value if isinstance(value, str) else ""


def _spec(obj: dict) -> dict:
    return _dict(obj.get("spec"))


def _quantity(value):
    """The Quantity a field holds, or None when unset or unparsable (decoding refused
    those already)."""
    if value is None:
        return None
    try:
        return quantities.from_json(value)
    except quantities.QuantityError:
        return None


# -- defaults ------------------------------------------------------------------------------------

def _scaling_rules(rules, defaults: dict) -> dict:
    """``copyHPAScalingRules`` over a copy of ``defaults``."""
    out = {key: (list(value) if isinstance(value, list) else value)
           for key, value in defaults.items()}
    out["policies"] = [dict(p) for p in defaults["policies"]]
    rules = _dict(rules)
    for key in ("selectPolicy", "stabilizationWindowSeconds", "policies"):
        if rules.get(key) is not None:
            out[key] = rules[key]
    return out


def set_v2_defaults(obj: dict) -> None:
    """``SetDefaults_HorizontalPodAutoscaler`` of autoscaling/v2."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1
    if not spec.get("metrics"):
        spec["metrics"] = [{"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization",
                                      "averageUtilization": conversion.DEFAULT_CPU_UTILIZATION}}}]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        behavior["scaleUp"] = _scaling_rules(behavior.get("scaleUp"), SCALE_UP_RULES)
        behavior["scaleDown"] = _scaling_rules(behavior.get("scaleDown"), SCALE_DOWN_RULES)


def set_v1_defaults(obj: dict) -> None:
    """``SetDefaults_HorizontalPodAutoscaler`` of autoscaling/v1."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1


# -- validation -----------------------------------------------------------------------------------

def _go_quantity(value) -> GoValue:
    """A ``*resource.Quantity`` bad value: ``ErrorBody`` dereferences it and prints the
    struct (``String`` has a pointer receiver)."""
    return GoValue(_quantity(value).go_syntax())


def validate_cross_version_object_reference(ref: dict, path: FieldPath) -> list[FieldError]:
    """``ValidateCrossVersionObjectReference``."""
    errs = []
    for name in ("kind", "name"):
        value = _str(ref.get(name))
        if not value:
            errs.append(FieldError.required(path.child(name), ""))
        else:
            errs += [FieldError.invalid(path.child(name), value, msg)
                     for msg in validate_path_segment_name(value)]
    return errs


def validate_metric_target(target: dict, path: FieldPath) -> list[FieldError]:
    """``validateMetricTarget``."""
    errs = []
    kind = _str(target.get("type"))
    if not kind:
        errs.append(FieldError.required(path.child("type"), "must specify a metric target type"))
    if kind not in ("Utilization", "Value", "AverageValue"):
        errs.append(FieldError.invalid(path.child("type"), kind,
                                       "must be either Utilization, Value, or AverageValue"))
    for name in ("value", "averageValue"):
        value = _quantity(target.get(name))
        if value is not None and value.sign() != 1:
            errs.append(FieldError.invalid(path.child(name), _go_quantity(target[name]),
                                           "must be positive"))
    utilization = target.get("averageUtilization")
    if isinstance(utilization, int) and utilization < 1:
        errs.append(FieldError.invalid(path.child("averageUtilization"), utilization,
                                       "must be greater than 0"))
    return errs


def validate_metric_identifier(ident: dict, path: FieldPath) -> list[FieldError]:
    """``validateMetricIdentifier``."""
    name = _str(ident.get("name"))
    if not name:
        return [FieldError.required(path.child("name"), "must specify a metric name")]
    return [FieldError.invalid(path.child("name"), name, msg)
            for msg in validate_path_segment_name(name)]


def _validate_object_source(source: dict, path: FieldPath) -> list[FieldError]:
    target = _dict(source.get("target"))
    errs = validate_cross_version_object_reference(_dict(source.get("describedObject")),
                                                   path.child("describedObject"))
    errs += validate_metric_identifier(_dict(source.get("metric")), path.child("metric"))
    errs += validate_metric_target(target, path.child("target"))
    if target.get("value") is None and target.get("averageValue") is None:
        errs.append(FieldError.required(path.child("target", "averageValue"),
                                        "must set either a target value or averageValue"))
    return errs


def _validate_external_source(source: dict, path: FieldPath) -> list[FieldError]:
    target = _dict(source.get("target"))
    errs = validate_metric_identifier(_dict(source.get("metric")), path.child("metric"))
    errs += validate_metric_target(target, path.child("target"))
    if target.get("value") is None and target.get("averageValue") is None:
        errs.append(FieldError.required(path.child("target", "averageValue"),
                                        "must set either a target value for metric or a "
                                        "per-pod target"))
    if target.get("value") is not None and target.get("averageValue") is not None:
        errs.append(FieldError.forbidden(path.child("target", "value"),
                                         "may not set both a target value for metric and a "
                                         "per-pod target"))
    return errs


def _validate_pods_source(source: dict, path: FieldPath) -> list[FieldError]:
    target = _dict(source.get("target"))
    errs = validate_metric_identifier(_dict(source.get("metric")), path.child("metric"))
    errs += validate_metric_target(target, path.child("target"))
    if target.get("averageValue") is None:
        errs.append(FieldError.required(path.child("target", "averageValue"),
                                        "must specify a positive target averageValue"))
    return errs


def _validate_resource_target(target: dict, path: FieldPath) -> list[FieldError]:
    errs = validate_metric_target(target, path)
    if target.get("averageUtilization") is None and target.get("averageValue") is None:
        errs.append(FieldError.required(path.child("averageUtilization"),
                                        "must set either a target raw value or a target "
                                        "utilization"))
    if target.get("averageUtilization") is not None and target.get("averageValue") is not None:
        errs.append(FieldError.forbidden(path.child("averageValue"),
                                         "may not set both a target raw value and a target "
                                         "utilization"))
    return errs


def _validate_container_resource_source(source: dict, path: FieldPath) -> list[FieldError]:
    errs = []
    name = _str(source.get("name"))
    if not name:
        errs.append(FieldError.required(path.child("name"), "must specify a resource name"))
    else:
        errs += validate_container_resource_name(name, path.child("name"))
    container = _str(source.get("container"))
    if not container:
        errs.append(FieldError.required(path.child("container"), "must specify a container"))
    else:
        errs += [FieldError.invalid(path.child("container"), container, msg)
                 for msg in is_dns1123_label(container)]
    return errs + _validate_resource_target(_dict(source.get("target")), path.child("target"))


def _validate_resource_source(source: dict, path: FieldPath) -> list[FieldError]:
    errs = []
    if not _str(source.get("name")):
        errs.append(FieldError.required(path.child("name"), "must specify a resource name"))
    return errs + _validate_resource_target(_dict(source.get("target")), path.child("target"))


#: Each source field, its metric type, and its validation, in upstream's order.
_SOURCES = (("object", "Object", _validate_object_source),
            ("external", "External", _validate_external_source),
            ("pods", "Pods", _validate_pods_source),
            ("resource", "Resource", _validate_resource_source),
            ("containerResource", "ContainerResource", _validate_container_resource_source))


def validate_metric_spec(metric: dict, path: FieldPath) -> list[FieldError]:
    """``validateMetricSpec``: a known type, and exactly its source set."""
    errs = []
    kind = _str(metric.get("type"))
    if not kind:
        errs.append(FieldError.required(path.child("type"), "must specify a metric source type"))
    if kind not in METRIC_SOURCE_TYPES:
        errs.append(FieldError.not_supported(path.child("type"), kind, METRIC_SOURCE_TYPES))
    present = []
    for field, _, validate in _SOURCES:
        if metric.get(field) is not None:
            present.append(field)
            if len(present) == 1:
                errs += validate(_dict(metric[field]), path.child(field))
    expected = ""
    for field, source_type, _ in _SOURCES:
        if kind == source_type:
            expected = field
            if metric.get(field) is None:
                errs.append(FieldError.required(path.child(field), "must populate information "
                                                                   "for the given metric source"))
    if not expected:
        errs.append(FieldError.not_supported(path.child("type"), kind, METRIC_SOURCE_TYPES))
    if len(present) != 1:
        # Upstream ranges over a set: the order is Go's map order; sorted here.
        for field in sorted(f for f in present if f != expected):
            errs.append(FieldError.forbidden(path.child(field),
                                             "must populate the given metric source only"))
    return errs


def validate_metrics(metrics: list, path: FieldPath, min_replicas) -> list[FieldError]:
    """``validateMetrics``: each metric; scaling to zero needs an Object or External one."""
    errs = []
    scales_to_zero_metric = False
    for index, metric in enumerate(metrics):
        metric = _dict(metric)
        errs += validate_metric_spec(metric, path.index(index))
        scales_to_zero_metric |= metric.get("type") in ("Object", "External")
    if min_replicas == 0 and not scales_to_zero_metric:
        errs.append(FieldError.forbidden(path, "must specify at least one Object or External "
                                               "metric to support scaling to zero replicas"))
    return errs


def _validate_scaling_policy(policy: dict, path: FieldPath) -> list[FieldError]:
    errs = []
    kind = _str(policy.get("type"))
    if kind not in POLICY_TYPES:
        errs.append(FieldError.not_supported(path.child("type"), kind, POLICY_TYPES))
    value, period = _int(policy.get("value")), _int(policy.get("periodSeconds"))
    if value <= 0:
        errs.append(FieldError.invalid(path.child("value"), value, "must be greater than zero"))
    if period <= 0:
        errs.append(FieldError.invalid(path.child("periodSeconds"), period,
                                       "must be greater than zero"))
    if period > MAX_PERIOD_SECONDS:
        errs.append(FieldError.invalid(path.child("periodSeconds"), period,
                                       f"must be less than or equal to {MAX_PERIOD_SECONDS}"))
    return errs


def _validate_scaling_rules(rules, path: FieldPath) -> list[FieldError]:
    if not isinstance(rules, dict):
        return []
    errs = []
    window = rules.get("stabilizationWindowSeconds")
    if isinstance(window, int) and window < 0:
        errs.append(FieldError.invalid(path.child("stabilizationWindowSeconds"), window,
                                       "must be greater than or equal to zero"))
    if isinstance(window, int) and window > MAX_STABILIZATION_WINDOW_SECONDS:
        errs.append(FieldError.invalid(
            path.child("stabilizationWindowSeconds"), window,
            f"must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"))
    select = rules.get("selectPolicy")
    if select is not None and select not in SELECT_POLICIES:
        errs.append(FieldError.not_supported(path.child("selectPolicy"), select,
                                             SELECT_POLICIES))
    policies = _list(rules.get("policies"))
    if not policies:
        errs.append(FieldError.required(path.child("policies"),
                                        "must specify at least one Policy"))
    for index, policy in enumerate(policies):
        errs += _validate_scaling_policy(_dict(policy), path.child("policies").index(index))
    return errs


def validate_behavior(behavior, path: FieldPath) -> list[FieldError]:
    """``validateBehavior``."""
    if not isinstance(behavior, dict):
        return []
    return (_validate_scaling_rules(behavior.get("scaleUp"), path.child("scaleUp"))
            + _validate_scaling_rules(behavior.get("scaleDown"), path.child("scaleDown")))


def validate_hpa_spec(spec: dict, min_replicas_lower_bound: int,
                      path: FieldPath = SPEC) -> list[FieldError]:
    """``validateHorizontalPodAutoscalerSpec``."""
    errs = []
    min_replicas = spec.get("minReplicas")
    max_replicas = _int(spec.get("maxReplicas"))
    if isinstance(min_replicas, int) and min_replicas < min_replicas_lower_bound:
        errs.append(FieldError.invalid(path.child("minReplicas"), min_replicas,
                                       "must be greater than or equal to "
                                       f"{min_replicas_lower_bound}"))
    if max_replicas < 1:
        errs.append(FieldError.invalid(path.child("maxReplicas"), max_replicas,
                                       "must be greater than 0"))
    if isinstance(min_replicas, int) and max_replicas < min_replicas:
        errs.append(FieldError.invalid(path.child("maxReplicas"), max_replicas,
                                       "must be greater than or equal to `minReplicas`"))
    errs += validate_cross_version_object_reference(_dict(spec.get("scaleTargetRef")),
                                                    path.child("scaleTargetRef"))
    errs += validate_metrics(_list(spec.get("metrics")), path.child("metrics"), min_replicas)
    errs += validate_behavior(spec.get("behavior"), path.child("behavior"))
    return errs


# -- the table ------------------------------------------------------------------------------------

def _quantity_text(value) -> str:
    """``(*Quantity).String()``: ``<nil>`` for a nil pointer."""
    parsed = _quantity(value)
    return "<nil>" if parsed is None else parsed.canonical()


def _status_source(statuses: list, index: int, source: str) -> dict | None:
    """``statuses[index].<source>`` when the status has that many entries and it is set."""
    if index >= len(statuses):
        return None
    status = _dict(statuses[index]).get(source)
    return status if isinstance(status, dict) else None


def _current(statuses: list, index: int, source: str, field: str, needed: bool = False) -> str:
    """The current value shown for ``specs[index]``: ``<unknown>`` without a status for
    it (or, when ``needed``, without that very value)."""
    status = _status_source(statuses, index, source)
    value = None if status is None else _dict(status.get("current")).get(field)
    if status is None or (needed and value is None):
        return "<unknown>"
    return _quantity_text(value)


def format_hpa_metrics(specs: list, statuses: list) -> str:
    """``formatHPAMetrics``: at most two ``current/target`` texts, then ``+ N more...``."""
    if not specs:
        return "<none>"
    texts = []
    for i, metric in enumerate(_dict(m) for m in specs):
        kind = metric.get("type")
        if kind in ("External", "Object"):
            source_key = kind.lower()
            target = _dict(_dict(metric.get(source_key)).get("target"))
            if target.get("averageValue") is not None:
                current = _current(statuses, i, source_key, "averageValue", needed=True)
                texts.append(f"{current}/{_quantity_text(target['averageValue'])} (avg)")
            else:
                current = _current(statuses, i, source_key, "value")
                texts.append(f"{current}/{_quantity_text(target.get('value'))}")
        elif kind == "Pods":
            target = _dict(_dict(metric.get("pods")).get("target"))
            current = _current(statuses, i, "pods", "averageValue")
            texts.append(f"{current}/{_quantity_text(target.get('averageValue'))}")
        elif kind in ("Resource", "ContainerResource"):
            source_key = "resource" if kind == "Resource" else "containerResource"
            source = _dict(metric.get(source_key))
            target = _dict(source.get("target"))
            name = _str(source.get("name"))
            if target.get("averageValue") is not None:
                current = _current(statuses, i, source_key, "averageValue")
                texts.append(f"{name}: {current}/{_quantity_text(target['averageValue'])}")
            else:
                status = _status_source(statuses, i, source_key)
                utilization = None if status is None else \
                    _dict(status.get("current")).get("averageUtilization")
                current = f"{utilization}%" if isinstance(utilization, int) else "<unknown>"
                wanted = target.get("averageUtilization")
                wanted = f"{wanted}%" if isinstance(wanted, int) else "<auto>"
                texts.append(f"{name}: {current}/{wanted}")
        else:
            texts.append("<unknown type>")
    if len(texts) > 2:
        return ", ".join(texts[:2]) + f" + {len(texts) - 2} more..."
    return ", ".join(texts)


def table_cells(hpa: dict) -> list:
    """``printHorizontalPodAutoscaler`` of a v2 object."""
    meta, spec = _dict(hpa.get("metadata")), _spec(hpa)
    ref = _dict(spec.get("scaleTargetRef"))
    min_replicas = spec.get("minReplicas")
    return [meta.get("name", ""), f"{_str(ref.get('kind'))}/{_str(ref.get('name'))}",
            format_hpa_metrics(_list(spec.get("metrics")),
                               _list(_dict(hpa.get("status")).get("currentMetrics"))),
            str(min_replicas) if isinstance(min_replicas, int) else "<unset>",
            _int(spec.get("maxReplicas")), _int(_dict(hpa.get("status")).get("currentReplicas")),
            age(meta.get("creationTimestamp"))]


# -- the strategies -------------------------------------------------------------------------------

def _min_replicas_lower_bound(old: dict | None) -> int:
    """``validationOptionsForHorizontalPodAutoscaler``: HPAScaleToZero is off in 1.32, but
    an object that already scales to zero may keep doing so."""
    return 0 if old is not None and _spec(old).get("minReplicas") == 0 else 1


class HorizontalPodAutoscalerStrategy(AppsStrategy):
    """``autoscalerStrategy`` and ``autoscalerStatusStrategy`` for the v2 form
    (``AppsStrategy`` for its normalizing, which keeps the metadata dict the store holds)."""

    def set_defaults(self, obj):
        set_v2_defaults(obj)

    def from_storage(self, obj):
        # Decoding the stored v2 form applies the v2 defaults (an object written through
        # v1 was stored without them).
        self.normalize(obj)
        set_v2_defaults(obj)
        self.normalize(obj)
        return obj

    def validate(self, obj):
        return super().validate(obj) + validate_hpa_spec(_spec(obj), 1)

    def validate_update(self, new, old):
        from kapiserver.apimachinery.validation import validate_object_meta_update

        return (validate_object_meta_update(new.get("metadata") or {},
                                            old.get("metadata") or {})
                + validate_hpa_spec(_spec(new), _min_replicas_lower_bound(old)))

    def validate_status(self, new, old):
        status = _dict(new.get("status"))
        errs = []
        for name in ("currentReplicas", "desiredReplicas"):
            errs += validate_nonnegative_field(_int(status.get(name)),
                                               FieldPath("status", name))
        return errs

    def table_cells(self, obj):
        return table_cells(obj)


class HorizontalPodAutoscalerV1Strategy(AppsStrategy):
    """autoscaling/v1's view of the stored v2 objects: every rule is the v2 strategy's,
    applied to the object converted to v2 (``conversion``)."""

    def __init__(self, spec, v2: HorizontalPodAutoscalerStrategy):
        super().__init__(spec)
        self.v2 = v2

    def _as_v1(self, v2_obj: dict) -> dict:
        out = conversion.to_v1(self.v2.from_storage(v2_obj))
        self.normalize(out)
        return out

    def _as_v2(self, v1_obj: dict) -> dict:
        out = conversion.to_v2(v1_obj)
        self.v2.normalize(out)
        return out

    @staticmethod
    def _replace(obj: dict, new: dict) -> None:
        """``obj`` becomes ``new``, in its own dicts: the store holds on to its metadata."""
        meta = obj.get("metadata")
        obj.clear()
        obj.update(new)
        if isinstance(meta, dict) and isinstance(new.get("metadata"), dict):
            meta.clear()
            meta.update(new["metadata"])
            obj["metadata"] = meta

    # -- storage form --

    def to_storage(self, obj):
        return self._as_v2(obj)

    def from_storage(self, obj):
        return self._as_v1(obj)

    # -- writes --

    def set_defaults(self, obj):
        set_v1_defaults(obj)

    def prepare_for_create(self, obj):
        # What the object is once stored and read back: converted, its status cleared.
        stored = self._as_v2(obj)
        self.v2.prepare_for_create(stored)
        self._replace(obj, self._as_v1(stored))

    def prepare_for_update(self, new, old):
        stored = self._as_v2(new)
        self.v2.prepare_for_update(stored, self._as_v2(old))
        self._replace(new, self._as_v1(stored))

    def prepare_status_update(self, new, old):
        stored = self._as_v2(new)
        self.v2.prepare_status_update(stored, self._as_v2(old))
        self._replace(new, self._as_v1(stored))

    def validate(self, obj):
        return self.v2.validate(self._as_v2(obj))

    def validate_update(self, new, old):
        return self.v2.validate_update(self._as_v2(new), self._as_v2(old))

    def validate_status_update(self, new, old):
        return self.v2.validate_status_update(self._as_v2(new), self._as_v2(old))

    # -- reads --

    def table_columns(self):
        return builtin.table_columns(HPAS_V2)

    def table_cells(self, obj):
        return table_cells(self._as_v2(obj))
