"""Containers' environment (``ValidateEnv``, ``ValidateEnvFrom``) and the downward API's
field and resource selectors they share with volumes (``pkg/apis/core/validation``)."""

from __future__ import annotations

from ....apimachinery import quantity as _quantity
from ....apimachinery import validation as apivalidation
from ....apimachinery.field_errors import FieldError, FieldPath
from .. import helpers
from .common import dicts, invalid_each, opt, opt_str, s, validate_name, validate_qualified_name
from .options import PodValidationOptions

RELAXED_ENV_VAR_NAME_FMT_ERR_MSG = ("a valid environment variable name must consist only of "
                                    "printable ASCII characters other than '='")

ENV_DOWNWARD_API_FIELD_PATHS = frozenset({
    "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName",
    "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP",
    "status.podIPs"})
CONTAINER_RESOURCE_FIELD_PATHS = frozenset({
    "limits.cpu", "limits.memory", "limits.ephemeral-storage", "requests.cpu",
    "requests.memory", "requests.ephemeral-storage"})
_HUGE_PAGES_PREFIXES = ("limits.hugepages-", "requests.hugepages-")
_SIZED_DIVISORS = frozenset({"1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi",
                             "1Ti", "1Pi", "1Ei"})
_SIZED_DIVISORS_TEXT = "1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei"


def is_relaxed_env_var_name(value: str) -> list[str]:
    """``IsRelaxedEnvVarName``: printable ASCII but '='."""
    errs = []
    if not value:
        errs.append("environment variable name " + apivalidation.empty_error())
    for ch in value:
        if not (" " <= ch <= "~") or ch == "=":
            errs.append(RELAXED_ENV_VAR_NAME_FMT_ERR_MSG)
            break
    return errs


def _env_name_errors(name: str, opts: PodValidationOptions) -> list[str]:
    if opts.allow_relaxed_environment_variable_validation:
        return is_relaxed_env_var_name(name)
    return apivalidation.is_env_var_name(name)


def validate_object_field_selector(selector: dict, expressions: frozenset,
                                   path: FieldPath) -> list[FieldError]:
    """``validateObjectFieldSelector``: a downward API ``fieldRef``."""
    if not s(selector, "apiVersion"):
        return [FieldError.required(path.child("apiVersion"), "")]
    field_path = s(selector, "fieldPath")
    if not field_path:
        return [FieldError.required(path.child("fieldPath"), "")]
    internal, err = helpers.convert_downward_api_field_label(s(selector, "apiVersion"),
                                                             field_path)
    if err:
        return [FieldError.invalid(path.child("fieldPath"), field_path,
                                   f"error converting fieldPath: {err}")]
    base, subscript, subscripted = helpers.split_maybe_subscripted_path(internal)
    if subscripted:
        if base == "metadata.annotations":
            return validate_qualified_name(subscript.lower(), path)
        if base == "metadata.labels":
            return validate_qualified_name(subscript, path)
        return [FieldError.invalid(path, base, "does not support subscript")]
    if base not in expressions:
        return [FieldError.not_supported(path.child("fieldPath"), base, sorted(expressions))]
    return []


def _validate_divisor(resource: str, divisor, path: FieldPath) -> list[FieldError]:
    if divisor is None:
        return []
    try:
        parsed = _quantity.from_json(divisor)
    except (_quantity.QuantityError, ValueError, TypeError) as err:
        return [FieldError.invalid(path.child("divisor"), divisor, str(err))]
    if parsed.is_zero():
        return []
    text = parsed.canonical()
    errs = []
    if resource in ("limits.cpu", "requests.cpu"):
        if text not in ("1m", "1"):
            errs.append(FieldError.invalid(path.child("divisor"), resource,
                                           "only divisor's values 1m and 1 are supported with "
                                           "the cpu resource"))
    elif resource in ("limits.memory", "requests.memory"):
        if text not in _SIZED_DIVISORS:
            errs.append(FieldError.invalid(path.child("divisor"), resource,
                                           f"only divisor's values {_SIZED_DIVISORS_TEXT} are "
                                           "supported with the memory resource"))
    elif resource in ("limits.ephemeral-storage", "requests.ephemeral-storage"):
        if text not in _SIZED_DIVISORS:
            errs.append(FieldError.invalid(path.child("divisor"), resource,
                                           f"only divisor's values {_SIZED_DIVISORS_TEXT} are "
                                           "supported with the local ephemeral storage "
                                           "resource"))
    if resource.startswith(_HUGE_PAGES_PREFIXES) and text not in _SIZED_DIVISORS:
        errs.append(FieldError.invalid(path.child("divisor"), resource,
                                       f"only divisor's values {_SIZED_DIVISORS_TEXT} are "
                                       "supported with the hugepages resource"))
    return errs


def validate_container_resource_field_selector(selector: dict, path: FieldPath,
                                               volume: bool) -> list[FieldError]:
    """``validateContainerResourceFieldSelector``: a downward API ``resourceFieldRef``;
    in a volume it must name its container."""
    errs = []
    resource = s(selector, "resource")
    if volume and not s(selector, "containerName"):
        errs.append(FieldError.required(path.child("containerName"), ""))
    elif not resource:
        errs.append(FieldError.required(path.child("resource"), ""))
    elif resource not in CONTAINER_RESOURCE_FIELD_PATHS and \
            not resource.startswith(_HUGE_PAGES_PREFIXES):
        errs.append(FieldError.not_supported(path.child("resource"), resource,
                                             sorted(CONTAINER_RESOURCE_FIELD_PATHS)))
    return errs + _validate_divisor(resource, selector.get("divisor"), path)


def _validate_key_selector(selector: dict, path: FieldPath) -> list[FieldError]:
    # validateConfigMapKeySelector, validateSecretKeySelector
    errs = validate_name(apivalidation.name_is_dns_subdomain, s(selector, "name"),
                         path.child("name"))
    key = s(selector, "key")
    if not key:
        errs.append(FieldError.required(path.child("key"), ""))
    else:
        errs += invalid_each(path.child("key"), key, apivalidation.is_config_map_key(key))
    return errs


def _validate_value_from(env: dict, path: FieldPath,
                         opts: PodValidationOptions) -> list[FieldError]:
    value_from = opt(env, "valueFrom")
    if value_from is None:
        return []
    errs = []
    count = 0
    field_ref = opt(value_from, "fieldRef")
    if field_ref is not None:
        count += 1
        errs += validate_object_field_selector(field_ref, ENV_DOWNWARD_API_FIELD_PATHS,
                                               path.child("fieldRef"))
    resource_ref = opt(value_from, "resourceFieldRef")
    if resource_ref is not None:
        count += 1
        errs += validate_container_resource_field_selector(
            resource_ref, path.child("resourceFieldRef"), volume=False)
    for key in ("configMapKeyRef", "secretKeyRef"):
        selector = opt(value_from, key)
        if selector is not None:
            count += 1
            errs += _validate_key_selector(selector, path.child(key))
    if count == 0:
        errs.append(FieldError.invalid(path, "", "must specify one of: `fieldRef`, "
                                                 "`resourceFieldRef`, `configMapKeyRef` or "
                                                 "`secretKeyRef`"))
    elif s(env, "value"):
        errs.append(FieldError.invalid(path, "", "may not be specified when `value` is not "
                                                 "empty"))
    elif count > 1:
        errs.append(FieldError.invalid(path, "", "may not have more than one field specified "
                                                 "at a time"))
    return errs


def validate_env(env_vars: list, path: FieldPath, opts: PodValidationOptions) -> list[FieldError]:
    """``ValidateEnv``: names (relaxed in 1.32) and ``valueFrom``."""
    errs = []
    for index, env in enumerate(dicts(env_vars)):
        item_path = path.index(index)
        name = s(env, "name")
        if not name:
            errs.append(FieldError.required(item_path.child("name"), ""))
        else:
            errs += invalid_each(item_path.child("name"), name, _env_name_errors(name, opts))
        errs += _validate_value_from(env, item_path.child("valueFrom"), opts)
    return errs


def validate_env_from(sources: list, path: FieldPath,
                      opts: PodValidationOptions) -> list[FieldError]:
    """``ValidateEnvFrom``: prefixes and exactly one of configMapRef or secretRef."""
    errs = []
    for index, source in enumerate(dicts(sources)):
        item_path = path.index(index)
        prefix = opt_str(source, "prefix") or ""
        if prefix:
            errs += invalid_each(item_path.child("prefix"), prefix,
                                 _env_name_errors(prefix, opts))
        count = 0
        for key in ("configMapRef", "secretRef"):
            ref = opt(source, key)
            if ref is None:
                continue
            count += 1
            name = s(ref, "name")
            if not name:
                errs.append(FieldError.required(item_path.child(key, "name"), ""))
            else:
                errs += validate_name(apivalidation.name_is_dns_subdomain, name,
                                      item_path.child(key, "name"), prefix=True)
        if count == 0:
            errs.append(FieldError.invalid(path, "", "must specify one of: `configMapRef` or "
                                                     "`secretRef`"))
        elif count > 1:
            errs.append(FieldError.invalid(path, "", "may not have more than one field "
                                                     "specified at a time"))
    return errs
