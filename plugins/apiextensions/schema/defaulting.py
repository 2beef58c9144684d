"""Defaulting of custom resources from a structural schema's ``default`` values.

Mirrors ``structuraldefaulting.Default`` (``apiextensions-apiserver/pkg/apiserver/schema/
defaulting/algorithm.go``): a property's default fills it in when it is missing, or when it
is null and the property is not nullable; array items and ``additionalProperties`` values
that are such nulls are defaulted too. Defaults are deep-copied, and the walk descends into
the values it has just defaulted, so defaults nested in defaults apply as well. A ``default``
of null counts as no default (Go decodes it to a nil ``Default.Object``).
"""

from __future__ import annotations

import copy

__all__ = ["default", "prune_nulls"]


def _non_nullable_null(value, schema) -> bool:
    """``isNonNullableNull``: null where the schema has a default and does not allow null."""
    return (value is None and isinstance(schema, dict) and not schema.get("nullable")
            and schema.get("default") is not None)


def default(schema: dict, obj) -> None:
    """Apply the ``default``s of ``schema`` to ``obj`` in place
    (``structuraldefaulting.Default``)."""
    if not isinstance(schema, dict):
        return
    if isinstance(obj, dict):
        props = schema.get("properties")
        if props:
            for key, prop in props.items():
                if not isinstance(prop, dict) or prop.get("default") is None:
                    continue
                if key not in obj or _non_nullable_null(obj[key], prop):
                    obj[key] = copy.deepcopy(prop["default"])
        additional = schema.get("additionalProperties")
        if not props and not isinstance(additional, dict):
            return
        for key in list(obj):
            if props and key in props:
                default(props[key], obj[key])
            elif isinstance(additional, dict):
                if _non_nullable_null(obj[key], additional):
                    obj[key] = copy.deepcopy(additional["default"])
                default(additional, obj[key])
    elif isinstance(obj, list):
        items = schema.get("items")
        if not isinstance(items, dict):
            return
        for i, item in enumerate(obj):
            if _non_nullable_null(item, items):
                obj[i] = item = copy.deepcopy(items["default"])
            default(items, item)


def _field_schema(key: str, schema):
    if not isinstance(schema, dict):
        return None
    props = schema.get("properties")
    if props and key in props:
        return props[key]
    additional = schema.get("additionalProperties")
    return additional if isinstance(additional, dict) else None


def prune_nulls(schema: dict, obj) -> None:
    """Drop nulls the schema neither allows nor defaults, in place
    (``PruneNonNullableNullsWithoutDefaults``); nulls with a default are left for
    :func:`default`."""
    if isinstance(obj, dict):
        for key in list(obj):
            sub = _field_schema(key, schema)
            value = obj[key]
            if (value is None and isinstance(sub, dict) and not sub.get("nullable")
                    and sub.get("default") is None):
                del obj[key]
            elif isinstance(value, (dict, list)):
                prune_nulls(sub, value)
    elif isinstance(obj, list):
        items = schema.get("items") if isinstance(schema, dict) else None
        for item in obj:
            if isinstance(item, (dict, list)):
                prune_nulls(items, item)
