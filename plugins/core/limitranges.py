"""LimitRanges: ``pkg/registry/core/limitrange``.

Container items default their limits to ``max`` and their requests to the default limit,
else to ``min`` (``SetDefaults_LimitRangeItem``); ``ValidateLimitRange`` keeps each item's
quantities in order (``min <= defaultRequest <= default <= max``), its ratios sensible and
its resource names valid for its type. A LimitRange created without a name gets a UUID
as its name, as upstream's strategy gives it one.
"""

import math
import uuid

from kapiserver.apimachinery import quantity as _quantity
from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue
from kapiserver.apimachinery.resource_validation import (is_overcommit_allowed,
                                                         validate_container_resource_name,
                                                         validate_resource_name)
from kapiserver.apimachinery.validation import is_qualified_name
from kapiserver.registry.builtin import builtin_spec

from .kind_helpers import CoreStrategy, as_dict, as_list, as_str, resource_list, spec_of

LIMIT_RANGES = builtin_spec("", "v1", "limitranges")
POD, CONTAINER, PERSISTENT_VOLUME_CLAIM = "Pod", "Container", "PersistentVolumeClaim"
STANDARD_LIMIT_TYPES = (POD, CONTAINER, PERSISTENT_VOLUME_CLAIM)
#: The quantities an item holds, in the order ``SetObjectDefaults_LimitRange`` rounds them.
QUANTITY_FIELDS = ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio")


def set_item_defaults(item: dict) -> None:
    """``SetDefaults_LimitRangeItem``, then every quantity rounded up to thousandths."""
    from kapiserver.apis.core.defaults import set_resource_list_defaults

    if item.get("type") == CONTAINER:
        defaults = item.get("default")
        if not isinstance(defaults, dict):
            defaults = item["default"] = {}
        requests = item.get("defaultRequest")
        if not isinstance(requests, dict):
            requests = item["defaultRequest"] = {}
        for name, value in as_dict(item.get("max")).items():
            defaults.setdefault(name, value)
        for name, value in defaults.items():
            requests.setdefault(name, value)
        for name, value in as_dict(item.get("min")).items():
            requests.setdefault(name, value)
    for field in QUANTITY_FIELDS:
        set_resource_list_defaults(item.get(field))


def _validate_type(limit_type: str, path: FieldPath) -> list:
    """``validateLimitRangeTypeName``."""
    errs = [FieldError.invalid(path, limit_type, msg) for msg in is_qualified_name(limit_type)]
    if not errs and "/" not in limit_type and limit_type not in STANDARD_LIMIT_TYPES:
        errs.append(FieldError.invalid(path, limit_type,
                                       "must be a standard limit type or fully qualified"))
    return errs


def _validate_resource_name(limit_type: str, name: str, path: FieldPath) -> list:
    """``validateLimitRangeResourceName``: Pod and Container items name what containers
    may request; other types (claims) any standard or qualified resource."""
    if limit_type in (POD, CONTAINER):
        return validate_container_resource_name(name, path)
    return validate_resource_name(name, path)


def _go_float(value: float) -> str:
    """Go's ``%f``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return f"{value:.6f}"


def _divide(numerator: float, denominator: float) -> float:
    """Go's float64 division, which gives infinities (or NaN) for a zero denominator."""
    if denominator:
        return numerator / denominator
    if numerator == 0 or math.isnan(numerator):
        return math.nan
    return math.copysign(math.inf, numerator) * math.copysign(1.0, denominator)


def _ratio_errors(name, ratio, low, high, path: FieldPath) -> list:
    """The ``maxLimitRequestRatio`` rules of one resource."""
    errs = []
    if ratio.cmp(_quantity.new_quantity(1)) < 0:
        errs.append(FieldError.invalid(path, GoValue(ratio.go_syntax()),
                                       f"ratio {ratio.canonical()} is less than 1"))
    if low is not None and high is not None:
        ratio_value, low_value, high_value = float(ratio.value()), low.value(), high.value()
        limit = _quantity.MAX_MILLI_VALUE
        if ratio.value() < limit and low_value < limit and high_value < limit:
            ratio_value = ratio.milli_value() / 1000
            low_value, high_value = low.milli_value(), high.milli_value()
        most = _divide(float(high_value), float(low_value))
        if ratio_value > most:
            errs.append(FieldError.invalid(
                path, GoValue(ratio.go_syntax()),
                f"ratio {ratio.canonical()} is greater than max/min = {_go_float(most)}"))
    return errs


def _validate_item(item: dict, path: FieldPath, types: set) -> list:
    limit_type = as_str(item.get("type"))
    errs = _validate_type(limit_type, path.child("type"))
    if limit_type in types:
        errs.append(FieldError.duplicate(path.child("type"), limit_type))
    types.add(limit_type)
    values: dict[str, dict] = {field: {} for field in QUANTITY_FIELDS}
    checked = ["max", "min"]
    if limit_type == POD:
        for field in ("default", "defaultRequest"):
            if as_dict(item.get(field)):
                errs.append(FieldError.forbidden(path.child(field),
                                                 "may not be specified when `type` is 'Pod'"))
    else:
        checked += ["default", "defaultRequest"]
    for field in checked:
        for name, value in resource_list(item.get(field)):
            errs += _validate_resource_name(limit_type, name, path.child(field).key(name))
            values[field][name] = value
    if limit_type == PERSISTENT_VOLUME_CLAIM and \
            "storage" not in as_dict(item.get("min")) and "storage" not in as_dict(item.get("max")):
        errs.append(FieldError.required(path.child("limits"),
                                        "either minimum or maximum storage value is required, "
                                        "but neither was provided"))
    for name, value in resource_list(item.get("maxLimitRequestRatio")):
        errs += _validate_resource_name(limit_type, name,
                                        path.child("maxLimitRequestRatio").key(name))
        values["maxLimitRequestRatio"][name] = value
    for name in sorted(set().union(*values.values())):
        low, high = values["min"].get(name), values["max"].get(name)
        default, request = values["default"].get(name), values["defaultRequest"].get(name)
        ratio = values["maxLimitRequestRatio"].get(name)
        if low is not None and high is not None and low.cmp(high) > 0:
            errs.append(FieldError.invalid(
                path.child("min").key(name), GoValue(low.go_syntax()),
                f"min value {low.canonical()} is greater than max value {high.canonical()}"))
        if request is not None and low is not None and low.cmp(request) > 0:
            errs.append(FieldError.invalid(
                path.child("defaultRequest").key(name), GoValue(request.go_syntax()),
                f"min value {low.canonical()} is greater than default request value "
                f"{request.canonical()}"))
        if request is not None and high is not None and request.cmp(high) > 0:
            errs.append(FieldError.invalid(
                path.child("defaultRequest").key(name), GoValue(request.go_syntax()),
                f"default request value {request.canonical()} is greater than max value "
                f"{high.canonical()}"))
        if request is not None and default is not None and request.cmp(default) > 0:
            errs.append(FieldError.invalid(
                path.child("defaultRequest").key(name), GoValue(request.go_syntax()),
                f"default request value {request.canonical()} is greater than default limit "
                f"value {default.canonical()}"))
        if default is not None and low is not None and low.cmp(default) > 0:
            errs.append(FieldError.invalid(
                path.child("default").key(name), GoValue(low.go_syntax()),
                f"min value {low.canonical()} is greater than default value "
                f"{default.canonical()}"))
        if default is not None and high is not None and default.cmp(high) > 0:
            errs.append(FieldError.invalid(
                path.child("default").key(name), GoValue(high.go_syntax()),
                f"default value {default.canonical()} is greater than max value "
                f"{high.canonical()}"))
        if ratio is not None:
            errs += _ratio_errors(name, ratio, low, high,
                                  path.child("maxLimitRequestRatio").key(name))
        if not is_overcommit_allowed(name) and default is not None and request is not None \
                and default.cmp(request) != 0:
            errs.append(FieldError.invalid(
                path.child("defaultRequest").key(name), GoValue(request.go_syntax()),
                f"default value {default.canonical()} must equal to defaultRequest value "
                f"{request.canonical()} in {name}"))
    return errs


def validate_limits(spec: dict, path: FieldPath = FieldPath("spec", "limits")) -> list:
    """``ValidateLimitRange`` beyond metadata: each item, and each type at most once."""
    errs, types = [], set()
    for index, item in enumerate(as_list(spec.get("limits"))):
        errs += _validate_item(as_dict(item), path.index(index), types)
    return errs


class LimitRangeStrategy(CoreStrategy):
    """``limitrange.Strategy``."""

    def set_defaults(self, obj):
        for item in as_list(spec_of(obj).get("limits")):
            if isinstance(item, dict):
                set_item_defaults(item)

    def on_create(self, obj):
        meta = obj.setdefault("metadata", {})
        if not meta.get("name") and not meta.get("generateName"):
            meta["name"] = str(uuid.uuid4())

    def validate(self, obj):
        return super().validate(obj) + validate_limits(spec_of(obj))


def install(server) -> dict:
    """The handlers of this module's resources, keyed as ``APIGroupInfo`` keys them."""
    from kapiserver.server.apigroups import builtin_handlers

    return builtin_handlers(server, LimitRangeStrategy(LIMIT_RANGES))

