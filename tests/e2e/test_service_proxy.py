"""``services/{name}/proxy``: requests passed on to one of the service's endpoints, as
kube-apiserver's service ``ProxyREST`` passes them (kubectl's ``get --raw`` and the
Python client's ``connect_get_namespaced_service_proxy_with_path``)."""

import http.server
import ipaddress
import json
import socket
import threading

import pytest

from kapiserver.testing import assert_status

ADMIN = dict(user="admin", groups=["system:masters"])
NS = "proxied"
SERVICES = f"/api/v1/namespaces/{NS}/services"


def _global_ipv4() -> str | None:
    """An address of this host an Endpoints object may name (not loopback): the source
    address of a route out (connecting a UDP socket sends nothing)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("203.0.113.1", 9))
            address = probe.getsockname()[0]
        except OSError:
            return None
    ip = ipaddress.ip_address(address)
    return None if ip.is_loopback or ip.is_unspecified or ip.is_link_local else address


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    server = KapiserverProcess(str(tmp_path_factory.mktemp("service-proxy"))).start()
    server.request("POST", "/api/v1/namespaces", json={
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}, **ADMIN)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def backend():
    """An HTTP server on this host's address that echoes the path it was asked for."""
    address = _global_ipv4()
    if address is None:
        pytest.skip("this host has no address but loopback, which Endpoints may not name")

    class Echo(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = f"{self.command} {self.path}\n".encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_POST = do_GET

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer((address, 0), Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield address, server.server_address[1]
    server.shutdown()
    server.server_close()


def post(api, path, body):
    response = api.request("POST", path, json=body, **ADMIN)
    assert response.status_code == 201, response.text
    return response.json()


def serve(api, address: str, port: int, name: str = "web") -> None:
    """A service ``name`` (port 80, named http) whose endpoints are a pod at ``address``."""
    post(api, f"/api/v1/namespaces/{NS}/pods", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{name}-pod"},
        "spec": {"containers": [{"name": "app", "image": "nginx"}]}})
    patched = api.request("PATCH", f"/api/v1/namespaces/{NS}/pods/{name}-pod/status",
                          data=json.dumps({"status": {"podIP": address,
                                                      "podIPs": [{"ip": address}]}}),
                          headers={"Content-Type": "application/merge-patch+json"}, **ADMIN)
    assert patched.status_code == 200, patched.text
    post(api, SERVICES, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
                         "spec": {"ports": [{"name": "http", "port": 80,
                                             "targetPort": port}]}})
    post(api, f"/api/v1/namespaces/{NS}/endpoints", {
        "apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": name},
        "subsets": [{"addresses": [{"ip": address, "targetRef": {
            "kind": "Pod", "namespace": NS, "name": f"{name}-pod"}}],
            "ports": [{"name": "http", "port": port}]}]})


def test_requests_reach_an_endpoint_by_port_name_or_number(api, backend):
    serve(api, *backend)
    for name in ("web:http", "web:80", "http:web:80"):
        response = api.get(f"{SERVICES}/{name}/proxy/hello/world?x=1", **ADMIN)
        assert (response.status_code, response.text) == (200, "GET /hello/world?x=1\n"), name
    root = api.get(f"{SERVICES}/web:http/proxy/", **ADMIN)
    assert root.text == "GET /\n"
    sent = api.request("POST", f"{SERVICES}/web:http/proxy/form", data=b"a=1", **ADMIN)
    assert sent.text == "POST /form\n"
    raw = api.kubectl("get", "--raw", f"{SERVICES}/web:80/proxy/via-kubectl", check=True)
    assert raw.stdout == "GET /via-kubectl\n"


def test_python_client_connects_through_the_proxy(api, backend):
    from kubernetes import client

    core = client.CoreV1Api(api.python_client())
    answer = core.connect_get_namespaced_service_proxy_with_path("web:http", NS, "client")
    assert answer == "GET /client\n"


def test_what_cannot_be_proxied_is_refused_as_upstream_refuses_it(api, backend):
    address, port = backend
    assert_status(api.get(f"{SERVICES}/nope/proxy/", **ADMIN), 404, "NotFound",
                  'endpoints "nope" not found')
    assert_status(api.get(f"{SERVICES}/web:81/proxy/", **ADMIN), 503, "ServiceUnavailable",
                  'no service port 81 found for service "web"')
    assert_status(api.get(f"{SERVICES}/web:metrics/proxy/", **ADMIN), 503,
                  "ServiceUnavailable", 'no endpoints available for service "web:metrics"')
    assert_status(api.get(f"{SERVICES}/a:b:c:d/proxy/", **ADMIN), 400, "BadRequest",
                  'invalid service request "a:b:c:d"')
    post(api, SERVICES, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "empty"},
                         "spec": {"ports": [{"port": 80}]}})
    post(api, f"/api/v1/namespaces/{NS}/endpoints", {
        "apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "empty"}})
    assert_status(api.get(f"{SERVICES}/empty/proxy/", **ADMIN), 503, "ServiceUnavailable",
                  'no endpoints available for service "empty"')
    # An address whose pod no longer holds it is skipped.
    post(api, f"/api/v1/namespaces/{NS}/endpoints", {
        "apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "stale"},
        "subsets": [{"addresses": [{"ip": address, "targetRef": {
            "kind": "Pod", "namespace": NS, "name": "gone"}}],
            "ports": [{"name": "http", "port": port}]}]})
    assert_status(api.get(f"{SERVICES}/stale:http/proxy/", **ADMIN), 503,
                  "ServiceUnavailable", 'no endpoints available for service "stale:http"')


def test_only_the_proxy_verbs_are_served(api, backend):
    response = api.request("PUT", f"{SERVICES}/web:http/proxy/x", data=b"", **ADMIN)
    assert response.status_code == 501  # the backend's answer: it does not do PUT
    discovery = api.get("/api/v1", **ADMIN).json()["resources"]
    (proxy,) = [r for r in discovery if r["name"] == "services/proxy"]
    assert proxy == {"name": "services/proxy", "singularName": "", "namespaced": True,
                     "kind": "ServiceProxyOptions",
                     "verbs": ["create", "delete", "get", "patch", "update"]}
