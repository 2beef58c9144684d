"""The ValidatingAdmissionPolicy status controller (kube-controller-manager's
``validatingadmissionpolicy-status-controller``): each policy whose ``metadata.generation``
is newer than its ``status.observedGeneration`` is type checked (``typechecking``) and its
status written: ``observedGeneration`` and ``typeChecking.expressionWarnings``.

It runs on the elected worker, as the other controllers; the policies' own writes wake it.
Departure: the status is written as an update by the controller's field manager, where
upstream applies it (server-side apply); the fields written are the same.
"""

from __future__ import annotations

import logging

from kapiserver import errors
from kapiserver.controllers import Controller
from kapiserver.registry.store import RegistryStore

from .typechecking import check

log = logging.getLogger(__name__)

NAME = "validatingadmissionpolicy-status-controller"
GROUP, RESOURCE = "admissionregistration.k8s.io", "validatingadmissionpolicies"


class PolicyStatusController(Controller):
    """Writes ``status.typeChecking`` of the policies (see the module docstring)."""

    name = NAME
    interval = 1.0

    def __init__(self, server):
        from kapiserver_plugins.admissionregistration.policies import POLICIES, PolicyStrategy

        self.server = server
        self.status = RegistryStore(POLICIES, PolicyStrategy(POLICIES).status_strategy(),
                                    server.storage, server.watch_cache.written)
        self.manage = self.status.field_manager(NAME, "status")
        #: name -> the generation last written (failed writes are retried at the next pass)
        self._done: dict[str, int] = {}

    def sync(self) -> None:
        registry = self.server.registries.get((GROUP, RESOURCE))
        if registry is None:
            return
        policies = registry.list("")["items"]
        present = set()
        for policy in policies:
            meta = policy.get("metadata") or {}
            name, generation = meta.get("name", ""), meta.get("generation") or 0
            present.add(name)
            observed = (policy.get("status") or {}).get("observedGeneration") or 0
            if generation <= observed or self._done.get(name) == generation:
                continue
            try:
                warnings = check(self.server, policy)
            except Exception:  # type checking must never stop the others
                log.exception("type checking policy %s failed", name)
                warnings = []
            self._write(name, generation, warnings)
        for name in set(self._done) - present:
            del self._done[name]

    def _write(self, name: str, generation: int, warnings: list[dict]) -> None:
        def mutate(current):
            meta = current.get("metadata") or {}
            if (meta.get("generation") or 0) != generation:
                return current  # changed meanwhile: the next pass checks the new spec
            status = current.setdefault("status", {})
            status["observedGeneration"] = generation
            status["typeChecking"] = ({"expressionWarnings": warnings} if warnings else {})
            return current

        try:
            self.status.guaranteed_update("", name, mutate, manage=self.manage)
            self._done[name] = generation
        except errors.NotFound:
            pass
