"""The review plugins' logic without a server: rule unions and access-review attributes."""

import json
import os

import pytest

from kapiserver.authentication import UserInfo
from kapiserver.authorization import Authorizer, Decision
from kapiserver.authorization.union import build
from kapiserver_plugins.authorization_api.access import AccessReviewer
from kapiserver_plugins.authorization_api.rules import aggregate, rules_for
from kapiserver_plugins.authz import AlwaysAllowAuthorizer, AlwaysDenyAuthorizer

REFERENCE = os.path.join("/work/shared/reference",
                         "selfsubjectrulesreview-bob.json")
BOB = UserInfo("bob", "", ("devs", "system:authenticated"))


class Listed(Authorizer):
    """An authorizer that lists fixed rules, as RBAC does."""

    def __init__(self, rules, non_rules, incomplete=False, error=""):
        self.answer = (rules, non_rules, incomplete, error)

    def rules_for(self, user, namespace):
        return self.answer


def test_rules_union_matches_reference_shape():
    if not os.path.exists(REFERENCE):
        pytest.skip("reference not present")
    with open(REFERENCE) as f:
        expected = json.load(f)["response"]["body"]["status"]
    # Rules arrive with empty lists that the answer omits (omitempty), as RBAC's may.
    rules = [dict(r, resourceNames=[]) for r in expected["resourceRules"]]
    union = build(["AlwaysDeny", "RBAC"], {"AlwaysDeny": AlwaysDenyAuthorizer(),
                                          "RBAC": Listed(rules, expected["nonResourceRules"])})
    resource, non_resource, incomplete, error = rules_for(union.authorizers, BOB, "ns")
    assert {"resourceRules": resource, "nonResourceRules": non_resource,
            "incomplete": incomplete} == expected
    assert error == ""


def test_rules_union_incomplete_and_errors():
    union = build(["A", "B", "C"], {"A": Listed([], [], True, "boom"),
                                    "B": Listed([], [], False, "bang"),
                                    "C": Authorizer()})
    _, _, incomplete, error = rules_for(union.authorizers, BOB, "ns")
    assert incomplete is True and error == "[boom, bang]"
    assert aggregate(["one"]) == "one" and aggregate([]) == ""


def test_superuser_gets_cluster_admin_rules_once():
    admin = UserInfo("admin", "", ("system:masters",))
    union = build(["AlwaysDeny"], {"AlwaysDeny": AlwaysDenyAuthorizer()})
    resource, non_resource, incomplete, _ = rules_for(union.authorizers, admin, "ns")
    assert resource == [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]
    assert non_resource == [{"verbs": ["*"], "nonResourceURLs": ["*"]}]
    assert incomplete is False
    union = build(["AlwaysAllow"], {"AlwaysAllow": AlwaysAllowAuthorizer()})
    resource, non_resource, _, _ = rules_for(union.authorizers, admin, "ns")
    assert len(resource) == len(non_resource) == 1


class Recorder(Authorizer):
    def __init__(self):
        self.seen = []

    def authorize(self, attributes):
        self.seen.append(attributes)
        return Decision.NO_OPINION, "no"


class FakeServer:
    def __init__(self, authorizer):
        self.authorizer = authorizer


def test_access_review_attributes_default_version_to_every_version():
    recorder = Recorder()
    review = AccessReviewer(FakeServer(recorder), "SubjectAccessReview")
    answer = review(None, {"metadata": {}, "spec": {
        "user": "u", "groups": ["g"], "extra": {"k": ["v"]}, "uid": "1",
        "resourceAttributes": {"verb": "get", "group": "", "resource": "configmaps"}}})
    seen = recorder.seen[0]
    assert seen.api_version == "*" and seen.resource == "configmaps" and seen.resource_request
    assert seen.user == UserInfo("u", "1", ("g",), {"k": ("v",)})
    assert answer["status"] == {"allowed": False, "reason": "no"}
    assert answer["spec"]["resourceAttributes"] == {"verb": "get", "resource": "configmaps"}
