"""Compiles the schema tables (``protobuf_schemas``) into per-message field plans."""

from __future__ import annotations

from kapiserver.runtime import protobuf_schemas as schemas
from kapiserver.runtime.protobuf_wire import LENGTH, VARINT, tag

# Value kinds. Scalars first: every kind above BYTES is a length-delimited message.
STRING, BOOL, INT32, INT64, BYTES = range(5)
(MESSAGE, TIME, MICROTIME, DURATION, QUANTITY, INT_OR_STRING, RAW_EXTENSION, FIELDS_V1,
 EXTRA_VALUE, OBJECT) = range(5, 15)
SPECIALS = {"Time": TIME, "MicroTime": MICROTIME, "Duration": DURATION, "Quantity": QUANTITY,
            "IntOrString": INT_OR_STRING, "RawExtension": RAW_EXTENSION,
            "FieldsV1": FIELDS_V1, "ExtraValue": EXTRA_VALUE, "Object": OBJECT}
SCALARS = {"string": STRING, "bool": BOOL, "int32": INT32, "int64": INT64, "bytes": BYTES}

# Labels.
SINGLE, REPEATED, MAP = range(3)


class Message:
    """A compiled message: ``fields`` by number, ``ordered`` as the Go struct (the JSON
    order), ``by_number`` as the wire order."""

    __slots__ = ("name", "fields", "ordered", "by_number", "_by_json_name")

    def __init__(self, name: str):
        self.name = name


class Field:
    """A compiled field. ``wire`` is the field's wire type; ``value_wire`` one value's (they
    differ for a map, whose entries are messages); ``tag`` the encoded key."""

    __slots__ = ("number", "name", "kind", "message", "label", "pointer", "keep", "wire",
                 "value_wire", "tag")


def compile_messages(tables: dict) -> dict[str, Message]:
    """Compiled messages by qualified name (``core/v1.ConfigMap``); ``ValueError`` for a type
    no table defines."""
    compiled = {f"{package}.{name}": Message(f"{package}.{name}")
                for package, messages in tables.items() for name in messages}
    for package, messages in tables.items():
        for name, spec in messages.items():
            message = compiled[f"{package}.{name}"]
            message.ordered = [_compile_field(number, entry, package, compiled, message.name)
                               for number, entry in spec.items()]
            message.fields = {field.number: field for field in message.ordered}
            message.by_number = sorted(message.ordered, key=lambda f: f.number)
    return compiled


def _compile_field(number, entry, package, compiled, where) -> Field:
    field = Field()
    field.number, field.name, type_name = number, entry[0], entry[1]
    field.keep = schemas.KEEP in entry[2:]
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
    else:
        field.kind = MESSAGE
        candidates = ([type_name] if "." in type_name else
                      [f"{package}.{type_name}", f"{schemas.META_V1}.{type_name}"])
        for candidate in candidates:
            if candidate in compiled:
                field.message = compiled[candidate]
                break
        else:
            raise ValueError(f"{where}.{field.name}: unknown message type {type_name!r}")
    field.value_wire = VARINT if field.kind in (BOOL, INT32, INT64) else LENGTH
    field.wire = LENGTH if field.label == MAP else field.value_wire
    field.tag = tag(number, field.wire)
    return field
