"""A binding's params (upstream's ``generic.CollectParams``): the objects of the policy's
``paramKind`` its ``paramRef`` names or selects, read from the worker's feed of that kind
(``source.ParamFeed``: built-in kinds and custom resources alike, kept current by the
watch cache, read-your-writes across workers).

Departure: a custom resource's params are read as stored, in the CRD's storage version.
"""

from __future__ import annotations

from kapiserver.apimachinery import labels


class ParamError(Exception):
    """A binding's params cannot be had (a configuration error of the binding)."""


class ParamKind:
    """The resource of a ``paramKind`` on one server: ``(group, resource)`` and its scope."""

    __slots__ = ("api_version", "kind", "group", "resource", "namespaced")

    def __init__(self, api_version: str, kind: str, group: str, resource: str,
                 namespaced: bool):
        self.api_version, self.kind = api_version, kind
        self.group, self.resource, self.namespaced = group, resource, namespaced


def parse_group_version(api_version: str):
    group, _, version = api_version.rpartition("/")
    return group, version


def kind_text(param_kind: dict) -> str:
    """``schema.GroupVersionKind``'s ``String()``: ``group/version, Kind=kind``."""
    group, version = parse_group_version(param_kind.get("apiVersion") or "")
    return f"{group}/{version}, Kind={param_kind.get('kind') or ''}"


def resolve(server, param_kind: dict) -> ParamKind | None:
    """The served resource of ``paramKind`` (upstream's RESTMapping), or None."""
    api_version = param_kind.get("apiVersion") or ""
    kind = param_kind.get("kind") or ""
    group, version = parse_group_version(api_version)
    for registry in list(server.registries.values()):
        spec = registry.spec
        if spec.group == group and spec.kind == kind and spec.version == version:
            return ParamKind(api_version, kind, group, spec.resource, spec.namespaced)
    return None


def collect(feeds, param_kind: ParamKind | None, ref, namespace: str) -> list:
    """The params to evaluate a binding with: ``[None]`` without paramKind or paramRef,
    else the objects found (``[]``: none, and ``parameterNotFoundAction: Allow``), read
    from ``feeds(param_kind)`` (``source.PolicySource.params``: ``get(namespace, name)``
    and ``list(namespace)``). Raises ``ParamError`` with upstream's words."""
    if param_kind is None or not isinstance(ref, dict):
        return [None]
    ref_namespace = ref.get("namespace") or ""
    if param_kind.namespaced:
        where = ref_namespace or namespace
        if not where:
            raise ParamError("cannot use namespaced paramRef in policy binding that matches "
                             "cluster-scoped resources")
    else:
        if ref_namespace:
            raise ParamError("paramRef.namespace must not be provided for a cluster-scoped "
                             "`paramKind`")
        where = ""
    name, selector = ref.get("name") or "", ref.get("selector")
    if name and selector is not None:
        raise ParamError("paramRef.name and paramRef.selector are mutually exclusive")
    if not name and selector is None:
        raise ParamError("one of name or selector must be provided")
    informer = feeds(param_kind)
    if informer is None:
        raise ParamError(f"paramKind kind `{param_kind.api_version}, Kind={param_kind.kind}` "
                         "not known")
    if name:
        found = informer.get(where, name)
        params = [found] if found is not None else []
    elif selector is not None:
        try:
            parsed = labels.selector_from_label_selector(selector)
        except labels.SelectorError as err:
            raise ParamError(str(err)) from None
        params = [obj for obj in informer.list(where)
                  if parsed.matches((obj.get("metadata") or {}).get("labels") or {})]
    if not params and ref.get("parameterNotFoundAction") == "Deny":
        raise ParamError("no params found for policy binding with `Deny` "
                         "parameterNotFoundAction")
    return [_typed(obj, param_kind) for obj in params]


def _typed(obj: dict, param_kind: ParamKind) -> dict:
    """The param with its ``apiVersion`` and ``kind`` (upstream's ``wrappedParam``); the
    informer's object is shared and never changed."""
    if obj.get("apiVersion") and obj.get("kind"):
        return obj
    return {"apiVersion": param_kind.api_version, "kind": param_kind.kind, **obj}
