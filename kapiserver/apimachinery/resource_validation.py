"""Resource names and quantities validated as Kubernetes 1.32's core validation does.

Ports, from ``pkg/apis/core/validation``: ``ValidateNonnegativeQuantity``,
``ValidatePositiveQuantityValue``, ``ValidateResourceQuantityValue`` (with its "must be an
integer" rule), ``validateBasicResource``, ``validateResourceName``,
``validateContainerResourceName``, ``ValidateResourceQuotaResourceName`` and the
request-against-limit check of ``validateResourceRequirements``; and, from
``pkg/apis/core/helper``, the resource-name predicates those use.

Bad values print as upstream passes them to ``field.Invalid``: a quantity's ``String()``
quoted, a Quantity passed by value as Go's ``%#v`` of the struct, a ``ResourceName`` bare
(it is a ``fmt.Stringer``), an int64 as a number.
"""

from __future__ import annotations

from .field_errors import FieldError, FieldPath, GoValue
from .quantity import Quantity
from .validation import is_qualified_name

IS_NEGATIVE_ERROR_MSG = "must be greater than or equal to 0"
IS_NOT_INTEGER_ERROR_MSG = "must be an integer"
IS_NOT_POSITIVE_ERROR_MSG = "must be greater than zero"
IS_INVALID_QUOTA_RESOURCE = "must be a standard resource for quota"

RESOURCE_HUGE_PAGES_PREFIX = "hugepages-"
RESOURCE_REQUESTS_HUGE_PAGES_PREFIX = "requests.hugepages-"
DEFAULT_RESOURCE_REQUESTS_PREFIX = "requests."
RESOURCE_DEFAULT_NAMESPACE_PREFIX = "kubernetes.io/"

_STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
_OBJECT_COUNTS = frozenset({
    "pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps",
    "persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
})
_STANDARD_QUOTA_RESOURCES = _OBJECT_COUNTS | {
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory",
    "requests.storage", "requests.ephemeral-storage", "limits.cpu", "limits.memory",
    "limits.ephemeral-storage",
}
_STANDARD_RESOURCES = _STANDARD_QUOTA_RESOURCES | {"storage"}
_INTEGER_RESOURCES = _OBJECT_COUNTS


# -- helper's predicates --------------------------------------------------------------------

def is_huge_page_resource_name(name: str) -> bool:
    """``IsHugePageResourceName``: ``hugepages-<size>``."""
    return name.startswith(RESOURCE_HUGE_PAGES_PREFIX)


def is_quota_huge_page_resource_name(name: str) -> bool:
    """``IsQuotaHugePageResourceName``: ``hugepages-`` or ``requests.hugepages-``."""
    return (name.startswith(RESOURCE_HUGE_PAGES_PREFIX)
            or name.startswith(RESOURCE_REQUESTS_HUGE_PAGES_PREFIX))


def is_native_resource(name: str) -> bool:
    """``IsNativeResource``: unprefixed, or in the ``kubernetes.io/`` namespace."""
    return "/" not in name or RESOURCE_DEFAULT_NAMESPACE_PREFIX in name


def is_extended_resource_name(name: str) -> bool:
    """``IsExtendedResourceName``: not native, no ``requests.`` prefix, and a qualified
    name once that prefix is added (the name quota gives it)."""
    if is_native_resource(name) or name.startswith(DEFAULT_RESOURCE_REQUESTS_PREFIX):
        return False
    return not is_qualified_name(DEFAULT_RESOURCE_REQUESTS_PREFIX + name)


def is_overcommit_allowed(name: str) -> bool:
    """``IsOvercommitAllowed``: native and not huge pages."""
    return is_native_resource(name) and not is_huge_page_resource_name(name)


def is_standard_container_resource_name(name: str) -> bool:
    """``IsStandardContainerResourceName``: cpu, memory, ephemeral-storage, huge pages."""
    return name in _STANDARD_CONTAINER_RESOURCES or is_huge_page_resource_name(name)


def is_standard_quota_resource_name(name: str) -> bool:
    """``IsStandardQuotaResourceName``: a resource the quota system tracks."""
    return name in _STANDARD_QUOTA_RESOURCES or is_quota_huge_page_resource_name(name)


def is_standard_resource_name(name: str) -> bool:
    """``IsStandardResourceName``: a resource known to the system."""
    return name in _STANDARD_RESOURCES or is_quota_huge_page_resource_name(name)


def is_integer_resource_name(name: str) -> bool:
    """``IsIntegerResourceName``: object counts and extended resources, which only come
    in whole units."""
    return name in _INTEGER_RESOURCES or is_extended_resource_name(name)


# -- quantities -----------------------------------------------------------------------------

def validate_nonnegative_quantity(value: Quantity, path: FieldPath) -> list[FieldError]:
    """``ValidateNonnegativeQuantity``."""
    if value.sign() < 0:
        return [FieldError.invalid(path, value.canonical(), IS_NEGATIVE_ERROR_MSG)]
    return []


def validate_positive_quantity_value(value: Quantity, path: FieldPath) -> list[FieldError]:
    """``ValidatePositiveQuantityValue``."""
    if value.sign() <= 0:
        return [FieldError.invalid(path, value.canonical(), IS_NOT_POSITIVE_ERROR_MSG)]
    return []


def validate_resource_quantity_value(resource: str, value: Quantity,
                                     path: FieldPath) -> list[FieldError]:
    """``ValidateResourceQuantityValue``: non-negative, and whole for integer resources.

    Whole means ``MilliValue() % 1000 == 0``, overflow included: upstream's int64
    arithmetic accepts ``1.9999`` (it rounds up to 2000 milli) and some huge values, and
    so does this. The error shows the Quantity struct, which upstream passes by value.
    """
    errs = validate_nonnegative_quantity(value, path)
    if is_integer_resource_name(resource) and value.milli_value() % 1000:
        errs.append(FieldError.invalid(path, GoValue(value.go_syntax()),
                                       IS_NOT_INTEGER_ERROR_MSG))
    return errs


def validate_basic_resource(quantity: Quantity, path: FieldPath) -> list[FieldError]:
    """``validateBasicResource``: ``Value()`` may not be negative (node capacity and
    allocatable, persistent volume capacity)."""
    value = quantity.value()
    if value < 0:
        return [FieldError.invalid(path, value, "must be a valid resource quantity")]
    return []


def validate_request_against_limit(resource: str, request: Quantity, limit: Quantity | None,
                                   requests_path: FieldPath,
                                   limits_path: FieldPath) -> list[FieldError]:
    """The request/limit rule of ``validateResourceRequirements`` for one resource: a
    request may not exceed its limit, and must equal it (and so needs one) where the
    resource cannot be overcommitted. Errors name the ``requests`` (or ``limits``) map."""
    overcommit = is_overcommit_allowed(resource)
    if limit is None:
        if overcommit:
            return []
        return [FieldError.required(limits_path,
                                    "Limit must be set for non overcommitable resources")]
    order = request.cmp(limit)
    if order and not overcommit:
        detail = f"must be equal to {resource} limit of {limit.canonical()}"
    elif order > 0:
        detail = f"must be less than or equal to {resource} limit of {limit.canonical()}"
    else:
        return []
    return [FieldError.invalid(requests_path, request.canonical(), detail)]


# -- names ----------------------------------------------------------------------------------

def validate_resource_name(name: str, path: FieldPath) -> list[FieldError]:
    """``validateResourceName``: a qualified name, and a standard one when unprefixed."""
    errs = [FieldError.invalid(path, GoValue(name), msg) for msg in is_qualified_name(name)]
    if errs:
        return errs
    if "/" not in name and not is_standard_resource_name(name):
        return [FieldError.invalid(path, GoValue(name),
                                   "must be a standard resource type or fully qualified")]
    return []


def validate_container_resource_name(name: str, path: FieldPath) -> list[FieldError]:
    """``validateContainerResourceName``: what containers (and LimitRange Pod/Container
    items) may request."""
    errs = validate_resource_name(name, path)
    if "/" not in name:
        if not is_standard_container_resource_name(name):
            errs.append(FieldError.invalid(path, GoValue(name),
                                           "must be a standard resource for containers"))
    elif not is_native_resource(name) and not is_extended_resource_name(name):
        errs.append(FieldError.invalid(path, GoValue(name),
                                       "doesn't follow extended resource name standard"))
    return errs


def validate_resource_quota_resource_name(name: str, path: FieldPath) -> list[FieldError]:
    """``ValidateResourceQuotaResourceName``: what a ResourceQuota's hard/used may name."""
    errs = validate_resource_name(name, path)
    if "/" not in name and not is_standard_quota_resource_name(name):
        errs.append(FieldError.invalid(path, GoValue(name), IS_INVALID_QUOTA_RESOURCE))
    return errs
