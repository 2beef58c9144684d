"""discovery.k8s.io/v1 end to end: EndpointSlices through kubectl and the Python client, and
the kubernetes Service's Endpoints and EndpointSlice, there from the start."""

import json

import pytest

from kapiserver.testing import assert_status

ADMIN = dict(user="admin", groups=["system:masters"])
SLICES = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"
SLICE_YAML = """
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web-abc
  labels:
    kubernetes.io/service-name: web
addressType: IPv4
ports:
- name: http
  port: 80
endpoints:
- addresses: [10.1.2.3]
  conditions:
    ready: true
  nodeName: node-1
"""


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    server = KapiserverProcess(str(tmp_path_factory.mktemp("discovery")), workers=2).start()
    yield server
    server.stop()


def test_the_kubernetes_service_has_its_endpoints_from_the_start(api):
    from kapiserver_plugins.discovery.kubernetes_endpoints import advertise_address

    address = advertise_address("127.0.0.1")
    if address is None:
        pytest.skip("this host has no address but loopback to advertise")
    listed = api.get(SLICES, **ADMIN).json()
    (kubernetes,) = [s for s in listed["items"] if s["metadata"]["name"] == "kubernetes"]
    assert kubernetes["metadata"]["labels"] == {"kubernetes.io/service-name": "kubernetes"}
    assert kubernetes["addressType"] == ("IPv6" if ":" in address else "IPv4")
    assert kubernetes["endpoints"] == [{"addresses": [address], "conditions": {"ready": True}}]
    assert kubernetes["ports"] == [{"name": "https", "protocol": "TCP", "port": api.port}]
    assert kubernetes["metadata"]["managedFields"][0]["manager"] == "kube-apiserver"
    endpoints = api.get("/api/v1/namespaces/default/endpoints/kubernetes", **ADMIN).json()
    assert endpoints["metadata"]["labels"] == {
        "endpointslice.kubernetes.io/skip-mirror": "true"}
    assert endpoints["subsets"] == [{"addresses": [{"ip": address}], "ports": [
        {"name": "https", "port": api.port, "protocol": "TCP"}]}]
    # Both workers ran the hook: one object each, written once.
    assert kubernetes["metadata"]["generation"] == 1
    table = api.kubectl("get", "endpointslices", "-n", "default", check=True).stdout
    assert table.splitlines()[0].split() == ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]
    assert table.splitlines()[1].split()[:4] == ["kubernetes", "IPv4", str(api.port), address]


def test_kubectl_applies_and_lists_endpoint_slices(api):
    api.kubectl("apply", "-n", "default", "-f", "-", input=SLICE_YAML, check=True)
    slice_ = json.loads(api.kubectl("get", "endpointslice", "web-abc", "-n", "default", "-o",
                                    "json", check=True).stdout)
    assert slice_["ports"] == [{"name": "http", "protocol": "TCP", "port": 80}]
    assert slice_["metadata"]["generation"] == 1
    rows = api.kubectl("get", "endpointslices", "-n", "default", "-l",
                       "kubernetes.io/service-name=web", check=True).stdout.splitlines()
    assert rows[1].split()[:4] == ["web-abc", "IPv4", "80", "10.1.2.3"]
    api.kubectl("apply", "-n", "default", "-f", "-",
                input=SLICE_YAML.replace("10.1.2.3", "10.1.2.4"), check=True)
    slice_ = api.get(f"{SLICES}/web-abc", **ADMIN).json()
    assert slice_["metadata"]["generation"] == 2
    assert slice_["endpoints"][0]["addresses"] == ["10.1.2.4"]


def test_python_client_and_invalid_slices(api):
    from kubernetes import client

    discovery = client.DiscoveryV1Api(api.python_client())
    discovery.create_namespaced_endpoint_slice("default", {
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "fqdn"}, "addressType": "FQDN",
        "endpoints": [{"addresses": ["db.example.com"]}], "ports": [{"port": 5432}]})
    created = discovery.read_namespaced_endpoint_slice("fqdn", "default")
    assert created.ports[0].protocol == "TCP" and created.ports[0].name == ""
    response = api.request("POST", SLICES, json={
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "bad"}, "addressType": "IPv4",
        "endpoints": [{"addresses": ["::1"]}]}, **ADMIN)
    assert_status(response, 422, "Invalid",
                  'EndpointSlice.discovery.k8s.io "bad" is invalid: '
                  'endpoints[0].addresses[0]: Invalid value: "::1": must be a valid IPv4 '
                  "address")
    response = api.request("PATCH", f"{SLICES}/fqdn", json={"addressType": "IPv4"},
                           headers={"Content-Type": "application/merge-patch+json"}, **ADMIN)
    assert_status(response, 422, "Invalid")
    assert 'addressType: Invalid value: "IPv4": field is immutable' in response.json()["message"]
