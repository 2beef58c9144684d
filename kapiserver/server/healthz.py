"""Health endpoints ``/healthz``, ``/livez``, ``/readyz`` in upstream's text format.

Mirrors ``k8s.io/apiserver/pkg/server/healthz``: named checks, ``?verbose``,
``?exclude=NAME`` (repeatable), ``/readyz/NAME`` for one check, and ``[+]name ok`` /
``[-]name failed: reason withheld`` lines ending in ``readyz check passed``.
"""

from __future__ import annotations

import logging
import threading
import time

from ..errors import go_quote
from ..endpoints.responses import http_error, not_found_text, text_response

log = logging.getLogger(__name__)


class HealthCheck:
    """A named check; ``check()`` returns ``None`` when healthy or an error string."""

    def __init__(self, name: str, fn):
        self.name = name
        self.fn = fn

    def check(self) -> str | None:
        try:
            return self.fn()
        except Exception as err:  # a broken check is a failed check, never a 500
            log.exception("health check %s raised", self.name)
            return str(err) or type(err).__name__


def ping() -> None:
    return None


def log_check() -> str | None:
    """Fail when a logging stream is closed (upstream's ``log`` check guards klog flushing)."""
    for handler in logging.getLogger().handlers:
        stream = getattr(handler, "stream", None)
        if stream is not None and getattr(stream, "closed", False):
            return "logging stream is closed"
    return None


#: The post-start hooks of a kube-apiserver, in the order its health checks list them;
#: kapiserver's hooks of the same name are listed in this order, others after them.
UPSTREAM_HOOK_ORDER = (
    "start-apiserver-admission-initializer", "generic-apiserver-start-informers",
    "priority-and-fairness-config-consumer", "priority-and-fairness-filter",
    "storage-object-count-tracker-hook", "start-apiextensions-informers",
    "start-apiextensions-controllers", "crd-informer-synced",
    "start-system-namespaces-controller", "start-cluster-authentication-info-controller",
    "start-kube-apiserver-identity-lease-controller",
    "start-kube-apiserver-identity-lease-garbage-collector",
    "start-legacy-token-tracking-controller", "start-service-ip-repair-controllers",
    "rbac/bootstrap-roles", "scheduling/bootstrap-system-priority-classes",
    "priority-and-fairness-config-producer", "bootstrap-controller",
    "start-kube-aggregator-informers", "apiservice-status-local-available-controller",
    "apiservice-status-remote-available-controller", "apiservice-registration-controller",
    "apiservice-wait-for-first-sync", "apiservice-discovery-controller",
    "kube-apiserver-autoregistration", "apiservice-openapi-controller",
    "apiservice-openapiv3-controller")


def hook_order(hooks: list) -> list:
    """``hooks`` in upstream's order where upstream has them, then the others as added."""
    rank = {name: index for index, name in enumerate(UPSTREAM_HOOK_ORDER)}
    return sorted(hooks, key=lambda hook: rank.get(hook.name, len(rank)))


class PostStartHook:
    """A task run once after the server is built; readiness waits for it.

    ``fn(server)`` runs in a background thread; until it returns, the check
    ``poststarthook/NAME`` fails. A hook that raises is logged and stays failed.
    """

    def __init__(self, name: str, fn):
        self.name = name
        self.fn = fn
        self.done = threading.Event()
        self.error: str | None = None

    def run(self, server) -> None:
        began = time.monotonic()
        try:
            self.fn(server)
        except Exception as err:
            self.error = f"{type(err).__name__}: {err}"
            log.exception("PostStartHook %r failed", self.name)
            return
        log.debug("post-start hook %s finished in %.0f ms", self.name,
                  (time.monotonic() - began) * 1000)
        self.done.set()

    def check(self) -> str | None:
        if self.error:
            return self.error
        return None if self.done.is_set() else "not finished"


def serve(kind: str, checks: list[HealthCheck], subpath: str, args, observe=None):
    """Answer ``/{kind}`` (``subpath`` empty) or ``/{kind}/{subpath}`` for one check.

    ``observe(name, kind, ok)``, when given, receives each check the root ran (upstream's
    ``slis.ObserveHealthcheck``, served at ``/metrics/slis``)."""
    if subpath:
        for check in checks:
            if check.name == subpath:
                error = check.check()
                if error:
                    return http_error(f"internal server error: {error}", 500)
                return text_response("ok")
        return not_found_text()
    verbose = "verbose" in args
    excluded = set(args.getlist("exclude")) if hasattr(args, "getlist") else set()
    lines, failed = [], []
    for check in checks:
        if check.name in excluded:
            excluded.discard(check.name)
            lines.append(f"[+]{check.name} excluded: ok\n")
            continue
        error = check.check()
        if observe is not None:
            observe(check.name, kind, not error)
        if error:
            lines.append(f"[-]{check.name} failed: reason withheld\n")
            failed.append(check.name)
            log.info("%s check %s failed: %s", kind, check.name, error)
        else:
            lines.append(f"[+]{check.name} ok\n")
    if excluded:
        quoted = ",".join(go_quote(name) for name in sorted(excluded))
        lines.append(f"warn: some health checks cannot be excluded: no matches for {quoted}\n")
    if failed:
        return http_error(f"{''.join(lines)}{kind} check failed", 500)
    if not verbose:
        return text_response("ok")
    return text_response(f"{''.join(lines)}{kind} check passed\n")
