"""Sets of field paths and their FieldsV1 form, as ``sigs.k8s.io/structured-merge-diff/fieldpath``.

A path is a tuple of ``PathElement``: ``f:`` a field of a struct or key of a map, ``k:`` an
item of a list keyed by some of its fields, ``v:`` an item of a set of scalars, ``i:`` an
index (never produced here: upstream indexes only atomic lists, whose items it never
tracks). A ``Set`` is a trie: each node holds the elements that are members and the
children that lead to deeper members. Elements sort as upstream sorts them — by kind
(``f`` < ``k`` < ``v`` < ``i``), then by value — and FieldsV1 is written in that order,
with ``"."`` first in a node that is itself a member. Sets are values: the algebra returns
new sets and never changes its operands.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any, Iterable, Iterator

from .gojson import go_json

_KIND_RANK = {"f": 0, "k": 1, "v": 2, "i": 3}
_INDEX = re.compile(r"[+-]?[0-9]+\Z")


def canonical(value: Any) -> Any:
    """A decoded JSON value with integral floats made ints (upstream compares them equal)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2 ** 63:
        return int(value)
    if isinstance(value, list):
        return [canonical(item) for item in value]
    if isinstance(value, dict):
        return {key: canonical(item) for key, item in value.items()}
    return value


def value_order(value: Any) -> tuple:
    """A sort key giving upstream's ``value.Compare`` total order.

    Numbers (ints and floats compared numerically) < strings < booleans < lists < maps <
    null; lists compare item by item, a prefix first.
    """
    if value is None:
        return (5,)
    if isinstance(value, bool):
        return (2, value)
    if isinstance(value, (int, float)):
        return (0, value)
    if isinstance(value, str):
        return (1, value)
    if isinstance(value, (list, tuple)):
        return (3, tuple(value_order(item) for item in value))
    if isinstance(value, dict):
        return (4, tuple((key, value_order(value[key])) for key in sorted(value)))
    raise TypeError(f"not a JSON value: {value!r}")


class PathElement:
    """One step of a path. Build with ``field``, ``key``, ``value`` or ``index``."""

    __slots__ = ("kind", "content", "_order", "_hash")

    def __init__(self, kind: str, content: Any):
        if kind not in _KIND_RANK:
            raise ValueError(f"unknown path element kind {kind!r}")
        self.kind = kind
        #: the field name, the sorted ``((name, value), ...)`` key, the value, or the index
        self.content = content
        if kind == "k":
            inner = tuple((name, value_order(item)) for name, item in content)
        elif kind == "v":
            inner = value_order(content)
        else:
            inner = content
        self._order = (_KIND_RANK[kind], inner)
        self._hash = hash(self._order)

    @classmethod
    def field(cls, name: str) -> PathElement:
        """A struct field or map key: ``f:name``."""
        if name.__class__ is str:
            return _field_element(name)  # immutable: one per name will do
        return cls("f", name)

    @classmethod
    def key(cls, fields: dict[str, Any]) -> PathElement:
        """An item of a map-keyed list, by its key fields: ``k:{"name":"x"}``."""
        if not fields:
            raise ValueError("a key path element needs at least one key field")
        return cls("k", tuple((name, canonical(fields[name])) for name in sorted(fields)))

    @classmethod
    def value(cls, value: Any) -> PathElement:
        """An item of a set-typed list: ``v:"kubernetes"``."""
        return cls("v", canonical(value))

    @classmethod
    def index(cls, index: int) -> PathElement:
        """A list index: ``i:0``."""
        return cls("i", int(index))

    # -- FieldsV1 text --

    def serialize(self) -> str:
        """The FieldsV1 key of this element (``SerializePathElement``)."""
        if self.kind == "f":
            return "f:" + self.content
        if self.kind == "k":
            return "k:{" + ",".join(f"{go_json(name)}:{go_json(value)}"
                                    for name, value in self.content) + "}"
        if self.kind == "v":
            return "v:" + go_json(self.content)
        return f"i:{self.content}"

    @classmethod
    def deserialize(cls, text: str) -> PathElement | None:
        """Parse a FieldsV1 key; ``None`` for a kind this version does not know (skipped,
        as upstream skips them). Raises ``ValueError`` when malformed."""
        if len(text) < 2:
            raise ValueError(f"key must be 2 characters long: {text!r}")
        if text[1] != ":":
            raise ValueError(f"missing colon: {text}")
        kind, rest = text[0], text[2:]
        if kind == "f":
            return cls.field(rest)
        if kind == "v":
            return cls.value(json.loads(rest))
        if kind == "k":
            fields = json.loads(rest)
            if not isinstance(fields, dict):
                raise ValueError(f"key path element is not an object: {text}")
            return cls.key(fields) if fields else cls("k", ())
        if kind == "i":
            if not _INDEX.match(rest):
                raise ValueError(f"invalid index: {text}")
            return cls.index(int(rest))
        return None

    # -- comparison --

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PathElement):
            return NotImplemented
        return self._order == other._order

    def __lt__(self, other: PathElement) -> bool:
        return self._order < other._order

    def __hash__(self) -> int:
        return self._hash

    def __str__(self) -> str:
        """Upstream's human-readable form: ``.name``, ``[k=v]``, ``[=v]``, ``[0]``."""
        if self.kind == "f":
            return "." + self.content
        if self.kind == "k":
            return "[" + ",".join(f"{name}={go_json(value)}"
                                  for name, value in self.content) + "]"
        if self.kind == "v":
            return f"[={go_json(self.content)}]"
        return f"[{self.content}]"

    def __repr__(self) -> str:
        return f"PathElement({self.serialize()!r})"


Path = tuple  # a tuple of PathElement


@functools.lru_cache(maxsize=4096)
def _field_element(name: str) -> PathElement:
    """The ``f:`` element of ``name``, shared: field names repeat in every object of a
    kind (bounded: map keys such as label names are names too)."""
    return PathElement("f", name)


def make_path(*parts: Any) -> Path:
    """A path from parts: ``str`` is a field, ``int`` an index, ``dict`` a key, or a
    ``PathElement`` as is (``make_path("metadata", "labels", "app")``)."""
    out = []
    for part in parts:
        if isinstance(part, PathElement):
            out.append(part)
        elif isinstance(part, str):
            out.append(PathElement.field(part))
        elif isinstance(part, bool):
            raise TypeError("use PathElement.value() for set items")
        elif isinstance(part, int):
            out.append(PathElement.index(part))
        elif isinstance(part, dict):
            out.append(PathElement.key(part))
        else:
            raise TypeError(f"cannot make a path element of {part!r}")
    return tuple(out)


def path_string(path: Path) -> str:
    """Upstream's ``Path.String()``: ``.metadata.labels.app``."""
    return "".join(str(pe) for pe in path)


class Set:
    """An immutable set of field paths (``fieldpath.Set``): ``Set([path, ...])``."""

    __slots__ = ("_members", "_children")

    def __init__(self, paths: Iterable[Path] = ()):
        self._members: set[PathElement] = set()
        self._children: dict[PathElement, Set] = {}
        for path in paths:
            self._insert(path)

    # -- building --

    def _insert(self, path: Path) -> None:
        # Only while building: sets returned by the algebra share nodes with their
        # operands. Parents are not added; the empty path (the whole object) is never
        # tracked, as upstream.
        if not path:
            return
        node = self
        for pe in path[:-1]:
            child = node._children.get(pe)
            if child is None:
                child = node._children[pe] = Set()
            node = child
        node._members.add(path[-1])

    @classmethod
    def from_object(cls, obj: Any, list_types=None) -> Set:
        """Every path creating ``obj`` changes, containers included (before upstream
        strips ``metadata.name`` and the other paths it never tracks).

        ``list_types`` (a ``ListTypes``) says how lists are keyed and which maps are
        atomic; by default every list is atomic. The object is normalized first as
        ``ListTypes.normalize`` says, and compared with the kind's zero value.
        """
        from .typed import compare  # typed builds on this module, so import it late

        return compare(None, obj, list_types).added

    @classmethod
    def from_fields_v1(cls, fields: Any) -> Set:
        """Parse the FieldsV1 JSON form (a dict); raises ``ValueError`` when malformed."""
        if not isinstance(fields, dict):
            raise ValueError(f"FieldsV1 must be a JSON object, got {type(fields).__name__}")
        children, _ = cls._read(fields)
        return children if children is not None else Set()

    @classmethod
    def _read(cls, fields: dict) -> tuple[Set | None, bool]:
        # upstream's readIterV1: (children, whether this node is itself a member)
        children: Set | None = None
        is_member = False
        for text, content in fields.items():
            if text == ".":
                is_member = True
                continue
            pe = PathElement.deserialize(text)
            if pe is None:
                continue
            if not isinstance(content, dict):
                raise ValueError(f"FieldsV1 value of {text!r} must be an object")
            grandchildren, child_is_member = cls._read(content)
            if children is None:
                children = Set()
            if child_is_member:
                children._members.add(pe)
            if grandchildren is not None:
                existing = children._children.get(pe)
                children._children[pe] = (grandchildren if existing is None
                                          else existing.union(grandchildren))
        if children is None:
            is_member = True
        return children, is_member

    # -- FieldsV1 --

    def to_fields_v1(self) -> dict:
        """The FieldsV1 JSON form, keys in upstream's order (``Set.ToJSON``)."""
        return self._emit(include_self=False)

    def _emit(self, include_self: bool) -> dict:
        out: dict = {}
        if include_self and (self._members or self._children):
            out["."] = {}
        for pe in sorted(self._members | self._children.keys()):
            child = self._children.get(pe)
            out[pe.serialize()] = ({} if child is None
                                   else child._emit(include_self=pe in self._members))
        return out

    # -- algebra --

    def union(self, other: Set) -> Set:
        """Paths in either set."""
        out = Set()
        out._members = self._members | other._members
        out._children = dict(self._children)
        for pe, child in other._children.items():
            mine = out._children.get(pe)
            out._children[pe] = child if mine is None else mine.union(child)
        return out

    def intersection(self, other: Set) -> Set:
        """Paths in both sets."""
        out = Set()
        out._members = self._members & other._members
        for pe, child in self._children.items():
            theirs = other._children.get(pe)
            if theirs is not None:
                both = child.intersection(theirs)
                if not both.empty():
                    out._children[pe] = both
        return out

    def difference(self, other: Set) -> Set:
        """Paths in this set and not in ``other`` (exactly upstream's ``Difference``: a
        member of ``other`` does not remove the paths beneath it)."""
        return self._difference(other, recursive=False)

    def recursive_difference(self, other: Set) -> Set:
        """Like ``difference``, and a member of ``other`` also removes every path beneath
        it (upstream's ``RecursiveDifference``, used for reset fields)."""
        return self._difference(other, recursive=True)

    def _difference(self, other: Set, recursive: bool) -> Set:
        out = Set()
        out._members = self._members - other._members
        for pe, child in self._children.items():
            if recursive and pe in other._members:
                continue
            theirs = other._children.get(pe)
            if theirs is None:
                out._children[pe] = child
            else:
                rest = child._difference(theirs, recursive)
                if not rest.empty():
                    out._children[pe] = rest
        return out

    def __or__(self, other: Set) -> Set:
        return self.union(other)

    def __and__(self, other: Set) -> Set:
        return self.intersection(other)

    def __sub__(self, other: Set) -> Set:
        return self.difference(other)

    # -- queries --

    def empty(self) -> bool:
        """True when no path is a member."""
        return not self._members and all(child.empty() for child in self._children.values())

    def __bool__(self) -> bool:
        return not self.empty()

    def has(self, path: Path) -> bool:
        """True when ``path`` itself is a member."""
        if not path:
            return False
        node = self
        for pe in path[:-1]:
            node = node._children.get(pe)
            if node is None:
                return False
        return path[-1] in node._members

    def __contains__(self, path: Path) -> bool:
        return self.has(path)

    def __len__(self) -> int:
        return len(self._members) + sum(len(child) for child in self._children.values())

    def __iter__(self) -> Iterator[Path]:
        """Every member path, in upstream's ``Iterate`` order (a node's members, then its
        children's paths)."""
        yield from self._iterate(())

    def _iterate(self, prefix: Path) -> Iterator[Path]:
        for pe in sorted(self._members):
            yield prefix + (pe,)
        for pe in sorted(self._children):
            yield from self._children[pe]._iterate(prefix + (pe,))

    def leaves(self) -> Set:
        """The members that have no member beneath them (upstream's ``Leaves``)."""
        out = Set()
        out._members = {pe for pe in self._members if pe not in self._children}
        for pe, child in self._children.items():
            out._children[pe] = child.leaves()
        return out

    def leaf_paths(self) -> Iterator[Path]:
        """Iterate the paths of ``leaves()``."""
        return iter(self.leaves())

    def with_prefix(self, pe: PathElement) -> Set:
        """The paths under ``pe``, without it (``WithPrefix``)."""
        child = self._children.get(pe)
        return child if child is not None else Set()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Set):
            return NotImplemented
        return list(self) == list(other)

    def __repr__(self) -> str:
        return "Set(" + ", ".join(repr(path_string(path)) for path in self) + ")"
