"""Render routes as one Swagger 2.0 document, as kube-openapi's ``builder`` does.

Every path of every group version goes into one document with all the definitions they
reach (in their v2 form), parameters shared under ``#/parameters/`` as
``collectSharedParameters`` names them, and upstream's security definitions.
"""

from __future__ import annotations

import base64

from .routes import Operation, referenced
from .schemas import V2_PREFIX, go_json, reachable, to_v2
from .v3 import METHODS, UNAUTHORIZED, schema_of, split_common

#: spec.SecurityScheme's field order.
SECURITY_DEFINITIONS = {"BearerToken": {"description": "Bearer Token authentication",
                                        "type": "apiKey", "name": "authorization",
                                        "in": "header"}}


#: The order Go writes a Swagger parameter's fields in (``CommonValidations``,
#: ``SimpleSchema``, ``ParamProps``): the JSON shared parameters are named after.
_PARAMETER_ORDER = ("uniqueItems", "type", "format", "items", "collectionFormat", "default",
                    "description", "name", "in", "required", "schema", "allowEmptyValue")


def _go_order(mapping: dict, order) -> dict:
    rank = {key: i for i, key in enumerate(order)}
    return dict(sorted(mapping.items(), key=lambda item: rank.get(item[0], len(rank))))


def parameter_v2(parameter: dict) -> dict:
    """A v3 parameter object in v2 form (its schema's type inline), fields in Go's order."""
    out = {key: value for key, value in parameter.items() if key != "schema"}
    out.update(parameter.get("schema", {}))
    return _go_order(out, _PARAMETER_ORDER)


def _body(operation: Operation) -> dict:
    body = {"name": "body", "in": "body"}
    if operation.body_required:
        body["required"] = True
    body["schema"] = {"$ref": V2_PREFIX + operation.body}
    return body


def _operation(operation: Operation, parameters: list) -> dict:
    # spec.OperationProps' field order, the extensions after.
    out = {"description": operation.description}
    if operation.consumes:
        out["consumes"] = list(operation.consumes)
    out["produces"] = list(operation.produces)
    out["schemes"] = ["https"]
    out["tags"] = [operation.tag]
    out["operationId"] = operation.operation_id
    params = [parameter_v2(p) for p in parameters]
    if operation.body:
        params.append(_body(operation))
    if params:
        out["parameters"] = sorted(params, key=lambda p: (p["name"], p["in"]))
    responses = {str(code): {"description": description,
                             "schema": schema_of(model, V2_PREFIX)}
                 for code, description, model in operation.responses}
    responses["401"] = UNAUTHORIZED
    out["responses"] = responses
    if operation.action:
        out["x-kubernetes-action"] = operation.action
    if operation.gvk:
        group, version, kind = operation.gvk
        out["x-kubernetes-group-version-kind"] = {"group": group, "kind": kind,
                                                   "version": version}
    return out


def _path_item(operations: list[Operation]) -> dict:
    common, own = split_common(operations)
    by_method = {operation.method: operation for operation in operations}
    item = {method: _operation(by_method[method], own[id(by_method[method])])
            for method in METHODS if method in by_method}
    if common:
        item["parameters"] = [parameter_v2(p) for p in common]
    return item


def _hash(text: str) -> str:
    # kube-openapi's base64Hash: URL-safe base64 of the first 6 bytes of the FNV-1 64-bit
    # hash (big-endian).
    value = 0xCBF29CE484222325
    for byte in text.encode():
        value = (value * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
        value ^= byte
    return base64.urlsafe_b64encode(value.to_bytes(8, "big")[:6]).decode()


def _shareable(parameter: dict) -> bool:
    """``collectSharedParameters``' exclusions: the ``name`` parameters (their description
    names the kind), ``dryRun`` and ``fieldValidation`` (kubectl looks for them inline to
    detect server support), and bodies whose schema is the kind's own."""
    where, name = parameter.get("in"), parameter.get("name")
    if where in ("query", "path") and name == "name":
        return False
    if where == "query" and name in ("dryRun", "fieldValidation"):
        return False
    if where == "body" and name == "body" and "schema" in parameter and not str(
            parameter["schema"].get("$ref", "")).startswith("#/definitions/io.k8s.apimachinery"):
        return False
    return True


def share_parameters(paths: dict) -> dict:
    """``collectSharedParameters`` and ``replaceSharedParameters``: every shareable
    parameter moves to ``#/parameters/<name>-<hash of its JSON>``; returns them."""
    found: dict[str, dict] = {}
    for item in paths.values():
        lists = [item[m].get("parameters", []) for m in METHODS if m in item]
        lists.append(item.get("parameters", []))
        for parameters in lists:
            for parameter in parameters:
                if _shareable(parameter):
                    found.setdefault(go_json(parameter), parameter)
    names: dict[str, str] = {}
    shared: dict[str, dict] = {}
    for text in sorted(found):
        base = found[text].get("name") or "param"
        name, i = f"{base}-{_hash(text)}", 0
        while name in shared:  # only on a hash collision
            i += 1
            name = f"{base}-{i}"
        shared[name] = found[text]
        names[text] = name

    def replace(parameters: list) -> list:
        out = []
        for parameter in parameters:
            text = go_json(parameter)
            out.append({"$ref": "#/parameters/" + names[text]} if text in names else parameter)
        return out

    for item in paths.values():
        for method in METHODS:
            if method in item and "parameters" in item[method]:
                item[method]["parameters"] = replace(item[method]["parameters"])
        if "parameters" in item:
            item["parameters"] = replace(item["parameters"])
    return shared


def render(paths: dict[str, list[Operation]], definitions: dict, info: dict) -> dict:
    """The v2 document of ``paths``, with the definitions they reach in v2 form."""
    operations = [operation for ops in paths.values() for operation in ops]
    names = reachable(referenced(operations), definitions)
    items = {path: _path_item(paths[path]) for path in sorted(paths)}
    parameters = share_parameters(items)
    return {
        "swagger": "2.0",
        "info": info,
        "paths": items,
        "definitions": {name: to_v2(name, definitions[name]) for name in sorted(names)},
        "parameters": dict(sorted(parameters.items())),
        "securityDefinitions": SECURITY_DEFINITIONS,
        "security": [{"BearerToken": []}],
    }
