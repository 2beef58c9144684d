"""Unknown fields of a built-in object, found with the kinds' schemas (``fieldValidation``).

Upstream decodes strictly and reports each field the Go types lack as ``unknown field
"spec.foo"``; here the protobuf schema tables, which list every field of each built-in
kind, say which fields exist. Values of free-form types (RawExtension, FieldsV1, …) are
not inspected.
"""

from __future__ import annotations

from .protobuf import default_codec
from .protobuf_compile import MAP, MESSAGE, REPEATED

#: Fields every object has in JSON that its message does not list (Go's inline TypeMeta).
_TYPE_META = ("kind", "apiVersion")


def unknown_fields(obj: dict, api_version: str, kind: str, prune: bool = False) -> list[str] | None:
    """The paths of ``obj``'s unknown fields, in document order; ``None`` for an unknown kind.

    With ``prune``, the unknown fields are also removed from ``obj``, as decoding into
    upstream's Go types drops them.
    """
    codec = default_codec()
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
                _walk(item, field.message, f"{where}[{name}]", found, doomed)
        else:
            _walk(child, field.message, where, found, doomed)


def _fields_by_name(message) -> dict:
    names = getattr(message, "_by_json_name", None)
    if names is None:
        names = {f.name: f for f in message.fields.values()}
        message._by_json_name = names
    return names
