"""How upstream labels a request in its metrics (``pkg/endpoints/metrics``).

``scope``: ``resource`` for a named object or a create, ``namespace``, ``cluster``, or empty
for a non-resource path (``CleanScope``). ``verb``: the HTTP method, GET of a collection
reported as LIST (``CanonicalVerb``), ``?watch=true`` and the ``/watch/`` paths as WATCH,
an apply patch as APPLY, the connect subresources (log, exec, portforward, attach, proxy)
as CONNECT (``CleanVerb``), anything else as ``other``. A DELETE of a collection is
reported as DELETE: upstream's ``MonitorRequest`` derives the verb from the method.
"""

from __future__ import annotations

#: ``validRequestMethods``: verbs reported as themselves; others become ``other``.
VALID_VERBS = frozenset({"APPLY", "CONNECT", "CREATE", "DELETE", "DELETECOLLECTION", "GET",
                         "LIST", "PATCH", "POST", "PROXY", "PUT", "UPDATE", "WATCH",
                         "WATCHLIST"})
CONNECT_SUBRESOURCES = frozenset({"log", "exec", "portforward", "attach", "proxy"})
APPLY_PATCH = "application/apply-patch+yaml"
COMPONENT = "apiserver"
#: Non-resource paths upstream instruments (the health roots, OpenAPI v3), with their
#: ``subresource`` label; nothing else outside the API is counted, as upstream.
HEALTH_ROOTS = {"/healthz": "/healthz", "/livez": "/livez", "/readyz": "/readyz",
                "/openapi/v3": "openapi/v3"}
OPENAPI_V3_PREFIX = "/openapi/v3/"


def clean_scope(info) -> str:
    """``CleanScope``."""
    if info.name or info.verb == "create":
        return "resource"
    if info.namespace:
        return "namespace"
    if info.is_resource_request:
        return "cluster"
    return ""


def reported_verb(method: str, info, args, content_type: str, scope: str) -> str:
    """The verb label: ``cleanVerb(CanonicalVerb(method, scope), …)``."""
    verb = method.upper()
    if verb in ("GET", "HEAD"):
        verb = "LIST" if scope not in ("resource", "") else "GET"
        if info.verb == "watch":  # ?watch=true, or a /watch/ path (the installer's WATCH)
            verb = "WATCH"
    elif verb == "PATCH" and content_type == APPLY_PATCH:
        verb = "APPLY"
    if info.is_resource_request and info.subresource in CONNECT_SUBRESOURCES:
        verb = "CONNECT"
    return verb if verb in VALID_VERBS else "other"


def clean_dry_run(query_string: bytes, args) -> str:
    """``cleanDryRun``: the ``dryRun`` values sorted and deduplicated, ``invalid`` when one
    is not ``All``, empty without any (the query is only parsed when it names dryRun)."""
    if b"dryRun" not in query_string:
        return ""
    values = args.getlist("dryRun")
    if any(value != "All" for value in values):
        return "invalid"
    return ",".join(sorted(set(values)))


def non_resource_label(path: str) -> str | None:
    """The ``subresource`` label of an instrumented non-resource path, else None."""
    label = HEALTH_ROOTS.get(path)
    if label is None and path.startswith(OPENAPI_V3_PREFIX):
        label = "openapi/v3/"
    return label


def compress_username(name: str) -> str:
    """``compressUsername``: a few well-known names as themselves, an e-mail address as
    ``email_id``, anything else ``other`` (bounded cardinality, no user names exposed)."""
    if name in ("admin", "client", "kube_proxy", "kubelet",
                "system:serviceaccount:kube-system:default"):
        return name
    if "@" in name:
        return "email_id"
    return "other"
