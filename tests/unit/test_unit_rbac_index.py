"""The RBAC index, authorizer, validation, bootstrap reconciliation and aggregation,
in-process over a real SQLite store and watch cache (no HTTP)."""

import json
import os
import threading
import time

import pytest

from kapiserver import errors
from kapiserver.authentication import UserInfo
from kapiserver.authorization import Attributes, Decision
from kapiserver.registry.store import RegistryStore
from kapiserver.storage.sqlite import SQLiteStore
from kapiserver.storage.watchcache import WatchCache
from kapiserver_plugins.rbac import aggregation, bootstrap, reference_policy
from kapiserver_plugins.rbac.authorizer import RBACAuthorizer, index_for
from kapiserver_plugins.rbac.resources import (CLUSTERROLEBINDINGS, CLUSTERROLES,
                                               ROLEBINDINGS, ROLES, BindingStrategy,
                                               RoleStrategy)

GROUP = "rbac.authorization.k8s.io"
REFERENCE = "/work/shared/reference"


class Server:
    """What the RBAC plugin reads of an APIServer."""

    def __init__(self, path):
        self.storage = SQLiteStore(path)
        self.watch_cache = WatchCache(self.storage)
        self.stopping = threading.Event()
        self.registries = {}
        for spec, strategy in ((ROLES, RoleStrategy), (CLUSTERROLES, RoleStrategy),
                               (ROLEBINDINGS, BindingStrategy),
                               (CLUSTERROLEBINDINGS, BindingStrategy)):
            self.registries[(GROUP, spec.resource)] = RegistryStore(
                spec, strategy(spec), self.storage, self.watch_cache.notify)

    def create(self, resource, obj, namespace=""):
        return self.registries[(GROUP, resource)].create(obj, namespace)

    def close(self):
        self.stopping.set()
        self.watch_cache.close()
        # The feed thread may be reading the store: closing it under that thread crashes.
        self.watch_cache.thread.join(5)
        self.storage.close()


@pytest.fixture
def server(tmp_path):
    s = Server(str(tmp_path / "db.sqlite"))
    yield s
    s.close()


def role(name, rules, namespace=None, labels=None, aggregate=None):
    meta = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = labels
    obj = {"metadata": meta, "rules": rules}
    if aggregate:
        obj["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": aggregate}]}
    return obj


def binding(name, kind, role_name, subjects, namespace=None):
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"metadata": meta, "subjects": subjects,
            "roleRef": {"apiGroup": GROUP, "kind": kind, "name": role_name}}


def user(name, *groups):
    return UserInfo(name, groups=tuple(groups) + ("system:authenticated",))


def ask(authorizer, who, verb, res, namespace="", name="", group="", subresource=""):
    return authorizer.authorize(Attributes(user=who, verb=verb, resource_request=True,
                                           namespace=namespace, api_group=group,
                                           resource=res, name=name, subresource=subresource))


def wait_until(predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False


READ_CM = [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["configmaps"]}]


def test_bindings_by_user_group_and_service_account(server):
    server.create("clusterroles", role("reader", READ_CM))
    server.create("roles", role("writer", [{"verbs": ["create"], "apiGroups": [""],
                                            "resources": ["configmaps"]}], "team"), "team")
    server.create("rolebindings", binding("alice-reads", "ClusterRole", "reader", [
        {"kind": "User", "apiGroup": GROUP, "name": "alice"}], "team"), "team")
    server.create("rolebindings", binding("devs-write", "Role", "writer", [
        {"kind": "Group", "apiGroup": GROUP, "name": "devs"},
        {"kind": "ServiceAccount", "name": "robot"}], "team"), "team")
    authorizer = RBACAuthorizer(server)
    alice, bob, robot = user("alice"), user("bob", "devs"), user("system:serviceaccount:team:robot")
    assert ask(authorizer, alice, "get", "configmaps", "team")[0] is Decision.ALLOW
    assert ask(authorizer, alice, "get", "configmaps", "other") == (Decision.NO_OPINION, "")
    assert ask(authorizer, alice, "create", "configmaps", "team")[0] is Decision.NO_OPINION
    assert ask(authorizer, bob, "create", "configmaps", "team")[0] is Decision.ALLOW
    assert ask(authorizer, robot, "create", "configmaps", "team")[0] is Decision.ALLOW
    assert ask(authorizer, user("system:serviceaccount:other:robot"), "create",
               "configmaps", "team")[0] is Decision.NO_OPINION


def test_index_follows_changes_and_reports_missing_roles(server):
    authorizer = RBACAuthorizer(server)
    alice = user("alice")
    assert ask(authorizer, alice, "list", "configmaps", "ns")[0] is Decision.NO_OPINION
    server.create("clusterrolebindings", binding("alice", "ClusterRole", "later", [
        {"kind": "User", "apiGroup": GROUP, "name": "alice"}]))
    assert wait_until(lambda: ask(authorizer, alice, "list", "configmaps", "ns")[1])
    assert ask(authorizer, alice, "list", "configmaps", "ns") == (
        Decision.NO_OPINION, 'RBAC: clusterrole.rbac.authorization.k8s.io "later" not found')
    server.create("clusterroles", role("later", READ_CM))
    assert wait_until(lambda: ask(authorizer, alice, "list", "configmaps", "ns")[0]
                      is Decision.ALLOW)
    server.registries[(GROUP, "clusterrolebindings")].delete("", "alice")
    assert wait_until(lambda: ask(authorizer, alice, "list", "configmaps", "ns")[0]
                      is Decision.NO_OPINION)
    assert not index_for(server).cluster_by_subject


def test_rules_for(server):
    server.create("clusterroles", role("discovery", [{"verbs": ["get"],
                                                      "nonResourceURLs": ["/api", "/api/*"]}]))
    server.create("clusterrolebindings", binding("discovery", "ClusterRole", "discovery", [
        {"kind": "Group", "apiGroup": GROUP, "name": "system:authenticated"}]))
    server.create("roles", role("named", [{"verbs": ["get"], "apiGroups": [""],
                                           "resources": ["secrets"],
                                           "resourceNames": ["s1"]}], "ns"), "ns")
    server.create("rolebindings", binding("named", "Role", "named", [
        {"kind": "User", "apiGroup": GROUP, "name": "bob"}], "ns"), "ns")
    server.create("rolebindings", binding("dangling", "Role", "gone", [
        {"kind": "User", "apiGroup": GROUP, "name": "bob"}], "ns"), "ns")
    authorizer = RBACAuthorizer(server)
    assert authorizer.rules_for(user("bob"), "ns") == (
        [{"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"],
          "resourceNames": ["s1"]}],
        [{"verbs": ["get"], "nonResourceURLs": ["/api", "/api/*"]}],
        False, 'role.rbac.authorization.k8s.io "gone" not found')
    assert authorizer.rules_for(user("bob"), "") == (
        [], [{"verbs": ["get"], "nonResourceURLs": ["/api", "/api/*"]}], False, "")


def test_validation_messages(server):
    roles = server.registries[(GROUP, "roles")]
    with pytest.raises(errors.Invalid) as err:
        roles.create(role("bad/name", [{"verbs": [], "nonResourceURLs": ["/x"],
                                        "resources": ["pods"]}], "ns"), "ns")
    assert err.value.message == (
        'Role.rbac.authorization.k8s.io "bad/name" is invalid: [metadata.name: Invalid value: '
        '"bad/name": may not contain \'/\', rules[0].verbs: Required value: verbs must contain '
        'at least one value, rules[0].nonResourceURLs: Invalid value: []string{"/x"}: '
        'namespaced rules cannot apply to non-resource URLs, rules[0].nonResourceURLs: '
        'Invalid value: []string{"/x"}: rules cannot apply to both regular resources and '
        'non-resource URLs]')
    with pytest.raises(errors.Invalid) as err:
        server.create("clusterroles", role("r", [{"verbs": ["get"]}]))
    assert err.value.message.endswith(
        "[rules[0].apiGroups: Required value: resource rules must supply at least one api "
        "group, rules[0].resources: Required value: resource rules must supply at least one "
        "resource]")
    crbs = server.registries[(GROUP, "clusterrolebindings")]
    with pytest.raises(errors.Invalid) as err:
        crbs.create(binding("b", "Role", "r", [{"kind": "ServiceAccount", "name": "sa"},
                                               {"kind": "Robot", "name": "x"},
                                               {"kind": "User", "name": "u", "apiGroup": "x"}]))
    assert err.value.message == (
        'ClusterRoleBinding.rbac.authorization.k8s.io "b" is invalid: [roleRef.kind: '
        'Unsupported value: "Role": supported values: "ClusterRole", subjects[0].namespace: '
        'Required value, subjects[1].kind: Unsupported value: "Robot": supported values: '
        '"ServiceAccount", "User", "Group", subjects[2].apiGroup: Unsupported value: "x": '
        'supported values: "rbac.authorization.k8s.io"]')
    created = crbs.create({"metadata": {"name": "ok"}, "roleRef": {"kind": "ClusterRole",
                                                                   "name": "view"},
                           "subjects": [{"kind": "Group", "name": "g"}]})
    assert created["roleRef"]["apiGroup"] == GROUP  # defaulted
    assert created["subjects"][0]["apiGroup"] == GROUP
    changed = dict(created, roleRef={"apiGroup": GROUP, "kind": "ClusterRole", "name": "edit"})
    with pytest.raises(errors.Invalid) as err:
        crbs.update("", "ok", changed)
    assert err.value.message == (
        'ClusterRoleBinding.rbac.authorization.k8s.io "ok" is invalid: roleRef: Invalid value: '
        'rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: '
        'cannot change roleRef')


def test_bootstrap_reconcile(server):
    server.create("clusterroles", role("system:discovery", [], labels={"mine": "yes"}))
    kept = role("system:basic-user", [])
    kept["metadata"]["annotations"] = {bootstrap.AUTOUPDATE: "false"}
    server.create("clusterroles", kept)
    server.create("clusterrolebindings", binding("system:discovery", "ClusterRole",
                                                 "system:discovery", [
        {"kind": "User", "apiGroup": GROUP, "name": "extra"}]))
    bootstrap.ensure_bootstrap_policy(server)
    bootstrap.ensure_bootstrap_policy(server)  # a second worker: nothing left to do
    roles = server.registries[(GROUP, "clusterroles")]
    discovery = roles.get("", "system:discovery")
    assert discovery["metadata"]["labels"] == {"mine": "yes",
                                               "kubernetes.io/bootstrapping": "rbac-defaults"}
    assert {"verbs": ["get"], "nonResourceURLs": ["/healthz"]} in discovery["rules"]
    assert roles.get("", "system:basic-user").get("rules") == []
    crb = server.registries[(GROUP, "clusterrolebindings")].get("", "system:discovery")
    assert [s["name"] for s in crb["subjects"]] == ["extra", "system:authenticated"]
    policy = reference_policy.load()
    assert len(roles.list("")["items"]) == len(policy["clusterroles"])


def test_bootstrap_race_between_workers(server):
    threads = [threading.Thread(target=bootstrap.ensure_bootstrap_policy, args=(server,))
               for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    policy = reference_policy.load()
    for resource in policy:
        listed = server.registries[(GROUP, resource)].list("")["items"]
        assert len(listed) == len(policy[resource]), resource


def test_aggregated_rules():
    roles = {"agg": role("agg", None, aggregate={"a": "1"}),
             "x": role("x", READ_CM, labels={"a": "1"}),
             "y": role("y", READ_CM + [{"verbs": ["get"], "nonResourceURLs": ["/x"]}],
                       labels={"a": "1"}),
             "z": role("z", [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}])}
    assert aggregation.aggregated_rules(roles["agg"], roles) == READ_CM + [
        {"verbs": ["get"], "nonResourceURLs": ["/x"]}]
    assert aggregation.aggregated_rules(roles["x"], roles) is None


@pytest.mark.skipif(not os.path.isdir(REFERENCE), reason="no reference transcripts")
def test_shipped_policy_matches_reference():
    assert reference_policy.derive(REFERENCE) == reference_policy.load()
    with open(os.path.join(REFERENCE, "bootstrap-clusterroles.json")) as f:
        names = {i["metadata"]["name"] for i in json.load(f)["response"]["body"]["items"]}
    assert names == {r["metadata"]["name"] for r in reference_policy.load()["clusterroles"]}


def test_benchmark_runs(capsys):
    from tests.benchmarks import rbac

    assert rbac.main(["--bindings", "40", "--duration", "0.01"]) == 0
    out = capsys.readouterr().out
    assert "RBAC authorization with 40 RoleBindings" in out
    assert out.count("ALLOW") >= 2
