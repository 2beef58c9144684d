"""Two kapiservers: the wardle extension server behind the main one's aggregator.

The extension serves ``wardle.example.com`` (the example plugin) with delegated
authentication and authorization: it trusts the main server's front-proxy certificate
(requestheader) and asks the main server about tokens and permissions (TokenReview,
SubjectAccessReview). The main server runs RBAC and fronts the extension through an
APIService. Everything below is driven through the main server with kubectl.
"""

import hashlib
import json
import os
import time

import pytest
import requests
import yaml

from kapiserver.testing import assert_status
from tests.conftest import write_token_file
from tests.support.wardle import (ADMIN, openapi_v3_keys, register, start_extension,
                                  start_main, wait_available, wait_openapi)

GV_KEY = "apis/wardle.example.com/v1alpha1"
MODEL = "io.k8s.sample-apiserver.pkg.apis.wardle.v1alpha1"


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """The main server (RBAC, static tokens) and the wardle extension (its audit events in
    ``extension.audit_file``, written by the probe plugin), routed by an APIService."""
    base = tmp_path_factory.mktemp("wardle-aggregation")
    tokens = write_token_file(base / "tokens.csv")
    main = start_main(str(base), {"authorization-mode": ["RBAC"], "token-auth-file": tokens})
    extension = None
    try:
        audit = str(base / "wardle-audit.jsonl")
        extension = start_extension(str(base), main, {"probe-audit-file": audit},
                                    plugins=["tests.support.probe_plugin"])
        extension.audit_file = audit
        register(main, extension)
        main.kubectl("create", "namespace", "demo", check=True)
        wait_available(main, "True")
        yield main, extension
    finally:
        if extension is not None:
            extension.stop()
        main.stop()


def flunder(name: str, spec: dict | None = None) -> str:
    return yaml.safe_dump({"apiVersion": "wardle.example.com/v1alpha1", "kind": "Flunder",
                           "metadata": {"name": name}, "spec": spec or {}})


def flunders_on_the_extension(extension, namespace: str) -> list[str]:
    """The flunders the extension stores in ``namespace`` (asked directly, not proxied)."""
    response = extension.get(f"/apis/wardle.example.com/v1alpha1/namespaces/{namespace}/"
                             "flunders", **ADMIN)
    assert response.status_code == 200, response.text
    return [item["metadata"]["name"] for item in response.json()["items"]]


def namespace_conditions(main, name: str) -> dict:
    response = main.get(f"/api/v1/namespaces/{name}", **ADMIN)
    if response.status_code == 404:
        return {}
    return {c["type"]: c for c in (response.json().get("status") or {}).get("conditions")
            or []}


def wait_gone(main, path: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while main.get(path, **ADMIN).status_code != 404:
        assert time.monotonic() < deadline, f"{path} is still there"
        time.sleep(0.2)


def audited_users(extension, verb: str, resource: str) -> list[str]:
    users = []
    if not os.path.exists(extension.audit_file):
        return users
    with open(extension.audit_file) as f:
        for line in f:
            event = json.loads(line)
            if event.get("verb") == verb and (event.get("objectRef") or {}).get(
                    "resource") == resource:
                # A request refused for want of credentials is audited with no user.
                users.append(event["user"].get("username", ""))
    return users


def test_kubectl_through_the_main_server(servers):
    main, _ = servers
    out = main.kubectl("get", "flunders", "-n", "demo")
    assert out.returncode == 0, out.stderr
    assert out.stderr == "No resources found in demo namespace.\n"
    assert main.kubectl("create", "-n", "demo", "-f", "-", input=flunder("f1"),
                        check=True).stdout == "flunder.wardle.example.com/f1 created\n"
    got = json.loads(main.kubectl("get", "flunder", "f1", "-n", "demo", "-o", "json",
                                  check=True).stdout)
    assert got["metadata"]["name"] == "f1"
    resources = main.kubectl("api-resources", "--api-group", "wardle.example.com",
                             check=True).stdout
    assert "flunders" in resources and "fischers" in resources
    assert main.kubectl("delete", "flunder", "f1", "-n", "demo", check=True).stdout == \
        'flunder.wardle.example.com "f1" deleted\n'


def test_the_python_client_through_the_main_server(servers):
    from kubernetes import client

    main, _ = servers
    api = client.CustomObjectsApi(main.python_client())
    created = api.create_namespaced_custom_object(
        "wardle.example.com", "v1alpha1", "demo", "flunders",
        {"apiVersion": "wardle.example.com/v1alpha1", "kind": "Flunder",
         "metadata": {"name": "py"}, "spec": {"reference": "f0"}})
    assert created["spec"] == {"reference": "f0", "referenceType": "Flunder"}
    listed = api.list_namespaced_custom_object("wardle.example.com", "v1alpha1", "demo",
                                               "flunders")
    assert [i["metadata"]["name"] for i in listed["items"]] == ["py"]
    api.delete_namespaced_custom_object("wardle.example.com", "v1alpha1", "demo", "flunders",
                                        "py")


def test_fischers_ban_flunder_names(servers):
    main, _ = servers
    fischer = yaml.safe_dump({"apiVersion": "wardle.example.com/v1alpha1", "kind": "Fischer",
                              "metadata": {"name": "strict"},
                              "disallowedFlunders": ["banned", "forbidden"]})
    main.kubectl("create", "-f", "-", input=fischer, check=True)
    assert main.kubectl("get", "fischers", "-o", "name", check=True).stdout == \
        "fischer.wardle.example.com/strict\n"
    refused = main.kubectl("create", "-n", "demo", "-f", "-", input=flunder("banned"))
    assert refused.returncode != 0
    assert refused.stderr == (
        'Error from server (Forbidden): error when creating "STDIN": flunders.wardle.example.com'
        ' "banned" is forbidden: this name may not be used, please change the resource name\n')
    main.kubectl("delete", "fischer", "strict", check=True)
    main.kubectl("create", "-n", "demo", "-f", "-", input=flunder("banned"), check=True)
    main.kubectl("delete", "flunder", "banned", "-n", "demo", check=True)


def test_a_flunder_status_is_a_struct_without_fields(servers):
    # FlunderStatus is an empty Go struct: every field in it is unknown, as upstream decodes.
    main, extension = servers
    body = yaml.safe_load(flunder("with-status"))
    body["status"] = {"phase": "Ready"}
    refused = main.kubectl("create", "-n", "demo", "--validate=strict", "-f", "-",
                           input=yaml.safe_dump(body))
    assert refused.returncode == 1
    assert refused.stderr == (
        'Error from server (BadRequest): error when creating "STDIN": Flunder in version '
        '"v1alpha1" cannot be handled as a Flunder: strict decoding error: unknown field '
        '"status.phase"\n'), refused.stderr
    warned = main.kubectl("create", "-n", "demo", "--validate=warn", "-f", "-",
                          input=yaml.safe_dump(body))
    assert warned.returncode == 0, warned.stderr
    assert warned.stderr == 'Warning: unknown field "status.phase"\n'
    stored = extension.get("/apis/wardle.example.com/v1alpha1/namespaces/demo/flunders/"
                           "with-status", **ADMIN).json()
    assert stored["status"] == {}
    main.kubectl("delete", "flunder", "with-status", "-n", "demo", check=True)


def test_the_extension_believes_only_the_front_proxy(servers):
    main, extension = servers
    path = "/apis/wardle.example.com/v1alpha1/namespaces/demo/flunders"

    def get(cert=None, **headers):
        return requests.get(extension.url + path, headers=headers, cert=cert,
                            verify=extension.ca_file, timeout=30)

    # The front proxy's certificate (the main server's aggregator) states the user...
    proxied = get(main.front_proxy, **{"X-Remote-User": "carol",
                                       "X-Remote-Group": "system:masters"})
    assert proxied.status_code == 200, proxied.text
    assert audited_users(extension, "list", "flunders")[-1] == "carol"
    # ...but is nobody by itself: x509 does not take its CN for a user.
    assert_status(get(main.front_proxy), 401, "Unauthorized")
    # A client certificate of the main server's CA is its own CN; headers are ignored.
    admin = main.client_cert("admin", ["system:masters"])
    assert get(admin, **{"X-Remote-User": "mallory"}).status_code == 200
    assert audited_users(extension, "list", "flunders")[-1] == "admin"
    # A bearer token is reviewed by the main server, and its RBAC decides (bob: nothing).
    denied = get(Authorization="Bearer bob-token")
    assert_status(denied, 403, "Forbidden",
                  'flunders.wardle.example.com is forbidden: User "bob" cannot list resource '
                  '"flunders" in API group "wardle.example.com" in the namespace "demo"')
    assert_status(get(Authorization="Bearer nobody-token"), 401, "Unauthorized")


def test_watch_streams_through_the_proxy(servers):
    main, _ = servers
    cert = main.client_cert("admin", ["system:masters"])
    url = main.url + "/apis/wardle.example.com/v1alpha1/namespaces/demo/flunders?watch=true"
    with requests.get(url, cert=cert, verify=main.ca_file, stream=True, timeout=30) as watch:
        main.kubectl("create", "-n", "demo", "-f", "-", input=flunder("watched"), check=True)
        event = json.loads(next(watch.iter_lines()))
    assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "watched")
    main.kubectl("delete", "flunder", "watched", "-n", "demo", check=True)


def test_rbac_on_the_main_server_decides_and_the_extension_sees_the_user(servers):
    main, extension = servers
    denied = main.kubectl("get", "flunders", "-n", "demo", token="alice-token")
    assert denied.returncode != 0
    assert 'User "alice" cannot list resource "flunders" in API group "wardle.example.com" ' \
           'in the namespace "demo"' in denied.stderr
    main.kubectl("create", "role", "flunder-editor", "-n", "demo",
                 "--verb=get,list,watch,create,delete", "--resource=flunders.wardle.example.com",
                 check=True)
    main.kubectl("create", "rolebinding", "alice-flunders", "-n", "demo",
                 "--role=flunder-editor", "--user=alice", check=True)
    deadline = time.monotonic() + 20  # the extension caches access reviews briefly
    while True:
        out = main.kubectl("create", "-n", "demo", "-f", "-", input=flunder("by-alice"),
                           token="alice-token")
        if out.returncode == 0 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert out.stdout == "flunder.wardle.example.com/by-alice created\n", out.stderr
    assert "alice" in audited_users(extension, "create", "flunders")
    # A client's own X-Remote-User is ignored: the extension still sees alice.
    response = requests.get(main.url + "/apis/wardle.example.com/v1alpha1/namespaces/demo/"
                            "flunders/by-alice",
                            headers={"Authorization": "Bearer alice-token",
                                     "X-Remote-User": "admin",
                                     "X-Remote-Group": "system:masters"},
                            verify=main.ca_file, timeout=30)
    assert response.status_code == 200, response.text
    assert audited_users(extension, "get", "flunders")[-1] == "alice"
    # bob has no grant: spoofing the headers does not help.
    response = requests.get(main.url + "/apis/wardle.example.com/v1alpha1/namespaces/demo/"
                            "flunders/by-alice",
                            headers={"Authorization": "Bearer bob-token",
                                     "X-Remote-User": "admin",
                                     "X-Remote-Group": "system:masters"},
                            verify=main.ca_file, timeout=30)
    assert_status(response, 403, "Forbidden")
    main.kubectl("delete", "flunder", "by-alice", "-n", "demo", check=True)


def test_the_trust_configmap_says_whom_to_believe_and_is_mended(servers):
    main, _ = servers
    path = "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication"
    data = main.get(path, **ADMIN).json()["data"]
    assert sorted(data) == ["client-ca-file", "requestheader-allowed-names",
                            "requestheader-client-ca-file", "requestheader-extra-headers-prefix",
                            "requestheader-group-headers", "requestheader-username-headers"]
    assert data["requestheader-allowed-names"] == '["front-proxy-client"]'
    assert data["requestheader-username-headers"] == '["X-Remote-User"]'
    assert data["requestheader-group-headers"] == '["X-Remote-Group"]'
    assert data["requestheader-extra-headers-prefix"] == '["X-Remote-Extra-"]'
    with open(main.ca_file) as f:
        assert "".join(f.read().split()) in "".join(data["client-ca-file"].split())
    # Edited or deleted, it is put back (upstream's controller mends it at once).
    patch = {"data": {"requestheader-allowed-names": '["mallory"]'}}
    assert main.request("PATCH", path, data=json.dumps(patch), **ADMIN, headers={
        "Content-Type": "application/merge-patch+json"}).status_code == 200
    deadline = time.monotonic() + 10
    while main.get(path, **ADMIN).json()["data"]["requestheader-allowed-names"] != \
            '["mallory","front-proxy-client"]':
        assert time.monotonic() < deadline, "the ConfigMap was not mended"
        time.sleep(0.1)
    assert main.request("DELETE", path, **ADMIN).status_code == 200
    deadline = time.monotonic() + 10
    while main.get(path, **ADMIN).status_code != 200:
        assert time.monotonic() < deadline, "the ConfigMap was not made again"
        time.sleep(0.1)
    assert main.get(path, **ADMIN).json()["data"] == data


def test_kubectl_explain_reads_the_extensions_schema_through_the_main_server(servers):
    main, extension = servers
    wait_openapi(main, True)
    explained = main.kubectl("explain", "flunders", check=True).stdout
    assert explained.startswith("GROUP:      wardle.example.com\nKIND:       Flunder\n"
                                "VERSION:    v1alpha1\n"), explained
    assert "spec\t<FlunderSpec>" in explained and "status\t<FlunderStatus>" in explained
    field = main.kubectl("explain", "flunder.spec.reference", check=True).stdout
    assert "FIELD: reference <string>" in field
    assert "A name of another flunder or fischer, depending on the reference type." in field
    # The document is the extension's, listed with the hash of its bytes as served here.
    entry = main.get("/openapi/v3", **ADMIN).json()["paths"][GV_KEY]
    ours = main.get(entry["serverRelativeURL"], **ADMIN)
    assert ours.status_code == 200
    assert ours.headers["Cache-Control"] == "public, immutable"
    assert entry["serverRelativeURL"] == (
        f"/openapi/v3/{GV_KEY}?hash=" + hashlib.sha512(ours.content).hexdigest().upper())
    assert ours.content == extension.get(f"/openapi/v3/{GV_KEY}", **ADMIN).content
    assert "apis/wardle.example.com" in openapi_v3_keys(main)  # its group's document too


def test_openapi_v2_merges_the_extensions_definitions_and_paths(servers):
    main, _ = servers
    wait_openapi(main, True)
    swagger = main.get("/openapi/v2", **ADMIN).json()
    assert swagger["definitions"][f"{MODEL}.Flunder"]["x-kubernetes-group-version-kind"] == \
        [{"group": "wardle.example.com", "kind": "Flunder", "version": "v1alpha1"}]
    create = swagger["paths"]["/apis/wardle.example.com/v1alpha1/namespaces/{namespace}/"
                              "flunders"]["post"]
    assert create["operationId"] == "createWardleExampleComV1alpha1NamespacedFlunder"
    assert "/api/v1/namespaces" in swagger["paths"]  # the main server's own, still there
    # The protobuf form (kubectl explain's v2 output) carries them too.
    explained = main.kubectl("explain", "flunders.spec", "--output=plaintext-openapiv2",
                             check=True).stdout
    assert "referenceType\t<string>" in explained


def test_strict_validation_of_a_flunder_is_the_servers_through_the_main_server(servers):
    main, _ = servers
    wait_openapi(main, True)
    refused = main.kubectl("create", "--validate=strict", "-n", "demo", "-f", "-", "-v=6",
                           input=flunder("typo", {"reference": "f0", "bogus": 1}))
    assert refused.returncode == 1
    assert ('Error from server (BadRequest): error when creating "STDIN": Flunder in version '
            '"v1alpha1" cannot be handled as a Flunder: strict decoding error: unknown field '
            '"spec.bogus"') in refused.stderr, refused.stderr
    # kubectl found fieldValidation in the extension's v3 document and let the server check.
    assert f"/openapi/v3/{GV_KEY}?hash=" in refused.stderr
    assert "fieldValidation=Strict" in refused.stderr
    assert "/openapi/v2" not in refused.stderr
    assert main.kubectl("get", "flunder", "typo", "-n", "demo").returncode == 1


def test_deleting_a_namespace_deletes_its_flunders_on_the_extension(servers):
    main, extension = servers
    main.kubectl("create", "namespace", "doomed", check=True)
    main.kubectl("create", "-n", "doomed", "-f", "-", input=flunder("f1"), check=True)
    main.kubectl("create", "configmap", "c1", "-n", "doomed", check=True)
    assert flunders_on_the_extension(extension, "doomed") == ["f1"]
    deleted = main.kubectl("delete", "namespace", "doomed", "--timeout=30s")
    assert (deleted.returncode, deleted.stdout) == (0, 'namespace "doomed" deleted\n'), \
        deleted.stderr
    assert main.get("/api/v1/namespaces/doomed", **ADMIN).status_code == 404
    assert flunders_on_the_extension(extension, "doomed") == []
    # As upstream's namespace controller: one deletecollection, as its service account.
    assert "system:serviceaccount:kube-system:namespace-controller" in \
        audited_users(extension, "deletecollection", "flunders")


def test_stopping_the_extension_makes_it_unavailable_until_it_is_back(servers):
    main, extension = servers
    main.kubectl("create", "-n", "demo", "-f", "-", input=flunder("survivor"), check=True)
    main.kubectl("create", "namespace", "limbo", check=True)
    main.kubectl("create", "-n", "limbo", "-f", "-", input=flunder("held"), check=True)
    extension.stop()
    try:
        condition = wait_available(main, "False")
        assert condition["reason"] == "FailedDiscoveryCheck"
        response = main.get("/apis/wardle.example.com/v1alpha1/namespaces/demo/flunders",
                            **ADMIN)
        assert_status(response, 503, "ServiceUnavailable", "service unavailable")
        # Its documents drop out of the main server's OpenAPI.
        wait_openapi(main, False)
        assert GV_KEY not in openapi_v3_keys(main)
        assert not any("wardle" in path for path in main.get("/openapi/v2", **ADMIN).json()[
            "paths"])
        # A namespace deleted meanwhile waits for the group it cannot discover.
        main.kubectl("delete", "namespace", "limbo", "--wait=false", check=True)
        stale = "wardle.example.com/v1alpha1: stale GroupVersion discovery: " \
                "wardle.example.com/v1alpha1"
        deadline = time.monotonic() + 10
        while namespace_conditions(main, "limbo").get(
                "NamespaceDeletionDiscoveryFailure", {}).get("status") != "True":
            assert time.monotonic() < deadline, namespace_conditions(main, "limbo")
            time.sleep(0.2)
        failure = namespace_conditions(main, "limbo")["NamespaceDeletionDiscoveryFailure"]
        assert (failure["reason"], failure["message"]) == (
            "DiscoveryFailed", "Discovery failed for some groups, 1 failing: unable to "
            "retrieve the complete list of server APIs: " + stale)
        assert main.get("/api/v1/namespaces/limbo", **ADMIN).json()["status"]["phase"] == \
            "Terminating"
    finally:
        extension.start()
    wait_available(main, "True")
    # Back: the namespace's flunders go, then the namespace.
    wait_gone(main, "/api/v1/namespaces/limbo")
    assert flunders_on_the_extension(extension, "limbo") == []
    out = main.kubectl("get", "flunders", "-n", "demo", "-o", "name", check=True)
    assert "flunder.wardle.example.com/survivor" in out.stdout
    main.kubectl("delete", "flunder", "survivor", "-n", "demo", check=True)
    wait_openapi(main, True)
