"""Walks over typed objects that server-side apply needs: field sets, merge, removal.

Each mirrors one walker of ``sigs.k8s.io/structured-merge-diff/v4/typed``, on JSON values
and a ``schema.Node``:

* ``to_field_set`` (``ToFieldSet``): the paths an applied config sets — its scalars, its
  atomic lists and maps, its list items, and its map entries; a struct's declared fields
  are never members by themselves, so ``data: {x: "1"}`` owns ``data.x`` but not ``data``;
* ``merge`` (``Merge``): the config merged into the live object — scalars and atomic
  values are replaced, maps merge by key, set and map lists merge by item in an order
  that keeps the config's items in the config's order;
* ``remove_items`` (``RemoveItems``): the value without the paths of a set;
* ``to_object``: the merged value as Go's decoding of it into the kind's types would
  hold it (a null map value is the element's zero value, a null field is unset).

Values are never modified; results share unchanged subtrees with their inputs.
"""

from __future__ import annotations

from typing import Any

from .fieldpath import PathElement, Set
from .schema import MAP, SCALAR, Node
from .typed import ItemError, list_item_element

#: An absent value (``None`` is JSON's null, which is present).
MISSING = object()

_ZERO = {"string": "", "numeric": 0, "boolean": False}


def _items(value: Any, node: Node) -> tuple[list, dict]:
    """A set or map list's path elements in order, and the first item of each (upstream
    keeps the first of duplicated items of a live object)."""
    list_type = node.list_type
    order, items = [], {}
    for item in value if isinstance(value, list) else ():
        try:
            pe = list_item_element(list_type, item)
        except ItemError:
            continue  # the live object was stored without it being checked: skip it
        if pe not in items:
            items[pe] = item
            order.append(pe)
    return order, items


# -- ToFieldSet -------------------------------------------------------------------------------

def to_field_set(value: Any, node: Node) -> Set:
    """The set of paths ``value`` sets (``TypedValue.ToFieldSet``)."""
    paths: list = []
    _collect(value, node, (), paths)
    return Set(paths)


def _collect(value: Any, node: Node, path: tuple, paths: list) -> None:
    kind = node.kind_of(value)
    if kind == "scalar":
        paths.append(path)
    elif kind == "list":
        if node.list_type.kind == "atomic":
            paths.append(path)
            return
        order, items = _items(value, node)
        item_node = node.item()
        for pe in order:
            _collect(items[pe], item_node, path + (pe,), paths)
            paths.append(path + (pe,))
    else:
        if node.atomic:
            paths.append(path)
            return
        if not isinstance(value, dict):
            return
        for key, item in value.items():
            child = node.child(key)
            if child is None:
                continue
            _collect(item, child, path + (PathElement.field(key),), paths)
            if not node.is_field(key):
                paths.append(path + (PathElement.field(key),))


# -- Merge ------------------------------------------------------------------------------------

def merge(lhs: Any, rhs: Any, node: Node) -> Any:
    """``rhs`` (the applied config) merged into ``lhs`` (the live object); either may be
    ``MISSING``. Returns ``MISSING`` when neither side has anything."""
    if rhs is MISSING:
        return lhs
    if lhs is MISSING:
        return rhs
    kind = node.kind_of(rhs if rhs is not MISSING and rhs is not None else lhs)
    if kind == "scalar":
        return rhs if rhs is not MISSING else lhs
    if kind == "list":
        left = lhs if isinstance(lhs, list) else None
        right = rhs if isinstance(rhs, list) else None
        if node.list_type.kind == "atomic" or (not left and not right):
            return rhs if rhs is not MISSING else lhs
        return _merge_items(left or [], right or [], node) or MISSING
    left = lhs if isinstance(lhs, dict) else None
    right = rhs if isinstance(rhs, dict) else None
    if node.atomic or (not left and not right):
        return rhs if rhs is not MISSING else lhs
    left, right = left or {}, right or {}
    out = {}
    for key in [*left, *(key for key in right if key not in left)]:
        child = node.child(key)
        if child is None:
            continue
        merged = merge(left.get(key, MISSING), right.get(key, MISSING), child)
        if merged is not MISSING:
            out[key] = merged
    return out or MISSING


def _merge_items(lhs: list, rhs: list, node: Node) -> list:
    # visitListItems: live items keep their places, the config's items keep the config's
    # order, and an item of both is placed where the config next expects a shared item.
    item_node = node.item()
    rhs_order, rhs_items = _items(rhs, node)
    lhs_order, lhs_items = _items(lhs, node)
    shared = [pe for pe in rhs_order if pe in lhs_items]
    next_shared = shared.pop(0) if shared else None
    out, done = [], set()

    def take(pe):
        merged = merge(lhs_items.get(pe, MISSING), rhs_items.get(pe, MISSING), item_node)
        done.add(pe)
        if merged is not MISSING:
            out.append(merged)

    li = ri = 0
    while li < len(lhs_order) or ri < len(rhs_order):
        if li < len(lhs_order) and ri < len(rhs_order):
            pe = lhs_order[li]
            if pe == rhs_order[ri]:
                take(pe)
                li, ri = li + 1, ri + 1
                next_shared = shared.pop(0) if shared else None
                continue
            if pe in rhs_items and next_shared is not None and next_shared != pe:
                li += 1  # a shared item, but not the one the config wants next
                continue
        if li < len(lhs_order):
            pe = lhs_order[li]
            if pe not in rhs_items:
                take(pe)
                li += 1
                continue
            if pe in done:
                li += 1  # merged already, where the config put it
                continue
        if ri < len(rhs_order):
            pe = rhs_order[ri]
            take(pe)
            ri += 1
            if next_shared is not None and next_shared == pe:
                next_shared = shared.pop(0) if shared else None
    return out


# -- RemoveItems ------------------------------------------------------------------------------

def remove_items(value: Any, fields: Set, node: Node) -> Any:
    """``value`` without the members of ``fields`` and everything beneath them. A map or
    list emptied this way becomes null, as upstream's ``RemoveItems`` leaves it."""
    kind = node.kind_of(value)
    if kind == "scalar":
        return value
    if kind == "list":
        if not isinstance(value, list) or not value or node.list_type.kind == "atomic":
            return None
        item_node = node.item()
        out = []
        for item in value:
            try:
                pe = list_item_element(node.list_type, item)
            except ItemError:
                out.append(item)
                continue
            if fields.has((pe,)):
                continue
            below = fields.with_prefix(pe)
            out.append(remove_items(item, below, item_node) if below else item)
        return out or None
    if not isinstance(value, dict) or not value or node.atomic:
        return None
    out = {}
    for key, item in value.items():
        pe = PathElement.field(key)
        if fields.has((pe,)):
            continue
        below = fields.with_prefix(pe)
        child = node.child(key)
        out[key] = remove_items(item, below, child) if below and child else item
    return out or None


# -- back to the kind's types -----------------------------------------------------------------

def to_object(value: Any, node: Node) -> Any:
    """``value`` as decoding it into the kind's Go types would leave it: a null map value
    becomes its element's zero value (``""`` for a string), any other null is unset."""
    kind = node.kind_of(value)
    if kind == "list" and isinstance(value, list):
        item_node = node.item()
        return [to_object(item, item_node) for item in value]
    if kind != "map" or not isinstance(value, dict):
        return value
    out = {}
    for key, item in value.items():
        child = node.child(key)
        if child is None:
            continue
        if item is None:
            shape = child.shape
            if (node.shape.kind == MAP and shape.kind == SCALAR
                    and shape.scalar in _ZERO):
                out[key] = _ZERO[shape.scalar]
            continue
        out[key] = to_object(item, child)
    return out

