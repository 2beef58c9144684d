"""Internal ``apiextensions`` Go values as ``%#v`` prints them, for bad values in errors.

Some upstream field errors carry a typed Go value (``spec.Versions``, a whole
``JSONSchemaProps``, a ``ValidationRule``); ``field.Error.ErrorBody`` prints those with
``%#v``. These render the internal types (``pkg/apis/apiextensions/types*.go``) from the
v1 JSON they were converted from. Go prints a non-nil pointer as its address, which no
client can rely on; one fixed address stands for all of them.
"""

from __future__ import annotations

from kapiserver.apimachinery.field_errors import GoValue, go_quote, go_syntax

__all__ = ["go_versions", "go_schema", "go_rule", "go_bytes", "go_strings"]

POINTER = "0xc000000000"


def _ptr(go_type: str, present: bool) -> str:
    return f"(*{go_type})({POINTER if present else 'nil'})"


def _str(value) -> str:
    return go_quote(value if isinstance(value, str) else "")


def _bool(value) -> str:
    return "true" if value is True else "false"


def _int(value) -> str:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else "0"


def _slice(go_type: str, items, render) -> str:
    if not isinstance(items, list):
        return f"{go_type}(nil)"
    return go_type + "{" + ", ".join(render(item) for item in items) + "}"


def _map(go_type: str, items, render) -> str:
    if not isinstance(items, dict):
        return f"{go_type}(nil)"
    return go_type + "{" + ", ".join(f"{go_quote(k)}:{render(items[k])}"
                                     for k in sorted(items)) + "}"


def _struct(go_type: str, fields) -> str:
    return go_type + "{" + ", ".join(f"{name}:{text}" for name, text in fields) + "}"


def strings_text(values) -> str:
    """A ``[]string`` as ``%#v``: ``[]string{"a"}``, or ``[]string(nil)``."""
    return _slice("[]string", values, _str)


def go_strings(values) -> GoValue:
    """A ``[]string`` bad value."""
    return GoValue(strings_text(values))


def go_bytes(data: bytes | None) -> GoValue:
    """A ``[]byte`` bad value: ``[]byte{0x2d, 0x2d}``."""
    if data is None:
        return GoValue("[]byte(nil)")
    return GoValue("[]byte{" + ", ".join(f"0x{b:x}" for b in data) + "}")


# -- versions ------------------------------------------------------------------------------

def _column(column) -> str:
    column = column if isinstance(column, dict) else {}
    return _struct("apiextensions.CustomResourceColumnDefinition", (
        ("Name", _str(column.get("name"))), ("Type", _str(column.get("type"))),
        ("Format", _str(column.get("format"))), ("Description", _str(column.get("description"))),
        ("Priority", _int(column.get("priority"))), ("JSONPath", _str(column.get("jsonPath")))))


def _selectable(field) -> str:
    field = field if isinstance(field, dict) else {}
    return _struct("apiextensions.SelectableField", (("JSONPath", _str(field.get("jsonPath"))),))


def _version(version: dict) -> str:
    return _struct("apiextensions.CustomResourceDefinitionVersion", (
        ("Name", _str(version.get("name"))), ("Served", _bool(version.get("served"))),
        ("Storage", _bool(version.get("storage"))),
        ("Deprecated", _bool(version.get("deprecated"))),
        ("DeprecationWarning", _ptr("string", version.get("deprecationWarning") is not None)),
        ("Schema", _ptr("apiextensions.CustomResourceValidation",
                        version.get("schema") is not None)),
        ("Subresources", _ptr("apiextensions.CustomResourceSubresources",
                              version.get("subresources") is not None)),
        ("AdditionalPrinterColumns", _slice("[]apiextensions.CustomResourceColumnDefinition",
                                            version.get("additionalPrinterColumns"), _column)),
        ("SelectableFields", _slice("[]apiextensions.SelectableField",
                                    version.get("selectableFields"), _selectable))))


def go_versions(versions) -> GoValue:
    """The internal ``spec.Versions`` (a ``[]CustomResourceDefinitionVersion``)."""
    return GoValue(_slice("[]apiextensions.CustomResourceDefinitionVersion", versions,
                          lambda v: _version(v if isinstance(v, dict) else {})))


# -- JSONSchemaProps -----------------------------------------------------------------------

def _rule(rule) -> str:
    rule = rule if isinstance(rule, dict) else {}
    return _struct("apiextensions.ValidationRule", (
        ("Rule", _str(rule.get("rule"))), ("Message", _str(rule.get("message"))),
        ("MessageExpression", _str(rule.get("messageExpression"))),
        ("Reason", _ptr("apiextensions.FieldValueErrorReason", rule.get("reason") is not None)),
        ("FieldPath", _str(rule.get("fieldPath"))),
        ("OptionalOldSelf", _ptr("bool", rule.get("optionalOldSelf") is not None))))


def go_rule(rule) -> GoValue:
    """One ``ValidationRule`` of ``x-kubernetes-validations``."""
    return GoValue(_rule(rule))


def _schema_text(s) -> str:
    s = s if isinstance(s, dict) else {}
    props = "apiextensions.JSONSchemaProps"

    def has(key):
        return s.get(key) is not None

    return _struct(props, (
        ("ID", _str(s.get("id"))), ("Schema", _str(s.get("$schema"))),
        ("Ref", _ptr("string", has("$ref"))), ("Description", _str(s.get("description"))),
        ("Type", _str(s.get("type"))), ("Nullable", _bool(s.get("nullable"))),
        ("Format", _str(s.get("format"))), ("Title", _str(s.get("title"))),
        ("Default", _ptr("apiextensions.JSON", has("default"))),
        ("Maximum", _ptr("float64", has("maximum"))),
        ("ExclusiveMaximum", _bool(s.get("exclusiveMaximum"))),
        ("Minimum", _ptr("float64", has("minimum"))),
        ("ExclusiveMinimum", _bool(s.get("exclusiveMinimum"))),
        ("MaxLength", _ptr("int64", has("maxLength"))),
        ("MinLength", _ptr("int64", has("minLength"))), ("Pattern", _str(s.get("pattern"))),
        ("MaxItems", _ptr("int64", has("maxItems"))), ("MinItems", _ptr("int64", has("minItems"))),
        ("UniqueItems", _bool(s.get("uniqueItems"))),
        ("MultipleOf", _ptr("float64", has("multipleOf"))),
        ("Enum", _slice("[]apiextensions.JSON", s.get("enum"), go_syntax)),
        ("MaxProperties", _ptr("int64", has("maxProperties"))),
        ("MinProperties", _ptr("int64", has("minProperties"))),
        ("Required", strings_text(s.get("required"))),
        ("Items", _ptr("apiextensions.JSONSchemaPropsOrArray", has("items"))),
        ("AllOf", _slice("[]" + props, s.get("allOf"), _schema_text)),
        ("OneOf", _slice("[]" + props, s.get("oneOf"), _schema_text)),
        ("AnyOf", _slice("[]" + props, s.get("anyOf"), _schema_text)),
        ("Not", _ptr(props, has("not"))),
        ("Properties", _map("map[string]" + props, s.get("properties"), _schema_text)),
        ("AdditionalProperties", _ptr("apiextensions.JSONSchemaPropsOrBool",
                                      has("additionalProperties"))),
        ("PatternProperties", _map("map[string]" + props, s.get("patternProperties"),
                                   _schema_text)),
        ("Dependencies", _map("apiextensions.JSONSchemaDependencies", s.get("dependencies"),
                              _dependency)),
        ("AdditionalItems", _ptr("apiextensions.JSONSchemaPropsOrBool", has("additionalItems"))),
        ("Definitions", _map("apiextensions.JSONSchemaDefinitions", s.get("definitions"),
                             _schema_text)),
        ("ExternalDocs", _ptr("apiextensions.ExternalDocumentation", has("externalDocs"))),
        ("Example", _ptr("apiextensions.JSON", has("example"))),
        ("XPreserveUnknownFields", _ptr("bool", has("x-kubernetes-preserve-unknown-fields"))),
        ("XEmbeddedResource", _bool(s.get("x-kubernetes-embedded-resource"))),
        ("XIntOrString", _bool(s.get("x-kubernetes-int-or-string"))),
        ("XListMapKeys", strings_text(s.get("x-kubernetes-list-map-keys"))),
        ("XListType", _ptr("string", has("x-kubernetes-list-type"))),
        ("XMapType", _ptr("string", has("x-kubernetes-map-type"))),
        ("XValidations", _slice("apiextensions.ValidationRules",
                                s.get("x-kubernetes-validations"), _rule))))


def _dependency(value) -> str:
    schema = value if isinstance(value, dict) else None
    return _struct("apiextensions.JSONSchemaPropsOrStringArray", (
        ("Schema", _ptr("apiextensions.JSONSchemaProps", schema is not None)),
        ("Property", strings_text(value if isinstance(value, list) else None))))


def go_schema(schema) -> GoValue:
    """A whole ``JSONSchemaProps`` (not a pointer to one)."""
    return GoValue(_schema_text(schema))


def go_schema_or_array(items) -> GoValue:
    """A ``JSONSchemaPropsOrArray`` (``items``)."""
    is_list = isinstance(items, list)
    return GoValue(_struct("apiextensions.JSONSchemaPropsOrArray", (
        ("Schema", _ptr("apiextensions.JSONSchemaProps", isinstance(items, dict))),
        ("JSONSchemas", _slice("[]apiextensions.JSONSchemaProps", items if is_list else None,
                               _schema_text)))))
