"""The ``MutatingAdmissionWebhook`` and ``ValidatingAdmissionWebhook`` admission plugins
(upstream's ``webhook/generic``, ``webhook/mutating`` and ``webhook/validating``).

For each request (never for admission configuration objects themselves) every webhook of
the configurations is asked ``ShouldCallHook``: its namespace and object selectors, its
rules (or, with ``matchPolicy: Equivalent``, a rule for an equivalent resource: the
webhook then sees the objects in that version), then its match conditions. Mutating
webhooks are called one after another; each JSON patch is applied to the object, which
is then decoded into its kind's types (unknown fields dropped), converted back to the
request's version and defaulted again, and validated later by the store as any write.
A patch that changed the object asks the chain to reinvoke the mutating plugins once;
in that round only the webhooks with ``reinvocationPolicy: IfNeeded`` that ran before
are called again. Validating webhooks are called at the same time (threads: greenlets in
the gevent worker) and the first refusal in their order fails the request.

Failures to call a webhook fail the request with a 500 (``failurePolicy: Fail``) or are
ignored (``Ignore``, noted in an audit annotation); a refusal is the webhook's own
``Status``; a dry-run request refuses webhooks with side effects (400). Webhooks'
``warnings`` become ``Warning`` headers, their ``auditAnnotations`` the request's audit
annotations (``<webhook name>/<key>``).
"""

from __future__ import annotations

import copy
import json
import logging
import threading
import time

from kapiserver import errors
from kapiserver.admission import AdmissionPlugin

from . import predicates
from .review import (CallError, Caller, WebhookDenied, decode_patch, dry_run_unsupported,
                     new_review, verify_response)
from .source import WebhookSource

log = logging.getLogger(__name__)

MUTATING_NAME = "MutatingAdmissionWebhook"
VALIDATING_NAME = "ValidatingAdmissionWebhook"
#: Upstream's audit annotation prefixes.
MUTATION_ANNOTATION = "mutation.webhook.admission.k8s.io/"
FAILED_OPEN_MUTATING = "failed-open.mutation.webhook.admission.k8s.io/"
FAILED_OPEN_VALIDATING = "failed-open.validating.webhook.admission.k8s.io/"


def caller_for(server) -> Caller:
    """The server's one webhook ``Caller`` (shared by both plugins, kept on the server)."""
    caller = server.__dict__.get("admission_webhook_caller")
    if caller is None:
        caller = server.__dict__.setdefault("admission_webhook_caller", Caller(server))
    return caller


class _Versions:
    """The request's objects in the versions webhooks ask for (converted once each)."""

    def __init__(self, attributes):
        self.attributes = attributes
        self.cache = {}

    def objects(self, gvk) -> tuple:
        attributes = self.attributes
        wanted = (gvk[0], gvk[1])
        if wanted == attributes.gvk[:2]:
            return attributes.object, attributes.old_object
        found = self.cache.get(wanted)
        if found is None:
            found = self.cache[wanted] = tuple(
                predicates.convert(obj, attributes.gvk[:2], wanted)
                for obj in (attributes.object, attributes.old_object))
        return found

    def forget(self) -> None:
        self.cache.clear()


def cel_request(attributes, gvr, gvk) -> dict:
    """``CreateAdmissionRequest``: the ``request`` of CEL expressions."""
    from .review import admission_request

    request = admission_request("", attributes, gvr, gvk, None, None)
    for key in ("uid", "object", "oldObject", "options"):
        request.pop(key, None)
    return request


class WebhookPlugin(AdmissionPlugin):
    """What both plugins share: the configurations' source and ``ShouldCallHook``."""

    mutating_hooks = False

    def __init__(self, server):
        self.server = server
        self.source = WebhookSource(server, self.mutating_hooks)
        self.caller = caller_for(server)

    def _namespace(self, name: str) -> dict:
        registry = self.server.registries.get(("", "namespaces"))
        if registry is None:
            raise errors.NotFound.for_object("", "namespaces", name)
        return registry.get("", name)

    def should_call(self, webhook, attributes, versions):
        """``(gvr, gvk)`` to call ``webhook`` with, or None; a ``StatusError`` when a
        selector or a match condition fails."""
        namespace_error = object_error = None
        try:
            if not predicates.matches_namespace(webhook, attributes, self._namespace):
                return None
        except errors.StatusError as err:
            namespace_error = err
        try:
            if not predicates.matches_object(webhook, attributes):
                return None
        except errors.StatusError as err:
            object_error = err
        invocation = predicates.invocation_for(webhook, attributes)
        if invocation is None:
            return None
        if namespace_error is not None:
            raise namespace_error
        if object_error is not None:
            raise object_error
        if webhook.conditions:
            gvr, gvk = invocation
            obj, old = versions.objects(gvk)
            result = webhook.conditions.match(obj, old, cel_request(attributes, gvr, gvk))
            if result.error:
                log.warning("failed evaluating match conditions, failing closed %s: %s",
                            webhook.name, result.error)
                group, _, resource = attributes.gvr
                raise errors.Forbidden.for_resource(group, resource, attributes.name,
                                                    result.error)
            if not result.matches:
                return None
        return invocation

    def call(self, webhook, attributes, invocation, obj, old):
        """One call: the verified response, refusal or not (``CallError``, ``StatusError``
        when there is none). Touches nothing of the request: validating webhooks are
        called from other threads."""
        if attributes.dry_run and webhook.side_effects not in ("None", "NoneOnDryRun"):
            if webhook.side_effects is None:
                raise CallError(webhook.name, "Webhook SideEffects is nil")
            raise dry_run_unsupported(webhook.name)
        gvr, gvk = invocation
        uid, version, review = new_review(webhook, attributes, gvr, gvk, obj, old)
        deadline = attributes.ctx.deadline if attributes.ctx is not None else None
        started = time.perf_counter()
        try:
            answer = self.caller.call(webhook, review, deadline)
            response = verify_response(webhook, uid, version, answer, self.mutating_hooks)
        except CallError:
            self._observe(webhook, attributes, started, not webhook.ignores_failures, 500)
            raise
        except errors.StatusError as err:
            self._observe(webhook, attributes, started, True, err.code)
            raise
        code = 200
        if not response.allowed:
            result = response.result if isinstance(response.result, dict) else {}
            code = result.get("code") if isinstance(result.get("code"), int) else 400
        self._observe(webhook, attributes, started, not response.allowed, code)
        return response

    def _observe(self, webhook, attributes, started: float, rejected: bool, code: int):
        """``ObserveWebhook``: the call's time and outcome (type ``admit`` for mutating
        webhooks, ``validating`` for the others, as upstream labels them)."""
        metrics = getattr(self.server, "metrics", None)
        if metrics is None:  # a plugin built without a server (unit tests)
            return
        kind = "admit" if self.mutating_hooks else "validating"
        flag = "true" if rejected else "false"
        metrics.admission_webhook.labels(webhook.name, kind, attributes.operation,
                                         flag).observe(time.perf_counter() - started)
        metrics.admission_webhook_requests.labels(webhook.name, kind, attributes.operation,
                                                  str(min(code, 600)), flag).inc()

    @staticmethod
    def conclude(webhook, attributes, response) -> None:
        """The response's audit annotations and warnings on the request; its refusal
        raised."""
        for key, value in response.audit_annotations.items():
            if isinstance(value, str):
                attributes.add_annotation(f"{webhook.name}/{key}", value)
        for text in response.warnings:
            attributes.add_warning(text)
        if not response.allowed:
            raise WebhookDenied(webhook.name, response.result)


class MutatingAdmissionWebhook(WebhookPlugin):
    """Calls the mutating webhooks in order and applies their patches."""

    name = MUTATING_NAME
    mutating_hooks = True

    def admit(self, attributes) -> None:
        if predicates.is_exempt(attributes):
            return
        webhooks = self.source.webhooks()
        if not webhooks:
            return
        # upstream's webhookReinvokeContext
        state = attributes.reinvocation.setdefault(MUTATING_NAME, {
            "last": None, "previous": set(), "reinvoke": set()})
        if attributes.reinvoking and state["last"] != attributes.object:
            # a plugin after the webhooks changed the object: they all may run again
            _require_reinvoking(state)
        versions = _Versions(attributes)
        round_ = 1 if attributes.reinvoking else 0
        try:
            for index, webhook in enumerate(webhooks):
                invocation = self.should_call(webhook, attributes, versions)
                if invocation is None:
                    continue
                if attributes.reinvoking and webhook.uid not in state["reinvoke"]:
                    continue
                changed = False
                try:
                    changed = self._mutate(webhook, attributes, invocation, versions)
                except CallError as err:
                    if not webhook.ignores_failures:
                        log.warning("failed calling webhook, failing closed %s: %s",
                                    webhook.name, err)
                        raise errors.InternalError.wrap(str(err)) from None
                    log.warning("failed calling webhook, failing open %s: %s",
                                webhook.name, err)
                    attributes.add_annotation(
                        f"{FAILED_OPEN_MUTATING}round_{round_}_index_{index}", webhook.name)
                finally:
                    attributes.add_annotation(
                        f"{MUTATION_ANNOTATION}round_{round_}_index_{index}",
                        json.dumps({"configuration": webhook.configuration,
                                    "webhook": webhook.name, "mutated": changed},
                                   separators=(",", ":")))
                if changed:
                    _require_reinvoking(state)
                    attributes.should_reinvoke = True
                if webhook.reinvoke:
                    state["previous"].add(webhook.uid)
        finally:
            state["last"] = copy.deepcopy(attributes.object)

    def _mutate(self, webhook, attributes, invocation, versions) -> bool:
        """Call ``webhook``; apply its patch to ``attributes.object``. True when the object
        changed."""
        from kapiserver.registry import patch as patches

        gvr, gvk = invocation
        obj, old = versions.objects(gvk)
        response = self.call(webhook, attributes, invocation, obj, old)
        self.conclude(webhook, attributes, response)
        if not response.patch:
            return False
        operations = decode_patch(webhook, response.patch)
        if not operations:
            return False
        if obj is None:
            raise errors.InternalError.wrap(
                f"admission webhook {errors.go_quote(webhook.name)} attempted to modify the "
                "object, which is not supported for this operation")
        if response.patch_type != "JSONPatch":
            raise CallError(webhook.name, f"unsupported patch type {errors.go_quote(response.patch_type)}")
        try:
            patched = patches.apply_json_patch(obj, operations)
        except patches.PatchError as err:
            raise errors.InternalError.wrap(str(err)) from None
        if not isinstance(patched, dict):
            raise errors.InternalError.wrap("the patched object must be a JSON object")
        api_version = f"{gvk[0]}/{gvk[1]}" if gvk[0] else gvk[1]
        _decode(patched, api_version, gvk[2])
        if patched == obj:
            return False
        request_gv = attributes.gvk[:2]
        patched = predicates.convert(patched, gvk[:2], request_gv)
        if attributes.strategy is not None:
            attributes.strategy.apply_defaults(patched)
        target = attributes.object
        target.clear()
        target.update(patched)
        versions.forget()
        return True


def _require_reinvoking(state: dict) -> None:
    """``RequireReinvokingPreviouslyInvokedPlugins``."""
    if state["previous"]:
        state["reinvoke"] |= state["previous"]
        state["previous"] = set()


def _decode(obj: dict, api_version: str, kind: str) -> None:
    """The patched object decoded into its kind's types, as upstream's JSON serializer:
    a value of the wrong type is an internal error, unknown fields are dropped."""
    from kapiserver.runtime.decoding import type_error
    from kapiserver.runtime.unknown_fields import unknown_fields

    obj.setdefault("apiVersion", api_version)
    obj.setdefault("kind", kind)
    problem = type_error(obj, api_version, kind)
    if problem is not None:
        raise errors.InternalError.wrap(problem)
    unknown_fields(obj, api_version, kind, prune=True)


class ValidatingAdmissionWebhook(WebhookPlugin):
    """Calls the matching validating webhooks at once; the first refusal wins."""

    name = VALIDATING_NAME

    def validate(self, attributes) -> None:
        if predicates.is_exempt(attributes):
            return
        webhooks = self.source.webhooks()
        if not webhooks:
            return
        versions = _Versions(attributes)
        calls = []
        for index, webhook in enumerate(webhooks):
            invocation = self.should_call(webhook, attributes, versions)
            if invocation is not None:
                calls.append((index, webhook, invocation, *versions.objects(invocation[1])))
        if not calls:
            return
        if len(calls) == 1:
            outcomes = [self._outcome(attributes, *calls[0])]
        else:
            outcomes = [None] * len(calls)

            def run(i, call):
                outcomes[i] = self._outcome(attributes, *call)

            threads = [threading.Thread(target=run, args=(i, call), daemon=True)
                       for i, call in enumerate(calls)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        refusals = []
        for (index, webhook, *_), (response, error) in zip(calls, outcomes):
            if isinstance(error, CallError):
                if webhook.ignores_failures:
                    log.warning("failed calling webhook, failing open %s: %s", webhook.name,
                                error)
                    attributes.add_annotation(
                        f"{FAILED_OPEN_VALIDATING}round_0_index_{index}", webhook.name)
                    continue
                log.warning("failed calling webhook, failing closed %s: %s", webhook.name,
                            error)
                error = errors.InternalError.wrap(str(error))
            if error is None:
                try:
                    self.conclude(webhook, attributes, response)
                except errors.StatusError as err:
                    error = err
            if error is not None:
                refusals.append(error)
        if refusals:
            raise refusals[0]

    def _outcome(self, attributes, index, webhook, invocation, obj, old):
        """``(response, None)`` or ``(None, error)`` of one call."""
        try:
            return self.call(webhook, attributes, invocation, obj, old), None
        except (CallError, errors.StatusError) as err:
            return None, err
        except Exception as err:  # a thread must hand every failure back
            log.exception("validating webhook %s", webhook.name)
            return None, errors.InternalError.wrap(str(err))
