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
    process = KapiserverProcess(str(workdir / "server"), {"probe-audit-file": str(audit_file),
                                                          "authorization-mode": ["RBAC"]},
                                plugins=[PROBE], workers=2).start(timeout=120)
    process.audit_file = audit_file
    yield process
    process.stop()


def apply(server, text: str) -> None:
    result = server.kubectl("apply", "-f", "-", input=text)
    assert result.returncode == 0, result.stderr


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


CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: sizelimits.policy.example.com
spec:
  group: policy.example.com
  scope: Cluster
  names: {plural: sizelimits, singular: sizelimit, kind: SizeLimit}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              maxSize: {type: integer}
"""
CR_POLICY = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: size-limit
spec:
  paramKind:
    apiVersion: policy.example.com/v1
    kind: SizeLimit
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["configmaps"]
  validations:
  - expression: "!has(object.data) || !('size' in object.data) || int(object.data.size) <= params.spec.maxSize"
    messageExpression: "'size ' + object.data.size + ' is over ' + string(params.spec.maxSize) + ' (' + params.metadata.name + ')'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: size-limit-gold
spec:
  policyName: size-limit
  validationActions: [Deny]
  paramRef:
    selector:
      matchLabels: {tier: gold}
    parameterNotFoundAction: Allow
  matchResources:
    namespaceSelector:
      matchLabels: {vap: size}
"""


def size_limit(name: str, max_size: int, **labels) -> str:
    return yaml.safe_dump({"apiVersion": "policy.example.com/v1", "kind": "SizeLimit",
                           "metadata": {"name": name, "labels": labels},
                           "spec": {"maxSize": max_size}})


def test_custom_resource_params_chosen_by_selector(server):
    namespace(server, "vap-size", vap="size")
    apply(server, CR_POLICY)
    # The paramKind is not served yet: a configuration error of the policy (Fail).
    response = create(server, "vap-size", configmap("early", size=1))
    assert_status(response, 422, "Invalid",
                  "configmaps \"early\" is forbidden: ValidatingAdmissionPolicy 'size-limit' "
                  "denied request: failed to configure policy: failed to find resource "
                  "referenced by paramKind: 'policy.example.com/v1, Kind=SizeLimit'")
    apply(server, CRD)
    server.kubectl("wait", "--for=condition=Established", "--timeout=30s",
                   "crd/sizelimits.policy.example.com", check=True)
    # No param matches the selector: parameterNotFoundAction Allow admits.
    assert create(server, "vap-size", configmap("none-yet", size=100)).status_code == 201
    apply(server, size_limit("gold-10", 10, tier="gold"))
    apply(server, size_limit("silver-1", 1, tier="silver"))
    assert create(server, "vap-size", configmap("small", size=5)).status_code == 201
    response = create(server, "vap-size", configmap("large", size=20))
    assert_status(response, 422, "Invalid",
                  "configmaps \"large\" is forbidden: ValidatingAdmissionPolicy 'size-limit' "
                  "with binding 'size-limit-gold' denied request: size 20 is over 10 (gold-10)")
    # Every selected param is evaluated: the stricter one refuses.
    apply(server, size_limit("gold-3", 3, tier="gold"))
    response = create(server, "vap-size", configmap("medium", size=5))
    assert response.status_code == 422
    assert response.json()["message"].endswith("size 5 is over 3 (gold-3)")


WARN_AUDIT = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: team-label
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["configmaps"]
  validations:
  - expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
    message: a team label is required
  auditAnnotations:
  - key: team
    valueExpression: "has(object.metadata.labels) && 'team' in object.metadata.labels ? string(object.metadata.labels['team']) : null"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: team-label-warn
spec:
  policyName: team-label
  validationActions: [Warn, Audit]
  matchResources:
    namespaceSelector:
      matchLabels: {vap: warn}
"""


def test_warn_and_audit_actions(server):
    namespace(server, "vap-warn", vap="warn")
    apply(server, WARN_AUDIT)
    response = create(server, "vap-warn", configmap("unlabelled", a=1))
    assert response.status_code == 201, response.text
    text = ("Validation failed for ValidatingAdmissionPolicy 'team-label' with binding "
            "'team-label-warn': a team label is required")
    assert warnings(response) == [text]
    (event,) = audit_events(server, "/namespaces/vap-warn/configmaps?")  or \
        audit_events(server, "/namespaces/vap-warn/configmaps")[:1]
    failure = json.loads(event["annotations"]["validation.policy.admission.k8s.io/"
                                              "validation_failure"])
    assert failure == [{"message": "a team label is required", "policy": "team-label",
                        "binding": "team-label-warn", "expressionIndex": 0,
                        "validationActions": ["Warn", "Audit"]}]
    assert "team-label/team" not in event["annotations"]
    # kubectl prints the warning; a labelled object passes and is annotated.
    result = server.kubectl("-n", "vap-warn", "create", "configmap", "cli", check=True)
    assert f"Warning: {text}" in result.stderr
    labelled = configmap("labelled", a=1)
    labelled["metadata"]["labels"] = {"team": "blue"}
    response = create(server, "vap-warn", labelled)
    assert response.status_code == 201 and not warnings(response)
    events = [e for e in audit_events(server, "/namespaces/vap-warn/configmaps")
              if e.get("objectRef", {}).get("name") == "labelled"
              or "team-label/team" in e.get("annotations", {})]
    assert events and events[-1]["annotations"]["team-label/team"] == "blue"


GUARDS = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: guards
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["configmaps"]
  matchConditions:
  - name: guarded-only
    expression: "object.metadata.name.startsWith('guarded-')"
  validations:
  - expression: "!has(namespaceObject.metadata.labels) || !('frozen' in namespaceObject.metadata.labels)"
    message: the namespace is frozen
  - expression: "authorizer.group('').resource('secrets').namespace(request.namespace).check('list').allowed()"
    messageExpression: "request.userInfo.username + ' may not list secrets'"
    reason: Forbidden
  - expression: "authorizer.requestResource.check('create').allowed()"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: guards
spec:
  policyName: guards
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels: {vap: guards}
"""
CAROL_RBAC = """
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: configmap-writer, namespace: vap-guards}
rules:
- {apiGroups: [""], resources: [configmaps], verbs: [create, get, list]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: carol, namespace: vap-guards}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: configmap-writer}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: carol}
"""


def test_match_conditions_namespace_object_and_authorizer(server):
    namespace(server, "vap-guards", vap="guards")
    apply(server, GUARDS)
    apply(server, CAROL_RBAC)
    carol = dict(user="carol", groups=["developers"])
    # Not guarded: the match condition is false, the policy does not apply.
    assert create(server, "vap-guards", configmap("free"), **carol).status_code == 201
    # Guarded: carol may create configmaps but not list secrets.
    response = create(server, "vap-guards", configmap("guarded-a"), **carol)
    assert_status(response, 403, "Forbidden",
                  "configmaps \"guarded-a\" is forbidden: ValidatingAdmissionPolicy 'guards' "
                  "with binding 'guards' denied request: carol may not list secrets")
    assert create(server, "vap-guards", configmap("guarded-b")).status_code == 201
    # namespaceObject: freezing the namespace refuses everyone.
    server.kubectl("label", "namespace", "vap-guards", "frozen=yes", check=True)
    response = create(server, "vap-guards", configmap("guarded-c"))
    assert_status(response, 422, "Invalid",
                  "configmaps \"guarded-c\" is forbidden: ValidatingAdmissionPolicy 'guards' "
                  "with binding 'guards' denied request: the namespace is frozen")


FAILING = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: failing-{label}
spec:
  failurePolicy: {policy}
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["configmaps"]
  validations:
  - expression: "object.data.missing == 'x'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: failing-{label}
spec:
  policyName: failing-{label}
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels: {{vap: failing-{label}}}
"""


def test_failure_policies(server):
    namespace(server, "vap-fail", vap="failing-fail")
    namespace(server, "vap-ignore", vap="failing-ignore")
    apply(server, FAILING.format(policy="Fail", label="fail"))
    apply(server, FAILING.format(policy="Ignore", label="ignore"))
    response = create(server, "vap-fail", configmap("broken", a=1))
    assert_status(response, 422, "Invalid",
                  "configmaps \"broken\" is forbidden: ValidatingAdmissionPolicy 'failing-fail' "
                  "with binding 'failing-fail' denied request: expression "
                  "'object.data.missing == 'x'' resulted in error: no such key: missing")
    assert create(server, "vap-ignore", configmap("broken", a=1)).status_code == 201
    # A request the policy does not match is never evaluated.
    namespace(server, "vap-unbound")
    assert create(server, "vap-unbound", configmap("unbound", a=1)).status_code == 201


TYPO = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: replicas-typo
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <= 5"
  - expression: "object.spec.replicaz <= 5"
    messageExpression: "'too many: ' + string(object.spec.replicas)"
"""


def wait_for_status(server, name: str, generation: int) -> dict:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        policy = server.get(f"{API}/validatingadmissionpolicies/{name}", **ADMIN).json()
        if (policy.get("status") or {}).get("observedGeneration") == generation:
            return policy["status"]
        time.sleep(0.2)
    raise AssertionError(f"policy {name} status not written: {policy}")


def test_type_checking_status(server):
    apply(server, TYPO)
    status = wait_for_status(server, "replicas-typo", 1)
    assert status["typeChecking"] == {"expressionWarnings": [{
        "fieldRef": "spec.validations[1].expression",
        "warning": "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field "
                   "'replicaz'\n | object.spec.replicaz <= 5\n | ...........^\n"}]}
    # A policy that checks gets an empty typeChecking; a fixed spec clears the warning.
    assert wait_for_status(server, "max-keys", 1) == {"observedGeneration": 1,
                                                       "typeChecking": {}}
    fixed = TYPO.replace("replicaz", "replicas")
    apply(server, fixed)
    assert wait_for_status(server, "replicas-typo", 2) == {"observedGeneration": 2,
                                                           "typeChecking": {}}
    # kubectl shows the status like any other field.
    result = server.kubectl("get", "validatingadmissionpolicy", "replicas-typo",
                            "-o", "jsonpath={.status.observedGeneration}", check=True)
    assert result.stdout == "2"


def test_the_readme_example(server):
    """The README's policy section, run as written."""
    import pathlib
    import shlex

    readme = (pathlib.Path(__file__).parents[2] / "README.md").read_text()
    block = readme.split("### Admission policies (ValidatingAdmissionPolicy)", 1)[1]
    block = block.split("```sh\n", 1)[1].split("```", 1)[0]
    manifest = block.split("<<'EOF'\n", 1)[1].split("\nEOF\n", 1)[0]
    commands, expected = [], []
    for line in block.split("\nEOF\n", 1)[1].splitlines():
        if line.startswith("# "):
            expected.append(line[2:])
        elif line:
            commands += [shlex.split(part) for part in line.split(" && ")]
    apply(server, manifest)
    for command in commands[:-1]:
        assert command[0] == "kubectl"
        server.kubectl(*command[1:], check=True)
    result = server.kubectl(*commands[-1][1:])
    assert result.returncode == 1
    assert result.stderr.strip() == " ".join(expected)
