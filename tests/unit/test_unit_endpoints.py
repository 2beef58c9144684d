"""Unit tests of endpoints: upstream's special-IP rules, node name changes, the table."""

import pytest

from kapiserver.apimachinery.field_errors import FieldPath, aggregate_message
from kapiserver_plugins.core.endpoints import (ENDPOINTS, EndpointsStrategy, format_endpoints,
                                               validate_non_special_ip)

STRATEGY = EndpointsStrategy(ENDPOINTS)


@pytest.mark.parametrize("ip, detail", [
    ("0.0.0.0", "may not be unspecified (0.0.0.0)"),
    ("::", "may not be unspecified (::)"),
    ("127.0.0.2", "may not be in the loopback range (127.0.0.0/8, ::1/128)"),
    ("::1", "may not be in the loopback range (127.0.0.0/8, ::1/128)"),
    ("169.254.169.254", "may not be in the link-local range (169.254.0.0/16, fe80::/10)"),
    ("fe80::1", "may not be in the link-local range (169.254.0.0/16, fe80::/10)"),
    ("224.0.0.1", "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"),
    ("ff02::1", "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"),
])
def test_special_ips(ip, detail):
    assert aggregate_message(validate_non_special_ip(ip, FieldPath("ip"))) == \
        f'ip: Invalid value: "{ip}": {detail}'


def test_ordinary_ips_pass():
    for ip in ("10.0.0.1", "192.0.2.1", "2001:db8::1", "224.0.1.1"):
        assert validate_non_special_ip(ip, FieldPath("ip")) == []


def endpoints(*subsets) -> dict:
    return {"metadata": {"name": "ep", "namespace": "default", "resourceVersion": "1"},
            "subsets": list(subsets)}


def test_node_name_may_not_change_for_an_address():
    old = endpoints({"addresses": [{"ip": "10.0.0.1", "nodeName": "a"}]})
    new = endpoints({"addresses": [{"ip": "10.0.0.1", "nodeName": "b"}]})
    assert aggregate_message(STRATEGY.validate_update(new, old)) == (
        "subsets[0].addresses[0].nodeName: Forbidden: Cannot change NodeName for 10.0.0.1 to b")
    assert STRATEGY.validate_update(old, old) == []


def test_hostname_and_port_names():
    bad = endpoints({"addresses": [{"ip": "10.0.0.1", "hostname": "Web"}],
                     "ports": [{"name": "HTTP", "port": 80, "protocol": "TCP"}]})
    assert aggregate_message(STRATEGY.validate(bad)) == (
        "[subsets[0].addresses[0].hostname: Invalid value: \"Web\": a lowercase RFC 1123 label "
        "must consist of lower case alphanumeric characters or '-', and must start and end with "
        "an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?'), subsets[0].ports[0].name: Invalid value: \"HTTP\": a "
        "lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
        "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
        "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')]")


def test_table_cell():
    assert format_endpoints({}) == "<none>"
    assert format_endpoints(endpoints({"addresses": [{"ip": "fd00::1"}],
                                       "ports": [{"port": 80}, {"port": 443}]})) == \
        "[fd00::1]:80,[fd00::1]:443"
    many = endpoints({"addresses": [{"ip": f"10.0.0.{i}"} for i in range(1, 3)],
                      "ports": [{"port": 80}, {"port": 81}]})
    assert format_endpoints(many) == "10.0.0.1:80,10.0.0.2:80,10.0.0.1:81 + 1 more..."
    assert format_endpoints(endpoints({"notReadyAddresses": [{"ip": "10.0.0.1"}],
                                       "ports": [{"port": 80}]})) == "<none>"
