"""HorizontalPodAutoscalers between autoscaling/v2 and autoscaling/v1, with the round-trip
annotations (kapiserver_plugins.autoscaling.conversion)."""

import json

from kapiserver_plugins.autoscaling import conversion
from kapiserver_plugins.autoscaling.horizontalpodautoscalers import (
    HPAS_V1, HPAS_V2, HorizontalPodAutoscalerStrategy, HorizontalPodAutoscalerV1Strategy)

REF = {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"}
V2 = HorizontalPodAutoscalerStrategy(HPAS_V2)
V1 = HorizontalPodAutoscalerV1Strategy(HPAS_V1, V2)


def v2(spec=None, status=None, annotations=None):
    meta = {"name": "h", "namespace": "ns"}
    if annotations:
        meta["annotations"] = annotations
    obj = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": meta,
           "spec": {"scaleTargetRef": REF, "minReplicas": 1, "maxReplicas": 5, **(spec or {})},
           "status": {"desiredReplicas": 0, "currentMetrics": None, **(status or {})}}
    V2.normalize(obj)
    return obj


def cpu(utilization):
    return {"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": utilization}}}


PODS = {"type": "Pods", "pods": {"metric": {"name": "qps", "selector": {
    "matchLabels": {"z": "1", "a": "2"}}}, "target": {"type": "AverageValue",
                                                     "averageValue": "1500m"}}}
OBJECT = {"type": "Object", "object": {
    "describedObject": {"kind": "Ingress", "name": "main", "apiVersion": "networking.k8s.io/v1"},
    "target": {"type": "Value", "value": "10k"}, "metric": {"name": "hits"}}}
EXTERNAL = {"type": "External", "external": {"metric": {"name": "queue"}, "target": {
    "type": "AverageValue", "averageValue": "30"}}}
CONTAINER = {"type": "ContainerResource", "containerResource": {
    "name": "memory", "container": "app", "target": {"type": "AverageValue",
                                                      "averageValue": "512Mi"}}}


def test_cpu_utilization_is_v1s_own_field():
    out = conversion.to_v1(v2({"metrics": [cpu(60)]}))
    assert out["spec"] == {"scaleTargetRef": REF, "minReplicas": 1, "maxReplicas": 5,
                           "targetCPUUtilizationPercentage": 60}
    assert "annotations" not in out["metadata"]
    assert out["status"] == {"currentReplicas": 0, "desiredReplicas": 0}


def test_other_metrics_travel_in_an_annotation_written_as_go_writes_it():
    out = conversion.to_v1(v2({"metrics": [PODS, cpu(70), OBJECT, EXTERNAL, CONTAINER]}))
    assert out["spec"]["targetCPUUtilizationPercentage"] == 70
    assert out["metadata"]["annotations"] == {conversion.METRIC_SPECS_ANNOTATION: (
        '[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"1500m","selector":'
        '{"matchLabels":{"a":"2","z":"1"}}}},'
        '{"type":"Object","object":{"target":{"kind":"Ingress","name":"main","apiVersion":'
        '"networking.k8s.io/v1"},"metricName":"hits","targetValue":"10k"}},'
        '{"type":"External","external":{"metricName":"queue","targetAverageValue":"30"}},'
        '{"type":"ContainerResource","containerResource":{"name":"memory",'
        '"targetAverageValue":"512Mi","container":"app"}}]')}


def test_v1_round_trips_every_metric_and_the_cpu_target_comes_last():
    original = v2({"metrics": [PODS, cpu(70), OBJECT, EXTERNAL, CONTAINER]})
    back = conversion.to_v2(conversion.to_v1(original))
    V2.normalize(back)
    assert back["spec"]["metrics"] == [PODS, OBJECT, EXTERNAL, CONTAINER, cpu(70)]
    assert "annotations" not in back["metadata"]


def test_status_conditions_and_behavior_round_trip():
    status = {"currentReplicas": 3, "desiredReplicas": 4, "currentMetrics": [
        {"type": "Resource", "resource": {"name": "cpu", "current": {
            "averageUtilization": 55, "averageValue": "200m"}}}],
        "conditions": [{"type": "AbleToScale", "status": "True",
                        "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "Ready"}]}
    behavior = {"scaleDown": {"stabilizationWindowSeconds": 300, "selectPolicy": "Min",
                              "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}}
    original = v2({"metrics": [cpu(80)], "behavior": behavior}, status)
    out = conversion.to_v1(original)
    assert out["status"] == {"currentReplicas": 3, "desiredReplicas": 4,
                             "currentCPUUtilizationPercentage": 55}
    annotations = out["metadata"]["annotations"]
    assert annotations[conversion.BEHAVIOR_ANNOTATION] == (
        '{"ScaleUp":null,"ScaleDown":{"StabilizationWindowSeconds":300,"SelectPolicy":"Min",'
        '"Policies":[{"Type":"Pods","Value":1,"PeriodSeconds":60}]}}')
    assert json.loads(annotations[conversion.METRIC_STATUSES_ANNOTATION]) == [
        {"type": "Resource", "resource": {"name": "cpu", "currentAverageUtilization": 55,
                                          "currentAverageValue": "200m"}}]
    assert json.loads(annotations[conversion.CONDITIONS_ANNOTATION]) == [
        {"type": "AbleToScale", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z",
         "reason": "Ready"}]
    back = conversion.to_v2(out)
    V2.normalize(back)
    assert back["spec"] == original["spec"] and back["status"] == original["status"]
    assert "annotations" not in back["metadata"]


def test_v1_without_metrics_gets_the_implicit_cpu_target():
    out = conversion.to_v2({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
                            "metadata": {"name": "h"}, "spec": {"scaleTargetRef": REF,
                                                                "maxReplicas": 2}})
    assert out["spec"]["metrics"] == [cpu(80)]


def test_malformed_annotations_are_ignored_and_dropped():
    annotations = {conversion.METRIC_SPECS_ANNOTATION: "[{",
                   conversion.BEHAVIOR_ANNOTATION: '{"ScaleUp": 5}',
                   conversion.CONDITIONS_ANNOTATION: "{}", "keep": "me"}
    out = conversion.to_v2({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
                            "metadata": {"name": "h", "annotations": annotations},
                            "spec": {"scaleTargetRef": REF, "maxReplicas": 2,
                                     "targetCPUUtilizationPercentage": 40}})
    assert out["spec"]["metrics"] == [cpu(40)]
    assert "behavior" not in out["spec"]
    assert out["metadata"]["annotations"] == {"keep": "me"}


def test_annotations_are_read_as_go_reads_json_keys():
    annotations = {conversion.BEHAVIOR_ANNOTATION: '{"scaleup":{"stabilizationwindowseconds":5}}',
                   conversion.METRIC_SPECS_ANNOTATION:
                   '[{"Type":"Pods","Pods":{"MetricName":"qps","TargetAverageValue":"2"}}]'}
    out = conversion.to_v2({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
                            "metadata": {"name": "h", "annotations": annotations},
                            "spec": {"scaleTargetRef": REF, "maxReplicas": 2}})
    assert out["spec"]["behavior"] == {"scaleUp": {"stabilizationWindowSeconds": 5}}
    assert out["spec"]["metrics"] == [{"type": "Pods", "pods": {
        "metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "2"}}}]


def test_a_v1_write_is_stored_as_v2_and_read_back_as_v1():
    body = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "h", "namespace": "ns", "annotations": {
                conversion.BEHAVIOR_ANNOTATION: '{"ScaleUp":{"StabilizationWindowSeconds":30}}'}},
            "spec": {"scaleTargetRef": REF, "maxReplicas": 3},
            "status": {"currentReplicas": 9}}
    V1.apply_defaults(body)
    V1.prepare_for_create(body)
    assert body["spec"] == {"scaleTargetRef": REF, "minReplicas": 1, "maxReplicas": 3,
                            "targetCPUUtilizationPercentage": 80}
    assert body["status"] == {"currentReplicas": 0, "desiredReplicas": 0}
    # The behavior comes back with upstream's defaults for the rules left unset.
    assert json.loads(body["metadata"]["annotations"][conversion.BEHAVIOR_ANNOTATION]) == {
        "ScaleUp": {"StabilizationWindowSeconds": 30, "SelectPolicy": "Max", "Policies": [
            {"Type": "Pods", "Value": 4, "PeriodSeconds": 15},
            {"Type": "Percent", "Value": 100, "PeriodSeconds": 15}]},
        "ScaleDown": {"StabilizationWindowSeconds": None, "SelectPolicy": "Max", "Policies": [
            {"Type": "Percent", "Value": 100, "PeriodSeconds": 15}]}}
    stored = V1.to_storage(body)
    assert stored["apiVersion"] == "autoscaling/v2"
    assert stored["spec"]["behavior"]["scaleUp"]["stabilizationWindowSeconds"] == 30
    assert V1.from_storage(stored)["spec"] == body["spec"]
