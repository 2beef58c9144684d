"""OpenAPI definitions: the CRD kinds' own, and each CRD version's as upstream's
``builder.BuildOpenAPIV3`` makes them.

``crd_definitions`` reads upstream's definitions of ``CustomResourceDefinition`` and
everything under it (``openapi_definitions.json``, kube-apiserver v1.32's v3 form).

A CRD version's kind schema is the version's ``openAPIV3Schema`` with ``apiVersion``,
``kind`` and ``metadata`` (ObjectMeta) added; the list kind wraps it. Names are the
reversed group, the version and the kind (``com.example.capture.v1.Gadget``); references
are in the v3 form (``#/components/schemas/...``), which the server's builder also turns
into v2.
"""

from __future__ import annotations

import copy
import os

from kapiserver.openapi.schemas import read_definitions

META = "io.k8s.apimachinery.pkg.apis.meta.v1."
API_VERSION = {"description": "APIVersion defines the versioned schema of this representation "
                              "of an object. Servers should convert recognized schemas to the "
                              "latest internal value, and may reject unrecognized values. More "
                              "info: https://git.k8s.io/community/contributors/devel/"
                              "sig-architecture/api-conventions.md#resources",
               "type": "string"}
KIND = {"description": "Kind is a string value representing the REST resource this object "
                       "represents. Servers may infer this from the endpoint the client submits "
                       "requests to. Cannot be updated. In CamelCase. More info: "
                       "https://git.k8s.io/community/contributors/devel/sig-architecture/"
                       "api-conventions.md#types-kinds",
        "type": "string"}
EMBEDDED_API_VERSION = {
    "description": "apiVersion defines the versioned schema of this representation of an "
                   "object. More info: https://git.k8s.io/community/contributors/devel/"
                   "sig-architecture/api-conventions.md#resources",
    "type": "string"}
EMBEDDED_KIND = {
    "description": "kind is a string value representing the type of this object. In "
                   "CamelCase. More info: https://git.k8s.io/community/contributors/devel/"
                   "sig-architecture/api-conventions.md#types-kinds",
    "type": "string"}
OBJECT_METADATA = {"description": "Standard object's metadata. More info: https://git.k8s.io/"
                                  "community/contributors/devel/sig-architecture/"
                                  "api-conventions.md#metadata",
                   "allOf": [{"$ref": f"#/components/schemas/{META}ObjectMeta"}]}
LIST_METADATA = {"description": "Standard list metadata. More info: https://git.k8s.io/community/"
                                "contributors/devel/sig-architecture/"
                                "api-conventions.md#types-kinds",
                 "allOf": [{"$ref": f"#/components/schemas/{META}ListMeta"}]}
#: Upstream's definitions of the CRD kinds (``io.k8s.apiextensions-apiserver.pkg.apis.
#: apiextensions.v1.CustomResourceDefinition``, ``...JSONSchemaProps``, ...).
CRD_DEFINITIONS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "openapi_definitions.json")
#: Keywords of a CRD schema that OpenAPI documents leave out (upstream strips them).
_DROPPED = ("x-kubernetes-validations",)


def crd_definitions() -> dict:
    """The definitions of ``CustomResourceDefinition``, its list and every type under them,
    by upstream's names (read from the data file on each call)."""
    return read_definitions(CRD_DEFINITIONS_FILE)


def crd_unmarshalers() -> dict:
    """The CRD types that decode themselves (``ResourceSpec.openapi_unmarshalers``): the
    ``JSONSchemaPropsOr*`` wrappers decode their schemas with the non-strict
    ``json.Unmarshal`` (upstream's ``marshal.go``), which drops unknown fields without a
    word; ``JSON`` keeps its value as sent."""
    model = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1."
    props = model + "JSONSchemaProps"
    return {props + "OrArray": props, props + "OrBool": props,
            props + "OrStringArray": props, model + "JSON": None}


def definition_name(group: str, version: str, kind: str) -> str:
    return ".".join(reversed(group.split("."))) + f".{version}.{kind}"


def _clean(schema):
    if isinstance(schema, dict):
        return {k: _clean(v) for k, v in schema.items() if k not in _DROPPED}
    if isinstance(schema, list):
        return [_clean(v) for v in schema]
    return schema


def _kind_body(schema: dict | None, group: str, version: str, kind: str,
               selectable: list[str], v2: bool) -> dict:
    """``buildKubeNative``: the kind's schema with TypeMeta and ObjectMeta, embedded
    resources given theirs; for v2, ``ToStructuralOpenAPIV2`` first, and a root that keeps
    unknown fields published as a bare object (kubectl would refuse every other field)."""
    extensions = {"x-kubernetes-group-version-kind": [{"group": group, "kind": kind,
                                                       "version": version}],
                  "x-kubernetes-selectable-fields": [{"fieldPath": p.lstrip(".")}
                                                     for p in selectable]}
    if v2 and (schema or {}).get("x-kubernetes-preserve-unknown-fields") is True:
        return {"type": "object", **extensions}
    body = _clean(copy.deepcopy(schema or {"type": "object"}))
    if v2:
        body = _structural_v2(body)
    properties = body.get("properties") or {}
    body["type"] = body.get("type", "object")
    body["properties"] = {"apiVersion": API_VERSION, "kind": KIND, "metadata": OBJECT_METADATA,
                          **{k: v for k, v in properties.items()
                             if k not in ("apiVersion", "kind", "metadata")}}
    _add_embedded_properties(body, v2)
    body.update(extensions)
    return body


def _subschemas(s: dict):
    """The schemas directly below ``s``: its properties, items, additionalProperties."""
    for child in (s.get("properties") or {}).values():
        if isinstance(child, dict):
            yield child
    for key in ("items", "additionalProperties"):
        if isinstance(s.get(key), dict):
            yield s[key]


def _add_embedded_properties(s: dict, v2: bool) -> None:
    """``addEmbeddedProperties``: an embedded resource gets apiVersion, kind and ObjectMeta
    and requires the first two (for v2, not one that keeps unknown fields)."""
    for child in _subschemas(s):
        _add_embedded_properties(child, v2)
    if v2 and s.get("x-kubernetes-preserve-unknown-fields") is True:
        return
    if s.get("x-kubernetes-embedded-resource") is not True:
        return
    s.setdefault("properties", {}).update(
        {"apiVersion": EMBEDDED_API_VERSION, "kind": EMBEDDED_KIND,
         "metadata": copy.deepcopy(OBJECT_METADATA)})
    required = s.setdefault("required", [])
    for name in ("kind", "apiVersion"):
        if name not in required:
            required.append(name)


def _structural_v2(s: dict) -> dict:
    """``ToStructuralOpenAPIV2``: what kubectl's OpenAPI v2 reader cannot take, removed."""
    for key in ("allOf", "anyOf", "oneOf", "not"):
        s.pop(key, None)
    if s.pop("nullable", False) is True:
        # an untyped value breaks kubectl if it has items or properties
        for key in ("type", "items", "properties"):
            s.pop(key, None)
    if s.get("x-kubernetes-preserve-unknown-fields") is True:
        s.pop("items", None)
        s.pop("properties", None)
    if s.get("type") == "array" and "items" not in s:
        s.pop("type")
    properties = s.get("properties") or {}
    nullable = {name for name, child in properties.items()
                if isinstance(child, dict) and child.get("nullable") is True}
    if nullable and isinstance(s.get("required"), list):
        s["required"] = [name for name in s["required"] if name not in nullable]
        if not s["required"]:
            del s["required"]
    for child in _subschemas(s):
        _structural_v2(child)
    return s


def definitions(group: str, version: str, kind: str, list_kind: str, plural: str,
                schema: dict, selectable: list[str], v2: bool = False) -> dict:
    """The kind's and the list kind's definitions, by name (``v2``: as ``/openapi/v2``
    publishes them, still with v3 references)."""
    name = definition_name(group, version, kind)
    body = _kind_body(schema, group, version, kind, selectable, v2)
    list_body = {
        "description": f"{list_kind} is a list of {kind}", "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": API_VERSION,
            "items": {"description": f"List of {plural}. More info: https://git.k8s.io/"
                                     "community/contributors/devel/sig-architecture/"
                                     "api-conventions.md",
                      "type": "array", "items": {"$ref": f"#/components/schemas/{name}"}},
            "kind": KIND, "metadata": LIST_METADATA},
        "x-kubernetes-group-version-kind": [{"group": group, "kind": list_kind,
                                             "version": version}],
        "x-kubernetes-selectable-fields": body["x-kubernetes-selectable-fields"]}
    return {name: body, definition_name(group, version, list_kind): list_body}
