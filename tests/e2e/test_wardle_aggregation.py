"""Two kapiservers: the wardle extension server behind the main one's aggregator.

The extension serves ``wardle.example.com`` (the example plugin) with delegated
authentication and authorization: it trusts the main server's front-proxy certificate
(requestheader) and asks the main server about tokens and permissions (TokenReview,
SubjectAccessReview). The main server runs RBAC and fronts the extension through an
APIService. Everything below is driven through the main server with kubectl.
"""

import json
import os
import time

import pytest
import requests
import yaml

from kapiserver.testing import assert_status
from tests.conftest import write_token_file
from tests.support.wardle import ADMIN, register, start_extension, start_main, wait_available


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


def flunder(name: str) -> str:
    return yaml.safe_dump({"apiVersion": "wardle.example.com/v1alpha1", "kind": "Flunder",
                           "metadata": {"name": name}, "spec": {}})


def audited_users(extension, verb: str, resource: str) -> list[str]:
    users = []
    if not os.path.exists(extension.audit_file):
        return users
    with open(extension.audit_file) as f:
        for line in f:
            event = json.loads(line)
            if event.get("verb") == verb and (event.get("objectRef") or {}).get(
                    "resource") == resource:
                users.append(event["user"]["username"])
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


def test_stopping_the_extension_makes_it_unavailable_until_it_is_back(servers):
    main, extension = servers
    extension.stop()
    try:
        condition = wait_available(main, "False")
        assert condition["reason"] == "FailedDiscoveryCheck"
        response = main.get("/apis/wardle.example.com/v1alpha1/namespaces/demo/flunders",
                            **ADMIN)
        assert_status(response, 503, "ServiceUnavailable", "service unavailable")
    finally:
        extension.start()
    wait_available(main, "True")
    out = main.kubectl("get", "flunders", "-n", "demo", "-o", "name", check=True)
    assert "flunder.wardle.example.com/by-alice" in out.stdout
