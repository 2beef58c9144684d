"""Validation of a CRD's ``openAPIV3Schema``, worded as upstream.

Ports ``validateCustomResourceDefinitionValidation`` and
``ValidateCustomResourceDefinitionOpenAPISchema`` (with ``specStandardValidatorV3``) of
``apiextensions/validation/validation.go``: the root restrictions under a status
subresource, the structural-schema checks (``structural``), defaults (``defaults_check``),
then a walk of every node for unsupported keywords and ``x-kubernetes-*`` extension rules.
The ``x-kubernetes-validations`` rules are the ``cel`` module's to check; their compilation
runs only for a structural schema whose walk found nothing wrong (upstream skips it at
nodes with errors). Go walks ``properties`` in random order; this walks them sorted.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kapiserver.apimachinery.field_errors import FieldError, FieldPath

from .defaults_check import validate_defaults
from .gosyntax import go_schema, go_schema_or_array, go_strings
from .internal import Options, as_dict, as_list
from .structural import new_structural_error, validate_structural

__all__ = ["validate_validation", "map_list_keys_map_set_errors", "OPENAPI_V3_TYPES"]

OPENAPI_V3_TYPES = ["array", "boolean", "integer", "number", "object", "string"]
_META_FIELDS = frozenset(("metadata", "kind", "apiVersion"))

# The internal JSONSchemaProps fields in Go order, by JSON name; and those a root schema
# may set when the status subresource is on (allowedFieldsAtRootSchema).
_GO_FIELDS = (
    ("id", "ID"), ("$schema", "Schema"), ("$ref", "Ref"), ("description", "Description"),
    ("type", "Type"), ("nullable", "Nullable"), ("format", "Format"), ("title", "Title"),
    ("default", "Default"), ("maximum", "Maximum"), ("exclusiveMaximum", "ExclusiveMaximum"),
    ("minimum", "Minimum"), ("exclusiveMinimum", "ExclusiveMinimum"),
    ("maxLength", "MaxLength"), ("minLength", "MinLength"), ("pattern", "Pattern"),
    ("maxItems", "MaxItems"), ("minItems", "MinItems"), ("uniqueItems", "UniqueItems"),
    ("multipleOf", "MultipleOf"), ("enum", "Enum"), ("maxProperties", "MaxProperties"),
    ("minProperties", "MinProperties"), ("required", "Required"), ("items", "Items"),
    ("allOf", "AllOf"), ("oneOf", "OneOf"), ("anyOf", "AnyOf"), ("not", "Not"),
    ("properties", "Properties"), ("additionalProperties", "AdditionalProperties"),
    ("patternProperties", "PatternProperties"), ("dependencies", "Dependencies"),
    ("additionalItems", "AdditionalItems"), ("definitions", "Definitions"),
    ("externalDocs", "ExternalDocs"), ("example", "Example"),
    ("x-kubernetes-preserve-unknown-fields", "XPreserveUnknownFields"),
    ("x-kubernetes-embedded-resource", "XEmbeddedResource"),
    ("x-kubernetes-int-or-string", "XIntOrString"),
    ("x-kubernetes-list-map-keys", "XListMapKeys"), ("x-kubernetes-list-type", "XListType"),
    ("x-kubernetes-map-type", "XMapType"), ("x-kubernetes-validations", "XValidations"))
_ALLOWED_AT_ROOT = [
    "Description", "Type", "Format", "Title", "Maximum", "ExclusiveMaximum", "Minimum",
    "ExclusiveMinimum", "MaxLength", "MinLength", "Pattern", "MaxItems", "MinItems",
    "UniqueItems", "MultipleOf", "Required", "Items", "Properties", "ExternalDocs", "Example",
    "XPreserveUnknownFields", "XValidations"]


def _zero(value) -> bool:
    # reflect's zero value of a field decoded from JSON (a set pointer is never zero).
    return value is None or value is False or (isinstance(value, (str, list, dict))
                                               and not value)


def _root_errors(schema: dict, path: FieldPath) -> list[FieldError]:
    """The root of a schema with a status subresource: type object, few other fields."""
    for name, go_name in _GO_FIELDS:
        value = schema.get(name)
        if _zero(value):
            continue
        if go_name == "Type":
            if value != "object":
                return [FieldError.invalid(path.child("openAPIV3Schema.type"), value,
                                           'only "object" is allowed as the type at the root '
                                           "of the schema if the status subresource is "
                                           "enabled")]
            continue
        if go_name not in _ALLOWED_AT_ROOT:
            allowed = "[" + " ".join(_ALLOWED_AT_ROOT) + "]"
            return [FieldError.invalid(path.child("openAPIV3Schema"), go_schema(schema),
                                       f"only {allowed} fields are allowed at the root of "
                                       "the schema if the status subresource is enabled")]
    return []


@dataclass(frozen=True)
class _Walker:
    """``specStandardValidatorV3`` and the options of the walk."""

    opts: Options
    allow_defaults: bool = True
    disallow_defaults_reason: str = ""
    inside_resource_meta: bool = False

    def forbid_defaults(self, reason: str) -> "_Walker":
        return replace(self, allow_defaults=False, disallow_defaults_reason=reason)

    def check_node(self, s: dict, path: FieldPath, out: list) -> None:
        """``specStandardValidatorV3.validate``: keywords a CRD schema may not use."""
        kind = s.get("type") or ""
        if self.opts.require_valid_property_type and kind and kind not in OPENAPI_V3_TYPES:
            out.append(FieldError.not_supported(path.child("type"), kind, OPENAPI_V3_TYPES))
        if s.get("default") is not None and not self.allow_defaults:
            detail = "must not be set"
            if self.disallow_defaults_reason:
                detail += " " + self.disallow_defaults_reason
            out.append(FieldError.forbidden(path.child("default"), detail))
        for key, detail in (("id", "id is not supported"),
                            ("additionalItems", "additionalItems is not supported"),
                            ("patternProperties", "patternProperties is not supported"),
                            ("definitions", "definitions is not supported"),
                            ("dependencies", "dependencies is not supported"),
                            ("$ref", "$ref is not supported")):
            value = s.get(key)
            present = value is not None if key in ("additionalItems", "dependencies", "$ref") \
                else not _zero(value)
            if present:
                out.append(FieldError.forbidden(path.child(key), detail))
        if kind == "null":
            out.append(FieldError.forbidden(path.child("type"), "type cannot be set to null, "
                                                                "use nullable as an alternative"))
        if isinstance(s.get("items"), list) and s["items"]:
            out.append(FieldError.forbidden(path.child("items"),
                                            "items must be a schema object and not an array"))
        if self.inside_resource_meta and s.get("x-kubernetes-embedded-resource") is True:
            out.append(FieldError.forbidden(path.child("x-kubernetes-embedded-resource"),
                                            "must not be used inside of resource meta"))

    def walk(self, s, path: FieldPath, is_root: bool, out: list) -> None:
        """``ValidateCustomResourceDefinitionOpenAPISchema`` (its schema errors)."""
        if not isinstance(s, dict):
            return
        self.check_node(s, path, out)
        if s.get("uniqueItems") is True:
            out.append(FieldError.forbidden(path.child("uniqueItems"),
                                            "uniqueItems cannot be set to true since the "
                                            "runtime complexity becomes quadratic"))
        properties = as_dict(s.get("properties"))
        additional = s.get("additionalProperties")
        if additional is not None:
            if properties and additional is not True:
                out.append(FieldError.forbidden(path.child("additionalProperties"),
                                                "additionalProperties and properties are "
                                                "mutual exclusive"))
            sub = self
            if self.inside_resource_meta:
                # pruning without a value is ambiguous below metadata's maps
                sub = self.forbid_defaults("inside additionalProperties applying to object "
                                           "metadata")
            sub.walk(additional, path.child("additionalProperties"), False, out)
        embedded = s.get("x-kubernetes-embedded-resource") is True
        for name in sorted(properties):
            sub = self
            if (is_root or embedded) and name in _META_FIELDS:
                sub = replace(sub, inside_resource_meta=True)
                if is_root:
                    sub = sub.forbid_defaults(f"in top-level {name}")
            sub.walk(properties[name], path.child("properties").key(name), False, out)
        self.walk(s.get("not"), path.child("not"), False, out)
        for junctor in ("allOf", "oneOf", "anyOf"):
            for i, sub_schema in enumerate(as_list(s.get(junctor))):
                self.walk(sub_schema, path.child(junctor).index(i), False, out)
        for name in sorted(as_dict(s.get("definitions"))):
            self.walk(s["definitions"][name], path.child("definitions").key(name), False, out)
        items = s.get("items")
        if isinstance(items, dict):
            self.walk(items, path.child("items"), False, out)
        for i, item in enumerate(as_list(items)):
            self.walk(item, path.child("items").index(i), False, out)
        for name in sorted(as_dict(s.get("dependencies"))):
            self.walk(s["dependencies"][name], path.child("dependencies").key(name), False, out)
        if s.get("x-kubernetes-preserve-unknown-fields") is False:
            out.append(FieldError.invalid(path.child("x-kubernetes-preserve-unknown-fields"),
                                          False, "must be true or undefined"))
        self.check_extensions(s, path, out)
        if self.opts.require_map_list_keys_map_set_validation:
            out.extend(map_list_keys_map_set_errors(s, path))

    def check_extensions(self, s: dict, path: FieldPath, out: list) -> None:
        """The ``x-kubernetes-map-type``, ``-list-type`` and ``-list-map-keys`` rules."""
        kind = s.get("type") or ""
        map_type = s.get("x-kubernetes-map-type")
        list_type = s.get("x-kubernetes-list-type")
        keys = as_list(s.get("x-kubernetes-list-map-keys"))
        items = s.get("items")
        item = items if isinstance(items, dict) else None
        if map_type is not None and kind != "object":
            detail = "must be object if x-kubernetes-map-type is specified"
            out.append(FieldError.required(path.child("type"), detail) if not kind
                       else FieldError.invalid(path.child("type"), kind, detail))
        if map_type is not None and map_type not in ("atomic", "granular"):
            out.append(FieldError.not_supported(path.child("x-kubernetes-map-type"), map_type,
                                                ["atomic", "granular"]))
        if list_type is not None and kind != "array":
            detail = "must be array if x-kubernetes-list-type is specified"
            out.append(FieldError.required(path.child("type"), detail) if not kind
                       else FieldError.invalid(path.child("type"), kind, detail))
        elif self.opts.require_atomic_set_type and list_type == "set" and item is not None:
            detail = "must be atomic as item of a list with x-kubernetes-list-type=set"
            item_list_type = item.get("x-kubernetes-list-type")
            if item.get("type") == "array":
                if item_list_type is not None and item_list_type != "atomic":
                    out.append(FieldError.invalid(
                        path.child("items").child("x-kubernetes-list-type"), item_list_type,
                        detail))
            elif item.get("type") == "object" and item.get("x-kubernetes-map-type") != "atomic":
                # upstream reports the item's list type here, whatever it is
                out.append(FieldError.invalid(path.child("items").child("x-kubernetes-map-type"),
                                              item_list_type, detail))
        if list_type is not None and list_type not in ("atomic", "set", "map"):
            out.append(FieldError.not_supported(path.child("x-kubernetes-list-type"), list_type,
                                                ["atomic", "set", "map"]))
        if keys:
            detail = "must be map if x-kubernetes-list-map-keys is non-empty"
            if list_type is None:
                out.append(FieldError.required(path.child("x-kubernetes-list-type"), detail))
            elif list_type != "map":
                out.append(FieldError.invalid(path.child("x-kubernetes-list-type"), list_type,
                                              detail))
        if list_type != "map":
            return
        if not keys:
            out.append(FieldError.required(path.child("x-kubernetes-list-map-keys"),
                                           "must not be empty if x-kubernetes-list-type is map"))
        if items is None:
            out.append(FieldError.required(path.child("items"),
                                           "must have a schema if x-kubernetes-list-type is map"))
        elif item is None:
            out.append(FieldError.invalid(path.child("items"), go_schema_or_array(items),
                                          "must only have a single schema if "
                                          "x-kubernetes-list-type is map"))
        elif item.get("type") != "object":
            out.append(FieldError.invalid(path.child("items").child("type"),
                                          item.get("type") or "",
                                          "must be object if parent array's "
                                          "x-kubernetes-list-type is map"))
        else:
            item_properties = as_dict(item.get("properties"))
            seen = set()
            for key in keys:
                if key in item_properties:
                    if as_dict(item_properties[key]).get("type") in ("array", "object"):
                        # upstream names the item's type ("object") as the bad value
                        out.append(FieldError.invalid(
                            path.child("items").child("properties").key(key).child("type"),
                            "object", "must be a scalar type if parent array's "
                                      "x-kubernetes-list-type is map"))
                else:
                    out.append(FieldError.invalid(path.child("x-kubernetes-list-map-keys"),
                                                  go_strings(keys),
                                                  "entries must all be names of item "
                                                  "properties"))
                if key in seen:
                    out.append(FieldError.invalid(path.child("x-kubernetes-list-map-keys"),
                                                  go_strings(keys),
                                                  "must not contain duplicate entries"))
                seen.add(key)


def map_list_keys_map_set_errors(s: dict, path: FieldPath) -> list[FieldError]:
    """``validateMapListKeysMapSet``: set and map items, and map keys, are never null."""
    out: list[FieldError] = []
    item = s.get("items")
    list_type = s.get("x-kubernetes-list-type")
    if not isinstance(item, dict) or list_type not in ("set", "map"):
        return out
    if item.get("nullable") is True:
        out.append(FieldError.forbidden(path.child("items").child("nullable"),
                                        "cannot be nullable when x-kubernetes-list-type is "
                                        + list_type))
    if list_type != "map":
        return out
    required = set(as_list(item.get("required")))
    properties = as_dict(item.get("properties"))
    for key in as_list(s.get("x-kubernetes-list-map-keys")):
        if key not in properties:
            continue
        prop = as_dict(properties[key])
        key_path = path.child("items").child("properties").key(key)
        if key not in required and prop.get("default") is None:
            out.append(FieldError.required(key_path.child("default"),
                                           "this property is in x-kubernetes-list-map-keys, so "
                                           "it must have a default or be a required property"))
        if prop.get("nullable") is True:
            out.append(FieldError.forbidden(key_path.child("nullable"),
                                            "this property is in x-kubernetes-list-map-keys, "
                                            "so it cannot be nullable"))
    return out


def _rule_errors(schema: dict, path: FieldPath, compile_rules: bool,
                 opts: Options) -> list[FieldError]:
    """The errors of the ``x-kubernetes-validations`` rules (their fields, compilation and
    cost), from the CEL module; upstream compiles only where the schema is sound."""
    from ..cel import validate_schema_rules  # loads the CEL library on first use

    return list(validate_schema_rules(schema, path, compile_rules=compile_rules,
                                      per_expression_cost=not opts.suppress_per_expression_cost))


def validate_validation(validation, status_enabled: bool, opts: Options,
                        path: FieldPath) -> list[FieldError]:
    """``validateCustomResourceDefinitionValidation`` of a ``CustomResourceValidation``."""
    if not isinstance(validation, dict):
        return []
    schema = validation.get("openAPIV3Schema")
    if not isinstance(schema, dict):
        return []
    schema_path = path.child("openAPIV3Schema")
    errs = _root_errors(schema, path) if status_enabled else []
    if schema.get("nullable") is True:
        errs.append(FieldError.forbidden(path.child("openAPIV3Schema.nullable"),
                                         "nullable cannot be true at the root"))
    structural_ok, init_errs = False, []
    if opts.require_structural_schema:
        init_error = new_structural_error(schema)
        if init_error:
            # reported only when nothing else is: the walk names the same problems
            init_errs = [FieldError.invalid(schema_path, "", init_error)]
        elif structural := validate_structural(schema, schema_path):
            errs += structural
        elif defaults := validate_defaults(schema, schema_path, opts.require_pruned_defaults):
            errs += defaults
        else:
            structural_ok = True
    walked: list[FieldError] = []
    _Walker(opts, opts.allow_defaults, opts.disallow_defaults_reason).walk(
        schema, schema_path, True, walked)
    errs += walked
    errs += _rule_errors(schema, schema_path, structural_ok and not walked, opts)
    if not errs:
        errs += init_errs
    return errs
