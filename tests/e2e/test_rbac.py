"""RBAC end to end: the API group, the authorizer, the bootstrap policy, escalation checks
and aggregation, on a real server (2 workers, ``--authorization-mode RBAC``) with kubectl."""

import json
import time

import pytest

from kapiserver.testing import KapiserverProcess, assert_status
from tests.support.reference import transcript

GROUP = "rbac.authorization.k8s.io"
RBAC = f"/apis/{GROUP}/v1"
TABLE = ("application/json;as=Table;v=v1;g=meta.k8s.io,"
         "application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json")
BOB_GROUPS = ("devs",)


def reference(name):
    return transcript(name)["response"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    process = KapiserverProcess(str(tmp_path_factory.mktemp("rbac")),
                                {"authorization-mode": ["RBAC"]}, workers=2)
    process.start()
    yield process
    process.stop()


def admin(server, method, path, body=None):
    response = server.request(method, path, user="admin", groups=["system:masters"],
                              json=body)
    assert response.status_code < 300, response.text
    return response.json()


def eventually(check, timeout=10.0):
    """Wait until ``check()`` holds on several requests in a row (both workers' indexes)."""
    deadline, streak = time.monotonic() + timeout, 0
    while time.monotonic() < deadline:
        streak = streak + 1 if check() else 0
        if streak >= 6:
            return
        time.sleep(0.02)
    raise AssertionError("condition never held")


def namespace(server, name):
    admin(server, "POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    return name


def bind(server, ns, name, kind, role, subjects):
    subjects = [{"kind": k, "name": n, **({"apiGroup": GROUP} if k != "ServiceAccount"
                                          else {"namespace": ns})} for k, n in subjects]
    body = {"metadata": {"name": name}, "subjects": subjects,
            "roleRef": {"apiGroup": GROUP, "kind": kind, "name": role}}
    path = f"{RBAC}/namespaces/{ns}/rolebindings" if ns else f"{RBAC}/clusterrolebindings"
    return admin(server, "POST", path, body)


def status_of(server, method, path, user, groups=(), body=None):
    return server.request(method, path, user=user, groups=groups, json=body).status_code


# -- the API group ---------------------------------------------------------------------------

def test_discovery_matches_reference(server):
    for name, path in (("discovery-group-rbac.authorization.k8s.io.json", f"/apis/{GROUP}"),
                       ("discovery-groupversion-rbac.authorization.k8s.io-v1.json", RBAC)):
        assert admin(server, "GET", path) == reference(name)["body"]
    aggregated = server.get("/apis", user="admin", groups=["system:masters"], headers={
        "Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"})
    mine = [g for g in aggregated.json()["items"] if g["metadata"]["name"] == GROUP]
    expected = [g for g in reference("aggregated-discovery-apis.json")["body"]["items"]
                if g["metadata"]["name"] == GROUP]
    assert mine == expected


def test_tables_match_reference(server):
    for name, path in (("table-clusterroles.json", f"{RBAC}/clusterroles"),
                       ("table-clusterrolebindings.json", f"{RBAC}/clusterrolebindings"),
                       ("table-roles.json", f"{RBAC}/namespaces/kube-system/roles")):
        expected = reference(name)["body"]
        table = server.get(path, user="admin", groups=["system:masters"],
                           headers={"Accept": TABLE}).json()
        assert table["columnDefinitions"] == expected["columnDefinitions"], name
        assert [r["cells"][0] for r in table["rows"]] == \
            [r["cells"][0] for r in expected["rows"]], name
        if "clusterrolebindings" in path:
            # Name, Role, Age, Users, Groups, ServiceAccounts: all but the age agree.
            cells = {r["cells"][0]: r["cells"][:2] + r["cells"][3:] for r in table["rows"]}
            assert cells == {r["cells"][0]: r["cells"][:2] + r["cells"][3:]
                             for r in expected["rows"]}


def test_kubectl_get_clusterroles(server):
    result = server.kubectl("get", "clusterroles")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["NAME", "CREATED", "AT"]
    assert "cluster-admin" in [line.split()[0] for line in lines[1:]]
    wide = server.kubectl("get", "clusterrolebinding", "cluster-admin", "-o", "wide")
    assert wide.stdout.splitlines()[1].split()[:3] == ["cluster-admin",
                                                       "ClusterRole/cluster-admin", wide.stdout
                                                       .splitlines()[1].split()[2]]
    assert "system:masters" in wide.stdout


def test_bootstrap_policy_matches_reference(server):
    assert server.get("/readyz/poststarthook/rbac/bootstrap-roles", user="admin",
                      groups=["system:masters"]).text == "ok"
    for resource, name in (("clusterroles", "bootstrap-clusterroles.json"),
                           ("clusterrolebindings", "bootstrap-clusterrolebindings.json"),
                           ("roles", "bootstrap-roles-all-namespaces.json"),
                           ("rolebindings", "bootstrap-rolebindings-all-namespaces.json")):
        expected = {(i["metadata"].get("namespace"), i["metadata"]["name"]): i
                    for i in reference(name)["body"]["items"]}
        served = {(i["metadata"].get("namespace"), i["metadata"]["name"]): i
                  for i in admin(server, "GET", f"{RBAC}/{resource}")["items"]}
        assert set(expected) <= set(served), resource
        for key, want in expected.items():
            got = served[key]
            assert got["metadata"]["labels"] == want["metadata"]["labels"]
            assert got["metadata"]["annotations"] == want["metadata"]["annotations"]
            for field in ("subjects", "roleRef", "aggregationRule"):
                assert got.get(field) == want.get(field), (key, field)
            if not want.get("aggregationRule"):
                assert got.get("rules") == want.get("rules"), key


def test_validation_and_immutable_role_ref(server):
    response = server.request("POST", f"{RBAC}/clusterroles", user="admin",
                              groups=["system:masters"],
                              json={"metadata": {"name": "bad"}, "rules": [{"verbs": ["get"]}]})
    assert_status(response, 422, "Invalid",
                  'ClusterRole.rbac.authorization.k8s.io "bad" is invalid: [rules[0].apiGroups: '
                  "Required value: resource rules must supply at least one api group, "
                  "rules[0].resources: Required value: resource rules must supply at least one "
                  "resource]")
    bind(server, "", "immutable", "ClusterRole", "view", [("User", "x")])
    response = server.request("PATCH", f"{RBAC}/clusterrolebindings/immutable", user="admin",
                              groups=["system:masters"],
                              headers={"Content-Type": "application/merge-patch+json"},
                              data=json.dumps({"roleRef": {"name": "edit"}}))
    assert_status(response, 422, "Invalid",
                  'ClusterRoleBinding.rbac.authorization.k8s.io "immutable" is invalid: roleRef: '
                  'Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", '
                  'Kind:"ClusterRole", Name:"edit"}: cannot change roleRef')


# -- the authorizer ----------------------------------------------------------------------------

def test_view_in_one_namespace_only(server):
    ns, other = namespace(server, "view-here"), namespace(server, "view-elsewhere")
    for n in (ns, other):
        admin(server, "POST", f"/api/v1/namespaces/{n}/configmaps",
              {"metadata": {"name": "cm1"}, "data": {"k": "v"}})
    alice = {"user": "alice"}
    assert_status(server.get(f"/api/v1/namespaces/{ns}/configmaps", **alice), 403, "Forbidden",
                  'configmaps is forbidden: User "alice" cannot list resource "configmaps" in '
                  f'API group "" in the namespace "{ns}"', {"kind": "configmaps"})
    bind(server, ns, "alice-view", "ClusterRole", "view", [("User", "alice")])
    eventually(lambda: status_of(server, "GET", f"/api/v1/namespaces/{ns}/configmaps",
                                 "alice") == 200)
    result = server.kubectl("-n", ns, "get", "configmap", "cm1", "-o", "name", user="alice",
                            groups=())
    assert result.stdout.strip() == "configmap/cm1", result.stderr
    # Writing, another namespace, and cluster-scoped reads stay refused, worded as upstream.
    assert_status(server.request("POST", f"/api/v1/namespaces/{ns}/configmaps", json={
        "metadata": {"name": "new"}}, **alice), 403, "Forbidden",
        'configmaps is forbidden: User "alice" cannot create resource "configmaps" in API '
        f'group "" in the namespace "{ns}"', {"kind": "configmaps"})
    assert_status(server.get(f"/api/v1/namespaces/{other}/configmaps/cm1", **alice), 403,
                  "Forbidden", 'configmaps "cm1" is forbidden: User "alice" cannot get resource '
                  f'"configmaps" in API group "" in the namespace "{other}"',
                  {"name": "cm1", "kind": "configmaps"})
    expected = reference("error-forbidden-cluster.json")
    response = server.get("/api/v1/namespaces", **alice)
    assert response.status_code == expected["status"]
    assert response.json() == expected["body"]
    result = server.kubectl("get", "secrets", "-n", ns, user="alice", groups=())
    assert ('Error from server (Forbidden): secrets is forbidden: User "alice" cannot list '
            f'resource "secrets" in API group "" in the namespace "{ns}"') in result.stderr


def test_resource_names_subresources_and_urls(server):
    ns = namespace(server, "fine-grained")
    for name in ("cm1", "cm2"):
        admin(server, "POST", f"/api/v1/namespaces/{ns}/configmaps",
              {"metadata": {"name": name}})
    admin(server, "POST", f"{RBAC}/namespaces/{ns}/roles", {
        "metadata": {"name": "one-configmap"},
        "rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["configmaps"],
                   "resourceNames": ["cm1"]}]})
    admin(server, "POST", f"{RBAC}/clusterroles", {
        "metadata": {"name": "status-and-logs"},
        "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["*/status"]},
                  {"verbs": ["get"], "nonResourceURLs": ["/logs/*"]}]})
    bind(server, ns, "carol-one", "Role", "one-configmap", [("User", "carol")])
    bind(server, "", "carol-status", "ClusterRole", "status-and-logs", [("User", "carol")])
    base = f"/api/v1/namespaces/{ns}"
    eventually(lambda: status_of(server, "GET", f"{base}/configmaps/cm1", "carol") == 200)
    assert status_of(server, "GET", f"{base}/configmaps/cm2", "carol") == 403
    assert status_of(server, "GET", f"{base}/configmaps", "carol") == 403  # list has no name
    eventually(lambda: status_of(server, "GET", f"{base}/status", "carol") == 200)
    assert_status(server.get(base, user="carol"), 403, "Forbidden",
                  f'namespaces "{ns}" is forbidden: User "carol" cannot get resource '
                  f'"namespaces" in API group "" in the namespace "{ns}"',
                  {"name": ns, "kind": "namespaces"})
    assert status_of(server, "GET", "/logs/x", "carol") != 403
    assert_status(server.get("/logs/x", user="dave"), 403, "Forbidden",
                  'forbidden: User "dave" cannot get path "/logs/x"', {})


def test_groups_and_service_accounts(server):
    ns = namespace(server, "by-group")
    bind(server, ns, "devs-view", "ClusterRole", "view",
         [("Group", "devs"), ("ServiceAccount", "robot")])
    path = f"/api/v1/namespaces/{ns}/configmaps"
    eventually(lambda: status_of(server, "GET", path, "erin", ("devs",)) == 200)
    eventually(lambda: status_of(server, "GET", path, f"system:serviceaccount:{ns}:robot")
               == 200)
    assert status_of(server, "GET", path, "erin") == 403
    assert status_of(server, "GET", path, "system:serviceaccount:other:robot") == 403


def sar_reason(server, user, groups, namespace, verb, resource):
    review = admin(server, "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
        "spec": {"user": user, "groups": list(groups), "resourceAttributes": {
            "namespace": namespace, "verb": verb, "resource": resource}}})
    return review["status"]


def test_subject_access_review_names_what_allowed_it_as_rbac_words_it(server):
    ns = namespace(server, "reasons")
    bind(server, ns, "b", "ClusterRole", "view", [("User", "x"), ("Group", "devs")])
    bind(server, ns, "robots", "ClusterRole", "view", [("ServiceAccount", "robot")])
    bind(server, "", "cluster-readers", "ClusterRole", "view", [("User", "reader")])
    eventually(lambda: sar_reason(server, "gail", ["devs"], ns, "get", "configmaps")
               .get("allowed") is True)
    assert sar_reason(server, "gail", ["devs"], ns, "get", "configmaps") == {
        "allowed": True,
        "reason": f'RBAC: allowed by RoleBinding "b/{ns}" of ClusterRole "view" to Group "devs"'}
    eventually(lambda: sar_reason(server, f"system:serviceaccount:{ns}:robot", [], ns, "list",
                                  "pods").get("allowed") is True)
    assert sar_reason(server, f"system:serviceaccount:{ns}:robot", [], ns, "list", "pods")[
        "reason"] == (f'RBAC: allowed by RoleBinding "robots/{ns}" of ClusterRole "view" to '
                      f'ServiceAccount "robot/{ns}"')
    eventually(lambda: sar_reason(server, "reader", [], "default", "list", "pods")
               .get("allowed") is True)
    assert sar_reason(server, "reader", [], "default", "list", "pods")["reason"] == (
        'RBAC: allowed by ClusterRoleBinding "cluster-readers" of ClusterRole "view" to '
        'User "reader"')


def test_missing_role_reason(server):
    bind(server, "", "dangling", "ClusterRole", "no-such-role", [("User", "frank")])
    eventually(lambda: "RBAC:" in server.get("/api/v1/namespaces", user="frank").text)
    assert_status(server.get("/api/v1/namespaces", user="frank"), 403, "Forbidden",
                  'namespaces is forbidden: User "frank" cannot list resource "namespaces" in '
                  'API group "" at the cluster scope: RBAC: clusterrole.rbac.authorization.k8s.io '
                  '"no-such-role" not found')


# -- escalation --------------------------------------------------------------------------------

def test_edit_cannot_escalate_without_bind(server):
    ns = namespace(server, "escalation")
    bind(server, ns, "devs-edit", "ClusterRole", "edit", [("Group", "devs")])
    bind(server, "", "devs-rbac-writer", "ClusterRole", "rbac-writer", [("Group", "devs")])
    admin(server, "POST", f"{RBAC}/clusterroles", {
        "metadata": {"name": "rbac-writer"},
        "rules": [{"verbs": ["create", "update"], "apiGroups": [GROUP],
                   "resources": ["roles", "rolebindings", "clusterroles"]}]})
    cms = f"/api/v1/namespaces/{ns}/configmaps"
    eventually(lambda: status_of(server, "GET", cms, "bob", BOB_GROUPS) == 200)
    result = server.kubectl("-n", ns, "create", "configmap", "made-by-bob",
                            "--from-literal=a=b", user="bob", groups=BOB_GROUPS)
    assert result.returncode == 0, result.stderr

    binding = {"metadata": {"name": "bob-admin"},
               "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": "admin"},
               "subjects": [{"kind": "User", "apiGroup": GROUP, "name": "bob"}]}
    eventually(lambda: "attempting to grant" in server.request(
        "POST", f"{RBAC}/namespaces/{ns}/rolebindings", user="bob", groups=BOB_GROUPS,
        json=binding).text)
    response = server.request("POST", f"{RBAC}/namespaces/{ns}/rolebindings", user="bob",
                              groups=BOB_GROUPS, json=binding)
    body = assert_status(response, 403, "Forbidden", details={
        "name": "bob-admin", "group": GROUP, "kind": "rolebindings"})
    head, _, missing = body["message"].partition("\n")
    assert head == ('rolebindings.rbac.authorization.k8s.io "bob-admin" is forbidden: user '
                    '"bob" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC '
                    'permissions not currently held:')
    # admin's rules that neither edit nor rbac-writer give him, compacted and sorted.
    assert missing.split("\n") == [
        '{APIGroups:["authorization.k8s.io"], Resources:["localsubjectaccessreviews"], '
        'Verbs:["create"]}',
        '{APIGroups:["rbac.authorization.k8s.io"], Resources:["rolebindings"], '
        'Verbs:["delete" "deletecollection" "get" "list" "patch" "watch"]}',
        '{APIGroups:["rbac.authorization.k8s.io"], Resources:["roles"], '
        'Verbs:["delete" "deletecollection" "get" "list" "patch" "watch"]}']
    result = server.kubectl("-n", ns, "create", "rolebinding", "bob-admin2",
                            "--clusterrole=admin", "--user=bob", user="bob", groups=BOB_GROUPS)
    assert result.returncode != 0
    assert ('error: failed to create rolebinding: rolebindings.rbac.authorization.k8s.io '
            '"bob-admin2" is forbidden: user "bob"') in result.stderr

    # A role granting what bob lacks is refused, one missing rule a line, as upstream.
    role = {"metadata": {"name": "node-maker"},
            "rules": [{"verbs": ["create"], "apiGroups": [""], "resources": ["nodes"]},
                      {"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]}]}
    assert_status(server.request("POST", f"{RBAC}/namespaces/{ns}/roles", user="bob",
                                 groups=BOB_GROUPS, json=role), 403, "Forbidden",
                  'roles.rbac.authorization.k8s.io "node-maker" is forbidden: user "bob" '
                  '(groups=["devs" "system:authenticated"]) is attempting to grant RBAC '
                  'permissions not currently held:\n{APIGroups:[""], Resources:["nodes"], '
                  'Verbs:["create"]}')
    assert_status(server.request("POST", f"{RBAC}/clusterroles", user="bob", groups=BOB_GROUPS,
                                 json={"metadata": {"name": "gatherer"}, "aggregationRule": {
                                     "clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]}}),
                  403, "Forbidden", 'clusterroles.rbac.authorization.k8s.io "gatherer" is '
                  'forbidden: must have cluster-admin privileges to use the aggregationRule')
    # What bob holds he may grant.
    role["rules"] = role["rules"][1:]
    assert status_of(server, "POST", f"{RBAC}/namespaces/{ns}/roles", "bob", BOB_GROUPS,
                     role) == 201

    # "bind" on the admin ClusterRole lets him bind it without holding it.
    admin(server, "POST", f"{RBAC}/clusterroles", {
        "metadata": {"name": "bind-admin"},
        "rules": [{"verbs": ["bind"], "apiGroups": [GROUP], "resources": ["clusterroles"],
                   "resourceNames": ["admin"]}]})
    bind(server, ns, "bob-may-bind", "ClusterRole", "bind-admin", [("User", "bob")])
    eventually(lambda: status_of(server, "POST", f"{RBAC}/namespaces/{ns}/rolebindings", "bob",
                                 BOB_GROUPS, {**binding, "metadata": {
                                     "generateName": "bob-admin-"}}) == 201)
    # system:masters is never checked.
    assert admin(server, "POST", f"{RBAC}/namespaces/{ns}/rolebindings", {
        **binding, "metadata": {"name": "by-admin"}})["roleRef"]["name"] == "admin"


# -- aggregation -------------------------------------------------------------------------------

def test_aggregated_roles_pick_up_labelled_cluster_roles(server):
    rule = {"verbs": ["get", "list"], "apiGroups": ["example.com"], "resources": ["widgets"]}
    admin(server, "POST", f"{RBAC}/clusterroles", {
        "metadata": {"name": "widgets-view",
                     "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
        "rules": [rule]})
    admin(server, "POST", f"{RBAC}/clusterroles", {
        "metadata": {"name": "my-aggregate"},
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"team": "a"}}]}})
    admin(server, "POST", f"{RBAC}/clusterroles", {
        "metadata": {"name": "team-a-cms", "labels": {"team": "a"}},
        "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]}]})
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        view = admin(server, "GET", f"{RBAC}/clusterroles/view")
        admin_role = admin(server, "GET", f"{RBAC}/clusterroles/admin")
        mine = admin(server, "GET", f"{RBAC}/clusterroles/my-aggregate")
        if rule in (view.get("rules") or []) and rule in (admin_role.get("rules") or []) \
                and mine.get("rules"):
            break
        time.sleep(0.05)
    assert rule in view["rules"]  # view → edit → admin, as upstream's labels chain them
    assert rule in admin_role["rules"]
    assert mine["rules"] == [{"verbs": ["get"], "apiGroups": [""],
                              "resources": ["configmaps"]}]


def test_readme_tour(kapiserver_factory, tmp_path):
    """The README's RBAC tour, with its token file."""
    tokens = tmp_path / "tokens.csv"
    tokens.write_text('alice-token,alice,u1,"devs"\n')
    server = kapiserver_factory(config={"authorization-mode": ["RBAC"],
                                        "token-auth-file": str(tokens)})
    assert "cluster-admin" in server.kubectl("get", "clusterroles").stdout
    server.kubectl("create", "namespace", "team", check=True)
    server.kubectl("-n", "team", "create", "rolebinding", "devs-admin", "--clusterrole=admin",
                   "--group=devs", check=True)
    alice = {"token": "alice-token", "user": None}
    result = server.kubectl("-n", "team", "create", "configmap", "c", "--from-literal=a=b",
                            **alice)
    assert result.returncode == 0, result.stderr
    assert ('Error from server (Forbidden): namespaces is forbidden: User "alice" cannot list '
            'resource "namespaces"') in server.kubectl("get", "ns", **alice).stderr
    result = server.kubectl("-n", "team", "create", "rolebinding", "me",
                            "--clusterrole=cluster-admin", "--user=alice", **alice)
    assert result.stderr == (
        'error: failed to create rolebinding: rolebindings.rbac.authorization.k8s.io "me" is '
        'forbidden: user "alice" (groups=["devs" "system:authenticated"]) is attempting to '
        'grant RBAC permissions not currently held:\n'
        '{APIGroups:["*"], Resources:["*"], Verbs:["*"]}\n'
        '{NonResourceURLs:["*"], Verbs:["*"]}\n')


def test_self_subject_rules_review_matches_reference(server):
    """``rules_for`` as the SelfSubjectRulesReview API shows it: a user with no grants of
    his own (the reference's bob; here another name, as other tests bind bob's group)."""
    expected = reference("selfsubjectrulesreview-bob.json")
    ns = namespace(server, "rules-review")
    response = server.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
                              user="bob2", groups=("reviewers",), json={
                                  "apiVersion": "authorization.k8s.io/v1",
                                  "kind": "SelfSubjectRulesReview", "spec": {"namespace": ns}})
    assert response.status_code == expected["status"], response.text
    assert response.json()["status"] == expected["body"]["status"]


def test_impersonation_is_authorized_by_rbac(server):
    headers = {"Impersonate-User": "alice"}
    assert_status(server.get("/api/v1/namespaces", user="ops", headers=headers), 403,
                  "Forbidden", 'users "alice" is forbidden: User "ops" cannot impersonate '
                  'resource "users" in API group "" at the cluster scope',
                  {"name": "alice", "kind": "users"})
    admin(server, "POST", f"{RBAC}/clusterroles", {
        "metadata": {"name": "impersonate-alice"},
        "rules": [{"verbs": ["impersonate"], "apiGroups": [""], "resources": ["users"],
                   "resourceNames": ["alice"]}]})
    bind(server, "", "ops-impersonates", "ClusterRole", "impersonate-alice", [("User", "ops")])
    # Now ops acts as alice, with alice's permissions (none on namespaces).
    eventually(lambda: 'User "alice"' in server.get("/api/v1/namespaces", user="ops",
                                                    headers=headers).json()["message"])
    result = server.kubectl("get", "ns", "--as", "alice", user="ops", groups=())
    assert ('Error from server (Forbidden): namespaces is forbidden: User "alice" cannot list '
            'resource "namespaces" in API group "" at the cluster scope') in result.stderr
    assert status_of(server, "GET", "/api/v1/namespaces", "ops") == 403
