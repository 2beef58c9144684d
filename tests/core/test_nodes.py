"""Node validation, status handling, Table cells, TaintNodesByCondition and the kubelet
connection (``kapiserver_plugins.core.nodes``, ``nodetaint``, ``node_proxy``)."""

import pytest

from kapiserver import errors
from kapiserver.admission import CREATE
from kapiserver_plugins.core.node_proxy import check_proxyable, connection_info, dial_error
from kapiserver_plugins.core.nodes import NODES, NodeStrategy, set_node_defaults
from kapiserver_plugins.core.nodetaint import TaintNodesByCondition

STRATEGY = NodeStrategy(NODES)


def node(spec=None, status=None, name="n1", **meta):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "resourceVersion": "4", **meta},
            "spec": spec or {}, "status": status or {}}


def texts(errs):
    return [e.error_text() for e in errs]


def test_allocatable_defaults_to_capacity():
    obj = node(status={"capacity": {"cpu": "4", "memory": "1024Mi", "pods": "110"}})
    set_node_defaults(obj)
    assert obj["status"]["allocatable"] == {"cpu": "4", "memory": "1Gi", "pods": "110"}


def test_taints_are_checked_and_reported_under_metadata():
    spec = {"taints": [{"key": "a", "effect": "NoSchedule"},
                       {"key": "a", "value": "x", "effect": "NoSchedule"},
                       {"key": "b/c/d", "effect": "Sometimes"},
                       {"key": "e", "value": "-", "effect": ""}]}
    assert texts(STRATEGY.validate(node(spec))) == [
        'metadata.taints[1]: Duplicate value: core.Taint{Key:"a", Value:"x", '
        'Effect:"NoSchedule", TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and '
        "effect pair",
        'metadata.taints[2].key: Invalid value: "b/c/d": a qualified name must consist of '
        "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
        "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and "
        "'/' (e.g. 'example.com/MyName')",
        'metadata.taints[2].effect: Unsupported value: "Sometimes": supported values: '
        '"NoSchedule", "PreferNoSchedule", "NoExecute"',
        'metadata.taints[3].value: Invalid value: "-": a valid label must be an empty string or '
        "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
        "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        "metadata.taints[3].effect: Required value",
    ]


def test_pod_cidrs_and_capacity():
    obj = node({"podCIDRs": ["10.0.0.0/24", "10.1.0.0/24"]},
               {"capacity": {"pods": "1500m", "cpu": "-1"}})
    assert texts(STRATEGY.validate(obj)) == [
        'status.capacity.cpu: Invalid value: "-1": must be greater than or equal to 0',
        "status.capacity.pods: Invalid value: resource.Quantity{i:resource.int64Amount{"
        'value:1500, scale:-3}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"1500m", '
        'Format:"DecimalSI"}: must be an integer',
        'spec.podCIDRs: Invalid value: []string{"10.0.0.0/24", "10.1.0.0/24"}: may specify no '
        "more than one CIDR for each IP family",
    ]
    assert STRATEGY.validate(node({"podCIDRs": ["10.0.0.0/24", "fd00::/64"]})) == []


def test_updates_keep_cidrs_provider_and_external_id():
    old = node({"podCIDRs": ["10.0.0.0/24"], "providerID": "aws://1", "externalID": "x"})
    new = node({"podCIDRs": ["10.0.1.0/24"], "providerID": "aws://2", "unschedulable": True})
    assert texts(STRATEGY.validate_update(new, old)) == [
        'spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid',
        'spec.providerID: Forbidden: node updates may not change providerID except from "" to '
        "valid",
        "spec.externalID: Forbidden: may not be updated",
    ]
    cordoned = node({"podCIDRs": ["10.0.0.0/24"], "providerID": "aws://1", "externalID": "x",
                     "unschedulable": True})
    assert STRATEGY.validate_update(cordoned, old) == []


def test_status_writes_keep_the_spec_and_refuse_duplicate_addresses():
    old = node({"unschedulable": True})
    new = node({}, {"addresses": [{"type": "InternalIP", "address": "10.0.0.1"},
                                  {"type": "InternalIP", "address": "10.0.0.1"}],
                    "config": {"active": {}}})
    STRATEGY.prepare_status_update(new, old)
    assert new["spec"] == {"unschedulable": True}
    assert "config" not in new["status"]
    assert texts(STRATEGY.validate_status(new, old)) == [
        'status.addresses[1]: Duplicate value: core.NodeAddress{Type:"InternalIP", '
        'Address:"10.0.0.1"}']


def test_table_cells_and_field_selectors():
    obj = node({"unschedulable": True},
               {"conditions": [{"type": "Ready", "status": "False"}],
                "addresses": [{"type": "ExternalIP", "address": "1.2.3.4"},
                              {"type": "InternalIP", "address": "10.0.0.1"}],
                "nodeInfo": {"kubeletVersion": "v1.32.0", "osImage": "Debian"}},
               labels={"node-role.kubernetes.io/control-plane": "",
                       "kubernetes.io/role": "master", "node-role.kubernetes.io/": "x"},
               creationTimestamp="2020-01-01T00:00:00Z")
    cells = STRATEGY.table_cells(obj)
    assert cells[:3] == ["n1", "NotReady,SchedulingDisabled", "control-plane,master"]
    assert cells[4:] == ["v1.32.0", "10.0.0.1", "1.2.3.4", "Debian", "<unknown>", "<unknown>"]
    assert STRATEGY.selectable_fields(obj) == {"metadata.name": "n1",
                                               "spec.unschedulable": "true"}
    assert STRATEGY.table_cells(node())[1:3] == ["Unknown", "<none>"]


class Attributes:
    def __init__(self, obj, subresource=""):
        self.operation, self.object, self.subresource = CREATE, obj, subresource
        self.resource = NODES


def test_new_nodes_are_tainted_not_ready_once():
    plugin = TaintNodesByCondition()
    created = {"metadata": {"name": "n1"}}
    plugin.admit(Attributes(created))
    assert created["spec"]["taints"] == [{"key": "node.kubernetes.io/not-ready",
                                          "effect": "NoSchedule"}]
    plugin.admit(Attributes(created))
    assert len(created["spec"]["taints"]) == 1
    status_write = {"metadata": {"name": "n1"}}
    plugin.admit(Attributes(status_write, "status"))
    assert "spec" not in status_write


def test_the_kubelet_is_found_as_upstream_finds_it():
    with pytest.raises(errors.Unknown) as caught:
        connection_info(node())
    assert caught.value.message == "no preferred addresses found; known addresses: []"
    with pytest.raises(errors.Unknown) as caught:
        connection_info(node(status={"addresses": [{"type": "Bogus", "address": "x"}]}))
    assert caught.value.message == "no preferred addresses found; known addresses: [{Bogus x}]"
    info = connection_info(node(status={
        "addresses": [{"type": "ExternalIP", "address": "1.2.3.4"},
                      {"type": "InternalIP", "address": "10.0.0.1"}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10255}}}))
    assert (info.scheme, info.hostname, info.port) == ("https", "10.0.0.1", 10255)
    assert connection_info(node(status={"addresses": [
        {"type": "Hostname", "address": "n1"}]})).port == 10250


def test_only_global_unicast_kubelets_are_proxied_to():
    with pytest.raises(errors.BadRequest, match="address not allowed"):
        check_proxyable("127.0.0.1")
    with pytest.raises(errors.BadRequest, match="address not allowed"):
        check_proxyable("169.254.1.1")
    check_proxyable("10.1.2.3")


def test_dial_errors_are_worded_as_go():
    assert dial_error(ConnectionRefusedError(111, "Connection refused"), "10.0.0.1", 10250) == \
        "dial tcp 10.0.0.1:10250: connect: connection refused"
    assert dial_error(TimeoutError(), "fd00::1", 10250) == "dial tcp [fd00::1]:10250: i/o timeout"
