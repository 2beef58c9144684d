"""Unit tests of the service strategy: defaults, derived fields, validation and the table."""

import copy

import pytest

from kapiserver.apimachinery.field_errors import aggregate_message
from kapiserver_plugins.core.service_fields import (drop_type_dependent_fields,
                                                    init_ip_family_fields, normalize_cluster_ips,
                                                    patch_allocated_values, set_defaults)
from kapiserver_plugins.core.service_validation import validate_update_specific
from kapiserver_plugins.core.services import (SERVICES, ServiceStatusStrategy,
                                              ServiceStrategy)

STRATEGY = ServiceStrategy(SERVICES)


def svc(name="web", **spec) -> dict:
    return {"metadata": {"name": name, "namespace": "default"},
            "spec": {"ports": [{"port": 80}], **spec}}


def prepared(obj: dict) -> dict:
    set_defaults(obj)
    normalize_cluster_ips(obj, None)
    assert init_ip_family_fields(obj, None, "IPv4") == []
    return obj


def message(errors) -> str:
    return aggregate_message(errors)


def test_defaults():
    obj = svc(sessionAffinity="ClientIP", type="LoadBalancer",
              ports=[{"port": 80, "targetPort": 0}, {"port": 53, "protocol": "UDP",
                                                     "targetPort": "dns"}])
    set_defaults(obj)
    spec = obj["spec"]
    assert spec["sessionAffinityConfig"] == {"clientIP": {"timeoutSeconds": 10800}}
    assert spec["ports"] == [{"port": 80, "targetPort": 80, "protocol": "TCP"},
                             {"port": 53, "protocol": "UDP", "targetPort": "dns"}]
    assert spec["externalTrafficPolicy"] == "Cluster"
    assert spec["internalTrafficPolicy"] == "Cluster"
    assert spec["allocateLoadBalancerNodePorts"] is True
    external = svc(type="ExternalName", externalName="example.com")
    set_defaults(external)
    assert "internalTrafficPolicy" not in external["spec"]
    assert external["spec"]["sessionAffinity"] == "None"


def test_ip_family_fields():
    assert prepared(svc())["spec"]["ipFamilyPolicy"] == "SingleStack"
    headless = prepared(svc(clusterIP="None"))["spec"]
    assert headless["clusterIPs"] == ["None"]
    assert (headless["ipFamilyPolicy"], headless["ipFamilies"]) == ("RequireDualStack",
                                                                    ["IPv4", "IPv6"])
    selected = prepared(svc(clusterIP="None", selector={"a": "b"}))["spec"]
    assert (selected["ipFamilyPolicy"], selected["ipFamilies"]) == ("SingleStack", ["IPv4"])
    preferred = prepared(svc(ipFamilyPolicy="PreferDualStack"))["spec"]
    assert preferred["ipFamilies"] == ["IPv4"]
    wrong = svc(ipFamilies=["IPv6"])
    assert message(init_ip_family_fields(wrong, None, "IPv4")) == (
        'spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster')
    two = svc(clusterIP="10.0.0.5", clusterIPs=["10.0.0.5", "fd00::5"])
    assert message(init_ip_family_fields(two, None, "IPv4")) == (
        "[spec.ipFamilyPolicy: Invalid value: \"SingleStack\": must be 'RequireDualStack' or "
        "'PreferDualStack' when multiple cluster IPs are specified, spec.clusterIPs[1]: Invalid "
        'value: []string{"10.0.0.5", "fd00::5"}: IPv6 is not configured on this cluster]')
    mismatch = svc(clusterIP="10.0.0.5", clusterIPs=["10.0.0.6"])
    assert message(init_ip_family_fields(mismatch, None, "IPv4")) == (
        'spec.clusterIPs: Invalid value: []string{"10.0.0.6"}: first value must match '
        "`clusterIP`")


def test_update_keeps_allocated_values_and_syncs_cluster_ips():
    old = prepared(svc(type="NodePort", clusterIP="10.0.0.7",
                       ports=[{"name": "http", "port": 80, "nodePort": 30080}]))
    new = svc(type="NodePort", ports=[{"name": "http", "port": 8080}])
    set_defaults(new)
    patch_allocated_values(new, old)
    normalize_cluster_ips(new, old)
    assert new["spec"]["clusterIPs"] == ["10.0.0.7"] and new["spec"]["clusterIP"] == "10.0.0.7"
    assert new["spec"]["ports"][0]["nodePort"] == 30080
    singular = copy.deepcopy(old)
    singular["spec"]["clusterIP"] = "10.0.0.8"  # an old client changing only the singular
    normalize_cluster_ips(singular, old)
    assert singular["spec"]["clusterIPs"] == ["10.0.0.8"]
    assert message(validate_update_specific(singular, old)) == (
        'spec.clusterIPs[0]: Invalid value: []string{"10.0.0.8"}: may not change once set')


def test_switching_to_external_name_wipes_what_no_longer_applies():
    old = prepared(svc(type="LoadBalancer", clusterIP="10.0.0.9",
                       ports=[{"port": 80, "nodePort": 30001}]))
    old["status"] = {"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]}}
    new = copy.deepcopy(old)
    new["spec"].update(type="ExternalName", externalName="example.com")
    drop_type_dependent_fields(new, old)
    spec = new["spec"]
    for gone in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy",
                 "allocateLoadBalancerNodePorts", "externalTrafficPolicy"):
        assert gone not in spec, gone
    assert "nodePort" not in spec["ports"][0]
    assert new["status"] == {"loadBalancer": {}}
    assert STRATEGY.validate_update(dict(new, metadata=dict(new["metadata"],
                                                            resourceVersion="1")), old) == []


@pytest.mark.parametrize("spec, expected", [
    ({"type": "ExternalName", "externalName": "example.com", "clusterIP": "10.0.0.1",
      "clusterIPs": ["10.0.0.1"]},
     "spec.clusterIPs: Forbidden: may not be set for ExternalName services"),
    ({"type": "ExternalName", "externalName": "Not_A_Name."},
     "spec.externalName: Invalid value: \"Not_A_Name\": a lowercase RFC 1123 subdomain must "
     "consist of lower case alphanumeric characters, '-' or '.', and must start and end with an "
     "alphanumeric character (e.g. 'example.com', regex used for validation is "
     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
    ({"sessionAffinity": "ClientIP",
      "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 90000}}},
     "spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 90000: must be greater "
     "than 0 and less than 86400"),
    ({"sessionAffinity": "Sticky"},
     'spec.sessionAffinity: Unsupported value: "Sticky": supported values: "ClientIP", "None"'),
    ({"externalIPs": ["127.0.0.1"]},
     'spec.externalIPs[0]: Invalid value: "127.0.0.1": may not be in the loopback range '
     "(127.0.0.0/8, ::1/128)"),
    ({"loadBalancerSourceRanges": ["10.0.0.0/8"]},
     "spec.LoadBalancerSourceRanges: Forbidden: may only be used when `type` is 'LoadBalancer'"),
    ({"type": "NodePort", "externalTrafficPolicy": "Nowhere"},
     'spec.externalTrafficPolicy: Unsupported value: "Nowhere": supported values: "Cluster", '
     '"Local"'),
    ({"ports": [{"port": 80, "protocol": "HTTP"}]},
     'spec.ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"'),
    ({"ports": [{"port": 80, "targetPort": "Web_Port"}]},
     'spec.ports[0].targetPort: Invalid value: "Web_Port": must contain only alpha-numeric '
     "characters (a-z, 0-9), and hyphens (-)"),
    ({"type": "ClusterIP", "ports": [{"port": 80, "nodePort": 30000}]},
     "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"),
    ({"type": "Magic"},
     'spec.type: Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", '
     '"LoadBalancer", "NodePort"'),
])
def test_validation_messages(spec, expected):
    obj = svc(**spec)
    set_defaults(obj)
    normalize_cluster_ips(obj, None)
    init_ip_family_fields(obj, None, "IPv4")
    assert message(STRATEGY.validate(obj)) == expected


def test_status_strategy_writes_status_only():
    old = prepared(svc(type="LoadBalancer", clusterIP="10.0.0.9"))
    old["status"] = {"loadBalancer": {}}
    new = copy.deepcopy(old)
    new["spec"]["type"] = "ClusterIP"
    new["status"] = {"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}, {"hostname": "1.2.3.4"}]}}
    status = ServiceStatusStrategy(SERVICES)
    status.prepare_for_update(new, old)
    assert new["spec"]["type"] == "LoadBalancer"
    assert new["status"]["loadBalancer"]["ingress"][0] == {"ip": "192.0.2.1", "ipMode": "VIP"}
    new["metadata"]["resourceVersion"] = "1"
    assert message(status.validate_update(new, old)) == (
        'status.loadBalancer.ingress[1].hostname: Invalid value: "1.2.3.4": must be a DNS name, '
        "not an IP address")
    cluster = prepared(svc())
    cluster["status"] = {"loadBalancer": {"ingress": [{"ip": "192.0.2.1", "ipMode": "VIP"}]}}
    cluster["metadata"]["resourceVersion"] = "1"
    assert message(status.validate_update(cluster, cluster)) == (
        "status.loadBalancer.ingress: Forbidden: may only be used when `spec.type` is "
        "'LoadBalancer'")


def test_table_cells_and_selectable_fields():
    lb = prepared(svc(type="LoadBalancer", clusterIP="10.0.0.3", externalIPs=["198.51.100.1"],
                      ports=[{"port": 443, "nodePort": 31443}], selector={"b": "2", "a": "1"}))
    lb["metadata"]["creationTimestamp"] = None
    assert STRATEGY.table_cells(lb) == ["web", "LoadBalancer", "10.0.0.3", "198.51.100.1",
                                        "443:31443/TCP", "<unknown>", "a=1,b=2"]
    lb["spec"].pop("externalIPs")
    assert STRATEGY.table_cells(lb)[3] == "<pending>"
    lb["status"] = {"loadBalancer": {"ingress": [{"hostname": "lb.example"}, {"ip": "192.0.2.9"}]}}
    assert STRATEGY.table_cells(lb)[3] == "192.0.2.9,lb.example"
    assert STRATEGY.selectable_fields(lb) == {"metadata.name": "web",
                                              "metadata.namespace": "default",
                                              "spec.clusterIP": "10.0.0.3",
                                              "spec.type": "LoadBalancer"}
    empty = {"metadata": {"name": "odd"}}
    assert STRATEGY.table_cells(empty)[1:5] == ["", "<none>", "<unknown>", "<none>"]
    assert empty == {"metadata": {"name": "odd"}}  # reading never writes
