"""Resource lists as quota counts them (``k8s.io/apiserver/pkg/quota/v1/resources.go``).

A resource list is a dict of resource name to ``Quantity``; every function returns a new
one. ``from_json`` and ``to_json`` convert from and to the API's ``{"cpu": "500m"}``.
"""

from __future__ import annotations

from kapiserver.apimachinery import quantity

Quantity = quantity.Quantity
ZERO = quantity.new_quantity(0)


def from_json(value) -> dict[str, Quantity]:
    """A ``ResourceList`` from an object; values that do not parse are left out (decoding
    refused them before they were stored)."""
    result = {}
    if isinstance(value, dict):
        for name, raw in value.items():
            try:
                result[name] = quantity.from_json(raw)
            except quantity.QuantityError:
                continue
    return result


def to_json(resources: dict[str, Quantity]) -> dict[str, str]:
    """As the API writes a ``ResourceList``: canonical strings, keys sorted (Go's maps)."""
    return {name: resources[name].canonical() for name in sorted(resources)}


def equals(a: dict, b: dict) -> bool:
    """``Equals``: the same names with equal quantities."""
    return a.keys() == b.keys() and all(a[k].cmp(b[k]) == 0 for k in a)


def less_than_or_equal(a: dict, b: dict) -> tuple[bool, list[str]]:
    """``LessThanOrEqual``: whether every name of ``b`` that ``a`` has is within ``b``, and
    the names that are not."""
    exceeded = sorted(k for k, limit in b.items() if k in a and a[k].cmp(limit) > 0)
    return not exceeded, exceeded


def add(a: dict, b: dict) -> dict:
    """``Add``: the sum of each name in either list."""
    result = {k: (v.add(b[k]) if k in b else v) for k, v in a.items()}
    for k, v in b.items():
        result.setdefault(k, v)
    return result


def subtract_with_non_negative_result(a: dict, b: dict) -> dict:
    """``SubtractWithNonNegativeResult``: ``a - b``, each name at least zero."""
    zero = quantity.parse("0")
    result = {}
    for k, v in a.items():
        difference = v.sub(b[k]) if k in b else v
        result[k] = difference if difference.cmp(zero) > 0 else zero
    for k in b:
        result.setdefault(k, zero)
    return result


def mask(resources: dict, names) -> dict:
    """``Mask``: only the given names."""
    names = set(names)
    return {k: v for k, v in resources.items() if k in names}


def remove_zeros(resources: dict) -> dict:
    return {k: v for k, v in resources.items() if not v.is_zero()}


def is_negative(resources: dict) -> list[str]:
    return sorted(k for k, v in resources.items() if v.sign() < 0)


def intersection(a, b) -> list[str]:
    """``Intersection``: the names of ``a`` also in ``b``, once each, sorted."""
    b = set(b)
    return sorted({name for name in a if name in b})


def difference(a, b) -> list[str]:
    b = set(b)
    return sorted({name for name in a if name not in b})


def max_list(a: dict, b: dict) -> dict:
    """Each name's larger quantity (``maxResourceList`` onto a copy of ``a``)."""
    result = dict(a)
    for k, v in b.items():
        if k not in result or v.cmp(result[k]) > 0:
            result[k] = v
    return result


def pretty_print(resources: dict) -> str:
    """``prettyPrint``: ``name=value`` sorted by name, joined with commas."""
    return ",".join(f"{k}={resources[k].canonical()}" for k in sorted(resources))


def pretty_print_names(names) -> str:
    return ",".join(sorted(names))
