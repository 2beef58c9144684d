"""A pod's DNS and host names: ``dnsPolicy``, ``dnsConfig``, ``hostAliases`` and the
host-network port rule (``pkg/apis/core/validation``, 1.32)."""

from __future__ import annotations

import re

from ....apimachinery import validation as apivalidation
from ....apimachinery.field_errors import FieldError, FieldPath, GoValue
from ....apimachinery.gosyntax import go_string_slice
from .common import dicts, i, invalid_each, s, strs, validate_dns1123_subdomain
from .options import PodValidationOptions

MAX_DNS_NAMESERVERS = 3
MAX_DNS_SEARCH_PATHS = 32
MAX_DNS_SEARCH_LIST_CHARS = 2048
DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")

_DNS1123_LABEL_UNDERSCORE_FMT = "_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_UNDERSCORE_FMT = (_DNS1123_LABEL_UNDERSCORE_FMT + "(\\."
                                     + _DNS1123_LABEL_UNDERSCORE_FMT + ")*")
_DNS1123_SUBDOMAIN_UNDERSCORE = re.compile(_DNS1123_SUBDOMAIN_UNDERSCORE_FMT)
_DNS1123_SUBDOMAIN_UNDERSCORE_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', "
    "'-' or '.', and must start and end with an alphanumeric character")


def _is_dns1123_subdomain_with_underscore(value: str) -> list[str]:
    errs = []
    if len(value.encode()) > apivalidation.DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(apivalidation.max_len_error(apivalidation.DNS1123_SUBDOMAIN_MAX_LENGTH))
    if _DNS1123_SUBDOMAIN_UNDERSCORE.fullmatch(value) is None:
        # upstream quotes the plain subdomain pattern in this message
        errs.append(apivalidation.regex_error(_DNS1123_SUBDOMAIN_UNDERSCORE_MSG,
                                              apivalidation.DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def validate_dns_policy(policy: str, path: FieldPath) -> list[FieldError]:
    """``validateDNSPolicy``."""
    if policy in DNS_POLICIES:
        return []
    if not policy:
        return [FieldError.required(path, "")]
    return [FieldError.not_supported(path, policy, DNS_POLICIES)]


def validate_pod_dns_config(config: dict | None, policy: str, path: FieldPath,
                            opts: PodValidationOptions) -> list[FieldError]:
    """``validatePodDNSConfig``: nameservers, searches and options; required for ``None``."""
    if policy == "None":
        if config is None:
            return [FieldError.required(path, "must provide `dnsConfig` when `dnsPolicy` is "
                                              "None")]
        if not strs(config.get("nameservers")):
            return [FieldError.required(path.child("nameservers"),
                                        "must provide at least one DNS nameserver when "
                                        "`dnsPolicy` is None")]
    if config is None:
        return []
    errs = []
    nameservers = strs(config.get("nameservers"))
    if len(nameservers) > MAX_DNS_NAMESERVERS:
        errs.append(FieldError.invalid(path.child("nameservers"),
                                       GoValue(go_string_slice(nameservers)),
                                       f"must not have more than {MAX_DNS_NAMESERVERS} "
                                       "nameservers"))
    for index, nameserver in enumerate(nameservers):
        errs += apivalidation.is_valid_ip(path.child("nameservers").index(index), nameserver)
    searches = strs(config.get("searches"))
    if len(searches) > MAX_DNS_SEARCH_PATHS:
        errs.append(FieldError.invalid(path.child("searches"), GoValue(go_string_slice(searches)),
                                       f"must not have more than {MAX_DNS_SEARCH_PATHS} search "
                                       "paths"))
    if len(" ".join(searches).encode()) > MAX_DNS_SEARCH_LIST_CHARS:
        errs.append(FieldError.invalid(path.child("searches"), GoValue(go_string_slice(searches)),
                                       f"must not have more than {MAX_DNS_SEARCH_LIST_CHARS} "
                                       "characters (including spaces) in the search list"))
    for index, search in enumerate(searches):
        item_path = path.child("searches").index(index)
        if opts.allow_relaxed_dns_search_validation:
            if search != ".":
                search = search[:-1] if search.endswith(".") else search
                errs += invalid_each(item_path, search,
                                     _is_dns1123_subdomain_with_underscore(search))
        else:
            search = search[:-1] if search.endswith(".") else search
            errs += validate_dns1123_subdomain(search, item_path)
    for index, option in enumerate(dicts(config.get("options"))):
        if not s(option, "name"):
            errs.append(FieldError.required(path.child("options").index(index),
                                            "must not be empty"))
    return errs


def validate_host_aliases(aliases: list, path: FieldPath) -> list[FieldError]:
    """``ValidateHostAliases``: an IP and DNS subdomain host names."""
    errs = []
    for index, alias in enumerate(dicts(aliases)):
        item_path = path.index(index)
        errs += apivalidation.is_valid_ip(item_path.child("ip"), s(alias, "ip"))
        for name_index, hostname in enumerate(strs(alias.get("hostnames"))):
            errs += validate_dns1123_subdomain(hostname,
                                               item_path.child("hostnames").index(name_index))
    return errs


def validate_host_network_deps(spec: dict, path: FieldPath,
                               opts: PodValidationOptions) -> list[FieldError]:
    """``validatePodHostNetworkDeps``: with ``hostNetwork``, host ports equal container
    ports (a template may leave them 0: the Pod's defaults fill them in)."""
    if spec.get("hostNetwork") is not True:
        return []
    errs = []
    containers_path = path.child("containers")
    for index, container in enumerate(dicts(spec.get("containers"))):
        ports_path = containers_path.index(index).child("ports")
        for port_index, port in enumerate(dicts(container.get("ports"))):
            host_port, container_port = i(port, "hostPort"), i(port, "containerPort")
            if (opts.resource_is_pod or host_port != 0) and host_port != container_port:
                errs.append(FieldError.invalid(ports_path.index(port_index).child("hostPort"),
                                               host_port, "must match `containerPort` when "
                                                          "`hostNetwork` is true"))
    return errs

