"""authentication.k8s.io and authorization.k8s.io reviews, driven as kubectl drives them."""

import json

import pytest

from kapiserver.testing import KapiserverProcess, assert_status
from tests.support.reference import transcript as reference

AUTHN = "/apis/authentication.k8s.io/v1"
AUTHZ = "/apis/authorization.k8s.io/v1"
ADMIN = {"user": "admin", "groups": ["system:masters"]}


@pytest.fixture(scope="module")
def deny_server(tmp_path_factory, token_file):
    """``--authorization-mode AlwaysDeny``: only system:masters may do anything."""
    process = KapiserverProcess(str(tmp_path_factory.mktemp("deny-server")), {
        "token-auth-file": token_file, "authorization-mode": "AlwaysDeny"})
    process.start()
    yield process
    process.stop()


def post(server, path, body, **who):
    return server.request("POST", path, json=body, **(who or ADMIN))


# -- discovery -------------------------------------------------------------------------------

@pytest.mark.parametrize("name", [
    "discovery-group-authentication.k8s.io.json", "discovery-group-authorization.k8s.io.json",
    "discovery-groupversion-authentication.k8s.io-v1.json",
    "discovery-groupversion-authorization.k8s.io-v1.json"])
def test_discovery_matches_reference(server, name):
    ref = reference(name)
    response = server.get(ref["request"]["path"], **ADMIN)
    assert response.status_code == 200
    assert response.json() == ref["response"]["body"]


def test_aggregated_discovery_matches_reference(server):
    ref = reference("aggregated-discovery-apis.json")
    response = server.get("/apis", headers={"Accept": ref["request"]["accept"]}, **ADMIN)
    ours = {item["metadata"]["name"]: item for item in response.json()["items"]}
    for item in ref["response"]["body"]["items"]:
        if item["metadata"]["name"] in ("authentication.k8s.io", "authorization.k8s.io"):
            assert ours[item["metadata"]["name"]] == item


def test_reviews_are_create_only(server):
    assert_status(server.get(AUTHN + "/tokenreviews", **ADMIN), 405, "MethodNotAllowed")
    assert_status(server.get(AUTHZ + "/subjectaccessreviews/x", **ADMIN), 405,
                  "MethodNotAllowed")


# -- authentication.k8s.io -----------------------------------------------------------------

def test_selfsubjectreview_matches_reference(server):
    ref = reference("selfsubjectreview-alice.json")
    response = post(server, ref["request"]["path"], ref["request"]["body"],
                    token="alice-token")
    assert response.status_code == 201
    body = response.json()
    assert body["metadata"]["creationTimestamp"].endswith("Z")
    expected = ref["response"]["body"]
    assert list(body) == list(expected)
    assert body["status"] == {"userInfo": {"username": "alice", "uid": "uid-alice",
                                           "groups": ["devs", "qa", "system:authenticated"]}}


def test_kubectl_auth_whoami(server):
    result = server.kubectl("auth", "whoami", "-o", "json", token="bob-token", user=None)
    # bob is refused everything by ProbeDenyBob, whoami included.
    assert result.returncode != 0
    result = server.kubectl("auth", "whoami", "-o", "json", token="alice-token", user=None)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["status"]["userInfo"]["username"] == "alice"
    result = server.kubectl("auth", "whoami", "--as", "zed", "--as-group", "ops")
    assert result.returncode == 0, result.stderr
    assert "zed" in result.stdout and "[ops system:authenticated]" in result.stdout


def test_tokenreview(server):
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
              "spec": {"token": "alice-token"}}
    response = post(server, AUTHN + "/tokenreviews", review)
    assert response.status_code == 201
    body = response.json()
    assert body["metadata"] == {"creationTimestamp": None}
    assert body["spec"] == {"token": "alice-token"}
    assert body["status"]["authenticated"] is True
    assert body["status"]["user"] == {"username": "alice", "uid": "uid-alice",
                                      "groups": ["devs", "qa", "system:authenticated"]}

    review["spec"]["token"] = "not-a-token"
    body = post(server, AUTHN + "/tokenreviews", review).json()
    assert "authenticated" not in body["status"]
    assert body["status"]["user"] == {}
    assert body["status"]["error"] == "invalid bearer token"

    del review["spec"]["token"]
    assert_status(post(server, AUTHN + "/tokenreviews", review), 400, "BadRequest",
                  "token is required for TokenReview in authentication")


# -- authorization.k8s.io ------------------------------------------------------------------

def sar(user="alice", groups=(), **attributes):
    spec = {"user": user}
    if groups:
        spec["groups"] = list(groups)
    spec.update(attributes)
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": spec}


def test_subjectaccessreview_allow_deny(server):
    attributes = {"resourceAttributes": {"namespace": "ns", "verb": "get",
                                         "resource": "configmaps"}}
    body = post(server, AUTHZ + "/subjectaccessreviews", sar(**attributes)).json()
    assert body["status"] == {"allowed": True}
    assert body["spec"] == {"resourceAttributes": {"namespace": "ns", "verb": "get",
                                                   "resource": "configmaps"}, "user": "alice"}
    body = post(server, AUTHZ + "/subjectaccessreviews", sar("bob", **attributes)).json()
    assert body["status"] == {"allowed": False, "denied": True,
                              "reason": "bob is never allowed"}
    # Groups count as given: bob in system:masters is allowed before any mode.
    body = post(server, AUTHZ + "/subjectaccessreviews",
                sar("bob", ["system:masters"], **attributes)).json()
    assert body["status"] == {"allowed": True}


def test_subjectaccessreview_no_opinion(deny_server):
    body = post(deny_server, AUTHZ + "/subjectaccessreviews",
                sar(nonResourceAttributes={"path": "/version", "verb": "get"})).json()
    assert body["status"] == {"allowed": False, "reason": "Everything is forbidden."}


def test_subjectaccessreview_validation(server):
    response = post(server, AUTHZ + "/subjectaccessreviews", sar(""))
    assert_status(response, 422, "Invalid",
                  'SubjectAccessReview.authorization.k8s.io "" is invalid: '
                  '[spec.resourceAttributes: Invalid value: "null": exactly one of '
                  'nonResourceAttributes or resourceAttributes must be specified, spec.user: '
                  'Invalid value: "": at least one of user or group must be specified]')
    response = post(server, AUTHZ + "/subjectaccessreviews",
                    sar(resourceAttributes={"verb": "get"},
                        nonResourceAttributes={"path": "/x", "verb": "get"}))
    body = assert_status(response, 422, "Invalid")
    assert body["details"]["causes"] == [{
        "reason": "FieldValueInvalid", "field": "spec.nonResourceAttributes",
        "message": 'Invalid value: authorization.NonResourceAttributes{Path:"/x", '
                   'Verb:"get"}: cannot be specified in combination with resourceAttributes'}]


def test_localsubjectaccessreview_namespace_must_match(server):
    path = AUTHZ + "/namespaces/team/localsubjectaccessreviews"
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "LocalSubjectAccessReview",
              "spec": {"user": "alice", "resourceAttributes": {
                  "namespace": "team", "verb": "list", "resource": "configmaps"}}}
    response = post(server, path, review)
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["metadata"] == {"namespace": "team", "creationTimestamp": None}
    assert body["status"] == {"allowed": True}

    review["spec"]["resourceAttributes"]["namespace"] = "other"
    assert_status(post(server, path, review), 422, "Invalid",
                  'LocalSubjectAccessReview.authorization.k8s.io "" is invalid: '
                  'spec.resourceAttributes.namespace: Invalid value: "other": must match '
                  'metadata.namespace')
    review["metadata"] = {"namespace": "elsewhere"}
    assert_status(post(server, path, review), 400, "BadRequest",
                  "the namespace of the provided object does not match the namespace sent "
                  "on the request")


def test_selfsubjectaccessreview_and_kubectl_can_i(server):
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
              "spec": {"resourceAttributes": {"verb": "delete", "resource": "configmaps",
                                              "namespace": "x"}}}
    response = post(server, AUTHZ + "/selfsubjectaccessreviews", review, token="alice-token")
    assert response.status_code == 201
    assert response.json()["status"] == {"allowed": True}

    result = server.kubectl("auth", "can-i", "delete", "configmaps", "-n", "x",
                            token="alice-token", user=None)
    assert (result.returncode, result.stdout.strip()) == (0, "yes"), result.stderr
    # As bob (impersonated by admin): ProbeDenyBob refuses bob even the review itself.
    result = server.kubectl("auth", "can-i", "get", "configmaps", "--as", "bob")
    assert result.returncode != 0
    assert 'User "bob" cannot create resource "selfsubjectaccessreviews"' in result.stderr


def test_kubectl_can_i_no(deny_server):
    result = deny_server.kubectl("auth", "can-i", "get", "configmaps", "--as", "alice",
                                 "--as-group", "system:masters")
    assert (result.returncode, result.stdout.strip()) == (0, "yes")
    # Asked by admin for alice through a SubjectAccessReview: no.
    body = post(deny_server, AUTHZ + "/subjectaccessreviews", sar(resourceAttributes={
        "verb": "get", "resource": "configmaps"})).json()
    assert body["status"]["allowed"] is False


def test_selfsubjectrulesreview(server, deny_server):
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
              "spec": {"namespace": "default"}}
    everything = {"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                  "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}
    # Shared server: AlwaysAllow lists everything; ProbeDenyBob cannot list its rules.
    response = post(server, AUTHZ + "/selfsubjectrulesreviews", review, token="alice-token")
    assert response.status_code == 201
    body = response.json()
    assert list(body) == ["kind", "apiVersion", "metadata", "spec", "status"]
    assert body["metadata"] == {"creationTimestamp": None} and body["spec"] == {}
    assert body["status"] == {**everything, "incomplete": True}
    # AlwaysDeny lists nothing, completely; system:masters still gets cluster-admin's rules.
    body = post(deny_server, AUTHZ + "/selfsubjectrulesreviews", review).json()
    assert body["status"] == {**everything, "incomplete": False}

    del review["spec"]["namespace"]
    assert_status(post(server, AUTHZ + "/selfsubjectrulesreviews", review), 400,
                  "BadRequest", "no namespace on request")


def test_kubectl_can_i_list(deny_server):
    result = deny_server.kubectl("auth", "can-i", "--list")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["Resources", "Non-Resource", "URLs", "Resource", "Names",
                                "Verbs"]
    assert lines[1].split() == ["*.*", "[]", "[]", "[*]"]
    assert "incomplete" not in result.stderr


def test_selfsubjectrulesreview_with_rbac_matches_reference(kapiserver_factory, token_file):
    ref = reference("selfsubjectrulesreview-bob.json")
    server = kapiserver_factory(config={"token-auth-file": token_file,
                                        "authorization-mode": "RBAC"})
    response = post(server, ref["request"]["path"], ref["request"]["body"], token="bob-token")
    assert response.status_code == 201
    assert response.json() == ref["response"]["body"]
    result = server.kubectl("auth", "can-i", "create", "selfsubjectreviews.authentication.k8s.io",
                            token="bob-token", user=None)
    assert result.stdout.strip() == "yes"
