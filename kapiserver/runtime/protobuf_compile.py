"""Compiles the schema tables (``protobuf_schemas``) into per-message field plans."""

from __future__ import annotations

from kapiserver.runtime import protobuf_schemas as schemas
from kapiserver.runtime.protobuf_wire import FIXED64, LENGTH, VARINT, tag

# Value kinds. Scalars first (DOUBLE the one fixed64): every kind above BYTES is a
# length-delimited message.
STRING, BOOL, INT32, INT64, DOUBLE, BYTES = range(6)
(MESSAGE, TIME, MICROTIME, DURATION, QUANTITY, INT_OR_STRING, RAW_EXTENSION, FIELDS_V1,
 EXTRA_VALUE, OBJECT, SCHEMA_OR_ARRAY, SCHEMA_OR_BOOL, SCHEMA_OR_STRINGS) = range(6, 19)
SPECIALS = {"Time": TIME, "MicroTime": MICROTIME, "Duration": DURATION, "Quantity": QUANTITY,
            "IntOrString": INT_OR_STRING, "RawExtension": RAW_EXTENSION,
            "FieldsV1": FIELDS_V1, "ExtraValue": EXTRA_VALUE, "Object": OBJECT,
            "JSONSchemaPropsOrArray": SCHEMA_OR_ARRAY,
            "JSONSchemaPropsOrBool": SCHEMA_OR_BOOL,
            "JSONSchemaPropsOrStringArray": SCHEMA_OR_STRINGS}
#: The wrappers of apiextensions' JSONSchemaProps: their ``message`` is JSONSchemaProps.
SCHEMA_WRAPPERS = (SCHEMA_OR_ARRAY, SCHEMA_OR_BOOL, SCHEMA_OR_STRINGS)
SCALARS = {"string": STRING, "bool": BOOL, "int32": INT32, "int64": INT64, "double": DOUBLE,
           "bytes": BYTES}

# Labels.
SINGLE, REPEATED, MAP = range(3)


class Message:
    """A compiled message: ``fields`` by number, ``by_number`` in the wire order, ``struct``
    as the Go struct (an inline embedded struct one field), ``ordered`` as JSON sees it (the
    fields of inline structs in their place, by name in ``_by_json_name``); ``plan`` is
    ``normalize``'s, made on first use."""

    __slots__ = ("name", "fields", "struct", "ordered", "by_number", "_by_json_name", "plan")

    def __init__(self, name: str):
        self.name = name
        self.plan = None


class Field:
    """A compiled field. ``wire`` is the field's wire type; ``value_wire`` one value's (they
    differ for a map, whose entries are messages); ``tag`` the encoded key; ``inline`` for
    an embedded struct whose fields JSON writes in its parent's place."""

    __slots__ = ("number", "name", "kind", "message", "label", "pointer", "keep", "inline",
                 "wire", "value_wire", "tag")


def compile_messages(tables: dict) -> dict[str, Message]:
    """Compiled messages by qualified name (``core/v1.ConfigMap``); ``ValueError`` for a type
    no table defines."""
    compiled = {f"{package}.{name}": Message(f"{package}.{name}")
                for package, messages in tables.items() for name in messages}
    for package, messages in tables.items():
        for name, spec in messages.items():
            message = compiled[f"{package}.{name}"]
            message.struct = [_compile_field(number, entry, package, compiled, message.name)
                              for number, entry in spec.items()]
            message.fields = {field.number: field for field in message.struct}
            message.by_number = sorted(message.struct, key=lambda f: f.number)
    for message in compiled.values():
        _flatten(message, ())
    return compiled


def _flatten(message: Message, within: tuple) -> list[Field]:
    """``message.ordered``: its JSON fields, those of inline structs in their place."""
    if hasattr(message, "ordered"):
        return message.ordered
    if message.name in within:
        raise ValueError(f"{message.name} inlines itself")
    ordered = []
    for field in message.struct:
        if field.inline:
            ordered += _flatten(field.message, within + (message.name,))
        else:
            ordered.append(field)
    names = {}
    for field in ordered:
        if names.setdefault(field.name, field) is not field:
            raise ValueError(f"{message.name}: two fields are named {field.name!r} in JSON")
    message.ordered, message._by_json_name = ordered, names
    return ordered


def _compile_field(number, entry, package, compiled, where) -> Field:
    field = Field()
    field.number, field.name, type_name = number, entry[0], entry[1]
    field.keep = schemas.KEEP in entry[2:]
    field.inline = schemas.INLINE in entry[2:]
    field.pointer = type_name.startswith("*")
    field.label = SINGLE
    type_name = type_name.lstrip("*")
    if type_name.startswith("[]"):
        field.label, type_name = REPEATED, type_name[2:]
    elif type_name.startswith("map[string]"):
        field.label, type_name = MAP, type_name[len("map[string]"):]
    field.message = None
    if type_name in SCALARS:
        field.kind = SCALARS[type_name]
    elif type_name in SPECIALS:
        field.kind = SPECIALS[type_name]
        if field.kind in SCHEMA_WRAPPERS:
            field.message = _resolve("JSONSchemaProps", package, compiled, where, field)
    else:
        field.kind = MESSAGE
        field.message = _resolve(type_name, package, compiled, where, field)
    if field.inline and (field.kind != MESSAGE or field.label != SINGLE or field.pointer):
        raise ValueError(f"{where}.{field.name}: only a message field can be inline")
    field.value_wire = (VARINT if field.kind in (BOOL, INT32, INT64) else
                        FIXED64 if field.kind == DOUBLE else LENGTH)
    field.wire = LENGTH if field.label == MAP else field.value_wire
    field.tag = tag(number, field.wire)
    return field


def _resolve(type_name, package, compiled, where, field) -> Message:
    candidates = ([type_name] if "." in type_name else
                  [f"{package}.{type_name}", f"{schemas.META_V1}.{type_name}"])
    for candidate in candidates:
        if candidate in compiled:
            return compiled[candidate]
    raise ValueError(f"{where}.{field.name}: unknown message type {type_name!r}")
