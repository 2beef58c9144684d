"""JSON paths into a structural schema (``cel.ValidFieldPath``), for selectable fields and
the ``fieldPath`` of ``x-kubernetes-validations`` rules."""

from __future__ import annotations

__all__ = ["valid_field_path"]


def _tokens(text: str):
    """The scanner of ``ValidFieldPath``: ``.``, ``[`` and ``]`` alone, a single-quoted
    string whole, anything else up to the next delimiter."""
    i, n = 0, len(text)
    while i < n:
        if text[i] == "'":
            j = i + 1
            while j < n and not (text[j] == "'" and text[j - 1] != "\\"):
                j += 1
            yield text[i:j + 1]
            i = j + 1
        elif text[i] in ".[]":
            yield text[i]
            i += 1
        else:
            j = i
            while j < n and text[j] not in ".[]":
                j += 1
            yield text[i:j]
            i = j


def _unescape(quoted: str) -> str:
    return quoted.replace("\\'", "'").replace("\\\\", "\\")


class _Path:
    """Enough of a ``field.Path`` to print it and name its root."""

    def __init__(self):
        self.text, self.root = "", None

    def child(self, name: str) -> None:
        if self.root is None:
            self.root, self.text = name, name
        else:
            self.text += "." + name

    def key(self, name: str) -> None:
        if self.root is None:
            self.root = ""
        self.text += f"[{name}]"


def _step(schema, name: str, path: _Path):
    """Descend by ``name``: a property when the schema has any, else a map key."""
    if not isinstance(schema, dict):
        return None, "does not refer to a valid field"
    properties = schema.get("properties")
    if isinstance(properties, dict) and properties:
        path.child(name)
        if name not in properties:
            return None, "does not refer to a valid field"
        return properties[name], ""
    if schema.get("additionalProperties") is not None:
        path.key(name)
        additional = schema["additionalProperties"]
        return (additional if isinstance(additional, dict) else None), ""
    return None, "does not refer to a valid field"


def valid_field_path(json_path: str, schema: dict, allow_array_notation: bool = True):
    """``ValidFieldPath``: ``(path text, root name, schema found, error)``; error is "" when
    ``json_path`` names a field of ``schema``."""
    path = _Path()
    tokens = _tokens(json_path)
    for token in tokens:
        if token == "[":
            if not allow_array_notation:
                return None, None, None, "array notation is not allowed"
            token = next(tokens, None)
            if token is None:
                return None, None, None, "unexpected end of JSON path"
            if len(token) < 2 or token[0] != "'" or token[-1] != "'":
                return None, None, None, f"expected single quoted string but got {token}"
            schema, error = _step(schema, _unescape(token[1:-1]), path)
            if error:
                return None, None, None, error
            token = next(tokens, None)
            if token is None:
                return None, None, None, "unexpected end of JSON path"
            if token != "]":
                return None, None, None, f"expected ] but got {token}"
        elif token == ".":
            token = next(tokens, None)
            if token is None:
                return None, None, None, "unexpected end of JSON path"
            schema, error = _step(schema, token, path)
            if error:
                return None, None, None, error
        else:
            return None, None, None, f"expected [ or . but got: {token}"
    return path.text, path.root, schema, ""
