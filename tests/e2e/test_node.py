"""node.k8s.io/v1 RuntimeClasses end to end, with kubectl and the Python client."""

import pytest

from kapiserver.testing import assert_status

ADMIN = dict(user="admin", groups=["system:masters"])
PATH = "/apis/node.k8s.io/v1/runtimeclasses"
RUNTIME_CLASS_YAML = """
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata:
  name: gvisor
handler: runsc
overhead:
  podFixed:
    memory: 120Mi
    cpu: 250m
scheduling:
  nodeSelector:
    runtime: gvisor
  tolerations:
  - key: runtime
    operator: Equal
    value: gvisor
    effect: NoSchedule
"""


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    server = KapiserverProcess(str(tmp_path_factory.mktemp("node")), workers=1).start()
    yield server
    server.stop()


def test_kubectl_applies_and_lists_runtime_classes(api):
    api.kubectl("apply", "-f", "-", input=RUNTIME_CLASS_YAML, check=True)
    rows = api.kubectl("get", "runtimeclass", check=True).stdout.splitlines()
    assert rows[0].split() == ["NAME", "HANDLER", "AGE"]
    assert rows[1].split()[:2] == ["gvisor", "runsc"]
    stored = api.get(f"{PATH}/gvisor", **ADMIN).json()
    assert stored["overhead"] == {"podFixed": {"cpu": "250m", "memory": "120Mi"}}
    assert "generation" not in stored["metadata"]
    api.kubectl("apply", "-f", "-", input=RUNTIME_CLASS_YAML.replace("120Mi", "200Mi"),
                check=True)
    assert api.get(f"{PATH}/gvisor", **ADMIN).json()["overhead"]["podFixed"]["memory"] == \
        "200Mi"
    changed = api.kubectl("apply", "-f", "-", input=RUNTIME_CLASS_YAML.replace("runsc", "kata"))
    assert changed.returncode != 0
    assert 'handler: Invalid value: "kata": field is immutable' in changed.stderr


def test_python_client_and_update_rules(api):
    from kubernetes import client

    node = client.NodeV1Api(api.python_client())
    node.create_runtime_class({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                               "metadata": {"name": "runc"}, "handler": "runc"})
    assert node.read_runtime_class("runc").handler == "runc"
    body = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
            "metadata": {"name": "runc", "labels": {"a": "b"}}, "handler": "runc"}
    # Updates must say which version they replace; a PUT of a new name creates it.
    response = api.request("PUT", f"{PATH}/runc", json=body, **ADMIN)
    assert_status(response, 422, "Invalid")
    assert "metadata.resourceVersion" in response.json()["message"]
    created = api.request("PUT", f"{PATH}/crun", json={**body, "metadata": {"name": "crun"},
                                                       "handler": "crun"}, **ADMIN)
    assert created.status_code == 201, created.text
    response = api.request("POST", PATH, json={
        "apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "bad"},
        "handler": "Bad_Handler",
        "scheduling": {"tolerations": [{"key": "k", "operator": "Exists"},
                                       {"key": "k", "operator": "Exists"}]}}, **ADMIN)
    body = assert_status(response, 422, "Invalid")
    assert [c["field"] for c in body["details"]["causes"]] == ["handler",
                                                               "scheduling.tolerations[1]"]
