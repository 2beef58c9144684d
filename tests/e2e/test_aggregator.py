"""The aggregator end to end: APIServices, availability, proxying and merged discovery.

A small HTTPS extension server on loopback serves ``demo.example.com/v1``; a 2-worker
kapiserver fronts it through a Service, its Endpoints and an APIService, and registers
local APIServices for its own group versions and its CRDs.
"""

import json
import time

import pytest
import requests
import yaml

from kapiserver.testing import KapiserverProcess, assert_status
from tests.support.extension_backend import GROUP, VERSION, ExtensionBackend
from tests.support.reference import transcript

ADMIN = dict(user="admin", groups=["system:masters"])
APISERVICES = "/apis/apiregistration.k8s.io/v1/apiservices"


@pytest.fixture(scope="module")
def backend(tmp_path_factory):
    server = ExtensionBackend(str(tmp_path_factory.mktemp("backend-pki")))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def api(tmp_path_factory, backend):
    server = KapiserverProcess(str(tmp_path_factory.mktemp("aggregator")), workers=2).start()
    try:
        yield from _set_up(server, backend)
    finally:
        server.stop()


def _set_up(server, backend):
    # Endpoints may not name loopback addresses (upstream's validation): an ExternalName
    # Service reaches the backend on this host.
    server.kubectl("apply", "-f", "-", check=True, input=yaml.safe_dump_all([
        {"apiVersion": "v1", "kind": "Service",
         "metadata": {"name": "demo-api", "namespace": "default"},
         "spec": {"type": "ExternalName", "externalName": "localhost"}},
        apiservice(backend.ca_bundle, backend.port)]))
    wait_available(server, f"{VERSION}.{GROUP}", "True")
    yield server


def apiservice(ca_bundle: str, port: int = 443) -> dict:
    return {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
            "metadata": {"name": f"{VERSION}.{GROUP}"},
            "spec": {"group": GROUP, "version": VERSION, "groupPriorityMinimum": 2000,
                     "versionPriority": 10, "caBundle": ca_bundle,
                     "service": {"namespace": "default", "name": "demo-api", "port": port}}}


def available(server, name: str) -> dict:
    obj = server.get(f"{APISERVICES}/{name}", **ADMIN).json()
    for condition in (obj.get("status") or {}).get("conditions") or []:
        if condition["type"] == "Available":
            return condition
    return {}


def wait_available(server, name: str, status: str, timeout: float = 15.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        condition = available(server, name)
        if condition.get("status") == status or time.monotonic() > deadline:
            assert condition.get("status") == status, condition
            return condition
        time.sleep(0.2)


def test_local_apiservices_are_registered_with_upstreams_priorities(api):
    items = {i["metadata"]["name"]: i for i in api.get(APISERVICES, **ADMIN).json()["items"]}
    want = {i["metadata"]["name"]: i for i in
            transcript("apiservices.json")["response"]["body"]["items"]}
    for name in ("v1.", "v1.coordination.k8s.io", "v1.rbac.authorization.k8s.io",
                 "v1.apiextensions.k8s.io", "v1.events.k8s.io"):
        assert items[name]["spec"] == want[name]["spec"], name
        assert items[name]["metadata"]["labels"] == want[name]["metadata"]["labels"]
        condition = wait_available(api, name, "True")
        assert (condition["reason"], condition["message"]) == (
            "Local", "Local APIServices are always available")
    assert "v1.apiregistration.k8s.io" not in items


def test_apiservice_table_and_kubectl(api):
    accept = "application/json;as=Table;v=v1;g=meta.k8s.io"
    table = api.get(APISERVICES, headers={"Accept": accept}, **ADMIN).json()
    want = transcript("table-apiservices.json")["response"]["body"]
    assert table["columnDefinitions"] == want["columnDefinitions"]
    rows = {r["cells"][0]: r["cells"] for r in table["rows"]}
    assert rows["v1."][1:3] == ["Local", "True"]
    assert rows[f"{VERSION}.{GROUP}"][1:3] == ["default/demo-api", "True"]
    out = api.kubectl("get", "apiservices", check=True).stdout
    assert f"{VERSION}.{GROUP}" in out and "default/demo-api" in out


def test_apiservice_validation(api):
    bad = apiservice("")
    bad["metadata"]["name"] = "v2.demo.example.com"
    bad["spec"].update(groupPriorityMinimum=0, versionPriority=1001,
                       insecureSkipTLSVerify=True, caBundle="Zm9v")
    response = api.request("POST", APISERVICES, json=bad, **ADMIN)
    body = assert_status(response, 422, "Invalid")
    assert [(c["field"], c["message"]) for c in body["details"]["causes"]] == [
        ("metadata.name", 'Invalid value: "v2.demo.example.com": must be '
                          '`spec.version+"."+spec.group`: "v1.demo.example.com"'),
        ("spec.groupPriorityMinimum", "Invalid value: 0: must be positive and less than 20000"),
        ("spec.versionPriority", "Invalid value: 1001: must be positive and less than 1000"),
        ("spec.insecureSkipTLSVerify", "Invalid value: true: may not be true if caBundle is "
                                       "present")]


def test_discovery_merges_the_extension_servers_group(api):
    groups = [g["name"] for g in api.get("/apis", **ADMIN).json()["groups"]]
    assert groups[0] == "apiregistration.k8s.io"
    assert GROUP in groups
    # Priority 2000: after the built-in groups (all above 16000), before CRD groups (1000).
    assert groups.index(GROUP) > groups.index("coordination.k8s.io")
    assert api.get(f"/apis/{GROUP}", **ADMIN).json()["preferredVersion"]["version"] == VERSION
    deadline = time.monotonic() + 10
    while True:
        aggregated = api.get("/apis", headers={
            "Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"},
            **ADMIN).json()
        entry = [i for i in aggregated["items"] if i["metadata"]["name"] == GROUP]
        if entry and entry[0]["versions"][0]["resources"] or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert entry[0]["versions"][0]["resources"][0]["resource"] == "gizmos"
    # The group version's own document comes from the backend, through the proxy.
    resources = api.get(f"/apis/{GROUP}/{VERSION}", **ADMIN).json()["resources"]
    assert [r["name"] for r in resources] == ["gizmos"]
    out = api.kubectl("api-resources", "--api-group", GROUP, check=True).stdout
    assert "gizmos" in out


def test_proxy_passes_the_user_and_strips_client_credentials(api, backend):
    response = api.get(f"/apis/{GROUP}/{VERSION}/namespaces/default/gizmos",
                       headers={"X-Remote-User": "mallory", "X-Remote-Group": "system:masters"},
                       **ADMIN)
    assert response.status_code == 200, response.text
    seen = response.json()["seen"]
    assert seen["user"] == "admin"
    assert seen["groups"] == ["system:masters", "system:authenticated"]
    assert seen["authorization"] is None
    api.kubectl("create", "serviceaccount", "prober", "-n", "default", check=True)
    token = api.kubectl("create", "token", "prober", "-n", "default", check=True).stdout.strip()
    response = requests.get(api.url + f"/apis/{GROUP}/{VERSION}/namespaces/default/gizmos",
                            headers={"Authorization": f"Bearer {token}"},
                            verify=api.ca_file, timeout=30)
    seen = response.json()["seen"]
    assert seen["authorization"] is None
    assert seen["user"] == "system:serviceaccount:default:prober"
    assert seen["groups"] == ["system:serviceaccounts", "system:serviceaccounts:default",
                              "system:authenticated"]
    assert "X-Remote-Extra-Authentication.kubernetes.io%2Fcredential-Id" in seen["extra"] or \
        any(k.lower().startswith("x-remote-extra-authentication.kubernetes.io")
            for k in seen["extra"])


def test_watches_stream_through_unbuffered(api):
    cert = api.client_cert("admin", ["system:masters"])
    started = time.monotonic()
    with requests.get(api.url + f"/apis/{GROUP}/{VERSION}/namespaces/default/gizmos?watch=true",
                      cert=cert, verify=api.ca_file, stream=True, timeout=30) as response:
        lines = response.iter_lines()
        first = json.loads(next(lines))
        assert first["object"]["metadata"]["name"] == "g0"
        assert time.monotonic() - started < 0.9  # the backend sends the rest over 3 s
        assert [json.loads(line)["object"]["metadata"]["name"] for line in lines] == ["g1",
                                                                                       "g2"]


def test_unavailable_backend_gives_503_and_recovers(api, backend):
    backend.stop()
    try:
        condition = wait_available(api, f"{VERSION}.{GROUP}", "False")
        assert condition["reason"] == "FailedDiscoveryCheck"
        assert condition["message"].startswith(
            f"failing or missing response from https://localhost:{backend.port}/apis/{GROUP}/"
            f"{VERSION}: ")
        response = api.get(f"/apis/{GROUP}/{VERSION}/namespaces/default/gizmos", **ADMIN)
        assert_status(response, 503, "ServiceUnavailable", "service unavailable")
        out = api.kubectl("get", "apiservice", f"{VERSION}.{GROUP}", check=True).stdout
        assert "False (FailedDiscoveryCheck)" in out
    finally:
        backend.start()
    wait_available(api, f"{VERSION}.{GROUP}", "True")
    response = api.get(f"/apis/{GROUP}/{VERSION}/namespaces/default/gizmos", **ADMIN)
    assert response.status_code == 200


def test_missing_service_is_reported(api, backend):
    lost = apiservice(backend.ca_bundle, backend.port)
    lost["metadata"]["name"] = "v1.lost.example.com"
    lost["spec"].update(group="lost.example.com", service={"namespace": "default",
                                                           "name": "nowhere"})
    assert api.request("POST", APISERVICES, json=lost, **ADMIN).status_code == 201
    condition = wait_available(api, "v1.lost.example.com", "False")
    assert (condition["reason"], condition["message"]) == (
        "ServiceNotFound", 'service/nowhere in "default" is not present')
    response = api.get("/apis/lost.example.com/v1/namespaces/default/things", **ADMIN)
    assert_status(response, 503, "ServiceUnavailable")


def test_crd_group_versions_get_local_apiservices(api):
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "knobs.crd.example.com"},
           "spec": {"group": "crd.example.com", "scope": "Namespaced",
                    "names": {"plural": "knobs", "kind": "Knob"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": {
                                      "type": "object",
                                      "x-kubernetes-preserve-unknown-fields": True}}}]}}
    api.kubectl("apply", "-f", "-", input=yaml.safe_dump(crd), check=True)
    api.wait_established("knobs.crd.example.com")
    want = transcript("apiservice-for-crd-group.json")["response"]["body"]
    deadline = time.monotonic() + 10
    while True:
        response = api.get(f"{APISERVICES}/v1.crd.example.com", **ADMIN)
        if response.status_code == 200 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    got = response.json()
    assert got["spec"] == dict(want["spec"], group="crd.example.com")
    assert got["metadata"]["labels"] == want["metadata"]["labels"]
    groups = [g["name"] for g in api.get("/apis", **ADMIN).json()["groups"]]
    assert groups.index("crd.example.com") > groups.index(GROUP)  # 1000 < 2000
    api.kubectl("delete", "crd", "knobs.crd.example.com", "--timeout=20s", check=True)
    deadline = time.monotonic() + 10
    while api.get(f"{APISERVICES}/v1.crd.example.com", **ADMIN).status_code != 404:
        assert time.monotonic() < deadline, "the CRD's APIService stayed"
        time.sleep(0.2)


def test_strategic_merge_patch_merges_status_conditions_by_type(api):
    name = "v1.coordination.k8s.io"
    patch = {"status": {"conditions": [{"type": "Audited", "status": "True",
                                        "reason": "Checked", "message": "by a test",
                                        "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}
    response = api.request("PATCH", f"{APISERVICES}/{name}/status", data=json.dumps(patch),
                           headers={"Content-Type": "application/strategic-merge-patch+json"},
                           **ADMIN)
    assert response.status_code == 200, response.text
    kinds = [c["type"] for c in response.json()["status"]["conditions"]]
    assert kinds == ["Available", "Audited"]
