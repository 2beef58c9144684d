"""Unit tests of kapiserver.authorization (union, privileged group, forbidden wording)
and of errors.Forbidden against upstream Status bodies."""

import json

import pytest

from kapiserver.authentication import SYSTEM_PRIVILEGED_GROUP, UserInfo
from kapiserver.authorization import Attributes, Authorizer, Decision, forbidden_message
from kapiserver.authorization import union
from kapiserver.errors import Forbidden, StatusError
from kapiserver.serialization import dumps_json

ALICE = UserInfo("alice", "", ("devs",))
MASTER = UserInfo("root", "", ("x", SYSTEM_PRIVILEGED_GROUP))


class Fake(Authorizer):
    def __init__(self, name, decision, reason=""):
        self.name = name
        self.decision = decision
        self.reason = reason
        self.calls = 0

    def authorize(self, attributes):
        self.calls += 1
        return self.decision, self.reason


def attrs(user=ALICE, **kw):
    kw.setdefault("verb", "get")
    kw.setdefault("resource_request", True)
    return Attributes(user=user, **kw)


@pytest.mark.parametrize("decision", [Decision.ALLOW, Decision.DENY])
def test_union_stops_at_first_decision(decision):
    a = Fake("a", Decision.NO_OPINION, "a has no opinion")
    b = Fake("b", decision, "b decided")
    c = Fake("c", Decision.ALLOW, "c")
    assert union.UnionAuthorizer([a, b, c]).authorize(attrs()) == (decision, "b decided")
    assert (a.calls, b.calls, c.calls) == (1, 1, 0)


def test_union_deny_before_allow_denies():
    a = Fake("a", Decision.DENY, "nope")
    b = Fake("b", Decision.ALLOW)
    assert union.UnionAuthorizer([a, b]).authorize(attrs()) == (Decision.DENY, "nope")
    assert b.calls == 0


def test_union_all_no_opinion_joins_reasons():
    a = Fake("a", Decision.NO_OPINION, "first")
    b = Fake("b", Decision.NO_OPINION, "")
    c = Fake("c", Decision.NO_OPINION, "third")
    assert union.UnionAuthorizer([a, b, c]).authorize(attrs()) == (
        Decision.NO_OPINION, "first\nthird")


def test_union_empty_is_no_opinion():
    assert union.UnionAuthorizer([]).authorize(attrs()) == (Decision.NO_OPINION, "")


def test_privileged_groups_authorizer():
    auth = union.PrivilegedGroupsAuthorizer()
    assert auth.authorize(attrs(MASTER)) == (Decision.ALLOW, "")
    assert auth.authorize(attrs(ALICE)) == (Decision.NO_OPINION, "")
    custom = union.PrivilegedGroupsAuthorizer(["admins"])
    assert custom.authorize(attrs(UserInfo("x", "", ("admins",))))[0] is Decision.ALLOW
    assert custom.authorize(attrs(MASTER))[0] is Decision.NO_OPINION


def test_build_puts_privileged_group_first():
    deny = Fake("Deny", Decision.DENY, "denied")
    allow = Fake("Allow", Decision.ALLOW)
    built = union.build(["Deny", "Allow"], {"Allow": allow, "Deny": deny, "Unused": allow})
    assert isinstance(built.authorizers[0], union.PrivilegedGroupsAuthorizer)
    assert built.authorizers[1:] == [deny, allow]
    # system:masters is allowed before the denying mode is consulted
    assert built.authorize(attrs(MASTER)) == (Decision.ALLOW, "")
    assert deny.calls == 0
    assert built.authorize(attrs(ALICE)) == (Decision.DENY, "denied")


def test_build_unknown_mode_raises_key_error():
    with pytest.raises(KeyError):
        union.build(["Nope"], {})


def test_decision_values():
    assert {d.name for d in Decision} == {"ALLOW", "DENY", "NO_OPINION"}


# -- forbidden_message: responsewriters.forbiddenMessage --------------------------------------

def test_forbidden_message_cluster_scope():
    a = attrs(verb="list", resource="namespaces")
    assert forbidden_message(a) == ('User "alice" cannot list resource "namespaces" '
                                    'in API group "" at the cluster scope')


def test_forbidden_message_namespaced_with_name():
    a = attrs(verb="get", resource="configmaps", namespace="ref-b5828b", name="cm1")
    assert forbidden_message(a) == ('User "alice" cannot get resource "configmaps" '
                                    'in API group "" in the namespace "ref-b5828b"')


def test_forbidden_message_subresource_and_group():
    a = attrs(verb="update", resource="pods", subresource="status", namespace="ns", name="p")
    assert forbidden_message(a) == ('User "alice" cannot update resource "pods/status" '
                                    'in API group "" in the namespace "ns"')
    a = attrs(verb="patch", resource="deployments", subresource="scale", api_group="apps")
    assert forbidden_message(a) == ('User "alice" cannot patch resource "deployments/scale" '
                                    'in API group "apps" at the cluster scope')


def test_forbidden_message_non_resource():
    a = attrs(verb="get", resource_request=False, path="/healthz")
    assert forbidden_message(a) == 'User "alice" cannot get path "/healthz"'


def test_forbidden_message_quotes_like_go():
    a = attrs(UserInfo('we"ird\\name'), verb="get", resource_request=False, path="/a\tb")
    assert forbidden_message(a) == 'User "we\\"ird\\\\name" cannot get path "/a\\tb"'


def test_forbidden_message_without_user():
    a = Attributes(user=None, verb="get", resource_request=False, path="/x")
    assert forbidden_message(a) == 'User "" cannot get path "/x"'


# -- errors.Forbidden.for_resource: apierrors.NewForbidden ------------------------------------

STATUS_KEYS = ["kind", "apiVersion", "metadata", "status", "message", "reason", "details",
               "code"]


def test_forbidden_for_named_resource_matches_upstream_status():
    reason = ('User "bob" cannot get resource "configmaps" in API group "" '
              'in the namespace "ref-b5828b"')
    err = Forbidden.for_resource("", "configmaps", "cm1", reason)
    assert isinstance(err, StatusError)
    status = err.to_status()
    assert list(status) == STATUS_KEYS
    assert status == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'configmaps "cm1" is forbidden: User "bob" cannot get resource '
                   '"configmaps" in API group "" in the namespace "ref-b5828b"',
        "reason": "Forbidden",
        "details": {"name": "cm1", "kind": "configmaps"},
        "code": 403,
    }
    assert list(status["details"]) == ["name", "kind"]
    assert err.code == 403 and str(err) == status["message"]


def test_forbidden_for_collection_matches_upstream_status():
    reason = ('User "alice" cannot list resource "namespaces" in API group "" '
              'at the cluster scope')
    status = Forbidden.for_resource("", "namespaces", "", reason).to_status()
    assert list(status) == STATUS_KEYS
    assert status["message"] == ('namespaces is forbidden: User "alice" cannot list resource '
                                 '"namespaces" in API group "" at the cluster scope')
    assert status["details"] == {"kind": "namespaces"}
    # byte-exact JSON, as upstream's encoder writes it
    assert dumps_json(status) == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        b'"message":"namespaces is forbidden: User \\"alice\\" cannot list resource '
        b'\\"namespaces\\" in API group \\"\\" at the cluster scope","reason":"Forbidden",'
        b'"details":{"kind":"namespaces"},"code":403}\n')


def test_forbidden_with_group_qualifies_resource():
    status = Forbidden.for_resource("apps", "deployments", "web", "denied").to_status()
    assert status["message"] == 'deployments.apps "web" is forbidden: denied'
    assert status["details"] == {"name": "web", "group": "apps", "kind": "deployments"}
    assert list(status["details"]) == ["name", "group", "kind"]


def test_forbidden_non_resource_has_empty_details():
    status = Forbidden.for_resource("", "", "", 'User "alice" cannot get path "/x"').to_status()
    assert status["message"] == 'forbidden: User "alice" cannot get path "/x"'
    assert status["details"] == {}
    assert list(status) == STATUS_KEYS


def test_status_without_details_omits_key():
    status = StatusError("boom").to_status()
    assert "details" not in status
    assert list(status) == ["kind", "apiVersion", "metadata", "status", "message", "reason",
                            "code"]
    assert (status["code"], status["reason"]) == (500, "InternalError")
    assert json.loads(dumps_json(status)) == status
