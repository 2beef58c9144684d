"""``ValidateService``, ``ValidateServiceUpdate`` and the status validation, as upstream."""

from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue, go_quote
from kapiserver.apimachinery.validation import (is_dns1123_subdomain, is_valid_cidr,
                                                is_valid_ip, is_valid_port_name,
                                                is_valid_port_num, parse_ip_sloppy,
                                                validate_labels)

from .endpoints import (validate_non_special_ip, validate_port_and_protocol,
                        validate_port_name, validate_qualified_name)
from .service_fields import (AFFINITIES, CLUSTER_IP, EXTERNAL_NAME, IP_MODES, LB_SOURCE_RANGES,
                             LOAD_BALANCER, MAX_AFFINITY_TIMEOUT, NODE_PORT, NONE, SINGLE_STACK,
                             SPEC, TOPOLOGY_HINTS, TOPOLOGY_MODE, TRAFFIC_POLICIES, TYPES, _int,
                             _slice, externally_accessible, is_headless, needs_health_check,
                             ports_of, spec_of, validate_cluster_ips_related_fields)


def _validate_port_num_or_name(value, path: FieldPath) -> list:
    """``ValidatePortNumOrName`` (an int-or-string)."""
    if isinstance(value, str):
        return [FieldError.invalid(path, value, msg) for msg in is_valid_port_name(value)]
    number = _int(value)
    return [FieldError.invalid(path, number, msg) for msg in is_valid_port_num(number)]


def _validate_service_port(port: dict, require_name: bool, names: set,
                           path: FieldPath) -> list:
    errs = validate_port_name(port, require_name, path)
    name = port.get("name") or ""
    if name:
        if name in names:
            errs.append(FieldError.duplicate(path.child("name"), name))
        names.add(name)
    errs += validate_port_and_protocol(port, path)
    errs += _validate_port_num_or_name(port.get("targetPort"), path.child("targetPort"))
    if port.get("appProtocol") is not None:
        errs += validate_qualified_name(port["appProtocol"], path.child("appProtocol"))
    return errs


def _go_service_port(protocol: str, port: int) -> GoValue:
    # The duplicate's key is a core.ServicePort with only Protocol and Port set, as %#v.
    return GoValue(f"core.ServicePort{{Name:\"\", Protocol:{go_quote(protocol)}, "
                   f"AppProtocol:(*string)(nil), Port:{port}, TargetPort:intstr.IntOrString"
                   f"{{Type:0, IntVal:0, StrVal:\"\"}}, NodePort:0}}")


def _validate_affinity_config(config, path: FieldPath) -> list:
    when = "when session affinity type is ClientIP"
    if not isinstance(config, dict):
        return [FieldError.required(path, when)]
    client = config.get("clientIP")
    if not isinstance(client, dict):
        return [FieldError.required(path.child("clientIP"), when)]
    timeout = client.get("timeoutSeconds")
    if timeout is None:
        return [FieldError.required(path.child("clientIP", "timeoutSeconds"), when)]
    if not 0 < _int(timeout) <= MAX_AFFINITY_TIMEOUT:
        return [FieldError.invalid(path.child("clientIP", "timeoutSeconds"), timeout,
                                   f"must be greater than 0 and less than "
                                   f"{MAX_AFFINITY_TIMEOUT}")]
    return []


def validate_service_spec(svc: dict) -> list:
    """``ValidateService`` after the metadata."""
    spec = spec_of(svc)
    meta = svc.get("metadata") or {}
    errs = []
    annotations = meta.get("annotations") or {}
    if (TOPOLOGY_MODE in annotations and TOPOLOGY_HINTS in annotations
            and annotations[TOPOLOGY_MODE] != annotations[TOPOLOGY_HINTS]):
        errs.append(FieldError.invalid(FieldPath("metadata", "annotations").key(TOPOLOGY_MODE),
                                       annotations[TOPOLOGY_MODE],
                                       f"must match annotations[{TOPOLOGY_HINTS}] when both "
                                       "are specified"))
    ports = ports_of(svc)
    service_type = spec.get("type") or ""
    headless = is_headless(svc)
    if not ports and not headless and service_type != EXTERNAL_NAME:
        errs.append(FieldError.required(SPEC.child("ports")))
    if service_type in (LOAD_BALANCER, NODE_PORT) and headless:
        errs.append(FieldError.invalid(SPEC.child("clusterIPs").index(0), NONE,
                                       f"may not be set to 'None' for {service_type} services"))
    elif service_type == EXTERNAL_NAME:
        for field in ("clusterIPs", "ipFamilies"):
            if spec.get(field):
                errs.append(FieldError.forbidden(SPEC.child(field),
                                                 "may not be set for ExternalName services"))
        if spec.get("ipFamilyPolicy") is not None:
            errs.append(FieldError.forbidden(SPEC.child("ipFamilyPolicy"),
                                             "may not be set for ExternalName services"))
        # The value (a CNAME) may end with a dot to mark it fully qualified.
        cname = spec.get("externalName") or ""
        cname = cname[:-1] if cname.endswith(".") else cname
        if cname:
            errs += [FieldError.invalid(SPEC.child("externalName"), cname, msg)
                     for msg in is_dns1123_subdomain(cname)]
        else:
            errs.append(FieldError.required(SPEC.child("externalName")))
    names = set()
    for i, port in enumerate(ports):
        errs += _validate_service_port(port, len(ports) > 1, names,
                                       SPEC.child("ports").index(i))
    if spec.get("selector") is not None:
        errs += validate_labels(spec.get("selector") or {}, SPEC.child("selector"))
    affinity = spec.get("sessionAffinity") or ""
    if not affinity:
        errs.append(FieldError.required(SPEC.child("sessionAffinity")))
    elif affinity not in AFFINITIES:
        errs.append(FieldError.not_supported(SPEC.child("sessionAffinity"), affinity,
                                             AFFINITIES))
    if affinity == "ClientIP":
        errs += _validate_affinity_config(spec.get("sessionAffinityConfig"),
                                          SPEC.child("sessionAffinityConfig"))
    elif affinity == "None" and spec.get("sessionAffinityConfig") is not None:
        errs.append(FieldError.forbidden(SPEC.child("sessionAffinityConfig"),
                                         "must not be set when session affinity is None"))
    errs += validate_cluster_ips_related_fields(svc)
    for i, ip in enumerate(spec.get("externalIPs") or []):
        path = SPEC.child("externalIPs").index(i)
        errs += is_valid_ip(path, ip) or validate_non_special_ip(ip, path)
    if not service_type:
        errs.append(FieldError.required(SPEC.child("type")))
    elif service_type not in TYPES:
        errs.append(FieldError.not_supported(SPEC.child("type"), service_type, TYPES))
    if service_type == CLUSTER_IP:
        for i, port in enumerate(ports):
            if _int(port.get("nodePort")):
                errs.append(FieldError.forbidden(SPEC.child("ports").index(i).child("nodePort"),
                                                 "may not be used when `type` is 'ClusterIP'"))
    seen_node_ports, seen_ports = set(), set()
    for i, port in enumerate(ports):
        node_port = _int(port.get("nodePort"))
        if node_port:
            key = (port.get("protocol") or "", node_port)
            if key in seen_node_ports:
                errs.append(FieldError.duplicate(SPEC.child("ports").index(i).child("nodePort"),
                                                 node_port))
            seen_node_ports.add(key)
    for i, port in enumerate(ports):
        key = (port.get("protocol") or "", _int(port.get("port")))
        if key in seen_ports:
            errs.append(FieldError.duplicate(SPEC.child("ports").index(i), _go_service_port(*key)))
        seen_ports.add(key)
    errs += _validate_source_ranges(svc)
    allocate = spec.get("allocateLoadBalancerNodePorts")
    if allocate is not None and service_type != LOAD_BALANCER:
        errs.append(FieldError.forbidden(SPEC.child("allocateLoadBalancerNodePorts"),
                                         "may only be used when `type` is 'LoadBalancer'"))
    if service_type == LOAD_BALANCER and allocate is None:
        errs.append(FieldError.required(FieldPath("allocateLoadBalancerNodePorts")))
    errs += validate_load_balancer_class(None, svc)
    errs += _validate_traffic_policies(svc)
    return errs


def _validate_source_ranges(svc: dict) -> list:
    spec = spec_of(svc)
    errs = []
    ranges = spec.get("loadBalancerSourceRanges") or []
    annotations = (svc.get("metadata") or {}).get("annotations") or {}
    if ranges:
        path = SPEC.child("LoadBalancerSourceRanges")  # sic: upstream's capital L
        if spec.get("type") != LOAD_BALANCER:
            errs.append(FieldError.forbidden(path, "may only be used when `type` is "
                                                   "'LoadBalancer'"))
        for i, value in enumerate(ranges):
            # Space-padded values are tolerated, a leftover of the annotation's days.
            errs += is_valid_cidr(path.index(i), str(value).strip())
    elif LB_SOURCE_RANGES in annotations:
        path = FieldPath("metadata", "annotations").key(LB_SOURCE_RANGES)
        if spec.get("type") != LOAD_BALANCER:
            errs.append(FieldError.forbidden(path, "may only be used when `type` is "
                                                   "'LoadBalancer'"))
        value = str(annotations[LB_SOURCE_RANGES]).strip()
        if value:
            for cidr in value.split(","):
                errs += is_valid_cidr(path, cidr.strip())
    return errs


def validate_load_balancer_class(old: dict | None, svc: dict) -> list:
    """``validateLoadBalancerClassField``."""
    spec = spec_of(svc)
    path = SPEC.child("loadBalancerClass")
    errs = []
    lb_class = spec.get("loadBalancerClass")
    if (old is not None and spec_of(old).get("type") == LOAD_BALANCER
            and spec.get("type") == LOAD_BALANCER
            and spec_of(old).get("loadBalancerClass") != lb_class):
        errs.append(FieldError.invalid(path, lb_class, "may not change once set"))
    if spec.get("type") == LOAD_BALANCER:
        if lb_class is not None:
            errs += validate_qualified_name(lb_class, path)
    elif lb_class is not None:
        errs.append(FieldError.forbidden(path, "may only be used when `type` is 'LoadBalancer'"))
    return errs


def _validate_traffic_policies(svc: dict) -> list:
    spec = spec_of(svc)
    errs = []
    external = spec.get("externalTrafficPolicy") or ""
    if not externally_accessible(svc):
        if external:
            errs.append(FieldError.invalid(SPEC.child("externalTrafficPolicy"), external,
                                           "may only be set for externally-accessible "
                                           "services"))
    elif not external:
        errs.append(FieldError.required(SPEC.child("externalTrafficPolicy")))
    elif external not in TRAFFIC_POLICIES:
        errs.append(FieldError.not_supported(SPEC.child("externalTrafficPolicy"), external,
                                             TRAFFIC_POLICIES))
    health = _int(spec.get("healthCheckNodePort"))
    if not needs_health_check(svc):
        if health:
            errs.append(FieldError.invalid(SPEC.child("healthCheckNodePort"), health,
                                           "may only be set when `type` is 'LoadBalancer' and "
                                           "`externalTrafficPolicy` is 'Local'"))
    elif not health:
        errs.append(FieldError.required(SPEC.child("healthCheckNodePort")))
    else:
        errs += [FieldError.invalid(SPEC.child("healthCheckNodePort"), health, msg)
                 for msg in is_valid_port_num(health)]
    internal = spec.get("internalTrafficPolicy")
    if internal is None:
        # Not forbidden for other types, for the sake of objects stored long ago.
        if spec.get("type") in (NODE_PORT, LOAD_BALANCER, CLUSTER_IP):
            errs.append(FieldError.required(SPEC.child("internalTrafficPolicy")))
    elif internal not in TRAFFIC_POLICIES:
        errs.append(FieldError.not_supported(SPEC.child("internalTrafficPolicy"), internal,
                                             TRAFFIC_POLICIES))
    distribution = spec.get("trafficDistribution")
    if distribution is not None and distribution != "PreferClose":
        errs.append(FieldError.not_supported(SPEC.child("trafficDistribution"), distribution,
                                             ("PreferClose",)))
    return errs


def validate_update_specific(svc: dict, old: dict) -> list:
    """The checks ``ValidateServiceUpdate`` adds to ``ValidateService``: cluster IPs and IP
    families never change once set (except to or from ExternalName), nor load balancer
    class or health check node port."""
    spec, old_spec = spec_of(svc), spec_of(old)
    errs = []
    if EXTERNAL_NAME not in (spec.get("type"), old_spec.get("type")) and not (
            is_headless(svc) and is_headless(old)):
        new_ips, old_ips = spec.get("clusterIPs") or [], old_spec.get("clusterIPs") or []
        path = SPEC.child("clusterIPs").index(0)
        if len(old_ips) == len(new_ips):
            errs += [FieldError.invalid(SPEC.child("clusterIPs").index(i), _slice(new_ips),
                                        "may not change once set")
                     for i, ip in enumerate(old_ips) if ip != new_ips[i]]
        elif len(old_ips) > len(new_ips):
            if not new_ips:
                errs.append(FieldError.invalid(path, _slice(new_ips),
                                               "primary clusterIP can not be unset"))
            elif old_ips[0] != new_ips[0]:
                errs.append(FieldError.invalid(path, _slice(new_ips), "may not change once set"))
            if len(new_ips) == 1 and spec.get("ipFamilyPolicy") != SINGLE_STACK:
                errs.append(FieldError.invalid(SPEC.child("ipFamilyPolicy"),
                                               spec.get("ipFamilyPolicy"),
                                               "must be set to 'SingleStack' when releasing "
                                               "the secondary clusterIP"))
        elif old_ips and new_ips[0] != old_ips[0]:
            errs.append(FieldError.invalid(path, _slice(new_ips), "may not change once set"))
    if EXTERNAL_NAME not in (spec.get("type"), old_spec.get("type")) and (
            not is_headless(svc) and not is_headless(old)):
        new_families, old_families = spec.get("ipFamilies") or [], old_spec.get("ipFamilies") or []
        path = SPEC.child("ipFamilies").index(0)
        if len(old_families) == len(new_families):
            if old_families != new_families:
                errs.append(FieldError.invalid(path, _slice(new_families),
                                               "may not change once set"))
        elif len(old_families) > len(new_families) and new_families:
            if new_families[0] != old_families[0]:
                errs.append(FieldError.invalid(path, _slice(spec.get("clusterIPs")),
                                               "may not change once set"))
        elif old_families and new_families and new_families[0] != old_families[0]:
            errs.append(FieldError.invalid(path, _slice(spec.get("clusterIPs")),
                                           "may not change once set"))
    errs += validate_load_balancer_class(old, svc)
    if needs_health_check(old) and needs_health_check(svc) and (
            spec.get("healthCheckNodePort") != old_spec.get("healthCheckNodePort")):
        errs.append(FieldError.forbidden(SPEC.child("healthCheckNodePort"), "field is immutable"))
    return errs


def validate_load_balancer_status(svc: dict) -> list:
    """``ValidateLoadBalancerStatus`` (LoadBalancerIPMode on, AllowServiceLBStatusOnNonLB off)."""
    status = svc.get("status") if isinstance(svc.get("status"), dict) else {}
    ingresses = (status.get("loadBalancer") or {}).get("ingress") or []
    path = FieldPath("status", "loadBalancer", "ingress")
    if spec_of(svc).get("type") != LOAD_BALANCER and ingresses:
        return [FieldError.forbidden(path, "may only be used when `spec.type` is "
                                           "'LoadBalancer'")]
    errs = []
    for i, ingress in enumerate(i if isinstance(i, dict) else {} for i in ingresses):
        item = path.index(i)
        ip, mode, hostname = ingress.get("ip") or "", ingress.get("ipMode"), ingress.get(
            "hostname") or ""
        if ip:
            errs += is_valid_ip(item.child("ip"), ip)
        if mode is None:
            if ip:
                errs.append(FieldError.required(item.child("ipMode"),
                                                "must be specified when `ip` is set"))
        elif not ip:
            errs.append(FieldError.forbidden(item.child("ipMode"),
                                             "may not be specified when `ip` is not set"))
        elif mode not in IP_MODES:
            errs.append(FieldError.not_supported(item.child("ipMode"), mode, IP_MODES))
        if hostname:
            errs += [FieldError.invalid(item.child("hostname"), hostname, msg)
                     for msg in is_dns1123_subdomain(hostname)]
            if parse_ip_sloppy(hostname) is not None:
                errs.append(FieldError.invalid(item.child("hostname"), hostname,
                                               "must be a DNS name, not an IP address"))
    return errs
