"""Pruning of custom resources: fields a structural schema does not specify are dropped.

Mirrors ``pruning.PruneWithOptions`` (``apiextensions-apiserver/pkg/apiserver/schema/pruning/
algorithm.go``) with unknown-field paths tracked: below ``x-kubernetes-preserve-unknown-fields``
nothing is dropped but known properties are still pruned; at the resource root and in
``x-kubernetes-embedded-resource`` objects ``apiVersion``, ``kind`` and ``metadata`` are kept
whatever the schema says (and whatever their type). The paths come back sorted, as upstream sorts
them (``sort.Strings``).

Inside embedded resources, ``metadata`` is then cut to ObjectMeta's fields, which upstream does
while coercing ObjectMeta (``objectmeta.CoerceWithOptions``, which round-trips it through
``metav1.ObjectMeta``); those paths follow the sorted ones. The root's ``metadata`` is left to
the caller's ObjectMeta handling. Last, nulls the schema neither allows nor defaults are
dropped (``PruneNonNullableNullsWithoutDefaults``, which the decoder runs right after pruning;
upstream reports no path for them).
"""

from __future__ import annotations

from .defaulting import prune_nulls

__all__ = ["prune", "OBJECT_META_FIELDS"]

#: The JSON fields of ``metav1.ObjectMeta``.
OBJECT_META_FIELDS = frozenset((
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
    "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
    "annotations", "ownerReferences", "finalizers", "managedFields"))


_META_FIELDS = frozenset(("apiVersion", "kind", "metadata"))


def _join(parent: str, key: str) -> str:
    return f"{parent}.{key}" if parent else key


class _Pruner:
    __slots__ = ("pruned", "meta_pruned", "preserve_metadata")

    def __init__(self, preserve_metadata: bool):
        self.pruned: list[str] = []
        self.meta_pruned: list[str] = []
        self.preserve_metadata = preserve_metadata

    def prune(self, x, s, path: str, embedded_root: bool = False) -> None:
        if isinstance(s, dict) and s.get("x-kubernetes-preserve-unknown-fields"):
            self.skip_prune(x, s, path, embedded_root)
            return
        if isinstance(x, dict):
            if not isinstance(s, dict):
                for key in list(x):
                    self.pruned.append(_join(path, key))
                    del x[key]
                return
            embedded = embedded_root or bool(s.get("x-kubernetes-embedded-resource"))
            props = s.get("properties") or {}
            additional = s.get("additionalProperties")
            for key in list(x):
                value = x[key]
                if embedded and key in _META_FIELDS:
                    # TypeMeta and ObjectMeta of a resource are not the schema's to prune.
                    if key == "metadata" and path and isinstance(value, dict):
                        self.cut_metadata(value, _join(path, key))
                    continue
                if key in props:
                    self.prune(value, props[key], _join(path, key))
                elif additional is not None:
                    # A boolean additionalProperties has no schema: the key stays, and an
                    # object under it loses all its fields, as upstream's nil schema prunes.
                    self.prune(value, additional if isinstance(additional, dict) else None,
                               _join(path, key))
                else:
                    # upstream drops a root's TypeMeta and ObjectMeta silently (not a resource)
                    if path or key not in _META_FIELDS:
                        self.pruned.append(_join(path, key))
                    del x[key]
        elif isinstance(x, list):
            items = s.get("items") if isinstance(s, dict) else None
            for i, value in enumerate(x):
                self.prune(value, items if isinstance(items, dict) else None, f"{path}[{i}]")

    def skip_prune(self, x, s, path: str, embedded_root: bool = False) -> None:
        if not isinstance(s, dict):
            return
        if isinstance(x, dict):
            embedded = embedded_root or bool(s.get("x-kubernetes-embedded-resource"))
            props = s.get("properties") or {}
            additional = s.get("additionalProperties")
            for key in list(x):
                value = x[key]
                if embedded and key in _META_FIELDS:
                    # TypeMeta and ObjectMeta of a resource are not the schema's to prune.
                    if key == "metadata" and path and isinstance(value, dict):
                        self.cut_metadata(value, _join(path, key))
                    continue
                if key in props:
                    self.prune(value, props[key], _join(path, key))
                elif additional is not None:
                    self.prune(value, additional if isinstance(additional, dict) else None,
                               _join(path, key))
        elif isinstance(x, list):
            items = s.get("items")
            for i, value in enumerate(x):
                self.skip_prune(value, items, f"{path}[{i}]")

    def cut_metadata(self, meta: dict, path: str) -> None:
        if not self.preserve_metadata:
            return
        for key in list(meta):
            if key not in OBJECT_META_FIELDS:
                self.meta_pruned.append(_join(path, key))
                del meta[key]


def prune(schema: dict, obj: dict, is_resource_root: bool = True,
          preserve_metadata: bool = True) -> list[str]:
    """Drop the fields of ``obj`` that ``schema`` does not specify, in place; return their
    paths (``spec.foo``, ``spec.items[0].bar``), sorted as upstream reports them.

    ``is_resource_root`` keeps the root's ``apiVersion``, ``kind`` and ``metadata`` (as
    upstream treats the root as an embedded resource). ``preserve_metadata`` cuts the
    ``metadata`` of embedded resources down to ObjectMeta's fields (upstream's ObjectMeta
    coercion); pass False to leave it untouched.
    """
    pruner = _Pruner(preserve_metadata)
    pruner.prune(obj, schema if isinstance(schema, dict) else {}, "", is_resource_root)
    pruner.pruned.sort()
    # The decoder drops disallowed nulls right after pruning, without reporting them.
    prune_nulls(schema, obj)
    return pruner.pruned + pruner.meta_pruned
