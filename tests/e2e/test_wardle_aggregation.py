"""Two kapiservers: the wardle extension server behind the main one's aggregator.

The extension serves ``wardle.example.com`` (the example plugin) with delegated
authentication and authorization: it trusts the main server's front-proxy certificate
(requestheader) and asks the main server about tokens and permissions (TokenReview,
SubjectAccessReview). The main server runs RBAC and fronts the extension through an
APIService. Everything below is driven through the main server with kubectl.
"""

import base64
import json
import os
import time

import pytest
import requests
import yaml

from kapiserver.pki import PKI
from kapiserver.testing import KapiserverProcess, assert_status
from tests.conftest import write_token_file

ADMIN = dict(user="admin", groups=["system:masters"])
APISERVICE = "v1alpha1.wardle.example.com"
DELEGATED_MODE = "Webhook"


def write(path, data: bytes) -> str:
    with open(path, "wb") as f:
        f.write(data)
    return str(path)


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    base = tmp_path_factory.mktemp("wardle-aggregation")
    front = PKI(str(base / "front-proxy-pki"))
    front.ensure_ca()
    cert_pem, key_pem = front.issue_client_cert("front-proxy-client")
    proxy_cert = write(base / "front-proxy-client.crt", cert_pem)
    proxy_key = write(base / "front-proxy-client.key", key_pem)
    tokens = write_token_file(base / "tokens.csv")
    main = KapiserverProcess(str(base / "main"), {
        "authorization-mode": ["RBAC"], "token-auth-file": tokens,
        "proxy-client-cert-file": proxy_cert, "proxy-client-key-file": proxy_key,
        "requestheader-client-ca-file": front.ca_cert_file,
        "requestheader-allowed-names": ["front-proxy-client"]}, workers=2).start()
    extension = None
    try:
        # The extension server's own identity on the main server: allowed to review
        # tokens and access (system:auth-delegator) and to read the front-proxy settings.
        main.kubectl("create", "clusterrolebinding", "wardle:auth-delegator",
                     "--clusterrole=system:auth-delegator", "--user=wardle-server", check=True)
        main.kubectl("create", "rolebinding", "wardle:authentication-reader", "-n",
                     "kube-system", "--role=extension-apiserver-authentication-reader",
                     "--user=wardle-server", check=True)
        # Its NamespaceLifecycle admission checks the main server's namespaces.
        main.kubectl("create", "clusterrole", "wardle:namespace-reader", "--verb=get",
                     "--resource=namespaces", check=True)
        main.kubectl("create", "clusterrolebinding", "wardle:namespace-reader",
                     "--clusterrole=wardle:namespace-reader", "--user=wardle-server",
                     check=True)
        kubeconfig = main.kubeconfig("wardle-server", groups=())
        audit = str(base / "wardle-audit.jsonl")
        # The aggregator verifies the extension's certificate for the Service's name.
        extension = KapiserverProcess(str(base / "wardle"), {
            "tls-sans": ["wardle.default.svc"],
            "authentication-kubeconfig": kubeconfig, "authorization-kubeconfig": kubeconfig,
            "kubeconfig": kubeconfig,
            "authorization-mode": [DELEGATED_MODE], "probe-audit-file": audit},
            plugins=["kapiserver_plugins.wardle", "tests.support.probe_plugin"],
            workers=2).start()
        extension.audit_file = audit
        with open(extension.ca_file, "rb") as f:
            ca_bundle = base64.b64encode(f.read()).decode()
        main.kubectl("apply", "-f", "-", check=True, input=yaml.safe_dump_all([
            {"apiVersion": "v1", "kind": "Service",
             "metadata": {"name": "wardle", "namespace": "default"},
             "spec": {"type": "ExternalName", "externalName": "localhost"}},
            {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
             "metadata": {"name": APISERVICE},
             "spec": {"group": "wardle.example.com", "version": "v1alpha1",
                      "groupPriorityMinimum": 1000, "versionPriority": 15,
                      "caBundle": ca_bundle,
                      "service": {"namespace": "default", "name": "wardle",
                                  "port": extension.port}}}]))
        main.kubectl("create", "namespace", "demo", check=True)
        main.front_proxy = (proxy_cert, proxy_key)
        wait_available(main, "True")
        yield main, extension
    finally:
        if extension is not None:
            extension.stop()
        main.stop()


def wait_available(main, status: str, timeout: float = 20.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        obj = main.get(f"/apis/apiregistration.k8s.io/v1/apiservices/{APISERVICE}",
                       **ADMIN).json()
        conditions = {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}
        condition = conditions.get("Available", {})
        if condition.get("status") == status:
            return condition
        assert time.monotonic() < deadline, condition
        time.sleep(0.2)


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
