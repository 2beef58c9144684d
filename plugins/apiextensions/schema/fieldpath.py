"""JSON paths into a structural schema: upstream's ``cel.ValidFieldPath``.

Used for a rule's ``fieldPath`` (``x-kubernetes-validations``, appended to the node's path
in the rule's error) and for ``selectableFields`` (array notation not allowed there). A
path is field (``.spec.foo``) and map-key (``['x']``) accessors; each must exist in the
schema: a named step needs ``properties`` (present, even empty), a key step
``additionalProperties``.
"""

from __future__ import annotations

import re

from kapiserver.apimachinery.field_errors import FieldPath

__all__ = ["valid_field_path"]

_ESCAPE = re.compile(r"\\.")
#: ``unescapeSingleQuote``: the escapes a single-quoted key may hold.
_SIMPLE = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
           "'": "'", "\\": "\\"}


def _unescape(text: str) -> str:
    def repl(match):
        char = match.group()[1]
        if char not in _SIMPLE:
            raise ValueError(f"invalid escape char {match.group()}")
        return _SIMPLE[char]

    return _ESCAPE.sub(repl, text)


def _tokens(path: str):
    """The scanner of ``ValidFieldPath``: ``.``, ``[`` and ``]`` alone, a single-quoted
    string whole, anything else up to the next delimiter."""
    i, n = 0, len(path)
    while i < n:
        if path[i] == "'":
            j = i + 1
            while j < n and not (path[j] == "'" and path[j - 1] != "\\"):
                j += 1
            yield path[i:j + 1]
            i = j + 1
        elif path[i] in ".[]":
            yield path[i]
            i += 1
        else:
            j = i
            while j < n and path[j] not in ".[]":
                j += 1
            yield path[i:j]
            i = j


class _Walk:
    """The path built so far and the schema it reached."""

    def __init__(self, schema):
        self.path: FieldPath | None = None
        self.schema = schema

    def named(self) -> bool:
        schema = self.schema if isinstance(self.schema, dict) else {}
        if schema.get("properties") is not None:
            return True
        if schema.get("additionalProperties") is not None:
            return False
        raise ValueError("does not refer to a valid field")

    def step(self, name: str, named: bool) -> None:
        if named:
            self.path = self.path.child(name) if self.path is not None else FieldPath(name)
            properties = self.schema.get("properties") or {}
            if name not in properties:
                raise ValueError("does not refer to a valid field")
            self.schema = properties[name]
        else:
            self.path = (self.path.key(name) if self.path is not None
                         else FieldPath._node("", name, None))
            extra = self.schema.get("additionalProperties")
            self.schema = extra if isinstance(extra, dict) else None


def valid_field_path(json_path: str, schema: dict, allow_array_notation: bool = True):
    """``(path, schema found, "")`` when ``json_path`` names a field of ``schema``, else
    ``(None, None, error)`` with upstream's error text."""
    tokens = _tokens(json_path)
    walk = _Walk(schema)
    try:
        for token in tokens:
            if token == "[":
                if not allow_array_notation:
                    raise ValueError("array notation is not allowed")
                token = next(tokens, None)
                if token is None:
                    raise ValueError("unexpected end of JSON path")
                if len(token) < 2 or token[0] != "'" or token[-1] != "'":
                    raise ValueError(f"expected single quoted string but got {token}")
                try:
                    key = _unescape(token[1:-1])
                except ValueError as err:
                    raise ValueError(f"invalid string literal: {err}") from None
                walk.step(key, walk.named())
                token = next(tokens, None)
                if token is None:
                    raise ValueError("unexpected end of JSON path")
                if token != "]":
                    raise ValueError(f"expected ] but got {token}")
            elif token == ".":
                token = next(tokens, None)
                if token is None:
                    raise ValueError("unexpected end of JSON path")
                walk.step(token, walk.named())
            else:
                raise ValueError(f"expected [ or . but got: {token}")
    except ValueError as err:
        return None, None, str(err)
    return walk.path, walk.schema, ""
