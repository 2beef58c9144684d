"""Merge Swagger 2.0 documents as kube-openapi's ``aggregator`` package does.

The aggregator builds ``/openapi/v2`` from its own document and each extension server's:
``filter_by_paths`` keeps the paths an extension may add (upstream: those under
``/apis/``) with what they use, and ``merge`` adds a document to another the way
``MergeSpecsIgnorePathConflictRenamingDefinitionsAndParameters`` does — paths the
destination has already are left out, a definition or shared parameter of the same name
but other content is renamed ``<name>_v2`` (``_v3``, …) with every reference to it, and
definitions equal but for ``x-kubernetes-group-version-kind`` share one entry listing the
kinds of both.

Documents are plain JSON dicts; the source is never changed (it is cached for the next
merge), the destination is.
"""

from __future__ import annotations

DEFINITIONS = "#/definitions/"
PARAMETERS = "#/parameters/"
GVK = "x-kubernetes-group-version-kind"


def _refs(node):
    """Every ``$ref`` string in a JSON value."""
    stack = [node]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                yield ref
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def used(document: dict) -> tuple[set, set]:
    """The definitions and shared parameters the paths reach, directly or through other
    definitions and parameters: ``(definition names, parameter names)``."""
    definitions = document.get("definitions") or {}
    parameters = document.get("parameters") or {}
    seen_definitions, seen_parameters = set(), set()
    pending = list(_refs(document.get("paths") or {}))
    while pending:
        ref = pending.pop()
        if ref.startswith(DEFINITIONS):
            name, table, seen = ref[len(DEFINITIONS):], definitions, seen_definitions
        elif ref.startswith(PARAMETERS):
            name, table, seen = ref[len(PARAMETERS):], parameters, seen_parameters
        else:
            continue
        if name in seen:
            continue
        seen.add(name)
        if name in table:
            pending.extend(_refs(table[name]))
    return seen_definitions, seen_parameters


def filter_by_paths(document: dict, prefixes) -> dict:
    """``FilterSpecByPathsWithoutSideEffects``: the paths starting with one of
    ``prefixes``, without the definitions and parameters only the others used (those no
    path used stay). Shares structure with ``document``, which is not changed."""
    return _keep_paths(document, lambda path: path.startswith(tuple(prefixes)))


def _keep_paths(document: dict, keep) -> dict:
    (definitions_before, parameters_before) = used(document)
    out = dict(document)
    out["paths"] = {path: item for path, item in (document.get("paths") or {}).items()
                    if keep(path)}
    (definitions_after, parameters_after) = used(out)
    for key, before, after in (("definitions", definitions_before, definitions_after),
                               ("parameters", parameters_before, parameters_after)):
        if key in document:
            out[key] = {name: value for name, value in document[key].items()
                        if name in after or name not in before}
    return out


def _rewrite(node, renames: dict):
    """A copy of ``node`` with each ``$ref`` named in ``renames`` replaced."""
    if isinstance(node, dict):
        out = {key: _rewrite(value, renames) for key, value in node.items()}
        ref = node.get("$ref")
        if isinstance(ref, str) and ref in renames:
            out["$ref"] = renames[ref]
        return out
    if isinstance(node, list):
        return [_rewrite(value, renames) for value in node]
    return node


def _without_gvk(schema):
    if isinstance(schema, dict) and GVK in schema:
        return {key: value for key, value in schema.items() if key != GVK}
    return schema


def equal_modulo_gvks(one, other) -> bool:
    """``deepEqualDefinitionsModuloGVKs``: equal once the GVK lists are left out."""
    return _without_gvk(one) == _without_gvk(other)


def merged_gvks(existing: dict, new: dict):
    """``mergedGVKs``: ``existing``'s GVK list with ``new``'s kinds added, sorted by
    ``group/version.kind`` when any was; ``None`` when nothing changes."""
    if GVK not in new:
        return None
    if GVK not in existing:
        return list(new[GVK])
    keys = {_gvk_key(gvk) for gvk in existing[GVK]}
    added = [gvk for gvk in new[GVK] if _gvk_key(gvk) not in keys]
    if not added:
        return None
    return sorted(list(existing[GVK]) + added, key=_gvk_key)


def _gvk_key(gvk: dict) -> str:
    return f"{gvk.get('group', '')}/{gvk.get('version', '')}.{gvk.get('kind', '')}"


def _renames(dest: dict, source: dict, equal) -> dict:
    """New names for the entries of ``source`` that ``dest`` has with other content: an
    equal ``<name>_vN`` already in ``dest`` is reused, else the first free one."""
    used_names = set(dest)
    renames = {}
    for name, value in source.items():
        existing = dest.get(name)
        if existing is None or equal(existing, value):
            continue
        i, new_name, reused = 1, name, False
        while new_name in dest:
            i += 1
            new_name = f"{name}_v{i}"
            if new_name in dest and equal(dest[new_name], value):
                reused = True
                break
        if not reused:
            while new_name in used_names or new_name in source:
                i += 1
                new_name = f"{name}_v{i}"
            used_names.add(new_name)
        renames[name] = new_name
    return renames


def merge(dest: dict, source: dict) -> None:
    """Add ``source``'s paths, definitions and shared parameters to ``dest`` (see the
    module docstring); ``source`` stays as it was."""
    source_paths = source.get("paths") or {}
    dest_paths = dest.setdefault("paths", {})
    keep = {path for path in source_paths if path not in dest_paths}
    if not keep:
        return  # every path conflicts: nothing to add
    if len(keep) < len(source_paths):
        source = _keep_paths(source, keep.__contains__)
        source_paths = source["paths"]
    dest_definitions = dest.setdefault("definitions", {})
    dest_parameters = dest.setdefault("parameters", {})
    definitions = source.get("definitions") or {}
    parameters = source.get("parameters") or {}
    renamed_definitions = _renames(dest_definitions, definitions, equal_modulo_gvks)
    renamed_parameters = _renames(dest_parameters, parameters, lambda a, b: a == b)
    refs = {DEFINITIONS + old: DEFINITIONS + new for old, new in renamed_definitions.items()}
    refs.update({PARAMETERS + old: PARAMETERS + new
                 for old, new in renamed_parameters.items()})
    if refs:
        source_paths = _rewrite(source_paths, refs)
        definitions = _rewrite(definitions, refs)
        parameters = _rewrite(parameters, refs)
    for name, schema in definitions.items():
        name = renamed_definitions.get(name, name)
        existing = dest_definitions.get(name)
        if existing is None:
            dest_definitions[name] = schema
            continue
        gvks = merged_gvks(existing, schema)
        if gvks is not None:
            # A new dict: ``existing`` may be a cached document's.
            dest_definitions[name] = {**existing, GVK: gvks}
    for name, parameter in parameters.items():
        dest_parameters.setdefault(renamed_parameters.get(name, name), parameter)
    for path in keep:
        dest_paths[path] = source_paths[path]


def sort_maps(document: dict) -> dict:
    """``document`` with its paths, definitions and parameters in key order, as Go's
    ``json.Marshal`` writes maps."""
    for key in ("paths", "definitions", "parameters"):
        if isinstance(document.get(key), dict):
            document[key] = dict(sorted(document[key].items()))
    return document
