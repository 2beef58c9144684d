"""The audit filter (upstream's ``WithAudit`` and ``WithFailedAuthenticationAudit``).

After authentication, the policy gives the request a level from its authenticated user and
``RequestInfo`` (impersonation comes later, as upstream orders the filters). Above None
the request gets an ``AuditContext`` (``ctx.audit``) and the backends receive:
RequestReceived at once (a ``blocking-strict`` backend that cannot store it fails the
request with 500); ResponseStarted when a long-running request (watch, exec, proxy, logs)
starts streaming; ResponseComplete when the answer is complete (a stream's when it ends);
Panic instead when the handler crashed. A request refused for want of credentials is
audited once, at ResponseStarted, with the methods it tried.

Each event carries the annotations collected on the request (``ctx.audit_annotations``:
the authorization decision and reason, admission webhooks' and plugins' annotations), the
impersonated user once impersonation was allowed, and at Request level the object or
patch the request carried, at RequestResponse level the answer's object too.
"""

from __future__ import annotations

import gzip
import ipaddress
import json
import logging

from ..audit.context import AuditContext, object_ref
from ..audit.options import DEFAULT_PLUGIN_POLICY
from ..audit.policy import (NONE, PANIC, REQUEST_RECEIVED, RESPONSE_COMPLETE,
                            RESPONSE_STARTED, Policy)
from ..endpoints.responses import http_error
from ..errors import InternalError, StatusError, go_quote
from ..storage import StorageError

log = logging.getLogger(__name__)

#: ``fakedSuccessStatus``: a stream that ended before any answer was written.
TIMEOUT_MESSAGE = ("Timeout: request did not complete within requested timeout - "
                   "context deadline exceeded")


def source_ips(request) -> list[str]:
    """``utilnet.SourceIPs``: X-Forwarded-For's addresses, X-Real-Ip's, then the peer's."""
    ips: list = []
    headers = request.headers
    forwarded = headers.get("X-Forwarded-For")
    if forwarded:
        for part in forwarded.split(","):
            address = _ip(part.strip())
            if address is not None:
                ips.append(address)
    real = headers.get("X-Real-Ip")
    if real:
        address = _ip(real)
        if address is not None and address not in ips:
            ips.append(address)
    remote = _ip(request.remote_addr or "")
    if remote is not None and (not ips or ips[-1] != remote):
        ips.append(remote)
    return [str(ip) for ip in ips]


def _ip(text: str):
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _request_uri(request) -> str:
    return request.full_path if request.query_string else request.path


def new_context(ctx, config, user) -> AuditContext:
    """``LogRequestMetadata``: the Event's request fields."""
    request, info = ctx.request, ctx.info
    return AuditContext(config, ctx.audit_id, _request_uri(request),
                        info.verb if info is not None else request.method.lower(), user,
                        source_ips(request), request.headers.get("User-Agent", ""),
                        object_ref(info), ctx.received, ctx.audit_annotations)


class Auditor:
    """The policy and backends of one server; ``process`` hands one stage's Event to every
    backend and counts it."""

    def __init__(self, policy: Policy, backends: list, metrics):
        self.policy = policy
        self.backends = backends
        self.metrics = metrics

    @classmethod
    def build(cls, server) -> "Auditor | None":
        """The server's auditor, or None when no backend is configured."""
        if not server.audit_backends:
            return None
        from ..audit.policy import Policy

        path = server.config.get("audit_policy_file", "")
        policy = Policy.load(path) if path else DEFAULT_PLUGIN_POLICY
        names = ", ".join(b.name or type(b).__name__ for b in server.audit_backends)
        log.info("audit backends: %s; policy: %s", names, path or "every request at "
                 "Metadata level (no --audit-policy-file)")
        return cls(policy, server.audit_backends, server.metrics)

    def process(self, audit: AuditContext, stage: str) -> bool:
        """``processAuditEvent``: False when a backend could not store the event."""
        if stage in audit.config.omit_stages:
            return True
        event = audit.event(stage)
        self.metrics.audit_events.inc()
        stored = True
        for backend in self.backends:
            try:
                if backend.process_event(event) is False:
                    stored = False
            except Exception:
                self.metrics.audit_errors.labels(backend.name or "unknown").inc()
                log.exception("audit backend %s failed", backend.name)
        return stored


def _response_status(response) -> dict | None:
    """The ``Status`` an error response carries, if it is one (JSON)."""
    if response.mimetype != "application/json" or response.is_streamed:
        return None
    try:
        body = json.loads(response.get_data())
    except ValueError:
        return None
    return body if isinstance(body, dict) and body.get("kind") == "Status" else None


def _response_object(response):
    """The object a complete answer carries (JSON, YAML or protobuf), for RequestResponse."""
    if response.is_streamed:
        return None
    data = response.get_data()
    if response.headers.get("Content-Encoding") == "gzip":
        data = gzip.decompress(data)
    media = response.mimetype
    try:
        if media == "application/json":
            return json.loads(data)
        if media == "application/yaml":
            import yaml

            return yaml.safe_load(data)
        if media == "application/vnd.kubernetes.protobuf":
            from ..runtime import protobuf

            return protobuf.decode(data)
    except Exception:  # an answer that does not decode is not logged
        log.debug("audit: the response of %s could not be decoded", media)
    return None


def _complete(auditor: Auditor, ctx, audit: AuditContext, stage: str = RESPONSE_COMPLETE):
    if ctx.user is not None and ctx.user is not ctx.authenticated_user:
        audit.log_impersonated_user(ctx.user)  # LogImpersonatedUser
    auditor.process(audit, stage)


def with_audit(server, handler):
    """Audit each request as the policy says (see the module docstring)."""
    auditor = server.auditor
    if auditor is None:
        return handler
    from .filters import request_attributes

    policy, levels = auditor.policy, server.metrics.audit_levels

    def audit(ctx):
        config = policy.evaluate(request_attributes(ctx))
        levels.labels(config.level).inc()
        if config.level == NONE:
            return handler(ctx)
        audit = ctx.audit = new_context(ctx, config, ctx.authenticated_user)
        if not auditor.process(audit, REQUEST_RECEIVED):
            # responsewriters.InternalError: Go's plain-text http.Error.
            server.metrics.audit_rejected.inc()
            return http_error(f"Internal Server Error: {go_quote(audit.request_uri)}: "
                              "failed to store audit event", 500)
        try:
            response = handler(ctx)
        except StatusError as err:
            status = err.to_status()
            audit.set_response(err.code, status)
            audit.log_response_object(status)
            _complete(auditor, ctx, audit)
            raise
        except StorageError as err:
            status = InternalError.wrap(str(err)).to_status()
            audit.set_response(500, status)
            _complete(auditor, ctx, audit)
            raise
        except BaseException as err:
            import gevent

            if isinstance(err, gevent.Timeout):  # the deadline filter answers 504
                audit.set_response(504, {"status": "Failure", "message": TIMEOUT_MESSAGE,
                                         "reason": "Timeout"})
                _complete(auditor, ctx, audit)
                raise
            audit.set_response(500, {"status": "Failure", "reason": "InternalError",
                                     "message": f"APIServer panic'd: {err}"})
            _complete(auditor, ctx, audit, PANIC)
            raise
        code = response.status_code
        status = _response_status(response) if code >= 400 else None
        audit.set_response(code, status)
        if audit.logs_response:
            answer = _response_object(response)
            if answer is not None:
                audit.log_response_object(answer)
        if response.is_streamed:
            if ctx.info is not None and ctx.info.is_long_running:
                _complete(auditor, ctx, audit, RESPONSE_STARTED)
            response.call_on_close(lambda: _complete(auditor, ctx, audit))
        else:
            _complete(auditor, ctx, audit)
        return response

    return audit


def authentication_methods(ctx) -> str:
    """``getAuthMethods``: what a refused request tried, for its audit event."""
    methods = []
    authorization = ctx.request.headers.get("Authorization", "").strip()
    if authorization.lower().startswith("basic "):
        methods.append("basic")
    parts = authorization.split(" ")
    if len(parts) > 1 and parts[0].lower() == "bearer":
        methods.append("bearer")
    if ctx.request.args.get("access_token", "").strip():
        methods.append("access_token")
    if ctx.peer_certificate is not None:
        methods.append("x509")
    if methods:
        return "Authentication failed, attempted: " + ", ".join(methods)
    return "Authentication failed, no credentials provided"


def audit_failed_authentication(server, ctx) -> None:
    """``WithFailedAuthenticationAudit``: one ResponseStarted event for a request refused
    with 401, when the policy audits it (its user is unknown: only rules without users or
    groups match)."""
    auditor = server.auditor
    if auditor is None:
        return
    from .filters import request_attributes

    config = auditor.policy.evaluate(request_attributes(ctx))
    server.metrics.audit_levels.labels(config.level).inc()
    if config.level == NONE:
        return
    audit = ctx.audit = new_context(ctx, config, None)
    audit.response_status = {"metadata": {}, "message": authentication_methods(ctx),
                             "code": 401}
    auditor.process(audit, RESPONSE_STARTED)
