"""The ValidatingAdmissionPolicy evaluation without a server: CEL runtime, variables,
messages, failure policies, audit annotations, match conditions and costs."""

import pytest

from kapiserver.authentication import UserInfo
from kapiserver.authorization import Decision
from kapiserver_plugins.admissionpolicy.cel import Inputs, Runtime
from kapiserver_plugins.admissionpolicy.dispatch import cel_request
from kapiserver_plugins.admissionpolicy.validator import CompiledPolicy


class Authorizer:
    def __init__(self):
        self.seen = []

    def authorize(self, attributes):
        self.seen.append(attributes)
        if attributes.resource == "secrets" and "readers" in attributes.user.groups:
            return Decision.ALLOW, "reader"
        return Decision.NO_OPINION, "not a reader"


class Attributes:
    gvr = ("", "v1", "configmaps")
    gvk = ("", "v1", "ConfigMap")
    subresource = ""
    namespace = "ns"
    name = "cm"
    operation = "CREATE"
    dry_run = False
    options = {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}

    def __init__(self, user=UserInfo("alice", "", ("readers",))):
        self.user = user


@pytest.fixture(scope="module")
def authorizer():
    return Authorizer()


@pytest.fixture(scope="module")
def runtime(authorizer):
    return Runtime(authorizer)


MATCH = {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                            "operations": ["CREATE"], "resources": ["configmaps"]}]}


def policy(runtime, **spec):
    return CompiledPolicy({"metadata": {"name": "p", "resourceVersion": "1"},
                           "spec": {"matchConstraints": MATCH, "failurePolicy": "Fail",
                                    **spec}}, runtime)


def run(runtime, compiled, obj, params=None, user=UserInfo("alice", "", ("readers",))):
    attributes = Attributes(user)
    request = cel_request(attributes, attributes.gvr, attributes.gvk)
    authz = runtime.authz
    namespace = {"metadata": {"name": "ns", "labels": {"env": "prod"}}}
    activation = runtime.activation({
        "object": obj, "oldObject": None, "params": params, "request": request,
        "namespaceObject": namespace, "authorizer": authz.authorizer_value(user),
        "authorizer.requestResource": authz.request_resource(user, attributes),
        "variables": {}})
    return compiled.validate(activation, Inputs(obj, None, params, request, namespace))


def cm(**data):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"},
            "data": {k: str(v) for k, v in data.items()}}


def test_messages_fall_back_from_expression_to_message_to_the_expression(runtime):
    compiled = policy(runtime, validations=[
        {"expression": "size(object.data) < 2", "messageExpression": "'has ' + "
         "string(size(object.data))", "reason": "Forbidden"},
        {"expression": "size(object.data) < 2", "message": "  too many  "},
        {"expression": " size(object.data) < 2 "},
        {"expression": "true"},
        # an empty message expression falls back to the message
        {"expression": "false", "messageExpression": "'  '", "message": "static"}])
    decisions = run(runtime, compiled, cm(a=1, b=2)).decisions
    assert [(d.action, d.message, d.reason) for d in decisions] == [
        ("Deny", "has 2", "Forbidden"), ("Deny", "too many", "Invalid"),
        ("Deny", "failed expression: size(object.data) < 2", "Invalid"),
        ("Admit", "", ""), ("Deny", "static", "Invalid")]


def test_variables_are_lazy_and_composed(runtime):
    compiled = policy(runtime, variables=[
        {"name": "keys", "expression": "size(object.data)"},
        {"name": "double", "expression": "variables.keys * 2"},
        {"name": "broken", "expression": "object.data.missing == 'x'"}],
        validations=[{"expression": "variables.double == 4 && has(variables.broken)"},
                     {"expression": "variables.keys == 1 || variables.broken"}])
    decisions = run(runtime, compiled, cm(a=1, b=2)).decisions
    assert decisions[0].action == "Admit"  # broken is declared, never evaluated
    assert decisions[1].evaluation == "error"
    assert decisions[1].message == (
        "expression 'variables.keys == 1 || variables.broken' resulted in error: composited "
        'variable "broken" fails to evaluate: no such key: missing')


def test_failure_policy_decides_evaluation_errors(runtime):
    spec = {"validations": [{"expression": "object.data.nope == '1'"}]}
    failing = run(runtime, policy(runtime, **spec), cm(a=1)).decisions
    assert [(d.action, d.evaluation) for d in failing] == [("Deny", "error")]
    assert failing[0].message == ("expression 'object.data.nope == '1'' resulted in error: "
                                  "no such key: nope")
    ignored = run(runtime, policy(runtime, failurePolicy="Ignore", **spec), cm(a=1)).decisions
    assert [(d.action, d.evaluation) for d in ignored] == [("Admit", "error")]


def test_params_namespace_object_and_request(runtime):
    compiled = policy(runtime, paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
                      validations=[
                          {"expression": "size(object.data) <= int(params.data.max)"},
                          {"expression": "namespaceObject.metadata.labels.env == 'prod'"},
                          {"expression": "request.userInfo.username == 'alice' && "
                                         "request.operation == 'CREATE' && "
                                         "request.kind.kind == 'ConfigMap'"}])
    decisions = run(runtime, compiled, cm(a=1, b=2), params=cm(max=1)).decisions
    assert [d.action for d in decisions] == ["Deny", "Admit", "Admit"]


def test_authorizer_checks_use_the_servers_authorizer(runtime, authorizer):
    compiled = policy(runtime, validations=[
        {"expression": "authorizer.group('').resource('secrets').namespace('ns')"
                       ".check('list').allowed()",
         "messageExpression": "'cannot list secrets'"},
        {"expression": "authorizer.requestResource.check('create').reason() == 'not a reader'"},
        {"expression": "authorizer.serviceAccount('ns', 'sa').group('')"
                       ".resource('secrets').check('get').allowed()"}])
    authorizer.seen.clear()
    decisions = run(runtime, compiled, cm(a=1)).decisions
    assert [d.action for d in decisions] == ["Admit", "Admit", "Deny"]
    first, request_resource, service_account = authorizer.seen
    assert (first.verb, first.resource, first.namespace, first.api_version) == \
        ("list", "secrets", "ns", "*")
    assert (request_resource.resource, request_resource.name, request_resource.verb) == \
        ("configmaps", "cm", "create")
    assert service_account.user.name == "system:serviceaccount:ns:sa"
    assert service_account.user.groups == ("system:serviceaccounts",
                                           "system:serviceaccounts:ns")
    denied = run(runtime, compiled, cm(a=1), user=UserInfo("bob")).decisions
    assert denied[0].message == "cannot list secrets"


def test_match_conditions(runtime):
    compiled = policy(runtime, matchConditions=[
        {"name": "named", "expression": "object.metadata.name.startsWith('c')"},
        {"name": "broken", "expression": "object.data.x == 'y'"}],
        validations=[{"expression": "false"}])
    result = run(runtime, compiled, cm(a=1))
    assert [(d.action, d.message) for d in result.decisions] == [
        ("Deny", "expression 'object.data.x == 'y'' resulted in error: no such key: x")]
    other = cm(a=1)
    other["metadata"]["name"] = "other"
    assert run(runtime, compiled, other).decisions == []  # a false condition: not matched


def test_audit_annotations(runtime):
    compiled = policy(runtime, auditAnnotations=[
        {"key": "keys", "valueExpression": "string(size(object.data))"},
        {"key": "none", "valueExpression": "null"},
        {"key": "maybe", "valueExpression": "size(object.data) > 5 ? 'big' : null"},
        {"key": "blank", "valueExpression": "'  '"}])
    result = run(runtime, compiled, cm(a=1))
    assert result.annotations == [("keys", "1")]
    assert result.decisions == [] and result.annotation_errors == []


def test_costs_limit_each_expression_and_the_evaluation(runtime):
    # Three checks cost 1,050,000: over the per-call limit of 1,000,000.
    check = "authorizer.group('').resource('secrets').check('get').allowed()"
    compiled = policy(runtime, validations=[{"expression": " && ".join([check] * 3)}])
    assert compiled.accounting
    (decision,) = run(runtime, compiled, cm(a=1)).decisions
    assert decision.message.endswith("resulted in error: operation cancelled: actual cost "
                                     "limit exceeded")
    # Ten expressions of two checks each exceed the budget of 10,000,000 together.
    over_budget = policy(runtime, validations=[{"expression": f"{check} || {check}"}] * 15)
    (decision,) = run(runtime, over_budget, cm(a=1)).decisions
    assert (decision.action, decision.message) == (
        "Deny", "validation failed due to running out of cost budget, no further "
                "validation rules will be run")
    # A policy that can never reach a limit is not charged at all.
    assert not policy(runtime, validations=[{"expression": "object.data.a == '1'"}]).accounting


def test_compile_errors_are_evaluation_errors(runtime):
    compiled = policy(runtime, validations=[{"expression": "object.data +"}])
    (decision,) = run(runtime, compiled, cm(a=1)).decisions
    assert decision.message.startswith("compilation error: compilation failed: ERROR: "
                                       "<input>:1:")
