"""The error family of kapiserver: request-time ``StatusError``s and start-up ``ConfigError``.

Every request-time failure raises a ``StatusError`` subclass; each one maps one-to-one to
an upstream ``metav1.StatusReason`` and HTTP code (``k8s.io/apimachinery/pkg/api/errors``),
and ``to_status()`` builds the ``Status`` object a client receives. Messages are worded as
upstream words them, because clients and people match on them.
"""

from __future__ import annotations

# strconv.Quote, as upstream's messages use it (%q); one implementation for the server.
from .apimachinery.field_errors import go_quote


def group_resource(group: str, resource: str) -> str:
    """Format a GroupResource as upstream's ``schema.GroupResource.String()`` does."""
    return f"{resource}.{group}" if group else resource




class StatusError(Exception):
    """A request-time failure answered with a ``Status`` body.

    Subclasses fix ``code`` and ``reason``; ``details`` is the ``StatusDetails`` mapping
    (``name``, ``group``, ``kind``, ``causes``, ``retryAfterSeconds``) or ``None`` when
    upstream omits it.
    """

    code = 500
    reason = "InternalError"

    def __init__(self, message: str, details: dict | None = None, headers: dict | None = None):
        super().__init__(message)
        self.message = message
        self.details = details
        self.headers = headers or {}

    def to_status(self) -> dict:
        """Return the ``Status`` object, keys in upstream's field order."""
        status = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
        }
        if self.reason:
            status["reason"] = self.reason
        if self.details is not None:
            status["details"] = self.details
        status["code"] = self.code
        return status


def status_details(name: str = "", group: str = "", kind: str = "", **extra) -> dict:
    """``StatusDetails`` with upstream's key order, empty fields left out."""
    details = {}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    if kind:
        details["kind"] = kind
    details.update(extra)
    return details


class BadRequest(StatusError):
    """400: the request is malformed (``apierrors.NewBadRequest``)."""

    code = 400
    reason = "BadRequest"


class Unauthorized(StatusError):
    """401: no valid credentials (``apierrors.NewUnauthorized``)."""

    code = 401
    reason = "Unauthorized"

    def __init__(self, message: str = "Unauthorized"):
        super().__init__(message)


class Forbidden(StatusError):
    """403: the authorizer refused (``apierrors.NewForbidden``)."""

    code = 403
    reason = "Forbidden"

    @classmethod
    def for_resource(cls, group: str, resource: str, name: str, err: str) -> "Forbidden":
        """Word the message as ``apierrors.NewForbidden(qualifiedResource, name, err)``."""
        if not resource:
            message = f"forbidden: {err}"
        elif name:
            message = f"{group_resource(group, resource)} {go_quote(name)} is forbidden: {err}"
        else:
            message = f"{group_resource(group, resource)} is forbidden: {err}"
        return cls(message, status_details(name=name, group=group, kind=resource))


class NotFound(StatusError):
    """404: the resource or path does not exist."""

    code = 404
    reason = "NotFound"

    @classmethod
    def for_path(cls) -> "NotFound":
        """The generic not-found answer for API paths nothing serves."""
        return cls("the server could not find the requested resource", {})

    @classmethod
    def for_object(cls, group: str, resource: str, name: str) -> "NotFound":
        """Word the message as ``apierrors.NewNotFound``."""
        return cls(
            f"{group_resource(group, resource)} {go_quote(name)} not found",
            status_details(name=name, group=group, kind=resource),
        )


class MethodNotAllowed(StatusError):
    """405: the resource does not support the request's method."""

    code = 405
    reason = "MethodNotAllowed"

    def __init__(self, message: str = "the server does not allow this method on the requested resource"):
        super().__init__(message, {})


class AlreadyExists(StatusError):
    """409: an object of that name exists (``apierrors.NewAlreadyExists``)."""

    code = 409
    reason = "AlreadyExists"


class Conflict(StatusError):
    """409: the write lost a race (``apierrors.NewConflict``)."""

    code = 409
    reason = "Conflict"


class Gone(StatusError):
    """410: the requested resourceVersion is no longer available."""

    code = 410
    reason = "Expired"


class RequestEntityTooLarge(StatusError):
    """413: the request body exceeds the server's limit."""

    code = 413
    reason = "RequestEntityTooLarge"


class UnsupportedMediaType(StatusError):
    """415: the body's content type cannot be decoded."""

    code = 415
    reason = "UnsupportedMediaType"


class NotAcceptable(StatusError):
    """406: no representation matches the Accept header."""

    code = 406
    reason = "NotAcceptable"


class Invalid(StatusError):
    """422: the object failed validation; ``details.causes`` names each field."""

    code = 422
    reason = "Invalid"


class TooManyRequests(StatusError):
    """429: the server is over its in-flight limit."""

    code = 429
    reason = "TooManyRequests"


class InternalError(StatusError):
    """500: an unexpected failure inside the server."""

    code = 500
    reason = "InternalError"

    @classmethod
    def wrap(cls, err: str) -> "InternalError":
        """Word the message as ``apierrors.NewInternalError``."""
        return cls(f"Internal error occurred: {err}", {"causes": [{"message": err}]})


class Unknown(StatusError):
    """500 without a reason: a plain error that upstream's handlers answer as it is
    (``ErrorToAPIStatus``'s fallback, ``StatusReasonUnknown``); clients show its message."""

    code = 500
    reason = ""


class Timeout(StatusError):
    """504: the request could not be completed in time (``apierrors.NewTimeoutError``)."""

    code = 504
    reason = "Timeout"


class ServiceUnavailable(StatusError):
    """503: the server cannot serve the request now."""

    code = 503
    reason = "ServiceUnavailable"


class ConfigError(Exception):
    """Start-up failure: invalid options or plugins. ``errors`` lists every problem found.

    Each entry reads ``--option-name: what is wrong``; the CLI prints them all and exits
    non-zero before anything starts.
    """

    def __init__(self, errors: list[str] | str):
        self.errors = [errors] if isinstance(errors, str) else list(errors)
        super().__init__("\n".join(self.errors))
