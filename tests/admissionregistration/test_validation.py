"""admissionregistration.k8s.io/v1: webhook configurations, ValidatingAdmissionPolicies and
their bindings: defaults, validation (CEL included) and Table cells."""

import json
import pathlib

import pytest

from kapiserver.apimachinery.field_errors import invalid_status
from kapiserver_plugins.admissionregistration.cel import BOOL, NULL, STRING, compile_expression
from kapiserver_plugins.admissionregistration.policies import (BINDINGS, POLICIES,
                                                               BindingStrategy, PolicyStrategy)
from kapiserver_plugins.admissionregistration.webhooks import (MUTATING, VALIDATING,
                                                               WebhookConfigurationStrategy)
from tests.support.kinds import create, stored, texts, update

KINDS = pathlib.Path("/work/shared/reference/wide/kinds")
MUTATING_HOOKS = WebhookConfigurationStrategy(MUTATING)
VALIDATING_HOOKS = WebhookConfigurationStrategy(VALIDATING)
POLICY = PolicyStrategy(POLICIES)
BINDING = BindingStrategy(BINDINGS)
RULE = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
        "resources": ["configmaps"]}


def webhook(**fields) -> dict:
    return {"name": "hook.example.com", "clientConfig": {"url": "https://hook.example.com/x"},
            "sideEffects": "None", "admissionReviewVersions": ["v1"], "rules": [dict(RULE)],
            **fields}


def configuration(kind="ValidatingWebhookConfiguration", *hooks) -> dict:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
            "metadata": {"name": "c"}, "webhooks": list(hooks) or [webhook()]}


def policy(**spec) -> dict:
    spec.setdefault("matchConstraints", {"resourceRules": [dict(RULE)]})
    spec.setdefault("validations", [{"expression": "object.metadata.name != 'x'"}])
    return {"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "p"}, "spec": spec}


def binding(**spec) -> dict:
    spec.setdefault("policyName", "p")
    spec.setdefault("validationActions", ["Deny"])
    return {"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "b"},
            "spec": spec}


# -- webhooks -------------------------------------------------------------------------------------

def test_webhook_defaults():
    obj, errors = create(MUTATING_HOOKS, configuration(
        "MutatingWebhookConfiguration",
        webhook(clientConfig={"service": {"namespace": "ns", "name": "svc"}})))
    assert errors == []
    hook = obj["webhooks"][0]
    assert (hook["failurePolicy"], hook["matchPolicy"], hook["namespaceSelector"],
            hook["objectSelector"], hook["timeoutSeconds"], hook["reinvocationPolicy"]) == \
        ("Fail", "Equivalent", {}, {}, 10, "Never")
    assert hook["rules"][0]["scope"] == "*"
    assert hook["clientConfig"]["service"]["port"] == 443
    assert obj["metadata"]["generation"] == 1
    validating = create(VALIDATING_HOOKS, configuration())[0]["webhooks"][0]
    assert "reinvocationPolicy" not in validating


def test_webhook_validation():
    _, errors = create(VALIDATING_HOOKS, configuration(
        "ValidatingWebhookConfiguration",
        webhook(name="hook", sideEffects="Some", timeoutSeconds=31,
                admissionReviewVersions=["v2", "v2"],
                clientConfig={"url": "http://hook.example.com?x=1"},
                rules=[{"operations": ["*", "FLY"], "apiGroups": [], "apiVersions": ["*", "v1"],
                        "resources": ["*", "pods", "*/*"], "scope": "World"}],
                matchConditions=[{"name": "a", "expression": "object.("}])))
    at = "webhooks[0]"
    assert texts(errors)[:5] == [
        f'{at}.name: Invalid value: "hook": should be a domain with at least three segments '
        "separated by dots",
        f"{at}.rules[0].operations: Invalid value: []admissionregistration.OperationType{{"
        "\"*\", \"FLY\"}: if '*' is present, must not specify other operations",
        f'{at}.rules[0].operations[1]: Unsupported value: "FLY": supported values: "*", '
        '"CONNECT", "CREATE", "DELETE", "UPDATE"',
        f"{at}.rules[0].apiGroups: Required value",
        f"{at}.rules[0].apiVersions: Invalid value: []string{{\"*\", \"v1\"}}: if '*' is "
        "present, must not specify other API versions"]
    rest = texts(errors)[5:]
    assert f"{at}.rules[0].resources: Invalid value: []string{{\"*\", \"pods\", \"*/*\"}}: if " \
           "'*/*' is present, must not specify other resources" in rest
    assert f'{at}.sideEffects: Unsupported value: "Some": supported values: "None", ' \
           '"NoneOnDryRun"' in rest
    assert f"{at}.timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and " \
           "30 seconds" in rest
    assert f"{at}.clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL " \
           "scheme; desired format: https://host[/path]" in rest
    assert any(t.startswith(f'{at}.matchConditions[0].expression: Invalid value: "object.(": '
                            "compilation failed: ERROR: <input>:1:8: Syntax error")
               for t in rest)
    assert f'{at}.admissionReviewVersions[1]: Invalid value: "v2": duplicate version' in rest
    assert f'{at}.admissionReviewVersions: Invalid value: []string{{"v2", "v2"}}: must ' \
           "include at least one of v1, v1beta1" in rest


def test_webhook_names_are_unique_and_client_config_one_of():
    _, errors = create(VALIDATING_HOOKS, configuration(
        "ValidatingWebhookConfiguration", webhook(),
        webhook(clientConfig={}, sideEffects=None, admissionReviewVersions=[])))
    assert texts(errors) == [
        "webhooks[1].sideEffects: Required value: must specify one of None, NoneOnDryRun",
        "webhooks[1].clientConfig: Required value: exactly one of url or service is required",
        "webhooks[1].admissionReviewVersions: Required value: must specify one of v1, v1beta1",
        'webhooks[1].name: Duplicate value: "hook.example.com"']


def test_webhook_updates_may_keep_what_was_stored():
    old = stored(VALIDATING_HOOKS, configuration())
    old["webhooks"][0]["sideEffects"] = "Some"
    new = configuration("ValidatingWebhookConfiguration", webhook(sideEffects="Unknown",
                                                                  timeoutSeconds=5))
    new["metadata"] = dict(old["metadata"])
    updated, errors = update(VALIDATING_HOOKS, new, old)
    assert errors == [] and updated["metadata"]["generation"] == 2
    assert VALIDATING_HOOKS.table_cells(updated)[:2] == ["c", 1]
    assert [c["name"] for c in MUTATING_HOOKS.table_columns()] == ["Name", "Webhooks", "Age"]


# -- policies -----------------------------------------------------------------------------------

@pytest.mark.skipif(not KINDS.is_dir(), reason="reference transcripts absent")
def test_policy_transcripts():
    exchange = json.loads((KINDS / "validatingadmissionpolicies-create.json").read_text())
    obj, errors = create(POLICY, exchange["request"]["body"])
    assert errors == []
    assert obj["spec"] == exchange["response"]["body"]["spec"]
    exchange = json.loads((KINDS / "validatingadmissionpolicies-invalid.json").read_text())
    _, errors = create(POLICY, exchange["request"]["body"])
    assert invalid_status("ValidatingAdmissionPolicy", "admissionregistration.k8s.io", "vap-bad",
                          errors) == exchange["response"]["body"]


def test_policy_expressions_are_compiled():
    _, errors = create(POLICY, policy(
        paramKind={"apiVersion": "a/b/c", "kind": "Config_Map"},
        matchConditions=[{"name": "n", "expression": "params.x == 1"}],
        variables=[{"name": "v", "expression": "object.spec"},
                   {"name": "in", "expression": "1"}],
        validations=[{"expression": "variables.v.replicas > 1"},
                     {"expression": "object.spec", "messageExpression": "1", "reason": "Gone",
                      "message": "a\nb"},
                     {"expression": "variables.in == 1"}],
        auditAnnotations=[{"key": "k", "valueExpression": "1"},
                          {"key": "k", "valueExpression": "'x'"}]))
    assert texts(errors) == [
        'spec.paramKind.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: '
        "a/b/c",
        'spec.paramKind.kind: Invalid value: "Config_Map": may have mixed case, but should '
        "otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters "
        "or '-', start with an alphabetic character, and end with an alphanumeric character "
        "(e.g. 'my-name',  or 'abc-123', regex used for validation is "
        "'[a-z]([-a-z0-9]*[a-z0-9])?')",
        'spec.variables[1].name: Invalid value: "in": name is not a valid CEL identifier',
        'spec.validations[1].expression: Invalid value: "object.spec": must evaluate to bool',
        'spec.validations[1].messageExpression: Invalid value: "1": must evaluate to string',
        'spec.validations[1].message: Invalid value: "a\\nb": message must not contain line '
        "breaks",
        'spec.validations[1].reason: Unsupported value: "Gone": supported values: "Forbidden", '
        '"Invalid", "RequestEntityTooLarge"',
        texts(errors)[7],
        'spec.auditAnnotations[0].valueExpression: Invalid value: "1": must evaluate to one of '
        "[string null_type]",
        'spec.auditAnnotations[1].key: Duplicate value: "k"']
    assert texts(errors)[7].startswith('spec.validations[2].expression: Invalid value: '
                                       '"variables.in == 1": compilation failed: ERROR: '
                                       "<input>:1:1")


def test_policy_needs_validations_or_audit_annotations():
    _, errors = create(POLICY, policy(validations=[],
                                      matchConstraints={"resourceRules": []}))
    assert texts(errors) == [
        "spec.matchConstraints.resourceRules: Required value",
        "spec.validations: Required value: validations or auditAnnotations must contain at "
        "least one item",
        "spec.auditAnnotations: Required value: validations or auditAnnotations must contain at "
        "least one item"]


def test_policy_status_and_table():
    old = stored(POLICY, policy(paramKind={"apiVersion": "v1", "kind": "ConfigMap"}))
    assert old["metadata"]["generation"] == 1 and old["status"] == {}
    assert POLICY.table_cells(old)[:3] == ["p", 1, "v1/ConfigMap"]
    new = {**old, "status": {"typeChecking": {"expressionWarnings": [
        {"fieldRef": "spec.validations[0].expression", "warning": "w"},
        {"fieldRef": "spec[", "warning": ""}]},
        "conditions": [{"type": "Ready", "status": "Maybe"}]}}
    relabelled = {**new, "metadata": {**new["metadata"], "labels": {"a": "b"}},
                  "spec": {**new["spec"], "failurePolicy": "Ignore"}}
    POLICY.prepare_status_update(relabelled, old)
    assert "labels" not in relabelled["metadata"] and relabelled["spec"] == old["spec"]
    problems = texts(POLICY.validate_status(new, old))
    assert problems[0] == "status.typeChecking.expressionWarnings[1].warning: Required value"
    assert problems[1].startswith('status.typeChecking.expressionWarnings[1].fieldRef: Invalid '
                                  'value: "spec[": invalid JSONPath: ')
    assert 'status.conditions[0].status: Unsupported value: "Maybe": supported values: ' \
           '"False", "True", "Unknown"' in problems


def test_expression_types():
    assert compile_expression("'a'", (STRING, NULL)) is None
    assert compile_expression("null", (STRING, NULL)) is None
    assert compile_expression("request.userInfo.username == 'a'", (BOOL,)) is None
    assert compile_expression("request.namespace == namespaceObject.metadata.name",
                              (BOOL,)) is None
    assert compile_expression("request.user == 'a'", (BOOL,)).detail.startswith(
        "compilation failed: ERROR: <input>:1:8: undefined field 'user'")
    assert compile_expression("authorizer.path('/x').check('get').allowed()", (BOOL,),
                              authorizer=True) is None
    assert compile_expression("params.a", (BOOL,)).detail.startswith("compilation failed")


# -- bindings --------------------------------------------------------------------------------

def test_binding_defaults_and_validation():
    obj, errors = create(BINDING, binding(matchResources={}))
    assert errors == []
    assert obj["spec"]["matchResources"] == {"namespaceSelector": {}, "objectSelector": {},
                                             "matchPolicy": "Equivalent"}
    _, errors = create(BINDING, binding(policyName="", validationActions=["Deny", "Warn", "Deny",
                                                                          "Shout"],
                                        paramRef={"name": "a/b", "selector": {}}))
    assert texts(errors) == [
        "spec.policyName: Required value",
        "spec.paramRef.name: Invalid value: \"a/b\": may not contain '/'",
        "spec.paramRef.name: Forbidden: name and selector are mutually exclusive",
        "spec.paramRef.selector: Forbidden: name and selector are mutually exclusive",
        "spec.paramRef.parameterNotFoundAction: Required value",
        'spec.validationActions[2]: Duplicate value: "Deny"',
        'spec.validationActions[3]: Unsupported value: "Shout": supported values: "Audit", '
        '"Deny", "Warn"',
        'spec.validationActions: Invalid value: []admissionregistration.ValidationAction{"Deny", '
        '"Warn", "Deny", "Shout"}: must not contain both Deny and Warn (repeating the same '
        "validation failure information in the API response and headers serves no purpose)"]
    assert texts(create(BINDING, binding(validationActions=[]))[1]) == [
        "spec.validationActions: Required value: at least one validation action is required"]


def test_binding_table():
    obj = stored(BINDING, binding(paramRef={"name": "cfg", "parameterNotFoundAction": "Deny"}))
    assert BINDING.table_cells(obj)[:3] == ["b", "p", "*/cfg"]
    obj = stored(BINDING, binding(paramRef={"selector": {"matchLabels": {"a": "b"}},
                                            "parameterNotFoundAction": "Allow"}))
    assert BINDING.table_cells(obj)[2] == "a=b"
    assert [c["name"] for c in BINDING.table_columns()] == ["Name", "PolicyName", "ParamRef",
                                                           "Age"]


def test_users_and_group_versions_as_the_authorization_errors_print_them():
    from kapiserver.authentication import UserInfo
    from kapiserver_plugins.admissionregistration.authz import parse_group_version, user_text

    assert user_text(UserInfo("alice", "", ("devs", "system:authenticated"))) == \
        "&{alice  [devs system:authenticated] map[]}"
    assert user_text(UserInfo("bob", "u1", (), {"scopes": ("a", "b")})) == \
        "&{bob u1 [] map[scopes:[a b]]}"
    assert parse_group_version("v1") == ("", "v1")
    assert parse_group_version("apps/v1") == ("apps", "v1")
    assert parse_group_version("a/b/c") is None
