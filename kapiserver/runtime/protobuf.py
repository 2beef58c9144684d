"""The Kubernetes protobuf encoding (``application/vnd.kubernetes.protobuf``).

A body is the magic prefix ``k8s\\x00`` and a ``runtime.Unknown`` message whose ``raw``
holds the object's own message; kind and apiVersion travel in the envelope. ``encode``
writes a JSON-form dict byte for byte as kube-apiserver's gogo-generated marshallers do:
fields by number, non-pointer fields always (``""``, ``0``, empty messages), pointer fields
only when set (a ``[]byte`` only when not null), map entries sorted by key, an inline
embedded struct (``Volume``'s ``VolumeSource``) as the one message field it is on the wire.
``decode`` gives the dict Go's JSON encoder would write for the decoded object: non-pointer
structs always (``"spec": {}``, a RawExtension's ``null``), inline structs' fields in their
parent, a zero ``metav1.Time`` as ``null``, zero scalars only where the JSON tag lacks
``omitempty``, pointer fields whenever set (and as ``null`` when unset without
``omitempty``), a float64 as an ``int`` when it is whole (Go writes ``1``, not ``1.0``), a
Quantity in its canonical form (``1000m`` is ``"1"``).
One exception: zero IntOrString, Quantity and Duration values under ``omitempty`` are left
out (Go writes ``0``, ``"0"``, ``"0s"``), so defaulting sees an unset ``targetPort`` as
unset. ``normalize`` gives the same dict as ``decode(encode(obj))`` without the bytes.

Messages are data (``protobuf_schemas``); ``Codec`` compiles them once. The types whose
JSON form is not their message's (times, quantities, raw JSON, ...) are
``protobuf_specials``'.
"""

from __future__ import annotations

import base64
import functools
import struct

from kapiserver.runtime import protobuf_schemas as schemas
from kapiserver.runtime.protobuf_compile import (
    BOOL, BYTES, DOUBLE, DURATION, EXTRA_VALUE, INT32, INT64, INT_OR_STRING, MAP, MESSAGE,
    MICROTIME, QUANTITY, RAW_EXTENSION, REPEATED, SINGLE, STRING, TIME, Field, Message,
    compile_messages)
from kapiserver.runtime.protobuf_normalize import normalize_message
from kapiserver.runtime.protobuf_specials import MAGIC, special_bytes, special_json
from kapiserver.runtime.protobuf_types import (
    base64_bytes, double_json, scalar_wire, varint_json)
from kapiserver.runtime.protobuf_wire import (
    FIXED64, LENGTH, VARINT, ProtobufError, framed, put_length_delimited, put_varint,
    read_varint, skip_field, span_string, spans)

__all__ = ["CONTENT_TYPE", "MAGIC", "Codec", "ProtobufError", "decode", "decode_watch_event",
           "encode", "encode_watch_event", "known", "normalize"]

CONTENT_TYPE = "application/vnd.kubernetes.protobuf"

_JSON_ZERO = {STRING: "", BOOL: False, INT32: 0, INT64: 0, DOUBLE: 0, BYTES: ""}
#: Kinds Go's encoder writes whatever their value (structs: omitempty never omits them).
_ALWAYS = (MESSAGE, TIME, MICROTIME, RAW_EXTENSION)
_DOUBLE = struct.Struct("<d")
_MISSING = object()


class Codec:
    """Protobuf ↔ JSON-form conversion for the kinds of ``kinds`` (the built-ins by default).

    ``messages``, ``kinds`` and ``meta_kinds`` have the shapes of ``protobuf_schemas``'s
    ``MESSAGES``, ``KINDS`` and ``META_KINDS``; a plugin serving more kinds builds a codec
    from the built-in tables merged with its own.
    """

    def __init__(self, messages=None, kinds=None, meta_kinds=None):
        messages = schemas.MESSAGES if messages is None else messages
        kinds = schemas.KINDS if kinds is None else kinds
        meta_kinds = schemas.META_KINDS if meta_kinds is None else meta_kinds
        self._messages = compile_messages(messages)
        self._kinds = {}
        for api_version, (package, names) in kinds.items():
            for kind in names:
                self._kinds[api_version, kind] = self._messages[f"{package}.{kind}"]
        for api_version in (*kinds, schemas.META_GROUP_VERSION):
            for kind in meta_kinds:
                self._kinds[api_version, kind] = self._messages[f"{schemas.META_V1}.{kind}"]

    def known(self, api_version: str, kind: str) -> bool:
        """Whether ``kind`` of ``api_version`` has a protobuf schema here."""
        return (api_version, kind) in self._kinds

    def _lookup(self, api_version, kind) -> Message:
        message = self._kinds.get((api_version, kind))
        if message is None:
            raise ProtobufError(f"no protobuf schema for kind {kind!r} of apiVersion "
                                f"{api_version!r}")
        return message

    # -- the envelope ------------------------------------------------------------------------

    def decode(self, data: bytes) -> dict:
        """The JSON-form dict of a protobuf body (``k8s\\x00`` and a ``runtime.Unknown``)."""
        if not isinstance(data, bytes):
            if not isinstance(data, (bytearray, memoryview)):
                raise ProtobufError(f"want bytes, got {type(data).__name__}")
            data = bytes(data)
        if not data.startswith(MAGIC):
            raise ProtobufError("not a Kubernetes protobuf body: it does not start with the "
                                "k8s\\x00 prefix")
        unknown = spans(data, len(MAGIC), len(data), "runtime.Unknown")
        type_meta = unknown.get(1, (0, 0))
        type_fields = spans(data, type_meta[0], type_meta[1], "runtime.TypeMeta")
        api_version = span_string(data, type_fields.get(1))
        kind = span_string(data, type_fields.get(2))
        encoding = span_string(data, unknown.get(3))
        content_type = span_string(data, unknown.get(4))
        if encoding:
            raise ProtobufError(f"unsupported contentEncoding {encoding!r}")
        if content_type not in ("", CONTENT_TYPE):
            raise ProtobufError(f"unsupported contentType {content_type!r} in the envelope")
        if not kind or not api_version:
            raise ProtobufError("the envelope names no kind or apiVersion")
        message = self._lookup(api_version, kind)
        start, end = unknown.get(2, (0, 0))
        obj = {"kind": kind, "apiVersion": api_version}
        obj.update(self._decode_message(message, data, start, end))
        return obj

    def encode(self, obj: dict) -> bytes:
        """The protobuf body of a JSON-form object, its kind and apiVersion in the envelope."""
        if not isinstance(obj, dict):
            raise ProtobufError(f"want an object, got {type(obj).__name__}")
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        message = self._lookup(api_version, kind)
        return self.envelope(api_version, kind, self._encode_message(message, obj))

    @staticmethod
    def envelope(api_version: str, kind: str, *raw) -> bytes:
        """The body of an object whose message is ``raw`` (``encode_item``'s, or its parts
        in order, joined here once): the magic prefix and the ``runtime.Unknown`` naming
        its kind."""
        type_meta = bytearray(b"\x0a")
        put_length_delimited(type_meta, api_version.encode())
        type_meta += b"\x12"
        put_length_delimited(type_meta, kind.encode())
        head = bytearray(MAGIC)
        head += b"\x0a"
        put_length_delimited(head, type_meta)
        head += b"\x12"
        put_varint(head, sum(map(len, raw)))
        # contentEncoding and contentType: empty, and written all the same (non-pointer).
        return b"".join((head, *raw, b"\x1a\x00\x22\x00"))

    def normalize(self, obj: dict) -> dict:
        """``decode(encode(obj))`` computed on the dict, without writing a byte: the JSON Go
        writes after reading ``obj`` into its kind's type (Go's field order, unknown fields
        dropped, empty fields by the rules above); ``ProtobufError`` as ``encode`` raises
        it."""
        if not isinstance(obj, dict):
            raise ProtobufError(f"want an object, got {type(obj).__name__}")
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        message = self._lookup(api_version, kind)
        out = {"kind": kind, "apiVersion": api_version}
        out.update(normalize_message(self, message, obj))
        return out

    def normalize_field(self, api_version: str, kind: str, name: str, value):
        """``normalize`` of one top-level field of a ``kind`` object (``spec``): what an
        admission plugin that wrote only there needs, without the rest (a pod's
        managedFields cost as much as its spec)."""
        field = self._lookup(api_version, kind)._by_json_name.get(name)
        if field is None or field.label != SINGLE or field.kind != MESSAGE:
            raise ProtobufError(f"{kind} has no struct field {name!r}")
        try:
            return normalize_message(self, field.message, {} if value is None else value)
        except ProtobufError as err:
            raise err.at(name) from None

    def encode_item(self, api_version: str, kind: str, obj: dict) -> bytes:
        """The message of ``obj`` as a list holds it: no envelope, no kind (what a LIST
        answer joins; a server caches these per stored revision)."""
        return bytes(self._encode_message(self._lookup(api_version, kind), obj))

    def encode_list(self, api_version: str, list_kind: str, list_meta: dict,
                    items: list, framed_items: bool = False) -> bytes:
        """The body of a ``<Kind>List`` from its ``metadata`` and item messages
        (``encode_item``; or, with ``framed_items``, those framed as the list's ``items``
        field: ``list_item_tag``): byte for byte what ``encode`` writes for the whole list."""
        message = self._lookup(api_version, list_kind)
        meta_field = self._field(message, "metadata")
        meta = bytearray(meta_field.tag)
        put_length_delimited(meta, self._encode_message(meta_field.message, list_meta))
        if not framed_items:
            tag = self.list_item_tag(api_version, list_kind)
            items = [framed(tag, item) for item in items]
        # The items are joined once, with the envelope: a list body may be tens of MB.
        return self.envelope(api_version, list_kind, bytes(meta), *items)

    def list_item_tag(self, api_version: str, list_kind: str) -> bytes:
        """The tag of a ``<Kind>List``'s ``items`` field, which frames each item."""
        return self._field(self._lookup(api_version, list_kind), "items").tag

    @staticmethod
    def _field(message: Message, name: str) -> Field:
        return next(field for field in message.struct if field.name == name)

    # -- watch events --------------------------------------------------------------------------

    def encode_watch_event(self, event_type: str, obj: dict) -> bytes:
        """One frame of a protobuf watch stream: a 4-byte big-endian length, then the
        ``WatchEvent`` message (no envelope), its object in its own envelope."""
        raw = self._encode_message(self._messages["meta/v1.WatchEvent"],
                                   {"type": event_type, "object": obj})
        return len(raw).to_bytes(4, "big") + raw

    def decode_watch_event(self, frame: bytes) -> dict:
        """The ``{"type", "object"}`` of one frame written by ``encode_watch_event``."""
        frame = bytes(frame)
        if len(frame) < 4 or int.from_bytes(frame[:4], "big") != len(frame) - 4:
            raise ProtobufError("a watch frame is a 4-byte big-endian length and that many "
                                "bytes")
        return self._decode_message(self._messages["meta/v1.WatchEvent"], frame, 4, len(frame))

    # -- decoding ------------------------------------------------------------------------------

    def _decode_message(self, message: Message, buf: bytes, pos: int, end: int) -> dict:
        fields = message.fields
        seen = {}
        while pos < end:
            key = buf[pos]  # one-byte tags and lengths are the common case: read them inline
            if key < 0x80:
                pos += 1
            else:
                key, pos = read_varint(buf, pos, end)
            number, wire = key >> 3, key & 7
            field = fields.get(number)
            if field is None:
                pos = skip_field(buf, pos, end, wire, number)
                continue
            try:
                if wire == LENGTH:
                    if pos < end and buf[pos] < 0x80:
                        size = buf[pos]
                        pos += 1
                    else:
                        size, pos = read_varint(buf, pos, end)
                    stop = pos + size
                    if stop > end:
                        raise ProtobufError(f"field {number} runs past the end of its message")
                    if field.wire != LENGTH:
                        if field.label != REPEATED:
                            raise ProtobufError(f"field {number} has wire type 2, want "
                                                f"{field.wire}")
                        values = seen.setdefault(number, [])
                        while pos < stop:  # a packed repeated scalar
                            if field.wire == VARINT:
                                value, pos = read_varint(buf, pos, stop)
                                values.append(varint_json(field.kind, value))
                            else:
                                values.append(double_json(_read_double(buf, pos, stop)))
                                pos += 8
                        continue
                    if field.label == SINGLE:
                        if field.kind > BYTES:
                            seen.setdefault(number, []).append((pos, stop))
                        elif field.kind == STRING:
                            seen[number] = buf[pos:stop].decode("utf-8", "replace")
                        else:
                            seen[number] = buf[pos:stop]
                    elif field.label == REPEATED:
                        seen.setdefault(number, []).append(
                            self._value_json(field, buf, pos, stop))
                    else:
                        key, value = self._decode_entry(field, buf, pos, stop)
                        seen.setdefault(number, {})[key] = value
                    pos = stop
                elif wire == VARINT and field.wire == VARINT:
                    value, pos = read_varint(buf, pos, end)
                    if field.label == REPEATED:
                        seen.setdefault(number, []).append(varint_json(field.kind, value))
                    else:
                        seen[number] = value
                elif wire == FIXED64 and field.wire == FIXED64:
                    value = _read_double(buf, pos, end)
                    pos += 8
                    if field.label == REPEATED:
                        seen.setdefault(number, []).append(double_json(value))
                    else:
                        seen[number] = value
                else:
                    raise ProtobufError(f"field {number} has wire type {wire}, "
                                        f"want {field.wire}")
            except ProtobufError as err:
                raise (err if field.inline else err.at(field.name)) from None
        return self._build(message, seen, buf)

    def _build(self, message: Message, seen: dict, buf: bytes) -> dict:
        """The JSON form, in the Go struct's field order, with Go's rules for empty fields."""
        out = {}
        for field in message.struct:
            value = seen.get(field.number, _MISSING)
            if field.label != SINGLE:
                if value is not _MISSING:
                    out[field.name] = value
                elif field.keep:  # a nil slice or map without omitempty: Go writes null
                    out[field.name] = None
                continue
            kind = field.kind
            if kind <= BYTES:
                if value is _MISSING:
                    if field.keep:  # nil pointers and []byte are null, other zeros written
                        out[field.name] = (None if field.pointer or kind == BYTES
                                           else _JSON_ZERO[kind])
                    continue
                if kind == BYTES:
                    value = base64.b64encode(value).decode()
                elif kind == DOUBLE:
                    value = double_json(value)
                elif kind != STRING:
                    value = varint_json(kind, value)
                if value or field.pointer or field.keep:
                    out[field.name] = value
                continue
            if value is _MISSING:
                if field.pointer:
                    if field.keep:
                        out[field.name] = None
                    continue
                data, start, stop = b"", 0, 0
            elif len(value) == 1:
                (start, stop), = value
                data = buf
            else:  # a message field repeated on the wire: its parts merge, as in Go
                data = b"".join(buf[a:b] for a, b in value)
                start, stop = 0, len(data)
            try:
                result = self._value_json(field, data, start, stop)
            except ProtobufError as err:
                raise (err if field.inline else err.at(field.name)) from None
            if field.inline:
                out.update(result)
            elif (field.pointer or field.keep or kind in _ALWAYS
                    or not _is_zero(kind, result)):
                out[field.name] = result
        return out

    def _value_json(self, field: Field, buf: bytes, pos: int, end: int):
        """The JSON form of one length-delimited value of ``field``'s kind."""
        kind = field.kind
        if kind == STRING:
            return buf[pos:end].decode("utf-8", "replace")
        if kind == MESSAGE:
            return self._decode_message(field.message, buf, pos, end)
        if kind == BYTES:
            return base64.b64encode(buf[pos:end]).decode()
        return special_json(self, field, buf, pos, end)

    def _decode_entry(self, field: Field, buf: bytes, pos: int, end: int):
        # The usual map<string, string> entry, short key and value: 0a len key 12 len value.
        if field.kind == STRING and end - pos >= 4 and buf[pos] == 0x0A:
            key_stop = pos + 2 + buf[pos + 1]
            if (buf[pos + 1] < 0x80 and key_stop + 2 <= end and buf[key_stop] == 0x12
                    and buf[key_stop + 1] < 0x80 and key_stop + 2 + buf[key_stop + 1] == end):
                return (buf[pos + 2:key_stop].decode("utf-8", "replace"),
                        buf[key_stop + 2:end].decode("utf-8", "replace"))
        key, value = "", _MISSING
        while pos < end:
            tag_value, pos = read_varint(buf, pos, end)
            number, wire = tag_value >> 3, tag_value & 7
            if wire == LENGTH and (number == 1 or number == 2 and field.value_wire == LENGTH):
                size, pos = read_varint(buf, pos, end)
                stop = pos + size
                if stop > end:
                    raise ProtobufError("map entry runs past its end")
                if number == 1:
                    key = buf[pos:stop].decode("utf-8", "replace")
                else:
                    value = self._value_json(field, buf, pos, stop)
                pos = stop
            elif number == 2 and wire == VARINT and field.value_wire == VARINT:
                raw_value, pos = read_varint(buf, pos, end)
                value = varint_json(field.kind, raw_value)
            elif number == 2 and wire == FIXED64 and field.value_wire == FIXED64:
                value = double_json(_read_double(buf, pos, end))
                pos += 8
            else:
                pos = skip_field(buf, pos, end, wire, number)
        if value is _MISSING:
            value = (_JSON_ZERO[field.kind] if field.kind <= BYTES else
                     [] if field.kind == EXTRA_VALUE else
                     self._value_json(field, b"", 0, 0))
        return key, value

    # -- encoding ------------------------------------------------------------------------------

    def _encode_message(self, message: Message, obj) -> bytearray:
        if not isinstance(obj, dict):
            raise ProtobufError(f"want an object for {message.name}, got "
                                f"{type(obj).__name__}")
        out = bytearray()
        for field in message.by_number:
            if field.inline:  # the embedded struct's fields are the parent's in JSON
                out += field.tag
                put_length_delimited(out, self._encode_message(field.message, obj))
                continue
            value = obj.get(field.name)
            try:
                if field.label == REPEATED:
                    if value:
                        if not isinstance(value, list):
                            raise ProtobufError(f"want a list, got {type(value).__name__}")
                        for index, item in enumerate(value):
                            out += field.tag
                            try:
                                self._put_value(field, item, out)
                            except ProtobufError as err:
                                raise err.at(f"[{index}]") from None
                elif field.label == MAP:
                    if value:
                        self._put_map(field, value, out)
                else:
                    # gogo writes a nil pointer or []byte not at all, other zeros as zeros
                    if value is None and (field.pointer or field.kind == BYTES):
                        continue
                    out += field.tag
                    self._put_value(field, value, out)
            except ProtobufError as err:
                raise err.at(field.name) from None
            except (TypeError, ValueError, AttributeError, UnicodeError) as err:
                raise ProtobufError(str(err), (field.name,)) from None
        return out

    def _put_map(self, field: Field, value, out: bytearray) -> None:
        if not isinstance(value, dict):
            raise ProtobufError(f"want an object, got {type(value).__name__}")
        for key in sorted(value):
            if not isinstance(key, str):
                raise ProtobufError(f"map keys are strings, got {type(key).__name__}")
            entry = bytearray(b"\x0a")
            put_length_delimited(entry, key.encode())
            entry += _ENTRY_VALUE_TAGS[field.value_wire]
            try:
                self._put_value(field, value[key], entry)
            except ProtobufError as err:
                raise err.at(key) from None
            out += field.tag
            put_length_delimited(out, entry)

    def _put_value(self, field: Field, value, out: bytearray) -> None:
        """Append one value of ``field``'s kind (its tag already written); ``None`` is the
        zero value, as an unset non-pointer Go field is."""
        kind = field.kind
        if kind == STRING:
            if value is None:
                value = ""
            elif not isinstance(value, str):
                raise ProtobufError(f"want a string, got {type(value).__name__}")
            put_length_delimited(out, value.encode())
        elif kind == MESSAGE:
            put_length_delimited(out, self._encode_message(field.message,
                                                           {} if value is None else value))
        elif kind == BYTES:
            put_length_delimited(out, base64_bytes(value))
        elif kind == DOUBLE:
            out += _DOUBLE.pack(scalar_wire(DOUBLE, value))
        elif kind < BYTES:
            put_varint(out, scalar_wire(kind, value))
        else:
            put_length_delimited(out, special_bytes(self, field, value))

# -- helpers -----------------------------------------------------------------------------------

_ENTRY_VALUE_TAGS = {VARINT: b"\x10", FIXED64: b"\x11", LENGTH: b"\x12"}


def _read_double(buf: bytes, pos: int, end: int) -> float:
    if pos + 8 > end:
        raise ProtobufError(f"truncated fixed64 at byte {pos}")
    return _DOUBLE.unpack_from(buf, pos)[0]


def _is_zero(kind: int, value) -> bool:
    if kind == INT_OR_STRING:
        return value == 0 or value == ""
    if kind == QUANTITY:
        return value in ("", "0")
    if kind == DURATION:
        return value == "0s"
    return value is None or value == []


# -- the built-in codec --------------------------------------------------------------------

@functools.cache
def default_codec() -> Codec:
    """The codec of the built-in kinds, compiled on first use (its tables never change)."""
    return Codec()


def decode(data: bytes) -> dict:
    """The JSON-form dict of a protobuf body; ``ProtobufError`` if malformed or unknown."""
    return default_codec().decode(data)


def encode(obj: dict) -> bytes:
    """The protobuf body of a JSON-form object; ``ProtobufError`` for an unknown kind."""
    return default_codec().encode(obj)


def normalize(obj: dict) -> dict:
    """A built-in object as Go writes it back after reading it (``Codec.normalize``)."""
    return default_codec().normalize(obj)


def known(api_version: str, kind: str) -> bool:
    """Whether the built-in codec has a schema for ``kind`` of ``api_version``."""
    return default_codec().known(api_version, kind)


def encode_watch_event(event_type: str, obj: dict) -> bytes:
    """One length-prefixed frame of a protobuf watch stream."""
    return default_codec().encode_watch_event(event_type, obj)


def decode_watch_event(frame: bytes) -> dict:
    """The ``{"type", "object"}`` of one length-prefixed protobuf watch frame."""
    return default_codec().decode_watch_event(frame)
