"""API groups: what ``kapiserver_api_groups`` installers return, and how they are routed."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import ConfigError


class ResourceHandler:
    """Serves every request for one resource (or ``resource/subresource``) of a version.

    ``serve(ctx)`` receives the ``RequestContext`` (request, ``RequestInfo``, user) and
    returns a Flask response or raises a ``StatusError``.
    """

    def serve(self, ctx):
        raise NotImplementedError


@dataclass
class APIGroupInfo:
    """An installed group: ``versions`` maps a version (preferred first) to its resources.

    Resources are keyed ``"configmaps"`` or ``"namespaces/status"`` and map to a
    ``ResourceHandler``. The core group's name is ``""``.
    """

    name: str
    versions: dict[str, dict[str, ResourceHandler]] = field(default_factory=dict)


class APIGroupInstaller:
    """Base class of what ``kapiserver_api_groups`` returns: one group for one delegate.

    Set ``group`` (``""`` for the core group) and ``delegate`` (the delegate server that
    serves it; ``"kube"`` by default) and implement ``install(server) -> APIGroupInfo``,
    called once per worker when the server is built.
    """

    group = ""
    delegate = "kube"

    def install(self, server) -> APIGroupInfo:
        raise NotImplementedError


class ResourceRoutes:
    """Route resource requests to handlers by (group, version, resource[/subresource])."""

    def __init__(self, groups: list[APIGroupInfo]):
        self.groups = list(groups)
        self._routes: dict[tuple[str, str], dict[str, ResourceHandler]] = {}
        for group in self.groups:
            for version, resources in group.versions.items():
                key = (group.name, version)
                if key in self._routes:
                    raise ConfigError(f"API group {group.name or 'core'!r} version {version!r} "
                                      "installed twice")
                self._routes[key] = dict(resources)

    def lookup(self, info) -> ResourceHandler | None:
        resources = self._routes.get((info.api_group, info.api_version))
        if resources is None or not info.resource:
            return None
        if info.subresource:
            handler = resources.get(f"{info.resource}/{info.subresource}")
        else:
            handler = resources.get(info.resource)
        spec = getattr(handler, "spec", None)
        if spec is not None and not spec.namespaced and _under_a_namespace(info):
            return None  # upstream has no route for a cluster-scoped resource there
        return handler


#: What may follow ``namespaces/{name}`` in a namespace's own path (RequestInfo's
#: ``namespaceSubresources``).
_NAMESPACE_SUBRESOURCES = ("status", "finalize")


def _under_a_namespace(info) -> bool:
    """True when the path names a resource below ``namespaces/{ns}/`` (not a namespace
    itself, nor its ``status``/``finalize``)."""
    segments = info.path.strip("/").split("/")
    rest = segments[2:] if info.api_prefix == "api" else segments[3:]
    return (len(rest) > 2 and rest[0] == "namespaces"
            and rest[2] not in _NAMESPACE_SUBRESOURCES)


def builtin_handlers(server, strategy, registry_class=None) -> dict[str, ResourceHandler]:
    """The handlers of a built-in resource and of its generic subresources, keyed as
    ``APIGroupInfo`` keys them: the resource; ``status`` when discovery lists it (the
    strategy's ``status_strategy()``); ``scale`` when the strategy has a ``scale``
    accessor. Other subresources are the kind's own."""
    from ..registry.builtin import resource_info

    spec = strategy.spec
    kwargs = {"registry_class": registry_class} if registry_class else {}
    main = server.rest_handler(spec, strategy, **kwargs)
    handlers = {spec.resource: main}
    subresources = resource_info(spec.group, spec.version, spec.resource).get("subresources", {})
    if "status" in subresources:
        handlers[f"{spec.resource}/status"] = server.rest_handler(
            spec, strategy.status_strategy(), "status", tuple(subresources["status"]["verbs"]))
    if "scale" in subresources and strategy.scale is not None:
        from ..endpoints.scale import ScaleHandler

        handlers[f"{spec.resource}/scale"] = ScaleHandler(main.store, server, strategy.scale)
    return handlers
