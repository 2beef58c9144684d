"""What a kind's ``x-kubernetes-*`` OpenAPI extensions say of its lists and maps.

Upstream reads them from the same OpenAPI models it serves: strategic merge patch takes
``x-kubernetes-patch-strategy`` and ``-patch-merge-key`` (``PatchMetaFromOpenAPI``);
server-side apply takes ``x-kubernetes-list-type``, ``-list-map-keys`` and ``-map-type``,
and for a list that has no list type, its patch strategy (kube-openapi's schema
converter: ``merge`` with a merge key is a map list keyed by it, ``merge`` alone a set,
anything else atomic). Both are derived here from a kind's v3 definition, once per kind.

Paths are dotted field names. For strategic merge, list items add no segment
(``spec.template.spec.containers.ports``, as ``registry.patch`` walks them); for field
ownership, a list item or map value is ``*`` (``spec.ports.*.protocol``, the patterns of
``fieldmanager.ListTypes``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .schemas import V3_PREFIX


@dataclass
class KindExtensions:
    """The extensions of one kind, by path (see the module docstring for their forms)."""

    #: Strategic merge: list path → merge key (``""``: a list of scalars merged as a set).
    merge_keys: dict = field(default_factory=dict)
    #: Field ownership: list pattern → ``"atomic"``, ``"set"`` or ``("map", keys, defaults)``.
    lists: dict = field(default_factory=dict)
    #: Field ownership: patterns of maps and structs owned as one leaf.
    atomic: list = field(default_factory=list)


def _resolve(schema: dict, definitions: dict) -> tuple[dict, str | None]:
    """The schema a property points to (through ``$ref`` or a one-item ``allOf``)."""
    ref = schema.get("$ref")
    if ref is None and len(schema.get("allOf") or ()) == 1:
        ref = schema["allOf"][0].get("$ref")
    if isinstance(ref, str) and ref.startswith(V3_PREFIX):
        name = ref[len(V3_PREFIX):]
        return definitions.get(name, {}), name
    return schema, None


def _key_defaults(item: dict, keys, definitions: dict) -> dict:
    properties = _resolve(item, definitions)[0].get("properties") or {}
    found = {}
    for key in keys:
        prop = properties.get(key) or {}
        if "default" in prop:
            found[key] = prop["default"]
    return found


def derive(definitions: dict, model: str) -> KindExtensions:
    """The extensions of the kind whose definition is ``model`` (v3 form)."""
    out = KindExtensions()
    _walk(definitions.get(model, {}), definitions, (), (), out, {model})
    return out


def _walk(schema: dict, definitions: dict, smp_path: tuple, pattern: tuple,
          out: KindExtensions, stack: set) -> None:
    schema, name = _resolve(schema, definitions)
    if name is not None:
        if name in stack:  # a recursive type: its lists are described where it began
            return
        stack = stack | {name}
    if schema.get("x-kubernetes-map-type") == "atomic" and pattern:
        out.atomic.append(".".join(pattern))
    kind = schema.get("type")
    if kind == "array":
        _list(schema, definitions, smp_path, pattern, out, stack)
        return
    for key, prop in (schema.get("properties") or {}).items():
        _walk(prop, definitions, smp_path + (key,), pattern + (key,), out, stack)
    values = schema.get("additionalProperties")
    if isinstance(values, dict):
        # Strategic merge names a map's values by their key: nothing to record there.
        _walk(values, definitions, smp_path + ("\x00",), pattern + ("*",), out, stack)


def _list(schema: dict, definitions: dict, smp_path: tuple, pattern: tuple,
          out: KindExtensions, stack: set) -> None:
    items = schema.get("items") or {}
    resolved = _resolve(items, definitions)[0]
    scalar = resolved.get("type") not in ("object", "array") and not resolved.get("properties")
    strategy = (schema.get("x-kubernetes-patch-strategy") or "").split(",")
    merge_key = schema.get("x-kubernetes-patch-merge-key")
    if "merge" in strategy and "\x00" not in smp_path:
        out.merge_keys[".".join(smp_path)] = "" if scalar else (merge_key or "")
    list_type = schema.get("x-kubernetes-list-type")
    keys = schema.get("x-kubernetes-list-map-keys") or ()
    if list_type is None and "merge" in strategy:
        list_type, keys = ("map", (merge_key,)) if merge_key else ("set", ())
    dotted = ".".join(pattern)
    if list_type == "map" and keys:
        out.lists[dotted] = ("map", tuple(keys), _key_defaults(items, keys, definitions))
    elif list_type == "set":
        out.lists[dotted] = "set"
    else:
        out.lists[dotted] = "atomic"
    _walk(items, definitions, smp_path, pattern + ("*",), out, stack)
