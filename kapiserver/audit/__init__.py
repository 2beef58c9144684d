"""Audit: the events of each request, given to the audit backends (``k8s.io/apiserver/pkg/audit``).

The audit filter (``kapiserver.server.auditing``) asks the policy (``policy``) for each
request's level; above None it keeps an ``AuditContext`` (``context``) on the request and
hands one ``audit.k8s.io/v1`` Event per stage (RequestReceived, ResponseStarted for
long-running requests, ResponseComplete, or Panic) to every backend returned through
``kapiserver_audit_backends``. kube-apiserver's own backends (a log file, a webhook, in
blocking or batch mode) are in ``backends``; the built-in ``audit`` plugin provides them.
"""

from __future__ import annotations


class AuditBackend:
    """Base class of audit backends: ``process_event`` receives each Event as a dict.

    It runs on the request path: a slow backend must buffer and return at once. It returns
    False when the event could not be stored and the request must fail for it (upstream's
    ``blocking-strict`` mode); True or None otherwise. A backend must not change the event.
    """

    name = ""

    def process_event(self, event: dict) -> bool | None:
        raise NotImplementedError

    def shutdown(self) -> None:
        """Flush what is buffered; called once when the server stops."""
