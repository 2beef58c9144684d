"""HorizontalPodAutoscalers: v2 defaults, ValidateHorizontalPodAutoscaler and its update
and status rules, and the table (kapiserver_plugins.autoscaling.horizontalpodautoscalers)."""

import copy
import json
import pathlib

import pytest

from kapiserver_plugins.autoscaling.horizontalpodautoscalers import (
    HPAS_V1, HPAS_V2, HorizontalPodAutoscalerStrategy, HorizontalPodAutoscalerV1Strategy,
    format_hpa_metrics)

KINDS = pathlib.Path("/work/shared/reference/wide/kinds")
REF = {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"}
V2 = HorizontalPodAutoscalerStrategy(HPAS_V2)
V1 = HorizontalPodAutoscalerV1Strategy(HPAS_V1, V2)


def created(strategy, body):
    obj = copy.deepcopy(body)
    obj["metadata"].setdefault("namespace", "ns")
    strategy.apply_defaults(obj)
    obj["metadata"].update(uid="u1", creationTimestamp="2026-01-01T00:00:00Z")
    strategy.prepare_for_create(obj)
    return obj


def hpa(**spec):
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "h1"},
            "spec": {"scaleTargetRef": copy.deepcopy(REF), "maxReplicas": 3, **spec}}


def texts(errors):
    return [error.error_text() for error in errors]


def test_create_fills_what_upstream_fills():
    path = KINDS / "horizontalpodautoscalers-create.json"
    if not path.exists():
        pytest.skip("reference transcripts not available")
    exchange = json.loads(path.read_text())
    obj = created(V2, exchange["request"]["body"])
    answer = exchange["response"]["body"]
    assert (obj["spec"], obj["status"]) == (answer["spec"], answer["status"])
    assert "generation" not in obj["metadata"]


def test_behavior_defaults_fill_unset_rules():
    obj = created(V2, hpa(behavior={"scaleUp": {"policies": [
        {"type": "Pods", "value": 2, "periodSeconds": 30}]}}))
    assert obj["spec"]["behavior"] == {
        "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                    "policies": [{"type": "Pods", "value": 2, "periodSeconds": 30}]},
        "scaleDown": {"selectPolicy": "Max",
                      "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}}


@pytest.mark.parametrize("spec, messages", [
    ({}, []),
    ({"minReplicas": 0, "maxReplicas": 0}, [
        "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1",
        "spec.maxReplicas: Invalid value: 0: must be greater than 0",
        "spec.metrics: Forbidden: must specify at least one Object or External metric to "
        "support scaling to zero replicas"]),
    ({"minReplicas": 4}, [
        "spec.maxReplicas: Invalid value: 3: must be greater than or equal to `minReplicas`"]),
    ({"scaleTargetRef": {"kind": "", "name": "a/b"}}, [
        "spec.scaleTargetRef.kind: Required value",
        "spec.scaleTargetRef.name: Invalid value: \"a/b\": may not contain '/'"]),
    ({"metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": 0}}}]}, [
        "spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be "
        "greater than 0"]),
    ({"metrics": [{"type": "Resource", "resource": {"name": "memory", "target": {
        "type": "AverageValue", "averageValue": "-1"}}}]}, [
        'spec.metrics[0].resource.target.averageValue: Invalid value: resource.Quantity{'
        'i:resource.int64Amount{value:-1, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}'
        ', s:"-1", Format:"DecimalSI"}: must be positive']),
    ({"metrics": [{"type": "Pods", "resource": {"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": 50}}}]}, [
        "spec.metrics[0].pods: Required value: must populate information for the given metric "
        "source"]),
    ({"metrics": [{"type": "Pods", "pods": {"metric": {"name": "q"}, "target": {
        "type": "AverageValue", "averageValue": "1"}}, "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": 50}}}]}, [
        "spec.metrics[0].resource: Forbidden: must populate the given metric source only"]),
    ({"metrics": [{"type": "Magic"}]}, [
        'spec.metrics[0].type: Unsupported value: "Magic": supported values: '
        '"ContainerResource", "External", "Object", "Pods", "Resource"',
        'spec.metrics[0].type: Unsupported value: "Magic": supported values: '
        '"ContainerResource", "External", "Object", "Pods", "Resource"']),
    ({"metrics": [{"type": "External", "external": {"metric": {"name": ""}, "target": {
        "type": "Value"}}}]}, [
        "spec.metrics[0].external.metric.name: Required value: must specify a metric name",
        "spec.metrics[0].external.target.averageValue: Required value: must set either a "
        "target value for metric or a per-pod target"]),
    ({"metrics": [{"type": "ContainerResource", "containerResource": {
        "name": "storage", "container": "App", "target": {"type": "Utilization",
                                                      "averageUtilization": 50}}}]}, [
        'spec.metrics[0].containerResource.name: Invalid value: storage: must be a standard '
        'resource for containers',
        'spec.metrics[0].containerResource.container: Invalid value: "App": a lowercase RFC '
        "1123 label must consist of lower case alphanumeric characters or '-', and must start "
        "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
        "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"]),
    ({"behavior": {"scaleDown": {"stabilizationWindowSeconds": 4000, "selectPolicy": "Any",
                                 "policies": [{"type": "Pods", "value": 0,
                                               "periodSeconds": 2000}]}}}, [
        "spec.behavior.scaleDown.stabilizationWindowSeconds: Invalid value: 4000: must be less "
        "than or equal to 3600",
        'spec.behavior.scaleDown.selectPolicy: Unsupported value: "Any": supported values: '
        '"Disabled", "Max", "Min"',
        "spec.behavior.scaleDown.policies[0].value: Invalid value: 0: must be greater than zero",
        "spec.behavior.scaleDown.policies[0].periodSeconds: Invalid value: 2000: must be less "
        "than or equal to 1800"]),
])
def test_validation(spec, messages):
    assert texts(V2.validate(created(V2, hpa(**spec)))) == messages


def test_v1_writes_are_validated_in_v2_terms():
    body = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "h1"}, "spec": {"scaleTargetRef": REF, "maxReplicas": 3,
                                                 "targetCPUUtilizationPercentage": 0}}
    assert texts(V1.validate(created(V1, body))) == [
        "spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be "
        "greater than 0"]


def test_updates_and_status():
    old = created(V2, hpa())
    old["metadata"]["resourceVersion"] = "2"
    new = copy.deepcopy(old)
    new["spec"]["maxReplicas"] = 10
    new["status"] = {"currentReplicas": 4}
    V2.prepare_for_update(new, old)
    assert new["status"] == old["status"]
    assert texts(V2.validate_update(new, old)) == []
    scaled_to_zero = copy.deepcopy(old)
    scaled_to_zero["spec"]["minReplicas"] = 0
    assert texts(V2.validate_update(scaled_to_zero, old)) == [
        "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1",
        "spec.metrics: Forbidden: must specify at least one Object or External metric to "
        "support scaling to zero replicas"]
    # An object already at zero (written before the gate went off) may stay there.
    assert texts(V2.validate_update(scaled_to_zero, scaled_to_zero)) == [
        "spec.metrics: Forbidden: must specify at least one Object or External metric to "
        "support scaling to zero replicas"]
    status = copy.deepcopy(old)
    status["spec"]["maxReplicas"] = 99
    status["status"] = {"currentReplicas": -1, "desiredReplicas": 2, "currentMetrics": None}
    V2.prepare_status_update(status, old)
    assert status["spec"] == old["spec"]
    assert texts(V2.validate_status_update(status, old)) == [
        "status.currentReplicas: Invalid value: -1: must be greater than or equal to 0"]


@pytest.mark.parametrize("metrics, statuses, text", [
    ([], [], "<none>"),
    ([{"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": 80}}}], [], "cpu: <unknown>/80%"),
    ([{"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": 80}}}],
     [{"type": "Resource", "resource": {"name": "cpu", "current": {
         "averageUtilization": 42, "averageValue": "100m"}}}], "cpu: 42%/80%"),
    ([{"type": "Resource", "resource": {"name": "memory", "target": {
        "type": "AverageValue", "averageValue": "1Gi"}}}],
     [{"type": "Resource", "resource": {"name": "memory", "current": {
         "averageValue": "512Mi"}}}], "memory: 512Mi/1Gi"),
    ([{"type": "Pods", "pods": {"metric": {"name": "q"}, "target": {
        "type": "AverageValue", "averageValue": "1"}}}] * 3, [],
     "<unknown>/1, <unknown>/1 + 1 more..."),
    ([{"type": "External", "external": {"metric": {"name": "q"}, "target": {
        "type": "AverageValue", "averageValue": "30"}}},
      {"type": "Object", "object": {"metric": {"name": "q"}, "target": {
          "type": "Value", "value": "5"}}}],
     [{"type": "External", "external": {"current": {"value": "3"}}},
      {"type": "Object", "object": {"current": {"value": "7"}}}],
     "<unknown>/30 (avg), 7/5"),
])
def test_targets_column(metrics, statuses, text):
    assert format_hpa_metrics(metrics, statuses) == text


def test_table_cells_are_the_same_in_both_versions():
    obj = created(V2, hpa())
    cells = V2.table_cells(obj)
    assert cells[:6] == ["h1", "Deployment/web", "cpu: <unknown>/80%", "1", 3, 0]
    assert V1.table_cells(V1.from_storage(copy.deepcopy(obj))) == cells
    assert V1.table_columns() == V2.table_columns()
