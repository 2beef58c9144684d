"""ValidatingAdmissionPolicies take effect, end to end with kubectl and the Python client:
params from a ConfigMap and from a custom resource, Deny / Warn / Audit, messageExpression,
variables, parameterNotFoundAction, namespaceObject, authorizer checks, failure policies,
match conditions, and the status controller's type checking."""

import json
import time

import pytest
import yaml

from kapiserver.testing import assert_status

ADMIN = dict(user="admin", groups=["system:masters"])
PROBE = "tests.support.probe_plugin"
API = "/apis/admissionregistration.k8s.io/v1"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    workdir = tmp_path_factory.mktemp("policies")
    audit_file = workdir / "audit.jsonl"
    process = KapiserverProcess(str(workdir / "server"), {"probe-audit-file": str(audit_file)},
                                plugins=[PROBE], workers=2).start(timeout=120)
    process.audit_file = audit_file
    yield process
    process.stop()


def apply(server, text: str) -> None:
    server.kubectl("apply", "-f", "-", input=text, check=True)


def namespace(server, name: str, **labels) -> None:
    response = server.request("POST", "/api/v1/namespaces", json={
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": name, "labels": labels}}, **ADMIN)
    assert response.status_code == 201, response.text


def configmap(name: str, **data) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
            "data": {k: str(v) for k, v in data.items()}}


def create(server, namespace_: str, obj: dict, **user):
    return server.request("POST", f"/api/v1/namespaces/{namespace_}/configmaps", json=obj,
                          **(user or ADMIN))


def warnings(response) -> list[str]:
    return [w.strip()[len('299 - "'):-1].replace('\\"', '"')
            for w in response.raw.headers.getlist("Warning")]


def audit_events(server, uri_part: str) -> list[dict]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if server.audit_file.exists():
            events = [json.loads(line) for line in server.audit_file.read_text().splitlines()]
            found = [e for e in events if uri_part in e["requestURI"] and e["verb"] == "create"
                     and e.get("stage") == "ResponseComplete"]
            if found:
                return found
        time.sleep(0.1)
    return []


MAX_KEYS = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: max-keys
spec:
  paramKind:
    apiVersion: v1
    kind: ConfigMap
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["configmaps"]
  variables:
  - name: keys
    expression: "has(object.data) ? size(object.data) : 0"
  - name: limit
    expression: "int(params.data.max)"
  validations:
  - expression: "variables.keys <= variables.limit"
    messageExpression: "'at most ' + string(variables.limit) + ' keys, not ' + string(variables.keys)"
    reason: Forbidden
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: max-keys-binding
spec:
  policyName: max-keys
  validationActions: [Deny]
  paramRef:
    name: limits
    namespace: vap-params
    parameterNotFoundAction: Deny
  matchResources:
    namespaceSelector:
      matchLabels:
        vap: max-keys
"""


def test_configmap_params_deny_and_allow(server):
    namespace(server, "vap-params")
    namespace(server, "vap-keys", vap="max-keys")
    apply(server, MAX_KEYS)
    # No params yet: parameterNotFoundAction Deny refuses (a configuration error, 422).
    response = create(server, "vap-keys", configmap("one", a=1))
    assert_status(response, 422, "Invalid",
                  'configmaps "one" is forbidden: ValidatingAdmissionPolicy \'max-keys\' with '
                  "binding 'max-keys-binding' denied request: failed to configure binding: no "
                  "params found for policy binding with `Deny` parameterNotFoundAction")
    assert create(server, "vap-params", configmap("limits", max=2)).status_code == 201
    assert create(server, "vap-keys", configmap("one", a=1)).status_code == 201
    response = create(server, "vap-keys", configmap("three", a=1, b=2, c=3))
    message = ("configmaps \"three\" is forbidden: ValidatingAdmissionPolicy 'max-keys' with "
               "binding 'max-keys-binding' denied request: at most 2 keys, not 3")
    body = assert_status(response, 403, "Forbidden", message,
                         {"name": "three", "kind": "configmaps",
                          "causes": [{"message": message.split(" is forbidden: ", 1)[1]}]})
    assert body["details"]["causes"][0]["message"].startswith("ValidatingAdmissionPolicy")
    # Namespaces the binding does not select are not concerned.
    assert create(server, "vap-params", configmap("many", a=1, b=2, c=3)).status_code == 201
    # kubectl shows the same refusal; the Python client raises it.
    result = server.kubectl("-n", "vap-keys", "create", "configmap", "cli",
                            "--from-literal=a=1", "--from-literal=b=2", "--from-literal=c=3")
    assert result.returncode == 1
    assert "ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys-binding' denied " \
           "request: at most 2 keys, not 3" in result.stderr
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    api = client.CoreV1Api(server.python_client())
    with pytest.raises(ApiException) as caught:
        api.create_namespaced_config_map("vap-keys", configmap("py", a=1, b=2, c=3))
    assert caught.value.status == 403
    assert json.loads(caught.value.body)["message"].endswith("at most 2 keys, not 3")
    # Updates are checked too; raising the limit admits.
    response = server.request("PATCH", "/api/v1/namespaces/vap-keys/configmaps/one",
                              data=json.dumps({"data": {"b": "2", "c": "3"}}),
                              headers={"Content-Type": "application/merge-patch+json"},
                              **ADMIN)
    assert response.status_code == 403, response.text
    server.kubectl("-n", "vap-params", "patch", "configmap", "limits", "--type=merge",
                   "-p", '{"data":{"max":"5"}}', check=True)
    assert create(server, "vap-keys", configmap("three", a=1, b=2, c=3)).status_code == 201
