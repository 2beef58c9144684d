"""Namespace content: what the namespace controller deletes when a namespace goes.

Upstream's namespace controller finds every namespaced resource the server offers through
discovery — its own and those of aggregated API servers — and deletes their objects
through the API (``deletecollection`` where a resource supports it, else list and delete
each). Here the controller (the ``core`` plugin's) asks *content providers* instead: one
for the resources stored by this server, and one for each plugin that serves namespaced
resources from elsewhere, registered with ``APIServer.add_namespace_content`` (the
aggregator's covers its extension servers). The core plugin never imports those plugins;
they meet in this contract.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ContentResource:
    """One namespaced resource a provider offers, with the verbs discovery lists for it."""

    group: str
    version: str
    resource: str
    verbs: frozenset = frozenset()

    def __str__(self) -> str:
        # Go's schema.GroupVersionResource.String(), as upstream's messages print it.
        return f"{self.group}/{self.version}, Resource={self.resource}"


class ContentError(Exception):
    """A request about a resource's objects failed; the text is what a client of the API
    would report (the ``Status`` message, as client-go's error text)."""


def discovery_failure_message(groups: dict[str, str]) -> str:
    """client-go's ``ErrGroupDiscoveryFailed``: ``groups`` maps ``group/version`` to why
    its discovery failed."""
    failures = sorted(f"{gv}: {why}" for gv, why in groups.items())
    return "unable to retrieve the complete list of server APIs: " + ", ".join(failures)


def stale_group_version(gv: str) -> str:
    """client-go's ``StaleGroupVersionError``: aggregated discovery lists ``gv`` as
    ``Stale`` (its APIService is unavailable)."""
    return f"stale GroupVersion discovery: {gv}"


class NamespaceContent:
    """A source of namespaced resources and their objects, for the namespace controller.

    Called from the controller's thread (the elected worker), one namespace at a time;
    every method may block on the network. Objects are JSON dicts (their ``metadata`` is
    what the controller reads).
    """

    #: Named in logs.
    name = ""

    def discover(self) -> tuple[list[ContentResource], dict[str, str]]:
        """The namespaced resources offered now (one version of each group resource: the
        group's preferred one that has it), and the group versions whose discovery
        failed, ``{"group/version": why}`` (``{}`` when none did). Deletion of a
        namespace waits while any discovery fails."""
        raise NotImplementedError

    def delete_collection(self, resource: ContentResource, namespace: str) -> bool:
        """Delete every object of ``resource`` in ``namespace`` at once; ``False`` when
        the resource does not support it (the caller then lists and deletes each).
        Raises ``ContentError``."""
        raise NotImplementedError

    def list(self, resource: ContentResource, namespace: str) -> list[dict] | None:
        """The objects of ``resource`` in ``namespace``, or ``None`` when it cannot be
        listed. Raises ``ContentError``."""
        raise NotImplementedError

    def delete(self, resource: ContentResource, namespace: str, name: str) -> None:
        """Delete one object (gone already is fine). Raises ``ContentError``."""
        raise NotImplementedError
