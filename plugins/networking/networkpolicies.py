"""NetworkPolicies: ``ValidateNetworkPolicy``/``Update``, the v1 defaults (``policyTypes``,
ports' ``protocol``) and the ``networkpolicy`` registry strategy, as in 1.32."""

from __future__ import annotations

import ipaddress

from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue, go_quote
from kapiserver.apimachinery.selector_validation import (LabelSelectorValidationOptions,
                                                         validate_label_selector)
from kapiserver.apimachinery.validation import (is_valid_cidr, is_valid_port_name,
                                                is_valid_port_num, name_is_dns_subdomain,
                                                parse_ip_sloppy, validate_core_object_meta,
                                                validate_core_object_meta_update)
from kapiserver.registry.builtin import builtin_spec
from kapiserver.registry.builtin_strategy import BuiltinStrategy
from kapiserver.registry.printers import age

NETWORK_POLICIES = builtin_spec("networking.k8s.io", "v1", "networkpolicies")
PROTOCOLS = ("TCP", "UDP", "SCTP")
POLICY_TYPES = ("Ingress", "Egress")
#: Each rule kind: its list in the spec and the list of peers in a rule.
RULES = (("ingress", "from"), ("egress", "to"))


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value) -> list:
    return value if isinstance(value, list) else []


def _str(value) -> str:
    return value if isinstance(value, str) else ""


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _options(allow_invalid_label_value: bool) -> LabelSelectorValidationOptions:
    return LabelSelectorValidationOptions(allow_invalid_label_value=allow_invalid_label_value)


def set_network_policy_defaults(obj: dict) -> None:
    """``SetDefaults_NetworkPolicy`` and ``SetDefaults_NetworkPolicyPort``."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    for rules, _ in RULES:
        for rule in _list(spec.get(rules)):
            for port in _list(_dict(rule).get("ports")):
                if isinstance(port, dict) and port.get("protocol") is None:
                    port["protocol"] = "TCP"
    if not _list(spec.get("policyTypes")):
        # Any policy that does not specify policyTypes implies at least "Ingress".
        spec["policyTypes"] = ["Ingress"] + (["Egress"] if _list(spec.get("egress")) else [])


def format_label_selector(selector: dict) -> str:
    """``metav1.FormatLabelSelector``: the selector's text, ``<none>`` when it selects
    everything, ``<error>`` when it cannot be read."""
    from kapiserver.apimachinery.labels import SelectorError, selector_from_label_selector

    try:
        text = str(selector_from_label_selector(selector))
    except SelectorError:
        return "<error>"
    return text or "<none>"


def validate_port(port: dict, path: FieldPath) -> list[FieldError]:
    """``ValidateNetworkPolicyPort``."""
    errs = []
    protocol = port.get("protocol")
    if protocol is not None and protocol not in PROTOCOLS:
        errs.append(FieldError.not_supported(path.child("protocol"), protocol, PROTOCOLS))
    value, end = port.get("port"), port.get("endPort")
    if value is None:
        if end is not None:
            errs.append(FieldError.invalid(path.child("endPort"), end,
                                           "may not be specified when `port` is not specified"))
    elif _is_int(value):
        errs += [FieldError.invalid(path.child("port"), value, msg)
                 for msg in is_valid_port_num(value)]
        if _is_int(end):
            if end < value:
                errs.append(FieldError.invalid(path.child("endPort"), end,
                                               "must be greater than or equal to `port`"))
            errs += [FieldError.invalid(path.child("endPort"), end, msg)
                     for msg in is_valid_port_num(end)]
    else:
        if end is not None:
            errs.append(FieldError.invalid(path.child("endPort"), end,
                                           "may not be specified when `port` is non-numeric"))
        errs += [FieldError.invalid(path.child("port"), _str(value), msg)
                 for msg in is_valid_port_name(_str(value))]
    return errs


def _network(text: str):
    """``netutils.ParseCIDRSloppy``'s network, or None."""
    addr, _, bits = text.partition("/")
    ip = parse_ip_sloppy(addr)
    if ip is None:
        return None
    prefix = int(bits)
    if ip.version == 4 and ":" in addr:
        # An IPv4-mapped IPv6 CIDR: Go keeps the 16-byte form, its mask counts 96 more bits.
        prefix = max(prefix - 96, 0)
    return ipaddress.ip_network(f"{ip}/{prefix}", strict=False)


def validate_ip_block(block: dict, path: FieldPath) -> list[FieldError]:
    """``ValidateIPBlock``: a CIDR and the strict subsets of it it excepts."""
    cidr = _str(block.get("cidr"))
    if not cidr:
        return [FieldError.required(path.child("cidr"), "")]
    errs = is_valid_cidr(path.child("cidr"), cidr)
    if errs:
        return errs
    network = _network(cidr)
    for i, except_cidr in enumerate(_list(block.get("except"))):
        except_cidr = _str(except_cidr)
        at = path.child("except").index(i)
        invalid = is_valid_cidr(at, except_cidr)
        if invalid:
            errs += invalid
            continue
        excepted = _network(except_cidr)
        if excepted.version != network.version or excepted.network_address not in network \
                or network.prefixlen >= excepted.prefixlen:
            errs.append(FieldError.invalid(at, except_cidr, "must be a strict subset of `cidr`"))
    return errs


def validate_peer(peer: dict, path: FieldPath,
                  allow_invalid_label_value: bool) -> list[FieldError]:
    """``ValidateNetworkPolicyPeer``: pod and/or namespace selectors, or an IP block alone."""
    errs, count = [], 0
    for key in ("podSelector", "namespaceSelector"):
        if peer.get(key) is not None:
            count += 1
            errs += validate_label_selector(_dict(peer.get(key)),
                                            _options(allow_invalid_label_value), path.child(key))
    if peer.get("ipBlock") is not None:
        count += 1
        errs += validate_ip_block(_dict(peer.get("ipBlock")), path.child("ipBlock"))
    if count == 0:
        errs.append(FieldError.required(path, "must specify a peer"))
    elif count > 1 and peer.get("ipBlock") is not None:
        errs.append(FieldError.forbidden(path, "may not specify both ipBlock and another peer"))
    return errs


def validate_network_policy_spec(spec: dict, path: FieldPath,
                                 allow_invalid_label_value: bool = False) -> list[FieldError]:
    """``ValidateNetworkPolicySpec``."""
    errs = validate_label_selector(_dict(spec.get("podSelector")),
                                   _options(allow_invalid_label_value), path.child("podSelector"))
    for rules, peers in RULES:
        for i, rule in enumerate(_list(spec.get(rules))):
            rule = _dict(rule)
            at = path.child(rules).index(i)
            for j, port in enumerate(_list(rule.get("ports"))):
                errs += validate_port(_dict(port), at.child("ports").index(j))
            for j, peer in enumerate(_list(rule.get(peers))):
                errs += validate_peer(_dict(peer), at.child(peers).index(j),
                                      allow_invalid_label_value)
    types = _list(spec.get("policyTypes"))
    if len(types) > len(POLICY_TYPES):
        shown = GoValue("[]networking.PolicyType{"
                        + ", ".join(go_quote(_str(t)) for t in types) + "}")
        return errs + [FieldError.invalid(path.child("policyTypes"), shown,
                                          "may not specify more than two policyTypes")]
    for i, kind in enumerate(types):
        if kind not in POLICY_TYPES:
            errs.append(FieldError.not_supported(path.child("policyTypes").index(i), kind,
                                                 POLICY_TYPES))
    return errs


def validate_network_policy(obj: dict,
                            allow_invalid_label_value: bool = False) -> list[FieldError]:
    """``ValidateNetworkPolicy``."""
    errs = validate_core_object_meta(_dict(obj.get("metadata")), True, name_is_dns_subdomain)
    return errs + validate_network_policy_spec(_dict(obj.get("spec")), FieldPath("spec"),
                                               allow_invalid_label_value)


def validate_network_policy_update(new: dict, old: dict) -> list[FieldError]:
    """The strategy's ``ValidateUpdate``: the policy, then ``ValidateNetworkPolicyUpdate``
    (metadata, and the spec once more: upstream reports its errors twice).

    A stored pod selector that today's rules refuse lets invalid label values pass
    (``ValidationOptionsForNetworking``)."""
    allow = bool(validate_label_selector(_dict(_dict(old.get("spec")).get("podSelector")),
                                         _options(False), FieldPath("spec")))
    errs = validate_network_policy(new, allow)
    errs += validate_core_object_meta_update(_dict(new.get("metadata")),
                                             _dict(old.get("metadata")))
    return errs + validate_network_policy_spec(_dict(new.get("spec")), FieldPath("spec"),
                                               allow)


class NetworkPolicyStrategy(BuiltinStrategy):
    """``pkg/registry/networking/networkpolicy`` strategy."""

    has_generation = True

    def set_defaults(self, obj):
        set_network_policy_defaults(obj)

    def validate(self, obj):
        return validate_network_policy(obj)

    def validate_update(self, new, old):
        return validate_network_policy_update(new, old)

    def table_cells(self, obj):
        meta, spec = _dict(obj.get("metadata")), _dict(obj.get("spec"))
        return [meta.get("name", ""), format_label_selector(_dict(spec.get("podSelector"))),
                age(meta.get("creationTimestamp"))]
