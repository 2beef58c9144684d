"""Go's ``%#v`` of typed Go values: structs, typed maps and slices, nil pointers.

Upstream's field errors print a bad value that is a Go struct with ``%#v`` (after
dereferencing a pointer): ``v1.LabelSelector{MatchLabels:map[string]string{"app":"web"},
MatchExpressions:[]v1.LabelSelectorRequirement(nil)}``. Clients show these texts, so a
kind that reports such a value builds it here, field by field in the Go struct's order,
and passes the text to ``FieldError`` as a ``GoValue``. Decoded JSON held in an
``interface{}`` is ``field_errors.go_syntax``'s business instead.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from .field_errors import GoValue, go_quote

#: What ``%#v`` prints for a non-nil pointer nested in a struct: an address, which differs
#: on every run upstream; one plausible address stands for all.
POINTER_ADDRESS = "0xc000010000"


def go_string_map(value: Mapping | None) -> str:
    """A ``map[string]string``: keys sorted (fmt sorts them), ``(nil)`` for a nil map."""
    if value is None:
        return "map[string]string(nil)"
    items = ", ".join(f"{go_quote(str(key))}:{go_quote(str(value[key]))}"
                      for key in sorted(value, key=str))
    return "map[string]string{" + items + "}"


def go_slice(element_type: str, items: Iterable[str] | None) -> str:
    """A slice of already rendered ``items``: ``[]T{a, b}``, ``[]T(nil)`` for nil."""
    if items is None:
        return f"[]{element_type}(nil)"
    return f"[]{element_type}{{" + ", ".join(items) + "}"


def go_string_slice(values: Iterable[str] | None) -> str:
    """A ``[]string``: ``[]string{"a", "b"}``, ``[]string(nil)`` for nil."""
    return go_slice("string", None if values is None else (go_quote(str(v)) for v in values))


def go_struct(type_name: str, fields: Iterable[tuple[str, str]]) -> str:
    """A struct of already rendered fields, in order: ``pkg.T{A:1, B:"x"}``."""
    return type_name + "{" + ", ".join(f"{name}:{text}" for name, text in fields) + "}"


def go_pointer(type_name: str, present: bool) -> str:
    """A pointer field: ``(*pkg.T)(nil)``, or ``(*pkg.T)(0xc...)`` when it points."""
    return f"(*{type_name})({POINTER_ADDRESS if present else 'nil'})"


def go_int(value) -> str:
    """An integer field (``int32``, ``int64``, named integer types) as ``%#v`` prints it."""
    return str(value if isinstance(value, int) and not isinstance(value, bool) else 0)


def go_str(value) -> str:
    """A string field (or a named string type) as ``%#v`` prints it."""
    return go_quote(value if isinstance(value, str) else "")


def go_bool(value) -> str:
    return "true" if value is True else "false"


def go_value(text: str) -> GoValue:
    """``text`` as a ``FieldError`` bad value printed verbatim."""
    return GoValue(text)
