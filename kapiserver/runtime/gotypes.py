"""The names Go gives the type of a decoded JSON value, for error texts clients compare.

``encoding/json``'s ``UnmarshalTypeError`` names the JSON kind it found (``cannot
unmarshal number into Go struct field ...``); ``fmt``'s ``%T`` names the Go type that
``json.Unmarshal`` into ``interface{}`` produced (``float64``, ``map[string]interface {}``).
Python's ``int`` stands for Go's ``int64``, as the decoders here keep integers apart.
"""

from __future__ import annotations

from typing import Any


def json_kind(value: Any) -> str:
    """The JSON kind of ``value`` as ``UnmarshalTypeError`` words it: ``null``, ``bool``,
    ``number``, ``string``, ``array`` or ``object``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    return "object"


def go_type_name(value: Any) -> str:
    """Go's ``%T`` of ``value`` decoded into ``interface{}``."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "[]interface {}"
    return "map[string]interface {}"
