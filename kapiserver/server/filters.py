"""The filter chain that wraps the outermost server once (``server.DefaultBuildHandlerChain``).

Outermost first: panic recovery → request info → request deadline → authentication →
audit → impersonation → priority and fairness (``fairness``; or, with
``--enable-priority-and-fairness=false``, max-in-flight) → authorization. Each ``with_*``
function takes the server and the next handler and returns a handler
``handler(ctx) -> response``; ``build`` composes them.
"""

from __future__ import annotations

import logging
import time
import uuid
from urllib.parse import unquote

from ..authentication import (ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, ANONYMOUS,
                              SERVICE_ACCOUNT_PREFIX, SYSTEM_PRIVILEGED_GROUP,
                              AuthenticationError, AuthenticationRequest, UserInfo)
from ..authorization import Attributes, Decision, forbidden_message
from ..endpoints.context import RequestContext
from ..endpoints.request_info import RequestInfoError, new_request_info
from ..endpoints.responses import http_error, status_response
from ..errors import Forbidden, InternalError, StatusError, Unauthorized
from ..metrics.request import compress_username
from ..storage import StorageError
from ..warning import header_texts, recording
from .auditing import audit_failed_authentication, with_audit
from .instrumentation import record_dropped, with_request_metrics

log = logging.getLogger(__name__)

IMPERSONATE_USER = "Impersonate-User"
IMPERSONATE_UID = "Impersonate-Uid"
IMPERSONATE_GROUP = "Impersonate-Group"
IMPERSONATE_EXTRA_PREFIX = "Impersonate-Extra-"
#: What every ``Impersonate-*`` header's name starts with (lower case).
IMPERSONATE_PREFIX = "impersonate-"
DECISION_ANNOTATION = "authorization.k8s.io/decision"
REASON_ANNOTATION = "authorization.k8s.io/reason"


def build(server, innermost):
    """Wrap ``innermost`` in the filter chain, returning ``handler(request)``."""
    from . import fairness

    handler = with_request_metrics(server, fairness.with_debug_paths(server, innermost))
    handler = with_authorization(server, handler)
    if server.config.get("enable_priority_and_fairness", True):
        handler = fairness.with_priority_and_fairness(server, handler)
    else:
        handler = with_max_in_flight(server, handler)
    handler = with_impersonation(server, handler)
    handler = with_audit(server, handler)
    handler = with_authentication(server, handler)
    handler = with_request_deadline(server, handler)
    handler = with_request_info(server, handler)
    return with_panic_recovery(server, handler)


def with_panic_recovery(server, handler):
    """Turn any escaped exception into a 500 ``Status``; stamp ``Audit-Id`` and caching.

    Also upstream's ``WithAuditInit``, ``WithCacheControl`` and ``WithWarningRecorder``:
    every response, even a crash, carries ``Audit-Id`` (the client's ``Audit-ID`` header if
    it sent one) and ``Cache-Control: no-cache, private``, and the warnings added while the
    request was served (``kapiserver.warning``) as ``Warning`` headers.
    """

    def recover(request):
        # Flask's ``request`` is a context-local proxy: every attribute read through it
        # looks the request up again; the filters and handlers read the request itself.
        unwrap = getattr(request, "_get_current_object", None)
        if unwrap is not None:
            request = unwrap()
        audit_id = request.headers.get("Audit-ID") or str(uuid.uuid4())
        ctx = RequestContext(request, server, audit_id)
        try:
            with recording(ctx.warnings):
                response = handler(ctx)
        except StatusError as err:
            response = status_response(err, ctx.accept)
        except StorageError as err:
            # The store failed (etcd without quorum or unreachable): upstream answers its
            # error as an internal error (apierrors.NewInternalError), not a panic.
            log.warning("storage failed serving %s %s: %s", request.method, request.path, err,
                        exc_info=log.isEnabledFor(logging.DEBUG))
            response = status_response(InternalError.wrap(str(err)), ctx.accept)
        except Exception:
            log.exception("panic serving %s %s (user %r, audit-id %s)", request.method,
                          request.full_path if request.query_string else request.path,
                          ctx.user.name if ctx.user else None, audit_id)
            response = status_response(InternalError(
                "This request caused apiserver to panic. Look in the logs for details."),
                ctx.accept)
        headers = response.headers
        headers["Audit-Id"] = audit_id
        if "Cache-Control" not in headers:
            headers["Cache-Control"] = "no-cache, private"
        for warning in header_texts(ctx.warnings):
            # RFC 7234 warn-text: a quoted string, its quotes and backslashes escaped.
            text = warning.replace("\\", "\\\\").replace('"', '\\"')
            headers.add("Warning", f'299 - "{text}"')
        return response

    return recover


def with_request_info(server, handler):
    """Parse the path into ``ctx.info`` once (``WithRequestInfo``)."""

    def request_info(ctx):
        request = ctx.request
        try:
            ctx.info = new_request_info(request.method, request.path, request.args)
        except RequestInfoError as err:
            return http_error(f"Internal Server Error: {request.full_path!r}: "
                              f"failed to create RequestInfo: {err}", 500)
        return handler(ctx)

    return request_info


#: ``invalidTimeoutInURL`` of upstream's deadline filter.
INVALID_TIMEOUT = "invalid timeout specified in the request URL"


def with_request_deadline(server, handler):
    """``WithRequestDeadline`` and ``WithTimeoutForNonLongRunningRequests``: a request
    that is not long-running gets ``--request-timeout``, or less when its ``timeout``
    parameter asks for less (``0s``, or more than the default, means the default); an
    unparsable ``timeout`` is a 400; one that runs out of time gets upstream's 504."""
    import gevent

    from ..errors import BadRequest, Timeout
    from ..runtime.gotime import DurationParseError, parse_duration

    default = server.config.request_timeout

    def request_deadline(ctx):
        value = ctx.request.args.get("timeout", "")
        timeout = default
        if value:
            try:
                asked = parse_duration(value) / 1e9
            except DurationParseError as err:
                raise BadRequest(f"{INVALID_TIMEOUT} - {err}") from None
            if 0 < asked < default:
                timeout = asked
        if ctx.info.is_long_running or timeout <= 0:
            return handler(ctx)
        ctx.deadline = time.monotonic() + timeout
        deadline = gevent.Timeout(timeout)
        deadline.start()
        try:
            return handler(ctx)
        except gevent.Timeout as expired:
            if expired is not deadline:
                raise
            raise Timeout("Timeout: request did not complete within requested timeout - "
                          "context deadline exceeded", {}) from None
        finally:
            deadline.close()

    return request_deadline


def with_authentication(server, handler):
    """Authenticate with the union; bad or missing credentials get 401 (``WithAuthentication``)."""
    authenticator = server.authenticator
    attempts = server.metrics.authentication_attempts
    user_requests = server.metrics.authenticated_user_requests

    def authentication(ctx):
        request = AuthenticationRequest(ctx.headers, ctx.peer_certificate,
                                        ctx.request.remote_addr or "",
                                        peer_certificate_info=ctx.peer_certificate_info)
        try:
            user = authenticator.authenticate(request)
        except AuthenticationError as err:
            log.info("unable to authenticate the request: %s", err)
            attempts.labels("error").inc()
            user = None
        else:
            attempts.labels("failure" if user is None else "success").inc()
        if user is None:
            audit_failed_authentication(server, ctx)
            return status_response(Unauthorized(), ctx.accept)
        user_requests.labels(compress_username(user.name)).inc()
        if request.remove_headers:
            # Upstream's ClearAuthenticationHeaders: a front proxy's identity headers stop here.
            ctx.remove_headers(request.remove_headers)
        ctx.user = ctx.authenticated_user = user
        return handler(ctx)

    return authentication


def with_impersonation(server, handler):
    """Act as the user named in ``Impersonate-*`` headers when allowed (``WithImpersonation``).

    Each requested identity is authorized as verb ``impersonate`` on ``users``,
    ``groups``, ``serviceaccounts``, ``uids`` or ``userextras/KEY``; any refusal is a 403.
    """
    authorizer = server.authorizer

    def impersonation(ctx):
        if not ctx.has_header_prefix(IMPERSONATE_PREFIX):
            return handler(ctx)
        headers = ctx.headers
        username = headers.get(IMPERSONATE_USER, "")
        uid = headers.get(IMPERSONATE_UID, "")
        groups = headers.getlist(IMPERSONATE_GROUP)
        extra = {}
        for name, value in headers.items():
            if name.lower().startswith(IMPERSONATE_EXTRA_PREFIX.lower()):
                key = unquote(name[len(IMPERSONATE_EXTRA_PREFIX):]).lower()
                extra.setdefault(key, []).append(value)
        if not (username or uid or groups or extra):
            return handler(ctx)
        if not username:
            requested = []
            if groups:
                requested.append(f"groups {groups}")
            if uid:
                requested.append(f"uid {uid}")
            if extra:
                requested.append(f"extra {sorted(extra)}")
            return http_error(f"Internal Server Error: {ctx.request.path!r}: requested "
                              f"{', '.join(requested)} without impersonating a user", 500)

        requestor = ctx.user
        checks = []
        if username.startswith(SERVICE_ACCOUNT_PREFIX):
            namespace, _, name = username[len(SERVICE_ACCOUNT_PREFIX):].partition(":")
            checks.append(dict(resource="serviceaccounts", namespace=namespace, name=name,
                               api_version="v1"))
            if not groups:
                groups = ["system:serviceaccounts", f"system:serviceaccounts:{namespace}"]
                implied_groups = True
            else:
                implied_groups = False
        else:
            implied_groups = False
            checks.append(dict(resource="users", name=username, api_version="v1"))
        if not implied_groups:
            for group in groups:
                checks.append(dict(resource="groups", name=group, api_version="v1"))
        for key, values in extra.items():
            for value in values:
                checks.append(dict(resource="userextras", subresource=key, name=value,
                                   api_group="authentication.k8s.io", api_version="v1"))
        if uid:
            checks.append(dict(resource="uids", name=uid, api_group="authentication.k8s.io",
                               api_version="v1"))
        for check in checks:
            attributes = Attributes(user=requestor, verb="impersonate", resource_request=True,
                                    **check)
            decision, reason = authorizer.authorize(attributes)
            if decision is not Decision.ALLOW:
                return forbidden(ctx, attributes, reason)

        groups = list(groups)
        if username != ANONYMOUS:
            if not ({ALL_AUTHENTICATED, ALL_UNAUTHENTICATED} & set(groups)):
                groups.append(ALL_AUTHENTICATED)
        elif ALL_UNAUTHENTICATED not in groups:
            groups.append(ALL_UNAUTHENTICATED)
        ctx.user = UserInfo(username, uid, tuple(groups),
                            {k: tuple(v) for k, v in extra.items()})
        return handler(ctx)

    return impersonation


def with_max_in_flight(server, handler):
    """Refuse requests beyond ``--max-*requests-inflight`` with 429 (``WithMaxInFlightLimit``).

    The limits are the server's, counted across its workers (``inflight``). Long-running
    requests (watch, proxy, exec, …) are not counted; members of ``system:masters`` are
    always served, as upstream.
    """
    from .inflight import MUTATING, READ_ONLY, counters

    config = server.config
    limits = {READ_ONLY: config.max_requests_inflight,
              MUTATING: config.max_mutating_requests_inflight}
    if not limits[READ_ONLY] and not limits[MUTATING]:
        return handler
    inflight = counters()

    def max_in_flight(ctx):
        info = ctx.info
        if info.is_long_running:
            return handler(ctx)
        kind = READ_ONLY if info.is_read_only else MUTATING
        limit = limits[kind]
        if not limit:
            return handler(ctx)
        if not inflight.try_acquire(kind, limit):
            if SYSTEM_PRIVILEGED_GROUP in ctx.user.groups:
                return handler(ctx)
            record_dropped(server, ctx)
            response = http_error("Too many requests, please try again later.", 429)
            response.headers["Retry-After"] = "1"
            return response
        try:
            response = handler(ctx)
        except BaseException:
            inflight.release(kind)
            raise
        # Counted until the answer is written, as upstream's handler writes it in flight.
        response.call_on_close(lambda: inflight.release(kind))
        return response

    return max_in_flight


def request_attributes(ctx) -> Attributes:
    """The authorizer ``Attributes`` of ``ctx`` (``GetAuthorizerAttributes``)."""
    info = ctx.info
    if not info.is_resource_request:
        return Attributes(user=ctx.user, verb=info.verb, resource_request=False,
                          path=info.path)
    return Attributes(user=ctx.user, verb=info.verb, resource_request=True, path=info.path,
                      namespace=info.namespace, api_group=info.api_group,
                      api_version=info.api_version, resource=info.resource,
                      subresource=info.subresource, name=info.name)


def forbidden(ctx, attributes: Attributes, reason: str):
    """Answer 403 worded as upstream's ``responsewriters.Forbidden``."""
    message = forbidden_message(attributes)
    if reason:
        message = f"{message}: {reason}"
    error = Forbidden.for_resource(attributes.api_group, attributes.resource,
                                   attributes.name, message)
    return status_response(error, ctx.accept)


def with_authorization(server, handler):
    """Ask the authorizer union; anything but ALLOW is a 403 (``WithAuthorization``)."""
    authorizer = server.authorizer

    def authorization(ctx):
        attributes = request_attributes(ctx)
        decision, reason = authorizer.authorize(attributes)
        if ctx.audit is not None:
            # Upstream's audit annotations of the decision (only for audited requests).
            annotations = ctx.audit_annotations
            annotations.setdefault(DECISION_ANNOTATION,
                                   "allow" if decision is Decision.ALLOW else "forbid")
            annotations.setdefault(REASON_ANNOTATION, reason)
        if decision is Decision.ALLOW:
            return handler(ctx)
        return forbidden(ctx, attributes, reason)

    return authorization
