"""EndpointSlices: ``ValidateEndpointSliceCreate``/``Update``, ``SetDefaults_EndpointPort``
and the ``endpointslice`` registry strategy of 1.32."""

from __future__ import annotations

from kapiserver.apimachinery.field_errors import FieldError, FieldPath
from kapiserver.apimachinery.validation import (is_dns1123_label,
                                                is_fully_qualified_domain_name,
                                                is_qualified_name, is_valid_ip,
                                                is_valid_ipv4_address, is_valid_ipv6_address,
                                                is_valid_label_value, name_is_dns_subdomain,
                                                validate_core_object_meta,
                                                validate_core_object_meta_update,
                                                validate_immutable_field, validate_labels)
from kapiserver.registry.builtin import builtin_spec
from kapiserver.registry.builtin_strategy import BuiltinStrategy
from kapiserver.registry.printers import age

ENDPOINT_SLICES = builtin_spec("discovery.k8s.io", "v1", "endpointslices")
ADDRESS_TYPES = ("FQDN", "IPv4", "IPv6")
#: ``AddressTypeIP``: deprecated, kept by updates of slices that already have it.
DEPRECATED_ADDRESS_TYPES = ("IP",)
PROTOCOLS = ("SCTP", "TCP", "UDP")
MAX_TOPOLOGY_LABELS = 16
MAX_ADDRESSES = 100
MAX_PORTS = 100
MAX_ENDPOINTS = 1000
MAX_ZONE_HINTS = 8
#: How many ports and addresses a Table cell lists before "+ N more...".
MAX_LISTED = 3


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value) -> list:
    return value if isinstance(value, list) else []


def _str(value) -> str:
    return value if isinstance(value, str) else ""


def set_endpoint_slice_defaults(obj: dict) -> None:
    """``SetDefaults_EndpointPort``: a port's name is "" and its protocol TCP when unset."""
    for port in _list(obj.get("ports")):
        if isinstance(port, dict):
            if port.get("name") is None:
                port["name"] = ""
            if port.get("protocol") is None:
                port["protocol"] = "TCP"


def _validate_address(address, address_type: str, path: FieldPath) -> list[FieldError]:
    from kapiserver_plugins.core.endpoints import validate_non_special_ip

    address = _str(address)
    if address_type == "IP":
        return is_valid_ip(path, address)
    if address_type in ("IPv4", "IPv6"):
        check = is_valid_ipv4_address if address_type == "IPv4" else is_valid_ipv6_address
        return check(path, address) or validate_non_special_ip(address, path)
    if address_type == "FQDN":
        return is_fully_qualified_domain_name(path, address)
    return []  # unknown types fall through unvalidated


def _validate_hints(hints: dict, path: FieldPath) -> list[FieldError]:
    """``validateHints``: at most eight zones, each named once with a label value."""
    zones = _list(hints.get("forZones"))
    zones_path = path.child("forZones")
    if len(zones) > MAX_ZONE_HINTS:
        return [FieldError.too_many(zones_path, len(zones), MAX_ZONE_HINTS)]
    errs, seen = [], set()
    for i, zone in enumerate(zones):
        name = _str(_dict(zone).get("name"))
        at = zones_path.index(i).child("name")
        if name in seen:
            errs.append(FieldError.duplicate(at, name))
        seen.add(name)
        errs += [FieldError.invalid(at, name, msg) for msg in is_valid_label_value(name)]
    return errs


def validate_endpoints(endpoints: list, address_type: str, path: FieldPath) -> list[FieldError]:
    """``validateEndpoints``."""
    if len(endpoints) > MAX_ENDPOINTS:
        return [FieldError.too_many(path, len(endpoints), MAX_ENDPOINTS)]
    errs = []
    for i, endpoint in enumerate(endpoints):
        endpoint = _dict(endpoint)
        at = path.index(i)
        addresses = _list(endpoint.get("addresses"))
        if not addresses:
            errs.append(FieldError.required(at.child("addresses"),
                                            "must contain at least 1 address"))
        elif len(addresses) > MAX_ADDRESSES:
            errs.append(FieldError.too_many(at.child("addresses"), len(addresses),
                                            MAX_ADDRESSES))
        for j, address in enumerate(addresses):
            errs += _validate_address(address, address_type, at.child("addresses").index(j))
        if endpoint.get("nodeName") is not None:
            node = _str(endpoint.get("nodeName"))
            errs += [FieldError.invalid(at.child("nodeName"), node, msg)
                     for msg in name_is_dns_subdomain(node)]
        topology = _dict(endpoint.get("deprecatedTopology"))
        if len(topology) > MAX_TOPOLOGY_LABELS:
            errs.append(FieldError.too_many(at.child("deprecatedTopology"), len(topology),
                                            MAX_TOPOLOGY_LABELS))
        errs += validate_labels(topology, at.child("deprecatedTopology"))
        if endpoint.get("hostname") is not None:
            hostname = _str(endpoint.get("hostname"))
            errs += [FieldError.invalid(at.child("hostname"), hostname, msg)
                     for msg in is_dns1123_label(hostname)]
        if isinstance(endpoint.get("hints"), dict):
            errs += _validate_hints(endpoint["hints"], at.child("hints"))
    return errs


def validate_ports(ports: list, path: FieldPath) -> list[FieldError]:
    """``validatePorts``: names unique DNS labels, a known protocol, a qualified
    appProtocol."""
    if len(ports) > MAX_PORTS:
        return [FieldError.too_many(path, len(ports), MAX_PORTS)]
    errs, names = [], set()
    for i, port in enumerate(ports):
        port = _dict(port)
        at = path.index(i)
        name = _str(port.get("name"))
        if name:
            errs += [FieldError.invalid(at.child("name"), name, msg)
                     for msg in is_dns1123_label(name)]
        if name in names:
            errs.append(FieldError.duplicate(at.child("name"), name))
        names.add(name)
        protocol = port.get("protocol")
        if protocol is None:
            errs.append(FieldError.required(at.child("protocol"), ""))
        elif protocol not in PROTOCOLS:
            errs.append(FieldError.not_supported(at.child("protocol"), protocol, PROTOCOLS))
        if port.get("appProtocol") is not None:
            app = _str(port.get("appProtocol"))
            errs += [FieldError.invalid(at.child("appProtocol"), app, msg)
                     for msg in is_qualified_name(app)]
    return errs


def validate_endpoint_slice(obj: dict, address_types=ADDRESS_TYPES) -> list[FieldError]:
    """``ValidateEndpointSlice``."""
    errs = validate_core_object_meta(_dict(obj.get("metadata")), True, name_is_dns_subdomain)
    address_type = _str(obj.get("addressType"))
    if not address_type:
        errs.append(FieldError.required(FieldPath("addressType"), ""))
    elif address_type not in address_types:
        errs.append(FieldError.not_supported(FieldPath("addressType"), address_type,
                                             sorted(address_types)))
    errs += validate_endpoints(_list(obj.get("endpoints")), address_type, FieldPath("endpoints"))
    return errs + validate_ports(_list(obj.get("ports")), FieldPath("ports"))


def validate_endpoint_slice_update(new: dict, old: dict) -> list[FieldError]:
    """``ValidateEndpointSliceUpdate``: the deprecated ``IP`` type is still allowed; the
    address type never changes."""
    errs = validate_core_object_meta_update(_dict(new.get("metadata")),
                                            _dict(old.get("metadata")))
    errs += validate_endpoint_slice(new, ADDRESS_TYPES + DEPRECATED_ADDRESS_TYPES)
    return errs + validate_immutable_field(_str(new.get("addressType")),
                                           _str(old.get("addressType")),
                                           FieldPath("addressType"))


def _list_with_more(listed: list, more: bool, count: int) -> str:
    """``listWithMoreString``."""
    text = ",".join(listed)
    if more:
        return f"{text} + {count - MAX_LISTED} more..."
    return text or "<unset>"


def format_ports(ports: list) -> str:
    """``formatDiscoveryPorts``: a port's number, else its name, else ``*``."""
    listed, more = [], False
    for port in ports:
        port = _dict(port)
        if len(listed) < MAX_LISTED:
            if isinstance(port.get("port"), int):
                listed.append(str(port["port"]))
            elif port.get("name") is not None:
                listed.append(_str(port.get("name")))
            else:
                listed.append("*")
        elif len(listed) == MAX_LISTED:
            more = True
    return _list_with_more(listed, more, len(ports))


def format_endpoints(endpoints: list) -> str:
    """``formatDiscoveryEndpoints``: the first three addresses."""
    listed, more, count = [], False, 0
    for endpoint in endpoints:
        for address in _list(_dict(endpoint).get("addresses")):
            if len(listed) < MAX_LISTED:
                listed.append(_str(address))
            elif len(listed) == MAX_LISTED:
                more = True
            count += 1
    return _list_with_more(listed, more, count)


def _drop_deprecated_topology(new: dict, old: dict | None) -> None:
    """``dropTopologyOnV1``: a v1 write clears ``deprecatedTopology``, unless an update
    leaves the endpoints as they were."""
    if old is not None and new.get("endpoints") == old.get("endpoints"):
        return
    for endpoint in _list(new.get("endpoints")):
        if isinstance(endpoint, dict):
            endpoint.pop("deprecatedTopology", None)


class EndpointSliceStrategy(BuiltinStrategy):
    """``pkg/registry/discovery/endpointslice`` strategy: generation 1 on create, bumped when
    anything but metadata changes, or the labels do."""

    has_generation = True

    def set_defaults(self, obj):
        set_endpoint_slice_defaults(obj)

    def on_create(self, obj):
        _drop_deprecated_topology(obj, None)

    def on_update(self, new, old):
        _drop_deprecated_topology(new, old)

    def spec_changed(self, new, old):
        labels = (_dict(new.get("metadata")).get("labels") or {},
                  _dict(old.get("metadata")).get("labels") or {})
        return super().spec_changed(new, old) or labels[0] != labels[1]

    def validate(self, obj):
        return validate_endpoint_slice(obj)

    def validate_update(self, new, old):
        return validate_endpoint_slice_update(new, old)

    def table_cells(self, obj):
        meta = _dict(obj.get("metadata"))
        return [meta.get("name", ""), _str(obj.get("addressType")),
                format_ports(_list(obj.get("ports"))),
                format_endpoints(_list(obj.get("endpoints"))), age(meta.get("creationTimestamp"))]
