"""Go's JSON forms of metav1.Time, MicroTime and Duration, and of protobuf bytes."""

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

_DURATION_UNITS = {"ns": 1, "us": 1_000, "\u00b5s": 1_000, "\u03bcs": 1_000, "ms": 1_000_000,
                   "s": 1_000_000_000, "m": 60_000_000_000, "h": 3_600_000_000_000}
_DURATION_NUMBER = re.compile(r"(\d*)(?:\.(\d*))?")
_DURATION_UNIT = re.compile(r"[^\d.]*")


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
    if not isinstance(text, str):
        raise ProtobufError(f"want a duration string, got {type(text).__name__}")
    rest = text
    negative = rest[:1] == "-"
    if rest[:1] in ("-", "+"):
        rest = rest[1:]
    if rest == "0":
        return 0
    if not rest:
        raise ProtobufError(f"invalid duration {text!r}")
    total = 0
    while rest:
        number = _DURATION_NUMBER.match(rest)
        whole, fraction = number.group(1), number.group(2) or ""
        if not whole and not fraction:
            raise ProtobufError(f"invalid duration {text!r}")
        rest = rest[number.end():]
        unit = _DURATION_UNIT.match(rest).group(0)
        if unit not in _DURATION_UNITS:
            raise ProtobufError(f"unknown or missing unit {unit!r} in duration {text!r}")
        rest = rest[len(unit):]
        scale = _DURATION_UNITS[unit]
        total += int(whole or "0") * scale
        if fraction:
            total += int(fraction) * scale // 10 ** len(fraction)
    if total > (1 << 63) - (0 if negative else 1):
        raise ProtobufError(f"invalid duration {text!r}: out of range")
    return -total if negative else total


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
