"""Values printed as upstream prints them: Go's ``fmt`` (``%v``, ``%T``) and the
JSON ``PrintResults`` writes for maps and lists."""

from __future__ import annotations

import math
from decimal import Decimal


def to_text(value) -> str:
    """``value`` as upstream's ``PrintResults`` writes one result: maps and lists as
    compact JSON (Go's ``json.Marshal``), other values with Go's ``fmt`` (``true``,
    ``1.5``, ``1e+06``), a null as ``<no value>`` (what ``reflect.ValueOf(nil)`` prints)."""
    if value is None:
        return "<no value>"
    if isinstance(value, (dict, list)):
        from kapiserver.fieldmanager.gojson import go_json

        return go_json(value)
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float):
        return go_float_v(value)
    return str(value)


def go_print(value) -> str:
    """Go's ``%v`` of a decoded JSON value (``map[k:v]`` with sorted keys, ``[a b]``)."""
    if value is None:
        return "<nil>"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{key}:{go_print(value[key])}"
                                 for key in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_print(item) for item in value) + "]"
    return to_text(value)


def go_float_v(value: float) -> str:
    """Go's ``%v`` of a float64 (``%g`` with the shortest digits): ``%e`` form when the
    exponent is below -4 or at least 6 (``1e+06``, ``1.5e-05``), else ``%f`` form."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1, value) < 0 else "0"
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    text = "".join(map(str, digits))
    point = len(text) + exponent  # where the decimal point goes in ``text``
    prefix = "-" if sign else ""
    scientific = point - 1
    if scientific < -4 or scientific >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if scientific < 0 else '+'}{abs(scientific):02d}"
    if point <= 0:
        return f"{prefix}0.{'0' * -point}{text}"
    if point >= len(text):
        return prefix + text + "0" * (point - len(text))
    return f"{prefix}{text[:point]}.{text[point:]}"
