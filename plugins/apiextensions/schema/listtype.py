"""``listtype.ValidateListSetsAndMaps``: no duplicates in ``x-kubernetes-list-type`` set
lists, no two items with the same keys in map lists, worded as upstream."""

from __future__ import annotations

from kapiserver.apimachinery.field_errors import FieldError, FieldPath

from .validation import _MAP, _SLICE, _go_value, _index, _key, _kind, go_json


class _Unspecified:
    """A list-map item without its key (upstream's ``unspecifiedKeyValue{}``)."""


_UNSPECIFIED = _Unspecified()


def _set_key(x):
    k = _kind(x)
    if k == _MAP or k == _SLICE:
        return (None, go_json(x))
    if x is _UNSPECIFIED:
        return (_UNSPECIFIED,)
    return (k, _go_value(x))


def _non_unique(items: list) -> list[int]:
    """``validateListSet``: the index of each value's second appearance."""
    if len(items) <= 1:
        return []
    seen, dupes = {}, []
    for i, x in enumerate(items):
        key = _set_key(x)
        times = seen.get(key, 0)
        seen[key] = times + 1
        if times == 1:
            dupes.append(i)
    return dupes


def _list_map(path, s: dict, obj: list, out: list) -> None:
    for i, x in enumerate(obj):
        if x is not None and not isinstance(x, dict):
            out.append(FieldError.invalid(_index(path, i), _go_value(x),
                                          "must be an object for an array of list-type map"))
            return
    if len(obj) <= 1:
        return
    key_names = s.get("x-kubernetes-list-map-keys") or []
    if len(key_names) == 1:
        name = key_names[0]
        keys = [_UNSPECIFIED if x is None or name not in x else x[name] for x in obj]
        for i in _non_unique(keys):
            value = {} if keys[i] is _UNSPECIFIED else {name: keys[i]}
            out.append(FieldError.duplicate(_index(path, i), value))
        return
    keys = [{k: x[k] for k in key_names if k in x} if x is not None else {} for x in obj]
    for i in _non_unique(keys):
        out.append(FieldError.duplicate(_index(path, i), keys[i]))


def _list_types_value(path, s: dict, obj, out: list) -> None:
    if isinstance(obj, list):
        list_type = s.get("x-kubernetes-list-type")
        if list_type == "set":
            for i in _non_unique(obj):
                out.append(FieldError.duplicate(_index(path, i), obj[i]))
        elif list_type == "map":
            _list_map(path, s, obj, out)
        items = s.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(obj):
                _list_types_value(_index(path, i), items, item, out)
    elif isinstance(obj, dict):
        _list_types_object(path, s, obj, out)


def _list_types_object(path, s: dict, obj: dict, out: list) -> None:
    additional = s.get("additionalProperties")
    if isinstance(additional, dict):
        for key in sorted(obj):
            sub = _key(path, key)
            _list_types_value(sub, additional, obj[key], out)
    props = s.get("properties")
    if props:
        for key in sorted(obj):
            if key in props:
                sub = path.child(key) if path is not None else FieldPath(key)
                _list_types_value(sub, props[key], obj[key], out)


def validate_list_types(schema: dict, obj, path: FieldPath | None = None) -> list[FieldError]:
    """``listtype.ValidateListSetsAndMaps``: duplicates in ``x-kubernetes-list-type`` set and
    map lists (already part of :func:`validate`; for callers that want these alone)."""
    if not isinstance(schema, dict) or not schema:
        return []
    out = []
    if isinstance(obj, dict):
        _list_types_object(path, schema, obj, out)
    else:
        _list_types_value(path, schema, obj, out)
    return out
