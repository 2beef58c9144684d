"""CEL types of a structural schema (upstream's ``DeclType``), as protobuf messages for cel-cpp.

Mirrors ``k8s.io/apiserver/pkg/cel/common/schemas.go`` (``SchemaDeclType``): objects become
message types whose fields are the (escaped) properties, ``additionalProperties`` maps,
arrays lists, ``x-kubernetes-int-or-string`` ``dyn``, ``format: byte`` bytes,
``date``/``date-time`` timestamps and ``duration`` durations; the root of a resource (and
every ``x-kubernetes-embedded-resource``) also has ``apiVersion``, ``kind`` and
``metadata.name``/``metadata.generateName``. Each type carries upstream's size bounds
(``MaxElements``, ``MinSerializedSize``) for cost estimation.

cel-cpp's checker reads object types from a protobuf descriptor pool, so every object type
becomes a message: its name is ``selfType<nanos>`` at the root and ``<parent>.<field>__``
below (a nested message may not share its field's name, and no escaped property name ends in
``__``). What protobuf cannot nest (lists of
lists, maps of lists) is typed ``list(dyn)``/``map(string, dyn)`` inside messages. Values are
never converted to messages: evaluation binds the unstructured dicts, renamed and re-typed only
where the schema asks for it (:meth:`DeclType.converter`).
"""

from __future__ import annotations

import base64
import re
import time
from dataclasses import dataclass, field

#: ``celconfig.MaxRequestSizeBytes`` and the size constants of ``apiserver/pkg/cel/limits.go``.
MAX_REQUEST_SIZE = 3 * 1024 * 1024
MAX_DURATION_SIZE_JSON = 32
MAX_DATETIME_SIZE_JSON = 32
MIN_DURATION_SIZE_JSON = 3
JSON_DATE_SIZE = 12
MIN_DATETIME_SIZE_JSON = 21
MIN_STRING_SIZE = 2
MIN_BOOL_SIZE = 4
MIN_NUMBER_SIZE = 1

# -- escaping (apiserver/pkg/cel/escaping.go) --------------------------------------------------

RESERVED = frozenset((
    "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for",
    "function", "if", "import", "let", "loop", "package", "namespace", "return", "var", "void",
    "while"))
_VALID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ESCAPABLE = re.compile(r"[A-Za-z0-9_./-]*")
_EXPAND = re.compile(r"__|[./-]")
_ESCAPES = {"__": "__underscores__", ".": "__dot__", "-": "__dash__", "/": "__slash__"}


def escape(name: str) -> str | None:
    """The CEL identifier of a property name, or None when it has none (``cel.Escape``)."""
    if not name or name[0].isdigit():
        return None
    if name in RESERVED:
        return f"__{name}__"
    if _VALID.fullmatch(name) and "__" not in name:
        return name
    if not _ESCAPABLE.fullmatch(name) or not name.isascii():
        return None
    return _EXPAND.sub(lambda m: _ESCAPES[m.group()], name)


# -- declared types ------------------------------------------------------------------------------

#: CEL kinds of declared types.
OBJECT, LIST, MAP, STRING, BYTES, INT, DOUBLE, BOOL, TIMESTAMP, DURATION, DYN = (
    "object", "list", "map", "string", "bytes", "int", "double", "bool", "timestamp",
    "duration", "dyn")
_SCALAR_MIN = {INT: MIN_NUMBER_SIZE, DOUBLE: MIN_NUMBER_SIZE, BOOL: MIN_BOOL_SIZE}


@dataclass(eq=False)
class DeclType:
    """One node of the CEL view of a schema."""

    kind: str
    schema: dict = field(default_factory=dict)
    #: escaped field name -> (property name, type), for objects
    fields: dict = field(default_factory=dict)
    elem: DeclType | None = None
    max_elements: int = 0
    min_size: int = 0
    #: the message name of an object type (set by :func:`assign_names`)
    name: str = ""

    @property
    def is_object(self) -> bool:
        return self.kind == OBJECT

    def field_type(self, escaped: str) -> DeclType | None:
        entry = self.fields.get(escaped)
        return entry[1] if entry else None

    def property_type(self, prop: str) -> DeclType | None:
        escaped = escape(prop)
        return self.field_type(escaped) if escaped else None

    def converter(self):
        """A function turning an unstructured value into what cel-cpp must see, or None when
        the value can be bound as it is (no escaped names, numbers, bytes, times below)."""
        if "_converter" not in self.__dict__:
            self.__dict__["_converter"] = _make_converter(self)
        return self.__dict__["_converter"]


def _zero_if_negative(value) -> int:
    return max(int(value), 0)


def _max_string_length(schema: dict) -> int:
    """``estimateMaxStringLengthPerRequest``."""
    if schema.get("x-kubernetes-int-or-string"):
        return MAX_REQUEST_SIZE - 2
    fmt = schema.get("format")
    if fmt == "duration":
        return MAX_DURATION_SIZE_JSON
    if fmt == "date":
        return JSON_DATE_SIZE
    if fmt == "date-time":
        return MAX_DATETIME_SIZE_JSON
    return MAX_REQUEST_SIZE - 2


def with_type_and_object_meta(schema: dict) -> dict:
    """``WithTypeAndObjectMeta``: kind, apiVersion and metadata.name/generateName declared."""
    props = schema.get("properties") or {}
    meta = props.get("metadata") or {}
    meta_props = meta.get("properties") or {}

    def is_type(s, t):
        return isinstance(s, dict) and s.get("type") == t

    if (is_type(props.get("kind"), "string") and is_type(props.get("apiVersion"), "string")
            and is_type(meta, "object") and is_type(meta_props.get("name"), "string")
            and is_type(meta_props.get("generateName"), "string")):
        return schema
    result = dict(schema)
    props = dict(props)
    props["kind"] = {"type": "string"}
    props["apiVersion"] = {"type": "string"}
    props["metadata"] = {"type": "object", "properties": {"name": {"type": "string"},
                                                          "generateName": {"type": "string"}}}
    result["properties"] = props
    return result


def decl_type(schema: dict | None, is_resource_root: bool = False) -> DeclType | None:
    """``SchemaDeclType``: the CEL type of a structural schema node, or None when the node is
    not visible to CEL (no type, or items/values that are not)."""
    if not isinstance(schema, dict):
        return None
    if schema.get("x-kubernetes-int-or-string"):
        max_length = schema.get("maxLength")
        return DeclType(DYN, schema, min_size=1,
                        max_elements=(_zero_if_negative(max_length) * 4 if max_length is not None
                                      else _max_string_length(schema)))
    if is_resource_root:
        schema = with_type_and_object_meta(schema)
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items")
        if not isinstance(items, dict):
            return None
        elem = decl_type(items, bool(items.get("x-kubernetes-embedded-resource")))
        if elem is None:
            return None
        max_items = schema.get("maxItems")
        bound = (_zero_if_negative(max_items) if max_items is not None
                 else (MAX_REQUEST_SIZE - 2) // (elem.min_size + 1))
        return DeclType(LIST, schema, elem=elem, max_elements=bound, min_size=2)
    if kind == "object":
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            elem = decl_type(extra, bool(extra.get("x-kubernetes-embedded-resource")))
            if elem is None:
                return None
            max_props = schema.get("maxProperties")
            bound = (_zero_if_negative(max_props) if max_props is not None
                     else (MAX_REQUEST_SIZE - 2) // (elem.min_size + 6))
            return DeclType(MAP, schema, elem=elem, max_elements=bound, min_size=2)
        required = set(schema.get("required") or ())
        fields, min_size = {}, 2
        for prop, sub in sorted((schema.get("properties") or {}).items()):
            sub_type = decl_type(sub, bool(isinstance(sub, dict)
                                           and sub.get("x-kubernetes-embedded-resource")))
            if sub_type is None:
                continue
            escaped = escape(prop)
            if escaped is not None:
                fields[escaped] = (prop, sub_type)
            if prop in required and "default" not in sub:
                min_size += len(prop) + sub_type.min_size + 4
        return DeclType(OBJECT, schema, fields=fields, min_size=min_size)
    if kind == "string":
        fmt = schema.get("format")
        max_length = schema.get("maxLength")
        if fmt == "byte":
            return DeclType(BYTES, schema, min_size=MIN_STRING_SIZE,
                            max_elements=(_zero_if_negative(max_length) if max_length is not None
                                          else _max_string_length(schema)))
        if fmt == "duration":
            return DeclType(DURATION, schema, min_size=MIN_DURATION_SIZE_JSON,
                            max_elements=_max_string_length(schema))
        if fmt == "date":
            return DeclType(TIMESTAMP, schema, min_size=JSON_DATE_SIZE,
                            max_elements=_max_string_length(schema))
        if fmt == "date-time":
            return DeclType(TIMESTAMP, schema, min_size=MIN_DATETIME_SIZE_JSON,
                            max_elements=_max_string_length(schema))
        if max_length is not None:
            bound = _zero_if_negative(max_length) * 4
        elif schema.get("enum"):
            bound = max((len(v) for v in schema["enum"] if isinstance(v, str)), default=0)
        else:
            bound = _max_string_length(schema)
        return DeclType(STRING, schema, min_size=MIN_STRING_SIZE, max_elements=bound)
    if kind == "boolean":
        return DeclType(BOOL, schema, min_size=MIN_BOOL_SIZE)
    if kind == "number":
        return DeclType(DOUBLE, schema, min_size=MIN_NUMBER_SIZE)
    if kind == "integer":
        return DeclType(INT, schema, min_size=MIN_NUMBER_SIZE)
    return None


def max_cardinality(min_size: int) -> int:
    """How often data of ``min_size`` bytes fits into one request (upstream ``maxCardinality``)."""
    return MAX_REQUEST_SIZE // (min_size + 1)


def unique_type_name() -> str:
    """``generateUniqueSelfTypeName``: a name rule authors cannot depend on."""
    return f"selfType{time.time_ns() % 1_000_000_000}"


# -- protobuf descriptors -----------------------------------------------------------------------

_WKT_FILES = ("google/protobuf/timestamp.proto", "google/protobuf/duration.proto",
              "google/protobuf/struct.proto")


def assign_names(root: DeclType, name: str) -> None:
    """Name every object type reachable from ``root`` (``MaybeAssignTypeName``)."""

    def visit(t: DeclType, type_name: str) -> None:
        if t.kind == OBJECT:
            t.name = type_name
            for escaped, (_, sub) in t.fields.items():
                visit(sub, f"{type_name}.{escaped}__")
        elif t.kind in (LIST, MAP):
            visit(t.elem, type_name)

    visit(root, name)


def add_to_pool(pool, roots: list[DeclType], file_name: str) -> None:
    """Declare the message types of ``roots`` (already named) in the descriptor pool."""
    from google.protobuf import descriptor_pb2

    F = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(name=file_name, syntax="proto2")
    proto.dependency.extend(_WKT_FILES)
    done: set[str] = set()

    def scalar(t: DeclType, in_container: bool):
        """(field type, type name) of a field holding ``t``."""
        if t.kind == OBJECT:
            return F.TYPE_MESSAGE, "." + t.name
        if t.kind == LIST:
            return F.TYPE_MESSAGE, ".google.protobuf.ListValue"
        if t.kind == MAP:
            return F.TYPE_MESSAGE, ".google.protobuf.Struct"
        return {
            STRING: (F.TYPE_STRING, ""), BYTES: (F.TYPE_BYTES, ""), INT: (F.TYPE_INT64, ""),
            DOUBLE: (F.TYPE_DOUBLE, ""), BOOL: (F.TYPE_BOOL, ""),
            TIMESTAMP: (F.TYPE_MESSAGE, ".google.protobuf.Timestamp"),
            DURATION: (F.TYPE_MESSAGE, ".google.protobuf.Duration"),
            DYN: (F.TYPE_MESSAGE, ".google.protobuf.Value")}[t.kind]

    def message(t: DeclType, container) -> None:
        if t.name in done:
            return
        done.add(t.name)
        msg = container.add(name=t.name.rsplit(".", 1)[-1])
        for number, (escaped, (_, sub)) in enumerate(sorted(t.fields.items()), start=1):
            # Nested object types live inside their parent message.
            for inner in _objects(sub):
                message(inner, msg.nested_type)
            if sub.kind == LIST:
                ftype, tname = scalar(sub.elem, True)
                f = msg.field.add(name=escaped, number=number, label=F.LABEL_REPEATED,
                                  type=ftype, json_name=escaped)
            elif sub.kind == MAP:
                entry = msg.nested_type.add(name=_map_entry_name(escaped))
                entry.options.map_entry = True
                entry.field.add(name="key", number=1, label=F.LABEL_OPTIONAL, type=F.TYPE_STRING)
                vtype, vname = scalar(sub.elem, True)
                value = entry.field.add(name="value", number=2, label=F.LABEL_OPTIONAL, type=vtype)
                if vname:
                    value.type_name = vname
                f = msg.field.add(name=escaped, number=number, label=F.LABEL_REPEATED,
                                  type=F.TYPE_MESSAGE, json_name=escaped)
                tname = f".{t.name}.{_map_entry_name(escaped)}"
            else:
                ftype, tname = scalar(sub, False)
                f = msg.field.add(name=escaped, number=number, label=F.LABEL_OPTIONAL,
                                  type=ftype, json_name=escaped)
            if tname:
                f.type_name = tname

    for root in roots:
        for obj in _objects(root):
            message(obj, proto.message_type)
    pool.Add(proto)


def _map_entry_name(field_name: str) -> str:
    """protobuf's ``MapEntryName``: the only name a map field's entry message may have."""
    out, upper = [], True
    for ch in field_name:
        if ch == "_":
            upper = True
        elif upper:
            out.append(ch.upper() if "a" <= ch <= "z" else ch)
            upper = False
        else:
            out.append(ch)
    return "".join(out) + "Entry"


def _objects(t: DeclType):
    """The object types ``t`` declares itself: itself, or the elements it holds."""
    while t.kind in (LIST, MAP):
        t = t.elem
    return [t] if t.kind == OBJECT else []


def new_pool(library_files=()):
    """A descriptor pool with the well-known types and ``library_files`` (FileDescriptorProtos)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, duration_pb2, struct_pb2, \
        timestamp_pb2

    pool = descriptor_pool.DescriptorPool()
    for module in (timestamp_pb2, duration_pb2, struct_pb2):
        proto = descriptor_pb2.FileDescriptorProto()
        module.DESCRIPTOR.CopyToProto(proto)
        pool.Add(proto)
    for proto in library_files:
        pool.Add(proto)
    return pool


def cel_type(t: DeclType):
    """The ``cel.Type`` of a variable bound to values of ``t``."""
    from cel_expr_python import cel

    if t.kind == OBJECT:
        return cel.Type(t.name)
    if t.kind == LIST:
        return cel.Type.List(cel_type(t.elem))
    if t.kind == MAP:
        return cel.Type.Map(cel.Type.STRING, cel_type(t.elem))
    return {STRING: cel.Type.STRING, BYTES: cel.Type.BYTES, INT: cel.Type.INT,
            DOUBLE: cel.Type.DOUBLE, BOOL: cel.Type.BOOL, TIMESTAMP: cel.Type.TIMESTAMP,
            DURATION: cel.Type.DURATION, DYN: cel.Type.DYN}[t.kind]


def type_info_yaml(t: DeclType, indent: int) -> str:
    """:func:`cel_type` as the ``type_name``/``params`` of a cel-cpp environment config
    (YAML lines indented by ``indent``), where types cel-expr-python's ``cel.Type`` cannot
    express, such as ``optional_type(T)``, are declared."""
    if t.kind == OBJECT:
        name, params = t.name, []
    elif t.kind == LIST:
        name, params = "list", [t.elem]
    elif t.kind == MAP:
        name, params = "map", [DeclType(STRING), t.elem]
    else:
        name, params = t.kind, []
    pad = " " * indent
    text = f'{pad}- type_name: "{name}"\n'
    if params:
        text += f"{pad}  params:\n" + "".join(type_info_yaml(p, indent + 4) for p in params)
    return text


# -- values --------------------------------------------------------------------------------------

_DATETIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?"
                       r"(?:([Zz])|([+-])(\d{2}):(\d{2})))?")


def parse_go_duration(text: str) -> int | None:
    """Nanoseconds of a Go ``time.ParseDuration`` string, or None."""
    from kapiserver.runtime.gotime import DurationParseError, parse_duration

    try:
        return parse_duration(text)
    except DurationParseError:
        return None


def parse_timestamp(text: str):
    """(seconds, nanos) since the epoch of an RFC 3339 date or date-time, or None."""
    import calendar

    m = _DATETIME.fullmatch(text)
    if not m:
        return None
    year, month, day = int(m[1]), int(m[2]), int(m[3])
    hour, minute, second = (int(m[4] or 0), int(m[5] or 0), int(m[6] or 0))
    if m[4] is not None and not (m[8] or m[9]):
        return None
    try:
        seconds = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    except (ValueError, OverflowError):
        return None
    nanos = int((m[7] or "0")[:9].ljust(9, "0"))
    if m[9]:
        offset = int(m[10]) * 3600 + int(m[11]) * 60
        seconds -= offset if m[9] == "+" else -offset
    return seconds, nanos


def _make_converter(t: DeclType):
    if t.kind == DOUBLE:
        return lambda v: float(v) if type(v) is int else v
    if t.kind == BYTES:
        def to_bytes(v):
            try:
                return base64.b64decode(v, validate=True) if isinstance(v, str) else v
            except ValueError:
                return v
        return to_bytes
    if t.kind == TIMESTAMP:
        from google.protobuf import timestamp_pb2

        def to_timestamp(v):
            parsed = parse_timestamp(v) if isinstance(v, str) else None
            return timestamp_pb2.Timestamp(seconds=parsed[0], nanos=parsed[1]) if parsed else v
        return to_timestamp
    if t.kind == DURATION:
        from google.protobuf import duration_pb2

        def to_duration(v):
            nanos = parse_go_duration(v) if isinstance(v, str) else None
            if nanos is None:
                return v
            seconds, rest = divmod(abs(nanos), 1_000_000_000)
            sign = -1 if nanos < 0 else 1
            return duration_pb2.Duration(seconds=sign * seconds, nanos=sign * rest)
        return to_duration
    if t.kind in (LIST, MAP):
        inner = t.elem.converter()
        if inner is None:
            return None
        if t.kind == LIST:
            return lambda v: [inner(x) if x is not None else x for x in v] \
                if isinstance(v, list) else v
        return lambda v: {k: inner(x) if x is not None else x for k, x in v.items()} \
            if isinstance(v, dict) else v
    if t.kind == OBJECT:
        plan = {}
        for escaped, (prop, sub) in t.fields.items():
            inner = sub.converter()
            if inner is not None or escaped != prop:
                plan[prop] = (escaped, inner)
        if not plan:
            return None

        def convert_object(v):
            if not isinstance(v, dict):
                return v
            out = {}
            for key, value in v.items():
                step = plan.get(key)
                if step is None:
                    out[key] = value
                else:
                    escaped, inner = step
                    out[escaped] = inner(value) if inner is not None and value is not None \
                        else value
            return out
        return convert_object
    return None
