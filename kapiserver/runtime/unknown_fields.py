"""Unknown fields of an object, found with the kinds' schemas (``fieldValidation``).

Upstream decodes strictly (sigs.k8s.io/json's ``UnmarshalStrict``) and reports each field
the Go types lack as ``unknown field "spec.ports[0].foo"``: the path of the field's parent
in the document, struct fields and map keys alike joined with ``.``, list indexes as
``[i]`` (``appendStrictFieldStackKey``/``appendStrictFieldStackIndex``), the unknown key
last. An unknown field's own value is not inspected, and at most 100 are reported; all of
them are dropped, as decoding into the Go types drops them.

Built-in kinds are checked with the protobuf schema tables, which list every field of each
kind (``unknown_fields``); the values of types that decode themselves (RawExtension,
FieldsV1, …) are not inspected, and the schemas in apiextensions' ``JSONSchemaPropsOr*``
lose their unknown fields without a report, as their lenient ``UnmarshalJSON`` drops them.

A plugin's kind that the tables lack but that has OpenAPI definitions (its Go types'
schemas: wardle's) is checked against them instead
(``SchemaFields``). What each schema is decoded into, as openapi-gen describes Go types:

* ``properties``: a struct; ``type: object`` with neither ``properties`` nor
  ``additionalProperties``: a struct without fields, every key of which is unknown
  (``CustomResourceSubresourceStatus``);
* ``type: object`` with ``additionalProperties``: a map (of anything, when that is ``true``);
  ``items``: a list;
* no ``type`` (a custom ``OpenAPISchemaType``: ``JSON``, ``IntOrString``, …),
  ``x-kubernetes-preserve-unknown-fields`` or ``x-kubernetes-embedded-resource``: free-form;
* a definition whose Go type has its own ``UnmarshalJSON`` (``unmarshalers``; FieldsV1 and
  RawExtension always, whose schemas look like empty structs') is kept as sent, or decoded
  into another definition without strictness: unknown fields inside are dropped and never
  reported, as a nested ``json.Unmarshal`` does (the ``JSONSchemaPropsOr*`` wrappers).
"""

from __future__ import annotations

from .protobuf import default_codec
from .protobuf_compile import MAP, MESSAGE, REPEATED, SCHEMA_WRAPPERS

#: Fields every object has in JSON that its message does not list (Go's inline TypeMeta).
_TYPE_META = ("kind", "apiVersion")
#: sigs.k8s.io/json keeps no more strict errors than this (``saveStrictError``).
MAX_REPORTED = 100


def unknown_fields(obj: dict, api_version: str, kind: str, prune: bool = False,
                   codec=None) -> list[str] | None:
    """The paths of ``obj``'s unknown fields, in document order; ``None`` for a kind
    ``codec`` (the built-in one by default) does not know.

    With ``prune``, the unknown fields are also removed from ``obj``, as decoding into
    upstream's Go types drops them.
    """
    codec = default_codec() if codec is None else codec
    if not codec.known(api_version, kind):
        return None
    found: list[str] = []
    doomed: list[tuple[dict, str]] = []
    _walk(obj, codec._lookup(api_version, kind), "", found, doomed, top=True)
    if prune:
        for container, key in doomed:
            container.pop(key, None)
    return found


def _walk(value, message, path: str, found: list, doomed: list, top: bool = False) -> None:
    if not isinstance(value, dict):
        return
    fields = _fields_by_name(message)
    for key, child in value.items():
        if top and key in _TYPE_META:
            continue
        field = fields.get(key)
        if field is None:
            if len(found) < MAX_REPORTED:
                found.append(f"{path}.{key}" if path else key)
            doomed.append((value, key))
            continue
        if child is None:
            continue
        where = f"{path}.{key}" if path else key
        if field.kind in SCHEMA_WRAPPERS:
            # apiextensions' JSONSchemaPropsOr* decode their schemas with a lenient
            # json.Unmarshal: what it drops is dropped without a word.
            wrappers = child.values() if field.label == MAP and isinstance(child, dict) \
                else (child,)
            for wrapper in wrappers:
                for item in wrapper if isinstance(wrapper, list) else (wrapper,):
                    _walk(item, field.message, where, [], doomed)
            continue
        if field.kind != MESSAGE:
            continue
        if field.label == REPEATED and isinstance(child, list):
            for index, item in enumerate(child):
                _walk(item, field.message, f"{where}[{index}]", found, doomed)
        elif field.label == MAP and isinstance(child, dict):
            for name, item in child.items():
                _walk(item, field.message, f"{where}.{name}", found, doomed)
        else:
            _walk(child, field.message, where, found, doomed)


def _fields_by_name(message) -> dict:
    names = getattr(message, "_by_json_name", None)
    if names is None:
        names = {f.name: f for f in message.fields.values()}
        message._by_json_name = names
    return names


_V3_PREFIX = "#/components/schemas/"
#: The shipped definitions whose Go types keep their JSON as sent (``UnmarshalJSON``), though
#: their schemas (``type: object``, nothing else) are those of empty structs.
RAW_JSON_DEFINITIONS = ("io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
                        "io.k8s.apimachinery.pkg.runtime.RawExtension")

# What a schema is decoded into.
_FREE, _STRUCT, _MAP, _LIST, _LENIENT = range(5)


class _Node:
    """A schema compiled for the walk: ``fields`` of a struct (name → node), ``child`` the
    node of a map's values, a list's items or what a lenient unmarshaler decodes into."""

    __slots__ = ("kind", "fields", "child")

    def __init__(self, kind: int = _FREE):
        self.kind, self.fields, self.child = kind, None, None


class SchemaFields:
    """The fields of one kind as its OpenAPI v3 definitions describe them.

    ``definitions`` maps definition names to v3 schemas (references
    ``#/components/schemas/<name>``) and must hold every definition ``model`` reaches.
    ``unmarshalers`` names the definitions whose Go types decode themselves, each mapped to
    the definition it is decoded into without strictness (a value that is a list holds
    several), or to ``None`` when the JSON is kept as sent; ``RAW_JSON_DEFINITIONS`` are
    always kept as sent.

    The schemas are compiled when the object is made; a walk only reads them.
    """

    def __init__(self, definitions: dict, model: str, unmarshalers: dict | None = None):
        lenient = {name: None for name in RAW_JSON_DEFINITIONS}
        lenient.update(unmarshalers or {})
        for name, target in lenient.items():
            if target is not None and target not in definitions:
                raise ValueError(f"unmarshaler of {name!r}: OpenAPI definition {target!r} "
                                 "is not among the kind's definitions")
        self._definitions = definitions
        self._nodes = {name: _Node() for name in definitions}
        for name, node in self._nodes.items():
            if name in lenient:
                target = lenient[name]
                if target is not None:
                    node.kind, node.child = _LENIENT, self._nodes[target]
            else:
                self._fill(node, definitions[name])
        self._root = self._nodes[model]

    def unknown_fields(self, obj: dict, prune: bool = False) -> list[str]:
        """The paths of ``obj``'s unknown fields, in document order (``spec.versions[0].x``,
        ``spec.versions[0].schema.openAPIV3Schema.properties.spec.x``); with ``prune``, the
        unknown fields are also removed from ``obj``, and so are those a lenient unmarshaler
        drops without a word."""
        found: list[str] = []
        doomed: list[tuple[dict, str]] = []
        _walk_node(obj, self._root, "", found, doomed, True, top=True)
        if prune:
            for container, key in doomed:
                container.pop(key, None)
        return found

    # -- compiling -----------------------------------------------------------------------

    def _compile(self, schema: dict) -> _Node:
        name = self._referenced(schema)
        if name is not None:
            return self._nodes[name]
        node = _Node()
        self._fill(node, schema)
        return node

    def _referenced(self, schema: dict) -> str | None:
        # A reference with siblings is wrapped in allOf (builder3's wrapRefs).
        ref = schema.get("$ref")
        if ref is None:
            all_of = schema.get("allOf")
            if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict):
                ref = all_of[0].get("$ref")
        if not isinstance(ref, str):
            return None
        name = ref[len(_V3_PREFIX):]
        if name not in self._nodes:
            raise KeyError(f"OpenAPI definition {name!r} is referred to but not defined")
        return name

    def _fill(self, node: _Node, schema: dict) -> None:
        if (schema.get("x-kubernetes-preserve-unknown-fields")
                or schema.get("x-kubernetes-embedded-resource")):
            return
        properties = schema.get("properties")
        values = schema.get("additionalProperties")
        items = schema.get("items")
        if isinstance(properties, dict):
            node.kind = _STRUCT
            node.fields = {key: self._compile(sub) for key, sub in properties.items()}
        elif isinstance(values, dict):
            node.kind, node.child = _MAP, self._compile(values)
        elif schema.get("type") == "object" and (values is None or values is False):
            node.kind, node.fields = _STRUCT, {}  # a Go struct without fields
        elif isinstance(items, dict):
            node.kind, node.child = _LIST, self._compile(items)
        # Otherwise a scalar, a map of anything or a custom type: free-form.


def _walk_node(value, node: _Node, path: str, found: list, doomed: list, report: bool,
               top: bool = False) -> None:
    kind = node.kind
    if kind == _STRUCT:
        if not isinstance(value, dict):
            return
        fields = node.fields
        for key, child in value.items():
            sub = fields.get(key)
            if sub is None:
                if top and key in _TYPE_META:
                    continue
                if report and len(found) < MAX_REPORTED:
                    found.append(f"{path}.{key}" if path else key)
                doomed.append((value, key))
            elif sub.kind != _FREE and child is not None:
                _walk_node(child, sub, f"{path}.{key}" if path else key, found, doomed,
                           report)
    elif kind == _LIST:
        child = node.child
        if isinstance(value, list) and child.kind != _FREE:
            for index, item in enumerate(value):
                _walk_node(item, child, f"{path}[{index}]", found, doomed, report)
    elif kind == _MAP:
        child = node.child
        if isinstance(value, dict) and child.kind != _FREE:
            for key, item in value.items():
                _walk_node(item, child, f"{path}.{key}" if path else key, found, doomed,
                           report)
    elif kind == _LENIENT:
        # A nested non-strict json.Unmarshal: whatever it drops is never reported.
        if isinstance(value, dict):
            _walk_node(value, node.child, path, found, doomed, False)
        elif isinstance(value, list):
            for item in value:
                _walk_node(item, node.child, path, found, doomed, False)
