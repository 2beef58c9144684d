"""Ingresses (with ``status``): ``ValidateIngressCreate``/``Update``/``StatusUpdate`` of
``pkg/apis/networking/validation`` and the ``ingress`` registry strategy, as in 1.32.

Which IngressClass an Ingress without one gets (``ingressclass.kubernetes.io/is-default-class``)
is the DefaultIngressClass admission plugin's business, not the strategy's.
"""

from __future__ import annotations

from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue
from kapiserver.apimachinery.validation import (is_dns1123_subdomain, is_valid_ip,
                                                is_valid_port_name, is_valid_port_num,
                                                is_wildcard_dns1123_subdomain,
                                                name_is_dns1035_label, name_is_dns_subdomain,
                                                parse_ip_sloppy, validate_core_object_meta,
                                                validate_core_object_meta_update,
                                                validate_path_segment_name)
from kapiserver.registry.builtin import builtin_spec
from kapiserver.registry.builtin_strategy import BuiltinStrategy
from kapiserver.registry.printers import age

INGRESSES = builtin_spec("networking.k8s.io", "v1", "ingresses")
INGRESS_CLASS_ANNOTATION = "kubernetes.io/ingress.class"
PATH_TYPES = ("Exact", "ImplementationSpecific", "Prefix")
INVALID_PATH_SEQUENCES = ("//", "/./", "/../", "%2f", "%2F")
INVALID_PATH_SUFFIXES = ("/..", "/.")
#: ``loadBalancerWidth``: the Address cell is cut to this many bytes.
LOAD_BALANCER_WIDTH = 16


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value) -> list:
    return value if isinstance(value, list) else []


def _str(value) -> str:
    return value if isinstance(value, str) else ""


def _int(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


# -- backends ----------------------------------------------------------------------------------

def validate_typed_local_object_reference(ref: dict, path: FieldPath) -> list[FieldError]:
    """``validateIngressTypedLocalObjectReference``."""
    errs = []
    if ref.get("apiGroup") is not None:
        group = _str(ref.get("apiGroup"))
        errs += [FieldError.invalid(path.child("apiGroup"), group, msg)
                 for msg in is_dns1123_subdomain(group)]
    for key in ("kind", "name"):
        value = _str(ref.get(key))
        if not value:
            errs.append(FieldError.required(path.child(key), ""))
        else:
            errs += [FieldError.invalid(path.child(key), value, msg)
                     for msg in validate_path_segment_name(value)]
    return errs


def validate_backend(backend: dict, path: FieldPath) -> list[FieldError]:
    """``validateIngressBackend``: exactly one of a resource or a service (name and port)."""
    resource, service = backend.get("resource"), backend.get("service")
    if resource is not None and service is not None:
        return [FieldError.invalid(path, "", "cannot set both resource and service backends")]
    if resource is not None:
        return validate_typed_local_object_reference(_dict(resource),
                                                     path.child("resource"))
    if service is None:
        return [FieldError.invalid(path, "", "resource or service backend is required")]
    service = _dict(service)
    errs = []
    name = _str(service.get("name"))
    if not name:
        errs.append(FieldError.required(path.child("service", "name"), ""))
    else:
        # ValidateServiceName: a DNS-1035 label.
        errs += [FieldError.invalid(path.child("service", "name"), name, msg)
                 for msg in name_is_dns1035_label(name)]
    port = _dict(service.get("port"))
    port_name, port_number = _str(port.get("name")), _int(port.get("number"))
    if port_name and port_number:
        errs.append(FieldError.invalid(path, "", "cannot set both port name & port number"))
    elif port_name:
        errs += [FieldError.invalid(path.child("service", "port", "name"), port_name, msg)
                 for msg in is_valid_port_name(port_name)]
    elif port_number:
        errs += [FieldError.invalid(path.child("service", "port", "number"), port_number, msg)
                 for msg in is_valid_port_num(port_number)]
    else:
        errs.append(FieldError.required(path, "port name or number is required"))
    return errs


# -- rules -------------------------------------------------------------------------------------

def _validate_http_path(http_path: dict, path: FieldPath) -> list[FieldError]:
    """``validateHTTPIngressPath``: a path type and a path of that type, then the backend."""
    if http_path.get("pathType") is None:
        return [FieldError.required(path.child("pathType"), "pathType must be specified")]
    path_type = _str(http_path.get("pathType"))
    value = _str(http_path.get("path"))
    errs = []
    if path_type in ("Exact", "Prefix"):
        if not value.startswith("/"):
            errs.append(FieldError.invalid(path.child("path"), value, "must be an absolute path"))
        if value:
            errs += [FieldError.invalid(path.child("path"), value, f"must not contain '{seq}'")
                     for seq in INVALID_PATH_SEQUENCES if seq in value]
            errs += [FieldError.invalid(path.child("path"), value, f"cannot end with '{suffix}'")
                     for suffix in INVALID_PATH_SUFFIXES if value.endswith(suffix)]
    elif path_type == "ImplementationSpecific":
        if value and not value.startswith("/"):
            errs.append(FieldError.invalid(path.child("path"), value, "must be an absolute path"))
    else:
        errs.append(FieldError.not_supported(path.child("pathType"), path_type, PATH_TYPES))
    return errs + validate_backend(_dict(http_path.get("backend")), path.child("backend"))


def _validate_rule_value(rule: dict, path: FieldPath) -> list[FieldError]:
    """``validateIngressRuleValue``: the HTTP paths, when there is an ``http``."""
    if rule.get("http") is None:
        return []
    http = _dict(rule.get("http"))
    paths_path = path.child("http", "paths")
    paths = _list(http.get("paths"))
    errs = [] if paths else [FieldError.required(paths_path, "")]
    for i, http_path in enumerate(paths):
        errs += _validate_http_path(_dict(http_path), paths_path.index(i))
    return errs


def _validate_rules(rules: list, path: FieldPath, allow_invalid_wildcard_rule: bool) -> list:
    """``validateIngressRules``: hosts are DNS names (``*.`` allowed at the front)."""
    errs = []
    for i, rule in enumerate(rules):
        rule = _dict(rule)
        host = _str(rule.get("host"))
        wildcard = False
        if host:
            host_path = path.index(i).child("host")
            if parse_ip_sloppy(host) is not None:
                errs.append(FieldError.invalid(host_path, host,
                                               "must be a DNS name, not an IP address"))
            if "*" in host:
                errs += [FieldError.invalid(host_path, host, msg)
                         for msg in is_wildcard_dns1123_subdomain(host)]
                wildcard = True
            else:
                errs += [FieldError.invalid(host_path, host, msg)
                         for msg in is_dns1123_subdomain(host)]
        if not wildcard or not allow_invalid_wildcard_rule:
            errs += _validate_rule_value(rule, path.index(i))
    return errs


def _tls_secret_name_errors(name: str) -> list[str]:
    """``validateTLSSecretName``: an empty name is allowed, any other is a Secret's name."""
    return name_is_dns_subdomain(name) if name else []


def _validate_tls(tls: list, path: FieldPath, allow_invalid_secret_name: bool) -> list:
    errs = []
    for index, item in enumerate(tls):
        item = _dict(item)
        for i, host in enumerate(_list(item.get("hosts"))):
            host = _str(host)
            check = is_wildcard_dns1123_subdomain if "*" in host else is_dns1123_subdomain
            errs += [FieldError.invalid(path.index(index).child("hosts").index(i), host, msg)
                     for msg in check(host)]
        if not allow_invalid_secret_name:
            secret = _str(item.get("secretName"))
            errs += [FieldError.invalid(path.index(index).child("secretName"), secret, msg)
                     for msg in _tls_secret_name_errors(secret)]
    return errs


def validate_ingress_spec(spec: dict, path: FieldPath, allow_invalid_secret_name: bool = False,
                          allow_invalid_wildcard_rule: bool = False) -> list[FieldError]:
    """``ValidateIngressSpec``."""
    errs = []
    rules = _list(spec.get("rules"))
    if not rules and spec.get("defaultBackend") is None:
        shown = GoValue("[]networking.IngressRule{}" if isinstance(spec.get("rules"), list)
                        else "[]networking.IngressRule(nil)")
        errs.append(FieldError.invalid(path, shown,
                                       "either `defaultBackend` or `rules` must be specified"))
    if spec.get("defaultBackend") is not None:
        errs += validate_backend(_dict(spec.get("defaultBackend")), path.child("defaultBackend"))
    if rules:
        errs += _validate_rules(rules, path.child("rules"), allow_invalid_wildcard_rule)
    tls = _list(spec.get("tls"))
    if tls:
        errs += _validate_tls(tls, path.child("tls"), allow_invalid_secret_name)
    if spec.get("ingressClassName") is not None:
        name = _str(spec.get("ingressClassName"))
        errs += [FieldError.invalid(path.child("ingressClassName"), name, msg)
                 for msg in name_is_dns_subdomain(name)]
    return errs


def _allow_invalid_secret_name(old: dict) -> bool:
    """Stored TLS secret names that today's rules refuse stay allowed."""
    return any(_tls_secret_name_errors(_str(_dict(tls).get("secretName")))
               for tls in _list(_dict(old.get("spec")).get("tls")))


def _allow_invalid_wildcard_rule(old: dict) -> bool:
    """Stored wildcard-host rules whose paths today's rules refuse stay allowed."""
    for rule in _list(_dict(old.get("spec")).get("rules")):
        rule = _dict(rule)
        if "*" in _str(rule.get("host")) and _validate_rule_value(rule, FieldPath("x")):
            return True
    return False


def validate_ingress_create(obj: dict) -> list[FieldError]:
    """``ValidateIngressCreate``: metadata, the spec, and the class annotation agreeing with
    ``ingressClassName``."""
    meta = _dict(obj.get("metadata"))
    spec = _dict(obj.get("spec"))
    errs = validate_core_object_meta(meta, True, name_is_dns_subdomain)
    errs += validate_ingress_spec(spec, FieldPath("spec"))
    annotations = _dict(meta.get("annotations"))
    if INGRESS_CLASS_ANNOTATION in annotations and spec.get("ingressClassName") is not None \
            and annotations[INGRESS_CLASS_ANNOTATION] != spec.get("ingressClassName"):
        errs.append(FieldError.invalid(FieldPath("annotations").child(INGRESS_CLASS_ANNOTATION),
                                       annotations[INGRESS_CLASS_ANNOTATION],
                                       "must match `ingressClassName` when both are specified"))
    return errs


def validate_ingress_update(new: dict, old: dict) -> list[FieldError]:
    """``ValidateIngressUpdate``."""
    errs = validate_core_object_meta_update(_dict(new.get("metadata")),
                                            _dict(old.get("metadata")))
    errs += validate_core_object_meta(_dict(new.get("metadata")), True, name_is_dns_subdomain)
    return errs + validate_ingress_spec(_dict(new.get("spec")), FieldPath("spec"),
                                        _allow_invalid_secret_name(old),
                                        _allow_invalid_wildcard_rule(old))


def validate_load_balancer_status(status: dict, path: FieldPath) -> list[FieldError]:
    """``ValidateIngressLoadBalancerStatus``."""
    errs = []
    for i, ingress in enumerate(_list(status.get("ingress"))):
        ingress = _dict(ingress)
        at = path.child("ingress").index(i)
        ip = _str(ingress.get("ip"))
        if ip:
            errs += is_valid_ip(at.child("ip"), ip)
        hostname = _str(ingress.get("hostname"))
        if hostname:
            errs += [FieldError.invalid(at.child("hostname"), hostname, msg)
                     for msg in is_dns1123_subdomain(hostname)]
            if parse_ip_sloppy(hostname) is not None:
                errs.append(FieldError.invalid(at.child("hostname"), hostname,
                                               "must be a DNS name, not an IP address"))
    return errs


# -- the table -----------------------------------------------------------------------------------

def format_hosts(rules: list) -> str:
    """``formatHosts``: up to three hosts, ``*`` when no rule names one."""
    hosts, more = [], False
    for rule in rules:
        if len(hosts) == 3:
            more = True
        host = _str(_dict(rule).get("host"))
        if not more and host:
            hosts.append(host)
    if not hosts:
        return "*"
    text = ",".join(hosts)
    return f"{text} + {len(rules) - 3} more..." if more else text


def load_balancer_addresses(status: dict, wide: bool = False) -> str:
    """``ingressLoadBalancerStatusStringer``: the sorted IPs or hostnames, cut to 16 bytes."""
    found = set()
    for ingress in _list(_dict(status).get("ingress")):
        ingress = _dict(ingress)
        if _str(ingress.get("ip")):
            found.add(ingress["ip"])
        elif _str(ingress.get("hostname")):
            found.add(ingress["hostname"])
    text = ",".join(sorted(found))
    if not wide and len(text) > LOAD_BALANCER_WIDTH:
        text = text[:LOAD_BALANCER_WIDTH - 3] + "..."
    return text


class IngressStrategy(BuiltinStrategy):
    """``pkg/registry/networking/ingress`` strategy: generation 1 on create, bumped by spec
    changes; the status is written through ``ingresses/status`` only."""

    has_generation = True

    def validate(self, obj):
        return validate_ingress_create(obj)

    def validate_update(self, new, old):
        return validate_ingress_update(new, old)

    def validate_status_update(self, new, old):
        errs = validate_core_object_meta_update(_dict(new.get("metadata")),
                                                _dict(old.get("metadata")))
        return errs + validate_load_balancer_status(
            _dict(_dict(new.get("status")).get("loadBalancer")),
            FieldPath("status", "loadBalancer"))

    def table_cells(self, obj):
        meta, spec = _dict(obj.get("metadata")), _dict(obj.get("spec"))
        class_name = spec.get("ingressClassName")
        return [meta.get("name", ""), class_name if isinstance(class_name, str) else "<none>",
                format_hosts(_list(spec.get("rules"))),
                load_balancer_addresses(_dict(_dict(obj.get("status")).get("loadBalancer"))),
                "80, 443" if _list(spec.get("tls")) else "80",
                age(meta.get("creationTimestamp"))]
