"""Hypothesis draws of JSON values from OpenAPI schemas, and of ways to break them.

``schema_value`` follows a schema (types, enums, formats, Kubernetes' int-or-string and
quantities), preferring the small vocabulary Kubernetes objects are made of (DNS labels,
quantities, protocol names) so that many generated objects get past validation and into
the deeper code; objects draw a few of their optional properties, and nesting is bounded.
``break_value`` swaps a value for one of the wrong type, an over-long string, deep
nesting or an unknown field.
"""

from __future__ import annotations

import base64

from hypothesis import strategies as st

from .openapi import Document

#: Past this depth objects only get their required properties, and arrays stay empty.
MAX_DEPTH = 7

WORDS = ("a", "b", "fuzz-a", "fuzz-b", "web", "app", "x", "main", "1", "0", "10", "80",
         "100m", "1Gi", "500Mi", "TCP", "UDP", "Always", "IfNotPresent", "Never", "None",
         "Exists", "In", "NotIn", "Equal", "true", "False", "RollingUpdate", "Recreate",
         "ClusterIP", "NodePort", "Retain", "Delete", "ReadWriteOnce", "Filesystem",
         "example.com/x", "kubernetes.io/y", "nginx:1.27", "192.0.2.1", "2001:db8::1",
         "192.0.2.0/24", "25%", "/", "/tmp", "*", "get", "pods", "apps", "v1", "ns",
         "metadata.name", "2024-01-02T03:04:05Z", "key=value", "")
DNS_LABELS = ("a", "fuzz-a", "fuzz-b", "web", "x1", "main")
QUANTITIES = ("0", "1", "100m", "1.5", "1Gi", "500Mi", "2k", "1e3", "1E", "0.001", "-1",
              "1Ki", "12345678901234567890", "1m", "bogus", "")
TIMES = ("2024-01-02T03:04:05Z", "2024-01-02T03:04:05.123456Z", "1970-01-01T00:00:00Z",
         "2024-01-02T03:04:05+02:00", "9999-12-31T23:59:59Z", "2024-13-45T99:99:99Z",
         "yesterday", "")


def weighted(percent: int):
    """A boolean true ``percent`` % of the time (Hypothesis has no weighted booleans)."""
    return st.integers(0, 99).map(lambda n: n < percent)


label_keys = st.sampled_from(("app", "tier", "example.com/role", "a", "fuzz.kapiserver.io/x",
                              "kubernetes.io/metadata.name"))
words = st.sampled_from(WORDS)
short_text = st.text(max_size=12)
strings = st.one_of(words, words, words, short_text)

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**40, 2**40),
                         st.floats(allow_nan=False, allow_infinity=False), strings)
arbitrary_json = st.recursive(
    json_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(strings, inner, max_size=3)),
    max_leaves=8)


def _string(draw, schema: dict, key: str):
    fmt = schema.get("format")
    if fmt == "byte":
        return base64.b64encode(draw(st.binary(max_size=12))).decode()
    if fmt == "date-time":
        return draw(st.sampled_from(TIMES[:4]) if draw(weighted(90)) else
                    st.sampled_from(TIMES))
    if key in ("name", "generateName", "serviceAccountName", "nodeName", "hostname",
               "subdomain", "claimName", "secretName", "storageClassName", "priorityClassName",
               "runtimeClassName", "schedulerName"):
        return draw(st.sampled_from(DNS_LABELS) if draw(weighted(85)) else strings)
    if key in ("namespace",):
        return draw(st.sampled_from(("fuzz", "fuzz-b", "")))
    if key in ("image",):
        return draw(st.sampled_from(("nginx", "nginx:1.27", "busybox@sha256:" + "0" * 64)))
    if key in ("url",):
        return "https://192.0.2.1:1/"
    return draw(strings)


def _integer(draw, schema: dict):
    fmt = schema.get("format")
    wide = 2**31 - 1 if fmt == "int32" else 2**63 - 1
    if draw(weighted(85)):
        return draw(st.integers(-1, 100))
    return draw(st.integers(-wide - 1, wide))


def schema_value(draw, doc: Document, schema: dict, depth: int = 0, key: str = ""):
    """A value following ``schema`` (of ``doc``) at nesting ``depth``."""
    name = doc.ref_name(schema)
    if name.endswith("api.resource.Quantity"):
        return draw(st.sampled_from(QUANTITIES) if draw(weighted(95)) else
                    st.integers(0, 2000))
    if name.endswith("util.intstr.IntOrString"):
        return draw(st.one_of(st.integers(-1, 100), st.sampled_from(("25%", "1", "http",
                                                                       "", "80"))))
    if name.endswith(("meta.v1.Time", "meta.v1.MicroTime")):
        return _string(draw, {"format": "date-time"}, key)
    if name.endswith(("runtime.RawExtension", "meta.v1.FieldsV1", "apiextensions.v1.JSON")):
        return draw(st.one_of(st.just({}), st.dictionaries(strings, json_scalars, max_size=2)))
    schema = doc.resolve(schema)
    if schema.get("x-kubernetes-int-or-string") or schema.get("format") == "int-or-string":
        return draw(st.one_of(st.integers(-1, 100), st.sampled_from(("25%", "1", "http"))))
    if schema.get("enum"):
        return draw(st.sampled_from(schema["enum"]))
    for combinator in ("oneOf", "anyOf"):
        if schema.get(combinator):
            choice = draw(st.sampled_from(schema[combinator]))
            merged = {**{k: v for k, v in schema.items() if k != combinator}, **choice}
            return schema_value(draw, doc, merged, depth, key)
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        return _object(draw, doc, schema, depth)
    if kind == "array":
        if depth >= MAX_DEPTH:
            return []
        size = draw(st.integers(0, 2))
        return [schema_value(draw, doc, schema.get("items") or {}, depth + 1, key)
                for _ in range(size)]
    if kind == "string":
        return _string(draw, schema, key)
    if kind == "integer":
        return _integer(draw, schema)
    if kind == "number":
        return draw(st.one_of(st.integers(-1, 100), st.floats(-1e6, 1e6)))
    if kind == "boolean":
        return draw(st.booleans())
    # Nothing said of the type (x-kubernetes-preserve-unknown-fields and the like).
    return draw(arbitrary_json)


def _object(draw, doc: Document, schema: dict, depth: int) -> dict:
    properties = schema.get("properties") or {}
    if not properties:
        values = schema.get("additionalProperties")
        if isinstance(values, dict) and depth < MAX_DEPTH:
            keys = draw(st.lists(label_keys, max_size=2, unique=True))
            return {k: schema_value(draw, doc, values, depth + 1, k) for k in keys}
        if schema.get("x-kubernetes-preserve-unknown-fields"):
            return draw(st.dictionaries(strings, json_scalars, max_size=2))
        return {}
    required = [k for k in schema.get("required") or () if k in properties]
    optional = [k for k in properties if k not in required and k != "status"]
    chosen = list(required)
    if optional and depth < MAX_DEPTH:
        # A few optional properties, whatever their number: a handful of draws per object.
        count = draw(st.integers(0, min(len(optional), 3 if depth < 3 else 1)))
        for _ in range(count):
            extra = draw(st.sampled_from(optional))
            if extra not in chosen:
                chosen.append(extra)
    return {k: schema_value(draw, doc, properties[k], depth + 1, k) for k in chosen}


def schema_at(doc: Document, schema: dict, path) -> dict | None:
    """The schema of the value at ``path`` (keys and indexes) below ``schema``."""
    for step in path:
        resolved = doc.resolve(schema)
        if isinstance(step, int):
            schema = resolved.get("items")
        elif step in (resolved.get("properties") or {}):
            schema = resolved["properties"][step]
        elif isinstance(resolved.get("additionalProperties"), dict):
            schema = resolved["additionalProperties"]
        else:
            return None
        if schema is None:
            return None
    return schema


def paths_of(value, limit: int = 400) -> list[tuple]:
    """Every path (tuple of keys and indexes) into ``value``, breadth first, at most
    ``limit`` of them (the root, ``()``, first)."""
    found, queue = [], [((), value)]
    while queue and len(found) < limit:
        path, node = queue.pop(0)
        found.append(path)
        if isinstance(node, dict):
            queue.extend((path + (k,), v) for k, v in node.items())
        elif isinstance(node, list):
            queue.extend((path + (i,), v) for i, v in enumerate(node))
    return found


def get_at(value, path):
    for step in path:
        value = value[step]
    return value


def set_at(value, path, new):
    """``value`` with the node at ``path`` replaced (``value`` itself when ``path`` is
    empty: the root is replaced)."""
    if not path:
        return new
    parent = get_at(value, path[:-1])
    parent[path[-1]] = new
    return value


def nested(depth: int, container: str = "list"):
    """A value nested ``depth`` deep (built iteratively: deeper than Python's recursion)."""
    value = [] if container == "list" else {}
    for _ in range(depth):
        value = [value] if container == "list" else {"a": value}
    return value


def nested_json(depth: int, container: str = "list") -> str:
    """The JSON text of ``nested(depth)`` (the encoder would overflow the stack itself)."""
    if container == "list":
        return "[" * depth + "]" * depth
    return '{"a":' * depth + "{}" + "}" * depth


#: Values of each wrong type for a value of another.
WRONG = {
    dict: ([], "x", 1, True, None, 1.5),
    list: ({}, "x", 1, True, None, [[[]]]),
    str: ({}, [], 1, True, 1.5, -1),
    int: ("1", "x", 1.5, 2**64, -2**64, True, {}, []),
    float: ("1.5", {}, []),
    bool: ("true", 1, 0, {}, []),
    type(None): ({}, [], "x", 0),
}


def wrong_type(draw, value):
    """A value of another type than ``value``."""
    return draw(st.sampled_from(WRONG.get(type(value), ({},))))


def huge_string(draw) -> str:
    size = draw(st.sampled_from((300, 64 * 1024, 1024 * 1024 + 1)))
    return draw(st.sampled_from(("a", "é", "-", "\x00"))) * size
