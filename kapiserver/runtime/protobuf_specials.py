"""The wire and JSON forms of the types that are not their message's (``protobuf``).

metav1.Time and MicroTime (Timestamp messages; zero is ``null``), Duration (nanoseconds),
Quantity (its canonical string), IntOrString, ExtraValue (``{items=1}``, a bare list in
JSON), RawExtension, FieldsV1 and embedded objects (raw bytes: JSON, or a whole protobuf
body), and apiextensions' JSONSchemaPropsOr{Array,Bool,StringArray}.
"""

from __future__ import annotations

import json

from kapiserver.runtime.protobuf_compile import (
    DURATION, EXTRA_VALUE, INT32, INT_OR_STRING, MICROTIME, OBJECT, QUANTITY, SCHEMA_OR_ARRAY,
    SCHEMA_OR_BOOL, SCHEMA_OR_STRINGS, TIME, Field)
from kapiserver.runtime.protobuf_types import (
    ZERO_TIME_SECONDS, canonical_quantity, format_duration, format_time, parse_duration,
    parse_time, scalar_wire)
from kapiserver.runtime.protobuf_wire import (
    LENGTH, VARINT, ProtobufError, as_int32, as_int64, put_length_delimited, put_varint,
    read_varint, skip_field, sub_fields)

#: What every protobuf body starts with.
MAGIC = b"k8s\x00"


def special_json(codec, field: Field, buf: bytes, pos: int, end: int):
    """The JSON form of one value of a special kind, its message at ``buf[pos:end]``."""
    kind = field.kind
    if kind in (TIME, MICROTIME):
        if pos == end:
            return None
        sub = sub_fields(buf, pos, end)
        seconds = as_int64(sub.get(1, 0))
        nanos = as_int32(sub.get(2, 0))
        if seconds == ZERO_TIME_SECONDS and nanos == 0:
            return None
        # Time keeps whole seconds (Time.Unmarshal drops nanos); MicroTime keeps µs.
        return format_time(seconds, nanos // 1000 if kind == MICROTIME else None)
    if kind == INT_OR_STRING:
        sub = sub_fields(buf, pos, end, strings=(3,))
        if sub.get(1, 0) == 1:
            return sub.get(3, "")
        return as_int32(sub.get(2, 0))
    if kind == QUANTITY:  # no string is the zero Quantity; an empty one ParseQuantity refuses
        return canonical_quantity(sub_fields(buf, pos, end, strings=(1,)).get(1))
    if kind == DURATION:
        return format_duration(as_int64(sub_fields(buf, pos, end).get(1, 0)))
    if kind == EXTRA_VALUE:
        return sub_fields(buf, pos, end, strings=(1,), repeated=(1,)).get(1, [])
    if kind >= SCHEMA_OR_ARRAY:
        return _schema_wrapper_json(codec, field, buf, pos, end)
    raw = sub_fields(buf, pos, end, raw=(1,)).get(1, b"")
    if not raw:
        return None
    if kind == OBJECT and raw.startswith(MAGIC):
        return codec.decode(raw)
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise ProtobufError("embedded object is neither protobuf nor JSON") from None


def _schema_wrapper_json(codec, field: Field, buf: bytes, pos: int, end: int):
    """apiextensions' JSONSchemaPropsOr{Array,Bool,StringArray} as their MarshalJSON
    writes them: OrArray {schema=1, jSONSchemas=2} the list if any, else the schema;
    OrBool {allows=1, schema=2} the schema if any, else the boolean; OrStringArray
    {schema=1, property=2} the strings if any, else the schema; ``null`` for nothing."""
    schema_number = 2 if field.kind == SCHEMA_OR_BOOL else 1
    schemas_found, listed, allows = [], [], False
    while pos < end:
        key, pos = read_varint(buf, pos, end)
        number, wire = key >> 3, key & 7
        if wire == VARINT and number == 1 and field.kind == SCHEMA_OR_BOOL:
            value, pos = read_varint(buf, pos, end)
            allows = value != 0
        elif wire == LENGTH and number in (1, 2):
            size, pos = read_varint(buf, pos, end)
            stop = pos + size
            if stop > end:
                raise ProtobufError(f"field {number} runs past the end of its message")
            if number == schema_number:
                schemas_found.append(buf[pos:stop])
            elif field.kind == SCHEMA_OR_STRINGS:
                listed.append(buf[pos:stop].decode("utf-8", "replace"))
            else:
                listed.append(codec._decode_message(field.message, buf, pos, stop))
            pos = stop
        else:
            pos = skip_field(buf, pos, end, wire, number)
    if listed:
        return listed
    if schemas_found:
        data = b"".join(schemas_found)
        return codec._decode_message(field.message, data, 0, len(data))
    return allows if field.kind == SCHEMA_OR_BOOL else None


def special_bytes(codec, field: Field, value) -> bytes | bytearray:
    kind = field.kind
    body = bytearray()
    if kind in (TIME, MICROTIME):
        if value is None:
            return body
        seconds, nanos = parse_time(value)
        if seconds == ZERO_TIME_SECONDS and nanos < 1000:
            return body
        body += b"\x08"
        put_varint(body, seconds)
        body += b"\x10"
        put_varint(body, nanos // 1000 * 1000 if kind == MICROTIME else 0)
    elif kind == INT_OR_STRING:
        if isinstance(value, str):
            body += b"\x08\x01\x10\x00\x1a"
            put_length_delimited(body, value.encode())
        else:
            body += b"\x08\x00\x10"
            put_varint(body, scalar_wire(INT32, 0 if value is None else value))
            body += b"\x1a\x00"
    elif kind == QUANTITY:
        body += b"\x0a"
        put_length_delimited(body, canonical_quantity(value).encode())
    elif kind == DURATION:
        body += b"\x08"
        put_varint(body, 0 if value is None else parse_duration(value))
    elif kind == EXTRA_VALUE:
        if not isinstance(value, list):
            raise ProtobufError(f"want a list of strings, got {type(value).__name__}")
        for item in value:
            if not isinstance(item, str):
                raise ProtobufError(f"want a string, got {type(item).__name__}")
            body += b"\x0a"
            put_length_delimited(body, item.encode())
    elif kind >= SCHEMA_OR_ARRAY:
        _put_schema_wrapper(codec, field, value, body)
    elif value is not None:  # RawExtension, FieldsV1, Object: raw = 1
        raw = (codec.encode(value) if kind == OBJECT else
               json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())
        body += b"\x0a"
        put_length_delimited(body, raw)
    return body

def _put_schema_wrapper(codec, field: Field, value, body: bytearray) -> None:
    """A JSONSchemaPropsOr* as its UnmarshalJSON reads ``value``: an object is the
    schema, a list the schemas (OrArray) or strings (OrStringArray), a boolean OrBool's
    ``allows`` (an object allows too); anything else is nothing (OrBool refuses it)."""
    kind, schema = field.kind, field.message
    if kind == SCHEMA_OR_BOOL:
        if isinstance(value, dict):
            body += b"\x08\x01\x12"
            put_length_delimited(body, codec._encode_message(schema, value))
        elif isinstance(value, bool):
            body += b"\x08\x01" if value else b"\x08\x00"
        else:
            raise ProtobufError(f"want a boolean or a schema, got {type(value).__name__}")
    elif isinstance(value, dict):
        body += b"\x0a"
        put_length_delimited(body, codec._encode_message(schema, value))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            body += b"\x12"
            try:
                if kind == SCHEMA_OR_STRINGS:
                    if not isinstance(item, str):
                        raise ProtobufError(f"want a string, got {type(item).__name__}")
                    put_length_delimited(body, item.encode())
                else:
                    put_length_delimited(body, codec._encode_message(
                        schema, {} if item is None else item))
            except ProtobufError as err:
                raise err.at(f"[{index}]") from None
