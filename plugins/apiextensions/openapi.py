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


def definitions(group: str, version: str, kind: str, list_kind: str, plural: str,
                schema: dict, selectable: list[str]) -> dict:
    """The kind's and the list kind's definitions, by name."""
    name = definition_name(group, version, kind)
    body = _clean(copy.deepcopy(schema or {"type": "object"}))
    properties = body.get("properties") or {}
    body["type"] = body.get("type", "object")
    body["properties"] = {"apiVersion": API_VERSION, "kind": KIND, "metadata": OBJECT_METADATA,
                          **{k: v for k, v in properties.items()
                             if k not in ("apiVersion", "kind", "metadata")}}
    body["x-kubernetes-group-version-kind"] = [{"group": group, "kind": kind,
                                                "version": version}]
    body["x-kubernetes-selectable-fields"] = [{"fieldPath": p.lstrip(".")} for p in selectable]
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
