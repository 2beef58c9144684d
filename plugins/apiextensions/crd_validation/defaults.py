"""Defaulting of a v1 CustomResourceDefinition, and the form upstream decodes and writes it in.

Upstream decodes a CRD into the ``apiextensions/v1`` Go types, defaults it
(``v1/defaults.go``: ``SetDefaults_CustomResourceDefinition``,
``SetDefaults_CustomResourceDefinitionSpec``, ``SetDefaults_ServiceReference``), converts it
to the internal version and back, and encodes it. What a client reads back is therefore:

* every struct in its Go field order, empty ``omitempty`` fields left out and fields
  without ``omitempty`` always present (``versions``, ``served``, ``storage``, a webhook's
  ``conversionReviewVersions``); fields the Go types lack dropped;
* schema maps (``properties``, ...) with sorted keys, and the JSON values of ``default``,
  ``example`` and ``enum`` re-encoded from ``interface{}`` (sorted keys; a ``null``
  ``default`` or ``example`` is unset);
* float fields (``minimum``, ``maximum``, ``multipleOf``) printed as Go prints a float64.

A value of the wrong JSON type is refused as Go's decoder refuses it: a 400 naming the
struct, the field path (struct fields only: no map keys, no indexes) and the Go type.
"""

from __future__ import annotations

import math

from kapiserver import errors
from kapiserver.runtime.gotypes import json_kind

__all__ = ["set_defaults", "canonical_schema", "DecodeError"]

# Emission rules of a field, after encoding/json: ALWAYS (no omitempty), OMIT_EMPTY
# (omitempty on a string, bool, number, slice or map: left out when empty), POINTER
# (omitempty on a pointer: left out only when unset).
ALWAYS, OMIT_EMPTY, POINTER = range(3)


class DecodeError(Exception):
    """``json.UnmarshalTypeError`` (or a custom unmarshaller's error)."""

    def __init__(self, value: str, go_type: str, struct: str = "", field: str = "",
                 text: str = ""):
        super().__init__(text)
        self.value, self.go_type, self.struct, self.field = value, go_type, struct, field
        self.text = text

    def message(self) -> str:
        if self.text:
            return self.text
        if self.struct or self.field:
            return (f"json: cannot unmarshal {self.value} into Go struct field "
                    f"{self.struct}.{self.field} of type {self.go_type}")
        return f"json: cannot unmarshal {self.value} into Go value of type {self.go_type}"


class _Kind:
    """How one Go type decodes and re-encodes: ``check`` raises ``DecodeError`` (Struct and
    Field are filled in by the enclosing struct), ``convert`` returns the canonical value."""

    def __init__(self, go_type: str, accepts, convert=None, empty=None):
        self.go_type, self.accepts, self.convert, self.empty = go_type, accepts, convert, empty

    def decode(self, value, path: tuple):
        if not self.accepts(value):
            raise DecodeError(json_kind(value), self.go_type)
        return self.convert(value, path) if self.convert else value

    def zero(self):
        """What Go writes for the field when it was never set."""
        return self.empty


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _integer(bits: int, go_type: str) -> _Kind:
    def check(value, path):
        if isinstance(value, float) and not value.is_integer() or \
                _is_number(value) and not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
            raise DecodeError(f"number {value!r}", go_type)
        return int(value)
    return _Kind(go_type, _is_number, check, 0)


def _float(value, path):
    # Go prints an integral float64 below 1e21 without a decimal point.
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() \
            and abs(value) < 1e21:
        return int(value)
    return value


def _sorted_json(value, path=()):
    """A JSON value as Go re-encodes an ``interface{}``: objects with sorted keys."""
    if isinstance(value, dict):
        return {key: _sorted_json(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted_json(item) for item in value]
    return value


def _string(go_type: str = "string") -> _Kind:
    return _Kind(go_type, lambda v: isinstance(v, str), None, "")


STRING = _string()
BOOL = _Kind("bool", lambda v: isinstance(v, bool), None, False)
INT32, INT64 = _integer(32, "int32"), _integer(64, "int64")
FLOAT64 = _Kind("float64", _is_number, _float)
JSON = _Kind("v1.JSON", lambda v: True, _sorted_json)


def _list(elem: _Kind) -> _Kind:
    def convert(items, path):
        return [elem.decode(item, path) for item in items]
    return _Kind("[]" + elem.go_type, lambda v: isinstance(v, list), convert)


def _map(elem: _Kind) -> _Kind:
    def convert(items, path):
        # map keys are not part of Go's error path
        return {key: elem.decode(items[key], path) for key in sorted(items)}
    return _Kind("map[string]" + elem.go_type, lambda v: isinstance(v, dict), convert, {})


class _Struct(_Kind):
    """A Go struct: ``fields`` are ``(json name, emission rule, kind)`` in field order."""

    def __init__(self, name: str, fields=()):
        super().__init__("v1." + name, lambda v: isinstance(v, dict), self._convert)
        self.name, self.fields = name, fields

    def zero(self) -> dict:
        return self._convert({}, ())

    def _convert(self, value: dict, path: tuple) -> dict:
        out = {}
        for field, rule, kind in self.fields:
            item = value.get(field)
            if item is None:
                # missing, or JSON null: Go leaves the zero value
                if rule == ALWAYS:
                    out[field] = kind.zero()
                continue
            here = path + (field,)
            try:
                item = kind.decode(item, here)
            except DecodeError as err:
                if not err.struct and not err.field:
                    err.struct, err.field = self.name, ".".join(here)
                raise
            if item is None:
                continue  # e.g. an "items" that is neither a schema nor a list of them
            if rule == OMIT_EMPTY and (item is False or item == 0 and not isinstance(item, bool)
                                       or item in ("", [], {})):
                continue
            out[field] = item
        return out


class _Custom(_Kind):
    """A type with its own ``UnmarshalJSON``: errors inside keep their type but take the
    path of the field that holds it, as encoding/json's error context does."""

    def __init__(self, go_type: str, decode_value):
        super().__init__(go_type, lambda v: True)
        self.decode_value = decode_value

    def decode(self, value, path: tuple):
        try:
            return self.decode_value(value, path)
        except DecodeError as err:
            if not err.text:
                err.struct, err.field = "", ""
            raise


# -- JSONSchemaProps (v1 types_jsonschema.go) ---------------------------------------------

SCHEMA = _Struct("JSONSchemaProps")


def _schema_or_array(value, path):
    # JSONSchemaPropsOrArray.UnmarshalJSON: an object, an array, anything else ignored
    if isinstance(value, dict):
        return SCHEMA.decode(value, path)
    if isinstance(value, list):
        return _list(SCHEMA).decode(value, path)
    return None


def _schema_or_bool(value, path):
    # JSONSchemaPropsOrBool.UnmarshalJSON
    if isinstance(value, bool):
        return value
    if isinstance(value, dict):
        return SCHEMA.decode(value, path)
    raise DecodeError("", "", text="boolean or JSON schema expected")


def _schema_or_strings(value, path):
    # JSONSchemaPropsOrStringArray.UnmarshalJSON
    if isinstance(value, list):
        return _list(STRING).decode(value, path)
    return SCHEMA.decode(value, path)


_VALIDATION_RULE = _Struct("ValidationRule", (
    ("rule", ALWAYS, STRING), ("message", OMIT_EMPTY, STRING),
    ("messageExpression", OMIT_EMPTY, STRING),
    ("reason", POINTER, _string("v1.FieldValueErrorReason")),
    ("fieldPath", OMIT_EMPTY, STRING), ("optionalOldSelf", POINTER, BOOL)))
_EXTERNAL_DOCS = _Struct("ExternalDocumentation", (
    ("description", OMIT_EMPTY, STRING), ("url", OMIT_EMPTY, STRING)))
_OR_BOOL = _Custom("v1.JSONSchemaPropsOrBool", _schema_or_bool)

SCHEMA.fields = (
    ("id", OMIT_EMPTY, STRING), ("$schema", OMIT_EMPTY, _string("v1.JSONSchemaURL")),
    ("$ref", POINTER, STRING), ("description", OMIT_EMPTY, STRING),
    ("type", OMIT_EMPTY, STRING), ("format", OMIT_EMPTY, STRING),
    ("title", OMIT_EMPTY, STRING), ("default", POINTER, JSON), ("maximum", POINTER, FLOAT64),
    ("exclusiveMaximum", OMIT_EMPTY, BOOL), ("minimum", POINTER, FLOAT64),
    ("exclusiveMinimum", OMIT_EMPTY, BOOL), ("maxLength", POINTER, INT64),
    ("minLength", POINTER, INT64), ("pattern", OMIT_EMPTY, STRING),
    ("maxItems", POINTER, INT64), ("minItems", POINTER, INT64),
    ("uniqueItems", OMIT_EMPTY, BOOL), ("multipleOf", POINTER, FLOAT64),
    ("enum", OMIT_EMPTY, _list(JSON)), ("maxProperties", POINTER, INT64),
    ("minProperties", POINTER, INT64), ("required", OMIT_EMPTY, _list(STRING)),
    ("items", POINTER, _Custom("v1.JSONSchemaPropsOrArray", _schema_or_array)),
    ("allOf", OMIT_EMPTY, _list(SCHEMA)), ("oneOf", OMIT_EMPTY, _list(SCHEMA)),
    ("anyOf", OMIT_EMPTY, _list(SCHEMA)), ("not", POINTER, SCHEMA),
    ("properties", OMIT_EMPTY, _map(SCHEMA)), ("additionalProperties", POINTER, _OR_BOOL),
    ("patternProperties", OMIT_EMPTY, _map(SCHEMA)),
    ("dependencies", OMIT_EMPTY,
     _map(_Custom("v1.JSONSchemaPropsOrStringArray", _schema_or_strings))),
    ("additionalItems", POINTER, _OR_BOOL), ("definitions", OMIT_EMPTY, _map(SCHEMA)),
    ("externalDocs", POINTER, _EXTERNAL_DOCS), ("example", POINTER, JSON),
    ("nullable", OMIT_EMPTY, BOOL), ("x-kubernetes-preserve-unknown-fields", POINTER, BOOL),
    ("x-kubernetes-embedded-resource", OMIT_EMPTY, BOOL),
    ("x-kubernetes-int-or-string", OMIT_EMPTY, BOOL),
    ("x-kubernetes-list-map-keys", OMIT_EMPTY, _list(STRING)),
    ("x-kubernetes-list-type", POINTER, STRING), ("x-kubernetes-map-type", POINTER, STRING),
    ("x-kubernetes-validations", OMIT_EMPTY, _list(_VALIDATION_RULE)),
)


def canonical_schema(schema, path: tuple = ()):
    """A ``JSONSchemaProps`` as upstream decodes and writes it back (raises ``DecodeError``)."""
    return SCHEMA.decode(schema, path)


# -- CustomResourceDefinition (v1 types.go) -----------------------------------------------

_NAMES = _Struct("CustomResourceDefinitionNames", (
    ("plural", ALWAYS, STRING), ("singular", OMIT_EMPTY, STRING),
    ("shortNames", OMIT_EMPTY, _list(STRING)), ("kind", ALWAYS, STRING),
    ("listKind", OMIT_EMPTY, STRING), ("categories", OMIT_EMPTY, _list(STRING))))
_COLUMN = _Struct("CustomResourceColumnDefinition", (
    ("name", ALWAYS, STRING), ("type", ALWAYS, STRING), ("format", OMIT_EMPTY, STRING),
    ("description", OMIT_EMPTY, STRING), ("priority", OMIT_EMPTY, INT32),
    ("jsonPath", ALWAYS, STRING)))
_SUBRESOURCES = _Struct("CustomResourceSubresources", (
    ("status", POINTER, _Struct("CustomResourceSubresourceStatus")),
    ("scale", POINTER, _Struct("CustomResourceSubresourceScale", (
        ("specReplicasPath", ALWAYS, STRING), ("statusReplicasPath", ALWAYS, STRING),
        ("labelSelectorPath", POINTER, STRING))))))
_VERSION = _Struct("CustomResourceDefinitionVersion", (
    ("name", ALWAYS, STRING), ("served", ALWAYS, BOOL), ("storage", ALWAYS, BOOL),
    ("deprecated", OMIT_EMPTY, BOOL), ("deprecationWarning", POINTER, STRING),
    ("schema", POINTER, _Struct("CustomResourceValidation", (
        ("openAPIV3Schema", POINTER, SCHEMA),))),
    ("subresources", POINTER, _SUBRESOURCES),
    ("additionalPrinterColumns", OMIT_EMPTY, _list(_COLUMN)),
    ("selectableFields", OMIT_EMPTY, _list(_Struct("SelectableField", (
        ("jsonPath", ALWAYS, STRING),))))))
_CONVERSION = _Struct("CustomResourceConversion", (
    ("strategy", ALWAYS, _string("v1.ConversionStrategyType")),
    ("webhook", POINTER, _Struct("WebhookConversion", (
        ("clientConfig", POINTER, _Struct("WebhookClientConfig", (
            ("url", POINTER, STRING),
            ("service", POINTER, _Struct("ServiceReference", (
                ("namespace", ALWAYS, STRING), ("name", ALWAYS, STRING),
                ("path", POINTER, STRING), ("port", POINTER, INT32)))),
            ("caBundle", OMIT_EMPTY, _string("[]uint8"))))),
        ("conversionReviewVersions", ALWAYS, _list(STRING)))))))
_SPEC = _Struct("CustomResourceDefinitionSpec", (
    ("group", ALWAYS, STRING), ("names", ALWAYS, _NAMES),
    ("scope", ALWAYS, _string("v1.ResourceScope")), ("versions", ALWAYS, _list(_VERSION)),
    ("conversion", POINTER, _CONVERSION), ("preserveUnknownFields", OMIT_EMPTY, BOOL)))


def _default_spec(spec: dict) -> None:
    """``SetDefaults_CustomResourceDefinitionSpec`` and ``SetDefaults_ServiceReference``."""
    names = spec["names"]
    kind = names["kind"]
    if not names.get("singular"):
        names["singular"] = kind.lower()
    if not names.get("listKind") and kind:
        names["listKind"] = kind + "List"
    if spec.get("conversion") is None:
        spec["conversion"] = {"strategy": "None"}
    service = ((spec["conversion"].get("webhook") or {}).get("clientConfig") or {}).get(
        "service")
    if service is not None and service.get("port") is None:
        service["port"] = 443


def _ordered(value: dict, kind: _Struct) -> dict:
    """``value`` with its keys in ``kind``'s field order (after defaults added some)."""
    order = [name for name, _, _ in kind.fields]
    return {key: value[key] for key in order if key in value}


def set_defaults(crd: dict) -> None:
    """Decode ``crd``'s spec as upstream, default it in place
    (``SetObjectDefaults_CustomResourceDefinition``) and leave it in the form upstream
    answers with; a value of the wrong type raises ``BadRequest`` as Go's decoder does."""
    spec = crd.get("spec")
    try:
        spec = _SPEC.decode(spec if spec is not None else {}, ("spec",))
    except DecodeError as err:
        if not err.struct and not err.field and not err.text:
            err.struct, err.field = "CustomResourceDefinition", "spec"
        raise errors.BadRequest('CustomResourceDefinition in version "v1" cannot be handled '
                                "as a CustomResourceDefinition: " + err.message()) from None
    _default_spec(spec)
    spec["names"] = _ordered(spec["names"], _NAMES)
    crd["spec"] = _ordered(spec, _SPEC)
    status = crd.get("status")
    if isinstance(status, dict) and not status.get("storedVersions"):
        # SetDefaults_CustomResourceDefinition: the first storage version is stored.
        for version in spec.get("versions") or []:
            if version.get("storage") is True:
                status["storedVersions"] = [version.get("name", "")]
                break
