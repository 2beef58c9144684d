"""flowcontrol.apiserver.k8s.io/v1 FlowSchemas and PriorityLevelConfigurations end to end,
as objects, with kubectl and the Python client."""

import time

import pytest

from kapiserver.testing import assert_status

ADMIN = dict(user="admin", groups=["system:masters"])
API = "/apis/flowcontrol.apiserver.k8s.io/v1"
LEVEL_YAML = """
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata:
  name: batch
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 10
    limitResponse:
      type: Queue
      queuing:
        queues: 16
"""
SCHEMA_YAML = """
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata:
  name: {name}
spec:
  priorityLevelConfiguration:
    name: batch
  matchingPrecedence: {precedence}
  distinguisherMethod:
    type: ByUser
  rules:
  - subjects:
    - kind: ServiceAccount
      serviceAccount:
        namespace: batch
        name: "*"
    resourceRules:
    - verbs: ["*"]
      apiGroups: ["batch"]
      resources: ["jobs"]
      namespaces: ["*"]
"""


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    server = KapiserverProcess(str(tmp_path_factory.mktemp("flowcontrol")), workers=1).start()
    yield server
    server.stop()


def test_priority_levels(api):
    from kubernetes import client

    flowcontrol = client.FlowcontrolApiserverV1Api(api.python_client())
    api.kubectl("apply", "-f", "-", input=LEVEL_YAML, check=True)
    level = api.get(f"{API}/prioritylevelconfigurations/batch", **ADMIN).json()
    assert level["spec"]["limited"] == {"nominalConcurrencyShares": 10, "limitResponse": {
        "type": "Queue", "queuing": {"queues": 16, "handSize": 8, "queueLengthLimit": 50}},
        "lendablePercent": 0}
    assert level["metadata"]["generation"] == 1
    read = flowcontrol.read_priority_level_configuration("batch")
    assert read.spec.limited.limit_response.queuing.hand_size == 8
    rows = api.kubectl("get", "prioritylevelconfigurations", check=True).stdout.splitlines()
    assert rows[0].split() == ["NAME", "TYPE", "NOMINALCONCURRENCYSHARES", "QUEUES",
                               "HANDSIZE", "QUEUELENGTHLIMIT", "AGE"]
    assert [r.split()[:6] for r in rows[1:] if r.startswith("batch ")] == [
        ["batch", "Limited", "10", "16", "8", "50"]]
    response = api.request("PATCH", f"{API}/prioritylevelconfigurations/batch", json={
        "spec": {"limited": {"limitResponse": {"queuing": {"handSize": 17}}}}},
        headers={"Content-Type": "application/merge-patch+json"}, **ADMIN)
    assert_status(response, 422, "Invalid",
                  'PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io "batch" is invalid: '
                  "spec.limited.limitResponse.queuing.handSize: Invalid value: 17: should not "
                  "be greater than queues (16)")


def test_flow_schemas_list_in_matching_order(api):
    for name, precedence in (("late", 9000), ("early", 500), ("middle", 500)):
        api.kubectl("apply", "-f", "-", check=True,
                    input=SCHEMA_YAML.format(name=name, precedence=precedence))
    rows = api.kubectl("get", "flowschemas", check=True).stdout.splitlines()
    assert rows[0].split() == ["NAME", "PRIORITYLEVEL", "MATCHINGPRECEDENCE",
                               "DISTINGUISHERMETHOD", "AGE", "MISSINGPL"]
    mine = [r.split() for r in rows[1:] if r.split()[0] in ("late", "early", "middle")]
    assert [r[0] for r in mine] == ["early", "middle", "late"]
    assert mine[0][1:4] == ["batch", "500", "ByUser"]
    # The priority and fairness config consumer finds their level: MISSINGPL turns False.
    deadline = time.monotonic() + 10
    while mine[0][5] != "False" and time.monotonic() < deadline:
        time.sleep(0.1)
        mine = [r.split() for r in api.kubectl("get", "flowschemas", "early", check=True)
                .stdout.splitlines()[1:]]
    assert mine[0][5] == "False"


def test_status_is_written_through_its_subresource(api):
    from kubernetes import client

    flowcontrol = client.FlowcontrolApiserverV1Api(api.python_client())
    flowcontrol.patch_flow_schema_status("early", {"status": {"conditions": [
        {"type": "Dangling", "status": "False", "reason": "Found",
         "lastTransitionTime": "2026-01-01T00:00:00Z"}]},
        "metadata": {"labels": {"ignored": "yes"}}})
    schema = flowcontrol.read_flow_schema("early")
    assert schema.status.conditions[0].status == "False"
    assert not (schema.metadata.labels or {}).get("ignored")
    rows = {r.split()[0]: r.split() for r in
            api.kubectl("get", "flowschemas", check=True).stdout.splitlines()[1:]}
    assert rows["early"][-1] == "False"
    response = api.request("POST", f"{API}/flowschemas", json={
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
        "metadata": {"name": "sneaky"},
        "spec": {"priorityLevelConfiguration": {"name": "exempt"}, "matchingPrecedence": 1,
                 "rules": [{"subjects": [{"kind": "Group", "group": {"name": "devs"}}],
                            "nonResourceRules": [{"verbs": ["get"],
                                                  "nonResourceURLs": ["/healthz"]}]}]}},
        **ADMIN)
    assert_status(response, 422, "Invalid",
                  'FlowSchema.flowcontrol.apiserver.k8s.io "sneaky" is invalid: '
                  "spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' "
                  "may have matchingPrecedence 1")
