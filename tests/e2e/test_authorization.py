"""Authorization end to end: modes in order, system:masters first, upstream 403 wording."""

import json

from kapiserver.testing import assert_status

ECHO = "/apis/probe.kapiserver.test/v1/namespaces/default/echoes/x"


def test_denied_resource_request_has_upstream_message(server):
    response = server.get("/apis/probe.kapiserver.test/v1/namespaces/ref/echoes/cm1",
                          token="bob-token")
    assert_status(response, 403, "Forbidden",
                  'echoes.probe.kapiserver.test "cm1" is forbidden: User "bob" cannot get '
                  'resource "echoes" in API group "probe.kapiserver.test" in the namespace '
                  '"ref": bob is never allowed',
                  {"name": "cm1", "group": "probe.kapiserver.test", "kind": "echoes"})


def test_denied_core_list_matches_reference(server):
    response = server.get("/api/v1/namespaces", token="bob-token")
    assert_status(response, 403, "Forbidden",
                  'namespaces is forbidden: User "bob" cannot list resource "namespaces" in '
                  'API group "" at the cluster scope: bob is never allowed',
                  {"kind": "namespaces"})


def test_denied_non_resource_path(server):
    response = server.get("/healthz", token="bob-token")
    assert_status(response, 403, "Forbidden",
                  'forbidden: User "bob" cannot get path "/healthz": bob is never allowed', {})


def test_subresource_in_message(server):
    response = server.request("PUT", ECHO + "/status", token="bob-token", json={})
    body = assert_status(response, 403, "Forbidden")
    assert 'cannot update resource "echoes/status"' in body["message"]


def test_system_masters_comes_before_every_mode(server):
    # carol is in system:masters through the token file: the DENY mode never sees her.
    assert server.get(ECHO, token="carol-token").status_code == 200


def test_mode_order_first_decision_wins(server):
    assert server.get(ECHO, token="alice-token").status_code == 200


def test_always_deny_with_kubectl(kapiserver_factory):
    server = kapiserver_factory(config={"authorization-mode": "AlwaysDeny"})
    result = server.kubectl("get", "--raw", "/version", user="alice", groups=())
    assert result.returncode != 0
    assert ('Error from server (Forbidden): forbidden: User "alice" cannot get path '
            '"/version": Everything is forbidden.') in result.stderr
    response = server.get("/api/v1/namespaces/ref/configmaps", user="alice")
    assert_status(response, 403, "Forbidden",
                  'configmaps is forbidden: User "alice" cannot list resource "configmaps" in '
                  'API group "" in the namespace "ref": Everything is forbidden.',
                  {"kind": "configmaps"})
    # The admin kubeconfig still works: system:masters is always first.
    assert server.kubectl("get", "--raw", "/readyz").stdout == "ok"


def test_impersonation_allowed(server):
    response = server.get(ECHO, user="admin", groups=["system:masters"], headers={
        "Impersonate-User": "jane", "Impersonate-Group": "team-a",
        "Impersonate-Extra-Scopes": "view", "Impersonate-Uid": "u-1"})
    body = response.json()
    assert body["user"] == {"name": "jane", "uid": "u-1",
                            "groups": ["team-a", "system:authenticated"],
                            "extra": {"scopes": ["view"]}}
    assert body["authenticatedUser"] == "admin"


def test_impersonation_with_kubectl_as(server):
    result = server.kubectl("get", "--raw", ECHO, "--as", "jane", "--as-group", "team-a",
                            check=True)
    assert '"jane"' in result.stdout and "team-a" in result.stdout


def test_impersonating_several_groups_keeps_each_value(server):
    # kubectl sends one Impersonate-Group header per group; a comma inside a group name
    # (an LDAP DN) must not split it, as the WSGI environ's joined value would.
    result = server.kubectl("get", "--raw", ECHO, "--as", "jane", "--as-group", "team-a",
                            "--as-group", "cn=ops,dc=example,dc=com", check=True)
    assert json.loads(result.stdout)["user"]["groups"] == [
        "team-a", "cn=ops,dc=example,dc=com", "system:authenticated"]


def test_impersonating_a_service_account_implies_its_groups(server):
    body = server.get(ECHO, user="admin", groups=["system:masters"], headers={
        "Impersonate-User": "system:serviceaccount:ns1:robot"}).json()
    assert body["user"]["groups"] == ["system:serviceaccounts", "system:serviceaccounts:ns1",
                                      "system:authenticated"]


def test_impersonation_refused(server):
    response = server.get(ECHO, token="bob-token", headers={"Impersonate-User": "jane"})
    assert_status(response, 403, "Forbidden",
                  'users "jane" is forbidden: User "bob" cannot impersonate resource "users" '
                  'in API group "" at the cluster scope: bob is never allowed',
                  {"name": "jane", "kind": "users"})
    result = server.kubectl("get", "--raw", ECHO, "--as", "jane", user=None, token="bob-token")
    assert result.returncode != 0 and "cannot impersonate" in result.stderr


def test_impersonating_groups_without_user_is_an_error(server):
    response = server.get(ECHO, user="admin", groups=["system:masters"],
                          headers={"Impersonate-Group": "team-a"})
    assert response.status_code == 500
    assert "without impersonating a user" in response.text
