"""RBAC rule matching, coverage and upstream's escalation wording (no server)."""

import pytest

from kapiserver.authentication import UserInfo
from kapiserver.authorization import Attributes
from kapiserver_plugins.rbac.rules import (CompiledRule, aggregate_errors, breakdown_rule,
                                           compact_rules, compact_string, covers,
                                           escalation_message)

ALICE = UserInfo("alice", groups=("system:authenticated",))


def resource(verb, resource, group="", subresource="", name="", namespace="ns"):
    return Attributes(user=ALICE, verb=verb, resource_request=True, namespace=namespace,
                      api_group=group, api_version="v1", resource=resource,
                      subresource=subresource, name=name)


def path(verb, url):
    return Attributes(user=ALICE, verb=verb, resource_request=False, path=url)


def allows(rule, attributes):
    return CompiledRule(rule).allows(attributes)


@pytest.mark.parametrize("rule,attributes,expected", [
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]},
     resource("get", "configmaps"), True),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]},
     resource("list", "configmaps"), False),
    ({"verbs": ["*"], "apiGroups": [""], "resources": ["configmaps"]},
     resource("deletecollection", "configmaps"), True),
    ({"verbs": ["get"], "apiGroups": ["apps"], "resources": ["configmaps"]},
     resource("get", "configmaps"), False),
    ({"verbs": ["get"], "apiGroups": ["*"], "resources": ["widgets"]},
     resource("get", "widgets", group="example.com"), True),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["*"]},
     resource("get", "secrets"), True),
    # a subresource needs res/sub, */sub or *; the bare resource does not cover it
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["namespaces"]},
     resource("get", "namespaces", subresource="status", name="x"), False),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["namespaces/status"]},
     resource("get", "namespaces", subresource="status", name="x"), True),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["*/status"]},
     resource("get", "namespaces", subresource="status", name="x"), True),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["*/status"]},
     resource("get", "namespaces", subresource="finalize", name="x"), False),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["namespaces/status"]},
     resource("get", "namespaces", name="x"), False),
    # resourceNames: only requests that name the object
    ({"verbs": ["get", "list", "create"], "apiGroups": [""], "resources": ["configmaps"],
      "resourceNames": ["cm1"]}, resource("get", "configmaps", name="cm1"), True),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"],
      "resourceNames": ["cm1"]}, resource("get", "configmaps", name="cm2"), False),
    ({"verbs": ["list"], "apiGroups": [""], "resources": ["configmaps"],
      "resourceNames": ["cm1"]}, resource("list", "configmaps"), False),
    ({"verbs": ["create"], "apiGroups": [""], "resources": ["configmaps"],
      "resourceNames": ["cm1"]}, resource("create", "configmaps"), False),
    # non-resource URLs: exact, trailing *, and *
    ({"verbs": ["get"], "nonResourceURLs": ["/healthz"]}, path("get", "/healthz"), True),
    ({"verbs": ["get"], "nonResourceURLs": ["/healthz"]}, path("get", "/healthz/ping"), False),
    ({"verbs": ["get"], "nonResourceURLs": ["/healthz/*"]}, path("get", "/healthz/ping"), True),
    ({"verbs": ["get"], "nonResourceURLs": ["/api*"]}, path("get", "/apis/x"), True),
    ({"verbs": ["get"], "nonResourceURLs": ["*"]}, path("get", "/anything"), True),
    ({"verbs": ["post"], "nonResourceURLs": ["*"]}, path("get", "/anything"), False),
    # resource rules never match paths and vice versa
    ({"verbs": ["get"], "apiGroups": ["*"], "resources": ["*"]}, path("get", "/healthz"), False),
    ({"verbs": ["get"], "nonResourceURLs": ["*"]}, resource("get", "configmaps"), False),
])
def test_rule_allows(rule, attributes, expected):
    assert allows(rule, attributes) is expected


def test_breakdown_and_covers():
    rule = {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods", "pods/log"],
            "resourceNames": ["a"]}
    assert len(breakdown_rule(rule)) == 4
    assert breakdown_rule({"verbs": ["get"], "nonResourceURLs": ["/a", "/b"]}) == [
        {"nonResourceURLs": ["/a"], "verbs": ["get"]},
        {"nonResourceURLs": ["/b"], "verbs": ["get"]}]
    owner = [{"verbs": ["*"], "apiGroups": [""], "resources": ["pods", "*/log"]}]
    assert covers(owner, [rule]) == (True, [])
    ok, missing = covers([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"],
                           "resourceNames": ["a"]}],
                         [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}])
    assert not ok and len(missing) == 2  # named rules do not cover unnamed ones
    assert covers([{"verbs": ["get"], "nonResourceURLs": ["/api/*"]}],
                  [{"verbs": ["get"], "nonResourceURLs": ["/api/v1"]}])[0]


def test_compact_string_and_message():
    missing = [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]},
               {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["delete"]},
               {"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]
    compacted = compact_rules(missing)
    assert {compact_string(r) for r in compacted} == {
        '{APIGroups:[""], Resources:["configmaps"], Verbs:["create" "delete"]}',
        '{NonResourceURLs:["/metrics"], Verbs:["get"]}'}
    user = UserInfo("bob", groups=("devs", "system:authenticated"))
    assert escalation_message(user, missing[:1], []) == (
        'user "bob" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC '
        'permissions not currently held:\n'
        '{APIGroups:[""], Resources:["configmaps"], Verbs:["create"]}')
    assert escalation_message(user, missing[2:], ['roles.rbac.authorization.k8s.io "a" not '
                                                  'found']).endswith(
        '{NonResourceURLs:["/metrics"], Verbs:["get"]}; resolution errors: '
        '[roles.rbac.authorization.k8s.io "a" not found]')
    assert compact_string({"apiGroups": [""], "resources": ["secrets"],
                           "resourceNames": ["s"], "verbs": ["get"]}) == \
        '{APIGroups:[""], Resources:["secrets"], ResourceNames:["s"], Verbs:["get"]}'


def test_aggregate_errors():
    assert aggregate_errors(["a"]) == "a"
    assert aggregate_errors(["a", "a"]) == "a"
    assert aggregate_errors(["a", "b", "a"]) == "[a, b]"
