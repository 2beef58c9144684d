"""A CRD version's own fields, validated as upstream: its deprecation warning, schema,
subresources, printer columns and selectable fields (``validateCustomResourceDefinitionVersion``
and the functions it calls, ``apiextensions/validation/validation.go``)."""

from __future__ import annotations

from kapiserver.apimachinery.field_errors import FieldError, FieldPath

from ..schema.fieldpath import valid_field_path
from .internal import Options, as_dict, as_list, as_str, openapi_schema
from .openapi import validate_validation
from .structural import new_structural_error

__all__ = ["validate_version", "validate_subresources", "validate_column",
           "validate_selectable_fields", "MAX_SELECTABLE_FIELDS"]

MAX_SELECTABLE_FIELDS = 8
_COLUMN_TYPES = "boolean,date,integer,number,string"
_COLUMN_FORMATS = "byte,date,date-time,double,float,int32,int64,password"


def _deprecation_warning(deprecated: bool, warning) -> list[str]:
    """``validateDeprecationWarning``."""
    if not deprecated and warning is not None:
        return ["can only be set for deprecated versions"]
    if warning is None:
        return []
    warning = as_str(warning)
    errors = []
    raw = warning.encode("utf-8", "surrogatepass")
    if len(raw) > 256:
        errors.append("must be <= 256 characters long")
    if not warning:
        errors.append("must not be an empty string")
    offset = 0
    for ch in warning:
        if not ch.isprintable():
            # Go reports the byte offset of the rune
            errors.append("must only contain printable UTF-8 characters; non-printable "
                          f"character found at index {offset}")
            break
        offset += len(ch.encode("utf-8", "surrogatepass"))
    return errors


def _simple_json_path(value: str, path: FieldPath) -> list[FieldError]:
    """``validateSimpleJSONPath``."""
    if not value:
        return [FieldError.invalid(path, value, "must not be empty")]
    if value[0] != ".":
        return [FieldError.invalid(path, value, "must be a simple json path starting with .")]
    return []


def validate_subresources(subresources, path: FieldPath) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionSubresources``: the scale subresource's paths."""
    scale = as_dict(subresources).get("scale")
    if not isinstance(scale, dict):
        return []
    errs = []
    for name, prefix, detail in (
            ("specReplicasPath", ".spec.", "should be a json path under .spec"),
            ("statusReplicasPath", ".status.", "should be a json path under .status")):
        value = as_str(scale.get(name))
        at = path.child(f"scale.{name}")
        if not value:
            errs.append(FieldError.required(at, ""))
        elif simple := _simple_json_path(value, at):
            errs += simple
        elif not value.startswith(prefix):
            errs.append(FieldError.invalid(at, value, detail))
    selector = scale.get("labelSelectorPath")
    if isinstance(selector, str) and selector:
        at = path.child("scale.labelSelectorPath")
        if simple := _simple_json_path(selector, at):
            errs += simple
        elif not selector.startswith((".spec.", ".status.")):
            errs.append(FieldError.invalid(at, selector,
                                           "should be a json path under either .spec or "
                                           ".status"))
    return errs


def validate_column(column, path: FieldPath) -> list[FieldError]:
    """``ValidateCustomResourceColumnDefinition`` (upstream names the path ``JSONPath``)."""
    column = as_dict(column)
    errs = []
    if not as_str(column.get("name")):
        errs.append(FieldError.required(path.child("name"), ""))
    kind = as_str(column.get("type"))
    if not kind:
        errs.append(FieldError.required(path.child("type"), f"must be one of {_COLUMN_TYPES}"))
    elif kind not in _COLUMN_TYPES.split(","):
        errs.append(FieldError.invalid(path.child("type"), kind,
                                       f"must be one of {_COLUMN_TYPES}"))
    fmt = as_str(column.get("format"))
    if fmt and fmt not in _COLUMN_FORMATS.split(","):
        errs.append(FieldError.invalid(path.child("format"), fmt,
                                       f"must be one of {_COLUMN_FORMATS}"))
    json_path = as_str(column.get("jsonPath"))
    if not json_path:
        errs.append(FieldError.required(path.child("JSONPath"), ""))
    else:
        errs += _simple_json_path(json_path, path.child("JSONPath"))
    return errs


def validate_selectable_fields(fields, schema, path: FieldPath) -> list[FieldError]:
    """``ValidateCustomResourceSelectableFields``: at most 8 distinct paths to string,
    boolean or integer fields outside ``metadata``."""
    errs, unique = [], []
    for i, entry in enumerate(as_list(fields)):
        at = path.index(i).child("jsonPath")
        json_path = as_str(as_dict(entry).get("jsonPath"))
        if not json_path:
            errs.append(FieldError.required(at, ""))
            continue
        named, found, error = valid_field_path(json_path, schema, allow_array_notation=False)
        if error:
            errs.append(FieldError.invalid(at, json_path, f"is an invalid path: {error}"))
            continue
        text = str(named) if named is not None else ""
        if named is not None and named.root().name == "metadata":
            errs.append(FieldError.invalid(at, json_path, "must not point to fields in metadata"))
        if as_dict(found).get("type") not in ("string", "boolean", "integer"):
            errs.append(FieldError.invalid(at, json_path,
                                           "must point to a field of type string, boolean or "
                                           "integer. Enum string fields and strings with "
                                           "formats are allowed."))
        if text in unique:
            errs.append(FieldError.duplicate(at, json_path))
        else:
            unique.append(text)
    if len(unique) > MAX_SELECTABLE_FIELDS:
        errs.append(FieldError.too_many(path, len(unique), MAX_SELECTABLE_FIELDS))
    return errs


def selectable_fields_errors(fields, schema, path: FieldPath,
                             schema_path: FieldPath) -> list[FieldError]:
    """The selectable fields against the schema they select in (``NewStructural`` first)."""
    errs = []
    if error := new_structural_error(schema):
        errs.append(FieldError.invalid(schema_path, "", error))
    return errs + validate_selectable_fields(fields, schema, path)


def validate_version(version: dict, path: FieldPath, status_enabled: bool,
                     opts: Options) -> list[FieldError]:
    """``validateCustomResourceDefinitionVersion`` (of an internal, hoisted version)."""
    errs = []
    warning = version.get("deprecationWarning")
    for message in _deprecation_warning(version.get("deprecated") is True, warning):
        errs.append(FieldError.invalid(path.child("deprecationWarning"), warning, message))
    errs += validate_validation(version.get("schema"), status_enabled,
                                opts.for_version(as_str(version.get("name"))),
                                path.child("schema"))
    errs += validate_subresources(version.get("subresources"), path.child("subresources"))
    for i, column in enumerate(as_list(version.get("additionalPrinterColumns"))):
        errs += validate_column(column, path.child("additionalPrinterColumns").index(i))
    if version.get("selectableFields"):
        schema = openapi_schema(version.get("schema"))
        if schema is None:
            # sic: upstream's message says "is not included" where it means "is included"
            errs.append(FieldError.invalid(path.child("selectableFields"), "",
                                           "selectableFields may only be set when "
                                           "version.schema.openAPIV3Schema is not included"))
        else:
            errs += selectable_fields_errors(version["selectableFields"], schema,
                                             path.child("selectableFields"),
                                             path.child("schema.openAPIV3Schema"))
    return errs
