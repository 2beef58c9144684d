"""Endpoints: subsets of addresses and ports, validated as upstream, and their table."""

import ipaddress

from kapiserver.apimachinery.field_errors import FieldError, FieldPath
from kapiserver.apimachinery.validation import (is_dns1123_label, is_qualified_name,
                                                is_valid_ip, is_valid_port_num,
                                                name_is_dns_subdomain, parse_ip_sloppy)
from kapiserver.registry.printers import AGE_COLUMN, NAME_COLUMN, age
from kapiserver.registry.resource import ResourceSpec
from kapiserver.registry.strategy import Strategy

ENDPOINTS = ResourceSpec(group="", version="v1", kind="Endpoints", resource="endpoints",
                         singular="endpoints", namespaced=True, short_names=("ep",),
                         storage_version_hash="fWeeMqaN/OA=")
#: ``supportedPortProtocols``, sorted as ``sets.List`` lists them.
PROTOCOLS = ("SCTP", "TCP", "UDP")
ENDPOINTS_COLUMN = {
    "name": "Endpoints", "type": "string", "format": "",
    "description": "The set of all endpoints is the union of all subsets. Addresses are placed "
                   "into subsets according to the IPs they share. A single address with "
                   "multiple ports, some of which are ready and some of which are not (because "
                   "they come from different containers) will result in the address being "
                   "displayed in different subsets for the different ports. No address will "
                   "appear in both Addresses and NotReadyAddresses in the same subset. Sets of "
                   "addresses and ports that comprise a service.",
    "priority": 0}
#: How many endpoints the table cell lists before "+ N more...".
MAX_LISTED = 3


def _int(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def validate_dns1123_label(value: str, path: FieldPath) -> list:
    """``ValidateDNS1123Label``."""
    return [FieldError.invalid(path, value, msg) for msg in is_dns1123_label(value)]


def validate_qualified_name(value: str, path: FieldPath) -> list:
    """``ValidateQualifiedName``."""
    return [FieldError.invalid(path, value, msg) for msg in is_qualified_name(value)]


def validate_non_special_ip(value: str, path: FieldPath) -> list:
    """``ValidateNonSpecialIP``: no unspecified, loopback or link-local addresses."""
    ip = parse_ip_sloppy(value)
    if ip is None:
        return [FieldError.invalid(path, value, "must be a valid IP address")]
    errs = []
    if ip.is_unspecified:
        errs.append(FieldError.invalid(path, value, f"may not be unspecified ({value})"))
    if ip.is_loopback:
        errs.append(FieldError.invalid(path, value, "may not be in the loopback range "
                                                    "(127.0.0.0/8, ::1/128)"))
    if ip in _LINK_LOCAL:
        errs.append(FieldError.invalid(path, value, "may not be in the link-local range "
                                                    "(169.254.0.0/16, fe80::/10)"))
    if ip in _LINK_LOCAL_MULTICAST:
        errs.append(FieldError.invalid(path, value, "may not be in the link-local multicast "
                                                    "range (224.0.0.0/24, ff02::/10)"))
    return errs


class _Networks:
    """Membership in any of several networks of either family (Go's net.IP predicates)."""

    def __init__(self, *cidrs):
        self.networks = [ipaddress.ip_network(c) for c in cidrs]

    def __contains__(self, ip) -> bool:
        return any(ip.version == n.version and ip in n for n in self.networks)


_LINK_LOCAL = _Networks("169.254.0.0/16", "fe80::/10")
# Go's IsLinkLocalMulticast: 224.0.0.0/24, and ff02::/16 whatever the flag bits (ffx2::).
_LINK_LOCAL_MULTICAST = _Networks("224.0.0.0/24", *(f"ff{x:x}2::/16" for x in range(16)))


def _validate_address(address: dict, path: FieldPath, ip_to_node: dict) -> list:
    ip = address.get("ip") or ""
    errs = is_valid_ip(path.child("ip"), ip)
    if address.get("hostname"):
        errs += validate_dns1123_label(address["hostname"], path.child("hostname"))
    node_name = address.get("nodeName")
    if node_name is not None:
        errs += [FieldError.invalid(path.child("nodeName"), node_name, msg)
                 for msg in name_is_dns_subdomain(node_name)]
    if ip in ip_to_node and node_name is not None and node_name != ip_to_node[ip]:
        errs.append(FieldError.forbidden(path.child("nodeName"),
                                         f"Cannot change NodeName for {ip} to {node_name}"))
    if errs:
        return errs
    return validate_non_special_ip(ip, path.child("ip"))


def validate_port_and_protocol(port: dict, path: FieldPath) -> list:
    """``port`` a valid port number and ``protocol`` one of TCP, UDP, SCTP (endpoints and
    services check both the same way)."""
    errs = []
    number = _int(port.get("port"))
    errs += [FieldError.invalid(path.child("port"), number, msg)
             for msg in is_valid_port_num(number)]
    protocol = port.get("protocol") or ""
    if not protocol:
        errs.append(FieldError.required(path.child("protocol")))
    elif protocol not in PROTOCOLS:
        errs.append(FieldError.not_supported(path.child("protocol"), protocol, PROTOCOLS))
    return errs


def validate_port_name(port: dict, require_name: bool, path: FieldPath) -> list:
    """``name`` required when several ports exist, and a DNS-1123 label when set (endpoints
    and services check it the same way)."""
    name = port.get("name") or ""
    if require_name and not name:
        return [FieldError.required(path.child("name"))]
    return validate_dns1123_label(name, path.child("name")) if name else []


def _validate_port(port: dict, require_name: bool, path: FieldPath) -> list:
    errs = validate_port_name(port, require_name, path)
    errs += validate_port_and_protocol(port, path)
    if port.get("appProtocol") is not None:
        errs += validate_qualified_name(port["appProtocol"], path.child("appProtocol"))
    return errs


def validate_subsets(subsets: list, old_subsets: list) -> list:
    """``validateEndpointSubsets``: a node name, once set for an IP, may not change."""
    ip_to_node = {}
    for subset in old_subsets:
        for address in (subset.get("addresses") or []) + (subset.get("notReadyAddresses") or []):
            if address.get("nodeName") is not None:
                ip_to_node[address.get("ip") or ""] = address["nodeName"]
    errs = []
    for i, subset in enumerate(subsets):
        path = FieldPath("subsets").index(i)
        addresses = subset.get("addresses") or []
        not_ready = subset.get("notReadyAddresses") or []
        if not addresses and not not_ready:
            errs.append(FieldError.required(path, "must specify `addresses` or "
                                                  "`notReadyAddresses`"))
        for j, address in enumerate(addresses):
            errs += _validate_address(address, path.child("addresses").index(j), ip_to_node)
        for j, address in enumerate(not_ready):
            errs += _validate_address(address, path.child("notReadyAddresses").index(j),
                                      ip_to_node)
        ports = subset.get("ports") or []
        for j, port in enumerate(ports):
            errs += _validate_port(port, len(ports) > 1, path.child("ports").index(j))
    return errs


def format_endpoints(obj: dict) -> str:
    """The ENDPOINTS cell (upstream's ``formatEndpoints`` for all ports)."""
    subsets = obj.get("subsets") or []
    if not subsets:
        return "<none>"
    listed, more, count = [], False, 0
    for subset in subsets:
        addresses = subset.get("addresses") or []
        ports = subset.get("ports") or []
        if not ports:
            # Headless services may publish addresses without ports.
            count += len(addresses)
            for address in addresses:
                if len(listed) == MAX_LISTED:
                    more = True
                    break
                listed.append(address.get("ip") or "")
            continue
        for port in ports:
            count += len(addresses)
            for address in addresses:
                if len(listed) == MAX_LISTED:
                    more = True
                    break
                listed.append(_join_host_port(address.get("ip") or "", _int(port.get("port"))))
    text = ",".join(listed)
    if more:
        return f"{text} + {count - MAX_LISTED} more..."
    return text or "<none>"


def _join_host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class EndpointsStrategy(Strategy):
    """``pkg/registry/core/endpoint`` strategy and ``ValidateEndpoints``."""

    def apply_defaults(self, obj):
        _default(obj)

    def prepare_for_create(self, obj):
        super().prepare_for_create(obj)
        _default(obj)  # idempotent: also covers writes the store does not default

    def prepare_for_update(self, new, old):
        super().prepare_for_update(new, old)
        _default(new)

    def validate(self, obj):
        return super().validate(obj) + validate_subsets(obj.get("subsets") or [], [])

    def validate_update(self, new, old):
        from kapiserver.apimachinery.validation import validate_core_object_meta_update

        errs = self.validate_meta(new.get("metadata") or {})
        errs += validate_core_object_meta_update(new.get("metadata") or {},
                                                 old.get("metadata") or {})
        return errs + validate_subsets(new.get("subsets") or [], old.get("subsets") or [])

    def table_columns(self):
        return [NAME_COLUMN, ENDPOINTS_COLUMN, AGE_COLUMN]

    def table_cells(self, obj):
        meta = obj.get("metadata") or {}
        return [meta.get("name", ""), format_endpoints(obj), age(meta.get("creationTimestamp"))]


def _default(obj: dict) -> None:
    # SetDefaults_Endpoints: ports speak TCP unless told otherwise.
    for subset in obj.get("subsets") or []:
        for port in subset.get("ports") or []:
            if isinstance(port, dict) and not port.get("protocol"):
                port["protocol"] = "TCP"
