"""The typed schema server-side apply walks objects with, and the check of applied configs.

Upstream's field manager converts every object to a ``typed.TypedValue`` of the kind's
structured-merge-diff schema (``sigs.k8s.io/structured-merge-diff/v4/schema``). What apply
needs of it is the shape of each node, and how lists and maps are tracked:

* ``Shape``: a struct (declared fields; an undeclared one is refused, or, for kinds
  without a schema, a deduced map entry), a map (one element type), a list, a scalar
  (``string``, ``numeric``, ``boolean`` or ``untyped``) or ``any`` (deduced from the value:
  a separable map, an atomic list or a scalar). Built-in kinds take theirs from the
  protobuf tables (``runtime.protobuf_schemas``), which list every field of every kind;
* ``ListTypes`` (``listtypes``): list types and atomic maps by path pattern.

``Node`` walks both at once. ``validate`` is ``TypedValue.Validate``: what an applied
config must satisfy before anything is merged, worded as upstream words it.
"""

from __future__ import annotations

import functools
from typing import Any

from ..apimachinery.field_errors import go_syntax, go_value
from ..runtime.gotypes import go_type_name
from .listtypes import ITEM, ListType, ListTypes, for_kind
from .typed import ItemError, list_item_element

STRUCT, MAP, LIST, SCALAR, ANY = "struct", "map", "list", "scalar", "any"


class Shape:
    """The type of one node of an object (a subset of upstream's ``schema.Atom``).

    ``kind`` is ``struct``, ``map``, ``list``, ``scalar`` or ``any``; a scalar's ``scalar``
    is ``string``, ``numeric``, ``boolean`` or ``untyped``. A struct's fields and a map's
    or list's element are resolved on first use, so building a kind's shape is cheap.
    """

    __slots__ = ("kind", "scalar", "_fields", "_resolve", "_element", "_extra")

    def __init__(self, kind: str, scalar: str = "untyped", *, fields=None, element=None,
                 extra: Shape | None = None):
        self.kind = kind
        self.scalar = scalar
        # a dict of Shapes, or a function returning one (resolved lazily)
        self._fields = fields
        self._element = element
        #: what a struct's undeclared keys are: None refuses them
        self._extra = extra

    def fields(self) -> dict[str, Shape]:
        if callable(self._fields):
            self._fields = self._fields()
        return self._fields or {}

    def field(self, name: str) -> Shape | None:
        """A struct's declared field, else ``None``."""
        return self.fields().get(name) if self.kind == STRUCT else None

    def element(self) -> Shape | None:
        """A map's value or a list's item; a struct's undeclared keys (``None``: refused)."""
        if self.kind == STRUCT:
            return self._extra
        if self.kind == ANY:
            return ANY_SHAPE
        if callable(self._element):
            self._element = self._element()
        return self._element

    def __repr__(self) -> str:
        return f"Shape({self.kind}{'/' + self.scalar if self.kind == SCALAR else ''})"


ANY_SHAPE = Shape(ANY)
STRING = Shape(SCALAR, "string")
_SCALARS = {"string": STRING, "numeric": Shape(SCALAR, "numeric"),
            "boolean": Shape(SCALAR, "boolean"), "untyped": Shape(SCALAR, "untyped")}


def _protobuf_shape(field) -> Shape:
    """The shape of one protobuf field's value (``runtime.protobuf_compile.Field``)."""
    from ..runtime import protobuf_compile as pc

    def one() -> Shape:
        if field.kind == pc.MESSAGE:
            return _message_shape(field.message)
        if field.kind == pc.EXTRA_VALUE:
            return Shape(LIST, element=STRING)
        if field.kind == pc.BOOL:
            return _SCALARS["boolean"]
        if field.kind in (pc.INT32, pc.INT64):
            return _SCALARS["numeric"]
        if field.kind in (pc.STRING, pc.BYTES, pc.TIME, pc.MICROTIME, pc.DURATION):
            return STRING
        if field.kind in (pc.QUANTITY, pc.INT_OR_STRING):
            # int-or-string: upstream's schema says "untyped", which accepts any value
            return _SCALARS["untyped"]
        return ANY_SHAPE  # RawExtension, FieldsV1, embedded objects: free-form

    if field.label == pc.REPEATED:
        return Shape(LIST, element=one)
    if field.label == pc.MAP:
        return Shape(MAP, element=one)
    return one()


def _message_shape(message) -> Shape:
    return Shape(STRUCT, fields=lambda: {f.name: _protobuf_shape(f) for f in message.ordered})


_TYPE_META = {"apiVersion": STRING, "kind": STRING}


@functools.lru_cache(maxsize=None)
def shape_for_kind(api_version: str, kind: str) -> Shape:
    """The shape of a whole object of ``kind``. Kinds without a schema (custom resources)
    get ObjectMeta for ``metadata`` and deduced values for everything else, as upstream
    treats unstructured objects without a schema."""
    from ..runtime.protobuf import default_codec

    codec = default_codec()
    if codec.known(api_version, kind):
        message = codec._lookup(api_version, kind)
        return Shape(STRUCT, fields=lambda: {**_TYPE_META, **_message_shape(message).fields()})
    object_meta = _message_shape(codec._messages["meta/v1.ObjectMeta"])
    return Shape(STRUCT, fields={**_TYPE_META, "metadata": object_meta}, extra=ANY_SHAPE)


def shape_for_schema(schema: dict | None) -> Shape:
    """The shape of a whole object whose kind a structural OpenAPI v3 schema describes (a
    custom resource), as upstream's typed schema from the CRD's OpenAPI: declared
    properties only (an unknown one is refused) unless ``x-kubernetes-preserve-unknown-
    fields``, ``additionalProperties`` maps, ``x-kubernetes-int-or-string`` untyped, and
    ``apiVersion``, ``kind`` and ObjectMeta at the root and in embedded resources."""
    return _schema_shape(schema if isinstance(schema, dict) else {}, True)


def _object_meta_shape() -> Shape:
    from ..runtime.protobuf import default_codec

    return _message_shape(default_codec()._messages["meta/v1.ObjectMeta"])


def _schema_shape(s: dict, resource: bool = False) -> Shape:
    if s.get("x-kubernetes-int-or-string"):
        return _SCALARS["untyped"]
    preserve = s.get("x-kubernetes-preserve-unknown-fields") is True
    resource = resource or s.get("x-kubernetes-embedded-resource") is True
    kind = s.get("type")
    if kind == "array":
        items = s.get("items")
        return Shape(LIST, element=(lambda: _schema_shape(items)) if isinstance(items, dict)
                     else ANY_SHAPE)
    if kind in ("string", "integer", "number", "boolean"):
        return _SCALARS[{"string": "string", "boolean": "boolean"}.get(kind, "numeric")]
    if kind != "object" and not resource:
        return ANY_SHAPE  # no type: only x-kubernetes-preserve-unknown-fields allows it
    additional = s.get("additionalProperties")
    properties = s.get("properties")
    if isinstance(additional, dict) and not properties and not resource:
        return Shape(MAP, element=lambda: _schema_shape(additional))
    if not isinstance(properties, dict) and preserve and not resource:
        return Shape(MAP, element=ANY_SHAPE)

    def fields() -> dict:
        out = {name: _schema_shape(sub) for name, sub in (properties or {}).items()
               if isinstance(sub, dict)}
        if resource:
            out.update(_TYPE_META)
            out["metadata"] = _object_meta_shape()
        return out

    return Shape(STRUCT, fields=fields, extra=ANY_SHAPE if preserve else None)


class Node:
    """A position in an object, for both its ``Shape`` and its ``ListTypes`` patterns."""

    __slots__ = ("shape", "cursor", "types")

    def __init__(self, shape: Shape, cursor: tuple, types: ListTypes):
        self.shape = shape
        self.cursor = cursor
        self.types = types

    @classmethod
    def root(cls, api_version: str, kind: str, list_types: ListTypes | None = None,
             shape: Shape | None = None) -> Node:
        """The root of an object of ``kind``; ``list_types`` default to the kind's table,
        ``shape`` to the kind's built-in one."""
        types = list_types or for_kind(api_version, kind)
        return cls(shape or shape_for_kind(api_version, kind), types.cursor(), types)

    def child(self, key: str) -> Node | None:
        """The node of a map entry or struct field; ``None`` for an undeclared field."""
        shape = self.shape.field(key) or self.shape.element()
        if shape is None:
            return None
        return Node(shape, self.types.descend(self.cursor, key), self.types)

    def item(self) -> Node:
        return Node(self.shape.element() or ANY_SHAPE, self.types.descend(self.cursor, ITEM),
                    self.types)

    def is_field(self, key: str) -> bool:
        """True for a struct's declared field (upstream never tracks those by themselves)."""
        return self.shape.field(key) is not None

    def kind_of(self, value: Any) -> str:
        """``map``, ``list`` or ``scalar``: how ``value`` is walked here (``deduceAtom``)."""
        kind = self.shape.kind
        if kind in (STRUCT, MAP):
            return "map"
        if kind == LIST:
            return "list"
        if kind == SCALAR:
            return "scalar"
        if isinstance(value, list):
            return "list"
        if isinstance(value, dict) or value is None:
            return "map"
        return "scalar"

    @property
    def atomic(self) -> bool:
        """A map or struct owned as one leaf (``x-kubernetes-map-type: atomic``)."""
        return self.types.atomic_at(self.cursor)

    @property
    def list_type(self) -> ListType:
        return self.types.list_type_at(self.cursor)


# -- validating applied configurations ----------------------------------------------------


def validate(value: Any, node: Node) -> list[str]:
    """The errors of ``TypedValue.Validate`` for an applied config, each ``path: message``
    (``.data.x: expected string, got &value.valueUnstructured{Value:1}``)."""
    errors: list[tuple[str, str]] = []
    _validate(value, node, "", errors)
    return [f"{path}: {message}" if path else message for path, message in errors]


def _validate(value: Any, node: Node, path: str, errors: list) -> None:
    kind = node.kind_of(value)
    if kind == "scalar":
        message = _scalar_error(node.shape, value)
        if message:
            errors.append((path, message))
    elif kind == "list":
        if value is None:
            return
        if not isinstance(value, list):
            errors.append((path, f"expected list, got &{{{go_value(value)}}}"))
            return
        _validate_items(value, node, path, errors)
    elif value is not None:
        if not isinstance(value, dict):
            errors.append((path, f"expected map, got &{{{go_value(value)}}}"))
            return
        for key, item in value.items():
            child = node.child(key)
            where = f"{path}.{key}"
            if child is None:
                # upstream stops at the first undeclared field of a map
                errors.append((where, "field not declared in schema"))
                return
            _validate(item, child, where, errors)


def _validate_items(value: list, node: Node, path: str, errors: list) -> None:
    list_type = node.list_type
    item_node = node.item()
    seen = set()
    for index, item in enumerate(value):
        if list_type.kind == "atomic":
            where = f"{path}[{index}]"
        else:
            try:
                pe = list_item_element(list_type, item)
            except ItemError as err:
                errors.append((path, f"element {index}: {err}"))
                return  # without a key nothing deeper can be named
            if pe in seen:
                errors.append((path, f"duplicate entries for key {pe}"))
            seen.add(pe)
            where = f"{path}{pe}"
        _validate(item, item_node, where, errors)


def _scalar_error(shape: Shape, value: Any) -> str:
    scalar = shape.scalar if shape.kind == SCALAR else "untyped"
    if value is None or scalar == "untyped":
        return ""
    if scalar == "numeric" and (isinstance(value, bool) or
                                not isinstance(value, (int, float))):
        return f"expected numeric (int or float), got {go_type_name(value)}"
    if scalar == "string" and not isinstance(value, str):
        return f"expected string, got &value.valueUnstructured{{Value:{go_syntax(value)}}}"
    if scalar == "boolean" and not isinstance(value, bool):
        return f"expected boolean, got &{{{go_value(value)}}}"
    return ""


def gvk_string(api_version: Any, kind: Any) -> str:
    """``schema.GroupVersionKind.String()`` of an unstructured object's type fields."""
    api_version = api_version if isinstance(api_version, str) else ""
    kind = kind if isinstance(kind, str) else ""
    parts = api_version.split("/") if api_version else []
    if len(parts) > 2:
        return "/, Kind="  # ParseGroupVersion fails: the empty GroupVersionKind
    group, version = (parts if len(parts) == 2 else ["", parts[0] if parts else ""])
    return f"{group}/{version}, Kind={kind}"
