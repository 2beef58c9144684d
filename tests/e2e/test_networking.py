"""networking.k8s.io/v1 end to end: Ingresses (and their status), IngressClasses and
NetworkPolicies through kubectl, the Python client and plain requests."""

import json

import pytest

from kapiserver.testing import assert_status

ADMIN = dict(user="admin", groups=["system:masters"])
NS = "/apis/networking.k8s.io/v1/namespaces/default"
INGRESS_YAML = """
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
spec:
  tls:
  - hosts: [a.example.com]
    secretName: web-tls
  rules:
  - host: a.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service:
            name: web
            port:
              number: 80
"""


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    server = KapiserverProcess(str(tmp_path_factory.mktemp("networking")), workers=1).start()
    yield server
    server.stop()


def rows(output: str) -> list[list[str]]:
    return [line.split() for line in output.strip().splitlines()]


def test_kubectl_creates_applies_and_lists_ingresses(api):
    api.kubectl("apply", "-n", "default", "-f", "-", input=INGRESS_YAML, check=True)
    table = rows(api.kubectl("get", "ingress", "-n", "default", check=True).stdout)
    assert table[0] == ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"]
    assert table[1][:4] == ["web", "<none>", "a.example.com", "80,"]
    stored = json.loads(api.kubectl("get", "ingress", "web", "-n", "default", "-o", "json",
                                    check=True).stdout)
    assert stored["metadata"]["generation"] == 1
    changed = INGRESS_YAML.replace("number: 80", "number: 8080")
    api.kubectl("apply", "-n", "default", "-f", "-", input=changed, check=True)
    stored = json.loads(api.kubectl("get", "ingress", "web", "-n", "default", "-o", "json",
                                    check=True).stdout)
    assert stored["metadata"]["generation"] == 2
    backend = stored["spec"]["rules"][0]["http"]["paths"][0]["backend"]
    assert backend == {"service": {"name": "web", "port": {"number": 8080}}}
    # kubectl's own generator for Ingresses.
    api.kubectl("create", "ingress", "simple", "-n", "default",
                "--rule=foo.example.com/bar=svc1:8080", check=True)
    simple = api.get(f"{NS}/ingresses/simple", **ADMIN).json()
    assert simple["spec"]["rules"][0]["http"]["paths"][0]["pathType"] == "Exact"


def test_ingress_without_path_type_is_refused_as_upstream(api):
    body = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": "i-bad"},
            "spec": {"rules": [{"http": {"paths": [{"path": "/", "backend": {
                "service": {"name": "web", "port": {"number": 80}}}}]}}]}}
    response = api.request("POST", f"{NS}/ingresses", json=body, **ADMIN)
    assert_status(response, 422, "Invalid",
                  'Ingress.networking.k8s.io "i-bad" is invalid: '
                  "spec.rules[0].http.paths[0].pathType: Required value: pathType must be "
                  "specified")
    result = api.kubectl("create", "-n", "default", "-f", "-", input=json.dumps(body))
    assert result.returncode != 0
    assert "spec.rules[0].http.paths[0].pathType: Required value" in result.stderr


def test_ingress_status_is_written_through_its_subresource(api):
    from kubernetes import client

    networking = client.NetworkingV1Api(api.python_client())
    networking.create_namespaced_ingress("default", {
        "apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "lb"},
        "spec": {"defaultBackend": {"service": {"name": "web", "port": {"name": "http"}}},
                 "ingressClassName": "nginx"},
        "status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.9"}]}}})
    created = networking.read_namespaced_ingress("lb", "default")
    assert created.status.load_balancer.ingress is None
    networking.patch_namespaced_ingress_status("lb", "default", {
        "status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.9"}]}}})
    written = networking.read_namespaced_ingress("lb", "default")
    assert written.status.load_balancer.ingress[0].ip == "10.0.0.9"
    assert written.metadata.generation == 1
    table = rows(api.kubectl("get", "ingress", "lb", "-n", "default", check=True).stdout)
    assert table[1][:5] == ["lb", "nginx", "*", "10.0.0.9", "80"]
    response = api.request("PATCH", f"{NS}/ingresses/lb/status", json={
        "status": {"loadBalancer": {"ingress": [{"ip": "not-an-ip"}]}}},
        headers={"Content-Type": "application/merge-patch+json"}, **ADMIN)
    assert_status(response, 422, "Invalid",
                  'Ingress.networking.k8s.io "lb" is invalid: '
                  'status.loadBalancer.ingress[0].ip: Invalid value: "not-an-ip": must be a '
                  "valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")


def test_ingress_classes(api):
    from kubernetes import client

    networking = client.NetworkingV1Api(api.python_client())
    networking.create_ingress_class({
        "apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
        "metadata": {"name": "nginx",
                     "annotations": {"ingressclass.kubernetes.io/is-default-class": "true"}},
        "spec": {"controller": "k8s.io/ingress-nginx",
                 "parameters": {"apiGroup": "k8s.example.com", "kind": "IngressParameters",
                                "name": "external-lb"}}})
    created = networking.read_ingress_class("nginx")
    assert created.spec.parameters.scope == "Cluster"
    table = rows(api.kubectl("get", "ingressclass", check=True).stdout)
    assert table[0] == ["NAME", "CONTROLLER", "PARAMETERS", "AGE"]
    assert table[1][:3] == ["nginx", "k8s.io/ingress-nginx",
                            "IngressParameters.k8s.example.com/external-lb"]
    response = api.request("PATCH", "/apis/networking.k8s.io/v1/ingressclasses/nginx",
                           json={"spec": {"controller": "k8s.io/other"}},
                           headers={"Content-Type": "application/merge-patch+json"}, **ADMIN)
    assert_status(response, 422, "Invalid",
                  'IngressClass.networking.k8s.io "nginx" is invalid: spec.controller: '
                  'Invalid value: "k8s.io/other": field is immutable')


def test_network_policies(api):
    from kubernetes import client

    networking = client.NetworkingV1Api(api.python_client())
    networking.create_namespaced_network_policy("default", {
        "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
        "metadata": {"name": "db"},
        "spec": {"podSelector": {"matchLabels": {"role": "db"}},
                 "egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/24"}}],
                             "ports": [{"port": 5978}]}]}})
    policy = networking.read_namespaced_network_policy("db", "default")
    assert policy.spec.policy_types == ["Ingress", "Egress"]
    assert policy.spec.egress[0].ports[0].protocol == "TCP"
    table = rows(api.kubectl("get", "netpol", "-n", "default", check=True).stdout)
    assert table[0] == ["NAME", "POD-SELECTOR", "AGE"]
    assert table[1][:2] == ["db", "role=db"]
    response = api.request("POST", f"{NS}/networkpolicies", json={
        "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
        "metadata": {"name": "bad"},
        "spec": {"podSelector": {}, "ingress": [{"from": [
            {"ipBlock": {"cidr": "10.0.0.0/24", "except": ["10.1.0.0/16"]}}]}]}}, **ADMIN)
    assert_status(response, 422, "Invalid",
                  'NetworkPolicy.networking.k8s.io "bad" is invalid: '
                  'spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: "10.1.0.0/16": '
                  "must be a strict subset of `cidr`")
    assert networking.list_namespaced_network_policy("default").items[0].metadata.name == "db"
