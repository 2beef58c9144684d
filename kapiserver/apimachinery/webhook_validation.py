"""Where a webhook is reached (``k8s.io/apiserver/pkg/util/webhook/validation.go``): the
checks of a ``url`` or a ``service`` reference that CRD conversion webhooks and admission
webhook configurations share, with upstream's messages."""

from __future__ import annotations

from urllib.parse import urlsplit

from .field_errors import FieldError, FieldPath
from .validation import is_dns1123_subdomain, is_valid_port_num

_FORM = "; desired format: https://host[/path]"


def validate_webhook_url(path: FieldPath, url: str) -> list[FieldError]:
    """``ValidateWebhookURL(path, url, forceHttps=true)``, with Python's URL parser."""
    try:
        parts = urlsplit(url)
        host = parts.netloc.rpartition("@")[2]
    except ValueError as err:
        return [FieldError.required(path, f'url must be a valid URL: parse "{url}": {err}'
                                          + _FORM)]
    errs = []
    scheme = parts.scheme.lower()
    if scheme != "https":
        errs.append(FieldError.invalid(path, scheme, "'https' is the only allowed URL scheme"
                                       + _FORM))
    if not host:
        errs.append(FieldError.invalid(path, host, "host must be provided" + _FORM))
    if "@" in parts.netloc:
        errs.append(FieldError.invalid(path, parts.netloc.rpartition("@")[0],
                                       "user information is not permitted in the URL"))
    if parts.fragment:
        errs.append(FieldError.invalid(path, parts.fragment,
                                       "fragments are not permitted in the URL"))
    if parts.query:
        errs.append(FieldError.invalid(path, parts.query,
                                       "query parameters are not permitted in the URL"))
    return errs


def validate_webhook_service(path: FieldPath, namespace: str, name: str, url_path,
                     port) -> list[FieldError]:
    """``ValidateWebhookService(path, namespace, name, path, port)``."""
    errs = []
    if not name:
        errs.append(FieldError.required(path.child("name"), "service name is required"))
    if not namespace:
        errs.append(FieldError.required(path.child("namespace"), "service namespace is required"))
    port = port if isinstance(port, int) and not isinstance(port, bool) else 0
    if msgs := is_valid_port_num(port):
        errs.append(FieldError.invalid(path.child("port"), port,
                                       "port is not valid: " + ", ".join(msgs)))
    if not isinstance(url_path, str) or url_path in ("", "/"):
        return errs
    at = path.child("path")
    if url_path == "//":
        return errs + [FieldError.invalid(at, url_path, "segment[0] may not be empty")]
    if not url_path.startswith("/"):
        errs.append(FieldError.invalid(at, url_path, "must start with a '/'"))
    rest = url_path[1:]
    if rest.endswith("/"):
        rest = rest[:-1]
    for i, step in enumerate(rest.split("/")):
        if not step:
            errs.append(FieldError.invalid(at, url_path, f"segment[{i}] may not be empty"))
            continue
        errs += [FieldError.invalid(at, url_path, f"segment[{i}]: {msg}")
                 for msg in is_dns1123_subdomain(step)]
    return errs
