"""Reading JSON into a built-in kind's Go types as kube-apiserver does: what it refuses, and
how it says so.

Upstream reads a request into Go structs with one of two decoders, and each has its own
errors; both are emulated here on the decoded JSON (dicts, lists, str, int, float, bool,
None), guided by the compiled protobuf tables and the Go layout ``protobuf_generate``
writes beside them (``schemas.GO``: Go names and ``reflect`` type names).

``json_error`` — ``sigs.k8s.io/json`` (Go 1.23's ``encoding/json``, case-sensitive),
used for create and update bodies and for the result of a JSON or merge patch. It reads
the document in its own order; a value of the wrong JSON kind is an
``UnmarshalTypeError``, kept if it is the first and decoding goes on::

    json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string
    json: cannot unmarshal number 3000000000 into Go struct field DeploymentSpec.spec.replicas of type int32
    json: cannot unmarshal string into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32

(the innermost struct's Go name, then the JSON names of the struct fields from the root,
joined with ``.``: no list indexes, no map keys; the Go type after pointers, as ``reflect``
prints it; a number's literal when it does not fit an integer). A ``[]byte`` that is no
base64 keeps ``illegal base64 data at input byte N``. A type that reads itself
(``UnmarshalJSON``) stops decoding at its first error, which wins over any kept one:
Quantity's ``quantities must match the regular expression ...``, ``time.Parse``'s and
``time.ParseDuration``'s texts, and the ``UnmarshalTypeError`` of the nested
``json.Unmarshal`` of Time, Duration (``of type string``) and IntOrString (``of type
int32``), named after the outer field.

``unstructured_error`` — ``runtime.DefaultUnstructuredConverter.FromUnstructured``, used
for a strategic-merge-patched object and for the object server-side apply merged. It
walks the Go struct in field order and stops at the first error, with reflect's words
(``cannot restore map from slice``, ``cannot restore struct from: string``, ``cannot
convert float64 to int32``, ``unrecognized type: int32``), and converts as reflect does:
an int64 into an int32 wraps around, a whole float64 becomes an integer. It fixes the
object in place accordingly.

Neither reports unknown fields (``unknown_fields`` does) nor changes the shape of the
object otherwise; ``Codec.normalize`` then writes it as Go would.
"""

from __future__ import annotations

import base64
import json
import math
import re
from typing import Callable

from .protobuf_compile import (
    BOOL, BYTES, DOUBLE, DURATION, EXTRA_VALUE, FIELDS_V1, INT32, INT64, INT_OR_STRING, MAP,
    MESSAGE, MICROTIME, OBJECT, QUANTITY, RAW_EXTENSION, REPEATED, SCHEMA_OR_ARRAY,
    SCHEMA_OR_BOOL, SCHEMA_OR_STRINGS, SINGLE, STRING, TIME, Field, Message)

_INT_RANGE = {INT32: (-(1 << 31), (1 << 31) - 1), INT64: (-(1 << 63), (1 << 63) - 1)}
_INTEGER = re.compile(r"-?(?:0|[1-9]\d*)\Z")
#: Kinds whose Go types read themselves (``UnmarshalJSON``) and accept anything.
_ANYTHING = (RAW_EXTENSION, FIELDS_V1, OBJECT)
_TABLE_GO = {STRING: "string", BOOL: "bool", INT32: "int32", INT64: "int64",
             DOUBLE: "float64", BYTES: "[]uint8", TIME: "v1.Time", MICROTIME: "v1.MicroTime",
             DURATION: "v1.Duration", QUANTITY: "resource.Quantity",
             INT_OR_STRING: "intstr.IntOrString", RAW_EXTENSION: "runtime.RawExtension",
             FIELDS_V1: "v1.FieldsV1", EXTRA_VALUE: "v1.ExtraValue",
             OBJECT: "runtime.RawExtension", SCHEMA_OR_ARRAY: "v1.JSONSchemaPropsOrArray",
             SCHEMA_OR_BOOL: "v1.JSONSchemaPropsOrBool",
             SCHEMA_OR_STRINGS: "v1.JSONSchemaPropsOrStringArray"}


# -- Go's type names -------------------------------------------------------------------------

def _layout():
    from . import protobuf_schemas

    try:
        return protobuf_schemas.GO
    except (KeyError, OSError):  # tables without a Go layout: names derived from them
        return None


def struct_name(message: Message) -> str:
    """``reflect.Type.Name()`` of the message's Go struct (``ConfigMap``)."""
    return message.name.rpartition(".")[2]


def message_type(message: Message) -> str:
    """``reflect.Type.String()`` of the message's Go struct (``v1.ConfigMap``)."""
    package, _, name = message.name.rpartition(".")
    layout = _layout()
    entry = layout and layout["structs"].get(package, {}).get(name)
    return entry[0] if entry else f"{package.rpartition('/')[2] or package}.{name}"


def field_type(owner: Message, field: Field) -> tuple[str, str | None]:
    """The Go type of ``field`` of ``owner`` as ``reflect`` prints it (``*int32``,
    ``map[string]string``, ``v1.ResourceList``) and the import path its names are read in
    (``None`` without a Go layout)."""
    owner = _declaring(owner, field) or owner
    package, _, name = owner.name.rpartition(".")
    layout = _layout()
    entry = layout and layout["structs"].get(package, {}).get(name)
    go = entry and entry[1].get(str(field.number))
    if go:
        return go[1], layout["packages"].get(package)
    if field.kind == MESSAGE or field.kind in (SCHEMA_OR_ARRAY, SCHEMA_OR_BOOL,
                                               SCHEMA_OR_STRINGS):
        value = (message_type(field.message) if field.kind == MESSAGE
                 else _TABLE_GO[field.kind])
    else:
        value = _TABLE_GO[field.kind]
    if field.label == REPEATED:
        value = "[]" + value
    elif field.label == MAP:
        value = "map[string]" + value
    return ("*" + value if field.pointer else value), None


def _declaring(message: Message, field: Field) -> Message | None:
    """The struct declaring ``field``: ``message`` or one it embeds inline."""
    for own in message.struct:
        if own is field:
            return message
        if own.inline:
            found = _declaring(own.message, field)
            if found is not None:
                return found
    return None


def _split(type_name: str, context: str | None) -> tuple[str, str, str | None]:
    """(``[]``, ``map`` or ``""``, the element type, its context) of a type after pointers,
    a named type read as what it is defined as."""
    type_name = type_name.lstrip("*")
    for _ in range(8):
        if type_name.startswith("[]"):
            return "[]", type_name[2:], context
        if type_name.startswith("map["):
            depth = 0
            for index in range(3, len(type_name)):
                depth += {"[": 1, "]": -1}.get(type_name[index], 0)
                if depth == 0:
                    return "map", type_name[index + 1:], context
        layout = _layout()
        path = layout and context and layout["refs"].get(context, {}).get(type_name)
        definition = path and layout["named"].get(path, {}).get(type_name.rpartition(".")[2])
        if not definition:
            break
        type_name, context = definition, path
    return "", type_name, context


def element_type(owner: Message, field: Field) -> str:
    """The Go type of one element of a list or map field (``v1.Container``, ``string``)."""
    _, element, _ = _split(*field_type(owner, field))
    return element


def value_type(owner: Message, field: Field, element: bool) -> str:
    """The Go type a value of ``field`` is read into: an element's, or the field's after
    pointers."""
    return element_type(owner, field) if element else field_type(owner, field)[0].lstrip("*")


# -- errors -----------------------------------------------------------------------------------

class GoDecodeError(ValueError):
    """What a Go decoder refused, worded as it words it (``str()``)."""


class _TypeError:
    """``json.UnmarshalTypeError``: its context (``Struct``, ``Field``) may be set later,
    as ``addErrorContext`` does."""

    __slots__ = ("value", "type", "struct", "stack")

    def __init__(self, value: str, type_name: str):
        self.value, self.type, self.struct, self.stack = value, type_name, None, ()

    def __str__(self) -> str:
        if self.struct is not None or self.stack:
            return (f"json: cannot unmarshal {self.value} into Go struct field "
                    f"{self.struct or ''}.{'.'.join(self.stack)} of type {self.type}")
        return f"json: cannot unmarshal {self.value} into Go value of type {self.type}"


class _Abort(Exception):
    """An ``UnmarshalJSON`` failed: decoding stops with its error."""

    def __init__(self, error):
        super().__init__(str(error))
        self.error = error


def _kind(value) -> str:
    if value is None:
        return "null"
    if value is True or value is False:
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def go_json_float(value: float) -> str:
    """A float64 as ``encoding/json`` writes it (``1``, ``1.5``, ``1e+21``, ``1e-7``)."""
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    if 1e-6 <= abs(value) < 1e21:
        text = repr(value)
        if "e" in text:  # repr's exponent form for big whole numbers or small fractions
            text = format(value, "f")
            text = text.rstrip("0").rstrip(".") if "." in text else text
        return text[:-2] if text.endswith(".0") else text
    mantissa, _, exponent = repr(value).partition("e")
    mantissa = mantissa[:-2] if mantissa.endswith(".0") else mantissa
    sign, digits = exponent[0], exponent[1:].lstrip("0") or "0"
    return f"{mantissa}e{sign}{digits}"


def number_text(value) -> str:
    """The JSON text Go writes for a decoded number (an int64, else a float64)."""
    if isinstance(value, int) and _INT_RANGE[INT64][0] <= value <= _INT_RANGE[INT64][1]:
        return str(value)
    return go_json_float(float(value))


# -- sigs.k8s.io/json ----------------------------------------------------------------------

def json_error(message: Message, obj, number_text: Callable = number_text) -> str | None:
    """What ``json.Unmarshal`` of ``obj`` into ``message``'s Go struct says, or ``None``
    when it fits. ``number_text(value)`` gives a number's literal in the document (Go
    quotes it when it does not fit an integer: ``number 1.0``, ``number 1e3``); by default
    the text Go's encoder writes, as for YAML turned into JSON."""
    decoder = _JSONDecoder(number_text)
    try:
        decoder.value_into(message, None, obj, None, ())
    except _Abort as abort:
        return str(abort.error)
    return None if decoder.saved is None else str(decoder.saved)


class _JSONDecoder:
    __slots__ = ("saved", "number_text")

    def __init__(self, number_text: Callable):
        self.saved = None
        self.number_text = number_text

    def save(self, error, owner: Message | None, stack: tuple) -> None:
        if self.saved is None:
            if isinstance(error, _TypeError) and (owner is not None or stack):
                error.struct, error.stack = struct_name(owner), stack
            self.saved = error

    def abort(self, error, owner: Message | None, stack: tuple):
        if isinstance(error, _TypeError) and (owner is not None or stack):
            error.struct, error.stack = struct_name(owner), stack
        raise _Abort(error)

    def struct(self, message: Message, obj: dict, stack: tuple) -> None:
        fields = message._by_json_name
        for key, value in obj.items():
            field = fields.get(key)
            if field is None:
                continue  # unknown: skipped here, reported by unknown_fields
            kind, label = field.kind, field.label
            if value is None:
                if field.pointer or label != SINGLE or kind == STRING or kind == MESSAGE:
                    continue
            elif label == SINGLE:  # the common cases, decided here
                cls = value.__class__
                if ((kind == STRING and cls is str) or (kind == BOOL and cls is bool)
                        or ((kind == INT32 or kind == INT64) and cls is int
                            and _INT_RANGE[kind][0] <= value <= _INT_RANGE[kind][1])):
                    continue
                if kind == MESSAGE and cls is dict:
                    self.struct(field.message, value, (*stack, key))
                    continue
            inner = (*stack, key)
            if label == SINGLE:
                self.value_into(field.message, field, value, message, inner)
            elif field.label == REPEATED:
                if isinstance(value, list):
                    if field.kind == STRING:
                        if all(item.__class__ is str for item in value):
                            continue
                    for item in value:
                        self.value_into(field.message, field, item, message, inner, True)
                elif value is not None:
                    self.save(_TypeError(_kind(value), value_type(message, field, False)),
                              message, inner)
            else:
                if isinstance(value, dict):
                    if field.kind == STRING:
                        if all(item.__class__ is str for item in value.values()):
                            continue
                    for item in value.values():
                        self.value_into(field.message, field, item, message, inner, True)
                elif value is not None:
                    self.save(_TypeError(_kind(value), value_type(message, field, False)),
                              message, inner)

    def value_into(self, message: Message | None, field: Field | None, value,
                   owner: Message | None, stack: tuple, element: bool = False) -> None:
        """Read ``value`` into one Go value: ``field``'s (an element of it when
        ``element``), or the struct ``message`` when ``field`` is ``None``."""
        kind = MESSAGE if field is None else field.kind
        if kind == MESSAGE:
            if isinstance(value, dict):
                self.struct(message, value, stack)
            elif value is not None:
                self.save(_TypeError(_kind(value), message_type(message)
                                     if field is None else value_type(owner, field, element)),
                          owner, stack)
            return
        if kind in _ANYTHING:
            return
        if value is None:
            if kind == DURATION:  # UnmarshalJSON("null"): ParseDuration("")
                self.abort('time: invalid duration ""', owner, stack)
            if kind == SCHEMA_OR_ARRAY and not (field.pointer and not element):
                self.abort("array or JSON schema expected", owner, stack)
            return  # null leaves a Go value as it is
        if kind == STRING:
            if value.__class__ is not str:
                self.save(_TypeError(_kind(value), value_type(owner, field, element)),
                          owner, stack)
        elif kind == BOOL:
            if value is not True and value is not False:
                self.save(_TypeError(_kind(value), value_type(owner, field, element)),
                          owner, stack)
        elif kind == INT32 or kind == INT64 or kind == DOUBLE:
            problem = self._number(kind, value)
            if problem is not None:
                self.save(_TypeError(problem, value_type(owner, field, element)), owner, stack)
        elif kind == BYTES:
            self._bytes(value, owner, field, stack, element)
        elif kind == TIME or kind == MICROTIME or kind == DURATION:
            self._time(kind, value, owner, stack)
        elif kind == QUANTITY:
            from ..apimachinery import quantity

            try:
                quantity.from_json(value if isinstance(value, (str, int, float)) else [])
            except quantity.QuantityError as err:
                self.abort(str(err), owner, stack)
        elif kind == INT_OR_STRING:
            if value.__class__ is not str:
                problem = self._number(INT32, value)
                if problem is not None:
                    self.abort(_TypeError(problem, "int32"), owner, stack)
        elif kind == EXTRA_VALUE:
            if not isinstance(value, list):
                self.save(_TypeError(_kind(value), value_type(owner, field, element)),
                          owner, stack)
            else:
                for item in value:
                    if item is not None and item.__class__ is not str:
                        self.save(_TypeError(_kind(item), "string"), owner, stack)
        else:
            self._schema_wrapper(field, value, owner, stack)

    def _number(self, kind: int, value) -> str | None:
        """``None`` when the JSON value fits a Go number of ``kind``, else what
        ``UnmarshalTypeError`` says of it."""
        if value is True or value is False:
            return "bool"
        if isinstance(value, int):
            if kind == DOUBLE:
                return None
            low, high = _INT_RANGE[kind]
            return None if low <= value <= high else f"number {value}"
        if isinstance(value, float):
            text = self.number_text(value)
            if kind == DOUBLE:
                return None if math.isfinite(value) else f"number {text}"
            if _INTEGER.match(text):  # YAML's 3.0 reaches Go as "3"
                low, high = _INT_RANGE[kind]
                if low <= int(text) <= high:
                    return None
            return f"number {text}"
        return _kind(value)

    def _bytes(self, value, owner, field, stack, element) -> None:
        if isinstance(value, str):
            problem = base64_error(value)
            if problem is not None:
                self.save(problem, owner, stack)
        elif isinstance(value, list):
            for item in value:  # a JSON array fills a []byte one uint8 at a time
                if item is None:
                    continue
                if isinstance(item, int) and not isinstance(item, bool) and 0 <= item <= 255:
                    continue
                problem = (f"number {self.number_text(item)}"
                           if isinstance(item, (int, float)) and not isinstance(item, bool)
                           else _kind(item))
                self.save(_TypeError(problem, "uint8"), owner, stack)
        else:
            self.save(_TypeError(_kind(value), value_type(owner, field, element)), owner, stack)

    def _time(self, kind: int, value, owner, stack) -> None:
        from . import gotime

        if value.__class__ is not str:  # the nested json.Unmarshal(b, &str)
            self.abort(_TypeError(_kind(value), "string"), owner, stack)
        if kind != DURATION and _plausible_time(value, kind == MICROTIME):
            return
        try:
            if kind == DURATION:
                gotime.parse_duration(value)
            else:
                gotime.parse(value, gotime.RFC3339_MICRO if kind == MICROTIME
                             else gotime.RFC3339)
        except (gotime.TimeParseError, gotime.DurationParseError) as err:
            self.abort(str(err), owner, stack)

    def _schema_wrapper(self, field: Field, value, owner, stack) -> None:
        """apiextensions' JSONSchemaPropsOr*: their UnmarshalJSON reads a schema (or a
        list) with a nested, lenient json.Unmarshal, whose error is theirs."""
        kind, schema = field.kind, field.message
        nested = None
        if isinstance(value, dict):
            nested = json_error(schema, value, self.number_text)
        elif kind == SCHEMA_OR_BOOL:
            if value is not True and value is not False:
                self.abort("boolean or JSON schema expected", owner, stack)
        elif isinstance(value, list):
            if kind == SCHEMA_OR_ARRAY:
                decoder = _JSONDecoder(self.number_text)
                try:
                    for item in value:
                        decoder.value_into(schema, None, item, None, ())
                except _Abort as abort:
                    nested = abort.error
                nested = nested if nested is not None else decoder.saved
            else:
                for item in value:
                    if item is not None and item.__class__ is not str:
                        nested = nested or _TypeError(_kind(item), "string")
        elif kind == SCHEMA_OR_ARRAY:
            self.abort("array or JSON schema expected", owner, stack)
        if nested is not None:
            if isinstance(nested, str):
                nested = _reparse_type_error(nested)
            self.abort(nested, owner, stack)


def _reparse_type_error(text: str):
    """A nested decoder's error, as an ``UnmarshalTypeError`` again when it was one (the
    outer decoder gives it the outer field's context)."""
    match = re.match(r"json: cannot unmarshal (.+?) into Go (?:struct field \S+|value) of "
                     r"type (\S+)\Z", text)
    return _TypeError(match.group(1), match.group(2)) if match else text


_TIME = re.compile(r"(\d{4})-(\d\d)-(\d\d)T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?"
                   r"(?:Z|[+-](?:[01]\d|2[0-4]):(?:[0-5]\d|60))\Z")


def _plausible_time(text: str, micro: bool) -> bool:
    """Whether ``time.Parse`` surely takes ``text`` (the common forms; the rest is left to
    ``gotime.parse``, which words the error)."""
    match = _TIME.match(text)
    if match is None or (micro and len(match.group(5) or "") != 7):
        return False
    from .gotime import days_in_month

    year, month, day = int(match.group(1)), int(match.group(2)), int(match.group(3))
    return 1 <= month <= 12 and 1 <= day <= days_in_month(year, month)


_BASE64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def base64_error(text: str) -> str | None:
    """``base64.StdEncoding.Decode``'s error for ``text`` (``illegal base64 data at input
    byte N``, N counted in UTF-8 bytes), or ``None``: padding is required, ``\\r`` and
    ``\\n`` are skipped anywhere (``decodeQuantum``)."""
    src = text.encode()
    size, at = len(src), 0
    while True:
        have = 0
        while have < 4:
            if at == size:
                return None if have == 0 else f"illegal base64 data at input byte {at - have}"
            byte = src[at]
            at += 1
            if byte in _BASE64:
                have += 1
                continue
            if byte in (0x0A, 0x0D):
                continue
            if byte != 0x3D or have < 2:  # not '=', or '=' too early in the quantum
                return f"illegal base64 data at input byte {at - 1}"
            if have == 2:  # "==" wanted: the second one, after any newlines
                while at < size and src[at] in (0x0A, 0x0D):
                    at += 1
                if at == size:
                    return f"illegal base64 data at input byte {size}"
                if src[at] != 0x3D:
                    return f"illegal base64 data at input byte {at - 1}"
                at += 1
            while at < size and src[at] in (0x0A, 0x0D):
                at += 1
            return f"illegal base64 data at input byte {at}" if at < size else None


# -- runtime.DefaultUnstructuredConverter ------------------------------------------------------

#: reflect's Kind of a decoded JSON value held in an ``interface{}``.
def _go_kind(value) -> str:
    if value is True or value is False:
        return "bool"
    if isinstance(value, int):
        return "int64" if _INT_RANGE[INT64][0] <= value <= _INT_RANGE[INT64][1] else "float64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    return "slice" if isinstance(value, list) else "map"


def _wrap(value: int, kind: int) -> int:
    bits = 32 if kind == INT32 else 64
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def unstructured_error(message: Message, obj: dict) -> str | None:
    """What ``FromUnstructured`` of ``obj`` into ``message``'s Go struct says, or ``None``
    when it fits; numbers are converted in place as reflect converts them."""
    try:
        if isinstance(obj, dict):
            for name in ("kind", "apiVersion"):  # TypeMeta, the struct's first field
                value = obj.get(name)
                if value is not None and value.__class__ is not str:
                    if _go_kind(value) == "int64":
                        raise GoDecodeError("cannot convert int64 to string")
                    raise GoDecodeError("unrecognized type: string")
        _from_struct(message, obj)
    except GoDecodeError as err:
        return str(err)
    return None


def _from_struct(message: Message, obj) -> None:
    if not isinstance(obj, dict):
        raise GoDecodeError(f"cannot restore struct from: {_go_kind(obj)}")
    for field in message.struct:
        if field.inline:
            _from_struct(field.message, obj)
            continue
        value = obj.get(field.name)
        if value is None:
            continue
        if field.label == SINGLE:
            converted = _from_value(message, field, value, False)
        elif field.label == REPEATED:
            if not isinstance(value, list):
                raise GoDecodeError(f"cannot restore slice from {_go_kind(value)}")
            for index, item in enumerate(value):
                if item is not None:
                    value[index] = _from_value(message, field, item, True)
            continue
        else:
            if not isinstance(value, dict):
                raise GoDecodeError(f"cannot restore map from {_go_kind(value)}")
            for key in sorted(value):  # Go's map order is random: report one of them
                if value[key] is not None:
                    value[key] = _from_value(message, field, value[key], True)
            continue
        if converted is not value:
            obj[field.name] = converted


def _from_value(owner: Message, field: Field, value, element: bool):
    """``value`` converted into one Go value of ``field`` (an element when ``element``)."""
    kind = field.kind
    if kind == MESSAGE:
        _from_struct(field.message, value)
        return value
    if kind == STRING:
        if value.__class__ is str:
            return value
        if _go_kind(value) == "int64":
            raise GoDecodeError(f"cannot convert int64 to {value_type(owner, field, element)}")
        raise GoDecodeError("unrecognized type: string")
    if kind == BOOL:
        if value is True or value is False:
            return value
        raise GoDecodeError("unrecognized type: bool")
    if kind == INT32 or kind == INT64:
        source = _go_kind(value)
        if source == "int64":
            return _wrap(value, kind)
        if source == "float64":
            if float(value) != math.trunc(float(value)):
                raise GoDecodeError(f"cannot convert float64 to {('int32', 'int64')[kind == INT64]}")
            whole = int(value)  # int64(f): out of range is the smallest int64 on amd64
            if not _INT_RANGE[INT64][0] <= whole <= _INT_RANGE[INT64][1]:
                whole = _INT_RANGE[INT64][0]
            return _wrap(whole, kind)
        raise GoDecodeError(f"unrecognized type: {('int32', 'int64')[kind == INT64]}")
    if kind == DOUBLE:
        if _go_kind(value) in ("int64", "float64"):
            return value
        raise GoDecodeError("unrecognized type: float64")
    if kind == BYTES:
        if isinstance(value, str):
            problem = base64_error(value) if value else None
            if problem is not None:
                raise GoDecodeError(f"error decoding from json: {problem}")
            return value
        if not isinstance(value, list):
            raise GoDecodeError(f"cannot restore slice from {_go_kind(value)}")
        data = bytearray()
        for item in value:  # element by element into uint8, as reflect converts
            source = "invalid" if item is None else _go_kind(item)
            if source == "int64" or (source == "float64" and float(item).is_integer()):
                data.append(int(item) & 0xFF)
            elif source == "invalid":
                data.append(0)
            elif source == "float64":
                raise GoDecodeError("cannot convert float64 to uint8")
            else:
                raise GoDecodeError("unrecognized type: uint8")
        return base64.b64encode(bytes(data)).decode()
    if kind == EXTRA_VALUE:
        if not isinstance(value, list):
            raise GoDecodeError(f"cannot restore slice from {_go_kind(value)}")
        for item in value:
            if item is not None and item.__class__ is not str:
                if _go_kind(item) == "int64":
                    raise GoDecodeError("cannot convert int64 to string")
                raise GoDecodeError("unrecognized type: string")
        return value
    if kind in _ANYTHING:
        return value
    # A type with UnmarshalJSON reads json.Marshal(value): no outer context.
    problem = json_error_of_special(field, value)
    if problem is not None:
        raise GoDecodeError(problem)
    if kind == INT_OR_STRING and isinstance(value, float):
        return int(value)
    return value


def json_error_of_special(field: Field, value) -> str | None:
    """The error of a self-reading type's ``UnmarshalJSON`` for ``value``, on its own."""
    decoder = _JSONDecoder(number_text)
    try:
        decoder.value_into(field.message, field, value, None, ())
    except _Abort as abort:
        return str(abort.error)
    return None if decoder.saved is None else str(decoder.saved)


def go_patch_map(value) -> str:
    """A patch document as ``fmt.Sprintf("%+v", patchMap)`` prints it (``map[data:[a]]``)."""
    from ..apimachinery.field_errors import go_value

    return go_value(value)


def float_literals(body: bytes) -> dict[float, str]:
    """Each float of a JSON document mapped to its first literal (``1.0``, ``1e3``): what
    Go quotes in ``number 1e3``."""
    texts: dict[float, str] = {}

    def keep(text: str) -> float:
        value = float(text)
        texts.setdefault(value, text)
        return value

    try:
        json.loads(body, parse_float=keep)
    except ValueError:
        pass
    return texts
