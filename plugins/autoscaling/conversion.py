"""HorizontalPodAutoscalers between ``autoscaling/v2`` (the stored form) and
``autoscaling/v1``, as ``pkg/apis/autoscaling/v1/conversion.go`` (1.32) converts them.

v1 holds one metric, a CPU utilization target (``targetCPUUtilizationPercentage``), and
one status value (``currentCPUUtilizationPercentage``). What it cannot hold travels in
annotations, JSON-encoded as upstream writes them so that an object read, changed and
written back through v1 keeps it:

* ``autoscaling.alpha.kubernetes.io/metrics``: the other metrics, as v1 ``MetricSpec``s;
* ``autoscaling.alpha.kubernetes.io/current-metrics``: every current metric status;
* ``autoscaling.alpha.kubernetes.io/conditions``: the status conditions;
* ``autoscaling.alpha.kubernetes.io/behavior``: the scaling behavior, as upstream's
  internal type marshals it (Go field names: ``{"ScaleUp":{...},"ScaleDown":null}``).

Reading v1 moves well-formed annotations back into fields and drops all four; a
malformed one is ignored. A v1 object without metrics gets upstream's implicit CPU
utilization target of 80%.
"""

from __future__ import annotations

import copy

from kapiserver.apimachinery import quantity as _quantity
from kapiserver.fieldmanager.gojson import go_string

METRIC_SPECS_ANNOTATION = "autoscaling.alpha.kubernetes.io/metrics"
METRIC_STATUSES_ANNOTATION = "autoscaling.alpha.kubernetes.io/current-metrics"
CONDITIONS_ANNOTATION = "autoscaling.alpha.kubernetes.io/conditions"
BEHAVIOR_ANNOTATION = "autoscaling.alpha.kubernetes.io/behavior"
ROUND_TRIP_ANNOTATIONS = (METRIC_SPECS_ANNOTATION, BEHAVIOR_ANNOTATION,
                          METRIC_STATUSES_ANNOTATION, CONDITIONS_ANNOTATION)
#: ``autoscaling.DefaultCPUUtilization``.
DEFAULT_CPU_UTILIZATION = 80
_ABSENT = object()


class Malformed(ValueError):
    """An annotation Go's ``json.Unmarshal`` would refuse."""


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value) -> list:
    return value if isinstance(value, list) else []


def _set(out: dict, key: str, value) -> None:
    """Set ``key`` unless ``value`` is None (an ``omitempty`` pointer)."""
    if value is not None:
        out[key] = value


def _quantity_text(value) -> str:
    """A Quantity field as Go writes it (a nil or unparsable one is the zero ``"0"``)."""
    try:
        return _quantity.from_json(value).canonical()
    except _quantity.QuantityError:
        return "0"


# -- Go's encoding/json of the annotation values -------------------------------------------

def go_json(value) -> str:
    """Compact JSON as ``json.Marshal`` writes it; dicts keep their order (struct fields)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return go_string(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{go_string(k)}:{go_json(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(go_json(item) for item in value) + "]"
    raise TypeError(f"not an annotation value: {value!r}")


def _selector_json(selector):
    """A ``*metav1.LabelSelector`` in Go's field order (``omitempty`` lists and maps)."""
    if not isinstance(selector, dict):
        return None
    out = {}
    labels = _dict(selector.get("matchLabels"))
    if labels:
        out["matchLabels"] = {key: labels[key] for key in sorted(labels)}
    expressions = _list(selector.get("matchExpressions"))
    if expressions:
        out["matchExpressions"] = []
        for expression in expressions:
            expression = _dict(expression)
            item = {"key": expression.get("key") or "",
                    "operator": expression.get("operator") or ""}
            if expression.get("values"):
                item["values"] = list(expression["values"])
            out["matchExpressions"].append(item)
    return out


def _reference(ref) -> dict:
    """A ``CrossVersionObjectReference`` (kind, name, apiVersion omitempty)."""
    ref = _dict(ref)
    out = {"kind": ref.get("kind") or "", "name": ref.get("name") or ""}
    if ref.get("apiVersion"):
        out["apiVersion"] = ref["apiVersion"]
    return out


# -- metric specs ------------------------------------------------------------------------------

def _target(kind: str, value=None, average_value=None, average_utilization=None) -> dict:
    out = {"type": kind}
    _set(out, "value", value)
    _set(out, "averageValue", average_value)
    _set(out, "averageUtilization", average_utilization)
    return out


def _identifier(name, selector) -> dict:
    out = {"name": name or ""}
    _set(out, "selector", selector)
    return out


def metric_spec_to_v1(metric: dict) -> dict:
    """``Convert_autoscaling_MetricSpec_To_v1_MetricSpec``."""
    out = {"type": metric.get("type") or ""}
    source = metric.get("object")
    if isinstance(source, dict):
        target, ident = _dict(source.get("target")), _dict(source.get("metric"))
        converted = {"target": _reference(source.get("describedObject")),
                     "metricName": ident.get("name") or "",
                     "targetValue": _quantity_text(target.get("value"))}
        _set(converted, "selector", _selector_json(ident.get("selector")))
        if target.get("averageValue") is not None:
            converted["averageValue"] = _quantity_text(target["averageValue"])
        out["object"] = converted
    source = metric.get("pods")
    if isinstance(source, dict):
        target, ident = _dict(source.get("target")), _dict(source.get("metric"))
        converted = {"metricName": ident.get("name") or "",
                     "targetAverageValue": _quantity_text(target.get("averageValue"))}
        _set(converted, "selector", _selector_json(ident.get("selector")))
        out["pods"] = converted
    for key in ("resource", "containerResource"):
        source = metric.get(key)
        if isinstance(source, dict):
            target = _dict(source.get("target"))
            converted = {"name": source.get("name") or ""}
            _set(converted, "targetAverageUtilization", target.get("averageUtilization"))
            if target.get("averageValue") is not None:
                converted["targetAverageValue"] = _quantity_text(target["averageValue"])
            if key == "containerResource":
                converted["container"] = source.get("container") or ""
            out[key] = converted
    source = metric.get("external")
    if isinstance(source, dict):
        target, ident = _dict(source.get("target")), _dict(source.get("metric"))
        converted = {"metricName": ident.get("name") or ""}
        _set(converted, "metricSelector", _selector_json(ident.get("selector")))
        for name, field in (("value", "targetValue"), ("averageValue", "targetAverageValue")):
            if target.get(name) is not None:
                converted[field] = _quantity_text(target[name])
        out["external"] = converted
    return out


def metric_spec_from_v1(metric: dict) -> dict:
    """``Convert_v1_MetricSpec_To_autoscaling_MetricSpec`` (a v1 spec as decoded from the
    annotation)."""
    out = {"type": _str_field(metric, "type")}
    source = _field(metric, "object")
    if source is not None:
        average = _quantity_field(source, "averageValue")
        out["object"] = {
            "describedObject": _reference_field(source, "target"),
            "target": _target("AverageValue" if average is not None else "Value",
                              value=_quantity_field(source, "targetValue") or "0",
                              average_value=average),
            "metric": _identifier(_str_field(source, "metricName"),
                                  _selector_field(source, "selector"))}
    source = _field(metric, "pods")
    if source is not None:
        out["pods"] = {
            "metric": _identifier(_str_field(source, "metricName"),
                                  _selector_field(source, "selector")),
            "target": _target("AverageValue",
                              average_value=_quantity_field(source, "targetAverageValue") or "0")}
    for key in ("resource", "containerResource"):
        source = _field(metric, key)
        if source is not None:
            utilization = _int_field(source, "targetAverageUtilization")
            converted = {"name": _str_field(source, "name"),
                         "target": _target("Utilization" if utilization is not None
                                           else "AverageValue",
                                           average_value=_quantity_field(source,
                                                                         "targetAverageValue"),
                                           average_utilization=utilization)}
            if key == "containerResource":
                converted["container"] = _str_field(source, "container")
            out[key] = converted
    source = _field(metric, "external")
    if source is not None:
        value = _quantity_field(source, "targetValue")
        out["external"] = {
            "metric": _identifier(_str_field(source, "metricName"),
                                  _selector_field(source, "metricSelector")),
            "target": _target("Value" if value is not None else "AverageValue", value=value,
                              average_value=_quantity_field(source, "targetAverageValue"))}
    return out


# -- metric statuses -----------------------------------------------------------------------------

def _current(value=None, average_value=None, average_utilization=None) -> dict:
    out = {}
    _set(out, "value", value)
    _set(out, "averageValue", average_value)
    _set(out, "averageUtilization", average_utilization)
    return out


def metric_status_to_v1(status: dict) -> dict:
    """``Convert_autoscaling_MetricStatus_To_v1_MetricStatus``."""
    out = {"type": status.get("type") or ""}
    source = status.get("object")
    if isinstance(source, dict):
        current, ident = _dict(source.get("current")), _dict(source.get("metric"))
        converted = {"target": _reference(source.get("describedObject")),
                     "metricName": ident.get("name") or "",
                     "currentValue": _quantity_text(current.get("value"))}
        _set(converted, "selector", _selector_json(ident.get("selector")))
        if current.get("averageValue") is not None:
            converted["averageValue"] = _quantity_text(current["averageValue"])
        out["object"] = converted
    source = status.get("pods")
    if isinstance(source, dict):
        current, ident = _dict(source.get("current")), _dict(source.get("metric"))
        converted = {"metricName": ident.get("name") or "",
                     "currentAverageValue": _quantity_text(current.get("averageValue"))}
        _set(converted, "selector", _selector_json(ident.get("selector")))
        out["pods"] = converted
    for key in ("resource", "containerResource"):
        source = status.get(key)
        if isinstance(source, dict):
            current = _dict(source.get("current"))
            converted = {"name": source.get("name") or ""}
            _set(converted, "currentAverageUtilization", current.get("averageUtilization"))
            converted["currentAverageValue"] = _quantity_text(current.get("averageValue"))
            if key == "containerResource":
                converted["container"] = source.get("container") or ""
            out[key] = converted
    source = status.get("external")
    if isinstance(source, dict):
        current, ident = _dict(source.get("current")), _dict(source.get("metric"))
        converted = {"metricName": ident.get("name") or ""}
        _set(converted, "metricSelector", _selector_json(ident.get("selector")))
        converted["currentValue"] = _quantity_text(current.get("value"))
        if current.get("averageValue") is not None:
            converted["currentAverageValue"] = _quantity_text(current["averageValue"])
        out["external"] = converted
    return out


def metric_status_from_v1(status: dict) -> dict:
    """``Convert_v1_MetricStatus_To_autoscaling_MetricStatus``."""
    out = {"type": _str_field(status, "type")}
    source = _field(status, "object")
    if source is not None:
        out["object"] = {
            "metric": _identifier(_str_field(source, "metricName"),
                                  _selector_field(source, "selector")),
            "current": _current(value=_quantity_field(source, "currentValue") or "0",
                                average_value=_quantity_field(source, "averageValue")),
            "describedObject": _reference_field(source, "target")}
    source = _field(status, "pods")
    if source is not None:
        out["pods"] = {
            "metric": _identifier(_str_field(source, "metricName"),
                                  _selector_field(source, "selector")),
            "current": _current(
                average_value=_quantity_field(source, "currentAverageValue") or "0")}
    for key in ("resource", "containerResource"):
        source = _field(status, key)
        if source is not None:
            converted = {"name": _str_field(source, "name"),
                         "current": _current(
                             average_value=_quantity_field(source, "currentAverageValue") or "0",
                             average_utilization=_int_field(source,
                                                            "currentAverageUtilization"))}
            if key == "containerResource":
                converted["container"] = _str_field(source, "container")
            out[key] = converted
    source = _field(status, "external")
    if source is not None:
        out["external"] = {
            "metric": _identifier(_str_field(source, "metricName"),
                                  _selector_field(source, "metricSelector")),
            "current": _current(value=_quantity_field(source, "currentValue") or "0",
                                average_value=_quantity_field(source, "currentAverageValue"))}
    return out


# -- conditions and behavior ---------------------------------------------------------------------

def condition_to_v1(condition: dict) -> dict:
    out = {"type": condition.get("type") or "", "status": condition.get("status") or "",
           "lastTransitionTime": condition.get("lastTransitionTime") or None}
    if condition.get("reason"):
        out["reason"] = condition["reason"]
    if condition.get("message"):
        out["message"] = condition["message"]
    return out


def condition_from_v1(condition: dict) -> dict:
    out = {"type": _str_field(condition, "type"), "status": _str_field(condition, "status")}
    when = _field(condition, "lastTransitionTime", kind=str)
    out["lastTransitionTime"] = when or None
    _set(out, "reason", _str_field(condition, "reason") or None)
    _set(out, "message", _str_field(condition, "message") or None)
    return out


def _rules_to_internal(rules):
    """``HPAScalingRules`` as the internal type marshals (no tags, no ``omitempty``)."""
    if not isinstance(rules, dict):
        return None
    policies = rules.get("policies")
    return {"StabilizationWindowSeconds": rules.get("stabilizationWindowSeconds"),
            "SelectPolicy": rules.get("selectPolicy"),
            "Policies": None if not isinstance(policies, list) else [
                {"Type": _dict(p).get("type") or "", "Value": _dict(p).get("value") or 0,
                 "PeriodSeconds": _dict(p).get("periodSeconds") or 0} for p in policies]}


def behavior_to_annotation(behavior: dict) -> str:
    return go_json({"ScaleUp": _rules_to_internal(behavior.get("scaleUp")),
                    "ScaleDown": _rules_to_internal(behavior.get("scaleDown"))})


def _rules_from_internal(rules):
    if rules is None:
        return None
    if not isinstance(rules, dict):
        raise Malformed("rules")
    out = {}
    _set(out, "selectPolicy", _field(rules, "SelectPolicy", kind=str))
    policies = _field(rules, "Policies", kind=list)
    if policies is not None:
        out["policies"] = [{"type": _str_field(p, "Type"), "value": _int_field(p, "Value") or 0,
                            "periodSeconds": _int_field(p, "PeriodSeconds") or 0}
                           for p in (_object(p) for p in policies)]
    _set(out, "stabilizationWindowSeconds", _int_field(rules, "StabilizationWindowSeconds"))
    return out


def behavior_from_annotation(text: str):
    """The behavior in the annotation, or ``None`` when it is malformed or empty (upstream
    only moves well-formed, non-empty data into the field)."""
    try:
        document = _object(_loads(text))
        scale_up = _rules_from_internal(_field(document, "ScaleUp", kind=object))
        scale_down = _rules_from_internal(_field(document, "ScaleDown", kind=object))
    except Malformed:
        return None
    if scale_up is None and scale_down is None:
        return None
    behavior = {}
    _set(behavior, "scaleUp", scale_up)
    _set(behavior, "scaleDown", scale_down)
    return behavior


# -- reading annotations as json.Unmarshal reads them ------------------------------------------

def _loads(text: str):
    import json

    try:
        return json.loads(text)
    except ValueError:
        raise Malformed("not JSON") from None


def _object(value) -> dict:
    if not isinstance(value, dict):
        raise Malformed("want an object")
    return value


def _field(obj: dict, name: str, kind=dict):
    """``obj``'s field ``name`` matched as Go matches JSON keys (exactly, else ignoring
    case); ``None`` when absent or null; ``Malformed`` when of the wrong JSON type."""
    if name in obj:
        value = obj[name]
    else:
        folded = name.casefold()
        value = next((v for k, v in obj.items() if k.casefold() == folded), None)
    if value is None or kind is object:
        return value
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
            raise Malformed(name)
        return int(value)
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise Malformed(name)
    return value


def _str_field(obj: dict, name: str) -> str:
    return _field(obj, name, kind=str) or ""


def _int_field(obj: dict, name: str):
    return _field(obj, name, kind=int)


def _quantity_field(obj: dict, name: str):
    value = _field(obj, name, kind=object)
    if value is None:
        return None
    try:
        return _quantity.from_json(value).canonical()
    except _quantity.QuantityError:
        raise Malformed(name) from None


def _selector_field(obj: dict, name: str):
    selector = _field(obj, name)
    if selector is None:
        return None
    out = {}
    labels = _field(selector, "matchLabels")
    if labels:
        if not all(isinstance(v, str) for v in labels.values()):
            raise Malformed("matchLabels")
        out["matchLabels"] = dict(labels)
    expressions = _field(selector, "matchExpressions", kind=list)
    if expressions:
        out["matchExpressions"] = []
        for expression in expressions:
            expression = _object(expression)
            item = {"key": _str_field(expression, "key"),
                    "operator": _str_field(expression, "operator")}
            values = _field(expression, "values", kind=list)
            if values:
                if not all(isinstance(v, str) for v in values):
                    raise Malformed("values")
                item["values"] = list(values)
            out["matchExpressions"].append(item)
    return out


def _reference_field(obj: dict, name: str) -> dict:
    ref = _field(obj, name) or {}
    out = {"kind": _str_field(ref, "kind"), "name": _str_field(ref, "name")}
    _set(out, "apiVersion", _str_field(ref, "apiVersion") or None)
    return out


def _annotation_list(annotations: dict, key: str, convert):
    """The list in annotation ``key`` converted item by item, or ``_ABSENT`` when the
    annotation is missing or malformed."""
    if key not in annotations:
        return _ABSENT
    try:
        items = _loads(annotations[key])
        if items is None:
            return []
        if not isinstance(items, list):
            raise Malformed(key)
        return [convert(_object(item)) for item in items]
    except Malformed:
        return _ABSENT


# -- the objects -------------------------------------------------------------------------------

def _is_cpu_utilization(metric: dict) -> bool:
    resource = metric.get("resource")
    return (metric.get("type") == "Resource" and isinstance(resource, dict)
            and resource.get("name") == "cpu"
            and _dict(resource.get("target")).get("averageUtilization") is not None)


def _metadata_without_round_trip(meta: dict) -> dict:
    """``DropRoundTripHorizontalPodAutoscalerAnnotations`` on a copy of ``meta``."""
    meta = dict(meta)
    annotations = _dict(meta.get("annotations"))
    if any(key in annotations for key in ROUND_TRIP_ANNOTATIONS):
        annotations = {k: v for k, v in annotations.items() if k not in ROUND_TRIP_ANNOTATIONS}
        if annotations:
            meta["annotations"] = annotations
        else:
            meta.pop("annotations", None)
    return meta


def to_v1(hpa: dict) -> dict:
    """``Convert_autoscaling_HorizontalPodAutoscaler_To_v1_HorizontalPodAutoscaler`` of a
    v2 object (not modified)."""
    hpa = copy.deepcopy(hpa)
    spec, status = _dict(hpa.get("spec")), _dict(hpa.get("status"))
    meta = _metadata_without_round_trip(_dict(hpa.get("metadata")))
    metrics = [_dict(m) for m in _list(spec.get("metrics"))]
    out_spec = {"scaleTargetRef": _dict(spec.get("scaleTargetRef"))}
    _set(out_spec, "minReplicas", spec.get("minReplicas"))
    out_spec["maxReplicas"] = spec.get("maxReplicas") or 0
    for metric in metrics:
        resource = metric.get("resource")
        if (metric.get("type") == "Resource" and isinstance(resource, dict)
                and resource.get("name") == "cpu"):
            _set(out_spec, "targetCPUUtilizationPercentage",
                 _dict(resource.get("target")).get("averageUtilization"))
            break
    out_status = {}
    for key in ("observedGeneration", "lastScaleTime"):
        _set(out_status, key, status.get(key))
    out_status["currentReplicas"] = status.get("currentReplicas") or 0
    out_status["desiredReplicas"] = status.get("desiredReplicas") or 0
    current_metrics = [_dict(m) for m in _list(status.get("currentMetrics"))]
    for metric in current_metrics:
        resource = metric.get("resource")
        if (metric.get("type") == "Resource" and isinstance(resource, dict)
                and resource.get("name") == "cpu"):
            _set(out_status, "currentCPUUtilizationPercentage",
                 _dict(resource.get("current")).get("averageUtilization"))

    added = {}
    others = [metric_spec_to_v1(m) for m in metrics if not _is_cpu_utilization(m)]
    if others:
        added[METRIC_SPECS_ANNOTATION] = go_json(others)
    if current_metrics:
        added[METRIC_STATUSES_ANNOTATION] = go_json([metric_status_to_v1(m)
                                                     for m in current_metrics])
    conditions = [_dict(c) for c in _list(status.get("conditions"))]
    if conditions:
        added[CONDITIONS_ANNOTATION] = go_json([condition_to_v1(c) for c in conditions])
    if isinstance(spec.get("behavior"), dict):
        added[BEHAVIOR_ANNOTATION] = behavior_to_annotation(spec["behavior"])
    if added:
        meta["annotations"] = {**_dict(meta.get("annotations")), **added}
    out = {"kind": "HorizontalPodAutoscaler", "apiVersion": "autoscaling/v1", "metadata": meta,
           "spec": out_spec}
    if "status" in hpa:
        out["status"] = out_status
    return out


def to_v2(hpa: dict) -> dict:
    """``Convert_v1_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler`` of a
    v1 object (not modified), as the v2 object upstream stores."""
    hpa = copy.deepcopy(hpa)
    spec, status = _dict(hpa.get("spec")), _dict(hpa.get("status"))
    meta = _dict(hpa.get("metadata"))
    annotations = _dict(meta.get("annotations"))
    out_spec = {"scaleTargetRef": _dict(spec.get("scaleTargetRef"))}
    _set(out_spec, "minReplicas", spec.get("minReplicas"))
    out_spec["maxReplicas"] = spec.get("maxReplicas") or 0
    metrics = []
    if spec.get("targetCPUUtilizationPercentage") is not None:
        metrics = [_cpu_metric(spec["targetCPUUtilizationPercentage"])]
    others = _annotation_list(annotations, METRIC_SPECS_ANNOTATION, metric_spec_from_v1)
    if others is not _ABSENT:
        metrics = others + metrics[:1]
    if not metrics:
        # autoscaling/v1 formerly had an implicit default applied in the controller.
        metrics = [_cpu_metric(DEFAULT_CPU_UTILIZATION)]
    out_spec["metrics"] = metrics
    out_status = {}
    for key in ("observedGeneration", "lastScaleTime"):
        _set(out_status, key, status.get(key))
    _set(out_status, "currentReplicas", status.get("currentReplicas") or None)
    out_status["desiredReplicas"] = status.get("desiredReplicas") or 0
    current = None
    if status.get("currentCPUUtilizationPercentage") is not None:
        current = [{"type": "Resource", "resource": {
            "name": "cpu", "current": {
                "averageUtilization": status["currentCPUUtilizationPercentage"]}}}]
    current_metrics = _annotation_list(annotations, METRIC_STATUSES_ANNOTATION,
                                       metric_status_from_v1)
    if current_metrics is not _ABSENT:
        current = current_metrics
    out_status["currentMetrics"] = current
    conditions = _annotation_list(annotations, CONDITIONS_ANNOTATION, condition_from_v1)
    if conditions is not _ABSENT and conditions:
        out_status["conditions"] = conditions
    if BEHAVIOR_ANNOTATION in annotations:
        behavior = behavior_from_annotation(annotations[BEHAVIOR_ANNOTATION])
        _set(out_spec, "behavior", behavior)
    out = {"kind": "HorizontalPodAutoscaler", "apiVersion": "autoscaling/v2",
           "metadata": _metadata_without_round_trip(meta), "spec": out_spec}
    if "status" in hpa:
        out["status"] = out_status
    return out


def _cpu_metric(utilization) -> dict:
    return {"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": utilization}}}
