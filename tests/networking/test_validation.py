"""networking.k8s.io/v1 defaults, validation and Table cells, with 1.32's exact texts."""

import json
import pathlib

import pytest

from kapiserver.apimachinery.field_errors import invalid_status
from kapiserver_plugins.networking.ingressclasses import INGRESS_CLASSES, IngressClassStrategy
from kapiserver_plugins.networking.ingresses import INGRESSES, IngressStrategy
from kapiserver_plugins.networking.networkpolicies import (NETWORK_POLICIES,
                                                           NetworkPolicyStrategy)
from tests.support.kinds import create, stored, texts, update

KINDS = pathlib.Path("/work/shared/reference/wide/kinds")
INGRESS = IngressStrategy(INGRESSES)
CLASS = IngressClassStrategy(INGRESS_CLASSES)
POLICY = NetworkPolicyStrategy(NETWORK_POLICIES)
BACKEND = {"service": {"name": "web", "port": {"number": 80}}}
DNS_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                     "characters, '-' or '.', and must start and end with an alphanumeric "
                     "character (e.g. 'example.com', regex used for validation is "
                     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


def ingress(*paths, host="a.example.com", **spec) -> dict:
    rule = {"host": host, "http": {"paths": list(paths)}} if paths else {"host": host}
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "i"},
            "spec": {"rules": [rule], **spec}}


def path(value="/", path_type="Prefix", backend=None) -> dict:
    out = {"path": value, "backend": BACKEND if backend is None else backend}
    if path_type is not None:
        out["pathType"] = path_type
    return out


# -- Ingresses --------------------------------------------------------------------------------

@pytest.mark.skipif(not KINDS.is_dir(), reason="reference transcripts absent")
def test_ingress_invalid_transcript():
    exchange = json.loads((KINDS / "ingresses-invalid.json").read_text())
    body = exchange["request"]["body"]
    _, errors = create(INGRESS, body, "ref")
    assert invalid_status("Ingress", "networking.k8s.io", "i-bad", errors) == \
        exchange["response"]["body"]


def test_ingress_is_created_with_generation_and_empty_status():
    obj, errors = create(INGRESS, ingress(path(), status={"loadBalancer": {"ingress": [
        {"ip": "1.2.3.4"}]}}))
    assert errors == []
    assert obj["metadata"]["generation"] == 1
    assert obj["status"] == {"loadBalancer": {}}


def test_ingress_paths_by_type():
    _, errors = create(INGRESS, ingress(
        path("foo"), path("/a//b", "Exact"), path("/a/..", "Prefix"), path("rel", "Weird"),
        path("rel", "ImplementationSpecific"), path("", "ImplementationSpecific")))
    at = "spec.rules[0].http.paths"
    assert texts(errors) == [
        f'{at}[0].path: Invalid value: "foo": must be an absolute path',
        f"{at}[1].path: Invalid value: \"/a//b\": must not contain '//'",
        f"{at}[2].path: Invalid value: \"/a/..\": cannot end with '/..'",
        f'{at}[3].pathType: Unsupported value: "Weird": supported values: "Exact", '
        f'"ImplementationSpecific", "Prefix"',
        f'{at}[4].path: Invalid value: "rel": must be an absolute path',
    ]


def test_ingress_backends_are_one_of_resource_or_service():
    resource = {"apiGroup": "k8s.example.com", "kind": "StorageBucket", "name": "b"}
    _, errors = create(INGRESS, ingress(
        path(backend={**BACKEND, "resource": resource}),
        path(backend={"service": {"name": "web", "port": {"name": "http", "number": 80}}}),
        path(backend={"service": {"name": "Web", "port": {}}}),
        path(backend={"service": {"port": {"number": 70000}}}),
        path(backend={"resource": {"kind": "a/b"}}),
        path(backend={})))
    at = "spec.rules[0].http.paths"
    assert texts(errors) == [
        f'{at}[0].backend: Invalid value: "": cannot set both resource and service backends',
        f'{at}[1].backend: Invalid value: "": cannot set both port name & port number',
        f'{at}[2].backend.service.name: Invalid value: "Web": a DNS-1035 label must consist of '
        "lower case alphanumeric characters or '-', start with an alphabetic character, and "
        "end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
        "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        f"{at}[2].backend: Required value: port name or number is required",
        f"{at}[3].backend.service.name: Required value",
        f"{at}[3].backend.service.port.number: Invalid value: 70000: must be between 1 and "
        "65535, inclusive",
        f"{at}[4].backend.resource.kind: Invalid value: \"a/b\": may not contain '/'",
        f"{at}[4].backend.resource.name: Required value",
        f'{at}[5].backend: Invalid value: "": resource or service backend is required',
    ]


def test_ingress_hosts_and_tls():
    body = ingress(path(), host="1.2.3.4",
                   tls=[{"hosts": ["*.example.com", "Bad.example.com"], "secretName": "S"}])
    body["spec"]["rules"].append({"host": "*.ok.example.com"})
    body["spec"]["rules"].append({"host": "a.*.example.com"})
    _, errors = create(INGRESS, body)
    assert texts(errors)[0] == \
        'spec.rules[0].host: Invalid value: "1.2.3.4": must be a DNS name, not an IP address'
    assert any(t.startswith('spec.rules[2].host: Invalid value: "a.*.example.com": a wildcard')
               for t in texts(errors))
    assert f'spec.tls[0].hosts[1]: Invalid value: "Bad.example.com": {DNS_SUBDOMAIN_MSG}' in \
        texts(errors)
    assert f'spec.tls[0].secretName: Invalid value: "S": {DNS_SUBDOMAIN_MSG}' in texts(errors)
    assert not any(t.startswith("spec.rules[1]") for t in texts(errors))


def test_ingress_needs_rules_or_default_backend():
    body = ingress(path())
    del body["spec"]["rules"]
    assert texts(create(INGRESS, body)[1]) == [
        "spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or "
        "`rules` must be specified"]
    body["spec"]["defaultBackend"] = BACKEND
    assert create(INGRESS, body)[1] == []


def test_ingress_class_annotation_must_match_class_name():
    body = ingress(path(), ingressClassName="nginx")
    body["metadata"]["annotations"] = {"kubernetes.io/ingress.class": "other"}
    assert texts(create(INGRESS, body)[1]) == [
        'annotations.kubernetes.io/ingress.class: Invalid value: "other": must match '
        "`ingressClassName` when both are specified"]


def test_ingress_update_keeps_status_and_bumps_generation_on_spec_change():
    old = stored(INGRESS, ingress(path()))
    old["status"] = {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}
    new = ingress(path("/other"))
    new["metadata"] = dict(old["metadata"])
    updated, errors = update(INGRESS, new, old)
    assert errors == []
    assert updated["status"] == old["status"]
    assert updated["metadata"]["generation"] == 2


def test_ingress_status_update_validates_load_balancer():
    old = stored(INGRESS, ingress(path()))
    new = {**old, "status": {"loadBalancer": {"ingress": [{"ip": "x"}, {"hostname": "1.2.3.4"}]}}}
    errors = INGRESS.validate_status_update(new, old)
    assert texts(errors) == [
        'status.loadBalancer.ingress[0].ip: Invalid value: "x": must be a valid IP address, '
        "(e.g. 10.9.8.7 or 2001:db8::ffff)",
        'status.loadBalancer.ingress[1].hostname: Invalid value: "1.2.3.4": must be a DNS name, '
        "not an IP address"]


def test_ingress_table_cells():
    obj = stored(INGRESS, ingress(path(), tls=[{"hosts": ["a.example.com"]}]))
    obj["spec"]["rules"] += [{"host": f"h{i}.example.com"} for i in range(4)]
    obj["status"] = {"loadBalancer": {"ingress": [{"ip": "10.0.0.2"}, {"hostname": "lb.example"
                                                                                   ".com"}]}}
    cells = INGRESS.table_cells(obj)
    assert cells[:5] == ["i", "<none>", "a.example.com,h0.example.com,h1.example.com + 2 more...",
                         "10.0.0.2,lb.e...", "80, 443"]


# -- IngressClasses ---------------------------------------------------------------------------

def ingress_class(controller="example.com/ingress", **spec) -> dict:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
            "metadata": {"name": "c"}, "spec": {"controller": controller, **spec}}


def test_ingress_class_controller_is_a_domain_prefixed_path():
    assert texts(create(CLASS, ingress_class(""))[1]) == ["spec.controller: Required value"]
    assert texts(create(CLASS, ingress_class("example"))[1]) == [
        'spec.controller: Invalid value: "example": must be a domain-prefixed path (such as '
        '"acme.io/foo")']
    assert texts(create(CLASS, ingress_class("Example.com/a b"))[1]) == [
        f'spec.controller: Invalid value: "Example.com": {DNS_SUBDOMAIN_MSG}',
        "spec.controller: Invalid value: \"a b\": Invalid path (regex used for validation is "
        "'[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')"]


def test_ingress_class_parameters_default_and_scope():
    obj, errors = create(CLASS, ingress_class(parameters={"kind": "K", "name": "n"}))
    assert errors == [] and obj["spec"]["parameters"]["scope"] == "Cluster"
    assert obj["metadata"]["generation"] == 1
    _, errors = create(CLASS, ingress_class(parameters={
        "kind": "K", "name": "n", "scope": "Namespace"}))
    assert texts(errors) == ["spec.parameters.namespace: Required value: `parameters.scope` is "
                             "set to 'Namespace'"]
    _, errors = create(CLASS, ingress_class(parameters={
        "kind": "K", "name": "n", "scope": "Cluster", "namespace": "x"}))
    assert texts(errors) == ["spec.parameters.namespace: Forbidden: `parameters.scope` is set "
                             "to 'Cluster'"]
    assert CLASS.table_cells(obj)[:3] == ["c", "example.com/ingress", "K/n"]


def test_ingress_class_controller_is_immutable():
    old = stored(CLASS, ingress_class())
    new = ingress_class("example.com/other")
    new["metadata"] = dict(old["metadata"])
    assert texts(update(CLASS, new, old)[1]) == [
        'spec.controller: Invalid value: "example.com/other": field is immutable']


# -- NetworkPolicies ----------------------------------------------------------------------------

def policy(**spec) -> dict:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": "p"}, "spec": {"podSelector": {}, **spec}}


def test_network_policy_defaults():
    obj, errors = create(POLICY, policy(egress=[{"ports": [{"port": 53}]}]))
    assert errors == []
    assert obj["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert obj["spec"]["egress"][0]["ports"] == [{"protocol": "TCP", "port": 53}]
    assert create(POLICY, policy())[0]["spec"]["policyTypes"] == ["Ingress"]
    assert create(POLICY, policy(policyTypes=["Egress"]))[0]["spec"]["policyTypes"] == ["Egress"]


def test_network_policy_ports_peers_and_types():
    _, errors = create(POLICY, policy(
        podSelector={"matchExpressions": [{"key": "a", "operator": "Foo"}]},
        ingress=[{"ports": [{"port": 80, "endPort": 70}, {"port": "http", "endPort": 90},
                            {"endPort": 3, "protocol": "ICMP"}],
                  "from": [{}, {"ipBlock": {"cidr": "10.0.0.0/8",
                                            "except": ["10.1.0.0/16", "11.0.0.0/16", "x"]},
                                "podSelector": {}}]}],
        policyTypes=["Ingress", "Other"]))
    assert texts(errors) == [
        'spec.podSelector.matchExpressions[0].operator: Invalid value: "Foo": not a valid '
        "selector operator",
        "spec.ingress[0].ports[0].endPort: Invalid value: 70: must be greater than or equal to "
        "`port`",
        "spec.ingress[0].ports[1].endPort: Invalid value: 90: may not be specified when `port` "
        "is non-numeric",
        'spec.ingress[0].ports[2].protocol: Unsupported value: "ICMP": supported values: "TCP", '
        '"UDP", "SCTP"',
        "spec.ingress[0].ports[2].endPort: Invalid value: 3: may not be specified when `port` "
        "is not specified",
        "spec.ingress[0].from[0]: Required value: must specify a peer",
        'spec.ingress[0].from[1].ipBlock.except[1]: Invalid value: "11.0.0.0/16": must be a '
        "strict subset of `cidr`",
        'spec.ingress[0].from[1].ipBlock.except[2]: Invalid value: "x": must be a valid CIDR '
        "value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
        "spec.ingress[0].from[1]: Forbidden: may not specify both ipBlock and another peer",
        'spec.policyTypes[1]: Unsupported value: "Other": supported values: "Ingress", '
        '"Egress"',
    ]
    _, errors = create(POLICY, policy(policyTypes=["Ingress", "Egress", "Ingress"]))
    assert texts(errors) == ['spec.policyTypes: Invalid value: []networking.PolicyType{"Ingress", '
                             '"Egress", "Ingress"}: may not specify more than two policyTypes']


def test_network_policy_table_shows_the_pod_selector():
    obj = stored(POLICY, policy(podSelector={"matchLabels": {"app": "web"}}))
    assert POLICY.table_cells(obj)[:2] == ["p", "app=web"]
    assert POLICY.table_cells(stored(POLICY, policy()))[1] == "<none>"


def test_network_policy_update_bumps_generation_on_spec_change():
    old = stored(POLICY, policy())
    new = policy(podSelector={"matchLabels": {"a": "b"}})
    new["metadata"] = dict(old["metadata"])
    updated, errors = update(POLICY, new, old)
    assert errors == [] and updated["metadata"]["generation"] == 2
