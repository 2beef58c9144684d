"""Unknown fields of an object, found with the kinds' schemas (``fieldValidation``).

Upstream decodes strictly (sigs.k8s.io/json's ``UnmarshalStrict``) and reports each field
the Go types lack as ``unknown field "spec.ports[0].foo"``: the path of the field's parent
in the document, struct fields and map keys alike joined with ``.``, list indexes as
``[i]`` (``appendStrictFieldStackKey``/``appendStrictFieldStackIndex``), the unknown key
last. Here the protobuf schema tables, which list every field of each built-in kind, say
which fields exist. Values of free-form types (RawExtension, FieldsV1, …) are not
inspected.

A plugin's kind that the tables lack but that has OpenAPI definitions (its Go types'
schemas: the CRD and APIService kinds) is checked against them instead (``SchemaFields``):
an object schema with ``properties`` is a struct, ``additionalProperties`` a map, ``items``
a list; a schema with none of them (JSON, FieldsV1, the ``JSONSchemaPropsOr*`` wrappers,
all decoded by custom unmarshallers upstream) is free-form.
"""

from __future__ import annotations

from .protobuf import default_codec
from .protobuf_compile import MAP, MESSAGE, REPEATED

#: Fields every object has in JSON that its message does not list (Go's inline TypeMeta).
_TYPE_META = ("kind", "apiVersion")


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
        where = f"{path}.{key}" if path else key
        field = fields.get(key)
        if field is None:
            found.append(where)
            doomed.append((value, key))
            continue
        if field.kind != MESSAGE or child is None:
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


class SchemaFields:
    """The fields of one kind as its OpenAPI v3 definitions describe them.

    ``definitions`` maps definition names to v3 schemas (references
    ``#/components/schemas/<name>``) and must hold every definition ``model`` reaches.
    """

    def __init__(self, definitions: dict, model: str):
        self._definitions = definitions
        self._model = model

    def unknown_fields(self, obj: dict, prune: bool = False) -> list[str]:
        """The paths of ``obj``'s unknown fields, in document order (``spec.versions[0].x``;
        a map's key as a field, as sigs.k8s.io/json's strict errors name it); with
        ``prune``, the unknown fields are also removed from ``obj``."""
        found: list[str] = []
        doomed: list[tuple[dict, str]] = []
        self._walk(obj, self._definitions[self._model], "", found, doomed, top=True)
        if prune:
            for container, key in doomed:
                container.pop(key, None)
        return found

    def _resolve(self, schema: dict) -> dict:
        # A reference with siblings is wrapped in allOf (builder3's wrapRefs).
        while True:
            ref = schema.get("$ref")
            if ref is None:
                all_of = schema.get("allOf")
                if not (isinstance(all_of, list) and len(all_of) == 1):
                    return schema
                ref = all_of[0].get("$ref")
                if ref is None:
                    return schema
            schema = self._definitions[ref[len(_V3_PREFIX):]]

    def _walk(self, value, schema: dict, path: str, found: list, doomed: list,
              top: bool = False) -> None:
        schema = self._resolve(schema)
        if schema.get("x-kubernetes-preserve-unknown-fields"):
            return
        if isinstance(value, list):
            items = schema.get("items")
            if isinstance(items, dict):
                for index, item in enumerate(value):
                    self._walk(item, items, f"{path}[{index}]", found, doomed)
            return
        if not isinstance(value, dict):
            return
        properties = schema.get("properties")
        values = schema.get("additionalProperties")
        if properties is None and not isinstance(values, dict):
            return  # free-form
        for key, child in value.items():
            if top and key in _TYPE_META:
                continue
            where = f"{path}.{key}" if path else key
            if properties is None:
                self._walk(child, values, where, found, doomed)
            elif key in properties:
                self._walk(child, properties[key], where, found, doomed)
            else:
                found.append(where)
                doomed.append((value, key))
