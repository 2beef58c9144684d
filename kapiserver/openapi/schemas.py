"""OpenAPI schema definitions: the shipped data, references between them, and v2 forms.

Definitions are kept in the OpenAPI v3 form kube-apiserver serves at ``/openapi/v3``
(references ``#/components/schemas/<name>``, a reference with siblings wrapped in
``allOf``). The Swagger 2.0 form of ``/openapi/v2`` is derived from it as upstream derives
both from one Go definition: plain ``$ref`` next to its siblings, defaults pruned
(``handler.PruneDefaults``), and the v2 schemas of the types whose v3 schema is a
``oneOf`` (``IntOrString``, ``Quantity``).

The shipped data is read when documents are built (rarely: on the first request and after
``invalidate()``) and not kept: the built documents hold all a server needs between builds.
Only ``builtin_index()`` keeps one read (2 MiB) for deriving kinds' merge keys and list types.
"""

from __future__ import annotations

import functools
import json
import os

V3_PREFIX = "#/components/schemas/"
V2_PREFIX = "#/definitions/"
GVK = "x-kubernetes-group-version-kind"
_DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "definitions")
#: Data files, in the order they are merged (all derived from the reference documents).
DATA_FILES = ("generated.json",)

#: Keys whose value is one schema, a list of schemas, or a map of schemas (Swagger 2.0's).
_SCHEMA_KEYS = ("items", "additionalProperties")
_SCHEMA_LIST_KEYS = ("allOf",)
_SCHEMA_MAP_KEYS = ("properties", "patternProperties")
#: OpenAPI v3 keywords Swagger 2.0 lacks: dropped from v2 forms, as upstream's v2
#: conversion of CRD schemas drops them.
_V3_ONLY = ("oneOf", "anyOf", "not", "nullable")

#: Upstream's v2 schemas of the types whose v3 schema is a ``oneOf`` of types
#: (``OpenAPISchemaType``/``OpenAPISchemaFormat`` of the Go types).
_V2_ONE_OF = {
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {"type": "string",
                                                         "format": "int-or-string"},
    "io.k8s.apimachinery.pkg.api.resource.Quantity": {"type": "string"},
}


_GO_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                             "\u2028": "\\u2028", "\u2029": "\\u2029"})


def go_json(value, escape_html: bool = True) -> str:
    """``json.Marshal``'s text of ``value``: compact, HTML characters escaped (unless
    ``escape_html`` is false: the JSON v2 encoder kube-openapi writes ``/openapi/v2`` with)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text.translate(_GO_ESCAPES) if escape_html else text


def builtin() -> dict:
    """``{"definitions": {name: schema}, "parameters": {name: parameter},
    "options_parameters": {options kind's definition name: [query parameter]}}`` of the
    data files."""
    out: dict[str, dict] = {"definitions": {}, "parameters": {}, "options_parameters": {}}
    for name in DATA_FILES:
        with open(os.path.join(_DATA_DIR, name)) as f:
            data = json.load(f)
        for key, table in out.items():
            table.update(data.get(key, {}))
    return out


@functools.lru_cache(maxsize=1)
def builtin_index() -> tuple[dict, dict]:
    """``(definitions, models(definitions))`` of the data files, read once per process.

    Shared by whatever derives facts from the shipped schemas kind by kind (the built-in
    kinds' merge keys and list types, on each kind's first write): a start that writes a
    dozen kinds reads the megabyte of JSON once, not once per kind. Never change them.
    """
    definitions = builtin()["definitions"]
    return definitions, models(definitions)


def read_definitions(path: str) -> dict:
    """The definitions of a data file shaped as the shipped ones (``{"description": ...,
    "definitions": {name: schema}}``).

    A plugin keeps its kinds' upstream schemas as such a file, reads it when it installs
    its groups and hands them over as ``ResourceSpec.openapi_definitions``.
    """
    with open(path) as f:
        return json.load(f)["definitions"]


def kind_definitions(spec) -> tuple[dict, str] | None:
    """What describes the kind of ``spec`` (a ``ResourceSpec``) that brings its own schema:
    ``(definitions, name)``, the kind's definition name and every definition it reaches
    (its own and the shipped ones, such as ObjectMeta); ``None`` for a kind without one."""
    own = spec.openapi_definitions
    name = spec.openapi_model or models(own).get((spec.group, spec.version, spec.kind))
    if name not in own:
        return None
    pool = {**builtin()["definitions"], **own}
    return {key: pool[key] for key in reachable([name], pool)}, name


def models(definitions: dict) -> dict:
    """``{(group, version, kind): definition name}`` of the kinds ``definitions`` describe."""
    index = {}
    for name, schema in definitions.items():
        for gvk in schema.get(GVK, ()):
            # Each kind is listed by one definition (meta types list many groups' kinds
            # of their own, such as DeleteOptions, never a served resource's).
            index.setdefault((gvk["group"], gvk["version"], gvk["kind"]), name)
    return index


def refs(schema, found: set | None = None) -> set:
    """The definition names ``schema`` refers to (v2 or v3 references)."""
    found = set() if found is None else found
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "$ref" and isinstance(value, str):
                found.add(value.rsplit("/", 1)[-1])
            elif key in _SCHEMA_MAP_KEYS and isinstance(value, dict):
                for child in value.values():
                    refs(child, found)
            else:
                refs(value, found)
    elif isinstance(schema, list):
        for item in schema:
            refs(item, found)
    return found


def reachable(roots, definitions: dict) -> set:
    """``roots`` and every definition they reach through references.

    Raises ``KeyError`` naming a definition that is referred to but missing.
    """
    seen: set = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        if name not in definitions:
            raise KeyError(f"OpenAPI definition {name!r} is referred to but not defined")
        seen.add(name)
        todo.extend(refs(definitions[name]) - seen)
    return seen


def to_v2(name: str, schema: dict) -> dict:
    """The Swagger 2.0 form of the v3 definition ``name``."""
    if name in _V2_ONE_OF and "oneOf" in schema:
        v2 = {k: v for k, v in schema.items() if k not in ("oneOf", "format")}
        v2.update(_V2_ONE_OF[name])
        return v2
    return _schema_to_v2(schema)


def _schema_to_v2(schema):
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key == "default" or key in _V3_ONLY:
            continue  # handler.PruneDefaults: v2 documents carry no defaults either
        if key == "$ref":
            out[key] = V2_PREFIX + value[len(V3_PREFIX):] if value.startswith(V3_PREFIX) \
                else value
        elif key in _SCHEMA_KEYS:
            out[key] = _schema_to_v2(value)
        elif key == "allOf" and isinstance(value, list) and len(value) == 1 and \
                isinstance(value[0], dict) and set(value[0]) == {"$ref"}:
            # v3 wraps a reference that has siblings in allOf (builder3's wrapRefs); v2 has
            # the reference itself, where the allOf was.
            out["$ref"] = _schema_to_v2(value[0])["$ref"]
        elif key in _SCHEMA_LIST_KEYS:
            out[key] = [_schema_to_v2(item) for item in value]
        elif key in _SCHEMA_MAP_KEYS:
            out[key] = {k: _schema_to_v2(v) for k, v in value.items()}
        else:
            out[key] = value
    return out


def _property(description: str, **schema) -> dict:
    return {"description": description, **schema}


_API_VERSION = _property(
    "APIVersion defines the versioned schema of this representation of an object. Servers "
    "should convert recognized schemas to the latest internal value, and may reject "
    "unrecognized values. More info: https://git.k8s.io/community/contributors/devel/"
    "sig-architecture/api-conventions.md#resources", type="string")
_KIND = _property(
    "Kind is a string value representing the REST resource this object represents. Servers "
    "may infer this from the endpoint the client submits requests to. Cannot be updated. In "
    "CamelCase. More info: https://git.k8s.io/community/contributors/devel/"
    "sig-architecture/api-conventions.md#types-kinds", type="string")


def untyped_name(group: str, version: str, kind: str) -> str:
    """The definition name of a kind without a schema: upstream's name for a built-in
    group's kind (``io.k8s.api.rbac.v1.Role``), else the name upstream gives a custom
    resource (the group's labels reversed: ``example.com`` gives ``com.example.v1.Widget``).
    """
    if not group:
        return f"io.k8s.api.core.{version}.{kind}"
    if group.endswith(".k8s.io"):
        return f"io.k8s.api.{group.split('.')[0]}.{version}.{kind}"
    return f"{'.'.join(reversed(group.split('.')))}.{version}.{kind}"


def untyped_definition(group: str, version: str, kind: str) -> dict:
    """The definition of a kind served without a schema: an object keeping unknown fields.

    Shaped as upstream's CRD builder shapes a custom resource whose schema is only
    ``x-kubernetes-preserve-unknown-fields: true``: ``metadata`` typed, the rest open.
    """
    return {
        "type": "object",
        "properties": {
            "apiVersion": dict(_API_VERSION),
            "kind": dict(_KIND),
            "metadata": _property(
                "Standard object's metadata. More info: https://git.k8s.io/community/"
                "contributors/devel/sig-architecture/api-conventions.md#metadata",
                allOf=[{"$ref": V3_PREFIX + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]),
        },
        "x-kubernetes-preserve-unknown-fields": True,
        GVK: [{"group": group, "kind": kind, "version": version}],
    }


def list_definition(group: str, version: str, kind: str, list_kind: str, model: str) -> dict:
    """The definition of ``list_kind`` holding ``model`` items, as the CRD builder builds it."""
    return {
        "description": f"{list_kind} is a list of {kind}",
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": dict(_API_VERSION),
            "items": _property(
                f"List of {kind.lower()}s. More info: https://git.k8s.io/community/"
                "contributors/devel/sig-architecture/api-conventions.md",
                type="array", items={"$ref": V3_PREFIX + model}),
            "kind": dict(_KIND),
            "metadata": _property(
                "Standard list metadata. More info: https://git.k8s.io/community/"
                "contributors/devel/sig-architecture/api-conventions.md#types-kinds",
                allOf=[{"$ref": V3_PREFIX + "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"}]),
        },
        GVK: [{"group": group, "kind": list_kind, "version": version}],
    }


#: kube-apiserver's groups outside its legacy scheme, whose definition namer upstream's CRD
#: OpenAPI builder uses: its ``DeleteOptions`` does not list their versions.
_OUTSIDE_LEGACY_SCHEME = frozenset({"admission.k8s.io", "apiextensions.k8s.io",
                                    "apiregistration.k8s.io", "imagepolicy.k8s.io"})
_DELETE_OPTIONS = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"


def as_crd_builder_names(definitions: dict) -> dict:
    """``definitions`` as the documents of custom resources show them (a shallow copy)."""
    delete_options = definitions.get(_DELETE_OPTIONS)
    if delete_options is None:
        return definitions
    kinds = delete_options.get("x-kubernetes-group-version-kind") or []
    return {**definitions, _DELETE_OPTIONS: {
        **delete_options, "x-kubernetes-group-version-kind": [
            gvk for gvk in kinds if gvk.get("group") not in _OUTSIDE_LEGACY_SCHEME]}}
