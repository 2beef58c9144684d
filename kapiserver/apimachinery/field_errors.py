"""Field-level validation errors and the 422 ``Status`` built from them, worded as upstream.

Ports ``k8s.io/apimachinery/pkg/util/validation/field`` (``Path``, ``Error``, ``ErrorList``)
and ``apierrors.NewInvalid`` as they are in Kubernetes 1.32, because clients show these
messages verbatim: ``metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 ...``.

Bad values are printed the way 1.32's ``Error.ErrorBody`` prints the Go value the server
decoded from JSON: strings with ``%q``, int64/float64/bool with ``%v``, a nil value as the
*string* ``"null"`` (quoted), and maps and slices with ``%#v``
(``map[string]interface {}{"a":1}``). Values that were typed Go structs upstream
(a ``metav1.Time``, a ``[]string``) are passed pre-rendered as ``GoValue``.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Any, Iterable


# -- Go formatting -------------------------------------------------------------------------

def go_quote(value: str) -> str:
    """Quote ``value`` exactly as Go's ``strconv.Quote`` (and so ``%q``) does."""
    out = ['"']
    for ch in value:
        code = ord(ch)
        if 0xD800 <= code <= 0xDFFF:
            # Go decodes JSON's lone surrogates to U+FFFD, which is printable.
            out.append("\ufffd")
        elif ch in '"\\':
            out.append("\\" + ch)
        elif ch.isprintable():
            # Go's IsPrint: letters, marks, numbers, punctuation, symbols and ASCII space,
            # which is what Python's isprintable() accepts.
            out.append(ch)
        elif ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
               "\t": "\\t", "\v": "\\v"}
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def go_float(value: float) -> str:
    """Format a float64 as Go's ``%v`` does (``strconv.FormatFloat(v, 'g', -1, 64)``)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0"
    # repr() gives the shortest round-tripping digits, as Go's shortest mode does.
    mantissa, _, exponent = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    point = len(whole) + int(exponent or 0)
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    exp = point - 1
    # %e when the exponent is < -4 or >= the precision, which is 6 in shortest mode.
    if exp < -4 or exp >= 6:
        text = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{text}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"


def go_value(value: Any) -> str:
    """A decoded JSON value as Go's ``%v`` prints an ``interface{}``: ``<nil>``,
    ``map[k:v ...]`` with sorted keys, ``[a b]``, floats as ``go_float``."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, list):
        return "[" + " ".join(go_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{key}:{go_value(value[key])}"
                                 for key in sorted(value)) + "]"
    return str(value)


def go_int(value: int) -> str:
    """An int64 as ``%v`` prints it; JSON integers beyond int64 decode to float64 upstream."""
    if _INT64_MIN <= value <= _INT64_MAX:
        return str(value)
    return go_float(float(value))


def go_syntax(value: Any) -> str:
    """Render a decoded JSON value held in an ``interface{}`` as Go's ``%#v`` does."""
    if isinstance(value, GoValue):
        return value.text
    if value is None:
        return "interface {}(nil)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return go_int(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, dict):
        # fmt prints map keys sorted; byte order of UTF-8 is code-point order.
        items = ", ".join(f"{go_quote(str(k))}:{go_syntax(value[k])}"
                          for k in sorted(value, key=str))
        return "map[string]interface {}{" + items + "}"
    if isinstance(value, (list, tuple)):
        return "[]interface {}{" + ", ".join(go_syntax(v) for v in value) + "}"
    return str(value)


def go_string_slice(values: Iterable[str]) -> str:
    """A ``[]string`` as ``%#v`` prints it: ``[]string{"a", "b"}``."""
    return "[]string{" + ", ".join(go_quote(v) for v in values) + "}"


@dataclass(frozen=True)
class GoValue:
    """A bad value already rendered as upstream prints it (a ``String()`` or ``%#v``).

    For values that were typed Go values upstream rather than decoded JSON: a
    ``metav1.Time`` (``2024-01-01 00:00:00 +0000 UTC``), a ``[]string``, a struct.
    """

    text: str


class _Omit:
    def __repr__(self) -> str:
        return "OMIT"


#: upstream's ``omitValue``: the error body names no value (``TooMany`` with actual < 0).
OMIT = _Omit()


def format_value(value: Any) -> str:
    """Render a bad value as 1.32's ``Error.ErrorBody`` does: as ``%#v``, except nil."""
    if value is None:
        # ErrorBody replaces a nil value by the string "null", which %q then quotes.
        return go_quote("null")
    return go_syntax(value)


# -- paths ---------------------------------------------------------------------------------

class FieldPath:
    """upstream's ``field.Path``: ``FieldPath("metadata", "labels")``, ``.child()``,
    ``.index(i)``, ``.key(k)``; ``str()`` gives ``metadata.labels[app]``."""

    __slots__ = ("name", "subscript", "parent")

    def __init__(self, name: str, *more: str):
        parent = None
        names = (name, *more)
        for each in names[:-1]:
            parent = FieldPath._node(each, "", parent)
        self.name, self.subscript, self.parent = names[-1], "", parent

    @classmethod
    def _node(cls, name: str, subscript: str, parent: FieldPath | None) -> FieldPath:
        node = cls.__new__(cls)
        node.name, node.subscript, node.parent = name, subscript, parent
        return node

    def root(self) -> FieldPath:
        """The first element of the path."""
        node = self
        while node.parent is not None:
            node = node.parent
        return node

    def child(self, name: str, *more: str) -> FieldPath:
        """The path of a field of this one (``Path.Child``)."""
        node = self
        for each in (name, *more):
            node = FieldPath._node(each, "", node)
        return node

    def index(self, index: int) -> FieldPath:
        """This path subscripted by a list index: ``items[0]``."""
        return FieldPath._node("", str(index), self)

    def key(self, key: str) -> FieldPath:
        """This path subscripted by a map key: ``data[k]``."""
        return FieldPath._node("", key, self)

    def _elements(self) -> list[FieldPath]:
        elements, node = [], self
        while node is not None:
            elements.append(node)
            node = node.parent
        return elements[::-1]

    def __str__(self) -> str:
        out = []
        for node in self._elements():
            if node.parent is not None and node.name:
                out.append(".")
            # A nameless element is a subscript, even at the root: NewPath("") is "[]".
            out.append(node.name if node.name else f"[{node.subscript}]")
        return "".join(out)

    def __repr__(self) -> str:
        return f"FieldPath({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FieldPath):
            return NotImplemented
        return ([(n.name, n.subscript) for n in self._elements()]
                == [(n.name, n.subscript) for n in other._elements()])

    def __hash__(self) -> int:
        return hash(tuple((n.name, n.subscript) for n in self._elements()))


def _field_string(path: FieldPath | str | None) -> str:
    if path is None:
        return "<nil>"  # a nil *Path prints as <nil>
    return str(path)


# -- errors --------------------------------------------------------------------------------

class ErrorType(enum.StrEnum):
    """upstream's ``field.ErrorType``; the values are the ``StatusCause`` reasons."""

    NOT_FOUND = "FieldValueNotFound"
    REQUIRED = "FieldValueRequired"
    DUPLICATE = "FieldValueDuplicate"
    INVALID = "FieldValueInvalid"
    NOT_SUPPORTED = "FieldValueNotSupported"
    FORBIDDEN = "FieldValueForbidden"
    TOO_LONG = "FieldValueTooLong"
    TOO_MANY = "FieldValueTooMany"
    INTERNAL = "InternalError"
    TYPE_INVALID = "FieldValueTypeInvalid"

    @property
    def text(self) -> str:
        """The canonical message (``ErrorType.String()``): ``Invalid value``."""
        return _TYPE_TEXT[self]


_TYPE_TEXT = {
    ErrorType.NOT_FOUND: "Not found",
    ErrorType.REQUIRED: "Required value",
    ErrorType.DUPLICATE: "Duplicate value",
    ErrorType.INVALID: "Invalid value",
    ErrorType.NOT_SUPPORTED: "Unsupported value",
    ErrorType.FORBIDDEN: "Forbidden",
    ErrorType.TOO_LONG: "Too long",
    ErrorType.TOO_MANY: "Too many",
    ErrorType.INTERNAL: "Internal error",
    ErrorType.TYPE_INVALID: "Invalid value",
}
# These types never show their bad value (ErrorBody's first case).
_VALUELESS = {ErrorType.REQUIRED, ErrorType.FORBIDDEN, ErrorType.TOO_LONG, ErrorType.INTERNAL}


@dataclass
class FieldError:
    """upstream's ``field.Error``: ``type``, ``field`` (a path string), ``bad_value``,
    ``detail``. Build them with the constructors (``FieldError.invalid(...)``)."""

    type: ErrorType
    field: str
    bad_value: Any
    detail: str

    def __post_init__(self):
        self.type = ErrorType(self.type)
        if not isinstance(self.field, str):
            self.field = _field_string(self.field)

    # -- constructors, as upstream's field.Invalid & co. --

    @classmethod
    def invalid(cls, path: FieldPath | None, value: Any, detail: str) -> FieldError:
        """A malformed value (``field.Invalid``)."""
        return cls(ErrorType.INVALID, _field_string(path), value, detail)

    @classmethod
    def type_invalid(cls, path: FieldPath | None, value: Any, detail: str) -> FieldError:
        """A value of the wrong schema type (``field.TypeInvalid``)."""
        return cls(ErrorType.TYPE_INVALID, _field_string(path), value, detail)

    @classmethod
    def required(cls, path: FieldPath | None, detail: str = "") -> FieldError:
        """A missing value (``field.Required``)."""
        return cls(ErrorType.REQUIRED, _field_string(path), "", detail)

    @classmethod
    def not_found(cls, path: FieldPath | None, value: Any) -> FieldError:
        """A value that refers to nothing (``field.NotFound``)."""
        return cls(ErrorType.NOT_FOUND, _field_string(path), value, "")

    @classmethod
    def duplicate(cls, path: FieldPath | None, value: Any) -> FieldError:
        """A value that must be unique and is not (``field.Duplicate``)."""
        return cls(ErrorType.DUPLICATE, _field_string(path), value, "")

    @classmethod
    def not_supported(cls, path: FieldPath | None, value: Any,
                      valid_values: Iterable[str] = ()) -> FieldError:
        """A value outside an enumeration (``field.NotSupported``)."""
        quoted = [go_quote(str(v)) for v in valid_values]
        detail = "supported values: " + ", ".join(quoted) if quoted else ""
        return cls(ErrorType.NOT_SUPPORTED, _field_string(path), value, detail)

    @classmethod
    def forbidden(cls, path: FieldPath | None, detail: str) -> FieldError:
        """A well-formed value not allowed here (``field.Forbidden``)."""
        return cls(ErrorType.FORBIDDEN, _field_string(path), "", detail)

    @classmethod
    def too_long(cls, path: FieldPath | None, value: Any, max_length: int) -> FieldError:
        """A value over ``max_length`` bytes (``field.TooLong``); the value is not shown."""
        detail = (f"may not be more than {max_length} bytes" if max_length >= 0
                  else "value is too long")
        return cls(ErrorType.TOO_LONG, _field_string(path), "<value omitted>", detail)

    #: ``field.TooLongMaxLength``, deprecated upstream in favour of ``TooLong``.
    too_long_max_length = too_long

    @classmethod
    def too_many(cls, path: FieldPath | None, actual: int, max_quantity: int) -> FieldError:
        """A list with too many items (``field.TooMany``); ``actual < 0`` omits the count."""
        detail = (f"must have at most {max_quantity} items" if max_quantity >= 0
                  else "has too many items")
        return cls(ErrorType.TOO_MANY, _field_string(path),
                   actual if actual >= 0 else OMIT, detail)

    @classmethod
    def internal(cls, path: FieldPath | None, err: BaseException | str) -> FieldError:
        """A failure not caused by the input (``field.InternalError``)."""
        return cls(ErrorType.INTERNAL, _field_string(path), None, str(err))

    # -- text --

    def error_body(self) -> str:
        """The message without the field (``ErrorBody``): the ``StatusCause`` message."""
        if self.type in _VALUELESS or self.bad_value is OMIT:
            text = self.type.text
        else:
            text = f"{self.type.text}: {format_value(self.bad_value)}"
        if self.detail:
            text += f": {self.detail}"
        return text

    def error_text(self) -> str:
        """The full message (``Error()``): ``metadata.name: Required value: ...``."""
        return f"{self.field}: {self.error_body()}"

    def __str__(self) -> str:
        return self.error_text()

    def to_cause(self) -> dict:
        """The ``StatusCause`` (keys ``reason``, ``message``, ``field``; empty ones omitted)."""
        cause = {"reason": str(self.type), "message": self.error_body(), "field": self.field}
        return {k: v for k, v in cause.items() if v}


def to_aggregate(errors: Iterable[FieldError]) -> list[FieldError]:
    """``ErrorList.ToAggregate``: the errors with repeated messages dropped."""
    seen, kept = set(), []
    for err in errors:
        text = err.error_text()
        if text not in seen:
            seen.add(text)
            kept.append(err)
    return kept


def aggregate_message(errors: Iterable[FieldError]) -> str:
    """The aggregate's ``Error()``: one message bare, several as ``[a, b]``; "" for none."""
    texts = [err.error_text() for err in to_aggregate(errors)]
    if len(texts) == 1:
        return texts[0]
    return "[" + ", ".join(texts) + "]" if texts else ""


def filter_errors(errors: Iterable[FieldError], *types: ErrorType) -> list[FieldError]:
    """``ErrorList.Filter(NewErrorTypeMatcher(t)...)``: drop errors of the given types."""
    return [err for err in to_aggregate(errors) if err.type not in types]


def group_kind(kind: str, group: str) -> str:
    """``schema.GroupKind.String()``: ``Kind`` or ``Kind.group``."""
    return f"{kind}.{group}" if group else kind


def invalid_status(kind: str, group: str, name: str, errors: Iterable[FieldError]) -> dict:
    """The 422 ``Status`` of ``apierrors.NewInvalid(GroupKind{group, kind}, name, errors)``.

    Keys are in upstream's order; empty ``details`` fields are omitted as ``omitempty``
    omits them. Every error becomes a cause, repeats included; the message drops repeats.
    """
    errors = list(errors)
    message = f"{group_kind(kind, group)} {go_quote(name)} is invalid"
    if errors:
        message += f": {aggregate_message(errors)}"
    from ..errors import status_details

    details = status_details(name, group, kind)
    if errors:
        details["causes"] = [err.to_cause() for err in errors]
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "Invalid",
        "details": details,
        "code": 422,
    }


def new_invalid(kind: str, group: str, name: str, errors: Iterable[FieldError]):
    """``apierrors.NewInvalid`` as the ``errors.Invalid`` a handler raises."""
    from .. import errors as status_errors

    status = invalid_status(kind, group, name, errors)
    return status_errors.Invalid(status["message"], status["details"])
