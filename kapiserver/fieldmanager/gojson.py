"""JSON text written byte for byte as Go's encoders write it, for text that is compared.

FieldsV1 keys embed JSON (``k:{"name":"x"}``, ``v:"kubernetes"``) and manager
identifiers are JSON strings that upstream sorts, so the exact bytes matter: Go escapes
``<``, ``>`` and ``&`` (``\\u003c``…), U+2028 and U+2029, writes control characters other
than ``\\n``, ``\\r`` and ``\\t`` as ``\\u00XX``, leaves other non-ASCII text as is, sorts
map keys, and writes float64 in ``'f'`` form between 1e-6 and 1e21.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

_SHORT = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_HTML = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
         "\u2028": "\\u2028", "\u2029": "\\u2029"}


#: A string Go writes as it is, between quotes (most names and values).
_PLAIN = re.compile('[^"\\\\\x00-\x1f<>&\u2028\u2029\ud800-\udfff]*\\Z')


def go_string(text: str) -> str:
    """A JSON string as jsoniter's standard-library-compatible config writes it."""
    if _PLAIN.match(text):
        return '"' + text + '"'
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in _SHORT:
            out.append(_SHORT[ch])
        elif ch in _HTML:
            out.append(_HTML[ch])
        elif code < 0x20:
            out.append(f"\\u00{code:02x}")
        elif 0xD800 <= code <= 0xDFFF:
            # A lone surrogate is invalid UTF-8 to Go, which writes U+FFFD for it.
            out.append("\\ufffd")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def go_float(value: float) -> str:
    """A float64 as ``encoding/json`` writes it (``'f'`` form, or ``'e'`` far from 1)."""
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"unsupported value: {value!r}")
    if value == int(value) and abs(value) < 1e21:
        return str(int(value)) if value or str(value)[0] != "-" else "-0"
    magnitude = abs(value)
    if magnitude < 1e-6 or magnitude >= 1e21:
        mantissa, _, exponent = repr(value).partition("e")
        exp = int(exponent)
        return f"{mantissa}e{'-' if exp < 0 else '+'}{abs(exp)}"
    return format(Decimal(repr(value)), "f")


def go_json(value: Any) -> str:
    """Compact JSON for a decoded JSON value, as Go writes an ``interface{}``."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, str):
        return go_string(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{go_string(k)}:{go_json(value[k])}"
                              for k in sorted(value)) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(go_json(item) for item in value) + "]"
    raise TypeError(f"not a JSON value: {value!r}")
