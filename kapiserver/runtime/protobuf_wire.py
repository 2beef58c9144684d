"""Protobuf wire primitives: varints, tags, skipping and small fixed messages."""

from __future__ import annotations

_MASK64 = (1 << 64) - 1

VARINT, FIXED64, LENGTH, START_GROUP, END_GROUP, FIXED32 = 0, 1, 2, 3, 4, 5


class ProtobufError(ValueError):
    """A body that is not a well-formed Kubernetes protobuf message, or an unknown kind.

    ``path`` names the field the error was found in (``metadata.labels``), outermost first.
    """

    def __init__(self, message: str, path: tuple[str, ...] = ()):
        super().__init__(message)
        self.message = message
        self.path = path

    def at(self, segment: str) -> ProtobufError:
        """The same error, one field further out."""
        return ProtobufError(self.message, (segment,) + self.path)

    def __str__(self) -> str:
        if not self.path:
            return self.message
        where = self.path[0] + "".join(s if s.startswith("[") else "." + s
                                       for s in self.path[1:])
        return f"{where}: {self.message}"


# -- varints -------------------------------------------------------------------------------

def read_varint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """The unsigned varint at ``pos`` and the position after it."""
    if pos >= end:
        raise ProtobufError(f"truncated varint at byte {pos}")
    b = buf[pos]
    if b < 0x80:
        return b, pos + 1
    result = b & 0x7F
    shift = 7
    pos += 1
    while True:
        if pos >= end:
            raise ProtobufError(f"truncated varint at byte {pos}")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result & _MASK64, pos
        shift += 7
        if shift >= 70:
            raise ProtobufError(f"varint longer than 10 bytes at byte {pos}")


def put_varint(out: bytearray, value: int) -> None:
    """Append ``value`` as a varint; negatives as their 64-bit two's complement, as Go does."""
    if value < 0:
        value &= _MASK64
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def varint_bytes(value: int) -> bytes:
    out = bytearray()
    put_varint(out, value)
    return bytes(out)


def put_length_delimited(out: bytearray, data: bytes | bytearray) -> None:
    put_varint(out, len(data))
    out += data


def framed(field_tag: bytes, data: bytes | memoryview) -> bytes:
    """``data`` as one length-delimited field: its tag, its length, itself."""
    size = len(data)  # one or two bytes of length for any object under 16 KiB
    return b"".join((field_tag, bytes((size,)) if size < 0x80 else
                     bytes(((size & 0x7F) | 0x80, size >> 7)) if size < 0x4000
                     else varint_bytes(size), data))


def tag(number: int, wire_type: int) -> bytes:
    return varint_bytes(number << 3 | wire_type)


def as_int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def as_int64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def skip_field(buf: bytes, pos: int, end: int, wire_type: int, number: int) -> int:
    """The position after an unknown field's value (unknown fields are ignored, as Go does)."""
    if wire_type == VARINT:
        return read_varint(buf, pos, end)[1]
    if wire_type == LENGTH:
        size, pos = read_varint(buf, pos, end)
        pos += size
    elif wire_type == FIXED64:
        pos += 8
    elif wire_type == FIXED32:
        pos += 4
    else:
        raise ProtobufError(f"field {number} has unsupported wire type {wire_type}")
    if pos > end:
        raise ProtobufError(f"field {number} runs past the end of its message")
    return pos


def sub_fields(buf, pos, end, strings=(), raw=(), repeated=()) -> dict:
    """The fields of a small fixed message (Timestamp, IntOrString, ...): varints as ints,
    the ``strings`` fields decoded, the ``raw`` ones as bytes; unknown fields skipped."""
    out = {}
    while pos < end:
        key, pos = read_varint(buf, pos, end)
        number, wire = key >> 3, key & 7
        if wire == VARINT and number not in strings and number not in raw:
            out[number], pos = read_varint(buf, pos, end)
        elif wire == LENGTH and (number in strings or number in raw):
            size, pos = read_varint(buf, pos, end)
            if pos + size > end:
                raise ProtobufError(f"field {number} runs past the end of its message")
            value = buf[pos:pos + size]
            if number in strings:
                value = value.decode("utf-8", "replace")
            if number in repeated:
                out.setdefault(number, []).append(value)
            else:
                out[number] = value
            pos += size
        else:
            pos = skip_field(buf, pos, end, wire, number)
    return out


def spans(buf: bytes, pos: int, end: int, what: str) -> dict:
    """Positions ``(start, end)`` of the length-delimited fields of message ``what`` (the
    last of each number), other fields skipped."""
    out = {}
    try:
        while pos < end:
            key, pos = read_varint(buf, pos, end)
            number, wire = key >> 3, key & 7
            if wire == LENGTH:
                size, pos = read_varint(buf, pos, end)
                if pos + size > end:
                    raise ProtobufError(f"field {number} runs past the end of its message")
                out[number] = (pos, pos + size)
                pos += size
            else:
                pos = skip_field(buf, pos, end, wire, number)
    except ProtobufError as err:
        raise err.at(what) from None
    return out


def span_string(buf: bytes, span) -> str:
    """The string at ``span`` (``""`` for ``None``)."""
    return "" if span is None else buf[span[0]:span[1]].decode("utf-8", "replace")
