"""The namespace controller: empty a terminating namespace, then let it go.

Upstream's ``namespace`` controller (kube-controller-manager), run by the elected worker:
for every namespace with a ``deletionTimestamp`` it deletes every object of every
namespaced resource installed in this server (built-in or added by plugins), waits for
objects held by finalizers, then removes the ``kubernetes`` finalizer through the
``finalize`` subresource's rules, which deletes the namespace.
"""

import logging

from kapiserver import errors
from kapiserver.controllers import Controller

from .namespaces import FINALIZER

log = logging.getLogger(__name__)


class NamespaceController(Controller):
    """Finish the deletion of terminating namespaces (see module docstring)."""

    name = "namespace"
    interval = 0.25

    def __init__(self, server, finalize_registry):
        self.server = server
        self.finalize_registry = finalize_registry

    def sync(self) -> None:
        namespaces = self.server.registries[("", "namespaces")]
        for namespace in namespaces.list("")["items"]:
            meta = namespace["metadata"]
            if meta.get("deletionTimestamp") and FINALIZER in (
                    (namespace.get("spec") or {}).get("finalizers") or []):
                self._finish(meta["name"])

    def _finish(self, name: str) -> None:
        remaining = 0
        for registry in list(self.server.registries.values()):
            if not registry.spec.namespaced:
                continue
            for item in registry.list(name)["items"]:
                remaining += 1
                if item["metadata"].get("deletionTimestamp"):
                    continue  # waiting for its finalizers
                try:
                    registry.delete(name, item["metadata"]["name"])
                except errors.NotFound:
                    remaining -= 1
        if remaining:
            return
        try:
            self.finalize_registry.guaranteed_update(
                "", name, lambda ns: _without_kubernetes_finalizer(ns))
            log.info("namespace %s finalized", name)
        except errors.NotFound:
            pass


def _without_kubernetes_finalizer(namespace: dict) -> dict:
    spec = namespace.setdefault("spec", {})
    spec["finalizers"] = [f for f in spec.get("finalizers") or [] if f != FINALIZER]
    return namespace
