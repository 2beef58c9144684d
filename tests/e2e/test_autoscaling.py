"""autoscaling v2 and v1 HorizontalPodAutoscalers end to end: one object seen through
both versions, kubectl autoscale, the Table, status subresources, with the real kubectl
and the official Python client."""

import json

import pytest

from kapiserver.testing import assert_status

ADMIN = dict(user="admin", groups=["system:masters"])
NS = "autoscaling-e2e"
V1 = f"/apis/autoscaling/v1/namespaces/{NS}/horizontalpodautoscalers"
V2 = f"/apis/autoscaling/v2/namespaces/{NS}/horizontalpodautoscalers"
REF = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
METRICS_ANNOTATION = "autoscaling.alpha.kubernetes.io/metrics"


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    server = KapiserverProcess(str(tmp_path_factory.mktemp("autoscaling")), workers=2).start()
    server.request("POST", "/api/v1/namespaces", json={
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}, **ADMIN)
    yield server
    server.stop()


def test_discovery_prefers_v2(api):
    group = api.get("/apis/autoscaling", **ADMIN).json()
    assert [v["version"] for v in group["versions"]] == ["v2", "v1"]
    assert group["preferredVersion"]["version"] == "v2"
    for version in ("v1", "v2"):
        resources = {r["name"]: r for r in
                     api.get(f"/apis/autoscaling/{version}", **ADMIN).json()["resources"]}
        assert resources["horizontalpodautoscalers"]["shortNames"] == ["hpa"]
        assert resources["horizontalpodautoscalers"]["storageVersionHash"] == "qwQve8ut294="
        assert "horizontalpodautoscalers/status" in resources


def test_a_v2_object_seen_through_v1(api):
    body = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "both"},
            "spec": {"scaleTargetRef": REF, "maxReplicas": 5, "metrics": [
                {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {
                    "type": "AverageValue", "averageValue": "10"}}},
                {"type": "Resource", "resource": {"name": "cpu", "target": {
                    "type": "Utilization", "averageUtilization": 60}}}]}}
    made = api.request("POST", V2, json=body, **ADMIN)
    assert made.status_code == 201, made.text
    assert made.json()["spec"]["minReplicas"] == 1
    v1 = api.get(f"{V1}/both", **ADMIN).json()
    assert v1["apiVersion"] == "autoscaling/v1"
    assert v1["spec"] == {"scaleTargetRef": REF, "minReplicas": 1, "maxReplicas": 5,
                          "targetCPUUtilizationPercentage": 60}
    assert json.loads(v1["metadata"]["annotations"][METRICS_ANNOTATION]) == [
        {"type": "Pods", "pods": {"metricName": "qps", "targetAverageValue": "10"}}]
    assert v1["status"] == {"currentReplicas": 0, "desiredReplicas": 0}
    # A v1 client changes the CPU target; the other metric survives in the v2 object.
    v1["spec"]["targetCPUUtilizationPercentage"] = 75
    assert api.request("PUT", f"{V1}/both", json=v1, **ADMIN).status_code == 200
    v2 = api.get(f"{V2}/both", **ADMIN).json()
    assert v2["spec"]["metrics"] == [body["spec"]["metrics"][0], {
        "type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": 75}}}]
    assert "annotations" not in v2["metadata"]
    listed = api.get(V1, **ADMIN).json()
    assert listed["kind"] == "HorizontalPodAutoscalerList"
    assert [i["spec"].get("targetCPUUtilizationPercentage") for i in listed["items"]] == [75]


def test_a_v1_object_gets_v2s_defaults(api):
    body = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "old-style"},
            "spec": {"scaleTargetRef": REF, "maxReplicas": 3}}
    made = api.request("POST", V1, json=body, **ADMIN).json()
    assert made["metadata"]["resourceVersion"] and made["metadata"]["uid"]
    assert made["spec"] == {"scaleTargetRef": REF, "minReplicas": 1, "maxReplicas": 3,
                            "targetCPUUtilizationPercentage": 80}
    v2 = api.get(f"{V2}/old-style", **ADMIN).json()
    assert v2["spec"]["metrics"] == [{"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": 80}}}]
    bad = dict(body, metadata={"name": "bad"},
               spec={"scaleTargetRef": REF, "maxReplicas": 0,
                     "targetCPUUtilizationPercentage": 0})
    assert_status(api.request("POST", V1, json=bad, **ADMIN), 422, "Invalid", (
        'HorizontalPodAutoscaler.autoscaling "bad" is invalid: [spec.maxReplicas: Invalid '
        "value: 0: must be greater than 0, spec.maxReplicas: Invalid value: 0: must be greater "
        "than or equal to `minReplicas`, spec.metrics[0].resource.target.averageUtilization: "
        "Invalid value: 0: must be greater than 0]"))


def test_status_through_both_versions(api):
    from kubernetes import client

    with api.python_client() as api_client:
        v2 = client.AutoscalingV2Api(api_client)
        v1 = client.AutoscalingV1Api(api_client)
        v2.create_namespaced_horizontal_pod_autoscaler(NS, client.V2HorizontalPodAutoscaler(
            metadata=client.V1ObjectMeta(name="py"),
            spec=client.V2HorizontalPodAutoscalerSpec(
                max_replicas=4, scale_target_ref=client.V2CrossVersionObjectReference(
                    api_version="apps/v1", kind="Deployment", name="web"))))
        status = v2.patch_namespaced_horizontal_pod_autoscaler_status("py", NS, {"status": {
            "currentReplicas": 2, "desiredReplicas": 3, "currentMetrics": [
                {"type": "Resource", "resource": {"name": "cpu", "current": {
                    "averageUtilization": 91, "averageValue": "300m"}}}],
            "conditions": [{"type": "AbleToScale", "status": "True", "reason": "SucceededRescale",
                            "lastTransitionTime": "2026-01-01T00:00:00Z"}]}})
        assert status.status.desired_replicas == 3
        old = v1.read_namespaced_horizontal_pod_autoscaler("py", NS)
        assert old.status.current_cpu_utilization_percentage == 91
        assert old.spec.target_cpu_utilization_percentage == 80
        assert set(old.metadata.annotations) == {
            "autoscaling.alpha.kubernetes.io/conditions",
            "autoscaling.alpha.kubernetes.io/current-metrics"}
        patched = v1.patch_namespaced_horizontal_pod_autoscaler_status("py", NS, {"status": {
            "currentReplicas": 3}})
        assert patched.status.current_replicas == 3
        again = v2.read_namespaced_horizontal_pod_autoscaler("py", NS)
        assert again.status.current_replicas == 3
        assert again.status.conditions[0].reason == "SucceededRescale"
        assert again.status.current_metrics[0].resource.current.average_value == "300m"
        with pytest.raises(client.ApiException) as refused:
            v1.patch_namespaced_horizontal_pod_autoscaler_status("py", NS, {"status": {
                "desiredReplicas": -1}})
        assert json.loads(refused.value.body)["message"] == (
            'HorizontalPodAutoscaler.autoscaling "py" is invalid: status.desiredReplicas: '
            "Invalid value: -1: must be greater than or equal to 0")
        names = [h.metadata.name for h in
                 v1.list_namespaced_horizontal_pod_autoscaler(NS).items]
        assert "py" in names
        v1.delete_namespaced_horizontal_pod_autoscaler("py", NS)
        assert "py" not in [h.metadata.name for h in
                            v2.list_namespaced_horizontal_pod_autoscaler(NS).items]


def test_kubectl_autoscale_and_get_hpa(api):
    api.kubectl("create", "deployment", "web", "-n", NS, "--image=nginx", check=True)
    out = api.kubectl("autoscale", "deployment", "web", "-n", NS, "--max=3", check=True)
    assert out.stdout.strip() == "horizontalpodautoscaler.autoscaling/web autoscaled"
    obj = json.loads(api.kubectl("get", "hpa", "web", "-n", NS, "-o", "json",
                                 check=True).stdout)
    assert obj["spec"]["scaleTargetRef"] == REF
    assert (obj["spec"]["minReplicas"], obj["spec"]["maxReplicas"]) == (1, 3)
    table = api.kubectl("get", "hpa", "web", "-n", NS, check=True).stdout.splitlines()
    assert table[0].split() == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS",
                                "REPLICAS", "AGE"]
    assert table[1].split()[:7] == ["web", "Deployment/web", "cpu:", "<unknown>/80%", "1", "3",
                                    "0"]
    v1_table = api.kubectl("get", "hpa.v1.autoscaling", "web", "-n", NS, "--no-headers",
                           check=True).stdout
    assert v1_table.split()[:7] == table[1].split()[:7]
