"""Audit: the events the audit filter hands to backends (``k8s.io/apiserver/pkg/audit``).

The filter builds one ``audit.k8s.io/v1`` Event per request, at stage
``ResponseComplete`` (or ``Panic``), and passes it to every backend returned through
``kapiserver_audit_backends``. Policy (levels, omitted stages) arrives with the audit
issue; until then backends receive every event at level ``Metadata``.
"""

from __future__ import annotations


class AuditBackend:
    """Base class of audit backends: ``process_event`` receives each Event as a dict.

    It runs on the request path: a slow backend must buffer and return at once.
    """

    name = ""

    def process_event(self, event: dict) -> None:
        raise NotImplementedError

    def shutdown(self) -> None:
        """Flush what is buffered; called once when the server stops."""
