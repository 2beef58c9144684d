"""Unit tests of the admission webhook plugins: matching, reviews, dispatch (no network:
the webhook caller is replaced by a function)."""

import base64
import json
from types import SimpleNamespace

import pytest

from kapiserver import errors
from kapiserver.authentication import UserInfo
from kapiserver_plugins.admissionwebhooks import predicates
from kapiserver_plugins.admissionwebhooks.dispatch import (MutatingAdmissionWebhook,
                                                            ValidatingAdmissionWebhook)
from kapiserver_plugins.admissionwebhooks.review import (CallError, WebhookDenied,
                                                          admission_request, new_review,
                                                          verify_response)
from kapiserver_plugins.admissionwebhooks.source import Webhook


def attributes(operation="CREATE", obj=None, old=None, gvr=("", "v1", "configmaps"),
               gvk=("", "v1", "ConfigMap"), namespace="ns", name="x", subresource="",
               dry_run=False):
    return SimpleNamespace(
        operation=operation, object=obj, old_object=old, gvr=gvr, gvk=gvk,
        namespace=namespace, name=name, subresource=subresource, dry_run=dry_run,
        user=UserInfo("alice", "u1", ("g",), {"scopes": ("a", "b")}),
        options={"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}, ctx=None,
        strategy=None, reinvocation={}, reinvoking=False, should_reinvoke=False,
        warnings=[], annotations={},
        add_warning=lambda text: None, add_annotation=lambda key, value: None)


def webhook(name="w.example.com", rules=None, mutating=False, **fields):
    hook = {"name": name, "clientConfig": {"url": "https://127.0.0.1/x"},
            "rules": rules if rules is not None else [
                {"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"],
                 "resources": ["configmaps"], "scope": "*"}],
            "sideEffects": "None", "admissionReviewVersions": ["v1"],
            "matchPolicy": "Equivalent", "failurePolicy": "Fail", **fields}
    return Webhook("config", 0, hook, mutating)


@pytest.mark.parametrize("resources,subresource,matches", [
    (["configmaps"], "", True), (["configmaps"], "status", False),
    (["configmaps/status"], "status", True), (["configmaps/*"], "status", True),
    (["configmaps/*"], "", True), (["*"], "", True), (["*"], "status", False),
    (["*/*"], "status", True), (["*/status"], "status", True), (["secrets"], "", False)])
def test_rule_resources(resources, subresource, matches):
    # upstream's splitResource: "x/*" matches x itself too ("*" matches any subresource)
    rule = {"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
            "resources": resources}
    found = predicates.rule_matches(rule, attributes(subresource=subresource),
                                    ("", "v1", "configmaps"))
    assert found is matches


def test_rule_scope_operations_groups_versions():
    rule = {"operations": ["UPDATE"], "apiGroups": ["*"], "apiVersions": ["v1"],
            "resources": ["*"], "scope": "Namespaced"}
    update = attributes("UPDATE")
    assert predicates.rule_matches(rule, update, update.gvr)
    assert not predicates.rule_matches(rule, attributes("CREATE"), update.gvr)
    assert not predicates.rule_matches(rule, attributes("UPDATE", namespace=""), update.gvr)
    cluster = dict(rule, scope="Cluster")
    namespace = attributes("UPDATE", namespace="ns1", gvr=predicates.NAMESPACES)
    assert predicates.rule_matches(cluster, namespace, namespace.gvr)
    assert not predicates.rule_matches(dict(rule, apiVersions=["v2"]), update, update.gvr)


def test_equivalent_resources_and_exact_policy():
    rules = [{"operations": ["*"], "apiGroups": ["autoscaling"], "apiVersions": ["v2"],
              "resources": ["horizontalpodautoscalers"]}]
    request = attributes(gvr=("autoscaling", "v1", "horizontalpodautoscalers"),
                         gvk=("autoscaling", "v1", "HorizontalPodAutoscaler"))
    assert predicates.invocation_for(webhook(rules=rules), request) == (
        ("autoscaling", "v2", "horizontalpodautoscalers"),
        ("autoscaling", "v2", "HorizontalPodAutoscaler"))
    assert predicates.invocation_for(webhook(rules=rules, matchPolicy="Exact"),
                                     request) is None


def test_exempt_kinds():
    for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
                 "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"):
        assert predicates.is_exempt(attributes(gvk=("admissionregistration.k8s.io", "v1",
                                                    kind)))
    assert not predicates.is_exempt(attributes())


def test_selectors():
    hook = webhook(namespaceSelector={"matchLabels": {"team": "a"}},
                   objectSelector={"matchLabels": {"app": "x"}})
    labelled = {"metadata": {"labels": {"app": "x"}}}
    request = attributes(obj={"metadata": {}}, old=labelled)
    assert predicates.matches_object(hook, request)  # the old object's labels count
    assert not predicates.matches_object(hook, attributes(obj={"metadata": {}}))
    namespaces = {"ns": {"metadata": {"labels": {"team": "a"}}},
                  "other": {"metadata": {}}}
    assert predicates.matches_namespace(hook, request, namespaces.__getitem__)
    assert not predicates.matches_namespace(hook, attributes(namespace="other"),
                                            namespaces.__getitem__)
    # cluster-scoped objects other than namespaces are never excluded
    assert predicates.matches_namespace(hook, attributes(namespace=""), None)
    # a namespace being created is judged by its own labels
    created = attributes(gvr=predicates.NAMESPACES, namespace="",
                         obj={"metadata": {"labels": {"team": "a"}}})
    assert predicates.matches_namespace(hook, created, None)


def test_admission_request_fields_in_go_order():
    request = admission_request("uid-1", attributes(obj={"a": 1}, subresource="status"),
                                ("", "v1", "configmaps"), ("", "v1", "ConfigMap"),
                                {"a": 1}, None)
    assert list(request) == ["uid", "kind", "resource", "subResource", "requestKind",
                             "requestResource", "requestSubResource", "name", "namespace",
                             "operation", "userInfo", "object", "oldObject", "dryRun",
                             "options"]
    assert request["userInfo"] == {"username": "alice", "uid": "u1", "groups": ["g"],
                                   "extra": {"scopes": ["a", "b"]}}


def _answer(uid, **response):
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "response": {"uid": uid, **response}}


def test_verify_response_checks_as_upstream():
    hook = webhook()
    with pytest.raises(CallError, match='expected response.uid="u", got "v"'):
        verify_response(hook, "u", "v1", _answer("v", allowed=True), False)
    with pytest.raises(CallError, match="expected webhook response of admission.k8s.io/v1, "
                                        "Kind=AdmissionReview, got admission.k8s.io/v1beta1"):
        verify_response(hook, "u", "v1", dict(_answer("u"), apiVersion=
                                              "admission.k8s.io/v1beta1"), False)
    with pytest.raises(CallError, match="response.patch but not response.patchType"):
        verify_response(hook, "u", "v1", _answer("u", allowed=True, patch="W10="), True)
    with pytest.raises(CallError, match="response.patchType but not response.patch"):
        verify_response(hook, "u", "v1", _answer("u", allowed=True, patchType="JSONPatch"),
                        True)
    # v1beta1 answers were never checked for their uid or kind
    answer = {"response": {"uid": "other", "allowed": True}}
    assert verify_response(hook, "u", "v1beta1", answer, False).allowed


def test_denial_status():
    denied = WebhookDenied("w", {"code": 200, "message": "no"})
    assert (denied.code, denied.message) == (400, 'admission webhook "w" denied the request: no')
    denied = WebhookDenied("w", {"code": 409, "reason": "AlreadyExists"})
    assert denied.to_status()["reason"] == "AlreadyExists"
    assert denied.message == 'admission webhook "w" denied the request: AlreadyExists'


def test_review_versions():
    uid, version, review = new_review(webhook(admissionReviewVersions=["v9", "v1beta1"]),
                                      attributes(obj={}), ("", "v1", "configmaps"),
                                      ("", "v1", "ConfigMap"), {}, None)
    assert version == "v1beta1" and review["apiVersion"] == "admission.k8s.io/v1beta1"
    assert review["request"]["uid"] == uid


class FakeCaller:
    """Answers reviews with ``answer(webhook, request) -> response fields``."""

    def __init__(self, answer):
        self.answer = answer
        self.calls = []

    def call(self, hook, review, deadline):
        self.calls.append(hook.name)
        request = review["request"]
        return _answer(request["uid"], allowed=True, **self.answer(hook, request))


def _plugin(cls, hooks, answer):
    plugin = cls.__new__(cls)
    plugin.server = None
    plugin.source = SimpleNamespace(webhooks=lambda: hooks)
    plugin.caller = FakeCaller(answer)
    return plugin


def test_dry_run_refused_by_webhooks_with_side_effects():
    plugin = _plugin(ValidatingAdmissionWebhook, [webhook(sideEffects="Some")],
                     lambda hook, request: {})
    with pytest.raises(errors.BadRequest,
                       match='admission webhook "w.example.com" does not support dry run'):
        plugin.validate(attributes(obj={"metadata": {}}, namespace="", dry_run=True))
    assert plugin.caller.calls == []


def _patch(*operations):
    return {"patchType": "JSONPatch",
            "patch": base64.b64encode(json.dumps(list(operations)).encode()).decode()}


def test_reinvocation_only_of_if_needed_webhooks_that_ran():
    first = webhook("first.example.com", mutating=True, reinvocationPolicy="IfNeeded")
    never = webhook("never.example.com", mutating=True)
    second = webhook("second.example.com", mutating=True)

    def answer(hook, request):
        labels = request["object"]["metadata"].get("labels") or {}
        if hook.name == "second.example.com" and "second" not in labels:
            return _patch({"op": "add", "path": "/metadata/labels/second", "value": "1"})
        return {}

    plugin = _plugin(MutatingAdmissionWebhook, [first, never, second], answer)
    request = attributes(obj={"apiVersion": "v1", "kind": "ConfigMap",
                              "metadata": {"labels": {}}}, namespace="")
    plugin.admit(request)
    assert request.should_reinvoke
    request.reinvoking = True
    plugin.admit(request)
    assert plugin.caller.calls == ["first.example.com", "never.example.com",
                                   "second.example.com", "first.example.com"]
    assert request.object["metadata"]["labels"] == {"second": "1"}


def test_failure_policy_ignore_skips_a_failing_mutating_webhook():
    broken = webhook("broken.example.com", mutating=True, failurePolicy="Ignore")
    plugin = _plugin(MutatingAdmissionWebhook, [broken], None)

    def fail(hook, review, deadline):
        raise CallError(hook.name, "failed to call webhook: boom")

    plugin.caller.call = fail
    request = attributes(obj={"metadata": {}}, namespace="")
    plugin.admit(request)  # ignored
    plugin.source = SimpleNamespace(webhooks=lambda: [webhook("strict", mutating=True)])
    with pytest.raises(errors.InternalError) as raised:
        plugin.admit(request)
    assert raised.value.message == ('Internal error occurred: failed calling webhook '
                                    '"strict": failed to call webhook: boom')
