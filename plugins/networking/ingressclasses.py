"""IngressClasses: ``ValidateIngressClass``/``Update``, ``SetDefaults_IngressClass`` and the
``ingressclass`` registry strategy, as in 1.32.

The ``ingressclass.kubernetes.io/is-default-class`` annotation only matters to the
DefaultIngressClass admission plugin, which gives new Ingresses the default class.
"""

from __future__ import annotations

import re

from kapiserver.apimachinery.field_errors import FieldError, FieldPath
from kapiserver.apimachinery.validation import (is_dns1123_subdomain, name_is_dns_label,
                                                name_is_dns_subdomain, regex_error,
                                                validate_core_object_meta,
                                                validate_core_object_meta_update,
                                                validate_immutable_field,
                                                validate_path_segment_name)
from kapiserver.registry.builtin import builtin_spec
from kapiserver.registry.builtin_strategy import BuiltinStrategy
from kapiserver.registry.printers import age

INGRESS_CLASSES = builtin_spec("networking.k8s.io", "v1", "ingressclasses")
MAX_CONTROLLER_LENGTH = 250
SCOPES = ("Cluster", "Namespace")
_HTTP_PATH_FMT = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+"
_HTTP_PATH = re.compile(f"^{_HTTP_PATH_FMT}$")


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _str(value) -> str:
    return value if isinstance(value, str) else ""


def is_domain_prefixed_path(path: FieldPath, value: str) -> list[FieldError]:
    """``IsDomainPrefixedPath``: ``acme.io/foo``, a DNS subdomain then an HTTP path."""
    if not value:
        return [FieldError.required(path, "")]
    host, slash, rest = value.partition("/")
    if not slash or not host or not rest:
        return [FieldError.invalid(path, value, 'must be a domain-prefixed path (such as '
                                                '"acme.io/foo")')]
    errs = [FieldError.invalid(path, host, msg) for msg in is_dns1123_subdomain(host)]
    if not _HTTP_PATH.match(rest):
        errs.append(FieldError.invalid(path, rest, regex_error("Invalid path", _HTTP_PATH_FMT)))
    return errs


def validate_parameters_reference(params, path: FieldPath) -> list[FieldError]:
    """``validateIngressClassParametersReference``."""
    if params is None:
        return []
    params = _dict(params)
    errs = []
    if params.get("apiGroup") is not None:
        group = _str(params.get("apiGroup"))
        errs += [FieldError.invalid(path.child("apiGroup"), group, msg)
                 for msg in is_dns1123_subdomain(group)]
    for key in ("kind", "name"):
        value = _str(params.get(key))
        if not value:
            errs.append(FieldError.required(path.child(key), ""))
        else:
            errs += [FieldError.invalid(path.child(key), value, msg)
                     for msg in validate_path_segment_name(value)]
    if params.get("scope") is None:
        return errs + [FieldError.required(path.child("scope"), "")]
    scope = _str(params.get("scope"))
    if scope not in SCOPES:
        return errs + [FieldError.not_supported(path.child("scope"), scope, SCOPES)]
    namespace = params.get("namespace")
    if scope == "Namespace":
        if namespace is None:
            errs.append(FieldError.required(path.child("namespace"),
                                            "`parameters.scope` is set to 'Namespace'"))
        else:
            errs += [FieldError.invalid(path.child("namespace"), _str(namespace), msg)
                     for msg in name_is_dns_label(_str(namespace))]
    if scope == "Cluster" and namespace is not None:
        errs.append(FieldError.forbidden(path.child("namespace"),
                                         "`parameters.scope` is set to 'Cluster'"))
    return errs


def validate_ingress_class(obj: dict) -> list[FieldError]:
    """``ValidateIngressClass``."""
    errs = validate_core_object_meta(_dict(obj.get("metadata")), False, name_is_dns_subdomain)
    spec, path = _dict(obj.get("spec")), FieldPath("spec")
    controller = _str(spec.get("controller"))
    if not controller:
        errs.append(FieldError.required(path.child("controller"), ""))
    else:
        if len(controller.encode()) > MAX_CONTROLLER_LENGTH:
            errs.append(FieldError.too_long(path.child("controller"), controller,
                                            MAX_CONTROLLER_LENGTH))
        errs += is_domain_prefixed_path(path.child("controller"), controller)
    return errs + validate_parameters_reference(spec.get("parameters"), path.child("parameters"))


def validate_ingress_class_update(new: dict, old: dict) -> list[FieldError]:
    """``ValidateIngressClassUpdate``: the controller never changes."""
    errs = validate_core_object_meta_update(_dict(new.get("metadata")),
                                            _dict(old.get("metadata")))
    errs += validate_immutable_field(_str(_dict(new.get("spec")).get("controller")),
                                     _str(_dict(old.get("spec")).get("controller")),
                                     FieldPath("spec", "controller"))
    return errs + validate_ingress_class(new)


def format_parameters(params) -> str:
    """The Parameters cell: ``Kind[.apiGroup]/name``, or ``<none>``."""
    if not isinstance(params, dict):
        return "<none>"
    text = _str(params.get("kind"))
    if params.get("apiGroup") is not None:
        text += "." + _str(params.get("apiGroup"))
    return text + "/" + _str(params.get("name"))


class IngressClassStrategy(BuiltinStrategy):
    """``pkg/registry/networking/ingressclass`` strategy."""

    has_generation = True

    def set_defaults(self, obj):
        # SetDefaults_IngressClass
        params = _dict(obj.get("spec")).get("parameters")
        if isinstance(params, dict) and params.get("scope") is None:
            params["scope"] = "Cluster"

    def validate(self, obj):
        return validate_ingress_class(obj)

    def validate_update(self, new, old):
        return validate_ingress_class_update(new, old)

    def table_cells(self, obj):
        meta, spec = _dict(obj.get("metadata")), _dict(obj.get("spec"))
        return [meta.get("name", ""), _str(spec.get("controller")),
                format_parameters(spec.get("parameters")), age(meta.get("creationTimestamp"))]
