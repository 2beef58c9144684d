"""Compare two versions of an object into added, modified and removed field sets.

Mirrors ``TypedValue.Compare`` of ``sigs.k8s.io/structured-merge-diff/typed``: a leaf
(a scalar, an atomic list or map, or a container empty on both sides) is added, removed
or modified as a whole; a granular map or list is walked item by item, and is itself
added or removed when it appears or disappears. The root is never tracked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..apimachinery.field_errors import go_quote
from .fieldpath import PathElement, Set
from .listtypes import DEFAULT, ITEM, ListTypes

MISSING = object()


class CompareError(ValueError):
    """An object that cannot be walked: a keyed list item without its key, a set holding
    maps or lists (upstream fails ``ObjectToTyped`` on these)."""


@dataclass
class Comparison:
    """The result of ``compare``; no path is in more than one of the three sets."""

    added: Set = field(default_factory=Set)
    modified: Set = field(default_factory=Set)
    removed: Set = field(default_factory=Set)

    def exclude(self, fields: Set) -> Comparison:
        """Drop ``fields`` and everything beneath them (upstream's ``ExcludeFields``)."""
        if fields.empty():
            return self
        return Comparison(self.added.recursive_difference(fields),
                          self.modified.recursive_difference(fields),
                          self.removed.recursive_difference(fields))

    def is_same(self) -> bool:
        return self.added.empty() and self.modified.empty() and self.removed.empty()


def go_equal(lhs: Any, rhs: Any) -> bool:
    """``value.Equals``: numbers compare numerically, booleans are not numbers."""
    if isinstance(lhs, bool) or isinstance(rhs, bool):
        return isinstance(lhs, bool) and isinstance(rhs, bool) and lhs == rhs
    if isinstance(lhs, (int, float)) or isinstance(rhs, (int, float)):
        return (isinstance(lhs, (int, float)) and isinstance(rhs, (int, float))
                and lhs == rhs)
    if isinstance(lhs, dict):
        return (isinstance(rhs, dict) and lhs.keys() == rhs.keys()
                and all(go_equal(lhs[k], rhs[k]) for k in lhs))
    if isinstance(lhs, list):
        return (isinstance(rhs, list) and len(lhs) == len(rhs)
                and all(go_equal(a, b) for a, b in zip(lhs, rhs)))
    return type(lhs) is type(rhs) and lhs == rhs


def compare(old: Any, new: Any, list_types: ListTypes | None = None, *,
            normalize: bool = True) -> Comparison:
    """Compare ``old`` (``None`` for nothing) with ``new``.

    With ``normalize`` both are first made what Go's decoding would hold
    (``ListTypes.normalize``; ``old`` of ``None`` becomes the kind's zero value). Raises
    ``CompareError`` when a list item cannot be named.
    """
    list_types = list_types or DEFAULT
    if normalize:
        old = list_types.normalize({} if old is None else old)
        new = list_types.normalize(new)
    elif old is None:
        old = MISSING
    walker = _Walker(list_types)
    walker.walk((), old, new, list_types.cursor())
    return Comparison(Set(walker.added), Set(walker.modified), Set(walker.removed))


class _Walker:
    def __init__(self, list_types: ListTypes):
        self.types = list_types
        self.added: list = []
        self.modified: list = []
        self.removed: list = []

    def walk(self, path: tuple, lhs: Any, rhs: Any, cursor: tuple) -> None:
        # A null facing a container is that container's type, empty (upstream's
        # deduceAtom): only a value on both sides decides what is walked.
        sample = rhs if rhs is not MISSING and rhs is not None else lhs
        other = lhs if sample is rhs else rhs
        if isinstance(sample, dict) and _container_or_null(other, dict) \
                and not self.types.atomic_at(cursor):
            left, right = _contents(lhs, dict), _contents(rhs, dict)
            if not left and not right:
                self.leaf(path, lhs, rhs)
                return
            for key in {**left, **right}:
                self.walk(path + (PathElement.field(key),), left.get(key, MISSING),
                          right.get(key, MISSING), self.types.descend(cursor, key))
        elif isinstance(sample, list) and _container_or_null(other, list) \
                and self.types.list_type_at(cursor).kind != "atomic":
            left, right = _contents(lhs, list), _contents(rhs, list)
            if not left and not right:
                self.leaf(path, lhs, rhs)
                return
            self.items(path, left, right, cursor)
        else:
            self.leaf(path, lhs, rhs)
            return
        # A granular container appearing or disappearing is itself a change.
        if lhs is MISSING:
            self.added.append(path)
        elif rhs is MISSING:
            self.removed.append(path)

    def leaf(self, path: tuple, lhs: Any, rhs: Any) -> None:
        if lhs is MISSING:
            self.added.append(path)
        elif rhs is MISSING:
            self.removed.append(path)
        elif not go_equal(lhs, rhs):
            self.modified.append(path)

    def items(self, path: tuple, left: list, right: list, cursor: tuple) -> None:
        list_type = self.types.list_type_at(cursor)
        item_cursor = self.types.descend(cursor, ITEM)
        # Repeated items are ignored after the first, as upstream does.
        lhs_items: dict[PathElement, Any] = {}
        for item in left:
            lhs_items.setdefault(_item_element(list_type, item, path), item)
        rhs_items: dict[PathElement, Any] = {}
        for item in right:
            rhs_items.setdefault(_item_element(list_type, item, path), item)
        for pe, item in rhs_items.items():
            self.walk(path + (pe,), lhs_items.get(pe, MISSING), item, item_cursor)
        for pe, item in lhs_items.items():
            if pe not in rhs_items:
                self.walk(path + (pe,), item, MISSING, item_cursor)


def _container_or_null(value: Any, kind: type) -> bool:
    return value is MISSING or value is None or isinstance(value, kind)


def _contents(value: Any, kind: type):
    return value if isinstance(value, kind) else kind()


class ItemError(ValueError):
    """A list item that cannot be named under its list's type; the message is upstream's."""


def list_item_element(list_type, item: Any) -> PathElement:
    """The path element naming ``item`` in a set or map list (``listItemToPathElement``):
    ``v:`` its value, or ``k:`` its key fields (a missing one takes its default)."""
    if list_type.kind == "set":
        if isinstance(item, dict):
            raise ItemError("associative list without keys has an element that's a map type")
        if isinstance(item, list):
            raise ItemError("not supported: associative list with lists as elements")
        if item is None:
            raise ItemError("associative list without keys has an element that's an "
                            "explicit null")
        return PathElement.value(item)
    if item is None:
        raise ItemError("associative list with keys may not have a null element")
    if not isinstance(item, dict):
        raise ItemError("associative list with keys may not have non-map elements")
    fields = {}
    for name in list_type.keys:
        if name in item:
            fields[name] = item[name]
        elif name in list_type.key_defaults:
            fields[name] = list_type.key_defaults[name]
        else:
            raise ItemError(f"associative list with keys has an element that omits key "
                            f"field {go_quote(name)} (and doesn't have default value)")
    return PathElement.key(fields)


def _item_element(list_type, item: Any, path: tuple) -> PathElement:
    try:
        return list_item_element(list_type, item)
    except ItemError as err:
        raise CompareError(f"{''.join(str(pe) for pe in path)}: {err}") from None
