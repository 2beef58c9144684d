"""CronJob schedules and time zones as kube-apiserver 1.32 checks them.

``parse_standard`` is ``cron.ParseStandard`` of github.com/robfig/cron/v3 (v3.0.1, which
kube-apiserver vendors): five fields (minute, hour, day of month, month, day of week)
with ranges, steps, lists, ``*`` and ``?``, month and weekday names, the descriptors
(``@hourly``, ``@every 1h30m``, ...) and a ``TZ=``/``CRON_TZ=`` prefix. It raises
``ScheduleError`` with the parser's own message, which validation reports as is.
``load_location`` is Go's ``time.LoadLocation`` over the tz database.
"""

from __future__ import annotations

import functools
import zoneinfo

from kapiserver.runtime import gotime

#: (min, max, names) of each field (robfig/cron's ``bounds``).
MINUTES = (0, 59, None)
HOURS = (0, 23, None)
DOM = (1, 31, None)
MONTHS = (1, 12, {"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7,
                  "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12})
DOW = (0, 6, {"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6})
DESCRIPTORS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
_INT64_MAX = (1 << 63) - 1
# unicode.IsSpace: what strings.Fields splits on.
_GO_SPACE = frozenset("\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
                      "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


class ScheduleError(ValueError):
    """A schedule the parser refuses; ``str()`` is the parser's message."""


class LocationError(ValueError):
    """A time zone name ``time.LoadLocation`` refuses; ``str()`` is Go's message."""


# -- Go's formatting ----------------------------------------------------------------------------

def _go_quote(text: str) -> str:
    """``strconv.Quote`` (what ``strconv.Atoi``'s errors quote the input with)."""
    from kapiserver.apimachinery.field_errors import go_quote

    return go_quote(text)


def go_fields(text: str) -> list[str]:
    """``strings.Fields``: the words between runs of Unicode white space."""
    words, current = [], []
    for ch in text:
        if ch in _GO_SPACE:
            if current:
                words.append("".join(current))
                current = []
        else:
            current.append(ch)
    if current:
        words.append("".join(current))
    return words


def _go_string_list(words: list[str]) -> str:
    """A ``[]string`` as ``%s`` prints it: ``[a b]``."""
    return "[" + " ".join(words) + "]"


def atoi(text: str) -> int:
    """``strconv.Atoi`` (base 10, optional sign, int64 range) with Go's error text."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not digits.isascii() or not digits.isdigit():
        raise ValueError(f"strconv.Atoi: parsing {_go_quote(text)}: invalid syntax")
    value = int(text)
    if not -_INT64_MAX - 1 <= value <= _INT64_MAX:
        raise ValueError(f"strconv.Atoi: parsing {_go_quote(text)}: value out of range")
    return value


# -- time.ParseDuration -------------------------------------------------------------------------

#: Go's ``time.ParseDuration`` (``@every`` schedules): nanoseconds, or a ``ValueError``
#: (``DurationParseError``) with Go's message.
parse_duration = gotime.parse_duration


# -- time.LoadLocation ----------------------------------------------------------------------------

@functools.lru_cache(maxsize=1024)
def _known_zone(name: str) -> bool:
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return False
    return True


def load_location(name: str) -> None:
    """Go's ``time.LoadLocation``: ``""``, ``UTC`` and ``Local`` always load; other names
    must be in the tz database (the system's, else the bundled ``tzdata``)."""
    if name in ("", "UTC", "Local"):
        return
    if ".." in name or name[0] in "/\\":
        raise LocationError("time: invalid location name")
    if not _known_zone(name):
        raise LocationError(f"unknown time zone {name}")


# -- cron.ParseStandard ---------------------------------------------------------------------------

def _parse_int_or_name(text: str, names) -> int:
    if names is not None and text.lower() in names:
        return names[text.lower()]
    return _must_parse_int(text)


def _must_parse_int(text: str) -> int:
    try:
        number = atoi(text)
    except ValueError as err:
        raise ScheduleError(f"failed to parse int from {text}: {err}") from None
    if number < 0:
        raise ScheduleError(f"negative number ({number}) not allowed: {text}")
    return number


def _check_range(expr: str, bounds) -> None:
    """``getRange``: ``*``/``?``, ``N``, ``N-M``, each with an optional ``/step``."""
    low, high, names = bounds
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    single = len(low_and_high) == 1
    if low_and_high[0] in ("*", "?"):
        start, end = low, high
    else:
        start = _parse_int_or_name(low_and_high[0], names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _parse_int_or_name(low_and_high[1], names)
        else:
            raise ScheduleError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _must_parse_int(range_and_step[1])
        if single:
            # "N/step" means "N-max/step".
            end = high
    else:
        raise ScheduleError(f"too many slashes: {expr}")
    if start < low:
        raise ScheduleError(f"beginning of range ({start}) below minimum ({low}): {expr}")
    if end > high:
        raise ScheduleError(f"end of range ({end}) above maximum ({high}): {expr}")
    if start > end:
        raise ScheduleError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise ScheduleError(f"step of range should be a positive number: {expr}")


def _check_field(field: str, bounds) -> None:
    """``getField``: comma-separated ranges (empty pieces skipped, as FieldsFunc does)."""
    for expr in field.split(","):
        if expr:
            _check_range(expr, bounds)


def _check_descriptor(descriptor: str) -> None:
    if descriptor in DESCRIPTORS:
        return
    every = "@every "
    if descriptor.startswith(every):
        try:
            parse_duration(descriptor[len(every):])
        except ValueError as err:
            raise ScheduleError(f"failed to parse duration {descriptor}: {err}") from None
        return
    raise ScheduleError(f"unrecognized descriptor: {descriptor}")


def parse_standard(spec: str) -> None:
    """``cron.ParseStandard``: return when ``spec`` parses, else raise ``ScheduleError``."""
    if not spec:
        raise ScheduleError("empty spec string")
    if spec.startswith("TZ=") or spec.startswith("CRON_TZ="):
        # Upstream slices up to the first space; without one Go's slice would panic
        # (a 500): here the whole rest is the zone and no fields follow.
        space = spec.find(" ")
        equals = spec.find("=")
        name = spec[equals + 1:space] if space >= 0 else spec[equals + 1:]
        try:
            load_location(name)
        except LocationError as err:
            raise ScheduleError(f"provided bad location {name}: {err}") from None
        spec = spec[space:].strip("".join(_GO_SPACE)) if space >= 0 else ""
    if spec.startswith("@"):
        _check_descriptor(spec)
        return
    fields = go_fields(spec)
    if len(fields) != 5:
        raise ScheduleError(f"expected exactly 5 fields, found {len(fields)}: "
                            f"{_go_string_list(fields)}")
    for field, bounds in zip(fields, (MINUTES, HOURS, DOM, MONTHS, DOW)):
        _check_field(field, bounds)
