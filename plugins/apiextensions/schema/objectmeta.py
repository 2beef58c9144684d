"""``objectmeta.Validate``: TypeMeta and ObjectMeta of ``x-kubernetes-embedded-resource``
objects below a custom resource's root, worded as upstream (``apiextensions-apiserver``
``pkg/apiserver/schema/objectmeta``)."""

from __future__ import annotations

from kapiserver.apimachinery.field_errors import FieldError, FieldPath
from kapiserver.apimachinery.validation import _parse_group_version, is_dns1035_label, \
    validate_object_meta, validate_path_segment_name

from .validation import (_BOOL, _FLOAT, _INT, _MAP, _NIL, _SLICE, _STRING, _go_value, _index,
                         _key, _kind, go_json)


#: The Go types of ObjectMeta's JSON fields, as json.Unmarshal names them in its errors.
_META_FIELD_TYPES = {
    "name": "string", "generateName": "string", "namespace": "string", "selfLink": "string",
    "uid": "types.UID", "resourceVersion": "string", "generation": "int64",
    "deletionGracePeriodSeconds": "int64", "labels": "map[string]string",
    "annotations": "map[string]string", "ownerReferences": "[]v1.OwnerReference",
    "finalizers": "[]string", "managedFields": "[]v1.ManagedFieldsEntry"}
_JSON_TYPE = {_NIL: "null", _BOOL: "bool", _INT: "number", _FLOAT: "number", _STRING: "string",
              _SLICE: "array", _MAP: "object"}


def _unmarshal_mismatch(value, go_type: str) -> str:
    """The JSON type named in json.Unmarshal's error when ``value`` cannot fill ``go_type``,
    or "" when it can (null fills anything)."""
    kind = _kind(value)
    if kind == _NIL:
        return ""
    if go_type in ("string", "types.UID"):
        return "" if kind == _STRING else _JSON_TYPE[kind]
    if go_type == "int64":
        if kind == _INT:
            return ""
        if kind == _FLOAT:
            return f"number {go_json(value)}"
        return _JSON_TYPE[kind]
    if go_type.startswith("map["):
        return "" if kind == _MAP else _JSON_TYPE[kind]
    return "" if kind == _SLICE else _JSON_TYPE[kind]


def _embedded_meta_error(meta) -> str:
    """The error of ``json.Unmarshal`` into an ObjectMeta, or "" (the fields are checked in
    sorted order, as Go marshals the map before unmarshalling it)."""
    kind = _kind(meta)
    if kind == _NIL:
        return ""
    if kind != _MAP:
        return f"json: cannot unmarshal {_JSON_TYPE[kind]} into Go value of type v1.ObjectMeta"
    for key in sorted(meta):
        go_type = _META_FIELD_TYPES.get(key)
        if go_type is None:
            continue
        value = meta[key]
        found = _unmarshal_mismatch(value, go_type)
        if found:
            return (f"json: cannot unmarshal {found} into Go struct field ObjectMeta.{key} "
                    f"of type {go_type}")
        if go_type == "map[string]string":
            for item_key in sorted(value or {}):
                found = _unmarshal_mismatch(value[item_key], "string")
                if found:
                    return (f"json: cannot unmarshal {found} into Go struct field "
                            f"ObjectMeta.{key} of type string")
        if go_type == "[]string":
            for item in value or ():
                found = _unmarshal_mismatch(item, "string")
                if found:
                    return (f"json: cannot unmarshal {found} into Go struct field "
                            f"ObjectMeta.{key} of type string")
    return ""


def _validate_embedded_resource(path: FieldPath | None, x: dict) -> list[FieldError]:
    def child(name):
        return path.child(name) if path is not None else FieldPath(name)

    errs = []
    if "apiVersion" not in x:
        errs.append(FieldError.required(child("apiVersion"), ""))
    if "kind" not in x:
        errs.append(FieldError.required(child("kind"), ""))
    if "apiVersion" in x:
        v = x["apiVersion"]
        if not isinstance(v, str):
            errs.append(FieldError.invalid(child("apiVersion"), _go_value(v), "must be a string"))
        elif not v:
            errs.append(FieldError.invalid(child("apiVersion"), v, "must not be empty"))
        elif _parse_group_version(v) is None:
            errs.append(FieldError.invalid(child("apiVersion"), v,
                                           f"unexpected GroupVersion string: {v}"))
    if "kind" in x:
        v = x["kind"]
        if not isinstance(v, str):
            errs.append(FieldError.invalid(child("kind"), _go_value(v), "must be a string"))
        elif not v:
            errs.append(FieldError.invalid(child("kind"), v, "must not be empty"))
        else:
            msgs = is_dns1035_label(v.lower())
            if msgs:
                errs.append(FieldError.invalid(
                    child("kind"), v,
                    "may have mixed case, but should otherwise match: " + ",".join(msgs)))
    if "metadata" in x:
        meta = x["metadata"]
        problem = _embedded_meta_error(meta)
        if problem:
            errs.append(FieldError.invalid(child("metadata"), _go_value(meta), problem))
        else:
            meta = dict(meta or {})
            if not meta.get("name"):
                meta["name"] = "fakename"  # upstream sets one to avoid the required error
            errs += validate_object_meta(meta, bool(meta.get("namespace")),
                                         validate_path_segment_name, child("metadata"))
    return errs


def _embedded(path: FieldPath | None, x, s: dict | None, out: list) -> None:
    if not isinstance(s, dict):
        return
    if isinstance(x, dict):
        if s.get("x-kubernetes-embedded-resource"):
            out += _validate_embedded_resource(path, x)
        props = s.get("properties") or {}
        additional = s.get("additionalProperties")
        for key in sorted(x):
            if key in props:
                _embedded(path.child(key) if path is not None else FieldPath(key), x[key],
                          props[key], out)
            elif additional is not None and additional is not False:
                sub = _key(path, key)
                _embedded(sub, x[key], additional if isinstance(additional, dict) else None, out)
    elif isinstance(x, list):
        items = s.get("items")
        for i, item in enumerate(x):
            _embedded(_index(path, i), item, items, out)


def validate_embedded_resources(schema: dict, obj,
                                path: FieldPath | None = None) -> list[FieldError]:
    """``objectmeta.Validate(path, obj, schema, false)``: TypeMeta and ObjectMeta of every
    ``x-kubernetes-embedded-resource`` object below the root."""
    out = []
    _embedded(path, obj, schema, out)
    return out
