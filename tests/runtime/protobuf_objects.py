"""Hypothesis strategies: JSON objects of any kind the protobuf tables know, drawn from the
compiled messages (set, unset, zero, null and unknown fields; inline structs' fields in
their parent; every special type in the forms clients send)."""

import base64

from hypothesis import strategies as st

from kapiserver.runtime import protobuf_compile as pc
from kapiserver.runtime.protobuf_types import format_duration, format_time

TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)
KEYS = st.text("abcXYZ-._/0é", min_size=1, max_size=6)
SECONDS = st.integers(-62135596799, 253402300799)
JSON_SCALARS = st.none() | st.booleans() | st.integers(-2**53, 2**53) | TEXT | st.floats(
    allow_nan=False, allow_infinity=False, width=64)
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(KEYS, inner, max_size=3), max_leaves=6)
QUANTITIES = st.sampled_from(["0", "1", "500m", "1Gi", "2.5", "100Mi", "1e3", ""])


@st.composite
def times(draw, micro=False):
    """RFC 3339 times, some with an offset (Go reads them and writes them back in UTC)."""
    seconds = draw(SECONDS)
    fraction = f".{draw(st.integers(0, 999_999)):06d}" if micro else ""
    offset = draw(st.sampled_from([0, 0, 3600, -5400]))
    local = (format_time(seconds + offset)[:-1]
             if -62135596800 < seconds + offset < 253402300799 else None)
    if not offset or local is None:
        return format_time(seconds)[:-1] + fraction + "Z"
    sign = "+" if offset > 0 else "-"  # the local time is UTC + offset
    return f"{local}{fraction}{sign}{abs(offset) // 3600:02d}:{abs(offset) % 3600 // 60:02d}"


def _scalar(kind):
    return {
        pc.STRING: TEXT,
        pc.BOOL: st.booleans(),
        pc.INT32: st.integers(-2**31, 2**31 - 1),
        pc.INT64: st.integers(-2**63, 2**63 - 1),
        pc.DOUBLE: st.integers(-2**40, 2**40) | st.floats(allow_nan=False,
                                                          allow_infinity=False),
        pc.BYTES: st.binary(max_size=6).map(lambda b: base64.b64encode(b).decode()),
        pc.TIME: times(),
        pc.MICROTIME: times(micro=True),
        pc.DURATION: st.integers(-2**40, 2**40).map(format_duration) | st.sampled_from(
            ["1h", "90m", "1.5s", "0"]),
        pc.QUANTITY: QUANTITIES,
        pc.INT_OR_STRING: st.integers(-2**31, 2**31 - 1) | TEXT,
        pc.RAW_EXTENSION: JSON_VALUES,
        pc.FIELDS_V1: st.dictionaries(KEYS, st.just({}), max_size=3),
        pc.EXTRA_VALUE: st.lists(TEXT, max_size=3),
        pc.OBJECT: st.none(),
    }[kind]


def value(field, depth):
    """A value of one field: usually of its type, sometimes null or empty."""
    one = _one(field, depth)
    if field.label == pc.REPEATED:
        typed = st.lists(one, max_size=3)
    elif field.label == pc.MAP:
        typed = st.dictionaries(KEYS, one, max_size=3)
    else:
        typed = one
    return typed | st.sampled_from([None, "", 0, False, [], {}]).filter(
        lambda v: _empty_fits(field, v))


def _empty_fits(field, empty):
    """Empty values of a JSON type the field's Go type reads (Go refuses the others)."""
    if empty is None:
        return True
    if field.label == pc.REPEATED:
        return empty == [] and not isinstance(empty, bool)
    if field.label == pc.MAP or field.kind in (pc.MESSAGE, *pc.SCHEMA_WRAPPERS):
        return empty == {} and isinstance(empty, dict)
    kind = field.kind
    if kind in (pc.STRING, pc.BYTES, pc.QUANTITY):
        return empty == "" and isinstance(empty, str)
    if kind == pc.BOOL:
        return empty is False
    if kind in (pc.INT32, pc.INT64, pc.DOUBLE, pc.INT_OR_STRING):
        return type(empty) is int or (kind == pc.INT_OR_STRING and empty == "")
    return kind in (pc.RAW_EXTENSION, pc.FIELDS_V1)


def _one(field, depth):
    kind = field.kind
    if kind == pc.MESSAGE:
        return message(field.message, depth + 1)
    if kind in pc.SCHEMA_WRAPPERS:
        schema = message(field.message, depth + 2)
        if kind == pc.SCHEMA_OR_BOOL:
            return st.booleans() | schema
        if kind == pc.SCHEMA_OR_STRINGS:
            return st.lists(TEXT, max_size=2) | schema
        return st.lists(schema, max_size=2) | schema
    return _scalar(kind)


def message(msg, depth=0):
    """A JSON object of ``msg``: a few of its fields (none below a depth, as JSONSchemaProps
    nests without end), now and then an unknown one."""
    if depth > 4:
        return st.just({})
    fields = msg.ordered

    @st.composite
    def build(draw):
        chosen = draw(st.lists(st.sampled_from(fields), max_size=min(len(fields), 6),
                               unique_by=lambda f: f.name)) if fields else []
        out = {f.name: draw(value(f, depth)) for f in chosen}
        if draw(st.integers(0, 9)) == 0:
            out["unknownField"] = draw(JSON_VALUES)
        return out

    return build()


def kind_object(codec, api_version, kind):
    """An object of ``kind``: its message's fields, kind and apiVersion first."""
    return message(codec._lookup(api_version, kind)).map(
        lambda body: {"kind": kind, "apiVersion": api_version, **body})
