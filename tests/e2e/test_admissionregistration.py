"""admissionregistration.k8s.io/v1 end to end, as objects: webhook configurations,
ValidatingAdmissionPolicies (CEL compiled when written) and their bindings, with kubectl and
the Python client."""

import json
import pathlib

import pytest

from kapiserver.testing import assert_status

ADMIN = dict(user="admin", groups=["system:masters"])
API = "/apis/admissionregistration.k8s.io/v1"
KINDS = pathlib.Path("/work/shared/reference/wide/kinds")
POLICY_YAML = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: replica-limit
spec:
  paramKind:
    apiVersion: v1
    kind: ConfigMap
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  variables:
  - name: replicas
    expression: "object.spec.replicas"
  validations:
  - expression: "variables.replicas <= int(params.data.max)"
    messageExpression: "'at most ' + params.data.max + ' replicas'"
  auditAnnotations:
  - key: replicas
    valueExpression: "string(variables.replicas)"
"""
BINDING_YAML = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: replica-limit-test
spec:
  policyName: replica-limit
  validationActions: [Deny, Audit]
  paramRef:
    name: limits
    namespace: default
    parameterNotFoundAction: Deny
  matchResources:
    namespaceSelector:
      matchLabels:
        env: test
"""


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    server = KapiserverProcess(str(tmp_path_factory.mktemp("admissionregistration")),
                               workers=1).start()
    yield server
    server.stop()


def test_policies_and_bindings_through_kubectl(api):
    api.kubectl("apply", "-f", "-", input=POLICY_YAML, check=True)
    api.kubectl("apply", "-f", "-", input=BINDING_YAML, check=True)
    policy = api.get(f"{API}/validatingadmissionpolicies/replica-limit", **ADMIN).json()
    assert policy["spec"]["failurePolicy"] == "Fail"
    assert policy["spec"]["matchConstraints"]["matchPolicy"] == "Equivalent"
    assert policy["spec"]["matchConstraints"]["resourceRules"][0]["scope"] == "*"
    assert policy["metadata"]["generation"] == 1
    rows = api.kubectl("get", "validatingadmissionpolicies", check=True).stdout.splitlines()
    assert rows[0].split() == ["NAME", "VALIDATIONS", "PARAMKIND", "AGE"]
    assert rows[1].split()[:3] == ["replica-limit", "1", "v1/ConfigMap"]
    rows = api.kubectl("get", "validatingadmissionpolicybindings",
                       check=True).stdout.splitlines()
    assert rows[0].split() == ["NAME", "POLICYNAME", "PARAMREF", "AGE"]
    assert rows[1].split()[:3] == ["replica-limit-test", "replica-limit", "default/limits"]
    broken = POLICY_YAML.replace("variables.replicas <=", "variables.replica <=")
    result = api.kubectl("apply", "-f", "-", input=broken)
    assert result.returncode != 0
    assert "spec.validations[0].expression: Invalid value: " in result.stderr
    assert "undefined field 'replica'" in result.stderr


@pytest.mark.skipif(not KINDS.is_dir(), reason="reference transcripts absent")
def test_invalid_policy_as_upstream(api):
    exchange = json.loads((KINDS / "validatingadmissionpolicies-invalid.json").read_text())
    response = api.request("POST", f"{API}/validatingadmissionpolicies",
                           json=exchange["request"]["body"], **ADMIN)
    assert (response.status_code, response.json()) == (422, exchange["response"]["body"])


def test_policy_status(api):
    from kubernetes import client

    admission = client.AdmissionregistrationV1Api(api.python_client())
    admission.patch_validating_admission_policy_status("replica-limit", {"status": {
        "observedGeneration": 1,
        "typeChecking": {"expressionWarnings": [
            {"fieldRef": "spec.validations[0].expression", "warning": "params may be null"}]},
        "conditions": [{"type": "Ready", "status": "True", "reason": "Checked",
                        "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}})
    policy = admission.read_validating_admission_policy("replica-limit")
    assert policy.status.type_checking.expression_warnings[0].warning == "params may be null"
    assert policy.metadata.generation == 1
    response = api.request("PATCH", f"{API}/validatingadmissionpolicies/replica-limit/status",
                           json={"status": {"conditions": [{"type": "Ready"}]}},
                           headers={"Content-Type": "application/merge-patch+json"}, **ADMIN)
    body = assert_status(response, 422, "Invalid")
    assert [c["field"] for c in body["details"]["causes"]] == [
        "status.conditions[0].status", "status.conditions[0].lastTransitionTime",
        "status.conditions[0].reason"]


def test_webhook_configurations(api):
    from kubernetes import client

    admission = client.AdmissionregistrationV1Api(api.python_client())
    admission.create_mutating_webhook_configuration({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration", "metadata": {"name": "injector"},
        "webhooks": [{"name": "inject.example.com", "sideEffects": "None",
                      "admissionReviewVersions": ["v1"],
                      "clientConfig": {"service": {"namespace": "system", "name": "injector",
                                                   "path": "/mutate"}},
                      "rules": [{"operations": ["CREATE"], "apiGroups": [""],
                                 "apiVersions": ["v1"], "resources": ["pods"]}],
                      "matchConditions": [{"name": "not-system",
                                           "expression": "request.namespace != 'system'"}]}]})
    hook = admission.read_mutating_webhook_configuration("injector").webhooks[0]
    assert (hook.failure_policy, hook.match_policy, hook.timeout_seconds,
            hook.reinvocation_policy, hook.client_config.service.port,
            hook.rules[0].scope) == ("Fail", "Equivalent", 10, "Never", 443, "*")
    rows = api.kubectl("get", "mutatingwebhookconfigurations", check=True).stdout.splitlines()
    assert rows[0].split() == ["NAME", "WEBHOOKS", "AGE"]
    assert rows[1].split()[:2] == ["injector", "1"]
    admission.create_validating_webhook_configuration({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "checker"},
        "webhooks": [{"name": "check.example.com", "sideEffects": "NoneOnDryRun",
                      "admissionReviewVersions": ["v1", "v1beta1"],
                      "clientConfig": {"url": "https://hook.example.com/check"}}]})
    (listed,) = admission.list_validating_webhook_configuration().items
    assert listed.webhooks[0].timeout_seconds == 10 and listed.metadata.generation == 1
    binding = admission.read_validating_admission_policy_binding("replica-limit-test")
    assert binding.spec.match_resources.match_policy == "Equivalent"
    response = api.request("POST", f"{API}/validatingwebhookconfigurations", json={
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "bad"},
        "webhooks": [{"name": "check.example.com", "sideEffects": "Some",
                      "admissionReviewVersions": ["v1"],
                      "clientConfig": {"url": "https://user@hook.example.com/check"}}]},
        **ADMIN)
    assert_status(response, 422, "Invalid",
                  'ValidatingWebhookConfiguration.admissionregistration.k8s.io "bad" is '
                  'invalid: [webhooks[0].sideEffects: Unsupported value: "Some": supported '
                  'values: "None", "NoneOnDryRun", webhooks[0].clientConfig.url: Invalid '
                  'value: "user": user information is not permitted in the URL]')


def test_writers_must_be_able_to_read_the_params(tmp_path):
    from kapiserver.testing import KapiserverProcess

    server = KapiserverProcess(str(tmp_path / "rbac"), workers=1,
                               config={"authorization-mode": ["RBAC"]}).start()
    try:
        rbac = "/apis/rbac.authorization.k8s.io/v1"
        writer = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                  "metadata": {"name": "policy-writer"},
                  "rules": [{"apiGroups": ["admissionregistration.k8s.io"],
                             "resources": ["validatingadmissionpolicies",
                                           "validatingadmissionpolicybindings"],
                             "verbs": ["create", "get", "update"]}]}
        assert server.request("POST", f"{rbac}/clusterroles", json=writer,
                              **ADMIN).status_code == 201
        for role in ("policy-writer",):
            assert server.request("POST", f"{rbac}/clusterrolebindings", json={
                "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                "metadata": {"name": role},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                            "name": role},
                "subjects": [{"kind": "User", "name": "alice"}]}, **ADMIN).status_code == 201
        policy = {"apiVersion": "admissionregistration.k8s.io/v1",
                  "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "p"},
                  "spec": {"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                           "matchConstraints": {"resourceRules": [{
                               "apiGroups": [""], "apiVersions": ["v1"],
                               "operations": ["CREATE"], "resources": ["pods"]}]},
                           "validations": [{"expression": "params.data.x == 'y'"}]}}
        response = server.request("POST", f"{API}/validatingadmissionpolicies", json=policy,
                                  user="alice")
        body = assert_status(response, 422, "Invalid")
        (cause,) = body["details"]["causes"]
        assert cause["field"] == "spec.paramKind" and cause["reason"] == "FieldValueForbidden"
        assert cause["message"].startswith("Forbidden: user &{alice  [")
        assert cause["message"].endswith('must have "get" permission on all objects of the '
                                         "referenced paramKind (kind=ConfigMap, apiVersion=v1)")
        # Allowed to read config maps, alice may write it.
        reader = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                  "metadata": {"name": "cm-reader"},
                  "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]}
        server.request("POST", f"{rbac}/clusterroles", json=reader, **ADMIN)
        server.request("POST", f"{rbac}/clusterrolebindings", json={
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "cm-reader"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": "cm-reader"},
            "subjects": [{"kind": "User", "name": "alice"}]}, **ADMIN)
        response = server.request("POST", f"{API}/validatingadmissionpolicies", json=policy,
                                  user="alice")
        assert response.status_code == 201, response.text
        binding = {"apiVersion": "admissionregistration.k8s.io/v1",
                   "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "b"},
                   "spec": {"policyName": "p", "validationActions": ["Deny"],
                            "paramRef": {"name": "cfg", "namespace": "default",
                                         "parameterNotFoundAction": "Deny"}}}
        response = server.request("POST", f"{API}/validatingadmissionpolicybindings",
                                  json=binding, user="alice")
        assert response.status_code == 201, response.text
        orphan = {**binding, "metadata": {"name": "orphan"},
                  "spec": {**binding["spec"], "policyName": "missing"}}
        response = server.request("POST", f"{API}/validatingadmissionpolicybindings",
                                  json=orphan, user="alice")
        body = assert_status(response, 422, "Invalid")
        assert body["details"]["causes"][0]["field"] == "spec.paramRef"
        assert body["details"]["causes"][0]["message"].startswith(
            "Forbidden: unable to get policy missing to determine minimum required permissions "
            "and user &{alice  [")
    finally:
        server.stop()
