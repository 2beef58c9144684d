"""An object's JSON form as Go writes it back after reading it into its type (``normalize``).

``normalize`` works on JSON dicts, with the compiled messages, and gives what
``Codec.decode(Codec.encode(obj))`` gives, field for field, without writing a byte: fields
in the Go struct's order, unknown ones dropped, the empty-field rules of ``protobuf``'s
docstring, map keys sorted, times, durations and quantities in their canonical text, and
the same ``ProtobufError`` (naming the same field) for a value ``encode`` refuses.
"""

from __future__ import annotations

import base64
import json

from kapiserver.runtime.protobuf_compile import (
    BOOL, BYTES, DOUBLE, DURATION, EXTRA_VALUE, FIELDS_V1, INT32, INT64, INT_OR_STRING, MESSAGE,
    MICROTIME, OBJECT, QUANTITY, RAW_EXTENSION, REPEATED, SCHEMA_OR_BOOL,
    SCHEMA_OR_STRINGS, SINGLE, STRING, TIME, Field, Message)
from kapiserver.runtime.protobuf_types import (
    ZERO_TIME_SECONDS, base64_bytes, canonical_quantity, double_json, format_duration,
    format_time, parse_duration, parse_time, scalar_wire)
from kapiserver.runtime.protobuf_wire import ProtobufError

_CONVERSION_ERRORS = (TypeError, ValueError, AttributeError, UnicodeError)


def normalize_message(codec, message: Message, obj) -> dict:
    """``obj`` read into ``message``'s Go struct and written back as JSON."""
    if not isinstance(obj, dict):
        raise ProtobufError(f"want an object for {message.name}, got {type(obj).__name__}")
    plan = message.plan or _plan(message)
    positions, always = plan
    # Only the fields obj sets and those Go writes anyway, in the struct's order: most
    # fields of a big struct (PodSpec, Container, VolumeSource) are usually unset.
    chosen = [positions[name] for name in obj.keys() & positions.keys()]
    chosen += always
    chosen.sort()
    struct = message.struct
    out = {}
    last = -1
    for position in chosen:
        if position == last:
            continue
        last = position
        field = struct[position]
        if field.inline:
            out.update(normalize_message(codec, field.message, obj))
            continue
        name = field.name
        value = obj.get(name)
        try:
            label = field.label
            if label == SINGLE:
                if value is None and (field.pointer or field.kind == BYTES):
                    if field.keep:  # nil without omitempty: Go writes null
                        out[name] = None
                    continue
                kind = field.kind
                if kind == MESSAGE:
                    out[name] = normalize_message(codec, field.message,
                                                  {} if value is None else value)
                    continue
                if kind == STRING and value.__class__ is str:  # the common case, inline
                    if value or field.keep or field.pointer:
                        out[name] = value
                    continue
                result = _value(codec, field, value)
                if (field.pointer or field.keep or kind in _ALWAYS
                        or not _is_zero(kind, result)):
                    out[name] = result
            elif not value:  # encode writes no element, decode finds none
                if field.keep:
                    out[name] = None
            elif label == REPEATED:
                if not isinstance(value, list):
                    raise ProtobufError(f"want a list, got {type(value).__name__}")
                out[name] = _items(codec, field, value)
            else:
                if not isinstance(value, dict):
                    raise ProtobufError(f"want an object, got {type(value).__name__}")
                out[name] = _entries(codec, field, value)
        except ProtobufError as err:
            raise err.at(name) from None
        except _CONVERSION_ERRORS as err:
            raise ProtobufError(str(err), (name,)) from None
    return out


def _plan(message: Message) -> tuple[dict, list]:
    """The struct position of each JSON name (an inline struct's names at its position),
    and the positions written whatever obj holds: inline structs, fields without
    omitempty, and non-pointer structs."""
    positions, always = {}, []
    for position, field in enumerate(message.struct):
        if field.inline:
            positions.update(dict.fromkeys(field.message._by_json_name, position))
            always.append(position)
            continue
        positions[field.name] = position
        if field.keep or (field.label == SINGLE and not field.pointer
                          and field.kind in _ALWAYS):
            always.append(position)
    message.plan = positions, always
    return message.plan


def _items(codec, field: Field, value: list) -> list:
    kind = field.kind
    if kind == STRING and all(item.__class__ is str for item in value):
        return list(value)
    out = []
    for index, item in enumerate(value):
        try:
            if kind == MESSAGE:
                out.append(normalize_message(codec, field.message, {} if item is None else item))
            else:
                out.append(_value(codec, field, item))
        except ProtobufError as err:
            raise err.at(f"[{index}]") from None
    return out


def _entries(codec, field: Field, value: dict) -> dict:
    kind = field.kind
    out = {}
    for key in sorted(value):
        item = value[key]
        try:
            if kind == STRING and item.__class__ is str:
                out[key] = item
            elif kind == MESSAGE:
                out[key] = normalize_message(codec, field.message, {} if item is None else item)
            else:
                out[key] = _value(codec, field, item)
        except ProtobufError as err:
            raise err.at(key) from None
    return out


#: Kinds written whatever their value (structs: omitempty never omits them).
_ALWAYS = (MESSAGE, TIME, MICROTIME, RAW_EXTENSION)


def _is_zero(kind: int, value) -> bool:
    if kind <= BYTES:
        return not value
    if kind == INT_OR_STRING:
        return value == 0 or value == ""
    if kind == QUANTITY:
        return value in ("", "0")
    if kind == DURATION:
        return value == "0s"
    return value is None or value == []


def _value(codec, field: Field, value):
    """One value of ``field``'s kind (not a message) as decode gives it back; ``None`` is
    the zero value, as encode writes it."""
    kind = field.kind
    if kind == STRING:
        if value is None:
            return ""
        if not isinstance(value, str):
            raise ProtobufError(f"want a string, got {type(value).__name__}")
        return value
    if kind == INT32 or kind == INT64:
        return scalar_wire(kind, value)
    if kind == BOOL:
        return scalar_wire(BOOL, value) != 0
    if kind == DOUBLE:
        return double_json(scalar_wire(DOUBLE, value))
    if kind == BYTES:
        return base64.b64encode(base64_bytes(value)).decode()
    if kind == TIME or kind == MICROTIME:
        if value is None:
            return None
        seconds, nanos = parse_time(value)
        if seconds == ZERO_TIME_SECONDS and (kind == TIME or nanos < 1000):
            return None
        return format_time(seconds, nanos // 1000 if kind == MICROTIME else None)
    if kind == INT_OR_STRING:
        if isinstance(value, str):
            return value
        return scalar_wire(INT32, 0 if value is None else value)
    if kind == QUANTITY:
        return canonical_quantity(value)
    if kind == DURATION:
        return format_duration(0 if value is None else parse_duration(value))
    if kind == EXTRA_VALUE:
        if not isinstance(value, list):
            raise ProtobufError(f"want a list of strings, got {type(value).__name__}")
        for item in value:
            if not isinstance(item, str):
                raise ProtobufError(f"want a string, got {type(item).__name__}")
        return list(value)
    if kind == RAW_EXTENSION or kind == FIELDS_V1:
        if value is None:
            return None
        if kind == FIELDS_V1 and value.__class__ is dict:
            fields = _fields_copy(value)  # the usual form: maps of maps, copied faster
            if fields is not None:
                return fields
        # The raw JSON as decode reads it back (a fresh copy, numbers as json reads them).
        return json.loads(json.dumps(value, separators=(",", ":"), ensure_ascii=False))
    if kind == OBJECT:
        return None if value is None else codec.normalize(value)
    if kind == MESSAGE:
        return normalize_message(codec, field.message, {} if value is None else value)
    return _schema_wrapper(codec, field, value)  # the JSONSchemaProps wrappers


def _fields_copy(fields: dict):
    """A copy of a FieldsV1 set whose every value is a map (of maps) with string keys, as
    the JSON round trip would give; ``None`` for anything else (left to that round trip)."""
    out = {}
    for key, child in fields.items():
        if key.__class__ is not str or child.__class__ is not dict:
            return None
        if child:
            child = _fields_copy(child)
            if child is None:
                return None
        else:
            child = {}
        out[key] = child
    return out


def _schema_wrapper(codec, field: Field, value):
    """JSONSchemaPropsOr{Array,Bool,StringArray}: what UnmarshalJSON then MarshalJSON make
    of ``value`` (see ``Codec._put_schema_wrapper``)."""
    kind, schema = field.kind, field.message
    if kind == SCHEMA_OR_BOOL:
        if isinstance(value, dict):
            return normalize_message(codec, schema, value)
        if isinstance(value, bool):
            return value
        raise ProtobufError(f"want a boolean or a schema, got {type(value).__name__}")
    if isinstance(value, dict):
        return normalize_message(codec, schema, value)
    if not isinstance(value, list) or not value:
        return None
    out = []
    for index, item in enumerate(value):
        try:
            if kind == SCHEMA_OR_STRINGS:
                if not isinstance(item, str):
                    raise ProtobufError(f"want a string, got {type(item).__name__}")
                out.append(item)
            else:
                out.append(normalize_message(codec, schema, {} if item is None else item))
        except ProtobufError as err:
            raise err.at(f"[{index}]") from None
    return out
