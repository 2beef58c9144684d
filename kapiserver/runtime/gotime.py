"""``metav1.Time`` and ``metav1.MicroTime`` as upstream decodes and writes them.

A built-in kind's time fields are decoded with Go's ``time.Parse`` (``time.RFC3339`` for
``Time``, ``"2006-01-02T15:04:05.000000Z07:00"`` for ``MicroTime``, which wants exactly six
fractional digits) and written back in UTC (``Time`` to the second, ``MicroTime`` to the
microsecond): ``2026-11-25T05:04:08.955864+01:00`` is stored as
``2026-11-25T04:04:08.955864Z``, and ``yesterday`` is refused with Go's own message
(``parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as
"2006"``). ``normalize_times`` does both for a whole object, guided by the kind's protobuf
schema tables, which know which fields are times.
"""

from __future__ import annotations

from ..apimachinery.field_errors import go_quote
from .protobuf_compile import MAP, MESSAGE, MICROTIME, REPEATED, TIME

RFC3339 = "2006-01-02T15:04:05Z07:00"
RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"
#: The layouts' pieces, as Go's ``nextStdChunk`` cuts them: (literal prefix, std chunk).
_CHUNKS = {
    RFC3339: (("", "2006"), ("-", "01"), ("-", "02"), ("T", "15"), (":", "04"), (":", "05"),
              ("", "Z07:00")),
    RFC3339_MICRO: (("", "2006"), ("-", "01"), ("-", "02"), ("T", "15"), (":", "04"),
                    (":", "05"), ("", ".000000"), ("", "Z07:00")),
}


class TimeParseError(ValueError):
    """Go's ``time.ParseError``; its text is Go's."""


def _error(layout: str, value: str, layout_elem: str, value_elem: str,
           message: str = "") -> TimeParseError:
    if message:
        return TimeParseError(f"parsing time {go_quote(value)}{message}")
    return TimeParseError(f"parsing time {go_quote(value)} as {go_quote(layout)}: cannot "
                          f"parse {go_quote(value_elem)} as {go_quote(layout_elem)}")


def _getnum(s: str, fixed: bool):
    """Go's ``getnum``: one or two leading digits (two when ``fixed``)."""
    if not s[:1].isdigit() or not s[:1].isascii():
        return None, s
    if not (s[1:2].isdigit() and s[1:2].isascii()):
        if fixed:
            return None, s
        return int(s[0]), s[1:]
    return int(s[:2]), s[2:]


def days_in_month(year: int, month: int) -> int:
    """The days of ``month`` in ``year`` (proleptic Gregorian)."""
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (any year, 0 included)."""
    year -= month <= 2
    era = year // 400  # floor division: the algorithm's truncation of shifted values
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _civil_from_days(days: int) -> tuple[int, int, int]:
    days += 719468
    era = days // 146097
    doe = days - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + (3 if mp < 10 else -9)
    return yoe + era * 400 + (month <= 2), month, day


def parse(value: str, layout: str = RFC3339) -> tuple[int, int]:
    """``time.Parse(layout, value)`` for the two layouts: (Unix seconds, nanoseconds);
    ``TimeParseError`` with Go's message otherwise."""
    original, rest = value, value
    year = month = day = hour = minute = second = nanos = offset = 0
    for prefix, std in _CHUNKS[layout]:
        if prefix:
            if not rest.startswith(prefix):
                raise _error(layout, original, prefix, rest)
            rest = rest[len(prefix):]
        hold, bad, out_of_range = rest, False, ""
        if std == "2006":
            if len(rest) < 4 or not rest[:4].isascii() or not rest[:4].isdigit():
                bad = True
            else:
                year, rest = int(rest[:4]), rest[4:]
        elif std in ("01", "02", "04", "05", "15"):
            number, rest = _getnum(rest, std != "15")
            if number is None:
                bad = True
            elif std == "01":
                month = number
                out_of_range = "month" if not 1 <= number <= 12 else ""
            elif std == "02":
                day = number  # checked against the month once all is read
            elif std == "15":
                hour = number
                out_of_range = "hour" if number >= 24 else ""
            elif std == "04":
                minute = number
                out_of_range = "minute" if number >= 60 else ""
            else:
                second = number
                out_of_range = "second" if number >= 60 else ""
                if layout == RFC3339 and len(rest) >= 2 and rest[0] in ".," \
                        and rest[1].isdigit() and rest[1].isascii():
                    # A fractional second the layout does not name: taken all the same.
                    n = 2
                    while n < len(rest) and rest[n].isdigit() and rest[n].isascii():
                        n += 1
                    nanos = int((rest[1:n] + "000000000")[:9])
                    rest = rest[n:]
        elif std == ".000000":
            if len(rest) < 7 or rest[0] not in ".," or not rest[1:7].isascii() \
                    or not rest[1:7].isdigit():
                bad = True
            else:
                nanos, rest = int(rest[1:7]) * 1000, rest[7:]
        else:  # Z07:00
            if rest[:1] == "Z":
                rest = rest[1:]
            elif len(rest) < 6 or rest[3] != ":":
                bad = True
            else:
                sign, hours, minutes, rest = rest[0], rest[1:3], rest[4:6], rest[6:]
                hh, _ = _getnum(hours, True)
                mm, _ = _getnum(minutes, True) if hh is not None else (None, "")
                if hh is None or mm is None or sign not in "+-":
                    bad = True
                else:
                    out_of_range = ("time zone offset hour" if hh > 24 else
                                    "time zone offset minute" if mm > 60 else "")
                    offset = (hh * 60 + mm) * 60 * (-1 if sign == "-" else 1)
        if out_of_range:
            raise _error(layout, original, std, rest, f": {out_of_range} out of range")
        if bad:
            raise _error(layout, original, std, hold)
    if rest:
        raise _error(layout, original, "", rest, f": extra text: {go_quote(rest)}")
    if day < 1 or day > days_in_month(year, month):
        raise _error(layout, original, "", rest, ": day out of range")
    seconds = (days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60
               + second - offset)
    return seconds, nanos


def format_utc(seconds: int, nanos: int, micro: bool) -> str:
    """``t.UTC().Format(RFC3339)`` (``Time``) or ``Format(RFC3339Micro)`` (``MicroTime``)."""
    days, rest = divmod(seconds, 86400)
    year, month, day = _civil_from_days(days)
    hour, rest = divmod(rest, 3600)
    minute, second = divmod(rest, 60)
    text = f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}"
    return text + (f".{nanos // 1000:06d}Z" if micro else "Z")


def normalize(value, micro: bool) -> str:
    """A time field's JSON value as upstream writes it back; ``TimeParseError`` if Go
    cannot read it."""
    seconds, nanos = parse(value, RFC3339_MICRO if micro else RFC3339)
    return format_utc(seconds, nanos, micro)


# -- objects ------------------------------------------------------------------------------------

_JSON_KINDS = ((bool, "bool"), (int, "number"), (float, "number"), (list, "array"),
               (dict, "object"))


def normalize_times(obj: dict, api_version: str, kind: str, codec=None) -> None:
    """Write every time field of ``obj`` (a built-in ``kind``) as upstream stores it;
    ``TimeParseError`` with the decoder's message for one it cannot read. Kinds the schema
    tables do not know are left alone."""
    # The schema tables load with the first write, not with this module.
    from .protobuf import default_codec

    codec = default_codec() if codec is None else codec
    if not codec.known(api_version, kind):
        return
    _walk(obj, codec._lookup(api_version, kind), ())


def _go_struct(message) -> str:
    return message.name.rpartition(".")[2]


def _walk(value, message, stack: tuple) -> None:
    if not isinstance(value, dict):
        return
    fields = message._by_json_name
    for key, child in value.items():
        field = fields.get(key)
        if field is None or child is None:
            continue
        if field.kind in (TIME, MICROTIME) and field.label not in (REPEATED, MAP):
            if not isinstance(child, str):
                json_kind = next((name for t, name in _JSON_KINDS if isinstance(child, t)),
                                 "value")
                where = ".".join((*stack, key))
                raise TimeParseError(f"json: cannot unmarshal {json_kind} into Go struct "
                                     f"field {_go_struct(message)}.{where} of type string")
            value[key] = normalize(child, field.kind == MICROTIME)
        elif field.kind == MESSAGE:
            inner = (*stack, key)
            if field.label == REPEATED and isinstance(child, list):
                for item in child:
                    _walk(item, field.message, inner)
            elif field.label == MAP and isinstance(child, dict):
                for item in child.values():
                    _walk(item, field.message, inner)
            else:
                _walk(child, field.message, inner)


# -- time.ParseDuration ----------------------------------------------------------------------

class DurationParseError(ValueError):
    """``time.ParseDuration``'s error; its text is Go's."""


_DURATION_UNITS = {"ns": 1, "us": 1_000, "\u00b5s": 1_000, "\u03bcs": 1_000, "ms": 1_000_000,
                   "s": 1_000_000_000, "m": 60_000_000_000, "h": 3_600_000_000_000}
_MAX_DURATION = 1 << 63


def _duration_quote(text: bytes) -> str:
    """``time.quote``: non-ASCII and control bytes as ``\\xNN``, ``"`` and ``\\`` escaped."""
    out = ['"']
    for byte in text:
        if byte >= 0x80 or byte < 0x20:
            out.append(f"\\x{byte:02x}")
        else:
            ch = chr(byte)
            out.append("\\" + ch if ch in '"\\' else ch)
    out.append('"')
    return "".join(out)


def parse_duration(text: str) -> int:
    """Nanoseconds of a Go duration (``1m30s``, ``-1.5h``, ``0``), as ``time.ParseDuration``
    reads it; ``DurationParseError`` with Go's message otherwise."""
    raw = text.encode()
    invalid = DurationParseError(f"time: invalid duration {_duration_quote(raw)}")
    s, neg = raw, False
    if s[:1] in (b"-", b"+"):
        neg, s = s[:1] == b"-", s[1:]
    if s == b"0":
        return 0
    if not s:
        raise invalid
    total = 0
    while s:
        if not (s[:1] == b"." or s[:1].isdigit()):
            raise invalid
        i = 0
        while i < len(s) and 0x30 <= s[i] <= 0x39:
            i += 1
        whole, s = int(s[:i] or b"0"), s[i:]
        if whole >= _MAX_DURATION:
            raise invalid  # leadingInt's overflow
        pre, post, fraction, scale = i > 0, False, 0, 1.0
        if s[:1] == b".":
            s = s[1:]
            j = 0
            overflow = False
            while j < len(s) and 0x30 <= s[j] <= 0x39:
                if not overflow:
                    if fraction > (_MAX_DURATION - 1) // 10:
                        overflow = True  # leadingFraction stops adding precision
                    else:
                        fraction = fraction * 10 + (s[j] - 0x30)
                        scale *= 10
                j += 1
            post, s = j > 0, s[j:]
        if not pre and not post:
            raise invalid
        k = 0
        while k < len(s) and not (s[k] == 0x2E or 0x30 <= s[k] <= 0x39):
            k += 1
        if k == 0:
            raise DurationParseError(f"time: missing unit in duration {_duration_quote(raw)}")
        unit_text, s = s[:k], s[k:]
        unit = _DURATION_UNITS.get(unit_text.decode(errors="replace"))
        if unit is None:
            raise DurationParseError(f"time: unknown unit {_duration_quote(unit_text)} in "
                                     f"duration {_duration_quote(raw)}")
        if whole > _MAX_DURATION // unit:
            raise invalid
        value = whole * unit
        if fraction > 0:
            value += int(float(fraction) * (float(unit) / scale))
            if value > _MAX_DURATION:
                raise invalid
        total += value
        if total > _MAX_DURATION:
            raise invalid
    if neg:
        return -total
    if total > _MAX_DURATION - 1:
        raise invalid
    return total
