"""Render routes as one OpenAPI 3.0 document, as kube-openapi's ``builder3`` does."""

from __future__ import annotations

from .routes import Operation, referenced
from .schemas import V3_PREFIX, reachable

#: ``spec3.PathProps`` field order: how Go writes a path item's operations.
METHODS = ("get", "put", "post", "delete", "options", "head", "patch")
SECURITY_SCHEMES = {"BearerToken": {"type": "apiKey", "description": "Bearer Token authentication",
                                    "name": "authorization", "in": "header"}}
UNAUTHORIZED = {"description": "Unauthorized"}


def _key(parameter: dict) -> tuple:
    return parameter["name"], parameter["in"]


def split_common(operations: list[Operation]) -> tuple[list, dict]:
    """``findCommonParameters``: parameters every operation of a path has move to the path.

    Returns the path's parameters and, per operation, the rest; both sorted by name and
    location (``sortParameters``).
    """
    counts: dict[tuple, int] = {}
    last: dict[tuple, dict] = {}
    for operation in operations:
        for parameter in operation.parameters:
            counts[_key(parameter)] = counts.get(_key(parameter), 0) + 1
            last[_key(parameter)] = parameter
    common = {key for key, count in counts.items() if count == len(operations)}
    own = {id(operation): sorted((p for p in operation.parameters if _key(p) not in common),
                                 key=_key)
           for operation in operations}
    return sorted((last[key] for key in common), key=_key), own


def schema_of(model, prefix: str = V3_PREFIX) -> dict:
    """A response or body model: a reference to a definition, or an inline schema."""
    return dict(model) if isinstance(model, dict) else {"$ref": prefix + model}


def _content(media: tuple, model) -> dict:
    return {media_type: {"schema": schema_of(model)} for media_type in sorted(media)}


def _operation(operation: Operation, parameters: list) -> dict:
    out = {"tags": [operation.tag], "description": operation.description,
           "operationId": operation.operation_id}
    if parameters:
        out["parameters"] = parameters
    if operation.body:
        body = {"content": _content(operation.consumes, operation.body)}
        if operation.body_required:
            body["required"] = True
        out["requestBody"] = body
    responses = {str(code): {"description": description,
                             "content": _content(operation.produces, model)}
                 for code, description, model in operation.responses}
    responses["401"] = UNAUTHORIZED
    out["responses"] = responses
    if operation.action:
        out["x-kubernetes-action"] = operation.action
    if operation.gvk:
        group, version, kind = operation.gvk
        out["x-kubernetes-group-version-kind"] = {"group": group, "version": version,
                                                   "kind": kind}
    return out


def path_item(operations: list[Operation]) -> dict:
    """One path's item: its operations, then the parameters they share."""
    common, own = split_common(operations)
    by_method = {operation.method: operation for operation in operations}
    item = {method: _operation(by_method[method], own[id(by_method[method])])
            for method in METHODS if method in by_method}
    if common:
        item["parameters"] = common
    return item


def render(paths: dict[str, list[Operation]], definitions: dict, info: dict,
           security_schemes: bool = True) -> dict:
    """The v3 document of ``paths``, with the definitions they reach (and the server's
    security schemes, which upstream's CRD documents do not declare)."""
    operations = [operation for ops in paths.values() for operation in ops]
    names = reachable(referenced(operations), definitions)
    # Go leaves an empty map out (``omitempty``): the issuer discovery documents have none.
    components = {"schemas": {name: definitions[name] for name in sorted(names)}} if names \
        else {}
    if security_schemes:
        components["securitySchemes"] = SECURITY_SCHEMES
    return {
        "openapi": "3.0.0",
        "info": info,
        "paths": {path: path_item(paths[path]) for path in sorted(paths)},
        "components": components,
    }
