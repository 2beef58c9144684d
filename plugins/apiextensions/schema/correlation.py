"""Old and new values of an update correlated through a structural schema, for ratcheting.

Mirrors upstream's ``CorrelatedObject`` (``k8s.io/apiserver/pkg/cel/common/equality.go``)
and ``MakeMapList`` (``maplist.go``), shared by the schema validator and the CEL rules as
upstream shares them (``customResourceStrategy.ValidateUpdate`` builds one correlation and
hands it to both): a node is correlatable when its old value can be found through object
properties, ``additionalProperties`` keys and the keys of ``x-kubernetes-list-type: map``
items; never through set or atomic lists by index. :meth:`Correlated.equal` is upstream's
``CachedDeepEqual``: computed on demand, at most once per node, and reusing the children's
results.

Nodes are built lazily (a child exists once asked for), so an update that validates cleanly
creates none.
"""

from __future__ import annotations

from kapiserver.apimachinery.field_errors import go_quote

from .validation import _FLOAT, _INT, _STRING, _BOOL, _deep_equal, _kind

__all__ = ["Correlated", "MapList", "make_map_list"]


class MapList:
    """The old items of a map-type list looked up by the keys of a new item (upstream's
    ``mapListImpl``): items are keyed lazily, the first item with a key wins."""

    __slots__ = ("_keys", "_items", "_keyed", "_next")

    def __init__(self, keys: tuple, items: list):
        self._keys = keys
        self._items = items
        self._keyed: dict = {}
        self._next = 0

    def get(self, item):
        """The old item with ``item``'s keys, or None (also when ``item`` has no key)."""
        key = _composite_key(self._keys, item)
        if key is None:
            return None
        keyed = self._keyed
        found = keyed.get(key)
        if found is not None:
            return found
        items = self._items
        while self._next < len(items):
            candidate = items[self._next]
            self._next += 1
            candidate_key = _composite_key(self._keys, candidate)
            if candidate_key is None:
                continue
            if candidate_key not in keyed:
                keyed[candidate_key] = candidate
            if candidate_key == key:
                return candidate
        return None


class _EmptyMapList:
    """``emptyMapList``: what a list that is not a keyed map-type list correlates to."""

    __slots__ = ()

    def get(self, item):
        return None


_EMPTY = _EmptyMapList()


def make_map_list(schema: dict, items) -> MapList | _EmptyMapList:
    """``MakeMapList``: ``items`` by their ``x-kubernetes-list-map-keys``; empty unless the
    schema is an array of ``x-kubernetes-list-type: map`` with keys."""
    keys = schema.get("x-kubernetes-list-map-keys")
    if (schema.get("type") != "array" or schema.get("x-kubernetes-list-type") != "map"
            or not keys or not items or not isinstance(items, list)):
        return _EMPTY
    return MapList(tuple(keys), items)


def _composite_key(keys: tuple, item):
    """The key of one item (``keyStrategy.CompositeKeyFor``), or None when it has none: an
    item that is not an object, or lacks a key, or has a key that is not a scalar."""
    if not isinstance(item, dict):
        return None
    if len(keys) == 1:
        name = keys[0]
        if name not in item:
            return None
        value = item[name]
        kind = _kind(value)
        if kind == _STRING or kind == _BOOL or kind == _INT:
            # Go compares the interface values: 1, 1.0, true and "1" are different keys.
            return (kind, value)
        if kind == _FLOAT:
            return (kind, float(value))
        return None
    # multiKeyStrategy: the values printed with %t, %f, %d and %q, each after a NUL byte.
    parts = []
    for name in keys:
        if name not in item:
            return None
        value = item[name]
        kind = _kind(value)
        if kind == _BOOL:
            parts.append("true" if value else "false")
        elif kind == _FLOAT:
            parts.append("%f" % float(value))
        elif kind == _INT:
            parts.append(str(value))
        elif kind == _STRING:
            parts.append(go_quote(value))
        else:
            return None
    return "\x00" + "\x00".join(parts)


class Correlated:
    """One node of an update: its new ``value``, the ``old`` value correlated with it, and
    the ``schema`` that says how to correlate the nodes below (upstream's
    ``CorrelatedObject``). ``None`` stands for upstream's nil node: not correlatable."""

    __slots__ = ("value", "old", "schema", "_equal", "_map_list", "_children")

    def __init__(self, value, old, schema: dict | None):
        self.value = value
        self.old = old
        self.schema = schema
        self._equal: bool | None = None
        self._map_list = None
        self._children: dict | None = None

    def key(self, field: str) -> Correlated | None:
        """The child at property or map key ``field``: None unless both values are objects
        holding ``field`` and the schema has a property or ``additionalProperties`` schema
        for it (``CorrelatedObject.Key``)."""
        children = self._children
        if children is not None:
            found = children.get(field)
            if found is not None:
                return found
        schema = self.schema
        new, old = self.value, self.old
        if schema is None or not isinstance(new, dict) or not isinstance(old, dict):
            return None
        if field not in new or field not in old:
            return None
        sub = (schema.get("properties") or {}).get(field)
        if sub is None:
            sub = schema.get("additionalProperties")
            if not isinstance(sub, dict):
                return None
        child = Correlated(new[field], old[field], sub)
        if children is None:
            self._children = children = {}
        children[field] = child
        return child

    def index(self, i: int) -> Correlated | None:
        """The child at index ``i`` of the new list, correlated with the old item of the same
        keys in a map-type list; None for any other list (``CorrelatedObject.Index``)."""
        children = self._children
        if children is not None:
            found = children.get(i)
            if found is not None:
                return found
        schema = self.schema
        new = self.value
        if schema is None or not isinstance(new, list) or len(new) <= i:
            return None
        old_item = self._old_item(i)
        if old_item is None:
            return None
        items = schema.get("items")
        if not isinstance(items, dict):
            return None
        child = Correlated(new[i], old_item, items)
        if children is None:
            self._children = children = {}
        children[i] = child
        return child

    def _old_item(self, i: int):
        """``correlateOldValueForChildAtNewIndex``: only map-type lists correlate (sets and
        atomic lists are compared whole)."""
        if not isinstance(self.old, list) or self.schema.get("x-kubernetes-list-type") != "map":
            return None
        map_list = self._map_list
        if map_list is None:
            map_list = self._map_list = make_map_list(self.schema, self.old)
        return map_list.get(self.value[i])

    def equal(self) -> bool:
        """Whether the new value equals the old one (``CachedDeepEqual``), remembered.

        Objects are equal when every key correlates to an equal child (so a key the schema
        does not describe makes them different), map-type lists when every item correlates
        to an equal old item (whatever the order), other lists and scalars as
        ``reflect.DeepEqual`` compares them."""
        result = self._equal
        if result is None:
            result = self._equal = self._compare()
        return result

    def _compare(self) -> bool:
        new, old = self.value, self.old
        if new is None or old is None:
            return new is None and old is None
        new_list, old_list = isinstance(new, list), isinstance(old, list)
        new_map, old_map = isinstance(new, dict), isinstance(old, dict)
        if new_list != old_list or new_map != old_map:
            return False
        if new_list:
            if len(new) != len(old):
                return False
            for i in range(len(new)):
                child = self.index(i)
                if child is None:
                    # A list whose items do not correlate is compared as a whole; a map-type
                    # list with an item the old list lacks differs.
                    return self._map_list is None and _deep_equal(old, new)
                if not child.equal():
                    return False
            return True
        if new_map:
            if len(new) != len(old):
                return False
            for field in new:
                child = self.key(field)
                if child is None or not child.equal():
                    return False
            return True
        return _deep_equal(old, new)


def ratchets(correlated: Correlated | None, parent: Correlated | None = None) -> bool:
    """Whether errors at a node are ratcheted: the node, or when it does not correlate its
    nearest correlatable ancestor ``parent``, is unchanged (upstream's
    ``shouldRatchetError``)."""
    if correlated is not None:
        return correlated.equal()
    return parent is not None and parent.equal()
