"""Encode a Swagger 2.0 document as gnostic's ``openapi.v2.Document`` protobuf message.

kube-apiserver serves ``/openapi/v2`` as this message to clients that ask for
``application/com.github.proto-openapi.spec.v2.v1.0+protobuf`` (kubectl's
``explain --output=plaintext-openapiv2``, and client-go's ``OpenAPISchema()``, which
kubectl falls back to when v3 is missing). Field numbers follow gnostic's public
``openapiv2/OpenAPIv2.proto``; values that are free-form JSON (vendor extensions, enum
values, defaults, examples) travel as ``Any.yaml`` text, as gnostic's compiler writes them.
Proto3 rules: scalar zero values are left out, set sub-messages and oneof members are not.
"""

from __future__ import annotations

import json
import struct

import yaml

from kapiserver.runtime.protobuf_wire import LENGTH, VARINT, put_length_delimited, put_varint

_FIXED64 = 1
_STRING, _BOOL, _INT, _DOUBLE, _STRINGS, _ANY, _ANYS = range(7)

#: Plain fields of the parameter and items messages: JSON key -> (number, kind).
_QUERY = {"required": (1, _BOOL), "in": (2, _STRING), "description": (3, _STRING),
          "name": (4, _STRING), "allowEmptyValue": (5, _BOOL), "type": (6, _STRING),
          "format": (7, _STRING), "collectionFormat": (9, _STRING), "default": (10, _ANY),
          "maximum": (11, _DOUBLE), "exclusiveMaximum": (12, _BOOL), "minimum": (13, _DOUBLE),
          "exclusiveMinimum": (14, _BOOL), "maxLength": (15, _INT), "minLength": (16, _INT),
          "pattern": (17, _STRING), "maxItems": (18, _INT), "minItems": (19, _INT),
          "uniqueItems": (20, _BOOL), "enum": (21, _ANYS), "multipleOf": (22, _DOUBLE)}
_QUERY_ITEMS, _QUERY_VENDOR = 8, 23
#: Path and header parameters have no allowEmptyValue: every later number is one less.
_PATH = {key: (number - 1 if number > 5 else number, kind)
         for key, (number, kind) in _QUERY.items() if key != "allowEmptyValue"}
_PATH_ITEMS, _PATH_VENDOR = 7, 22
_PRIMITIVES = {"type": (1, _STRING), "format": (2, _STRING), "collectionFormat": (4, _STRING),
               "default": (5, _ANY), "maximum": (6, _DOUBLE), "exclusiveMaximum": (7, _BOOL),
               "minimum": (8, _DOUBLE), "exclusiveMinimum": (9, _BOOL),
               "maxLength": (10, _INT), "minLength": (11, _INT), "pattern": (12, _STRING),
               "maxItems": (13, _INT), "minItems": (14, _INT), "uniqueItems": (15, _BOOL),
               "enum": (16, _ANYS), "multipleOf": (17, _DOUBLE)}
_PRIMITIVES_ITEMS, _PRIMITIVES_VENDOR = 3, 18
#: NonBodyParameter's oneof member for each location.
_NON_BODY = {"header": (1, _PATH, _PATH_ITEMS, _PATH_VENDOR),
             "formData": (2, _QUERY, _QUERY_ITEMS, _QUERY_VENDOR),
             "query": (3, _QUERY, _QUERY_ITEMS, _QUERY_VENDOR),
             "path": (4, _PATH, _PATH_ITEMS, _PATH_VENDOR)}
_SCHEMA = {"$ref": (1, _STRING), "format": (2, _STRING), "title": (3, _STRING),
           "description": (4, _STRING), "default": (5, _ANY), "multipleOf": (6, _DOUBLE),
           "maximum": (7, _DOUBLE), "exclusiveMaximum": (8, _BOOL), "minimum": (9, _DOUBLE),
           "exclusiveMinimum": (10, _BOOL), "maxLength": (11, _INT), "minLength": (12, _INT),
           "pattern": (13, _STRING), "maxItems": (14, _INT), "minItems": (15, _INT),
           "uniqueItems": (16, _BOOL), "maxProperties": (17, _INT),
           "minProperties": (18, _INT), "required": (19, _STRINGS), "enum": (20, _ANYS),
           "discriminator": (26, _STRING), "readOnly": (27, _BOOL), "example": (30, _ANY)}
_SCHEMA_HEAD = {k: v for k, v in _SCHEMA.items() if v[0] <= 20}
_SCHEMA_TAIL = {k: v for k, v in _SCHEMA.items() if v[0] > 20}
_OPERATION = {"tags": (1, _STRINGS), "summary": (2, _STRING), "description": (3, _STRING),
              "operationId": (5, _STRING), "produces": (6, _STRINGS),
              "consumes": (7, _STRINGS), "schemes": (10, _STRINGS), "deprecated": (11, _BOOL)}
_PATH_ITEM_METHODS = {"get": 2, "put": 3, "post": 4, "delete": 5, "options": 6, "head": 7,
                      "patch": 8}


class _Message:
    """A message being written: fields appended in field-number order by the caller."""

    def __init__(self):
        self.out = bytearray()

    def _tag(self, number: int, wire_type: int) -> None:
        put_varint(self.out, number << 3 | wire_type)

    def string(self, number: int, value: str, always: bool = False) -> None:
        if value or always:
            self._tag(number, LENGTH)
            put_length_delimited(self.out, value.encode())

    def boolean(self, number: int, value: bool, always: bool = False) -> None:
        if value or always:
            self._tag(number, VARINT)
            put_varint(self.out, 1 if value else 0)

    def integer(self, number: int, value: int) -> None:
        if value:
            self._tag(number, VARINT)
            put_varint(self.out, int(value))

    def double(self, number: int, value: float) -> None:
        if value:
            self._tag(number, _FIXED64)
            self.out += struct.pack("<d", float(value))

    def message(self, number: int, data: bytes) -> None:
        self._tag(number, LENGTH)
        put_length_delimited(self.out, data)

    def plain(self, fields: dict, obj: dict) -> None:
        """Write ``obj``'s keys named in ``fields`` ({key: (number, kind)}), by number."""
        for key, (number, kind) in sorted(fields.items(), key=lambda item: item[1][0]):
            if key not in obj:
                continue
            value = obj[key]
            if kind == _STRING:
                self.string(number, value)
            elif kind == _BOOL:
                self.boolean(number, value)
            elif kind == _INT:
                self.integer(number, value)
            elif kind == _DOUBLE:
                self.double(number, value)
            elif kind == _STRINGS:
                for item in value:
                    self.string(number, item, always=True)
            elif kind == _ANY:
                self.message(number, _any(value))
            elif kind == _ANYS:
                for item in value:
                    self.message(number, _any(item))

    def vendor(self, number: int, obj: dict) -> None:
        """``x-`` keys as repeated ``NamedAny``, in the document's order."""
        for key, value in obj.items():
            if key.startswith("x-"):
                self.message(number, _named(key, _any(value)))

    def bytes(self) -> bytes:
        return bytes(self.out)


def _any(value) -> bytes:
    """``Any{yaml}``: gnostic keeps free-form values as their YAML text."""
    if isinstance(value, (dict, list)):
        text = yaml.safe_dump(value, default_flow_style=False, sort_keys=False,
                              allow_unicode=True, width=1 << 20)
    else:
        text = json.dumps(value, ensure_ascii=False) + "\n"  # a JSON scalar is YAML too
    message = _Message()
    message.string(2, text)
    return message.bytes()


def _named(name: str, value: bytes) -> bytes:
    message = _Message()
    message.string(1, name)
    message.message(2, value)
    return message.bytes()


def schema(obj: dict) -> bytes:
    """A ``Schema`` message (keys gnostic does not know, such as v3's, are dropped)."""
    message = _Message()
    # Numbers 1..20 first, then the structural fields, then 26.. and the extensions.
    message.plain(_SCHEMA_HEAD, obj)
    if "additionalProperties" in obj:
        value = obj["additionalProperties"]
        item = _Message()
        if isinstance(value, bool):
            item.boolean(2, value, always=True)
        else:
            item.message(1, schema(value))
        message.message(21, item.bytes())
    if "type" in obj:
        item = _Message()
        for value in obj["type"] if isinstance(obj["type"], list) else [obj["type"]]:
            item.string(1, value, always=True)
        message.message(22, item.bytes())
    if "items" in obj:
        item = _Message()
        for value in obj["items"] if isinstance(obj["items"], list) else [obj["items"]]:
            item.message(1, schema(value))
        message.message(23, item.bytes())
    for value in obj.get("allOf", ()):
        message.message(24, schema(value))
    if "properties" in obj:
        properties = _Message()
        for name, value in obj["properties"].items():
            properties.message(1, _named(name, schema(value)))
        message.message(25, properties.bytes())
    message.plain(_SCHEMA_TAIL, obj)
    message.vendor(31, obj)
    return message.bytes()


def _primitives(obj: dict) -> bytes:
    message = _Message()
    message.plain({k: v for k, v in _PRIMITIVES.items() if v[0] < _PRIMITIVES_ITEMS}, obj)
    if "items" in obj:
        message.message(_PRIMITIVES_ITEMS, _primitives(obj["items"]))
    message.plain({k: v for k, v in _PRIMITIVES.items() if v[0] > _PRIMITIVES_ITEMS}, obj)
    message.vendor(_PRIMITIVES_VENDOR, obj)
    return message.bytes()


def parameter(obj: dict) -> bytes:
    """A ``Parameter``: a ``BodyParameter`` or one of ``NonBodyParameter``'s members."""
    message = _Message()
    if obj.get("in") == "body":
        body = _Message()
        body.plain({"description": (1, _STRING), "name": (2, _STRING), "in": (3, _STRING),
                    "required": (4, _BOOL)}, obj)
        if "schema" in obj:
            body.message(5, schema(obj["schema"]))
        body.vendor(6, obj)
        message.message(1, body.bytes())
        return message.bytes()
    member, fields, items_number, vendor_number = _NON_BODY[obj.get("in", "query")]
    sub = _Message()
    sub.plain({k: v for k, v in fields.items() if v[0] < items_number}, obj)
    if "items" in obj:
        sub.message(items_number, _primitives(obj["items"]))
    sub.plain({k: v for k, v in fields.items() if v[0] > items_number}, obj)
    sub.vendor(vendor_number, obj)
    non_body = _Message()
    non_body.message(member, sub.bytes())
    message.message(2, non_body.bytes())
    return message.bytes()


def _parameters_item(obj: dict) -> bytes:
    message = _Message()
    if "$ref" in obj:
        reference = _Message()
        reference.string(1, obj["$ref"])
        reference.string(2, obj.get("description", ""))
        message.message(2, reference.bytes())
    else:
        message.message(1, parameter(obj))
    return message.bytes()


def _operation(obj: dict) -> bytes:
    message = _Message()
    message.plain({k: v for k, v in _OPERATION.items() if v[0] < 8}, obj)
    for item in obj.get("parameters", ()):
        message.message(8, _parameters_item(item))
    if "responses" in obj:
        responses = _Message()
        for code, response in obj["responses"].items():
            value = _Message()
            if "$ref" in response:
                reference = _Message()
                reference.string(1, response["$ref"])
                value.message(2, reference.bytes())
            else:
                body = _Message()
                body.string(1, response.get("description", ""))
                if "schema" in response:
                    item = _Message()
                    item.message(1, schema(response["schema"]))
                    body.message(2, item.bytes())
                body.vendor(5, response)
                value.message(1, body.bytes())
            responses.message(1, _named(code, value.bytes()))
        message.message(9, responses.bytes())
    message.plain({k: v for k, v in _OPERATION.items() if v[0] > 9}, obj)
    message.vendor(13, obj)
    return message.bytes()


def _path_item(obj: dict) -> bytes:
    message = _Message()
    message.string(1, obj.get("$ref", ""))
    for method, number in _PATH_ITEM_METHODS.items():
        if method in obj:
            message.message(number, _operation(obj[method]))
    for item in obj.get("parameters", ()):
        message.message(9, _parameters_item(item))
    message.vendor(10, obj)
    return message.bytes()


def encode_document(document: dict) -> bytes:
    """The ``openapi.v2.Document`` message of a Swagger 2.0 ``document``."""
    message = _Message()
    message.string(1, document.get("swagger", ""))
    if "info" in document:
        info = _Message()
        info.plain({"title": (1, _STRING), "version": (2, _STRING),
                    "description": (3, _STRING), "termsOfService": (4, _STRING)},
                   document["info"])
        info.vendor(7, document["info"])
        message.message(2, info.bytes())
    message.plain({"host": (3, _STRING), "basePath": (4, _STRING), "schemes": (5, _STRINGS),
                   "consumes": (6, _STRINGS), "produces": (7, _STRINGS)}, document)
    if "paths" in document:
        paths = _Message()
        paths.vendor(1, document["paths"])
        for path, item in document["paths"].items():
            if not path.startswith("x-"):
                paths.message(2, _named(path, _path_item(item)))
        message.message(8, paths.bytes())
    if "definitions" in document:
        definitions = _Message()
        for name, value in document["definitions"].items():
            definitions.message(1, _named(name, schema(value)))
        message.message(9, definitions.bytes())
    if "parameters" in document:
        parameters = _Message()
        for name, value in document["parameters"].items():
            parameters.message(1, _named(name, parameter(value)))
        message.message(10, parameters.bytes())
    for requirement in document.get("security", ()):
        entry = _Message()
        for name, scopes in requirement.items():
            array = _Message()
            for scope in scopes:
                array.string(1, scope, always=True)
            entry.message(1, _named(name, array.bytes()))
        message.message(12, entry.bytes())
    if "securityDefinitions" in document:
        definitions = _Message()
        for name, value in document["securityDefinitions"].items():
            definitions.message(1, _named(name, _security_scheme(value)))
        message.message(13, definitions.bytes())
    message.vendor(16, document)
    return message.bytes()


def _security_scheme(obj: dict) -> bytes:
    # Only the schemes kube-apiserver publishes: apiKey (BearerToken) and basic.
    message = _Message()
    inner = _Message()
    if obj.get("type") == "basic":
        inner.plain({"type": (1, _STRING), "description": (2, _STRING)}, obj)
        inner.vendor(3, obj)
        message.message(1, inner.bytes())
    else:
        inner.plain({"type": (1, _STRING), "name": (2, _STRING), "in": (3, _STRING),
                     "description": (4, _STRING)}, obj)
        inner.vendor(5, obj)
        message.message(2, inner.bytes())
    return message.bytes()
