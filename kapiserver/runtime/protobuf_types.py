"""Go's JSON forms of metav1.Time, MicroTime, Duration, resource.Quantity, protobuf bytes
and scalars."""

from __future__ import annotations

import base64
import binascii
import datetime
import re

from kapiserver.runtime.protobuf_wire import ProtobufError

# -- metav1.Time and metav1.MicroTime ------------------------------------------------------

# Go's zero time.Time (0001-01-01T00:00:00Z) in Unix seconds: Time.Marshal writes nothing
# for it, and Time.MarshalJSON writes null.
ZERO_TIME_SECONDS = -62135596800
_EPOCH_ORDINAL = datetime.date(1970, 1, 1).toordinal()
_RFC3339 = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?"
                      r"(?:(Z)|([+-])(\d{2}):(\d{2}))\Z")


def format_time(seconds: int, micros: int | None = None) -> str:
    """RFC 3339 in UTC, as Time.MarshalJSON (or MicroTime's, given ``micros``) writes it."""
    days, secs = divmod(seconds, 86400)
    try:
        day = datetime.date.fromordinal(_EPOCH_ORDINAL + days)
    except (ValueError, OverflowError):
        raise ProtobufError(f"timestamp {seconds} is outside the years 1-9999") from None
    hour, rest = divmod(secs, 3600)
    minute, second = divmod(rest, 60)
    text = (f"{day.year:04d}-{day.month:02d}-{day.day:02d}"
            f"T{hour:02d}:{minute:02d}:{second:02d}")
    if micros is None:
        return text + "Z"
    return f"{text}.{micros:06d}Z"


def parse_time(text: str) -> tuple[int, int]:
    """Unix seconds and nanoseconds of an RFC 3339 time (Go's ``time.Parse(time.RFC3339)``)."""
    if not isinstance(text, str):
        raise ProtobufError(f"want an RFC 3339 time string, got {type(text).__name__}")
    match = _RFC3339.match(text)
    if not match:
        raise ProtobufError(f"{text!r} is not an RFC 3339 time")
    year, month, day, hour, minute, second = (int(g) for g in match.group(1, 2, 3, 4, 5, 6))
    try:
        ordinal = datetime.date(year, month, day).toordinal()
    except ValueError as err:
        raise ProtobufError(f"{text!r} is not an RFC 3339 time: {err}") from None
    if hour > 23 or minute > 59 or second > 59:
        raise ProtobufError(f"{text!r} is not an RFC 3339 time: clock out of range")
    seconds = (ordinal - _EPOCH_ORDINAL) * 86400 + hour * 3600 + minute * 60 + second
    if match.group(9):
        offset = int(match.group(10)) * 3600 + int(match.group(11)) * 60
        seconds += -offset if match.group(9) == "+" else offset
    nanos = int((match.group(7) or "0")[:9].ljust(9, "0"))
    return seconds, nanos


# -- metav1.Duration -----------------------------------------------------------------------



def _fraction(value: int, precision: int) -> tuple[str, int]:
    digits = []
    printed = False
    for _ in range(precision):
        digit = value % 10
        printed = printed or digit != 0
        if printed:
            digits.append(str(digit))
        value //= 10
    return ("." + "".join(reversed(digits)) if printed else ""), value


def format_duration(nanos: int) -> str:
    """A duration as Go's ``time.Duration.String`` writes it ("1h0m0s", "1.5s", "300ms")."""
    negative = nanos < 0
    value = -nanos if negative else nanos
    if value < 1_000_000_000:
        if value == 0:
            return "0s"
        precision, unit = ((0, "ns") if value < 1_000 else
                           (3, "\u00b5s") if value < 1_000_000 else (6, "ms"))
        fraction, value = _fraction(value, precision)
        text = f"{value}{fraction}{unit}"
    else:
        fraction, value = _fraction(value, 9)
        text = f"{value % 60}{fraction}s"
        value //= 60
        if value:
            text = f"{value % 60}m{text}"
            value //= 60
            if value:
                text = f"{value}h{text}"
    return "-" + text if negative else text


def parse_duration(text: str) -> int:
    """Nanoseconds of a Go duration string, as ``time.ParseDuration`` reads it."""
    from .gotime import DurationParseError, parse_duration as go_parse_duration

    if not isinstance(text, str):
        raise ProtobufError(f"want a duration string, got {type(text).__name__}")
    try:
        return go_parse_duration(text)
    except DurationParseError as err:
        raise ProtobufError(str(err)) from None


# -- bytes -----------------------------------------------------------------------------------

def base64_bytes(value) -> bytes:
    """The bytes of a protobuf ``bytes`` field's JSON form (standard base64)."""
    if value is None:
        return b""
    if not isinstance(value, str):
        raise ProtobufError(f"want a base64 string, got {type(value).__name__}")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ProtobufError("illegal base64 data") from None


# -- scalars -----------------------------------------------------------------------------------

# The value kinds of protobuf_compile (not imported: that module imports the tables).
_BOOL, _INT32, _INT64, _DOUBLE = 1, 2, 3, 4
_INT_RANGE = {_INT32: (-(1 << 31), (1 << 31) - 1), _INT64: (-(1 << 63), (1 << 63) - 1)}


def scalar_wire(kind: int, value):
    """The Go value of a JSON bool, int32, int64 or float64 field (``None`` is zero): an
    ``int`` for the varint kinds, a ``float`` for float64; ``ProtobufError`` if Go's
    decoder refuses it."""
    if kind == _BOOL:
        if value is None:
            return 0
        if not isinstance(value, bool):
            raise ProtobufError(f"want a boolean, got {type(value).__name__}")
        return int(value)
    if value is None:
        return 0.0 if kind == _DOUBLE else 0
    if kind == _DOUBLE:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ProtobufError(f"want a number, got {type(value).__name__}")
        try:
            return float(value)
        except OverflowError:
            raise ProtobufError(f"{value} does not fit in a float64") from None
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ProtobufError(f"want an integer, got {type(value).__name__}")
    low, high = _INT_RANGE[kind]
    if not low <= value <= high:
        raise ProtobufError(f"{value} does not fit in an {('int32', 'int64')[kind - _INT32]}")
    return value


def varint_json(kind: int, value: int):
    """The JSON value of a decoded varint of a bool, int32 or int64 field."""
    if kind == _BOOL:
        return value != 0
    if kind == _INT32:
        value &= 0xFFFFFFFF
        return value - (1 << 32) if value >= 1 << 31 else value
    return value - (1 << 64) if value >= 1 << 63 else value


def double_json(value: float):
    """A float64 as a JSON reader gets what Go writes: whole numbers below 1e21 are written
    without a fraction (``1``, not ``1.0``), so they read back as ``int``."""
    if value.is_integer() and abs(value) < 1e21:
        return int(value)
    return value


# -- resource.Quantity -------------------------------------------------------------------------

def canonical_quantity(value) -> str:
    """A Quantity's JSON value (a string, a number, ``None`` for zero) or wire string as Go
    writes it back: parsed (``UnmarshalJSON``) and printed (``String()``, the canonical
    form: ``1000m`` is ``"1"``). The one place the codec reads quantities: ``encode``,
    ``decode`` and ``normalize`` all call it. ``ProtobufError`` with upstream's text for
    what ``ParseQuantity`` refuses (``""`` among them)."""
    # Imported on first use: the parser is not needed to start a server.
    from kapiserver.apimachinery import quantity

    try:
        return quantity.from_json(value).canonical()
    except quantity.QuantityError as err:
        raise ProtobufError(str(err)) from None
