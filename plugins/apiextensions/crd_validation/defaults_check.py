"""Checks of the ``default`` values in a CRD schema (``structuraldefaulting.ValidateDefaults``).

Every default must survive pruning unchanged (``must not have unknown fields``), make valid
TypeMeta and ObjectMeta where it sits in an embedded resource's metadata, validate against
the schema it is the default of, and then pass that schema's CEL rules: as an update from
itself, and (with ratcheting, on by default) as a create, for rules with ``optionalOldSelf``.
The root is treated as an embedded resource. Defaults below ``additionalProperties`` are not
visited (the walk forbids them there).
"""

from __future__ import annotations

import copy

from kapiserver.apimachinery.field_errors import FieldError, FieldPath, aggregate_message

from ..cel import RuleSet
from ..cel.validation import has_rules
from ..schema.objectmeta import validate_embedded_resources
from ..schema.pruning import _Pruner
from ..schema.validation import validate_openapi
from .internal import as_dict

__all__ = ["validate_defaults", "has_unpruned_defaults"]

_META_FIELDS = frozenset(("metadata", "apiVersion", "kind"))
_TYPE_META = {"apiVersion": "validation/v1", "kind": "Validation"}


def _pruned(value, schema: dict, is_resource_root: bool):
    """``pruning.Prune`` alone: unknown fields dropped; nulls and metadata left as they are."""
    value = copy.deepcopy(value)
    _Pruner(preserve_metadata=False).prune(value, schema, "", is_resource_root)
    return value


def _surrounding(default, keys: tuple):
    """The object around a default inside TypeMeta/ObjectMeta (``SurroundingObjectFunc``):
    ``{"apiVersion": "validation/v1", "kind": "Validation", <keys...>: default}``."""
    obj = dict(_TYPE_META)
    node = obj
    for key in keys[:-1]:
        node = node.setdefault(key, {}) if isinstance(node, dict) else node
    if isinstance(node, dict) and keys:
        node[keys[-1]] = default
    return obj


def _check(path: FieldPath, s: dict, root: dict, keys: tuple, inside_meta: bool,
           require_pruned: bool, out: list) -> None:
    if s.get("x-kubernetes-embedded-resource") is True:
        inside_meta, keys, root = False, (), s
    default = s.get("default")
    if default is not None:
        at = path.child("default")
        if inside_meta:
            obj = _surrounding(copy.deepcopy(default), keys)
            meta_errs = validate_embedded_resources(dict(root, **{
                "x-kubernetes-embedded-resource": True}), obj)
            if meta_errs:
                out.append(FieldError.invalid(at, default, "must result in valid metadata: "
                                                           + aggregate_message(meta_errs)))
            else:
                out.extend(validate_openapi(s, default, at)
                           or _rule_errors(s, default, at, s is root))
        else:
            embedded = s.get("x-kubernetes-embedded-resource") is True
            if require_pruned and _pruned(default, s, embedded) != default:
                out.append(FieldError.invalid(at, default, "must not have unknown fields"))
            meta_errs = validate_embedded_resources(s, default, at)
            out.extend(meta_errs or validate_openapi(s, default, at)
                       or _rule_errors(s, default, at, s is root))
    items = s.get("items")
    if isinstance(items, dict):
        _check(path.child("items"), items, root, keys + ("[]",), inside_meta, require_pruned,
               out)
    properties = as_dict(s.get("properties"))
    for name in sorted(properties):
        if not isinstance(properties[name], dict):
            continue
        sub_inside = inside_meta or (s.get("x-kubernetes-embedded-resource") is True
                                     and name in _META_FIELDS)
        _check(path.child("properties").key(name), properties[name], root, keys + (name,),
               sub_inside, require_pruned, out)


def _rule_errors(s: dict, default, at: FieldPath, is_resource_root: bool) -> list[FieldError]:
    """The CEL rules of ``s`` (and below it) on its default: as an update from itself, then
    as a create (so an ``optionalOldSelf`` rule sees no old value)."""
    if not has_rules(s):
        return []
    rules = RuleSet.compile(s, is_resource_root)
    return (rules.validate(default, default, path=at)
            or rules.validate(default, None, path=at))


def validate_defaults(schema: dict, path: FieldPath, require_pruned: bool) -> list[FieldError]:
    """``ValidateDefaults(path, schema, isResourceRoot=true, requirePrunedDefaults)``."""
    root = dict(schema, **{"x-kubernetes-embedded-resource": True})
    out: list[FieldError] = []
    _check(path, root, root, (), False, require_pruned, out)
    return out


def _defaults_change_when_pruned(s) -> bool:
    if not isinstance(s, dict):
        return False
    default = s.get("default")
    embedded = s.get("x-kubernetes-embedded-resource") is True
    if default is not None and _pruned(default, s, embedded) != default:
        return True
    children = [s.get("items"), s.get("additionalProperties"),
                *as_dict(s.get("properties")).values()]
    return any(_defaults_change_when_pruned(child) for child in children)


def has_unpruned_defaults(schema) -> bool:
    """``schemaHasUnprunedDefaults``: a default of a structural ``schema`` that pruning would
    change (a non-structural schema has none that count)."""
    from .internal import schema_has
    from .structural import new_structural_error, validate_structural

    if not isinstance(schema, dict) or not schema_has(schema,
                                                      lambda s: s.get("default") is not None):
        return False
    if new_structural_error(schema) or validate_structural(schema, FieldPath("")):
        return False
    return _defaults_change_when_pruned(schema)
