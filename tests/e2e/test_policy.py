"""policy/v1 PodDisruptionBudgets end to end, with the real kubectl and the official Python
client: creation, validation as kube-apiserver 1.32 words it, status and the Table."""

import json

import pytest

from kapiserver.testing import assert_status

ADMIN = dict(user="admin", groups=["system:masters"])
NS = "policy-e2e"
PDBS = f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets"


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    server = KapiserverProcess(str(tmp_path_factory.mktemp("policy")), workers=1).start()
    server.request("POST", "/api/v1/namespaces", json={
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}, **ADMIN)
    yield server
    server.stop()


def test_discovery(api):
    resources = {r["name"]: r for r in api.get("/apis/policy/v1", **ADMIN).json()["resources"]}
    assert resources["poddisruptionbudgets"]["shortNames"] == ["pdb"]
    assert resources["poddisruptionbudgets/status"]["verbs"] == ["get", "patch", "update"]


def test_kubectl_creates_and_lists_budgets(api):
    out = api.kubectl("create", "pdb", "web", "-n", NS, "--selector=app=web",
                      "--min-available=1", check=True)
    assert out.stdout.strip() == "poddisruptionbudget.policy/web created"
    api.kubectl("create", "pdb", "db", "-n", NS, "--selector=app=db", "--max-unavailable=25%",
                check=True)
    obj = json.loads(api.kubectl("get", "pdb", "web", "-n", NS, "-o", "json",
                                 check=True).stdout)
    assert obj["spec"] == {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}
    assert obj["status"] == {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0,
                             "expectedPods": 0}
    assert obj["metadata"]["generation"] == 1
    table = api.kubectl("get", "pdb", "-n", NS, check=True).stdout.splitlines()
    assert table[0].split() == ["NAME", "MIN", "AVAILABLE", "MAX", "UNAVAILABLE", "ALLOWED",
                                "DISRUPTIONS", "AGE"]
    assert [line.split()[:4] for line in table[1:]] == [["db", "N/A", "25%", "0"],
                                                       ["web", "1", "N/A", "0"]]


def test_invalid_budgets(api):
    body = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "both"}, "spec": {"minAvailable": 1, "maxUnavailable": "200%"}}
    response = api.request("POST", PDBS, json=body, **ADMIN)
    spec_text = ("policy.PodDisruptionBudgetSpec{MinAvailable:(*intstr.IntOrString)"
                 "(0xc000010000), Selector:(*v1.LabelSelector)(nil), MaxUnavailable:"
                 "(*intstr.IntOrString)(0xc000010000), UnhealthyPodEvictionPolicy:"
                 "(*policy.UnhealthyPodEvictionPolicyType)(nil)}")
    assert_status(response, 422, "Invalid", (
        f'PodDisruptionBudget.policy "both" is invalid: [spec: Invalid value: {spec_text}: '
        "minAvailable and maxUnavailable cannot be both set, spec.maxUnavailable: Invalid "
        'value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"200%"}: must not be greater than '
        "100%]"))
    out = api.kubectl("create", "pdb", "much", "-n", NS, "--selector=app=x",
                      "--min-available=150%")
    assert out.returncode == 1
    assert out.stderr.strip() == (
        'error: failed to create poddisruptionbudgets: PodDisruptionBudget.policy "much" is '
        'invalid: spec.minAvailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, '
        'StrVal:"150%"}: must not be greater than 100%')


def test_budgets_with_the_python_client(api):
    from kubernetes import client

    with api.python_client() as api_client:
        policy = client.PolicyV1Api(api_client)
        made = policy.create_namespaced_pod_disruption_budget(NS, client.V1PodDisruptionBudget(
            metadata=client.V1ObjectMeta(name="py"),
            spec=client.V1PodDisruptionBudgetSpec(
                min_available="50%", unhealthy_pod_eviction_policy="AlwaysAllow",
                selector=client.V1LabelSelector(match_labels={"app": "py"}))))
        assert made.spec.min_available == "50%" and made.status.expected_pods == 0
        status = policy.patch_namespaced_pod_disruption_budget_status("py", NS, {"status": {
            "disruptionsAllowed": 1, "currentHealthy": 3, "desiredHealthy": 2,
            "expectedPods": 3, "observedGeneration": 1,
            "conditions": [{"type": "DisruptionAllowed", "status": "True",
                            "reason": "SufficientPods",
                            "lastTransitionTime": "2026-01-01T00:00:00Z"}]}})
        assert status.status.disruptions_allowed == 1
        assert status.status.conditions[0].reason == "SufficientPods"
        changed = policy.patch_namespaced_pod_disruption_budget("py", NS, {
            "spec": {"minAvailable": 2}})
        assert changed.metadata.generation == 2 and changed.status.disruptions_allowed == 1
        # A strategic merge patch merges conditions by type: only the status is new.
        with pytest.raises(client.ApiException) as refused:
            policy.patch_namespaced_pod_disruption_budget_status("py", NS, {"status": {
                "conditions": [{"type": "DisruptionAllowed", "status": "Yes"}]}})
        assert refused.value.status == 422
        assert json.loads(refused.value.body)["details"]["causes"] == [{
            "reason": "FieldValueNotSupported", "field": "status.conditions[0].status",
            "message": 'Unsupported value: "Yes": supported values: "False", "True", "Unknown"'}]
        assert [p.metadata.name for p in
                policy.list_namespaced_pod_disruption_budget(NS).items] == ["db", "py", "web"]
        policy.delete_namespaced_pod_disruption_budget("py", NS)
