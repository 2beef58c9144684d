"""Compute resources: containers' requirements (``validateResourceRequirements``), the pod's
overhead and resource claims (``validatePodResourceClaims``, ``validateResourceClaimNames``)."""

from __future__ import annotations

from typing import Callable

from ....apimachinery import quantity as _quantity
from ....apimachinery import validation as apivalidation
from ....apimachinery.field_errors import FieldError, FieldPath, GoValue
from ....apimachinery.gosyntax import POINTER_ADDRESS, go_str
from ....apimachinery.resource_validation import (is_huge_page_resource_name,
                                                  is_overcommit_allowed,
                                                  validate_container_resource_name,
                                                  validate_resource_name,
                                                  validate_resource_quantity_value)
from .. import helpers
from .common import d, dicts, opt_str, s, validate_dns1123_label, validate_name
from .options import PodValidationOptions

_QOS_RESOURCES = ("cpu", "memory")
_POD_LEVEL_RESOURCES = ("cpu", "memory")

NameValidator = Callable[[str, FieldPath], list]


def parse_quantity(value, path: FieldPath, errs: list) -> _quantity.Quantity | None:
    """A quantity as JSON decoding reads it; a value that does not parse is reported
    (the codec normally refuses it before validation) and read as ``None``."""
    try:
        return _quantity.from_json(value)
    except (_quantity.QuantityError, ValueError, TypeError) as err:
        errs.append(FieldError.invalid(path, value if isinstance(value, str) else str(value),
                                       str(err)))
        return None


def _huge_page_error(name: str, value: _quantity.Quantity,
                     opts: PodValidationOptions) -> str:
    # validateResourceQuantityHugePageValue
    if opts.allow_indivisible_huge_pages_values or \
            helpers.is_huge_page_resource_value_divisible(name, value):
        return ""
    return f"{value.canonical()} is not positive integer multiple of {name}"


def validate_resource_requirements(requirements: dict, name_fn: NameValidator,
                                   claim_names: set[str], path: FieldPath,
                                   opts: PodValidationOptions) -> list[FieldError]:
    """``validateResourceRequirements``: names, quantities, requests not above limits
    (equal to them for resources that cannot be overcommitted), huge pages, claims."""
    errs = []
    limits_path, requests_path = path.child("limits"), path.child("requests")
    limits_qos = requests_qos = limits_huge = requests_huge = False
    limits: dict[str, _quantity.Quantity] = {}
    for name, raw in d(requirements, "limits").items():
        item_path = limits_path.key(name)
        errs += name_fn(name, item_path)
        value = parse_quantity(raw, item_path, errs)
        if value is None:
            continue
        limits[name] = value
        errs += validate_resource_quantity_value(name, value, item_path)
        if is_huge_page_resource_name(name):
            limits_huge = True
            if message := _huge_page_error(name, value, opts):
                errs.append(FieldError.invalid(item_path, value.canonical(), message))
        if name in _QOS_RESOURCES:
            limits_qos = True
    raw_limits = d(requirements, "limits")
    for name, raw in d(requirements, "requests").items():
        item_path = requests_path.key(name)
        errs += name_fn(name, item_path)
        value = parse_quantity(raw, item_path, errs)
        if value is None:
            continue
        errs += validate_resource_quantity_value(name, value, item_path)
        limit = limits.get(name)
        if name in raw_limits:
            if limit is not None:
                order = value.cmp(limit)
                if order and not is_overcommit_allowed(name):
                    errs.append(FieldError.invalid(
                        requests_path, value.canonical(),
                        f"must be equal to {name} limit of {limit.canonical()}"))
                elif order > 0:
                    errs.append(FieldError.invalid(
                        requests_path, value.canonical(),
                        f"must be less than or equal to {name} limit of {limit.canonical()}"))
        elif not is_overcommit_allowed(name):
            errs.append(FieldError.required(limits_path,
                                            "Limit must be set for non overcommitable resources"))
        if is_huge_page_resource_name(name):
            requests_huge = True
            if message := _huge_page_error(name, value, opts):
                errs.append(FieldError.invalid(item_path, value.canonical(), message))
        if name in _QOS_RESOURCES:
            requests_qos = True
    if not limits_qos and not requests_qos and (requests_huge or limits_huge):
        errs.append(FieldError.forbidden(path, "HugePages require cpu or memory"))
    return errs + validate_resource_claim_names(requirements.get("claims"), claim_names,
                                                path.child("claims"))


def validate_container_resource_requirements(requirements: dict, claim_names: set[str],
                                             path: FieldPath,
                                             opts: PodValidationOptions) -> list[FieldError]:
    """``ValidateContainerResourceRequirements``."""
    return validate_resource_requirements(requirements, validate_container_resource_name,
                                          claim_names, path, opts)


def _validate_pod_resource_name(name: str, path: FieldPath) -> list[FieldError]:
    errs = validate_resource_name(name, path)
    if errs:
        return errs
    if name not in _POD_LEVEL_RESOURCES:
        return [FieldError.not_supported(path, name, _POD_LEVEL_RESOURCES)]
    return []


def validate_pod_resources(spec: dict, claim_names: set[str], path: FieldPath,
                           opts: PodValidationOptions) -> list[FieldError]:
    """``validatePodResources`` (PodLevelResources, off in 1.32): names and quantities."""
    resources = spec.get("resources")
    if not isinstance(resources, dict):
        return []
    errs = []
    if resources.get("claims") is not None:
        errs.append(FieldError.forbidden(path.child("claims"),
                                         "claims cannot be set for Resources at pod-level"))
    return errs + validate_resource_requirements(resources, _validate_pod_resource_name,
                                                 claim_names, path, opts)


def validate_overhead(overhead: dict, path: FieldPath,
                      opts: PodValidationOptions) -> list[FieldError]:
    """``validateOverhead``: the requirements rules applied to overhead as limits."""
    return validate_container_resource_requirements({"limits": overhead}, set(), path, opts)


def validate_resource_claim_names(claims, pod_claim_names: set[str],
                                  path: FieldPath) -> list[FieldError]:
    """``validateResourceClaimNames``: each claim (and request) once, and one of the pod's."""
    errs = []
    names: set[str] = set()
    for index, claim in enumerate(dicts(claims)):
        name = s(claim, "name")
        item_path = path.index(index)
        if not name:
            errs.append(FieldError.required(item_path, ""))
            continue
        if name in names:
            errs.append(FieldError.duplicate(item_path, name))
        else:
            key = name
            request = s(claim, "request")
            if request:
                errs += validate_dns1123_label(request, item_path.child("request"))
                key += "/" + request
            if key in names:
                errs.append(FieldError.duplicate(item_path, key))
            elif not request:
                for seen in sorted(names):
                    if "/" in seen and seen.split("/", 1)[0] == name:
                        errs.append(FieldError.duplicate(item_path, name))
            names.add(key)
        if name not in pod_claim_names:
            error = FieldError.not_found(item_path, name)
            error.detail = "must be one of the names in pod.spec.resourceClaims"
            error.detail += (": " + ", ".join(sorted(pod_claim_names)) if pod_claim_names
                             else " which is empty")
            errs.append(error)
    return errs


def _go_pod_resource_claim(claim: dict) -> GoValue:
    def pointer(key):
        present = opt_str(claim, key) is not None
        return f"(*string)({POINTER_ADDRESS if present else 'nil'})"
    return GoValue(f"core.PodResourceClaim{{Name:{go_str(claim.get('name'))}, "
                   f"ResourceClaimName:{pointer('resourceClaimName')}, "
                   f"ResourceClaimTemplateName:{pointer('resourceClaimTemplateName')}}}")


def pod_resource_claim_names(claims) -> set[str]:
    """``gatherPodResourceClaimNames``: the non-empty names of ``spec.resourceClaims``."""
    return {s(claim, "name") for claim in dicts(claims) if s(claim, "name")}


def validate_pod_resource_claims(claims, path: FieldPath) -> list[FieldError]:
    """``validatePodResourceClaims``."""
    errs = []
    seen: set[str] = set()
    for index, claim in enumerate(dicts(claims)):
        item_path = path.index(index)
        name = s(claim, "name")
        if not name:
            errs.append(FieldError.required(item_path.child("name"), ""))
        elif name in seen:
            errs.append(FieldError.duplicate(item_path.child("name"), name))
        else:
            errs += validate_dns1123_label(name, item_path.child("name"))
            seen.add(name)
        claim_name = opt_str(claim, "resourceClaimName")
        template_name = opt_str(claim, "resourceClaimTemplateName")
        if claim_name is not None and template_name is not None:
            errs.append(FieldError.invalid(item_path, _go_pod_resource_claim(claim),
                                           "at most one of `resourceClaimName` or "
                                           "`resourceClaimTemplateName` may be specified"))
        if claim_name is None and template_name is None:
            errs.append(FieldError.invalid(item_path, _go_pod_resource_claim(claim),
                                           "must specify one of: `resourceClaimName`, "
                                           "`resourceClaimTemplateName`"))
        if claim_name is not None:
            errs += validate_name(apivalidation.name_is_dns_subdomain, claim_name,
                                  item_path.child("resourceClaimName"))
        if template_name is not None:
            errs += validate_name(apivalidation.name_is_dns_subdomain, template_name,
                                  item_path.child("resourceClaimTemplateName"))
    return errs
