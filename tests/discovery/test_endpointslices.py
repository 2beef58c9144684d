"""discovery.k8s.io/v1 EndpointSlices: defaults, validation, generation and Table cells, and
what the kubernetes Service's endpoints are made of."""

import ipaddress

from kapiserver_plugins.discovery import kubernetes_endpoints
from kapiserver_plugins.discovery.endpointslices import ENDPOINT_SLICES, EndpointSliceStrategy
from tests.support.kinds import create, stored, texts, update

SLICES = EndpointSliceStrategy(ENDPOINT_SLICES)


def endpoint_slice(address_type="IPv4", endpoints=None, ports=None, **extra) -> dict:
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "s"}, "addressType": address_type,
            "endpoints": [{"addresses": ["10.0.0.1"]}] if endpoints is None else endpoints,
            "ports": [{"port": 80}] if ports is None else ports, **extra}


def test_ports_default_to_an_empty_name_and_tcp():
    obj, errors = create(SLICES, endpoint_slice())
    assert errors == []
    assert obj["ports"] == [{"name": "", "protocol": "TCP", "port": 80}]
    assert obj["endpoints"] == [{"addresses": ["10.0.0.1"], "conditions": {}}]
    assert obj["metadata"]["generation"] == 1


def test_address_types_and_addresses():
    assert texts(create(SLICES, endpoint_slice(""))[1]) == ["addressType: Required value"]
    assert texts(create(SLICES, endpoint_slice("IP"))[1]) == [
        'addressType: Unsupported value: "IP": supported values: "FQDN", "IPv4", "IPv6"']
    _, errors = create(SLICES, endpoint_slice(endpoints=[
        {"addresses": ["fd00::1", "127.0.0.1"]}, {"addresses": []}]))
    assert texts(errors) == [
        'endpoints[0].addresses[0]: Invalid value: "fd00::1": must be a valid IPv4 address',
        'endpoints[0].addresses[1]: Invalid value: "127.0.0.1": may not be in the loopback range '
        "(127.0.0.0/8, ::1/128)",
        "endpoints[1].addresses: Required value: must contain at least 1 address"]
    _, errors = create(SLICES, endpoint_slice("FQDN", endpoints=[{"addresses": ["localhost"]}]))
    assert texts(errors) == ['endpoints[0].addresses[0]: Invalid value: "localhost": should be '
                             "a domain with at least two segments separated by dots"]


def test_ports_are_unique_labels_with_known_protocols():
    _, errors = create(SLICES, endpoint_slice(ports=[
        {"name": "http", "port": 80}, {"name": "http", "port": 81, "protocol": "ICMP"},
        {"name": "a_b", "port": 82, "appProtocol": "a b"}]))
    assert texts(errors)[:2] == [
        'ports[1].name: Duplicate value: "http"',
        'ports[1].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"']
    assert texts(errors)[2].startswith('ports[2].name: Invalid value: "a_b": a lowercase RFC 1123 '
                                       "label must consist of")
    assert texts(errors)[3].startswith('ports[2].appProtocol: Invalid value: "a b": name part')


def test_hostname_node_name_and_hints():
    _, errors = create(SLICES, endpoint_slice(endpoints=[{
        "addresses": ["10.0.0.1"], "hostname": "Host", "nodeName": "Node",
        "hints": {"forZones": [{"name": "a"}, {"name": "a"}]}}]))
    assert [t.split(":")[0] for t in texts(errors)] == [
        "endpoints[0].nodeName", "endpoints[0].hostname", "endpoints[0].hints.forZones[1].name"]


def test_update_keeps_the_address_type_and_counts_label_changes():
    old = stored(SLICES, endpoint_slice())
    new = endpoint_slice("IPv6", endpoints=[{"addresses": ["fd00::1"]}])
    new["metadata"] = dict(old["metadata"])
    assert texts(update(SLICES, new, old)[1]) == [
        'addressType: Invalid value: "IPv6": field is immutable']
    relabelled = endpoint_slice()
    relabelled["metadata"] = {**old["metadata"], "labels": {"a": "b"}}
    updated, errors = update(SLICES, relabelled, old)
    assert errors == [] and updated["metadata"]["generation"] == 2
    annotated = endpoint_slice()
    annotated["metadata"] = {**old["metadata"], "annotations": {"a": "b"}}
    assert update(SLICES, annotated, old)[0]["metadata"]["generation"] == 1


def test_deprecated_topology_is_dropped_by_v1_writes():
    obj, _ = create(SLICES, endpoint_slice(endpoints=[
        {"addresses": ["10.0.0.1"], "deprecatedTopology": {"a": "b"}}]))
    assert "deprecatedTopology" not in obj["endpoints"][0]


def test_table_cells():
    obj = stored(SLICES, endpoint_slice(
        endpoints=[{"addresses": [f"10.0.0.{i}"]} for i in range(1, 6)],
        ports=[{"port": 80, "name": "a"}, {"name": "b"}, {"port": 81, "name": "c"},
               {"port": 82, "name": "d"}]))
    assert SLICES.table_cells(obj)[:4] == [
        "s", "IPv4", "80,b,81 + 1 more...", "10.0.0.1,10.0.0.2,10.0.0.3 + 2 more..."]
    assert SLICES.table_cells(stored(SLICES, endpoint_slice(endpoints=[], ports=[])))[2:4] == [
        "<unset>", "<unset>"]


# -- the kubernetes Service's endpoints ---------------------------------------------------------

def test_advertised_address_is_never_loopback():
    assert kubernetes_endpoints.advertise_address("10.1.2.3") == "10.1.2.3"
    chosen = kubernetes_endpoints.advertise_address("127.0.0.1")
    if chosen is not None:
        assert not ipaddress.ip_address(chosen).is_loopback
    assert chosen == kubernetes_endpoints.default_route_address(4) or chosen == \
        kubernetes_endpoints.default_route_address(6)


def test_the_kubernetes_slice_is_a_valid_slice():
    desired = kubernetes_endpoints.desired_slice("10.1.2.3", 6443)
    obj, errors = create(SLICES, desired, "default")
    assert errors == []
    assert obj["metadata"]["labels"] == {"kubernetes.io/service-name": "kubernetes"}
    assert obj["endpoints"] == [{"addresses": ["10.1.2.3"], "conditions": {"ready": True}}]
    assert obj["ports"] == [{"name": "https", "protocol": "TCP", "port": 6443}]
    assert kubernetes_endpoints.desired_slice("fd00::1", 6443)["addressType"] == "IPv6"
