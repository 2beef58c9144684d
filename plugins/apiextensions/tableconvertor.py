"""Tables of custom resources from a CRD version's ``additionalPrinterColumns``.

Upstream's ``registry/customresource/tableconvertor``: the columns are ``Name`` then one
per printer column (a version without any gets upstream's default ``Age`` column, as
``GetColumnsForVersion`` serves it); a row is the object's name then, per column, the
first value its JSONPath finds, typed as the column says (``cellForJSONValue``): a value
of another type is ``None``; a ``string`` column prints any value (maps and lists as
JSON); a ``date`` column shows the age of an RFC 3339 timestamp, as upstream's server
does (``5m``), or ``<invalid>``/``<unknown>``.
"""

from __future__ import annotations

import logging
import re
import time

from kapiserver.registry.printers import AGE_COLUMN, NAME_COLUMN, human_duration
from kapiserver.runtime.gotime import days_from_civil, days_in_month

from .jsonpath import JSONPathError, find, parse, to_text

log = logging.getLogger(__name__)

#: What upstream serves for a version without printer columns.
DEFAULT_COLUMNS = ({"name": "Age", "type": "date", "description": AGE_COLUMN["description"],
                    "jsonPath": ".metadata.creationTimestamp"},)
_RFC3339 = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})"
                      r"(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})")


class TableConvertor:
    """The columns and cells of one CRD version's Tables (see the module docstring)."""

    def __init__(self, columns: list[dict]):
        self._definitions = [NAME_COLUMN]
        self._cells = []
        for column in columns or DEFAULT_COLUMNS:
            path = column.get("jsonPath", "")
            try:
                compiled = parse(path)
            except JSONPathError as err:
                # Upstream keeps the columns before the bad one and logs it; validation
                # refuses such paths, so only a CRD stored by an older server has one.
                log.info("printer column %r: unrecognized column definition %r: %s",
                         column.get("name"), path, err)
                break
            self._definitions.append({
                "name": column.get("name", ""), "type": column.get("type", ""),
                "format": column.get("format", ""),
                "description": column.get("description") or
                f"Custom resource definition column (in JSONPath format): {path}",
                "priority": column.get("priority", 0)})
            self._cells.append((compiled, column.get("type", "")))

    def columns(self) -> list[dict]:
        """``metav1.TableColumnDefinition``s: Name, then the printer columns."""
        return list(self._definitions)

    def cells(self, obj: dict) -> list:
        """One row's cells for ``obj``."""
        cells = [(obj.get("metadata") or {}).get("name", "")]
        for compiled, kind in self._cells:
            found = find(compiled, obj)
            if not found:
                cells.append(None)
            elif kind == "string":
                cells.append(to_text(found[0]))
            else:
                cells.append(cell_for_json_value(kind, found[0]))
        return cells


def cell_for_json_value(kind: str, value):
    """Upstream's ``cellForJSONValue``: ``value`` as a cell of a column of type ``kind``,
    or None when it is not of that type."""
    if value is None or isinstance(value, bool) and kind != "boolean":
        return None
    if kind == "integer":
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value == value and abs(value) != float("inf"):
            return int(value)
    elif kind == "number":
        if isinstance(value, int):
            return value
        if isinstance(value, float):
            # Go writes a whole float64 without a fraction ("3", not "3.0").
            return int(value) if value.is_integer() and abs(value) < 1e21 else value
    elif kind == "boolean":
        if isinstance(value, bool):
            return value
    elif kind == "string":
        if isinstance(value, str):
            return value
    elif kind == "date":
        if isinstance(value, str):
            return human_date(value)
    return None


def human_date(text: str, now: float | None = None) -> str:
    """``metatable.ConvertToHumanReadableDateType`` of a ``metav1.Time`` query value."""
    if text in ("", "null"):
        return "<unknown>"
    seconds = parse_rfc3339(text)
    if seconds is None:
        return "<invalid>"
    if seconds == _ZERO_TIME:
        return "<unknown>"
    # time.Since saturates at the largest Duration (about 292 years).
    age = min(max((time.time() if now is None else now) - seconds, -_MAX_DURATION),
              _MAX_DURATION)
    return human_duration(age)


#: ``time.Time{}``: January 1, year 1, 00:00:00 UTC, in seconds from the epoch.
_ZERO_TIME = -62135596800
_MAX_DURATION = (2 ** 63 - 1) / 1e9


def parse_rfc3339(text: str) -> float | None:
    """Seconds from the epoch of an RFC 3339 time as Go's ``time.Parse(time.RFC3339)``
    reads it (fractional seconds allowed, ranges checked), or None."""
    match = _RFC3339.fullmatch(text)
    if match is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    fraction, zone = match.group(7), match.group(8)
    if not (1 <= month <= 12 and 1 <= day <= days_in_month(year, month)
            and hour < 24 and minute < 60 and second < 60):
        return None
    offset = 0
    if zone != "Z":
        zone_hours, zone_minutes = int(zone[1:3]), int(zone[4:6])
        if zone_hours > 23 or zone_minutes > 59:
            return None
        offset = (zone_hours * 3600 + zone_minutes * 60) * (1 if zone[0] == "+" else -1)
    days = days_from_civil(year, month, day)
    seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset
    return seconds + float(fraction) if fraction and int(fraction[1:]) else seconds


