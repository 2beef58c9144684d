"""CustomResourceServer: one worker's view of the CRDs, and the handlers it serves for them.

Upstream's ``crdHandler`` keeps a map of CRD name to serving info, rebuilt when a CRD
changes. Here each worker loads the CRDs from the store and follows their changes through
its watch cache (so a CRD written through any worker reaches every worker), builds a
store and REST handlers per served version, and hands the established ones to the
server's discovery and OpenAPI. Requests are routed by ``<plural>.<group>``, the CRD's
name, as upstream routes them.
"""

from __future__ import annotations

import logging
import os

from kapiserver.apimachinery.versions import kube_version_key
from kapiserver.server.apigroups import APIGroupInfo
from kapiserver.storage.follower import PrefixFollower

from .crds import (CRDS, ESTABLISHED, NAMES_ACCEPTED, PREFIX, TERMINATING, is_true,
                   storage_version)
from .customresource import (CustomResourceHandler, CustomResourceStatusStrategy,
                             CustomResourceStore, CustomResourceStrategy, ScaleHandler,
                             ServedVersion)
from .v1beta1 import crd_from_storage

log = logging.getLogger(__name__)


class CRDServing:
    """The handlers of one CRD: ``routes[version][path]`` and the storage-version store."""

    def __init__(self, crd: dict, routes: dict, storage_store, established: bool):
        self.crd = crd
        self.routes = routes
        self.storage_store = storage_store
        self.established = established


class CustomResourceServer:
    """Follow the CRDs in the store; serve their custom resources (module docstring)."""

    def __init__(self, server):
        self.server = server
        self.serving: dict[str, CRDServing] = {}
        self._material_dir = os.path.join(server.config.data_dir, "conversion")
        self.follower = PrefixFollower(server, PREFIX, self._apply, self._publish,
                                       "crd-handlers", {"kind": CRDS.kind,
                                                        "apiVersion": CRDS.api_version},
                                       convert=crd_from_storage)
        self.start = self.follower.start
        self.refresh = self.follower.refresh
        #: Called with the CRD's storage key after each change this worker sees.
        self.listeners = self.follower.listeners

    # -- building ------------------------------------------------------------------------------

    def _apply(self, key: str, crd: dict | None) -> None:
        name = key[len(PREFIX):]
        old = self.serving.pop(name, None)
        if old is not None and old.storage_store is not None:
            spec = old.crd["spec"]
            if self.server.registries.get((spec["group"], spec["names"]["plural"])) is \
                    old.storage_store:
                del self.server.registries[(spec["group"], spec["names"]["plural"])]
        if crd is None:
            return
        try:
            self.serving[name] = self._build(crd)
        except Exception:
            log.exception("CRD %s: cannot serve it", name)
            return
        serving = self.serving[name]
        if serving.storage_store is not None:
            spec = crd["spec"]
            self.server.registries[(spec["group"], spec["names"]["plural"])] = \
                serving.storage_store

    def _build(self, crd: dict) -> CRDServing:
        from .conversion import converter_for

        accepted = is_true(crd, NAMES_ACCEPTED) or is_true(crd, ESTABLISHED)
        if not accepted:
            return CRDServing(crd, {}, None, False)
        converter = converter_for(crd, self.resolve_service, self._material_dir)
        group = crd["spec"]["group"]
        storage = storage_version(crd)
        storage_api_version = f"{group}/{storage}"
        terminating = is_true(crd, TERMINATING)
        routes, storage_store = {}, None
        server = self.server
        for version in crd["spec"].get("versions") or []:
            served = ServedVersion(crd, version)
            strategy = CustomResourceStrategy(served, converter, storage_api_version)
            store = CustomResourceStore(served.spec, strategy, server.storage,
                                        server.watch_cache.written)
            if version["name"] == storage:
                storage_store = store
            if not version.get("served"):
                continue
            plural = served.spec.resource
            paths = {plural: CustomResourceHandler(store, server, served, terminating)}
            if "status" in served.subresources:
                status = CustomResourceStatusStrategy(served, converter, storage_api_version)
                status_store = CustomResourceStore(served.spec, status, server.storage,
                                                   server.watch_cache.written)
                paths[f"{plural}/status"] = CustomResourceHandler(
                    status_store, server, served, terminating, "status")
            if "scale" in served.subresources:
                paths[f"{plural}/scale"] = ScaleHandler(store, server, served)
            routes[version["name"]] = paths
        return CRDServing(crd, routes, storage_store, is_true(crd, ESTABLISHED))

    def _publish(self) -> None:
        """Give discovery and OpenAPI the established CRDs' groups."""
        groups: dict[str, dict[str, dict]] = {}
        for name in sorted(self.serving):
            serving = self.serving[name]
            if not serving.established:
                continue
            group = serving.crd["spec"]["group"]
            for version, paths in serving.routes.items():
                groups.setdefault(group, {}).setdefault(version, {}).update(paths)
        infos = []
        for group in sorted(groups):
            versions = groups[group]
            ordered = sorted(versions, key=kube_version_key)
            infos.append(APIGroupInfo(group, {v: versions[v] for v in ordered}))
        self.server.set_dynamic_groups("apiextensions", infos)

    # -- serving -------------------------------------------------------------------------------

    def lookup(self, info):
        """The handler of a custom resource request, or None (not found: pass it on)."""
        handler = self._lookup(info)
        if handler is None and info.api_group and info.resource:
            self.refresh()
            handler = self._lookup(info)
        return handler

    def _lookup(self, info):
        serving = self.serving.get(f"{info.resource}.{info.api_group}")
        if serving is None:
            return None
        paths = serving.routes.get(info.api_version)
        if paths is None:
            return None
        spec = serving.crd["spec"]
        namespaced = spec.get("scope") == "Namespaced"
        # A namespaced request for a cluster-scoped resource (or the reverse, except for
        # lists and watches across all namespaces) is not this resource: 404.
        if info.namespace and not namespaced:
            return None
        if namespaced and not info.namespace and info.name:
            return None
        if namespaced and not info.namespace and info.verb not in ("list", "watch"):
            return None
        path = f"{info.resource}/{info.subresource}" if info.subresource else info.resource
        return paths.get(path)

    def crd(self, name: str) -> dict | None:
        serving = self.serving.get(name)
        return serving.crd if serving else None

    def storage_store(self, name: str):
        serving = self.serving.get(name)
        return serving.storage_store if serving else None

    def resolve_service(self, namespace: str, name: str, port: int):
        """A conversion webhook Service's address (``serviceresolver``)."""
        from kapiserver.server.serviceresolver import resolve_service

        return resolve_service(self.server, namespace, name, port)
