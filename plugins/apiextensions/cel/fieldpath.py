"""A rule's ``fieldPath``: upstream's ``ValidFieldPath`` (schema/cel/validation.go).

A JSON path of field (``.spec.foo``) and map-key (``['x']``) accessors that must exist in the
schema; upstream turns it into a ``field.Path`` whose string is appended to the node's path.
"""

from __future__ import annotations

import re

from kapiserver.apimachinery.field_errors import FieldPath

_ESCAPE = re.compile(r"\\.")
_SIMPLE = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
           "'": "'", "\\": "\\"}


def _unescape(text: str) -> str:
    def repl(m):
        ch = m.group()[1]
        if ch not in _SIMPLE:
            raise ValueError(f"invalid escape char {m.group()}")
        return _SIMPLE[ch]

    return _ESCAPE.sub(repl, text)


def _tokens(path: str):
    """Split as upstream's scanner: the delimiters '.', '[' and ']' alone, single-quoted
    strings whole, everything else between delimiters."""
    i, n = 0, len(path)
    while i < n:
        if path[i] == "'":
            j = i + 1
            while j < n and not (path[j] == "'" and path[j - 1] != "\\"):
                j += 1
            yield path[i:j + 1]
            i = j + 1
            continue
        if path[i] in ".[]":
            yield path[i]
            i += 1
            continue
        j = i
        while j < n and path[j] not in ".[]":
            j += 1
        yield path[i:j]
        i = j


def valid_field_path(path: str, schema: dict):
    """(the normalised path string, None) or (None, error text)."""
    tokens = list(_tokens(path))
    result: FieldPath | None = None
    node = schema
    i = 0

    def append(name: str, named: bool):
        nonlocal result, node
        if not named:
            result = (result.key(name) if result is not None
                      else FieldPath._node("", name, None))
            node = node.get("additionalProperties") if isinstance(node, dict) else None
        else:
            result = result.child(name) if result is not None else FieldPath(name)
            props = (node or {}).get("properties") or {}
            if name not in props:
                raise ValueError("does not refer to a valid field")
            node = props[name]

    def named_here() -> bool:
        if isinstance(node, dict) and node.get("properties") is not None:
            return True
        if isinstance(node, dict) and isinstance(node.get("additionalProperties"), dict):
            return False
        raise ValueError("does not refer to a valid field")

    try:
        while i < len(tokens):
            tok = tokens[i]
            if tok == "[":
                if i + 1 >= len(tokens):
                    raise ValueError("unexpected end of JSON path")
                tok = tokens[i + 1]
                if len(tok) < 2 or tok[0] != "'" or tok[-1] != "'":
                    raise ValueError(f"expected single quoted string but got {tok}")
                try:
                    key = _unescape(tok[1:-1])
                except ValueError as err:
                    raise ValueError(f"invalid string literal: {err}") from None
                append(key, named_here())
                if i + 2 >= len(tokens):
                    raise ValueError("unexpected end of JSON path")
                if tokens[i + 2] != "]":
                    raise ValueError(f"expected ] but got {tokens[i + 2]}")
                i += 3
            elif tok == ".":
                if i + 1 >= len(tokens):
                    raise ValueError("unexpected end of JSON path")
                append(tokens[i + 1], named_here())
                i += 2
            else:
                raise ValueError(f"expected [ or . but got: {tok}")
    except ValueError as err:
        return None, str(err)
    return (str(result) if result is not None else ""), None
