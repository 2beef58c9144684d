"""The operations a server's ``/openapi/v3`` documents describe, as the fuzzer needs them.

Each group version's document (``/openapi/v3`` lists them, with the URL to fetch) yields
one ``Operation`` per path and method: its path template, the action upstream's
OpenAPI builder names (``x-kubernetes-action``), its parameters (path-level and the
operation's own), and its request body's media types and schema. Schemas are left as
the document has them (``$ref`` into the document's ``components``); ``Document.resolve``
follows references.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: The subresources that dial a kubelet or a backend: never pointed at an object the
#: fuzzer could have written (see ``test_api``).
CONNECT_SUBRESOURCES = {
    "pods": ("attach", "exec", "log", "portforward", "proxy"),
    "services": ("proxy",),
    "nodes": ("proxy",),
}


@dataclass
class Document:
    """One group version's OpenAPI document."""

    name: str  # its key in /openapi/v3: "api/v1", "apis/apps/v1", "version", ...
    body: dict

    @property
    def schemas(self) -> dict:
        return (self.body.get("components") or {}).get("schemas") or {}

    def resolve(self, schema: dict) -> dict:
        """``schema`` with its ``$ref`` (or a lone ``allOf`` of one) followed, and the
        referring schema's own keys kept (a default, a description)."""
        seen = 0
        while isinstance(schema, dict) and seen < 32:
            seen += 1
            if "$ref" in schema:
                target = self.schemas.get(schema["$ref"].rsplit("/", 1)[-1], {})
                schema = {**{k: v for k, v in schema.items() if k != "$ref"}, **target}
            elif len(schema.get("allOf") or ()) == 1:
                schema = {**{k: v for k, v in schema.items() if k != "allOf"},
                          **schema["allOf"][0]}
            else:
                break
        return schema if isinstance(schema, dict) else {}

    @staticmethod
    def ref_name(schema: dict) -> str:
        """The component a schema names (``io.k8s.api.core.v1.Pod``), or ``""``."""
        if not isinstance(schema, dict):
            return ""
        if "$ref" in schema:
            return schema["$ref"].rsplit("/", 1)[-1]
        if len(schema.get("allOf") or ()) == 1:
            return Document.ref_name(schema["allOf"][0])
        return ""


@dataclass
class Operation:
    """One method of one path of a document."""

    document: Document
    method: str  # upper case
    path: str  # the template, as the document spells it
    action: str  # get, list, watch, watchlist, post, put, patch, delete, deletecollection
    parameters: dict = field(default_factory=dict)  # name -> the parameter object
    body_types: tuple = ()  # the media types of the request body, as documented
    body_schema: dict | None = None
    body_required: bool = False
    kind: dict | None = None  # x-kubernetes-group-version-kind

    def __str__(self) -> str:
        return f"{self.method} {self.path}"

    @property
    def segments(self) -> list[str]:
        return [s for s in self.path.split("/") if s]

    @property
    def prefix_length(self) -> int:
        """How many segments name the group version (``api/v1``: 2, ``apis/g/v``: 3)."""
        segments = self.segments
        if segments[:1] == ["api"]:
            return 2
        if segments[:1] == ["apis"]:
            return 3
        return len(segments)

    @property
    def resource_segments(self) -> list[str]:
        """The segments after the group version, ``watch`` and the namespace dropped:
        ``[resource]``, ``[resource, "{name}"]`` or ``[resource, "{name}", subresource]``."""
        rest = self.segments[self.prefix_length:]
        if rest[:1] == ["watch"]:
            rest = rest[1:]
        if rest[:1] == ["namespaces"] and rest[1:2] == ["{namespace}"]:
            rest = rest[2:]
        return rest

    @property
    def resource(self) -> str:
        rest = self.resource_segments
        return rest[0] if rest else ""

    @property
    def subresource(self) -> str:
        rest = self.resource_segments
        return rest[2] if len(rest) > 2 else ""

    @property
    def namespaced(self) -> bool:
        return "{namespace}" in self.path

    @property
    def group_version(self) -> str:
        segments = self.segments
        if segments[:1] == ["api"]:
            return segments[1] if len(segments) > 1 else ""
        if segments[:1] == ["apis"] and len(segments) > 2:
            return f"{segments[1]}/{segments[2]}"
        return ""

    @property
    def is_connect(self) -> bool:
        return self.subresource in CONNECT_SUBRESOURCES.get(self.resource, ())

    @property
    def is_watch(self) -> bool:
        return self.action in ("watch", "watchlist")

    @property
    def names_a_namespace(self) -> bool:
        """The ``{name}`` of this path is a Namespace's (``/api/v1/namespaces/{name}``)."""
        return self.group_version == "v1" and self.resource == "namespaces"


_METHODS = ("get", "put", "post", "patch", "delete", "head", "options")


def operations(document: Document) -> list[Operation]:
    """Every operation of ``document``, in the document's order."""
    found = []
    for path, item in (document.body.get("paths") or {}).items():
        shared = {p["name"]: p for p in item.get("parameters") or [] if "name" in p}
        for method in _METHODS:
            op = item.get(method)
            if not isinstance(op, dict):
                continue
            params = dict(shared)
            params.update({p["name"]: p for p in op.get("parameters") or [] if "name" in p})
            body = op.get("requestBody") or {}
            content = body.get("content") or {}
            schema = next((c.get("schema") for c in content.values() if c.get("schema")),
                          None)
            found.append(Operation(
                document, method.upper(), path, op.get("x-kubernetes-action") or _guess(
                    method, path), params, tuple(content), schema,
                bool(body.get("required")), op.get("x-kubernetes-group-version-kind")))
    return found


def _guess(method: str, path: str) -> str:
    if method == "get":
        return "get"
    return {"post": "post", "put": "put", "patch": "patch", "delete": "delete"}.get(method,
                                                                                  method)


def path_parameters(template: str) -> list[str]:
    return re.findall(r"\{([^}]+)\}", template)
