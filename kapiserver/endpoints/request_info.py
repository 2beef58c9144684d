"""RequestInfo: what a request path means, parsed once (``endpoints/request/requestinfo.go``)."""

from __future__ import annotations

from dataclasses import dataclass, field

API_PREFIXES = frozenset({"api", "apis"})
GROUPLESS_API_PREFIXES = frozenset({"api"})
SPECIAL_VERBS = frozenset({"proxy", "watch"})
#: Special verbs whose trailing parts are a proxied path, not a subresource.
SPECIAL_VERBS_NO_SUBRESOURCES = frozenset({"proxy"})
NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})
_METHOD_VERBS = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update",
                 "PATCH": "patch", "DELETE": "delete"}
#: Verbs and subresources of requests that may legitimately run for long
#: (``server.DefaultLongRunningFunc`` with upstream's kube-apiserver sets).
LONG_RUNNING_VERBS = frozenset({"watch", "proxy"})
LONG_RUNNING_SUBRESOURCES = frozenset({"attach", "exec", "proxy", "log", "portforward"})
READ_ONLY_VERBS = frozenset({"get", "list", "watch", "head", "options"})


class RequestInfoError(ValueError):
    """The path is an API path that cannot be interpreted."""


@dataclass
class RequestInfo:
    """The parsed meaning of a request: resource request or plain path, and its parts."""

    is_resource_request: bool
    path: str
    verb: str
    api_prefix: str = ""
    api_group: str = ""
    api_version: str = ""
    namespace: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    parts: list[str] = field(default_factory=list)

    @property
    def is_long_running(self) -> bool:
        return (self.is_resource_request and (
            self.verb in LONG_RUNNING_VERBS or self.subresource in LONG_RUNNING_SUBRESOURCES))

    @property
    def is_read_only(self) -> bool:
        return self.verb in READ_ONLY_VERBS


def _split_path(path: str) -> list[str]:
    path = path.strip("/")
    return path.split("/") if path else []


def _watch_requested(args) -> bool:
    values = args.getlist("watch") if hasattr(args, "getlist") else args.get("watch", [])
    if isinstance(values, str):
        values = [values]
    if not values:
        return False
    return values[0].lower() not in ("false", "0")


def _exact_name_from_field_selector(selector: str) -> str:
    """X when a term of the selector is ``metadata.name=X`` (or ``==``), as upstream's
    ``RequiresExactMatch`` on an AND of terms; '' otherwise or when X is not a valid
    path segment name."""
    terms = selector.split(",")
    if any("=" not in term for term in terms):
        return ""  # unparsable: upstream falls back to a plain list without a name
    for term in terms:
        if "!=" in term:
            continue
        key, sep, value = term.partition("==") if "==" in term else term.partition("=")
        if sep and key.strip() == "metadata.name":
            value = value.strip()
            valid = value not in (".", "..") and "/" not in value and "%" not in value
            return value if valid else ""
    return ""


def new_request_info(method: str, path: str, args) -> RequestInfo:
    """Parse ``method`` and the already percent-decoded ``path`` (and ``args``).

    Follows upstream's ``RequestInfoFactory.NewRequestInfo`` case by case:
    ``/api/v1/namespaces/ns/configmaps/name/status``, ``/apis/g/v/watch/...`` and so on.
    ``args`` is a mapping of query parameters (a werkzeug ``MultiDict`` or a dict of lists).
    """
    info = RequestInfo(is_resource_request=False, path=path, verb=method.lower())
    parts = _split_path(path)
    if len(parts) < 3 or parts[0] not in API_PREFIXES:
        return info
    info.api_prefix = parts[0]
    parts = parts[1:]
    if info.api_prefix not in GROUPLESS_API_PREFIXES:
        if len(parts) < 3:
            return info
        info.api_group = parts[0]
        parts = parts[1:]
    info.is_resource_request = True
    info.api_version = parts[0]
    parts = parts[1:]

    if parts[0] in SPECIAL_VERBS:
        if len(parts) < 2:
            raise RequestInfoError(f"unable to determine kind and namespace from url, {path}")
        info.verb = parts[0]
        parts = parts[1:]
    else:
        info.verb = _METHOD_VERBS.get(method.upper(), "")

    if parts[0] == "namespaces":
        if len(parts) > 1:
            info.namespace = parts[1]
            if len(parts) > 2 and parts[2] not in NAMESPACE_SUBRESOURCES:
                parts = parts[2:]
    info.parts = parts

    if len(parts) >= 3 and info.verb not in SPECIAL_VERBS_NO_SUBRESOURCES:
        info.subresource = parts[2]
    if len(parts) >= 2:
        info.name = parts[1]
    if len(parts) >= 1:
        info.resource = parts[0]

    if not info.name and info.verb == "get":
        info.verb = "watch" if _watch_requested(args) else "list"
        selector = args.get("fieldSelector") if args is not None else None
        if isinstance(selector, list):
            selector = selector[0] if selector else None
        if selector:
            info.name = _exact_name_from_field_selector(selector)
    if not info.name and info.verb == "delete":
        info.verb = "deletecollection"
    return info
