"""Structural-schema checks of an ``openAPIV3Schema``, worded as upstream.

Ports ``apiextensions-apiserver/pkg/apiserver/schema``: ``NewStructural``'s refusals
(``convert.go``), ``ValidateStructural``'s invariants (``validation.go``) and its
completeness check (``complete.go``). The schema stays the v1 JSON dict: its top-level
``properties``, ``items`` and ``additionalProperties`` are the structure; what sits under
``allOf``, ``anyOf``, ``oneOf`` and ``not`` is value validation, where structure-giving
fields are forbidden. Upstream sorts the errors by their text; so does this.
"""

from __future__ import annotations

from kapiserver.apimachinery.field_errors import FieldError, FieldPath

from .internal import as_dict, as_list
from .regexp import regexp_error

__all__ = ["new_structural_error", "validate_structural"]

ROOT, ITEM, FIELD = range(3)
_INT_OR_STRING_ANY_OF = [{"type": "integer"}, {"type": "string"}]
_JUNCTORS = ("allOf", "anyOf", "oneOf")


def _unsupported(s: dict) -> str:
    """``validateUnsupportedFields``."""
    if s.get("id"):
        return "OpenAPIV3Schema 'id' is not supported"
    if s.get("$schema"):
        return "OpenAPIV3Schema 'schema' is not supported"
    if s.get("$ref"):
        return "OpenAPIV3Schema '$ref' is not supported"
    if s.get("patternProperties"):
        return "OpenAPIV3Schema 'patternProperties' is not supported"
    if s.get("dependencies"):
        return "OpenAPIV3Schema 'dependencies' is not supported"
    if s.get("additionalItems") is not None:
        return "OpenAPIV3Schema 'additionalItems' is not supported"
    if s.get("definitions"):
        return "OpenAPIV3Schema 'definitions' is not supported"
    return ""


def new_structural_error(s) -> str:
    """The error ``NewStructural`` returns for ``s`` ("" when it converts)."""
    if not isinstance(s, dict):
        return ""
    error = _unsupported(s)
    if error:
        return error
    for junctor in ("not", *_JUNCTORS):
        for sub in ([s.get(junctor)] if junctor == "not" else as_list(s.get(junctor))):
            error = new_structural_error(sub)
            if error:
                return error
    if isinstance(s.get("additionalProperties"), dict):
        error = new_structural_error(s["additionalProperties"])
        if error:
            return error
    if s.get("x-kubernetes-preserve-unknown-fields") is False:
        return "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined"
    items = s.get("items")
    if isinstance(items, list) and items:
        return "OpenAPIV3Schema 'items' must be a schema, but is an array"
    if isinstance(items, dict):
        error = new_structural_error(items)
        if error:
            return error
    for key in sorted(as_dict(s.get("properties"))):
        error = new_structural_error(s["properties"][key])
        if error:
            return error
    return ""


def _empty(value) -> bool:
    """Go's zero value: nil, false, or an empty string, slice or map (0 is a set pointer)."""
    return value is None or value is False or (isinstance(value, (str, list, dict))
                                                 and not value)


def _items(s: dict):
    items = s.get("items")
    return items if isinstance(items, dict) else None


def _is_int_or_string_any_of(s: dict) -> bool:
    return as_list(s.get("anyOf")) == _INT_OR_STRING_ANY_OF


def _is_int_or_string_all_of(s: dict) -> bool:
    all_of = as_list(s.get("allOf"))
    return bool(all_of) and as_list(as_dict(all_of[0]).get("anyOf")) == _INT_OR_STRING_ANY_OF


def _props(path: FieldPath, key: str) -> FieldPath:
    return path.child("properties").key(key)


def _invariants(s, lvl: int, path: FieldPath, out: list) -> None:
    """``validateStructuralInvariants``."""
    if not isinstance(s, dict):
        return
    kind = s.get("type") or ""
    if kind == "array" and _items(s) is None:
        out.append(FieldError.required(path.child("items"), "must be specified"))
    _invariants(_items(s), ITEM, path.child("items"), out)
    properties = as_dict(s.get("properties"))
    for key in sorted(properties):
        _invariants(properties[key], FIELD, _props(path, key), out)
    additional = s.get("additionalProperties")
    if additional is not None:
        if lvl == ROOT:
            out.append(FieldError.forbidden(path.child("additionalProperties"),
                                            "must not be used at the root"))
        if isinstance(additional, dict):
            _invariants(additional, FIELD, path.child("additionalProperties"), out)
    int_or_string = s.get("x-kubernetes-int-or-string") is True
    preserve = s.get("x-kubernetes-preserve-unknown-fields") is True
    embedded = s.get("x-kubernetes-embedded-resource") is True
    if int_or_string and preserve:
        out.append(FieldError.invalid(path.child("x-kubernetes-preserve-unknown-fields"), True,
                                      "must be false if x-kubernetes-int-or-string is true"))
    if int_or_string and embedded:
        out.append(FieldError.invalid(path.child("x-kubernetes-embedded-resource"), True,
                                      "must be false if x-kubernetes-int-or-string is true"))
    _value_validation(s, _is_int_or_string_any_of(s), _is_int_or_string_all_of(s), lvl, path,
                      out)
    check_metadata = lvl == ROOT or embedded
    if embedded and kind != "object":
        detail = "must be object if x-kubernetes-embedded-resource is true"
        out.append(FieldError.required(path.child("type"), detail) if not kind
                   else FieldError.invalid(path.child("type"), kind, detail))
    elif not kind and not int_or_string and not preserve:
        detail = {ROOT: "must not be empty at the root",
                  ITEM: "must not be empty for specified array items",
                  FIELD: "must not be empty for specified object fields"}[lvl]
        out.append(FieldError.required(path.child("type"), detail))
    if embedded and additional is not None:
        out.append(FieldError.forbidden(path.child("additionalProperties"),
                                        "must not be used if x-kubernetes-embedded-resource "
                                        "is set"))
    if lvl == ROOT and kind and kind != "object":
        out.append(FieldError.invalid(path.child("type"), kind, "must be object at the root"))
    for meta_field in ("kind", "apiVersion"):
        if meta_field in properties and check_metadata:
            got = as_dict(properties[meta_field]).get("type") or ""
            if got != "string":
                out.append(FieldError.invalid(_props(path, meta_field).child("type"), got,
                                              "must be string"))
    if "metadata" in properties:
        _metadata(as_dict(properties["metadata"]), check_metadata, lvl,
                  _props(path, "metadata"), out)
    if embedded and not preserve and not properties:
        out.append(FieldError.required(path.child("properties"),
                                       "must not be empty if x-kubernetes-embedded-resource is "
                                       "true without x-kubernetes-preserve-unknown-fields"))


# What NewStructural keeps of a schema node: a metadata schema at the root may hold nothing
# of it but its type, a default and name/generateName properties.
_NOT_PRESERVED = frozenset(("externalDocs", "example"))


def _metadata(s: dict, check_metadata: bool, lvl: int, path: FieldPath, out: list) -> None:
    """``validateStructuralMetadataInvariants``."""
    kind = s.get("type") or ""
    if check_metadata and kind != "object":
        out.append(FieldError.invalid(path.child("type"), kind, "must be object"))
    if lvl != ROOT:
        return
    rest = {k: v for k, v in s.items() if k not in _NOT_PRESERVED | {"type", "default"}}
    if set(as_dict(rest.get("properties"))) in ({"name"}, {"generateName"},
                                                {"name", "generateName"}):
        rest.pop("properties")
    if not all(_empty(v) for v in rest.values()):
        out.append(FieldError.forbidden(path, "must not specify anything other than name and "
                                              "generateName, but metadata is implicitly "
                                              "specified"))


def _value_validation(v: dict, skip_any_of: bool, skip_first_all_of_any_of: bool, lvl: int,
                      path: FieldPath, out: list) -> None:
    """``validateValueValidation``: the junctors of ``v`` and its ``pattern``."""
    if not skip_any_of:
        for i, sub in enumerate(as_list(v.get("anyOf"))):
            _nested(sub, False, lvl, path.child("anyOf").index(i), out)
    for i, sub in enumerate(as_list(v.get("allOf"))):
        _nested(sub, skip_first_all_of_any_of and i == 0, lvl, path.child("allOf").index(i), out)
    for i, sub in enumerate(as_list(v.get("oneOf"))):
        _nested(sub, False, lvl, path.child("oneOf").index(i), out)
    _nested(v.get("not"), False, lvl, path.child("not"), out)
    pattern = v.get("pattern")
    if isinstance(pattern, str) and pattern:
        error = regexp_error(pattern)
        if error:
            out.append(FieldError.invalid(path.child("pattern"), pattern,
                                          f"must be a valid regular expression, but isn't: "
                                          f"{error}"))


_FORBIDDEN_NESTED = (
    ("type", "must be empty to be structural"),
    ("additionalProperties", "must be undefined to be structural"),
    ("default", "must be undefined to be structural"),
    ("title", "must be empty to be structural"),
    ("description", "must be empty to be structural"),
    ("nullable", "must be false to be structural"),
    ("x-kubernetes-preserve-unknown-fields", "must be false to be structural"),
    ("x-kubernetes-embedded-resource", "must be false to be structural"),
    ("x-kubernetes-int-or-string", "must be false to be structural"),
    ("x-kubernetes-list-map-keys", "must be empty to be structural"),
    ("x-kubernetes-list-type", "must be undefined to be structural"),
    ("x-kubernetes-map-type", "must be undefined to be structural"),
    ("x-kubernetes-validations", "must be empty to be structural"),
)


def _nested(v, skip_any_of: bool, lvl: int, path: FieldPath, out: list) -> None:
    """``validateNestedValueValidation``: no structure below a logical junctor."""
    if not isinstance(v, dict):
        return
    _value_validation(v, skip_any_of, False, lvl, path, out)
    _nested(_items(v), False, lvl, path.child("items"), out)
    properties = as_dict(v.get("properties"))
    for key in sorted(properties):
        _nested(properties[key], False, FIELD, _props(path, key), out)
    for key, detail in _FORBIDDEN_NESTED:
        value = v.get(key)
        # NewStructural keeps x-kubernetes-preserve-unknown-fields only when true.
        if key == "x-kubernetes-preserve-unknown-fields" and value is not True:
            continue
        if not _empty(value):
            out.append(FieldError.forbidden(path.child(key), detail))
    if "metadata" in properties:
        out.append(FieldError.forbidden(_props(path, "metadata"),
                                        "must not be specified in a nested context"))


def _completeness(v: dict, s, s_path: FieldPath, v_path: FieldPath, out: list) -> None:
    """``validateValueValidationCompleteness``."""
    _nested_completeness(v.get("not"), s, s_path, v_path.child("not"), out)
    for junctor in _JUNCTORS:
        for i, sub in enumerate(as_list(v.get(junctor))):
            _nested_completeness(sub, s, s_path, v_path.child(junctor).index(i), out)


def _nested_completeness(v, s, s_path: FieldPath, v_path: FieldPath, out: list) -> None:
    """``validateNestedValueValidationCompleteness``: what value validation speaks of must
    exist in the structure."""
    if not isinstance(v, dict):
        return
    if not isinstance(s, dict):
        out.append(FieldError.required(s_path, f"because it is defined in {v_path}"))
        return
    _completeness(v, s, s_path, v_path, out)
    _nested_completeness(_items(v), _items(s), s_path.child("items"), v_path.child("items"),
                         out)
    structure = as_dict(s.get("properties"))
    properties = as_dict(v.get("properties"))
    for key in sorted(properties):
        if key not in structure:
            out.append(FieldError.required(_props(s_path, key), "because it is defined in "
                                                                f"{_props(v_path, key)}"))
        else:
            _nested_completeness(properties[key], structure[key], _props(s_path, key),
                                 _props(v_path, key), out)


def validate_structural(schema: dict, path: FieldPath) -> list[FieldError]:
    """``ValidateStructural(path, NewStructural(schema))``, sorted by error text."""
    out: list[FieldError] = []
    _invariants(schema, ROOT, path, out)
    _completeness(schema, schema, path, path, out)
    return sorted(out, key=lambda e: e.error_text())
