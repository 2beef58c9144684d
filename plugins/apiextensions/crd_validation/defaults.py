"""Defaulting of a v1 CustomResourceDefinition, and the form upstream writes it in.

Upstream decodes a CRD into the ``apiextensions/v1`` Go types, defaults it
(``v1/defaults.go``: ``SetDefaults_CustomResourceDefinition``,
``SetDefaults_CustomResourceDefinitionSpec``, ``SetDefaults_ServiceReference``), converts it
to the internal version and back, and encodes it. What a client reads back is therefore:

* every struct in its Go field order, empty ``omitempty`` fields left out and fields
  without ``omitempty`` always present (``versions``, ``served``, ``storage``, a webhook's
  ``conversionReviewVersions``);
* fields the Go types lack dropped;
* schema maps (``properties``, ``definitions``, ...) with sorted keys, and the JSON values
  of ``default``, ``example`` and ``enum`` re-encoded from ``interface{}`` (sorted keys;
  ``null`` for ``default``/``example`` means unset);
* float fields (``minimum``, ``maximum``, ``multipleOf``) printed as Go prints a float64.

Values of the wrong JSON type (Go answers those with a 400 decode error) are kept as sent.
"""

from __future__ import annotations

import math

__all__ = ["set_defaults", "canonical_schema"]

# Emission rules of a field, after encoding/json: ALWAYS (no omitempty), OMIT_EMPTY
# (omitempty on a string, bool, slice or map: left out when empty), POINTER (omitempty on
# a pointer: left out only when unset).
ALWAYS, OMIT_EMPTY, POINTER = range(3)


def _sorted_json(value):
    """A JSON value as Go re-encodes an ``interface{}``: objects with sorted keys."""
    if isinstance(value, dict):
        return {key: _sorted_json(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted_json(item) for item in value]
    return value


def _float(value):
    """A float64 field: ``1.0`` prints as ``1`` in Go (integral values below 1e21)."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() \
            and abs(value) < 1e21:
        return int(value)
    return value


def _struct(value, fields):
    """``value`` (a dict) as the Go struct described by ``fields``: ``(name, rule, convert)``."""
    if not isinstance(value, dict):
        return value
    out = {}
    for name, rule, convert in fields:
        present = name in value
        item = value.get(name)
        if rule == ALWAYS:
            # A missing field, or JSON null, leaves a Go string or bool at its zero value.
            if item is None and convert is _string:
                item = ""
            elif item is None and convert is _bool:
                item = False
            out[name] = convert(item) if convert and item is not None else item
            continue
        if not present or item is None:
            continue
        if rule == OMIT_EMPTY and item in ("", False, [], {}):
            continue
        out[name] = convert(item) if convert else item
    return out


def _string(value):
    return value


def _bool(value):
    return value


def _list_of(convert):
    def each(items):
        return [convert(item) for item in items] if isinstance(items, list) else items
    return each


def _map_of(convert):
    def each(items):
        if not isinstance(items, dict):
            return items
        return {key: convert(items[key]) for key in sorted(items)}
    return each


# -- JSONSchemaProps (v1 types_jsonschema.go) ---------------------------------------------


def canonical_schema(schema):
    """A ``JSONSchemaProps`` in Go's field order, as upstream writes it back."""
    return _struct(schema, _SCHEMA_FIELDS)


def _schema_or_array(value):
    # JSONSchemaPropsOrArray: a schema, or a list of schemas.
    if isinstance(value, list):
        return [canonical_schema(item) for item in value]
    return canonical_schema(value)


def _schema_or_bool(value):
    # JSONSchemaPropsOrBool: a schema, or a boolean.
    return value if isinstance(value, bool) else canonical_schema(value)


def _schema_or_strings(value):
    # JSONSchemaPropsOrStringArray: a schema, or a list of property names.
    return value if isinstance(value, list) else canonical_schema(value)


def _enum(values):
    return [_sorted_json(v) for v in values] if isinstance(values, list) else values


_VALIDATION_RULE_FIELDS = (
    ("rule", ALWAYS, _string), ("message", OMIT_EMPTY, None),
    ("messageExpression", OMIT_EMPTY, None), ("reason", POINTER, None),
    ("fieldPath", OMIT_EMPTY, None), ("optionalOldSelf", POINTER, None))
_EXTERNAL_DOCS_FIELDS = (("description", OMIT_EMPTY, None), ("url", OMIT_EMPTY, None))

_SCHEMA_FIELDS = (
    ("id", OMIT_EMPTY, None), ("$schema", OMIT_EMPTY, None), ("$ref", POINTER, None),
    ("description", OMIT_EMPTY, None), ("type", OMIT_EMPTY, None),
    ("format", OMIT_EMPTY, None), ("title", OMIT_EMPTY, None),
    ("default", POINTER, _sorted_json), ("maximum", POINTER, _float),
    ("exclusiveMaximum", OMIT_EMPTY, None), ("minimum", POINTER, _float),
    ("exclusiveMinimum", OMIT_EMPTY, None), ("maxLength", POINTER, None),
    ("minLength", POINTER, None), ("pattern", OMIT_EMPTY, None), ("maxItems", POINTER, None),
    ("minItems", POINTER, None), ("uniqueItems", OMIT_EMPTY, None),
    ("multipleOf", POINTER, _float), ("enum", OMIT_EMPTY, _enum),
    ("maxProperties", POINTER, None), ("minProperties", POINTER, None),
    ("required", OMIT_EMPTY, None), ("items", POINTER, _schema_or_array),
    ("allOf", OMIT_EMPTY, _list_of(canonical_schema)),
    ("oneOf", OMIT_EMPTY, _list_of(canonical_schema)),
    ("anyOf", OMIT_EMPTY, _list_of(canonical_schema)), ("not", POINTER, canonical_schema),
    ("properties", OMIT_EMPTY, _map_of(canonical_schema)),
    ("additionalProperties", POINTER, _schema_or_bool),
    ("patternProperties", OMIT_EMPTY, _map_of(canonical_schema)),
    ("dependencies", OMIT_EMPTY, _map_of(_schema_or_strings)),
    ("additionalItems", POINTER, _schema_or_bool),
    ("definitions", OMIT_EMPTY, _map_of(canonical_schema)),
    ("externalDocs", POINTER, lambda v: _struct(v, _EXTERNAL_DOCS_FIELDS)),
    ("example", POINTER, _sorted_json), ("nullable", OMIT_EMPTY, None),
    ("x-kubernetes-preserve-unknown-fields", POINTER, None),
    ("x-kubernetes-embedded-resource", OMIT_EMPTY, None),
    ("x-kubernetes-int-or-string", OMIT_EMPTY, None),
    ("x-kubernetes-list-map-keys", OMIT_EMPTY, None),
    ("x-kubernetes-list-type", POINTER, None), ("x-kubernetes-map-type", POINTER, None),
    ("x-kubernetes-validations", OMIT_EMPTY,
     _list_of(lambda v: _struct(v, _VALIDATION_RULE_FIELDS))),
)

# -- CustomResourceDefinition (v1 types.go) -----------------------------------------------

_NAMES_FIELDS = (
    ("plural", ALWAYS, _string), ("singular", OMIT_EMPTY, None),
    ("shortNames", OMIT_EMPTY, None), ("kind", ALWAYS, _string),
    ("listKind", OMIT_EMPTY, None), ("categories", OMIT_EMPTY, None))
_COLUMN_FIELDS = (
    ("name", ALWAYS, _string), ("type", ALWAYS, _string), ("format", OMIT_EMPTY, None),
    ("description", OMIT_EMPTY, None), ("priority", OMIT_EMPTY, None),
    ("jsonPath", ALWAYS, _string))
_SCALE_FIELDS = (
    ("specReplicasPath", ALWAYS, _string), ("statusReplicasPath", ALWAYS, _string),
    ("labelSelectorPath", POINTER, None))
_SUBRESOURCES_FIELDS = (
    ("status", POINTER, lambda v: {} if isinstance(v, dict) else v),
    ("scale", POINTER, lambda v: _struct(v, _SCALE_FIELDS)))
_VALIDATION_FIELDS = (("openAPIV3Schema", POINTER, canonical_schema),)
_VERSION_FIELDS = (
    ("name", ALWAYS, _string), ("served", ALWAYS, _bool), ("storage", ALWAYS, _bool),
    ("deprecated", OMIT_EMPTY, None), ("deprecationWarning", POINTER, None),
    ("schema", POINTER, lambda v: _struct(v, _VALIDATION_FIELDS)),
    ("subresources", POINTER, lambda v: _struct(v, _SUBRESOURCES_FIELDS)),
    ("additionalPrinterColumns", OMIT_EMPTY, _list_of(lambda v: _struct(v, _COLUMN_FIELDS))),
    ("selectableFields", OMIT_EMPTY,
     _list_of(lambda v: _struct(v, (("jsonPath", ALWAYS, _string),)))))
_SERVICE_FIELDS = (
    ("namespace", ALWAYS, _string), ("name", ALWAYS, _string), ("path", POINTER, None),
    ("port", POINTER, None))
_CLIENT_CONFIG_FIELDS = (
    ("url", POINTER, None), ("service", POINTER, lambda v: _struct(v, _SERVICE_FIELDS)),
    ("caBundle", OMIT_EMPTY, None))
_WEBHOOK_FIELDS = (
    ("clientConfig", POINTER, lambda v: _struct(v, _CLIENT_CONFIG_FIELDS)),
    ("conversionReviewVersions", ALWAYS, None))
_CONVERSION_FIELDS = (
    ("strategy", ALWAYS, _string), ("webhook", POINTER, lambda v: _struct(v, _WEBHOOK_FIELDS)))
_SPEC_FIELDS = (
    ("group", ALWAYS, _string), ("names", ALWAYS, lambda v: _struct(v, _NAMES_FIELDS)),
    ("scope", ALWAYS, _string),
    ("versions", ALWAYS, _list_of(lambda v: _struct(v, _VERSION_FIELDS))),
    ("conversion", POINTER, lambda v: _struct(v, _CONVERSION_FIELDS)),
    ("preserveUnknownFields", OMIT_EMPTY, None))


def _default_spec(spec: dict) -> None:
    """``SetDefaults_CustomResourceDefinitionSpec`` and ``SetDefaults_ServiceReference``."""
    names = spec.get("names")
    if not isinstance(names, dict):
        names = spec["names"] = {}
    kind = names.get("kind") if isinstance(names.get("kind"), str) else ""
    if not names.get("singular"):
        names["singular"] = kind.lower()
    if not names.get("listKind") and kind:
        names["listKind"] = kind + "List"
    if spec.get("conversion") is None:
        spec["conversion"] = {"strategy": "None"}
    webhook = spec["conversion"].get("webhook") if isinstance(spec["conversion"], dict) else None
    client = webhook.get("clientConfig") if isinstance(webhook, dict) else None
    service = client.get("service") if isinstance(client, dict) else None
    if isinstance(service, dict) and service.get("port") is None:
        service["port"] = 443


def set_defaults(crd: dict) -> None:
    """Default ``crd`` in place (``SetObjectDefaults_CustomResourceDefinition``) and put its
    spec in the form upstream answers with (Go's field order, unknown fields dropped)."""
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        spec = {}
    _default_spec(spec)
    crd["spec"] = _struct(spec, _SPEC_FIELDS)
    status = crd.get("status")
    if isinstance(status, dict) and not status.get("storedVersions"):
        # SetDefaults_CustomResourceDefinition: the first storage version is stored.
        for version in crd["spec"].get("versions") or []:
            if isinstance(version, dict) and version.get("storage") is True:
                status["storedVersions"] = [version.get("name", "")]
                break
