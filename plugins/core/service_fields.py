"""Services' fields: reading them, upstream's defaults, and the fields derived from others.

``SetDefaults_Service``, ``normalizeClusterIPs``, ``patchAllocatedValues``,
``initIPFamilyFields`` and ``dropTypeDependentFields``: what upstream does to a service
between decoding and validation, on create and on update.
"""

import ipaddress

from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue, go_string_slice
from kapiserver.apimachinery.validation import is_valid_ip, parse_ip_sloppy

CLUSTER_IP, NODE_PORT, LOAD_BALANCER, EXTERNAL_NAME = (
    "ClusterIP", "NodePort", "LoadBalancer", "ExternalName")
#: Enumerations in ``sets.List`` order, as ``NotSupported`` lists them.
TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
AFFINITIES = ("ClientIP", "None")
TRAFFIC_POLICIES = ("Cluster", "Local")
FAMILIES = ("IPv4", "IPv6")
POLICIES = ("PreferDualStack", "RequireDualStack", "SingleStack")
IP_MODES = ("Proxy", "VIP")
NONE = "None"
SINGLE_STACK, REQUIRE_DUAL_STACK = "SingleStack", "RequireDualStack"
DEFAULT_AFFINITY_TIMEOUT = 10800
MAX_AFFINITY_TIMEOUT = 86400
TOPOLOGY_MODE = "service.kubernetes.io/topology-mode"
TOPOLOGY_HINTS = "service.kubernetes.io/topology-aware-hints"
LB_SOURCE_RANGES = "service.beta.kubernetes.io/load-balancer-source-ranges"
SPEC = FieldPath("spec")


# -- reading a service --------------------------------------------------------------------------

def spec_of(svc: dict) -> dict:
    """The service's ``spec`` (made a dict when missing or malformed)."""
    if not isinstance(svc.get("spec"), dict):
        svc["spec"] = {}
    return svc["spec"]


def read_spec(svc: dict) -> dict:
    """The service's ``spec`` for reading (an empty one when missing)."""
    return svc["spec"] if isinstance(svc.get("spec"), dict) else {}


def ports_of(svc: dict) -> list[dict]:
    ports = read_spec(svc).get("ports")
    return [p for p in ports if isinstance(p, dict)] if isinstance(ports, list) else []


def _int(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def is_headless(svc: dict) -> bool:
    return (read_spec(svc).get("clusterIPs") or []) == [NONE]


def needs_cluster_ip(svc: dict) -> bool:
    return read_spec(svc).get("type") != EXTERNAL_NAME


def needs_node_port(svc: dict) -> bool:
    return read_spec(svc).get("type") in (NODE_PORT, LOAD_BALANCER)


def needs_health_check(svc: dict) -> bool:
    """``NeedsHealthCheck``: a LoadBalancer keeping traffic on the local node."""
    spec = read_spec(svc)
    return spec.get("type") == LOAD_BALANCER and spec.get("externalTrafficPolicy") == "Local"


def externally_accessible(svc: dict) -> bool:
    """``ExternallyAccessible``: NodePort, LoadBalancer, or ClusterIP with external IPs."""
    spec = read_spec(svc)
    return spec.get("type") in (NODE_PORT, LOAD_BALANCER) or (
        spec.get("type") == CLUSTER_IP and bool(spec.get("externalIPs")))


def node_ports(svc: dict) -> list[int]:
    """``collectServiceNodePorts``: every node port, the health check one included."""
    found = [_int(p.get("nodePort")) for p in ports_of(svc) if _int(p.get("nodePort"))]
    if _int(read_spec(svc).get("healthCheckNodePort")):
        found.append(read_spec(svc)["healthCheckNodePort"])
    return found


def ip_family(value: str) -> str:
    ip = parse_ip_sloppy(value)
    return "IPv6" if isinstance(ip, ipaddress.IPv6Address) else "IPv4"


def _slice(values) -> GoValue:
    return GoValue(go_string_slice(values or []))


def validate_cluster_ips_related_fields(svc: dict) -> list:
    """``ValidateServiceClusterIPsRelatedFields``."""
    spec = spec_of(svc)
    if spec.get("type") == EXTERNAL_NAME:
        return []
    errs, invalid_ips = [], False
    ips_path, families_path = SPEC.child("clusterIPs"), SPEC.child("ipFamilies")
    cluster_ip, ips = spec.get("clusterIP") or "", spec.get("clusterIPs") or []
    families = spec.get("ipFamilies") or []
    if cluster_ip:
        if not ips:
            errs.append(FieldError.required(ips_path))
        elif ips[0] != cluster_ip:
            errs.append(FieldError.invalid(ips_path, _slice(ips),
                                           "first value must match `clusterIP`"))
    elif ips:
        errs.append(FieldError.invalid(ips_path, _slice(ips),
                                       "must be empty when `clusterIP` is not specified"))
    seen = set()
    for i, family in enumerate(families):
        if family not in FAMILIES:
            errs.append(FieldError.not_supported(families_path.index(i), family, FAMILIES))
        if family in seen:
            errs.append(FieldError.duplicate(families_path.index(i), family))
        seen.add(family)
    policy = spec.get("ipFamilyPolicy")
    if policy is not None and policy not in POLICIES:
        errs.append(FieldError.not_supported(SPEC.child("ipFamilyPolicy"), policy, POLICIES))
    for i, ip in enumerate(ips):
        if i == 0 and ip == NONE:
            if len(ips) > 1:
                invalid_ips = True
                errs.append(FieldError.invalid(ips_path, _slice(ips),
                                               "'None' must be the first and only value"))
            continue
        ip_errs = is_valid_ip(ips_path.index(i), ip)
        invalid_ips = invalid_ips or bool(ip_errs)
        errs += ip_errs
    if len(ips) > 2:
        errs.append(FieldError.invalid(ips_path, _slice(ips), "may only hold up to 2 values"))
    if invalid_ips:
        return errs
    if len(ips) > 1 and {ip_family(ip) for ip in ips} != set(FAMILIES):
        errs.append(FieldError.invalid(ips_path, _slice(ips),
                                       "may specify no more than one IP for each IP family"))
    if not is_headless(svc) and ips and families:
        for i, ip in enumerate(ips[:len(families)]):
            if families[i] in FAMILIES and ip_family(ip) != families[i]:
                errs.append(FieldError.invalid(ips_path.index(i), ip,
                                               f"expected an {families[i]} value as indicated "
                                               f"by `ipFamilies[{i}]`"))
    return errs


# -- defaults and the fields derived from each other ------------------------------------------

def set_defaults(svc: dict) -> None:
    """``SetDefaults_Service``: what decoding a ``v1.Service`` fills in."""
    spec = spec_of(svc)
    if not spec.get("sessionAffinity"):
        spec["sessionAffinity"] = "None"
    if spec["sessionAffinity"] == "None":
        spec.pop("sessionAffinityConfig", None)
    elif spec["sessionAffinity"] == "ClientIP":
        config = spec.get("sessionAffinityConfig")
        client = config.get("clientIP") if isinstance(config, dict) else None
        if not isinstance(client, dict) or client.get("timeoutSeconds") is None:
            spec["sessionAffinityConfig"] = {
                "clientIP": {"timeoutSeconds": DEFAULT_AFFINITY_TIMEOUT}}
    if not spec.get("type"):
        spec["type"] = CLUSTER_IP
    for port in ports_of(svc):
        if not port.get("protocol"):
            port["protocol"] = "TCP"
        if port.get("targetPort") in (None, 0, ""):
            port["targetPort"] = port.get("port", 0)
    if externally_accessible(svc) and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"
    if spec.get("internalTrafficPolicy") is None and spec["type"] in (
            NODE_PORT, LOAD_BALANCER, CLUSTER_IP):
        spec["internalTrafficPolicy"] = "Cluster"
    if spec["type"] == LOAD_BALANCER:
        if spec.get("allocateLoadBalancerNodePorts") is None:
            spec["allocateLoadBalancerNodePorts"] = True
        status = svc.get("status") if isinstance(svc.get("status"), dict) else {}
        for ingress in (status.get("loadBalancer") or {}).get("ingress") or []:
            if isinstance(ingress, dict) and ingress.get("ip") and ingress.get("ipMode") is None:
                ingress["ipMode"] = "VIP"


def normalize_cluster_ips(svc: dict, old: dict | None) -> None:
    """``normalizeClusterIPs``: keep ``clusterIP`` and ``clusterIPs`` in step for clients
    that only know the singular field."""
    spec = spec_of(svc)
    if old is None:
        if spec.get("clusterIP") and not spec.get("clusterIPs"):
            spec["clusterIPs"] = [spec["clusterIP"]]
        return
    old_spec = spec_of(old)
    if old_spec.get("clusterIPs") and not spec.get("clusterIPs"):
        if old_spec.get("clusterIP", "") == spec.get("clusterIP", ""):
            spec["clusterIPs"] = list(old_spec["clusterIPs"])
    if old_spec.get("clusterIP", "") != spec.get("clusterIP", ""):
        same = (old_spec.get("clusterIPs") or []) == (spec.get("clusterIPs") or [])
        if old_spec.get("clusterIP") and not spec.get("clusterIP"):
            if same:
                spec.pop("clusterIPs", None)
        elif same:
            spec["clusterIPs"] = [spec.get("clusterIP", "")]


def patch_allocated_values(svc: dict, old: dict) -> None:
    """``patchAllocatedValues``: an update that leaves out what the server allocated keeps it,
    so resubmitting the YAML a service was created from succeeds."""
    spec, old_spec = spec_of(svc), spec_of(old)
    if needs_cluster_ip(old) and needs_cluster_ip(svc):
        if not spec.get("clusterIP") and old_spec.get("clusterIP"):
            spec["clusterIP"] = old_spec["clusterIP"]
        if not spec.get("clusterIPs") and old_spec.get("clusterIPs"):
            spec["clusterIPs"] = list(old_spec["clusterIPs"])
    if needs_node_port(old) and needs_node_port(svc):
        def used(s):
            return {_int(p.get("nodePort")) for p in ports_of(s) if _int(p.get("nodePort"))}

        taken = used(old) & used(svc)
        by_name = {p.get("name") or "": _int(p.get("nodePort")) for p in ports_of(old)}
        for port in ports_of(svc):
            previous = by_name.get(port.get("name") or "", 0)
            if not _int(port.get("nodePort")) and previous and previous not in taken:
                port["nodePort"] = previous
    if needs_health_check(old) and needs_health_check(svc):
        if not _int(spec.get("healthCheckNodePort")) and old_spec.get("healthCheckNodePort"):
            spec["healthCheckNodePort"] = old_spec["healthCheckNodePort"]


def init_ip_family_fields(svc: dict, old: dict | None, cluster_family: str) -> list:
    """``initIPFamilyFields`` for a single-stack cluster: default ``ipFamilyPolicy`` and
    ``ipFamilies``; return the errors that stop the write before anything is allocated."""
    spec = spec_of(svc)
    if spec.get("type") == EXTERNAL_NAME:
        return []
    if spec.get("ipFamilyPolicy") is None:
        if old is not None and spec_of(old).get("ipFamilyPolicy") is not None:
            spec["ipFamilyPolicy"] = spec_of(old)["ipFamilyPolicy"]
        elif spec.get("clusterIP") == NONE and not spec.get("selector"):
            spec["ipFamilyPolicy"] = REQUIRE_DUAL_STACK  # headless and selectorless
        else:
            spec["ipFamilyPolicy"] = SINGLE_STACK
    if errs := validate_cluster_ips_related_fields(svc):
        return errs
    policy = spec["ipFamilyPolicy"]
    ips, families = spec.get("clusterIPs") or [], spec.get("ipFamilies") or []
    errs = []
    if old is not None:
        old_spec = spec_of(old)
        if policy == SINGLE_STACK:
            if ips == (old_spec.get("clusterIPs") or []) and len(ips) > 1:
                spec["clusterIPs"] = ips = ips[:1]
            if families == (old_spec.get("ipFamilies") or []) and len(families) > 1:
                spec["ipFamilies"] = families = families[:1]
        else:
            if ips and len(ips) < len(old_spec.get("clusterIPs") or []):
                errs.append(FieldError.invalid(SPEC.child("ipFamilyPolicy"), policy,
                                               "must be 'SingleStack' to release the "
                                               "secondary cluster IP"))
            if families and len(families) < len(old_spec.get("ipFamilies") or []):
                errs.append(FieldError.invalid(SPEC.child("ipFamilyPolicy"), policy,
                                               "must be 'SingleStack' to release the "
                                               "secondary IP family"))
    if policy == SINGLE_STACK:
        if len(ips) == 2:
            errs.append(FieldError.invalid(SPEC.child("ipFamilyPolicy"), policy,
                                           "must be 'RequireDualStack' or 'PreferDualStack' "
                                           "when multiple cluster IPs are specified"))
        if len(families) == 2:
            errs.append(FieldError.invalid(SPEC.child("ipFamilyPolicy"), policy,
                                           "must be 'RequireDualStack' or 'PreferDualStack' "
                                           "when multiple IP families are specified"))
    families = list(families)
    for i, ip in enumerate(ips):
        if ip == NONE:
            break
        if i >= len(families):
            family = ip_family(ip)
            if family != cluster_family:
                errs.append(FieldError.invalid(SPEC.child("clusterIPs").index(i), _slice(ips),
                                               f"{family} is not configured on this cluster"))
            else:
                families.append(family)
    if families:
        spec["ipFamilies"] = families
    if errs:
        return errs
    if spec.get("clusterIP") == NONE and not spec.get("selector"):
        families = families or [cluster_family]
        if len(families) < 2 and policy != SINGLE_STACK:
            families.append("IPv6" if families[0] == "IPv4" else "IPv4")
        spec["ipFamilies"] = families
        return []
    if policy == REQUIRE_DUAL_STACK:
        errs.append(FieldError.invalid(SPEC.child("ipFamilyPolicy"), policy,
                                       "this cluster is not configured for dual-stack services"))
    for i, family in enumerate(families):
        if family != cluster_family:
            errs.append(FieldError.invalid(SPEC.child("ipFamilies").index(i), family,
                                           "not configured on this cluster"))
    if not errs and not families:
        spec["ipFamilies"] = [cluster_family]
    return errs


def drop_type_dependent_fields(svc: dict, old: dict) -> None:
    """``dropTypeDependentFields``: switching type wipes what no longer applies, unless the
    client changed it too (then validation says why it cannot stay)."""
    spec, old_spec = spec_of(svc), spec_of(old)
    if needs_cluster_ip(old) and not needs_cluster_ip(svc):
        if (old_spec.get("clusterIP", "") == spec.get("clusterIP", "")
                and (old_spec.get("clusterIPs") or []) == (spec.get("clusterIPs") or [])):
            spec.pop("clusterIP", None)
            spec.pop("clusterIPs", None)
        if old_spec.get("ipFamilies") == spec.get("ipFamilies"):
            spec.pop("ipFamilies", None)
        if old_spec.get("ipFamilyPolicy") == spec.get("ipFamilyPolicy"):
            spec.pop("ipFamilyPolicy", None)
    if needs_node_port(old) and not needs_node_port(svc) and (
            set(node_ports_of_ports(svc)) <= set(node_ports_of_ports(old))):
        for port in ports_of(svc):
            port.pop("nodePort", None)
    if needs_health_check(old) and not needs_health_check(svc) and (
            old_spec.get("healthCheckNodePort") == spec.get("healthCheckNodePort")):
        spec.pop("healthCheckNodePort", None)
    if old_spec.get("type") == LOAD_BALANCER and spec.get("type") != LOAD_BALANCER:
        if (spec.get("allocateLoadBalancerNodePorts") is not None
                and spec.get("allocateLoadBalancerNodePorts")
                == old_spec.get("allocateLoadBalancerNodePorts")):
            spec.pop("allocateLoadBalancerNodePorts")
        if old_spec.get("loadBalancerClass") == spec.get("loadBalancerClass"):
            spec.pop("loadBalancerClass", None)
    if externally_accessible(old) and not externally_accessible(svc) and (
            old_spec.get("externalTrafficPolicy") == spec.get("externalTrafficPolicy")):
        spec.pop("externalTrafficPolicy", None)
    if spec.get("type") != LOAD_BALANCER:
        svc["status"] = dict(svc.get("status") or {}, loadBalancer={})


def node_ports_of_ports(svc: dict) -> list[int]:
    return [_int(p.get("nodePort")) for p in ports_of(svc) if _int(p.get("nodePort"))]
