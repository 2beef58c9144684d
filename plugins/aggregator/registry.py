"""APIServiceRegistry: one worker's view of the APIServices, for routing and discovery.

Each worker follows the APIServices in the store. Discovery lists groups and versions by
their priorities (the aggregator's own group first), including the groups extension
servers serve; requests for those groups' versions are proxied. The backend's aggregated
discovery is fetched by each worker (on changes and every ``DISCOVERY_INTERVAL``) and
merged into ``/apis``; its OpenAPI documents are fetched by the same thread and merged
into ``/openapi`` (``openapi.OpenAPIAggregation``).
"""

from __future__ import annotations

import http.client
import json
import logging
import threading
import time

from kapiserver import errors
from kapiserver.endpoints.discovery import RemoteGroup
from kapiserver.storage.follower import PrefixFollower

from . import priorities
from .apiservices import APISERVICES, PREFIX, is_available, is_local
from .proxy import Backend, ProxyHandler, backend_key, client_certificate, identity_headers

log = logging.getLogger(__name__)

DISCOVERY_INTERVAL = 30.0
AGGREGATED_ACCEPT = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


class AggregatorUser:
    """The identity the aggregator's own requests to backends carry."""

    name = "system:kube-aggregator"
    groups = ("system:masters",)
    extra: dict = {}
    uid = ""


def split_path(path: str) -> tuple[str, str] | None:
    """(group, version) of a ``/apis/GROUP/VERSION[/...]`` path, else None."""
    parts = path.split("/")
    if len(parts) >= 4 and parts[1] == "apis" and parts[2] and parts[3]:
        return parts[2], parts[3]
    return None


class APIServiceRegistry:
    """Follow the APIServices in the store (see the module docstring)."""

    def __init__(self, server):
        self.server = server
        self.apiservices: dict[str, dict] = {}
        self.backends: dict[str, Backend] = {}
        #: APIService name -> the backend's APIResourceDiscovery entries for its version.
        self.remote_resources: dict[str, list | None] = {}
        self.client_cert = client_certificate(server.config)
        self.follower = PrefixFollower(server, PREFIX, self._apply, self._publish,
                                       "apiservices", {"kind": APISERVICES.kind,
                                                       "apiVersion": APISERVICES.api_version})
        self.refresh = self.follower.refresh
        self.listeners = self.follower.listeners
        self._wake = threading.Event()
        from .openapi import OpenAPIAggregation

        self.openapi = OpenAPIAggregation(server, self.proxy)

    def start(self, server=None) -> None:
        self.follower.start()
        threading.Thread(target=self._discover, name="apiservice-discovery",
                         daemon=True).start()

    # -- the view ------------------------------------------------------------------------------

    def _apply(self, key: str, obj: dict | None) -> None:
        name = key[len(PREFIX):]
        if obj is None:
            self.apiservices.pop(name, None)
            self.remote_resources.pop(name, None)
        else:
            self.apiservices[name] = obj

    def _publish(self) -> None:
        self.server.set_discovery_order(self.order)
        self._wake.set()

    def order(self, groups: list) -> list:
        """Discovery's groups by priority, with the extension servers' groups added."""
        ranks, remote = {}, {}
        for name, apiservice in list(self.apiservices.items()):
            spec = apiservice.get("spec") or {}
            group, version = spec.get("group") or "", spec.get("version") or ""
            ranks[(group, version)] = (spec.get("groupPriorityMinimum", 0),
                                       spec.get("versionPriority", 0))
            if not is_local(apiservice):
                remote.setdefault(group, {})[version] = self.remote_resources.get(name)
        local = {g.name for g in groups}
        extra = [RemoteGroup(group, versions) for group, versions in sorted(remote.items())
                 if group not in local]
        return priorities.sort_groups(list(groups) + extra, ranks)

    # -- proxying ------------------------------------------------------------------------------

    def handler_for(self, path: str):
        """The proxy for a path of an extension server's group version, or None."""
        found = split_path(path)
        if found is None:
            return None
        group, version = found
        apiservice = self.apiservices.get(f"{version}.{group}")
        if apiservice is None:
            self.refresh()
            apiservice = self.apiservices.get(f"{version}.{group}")
        if apiservice is None or is_local(apiservice):
            return None
        if not is_available(apiservice):
            raise errors.ServiceUnavailable("service unavailable")
        return self.proxy(apiservice)

    def proxy(self, apiservice: dict) -> ProxyHandler:
        spec = apiservice["spec"]
        service = spec["service"]
        try:
            address = self.resolve(service["namespace"], service["name"],
                                   service.get("port", 443))
        except LookupError as err:
            raise errors.ServiceUnavailable(f"service unavailable: {err}") from None
        key = backend_key(apiservice, self.client_cert)
        backend = self.backends.get(key)
        if backend is None:
            backend = self.backends[key] = Backend(
                f"{service['name']}.{service['namespace']}.svc", spec.get("caBundle") or "",
                bool(spec.get("insecureSkipTLSVerify")), self.client_cert)
        return ProxyHandler(backend, address)

    def resolve(self, namespace: str, name: str, port: int) -> tuple[str, int]:
        from kapiserver.server.serviceresolver import resolve_service

        return resolve_service(self.server, namespace, name, port)

    # -- the backends' discovery ---------------------------------------------------------------

    def _discover(self) -> None:
        """The backends' discovery every ``DISCOVERY_INTERVAL``, their OpenAPI when due,
        both at once whenever an APIService changes."""
        stopping = self.server.stopping
        next_discovery = 0.0
        openapi_wait = 0.0
        while not stopping.is_set():
            wait = max(0.0, min(next_discovery - time.monotonic(), openapi_wait))
            changed = self._wake.wait(wait)
            self._wake.clear()
            if stopping.is_set():
                return
            try:
                if changed or time.monotonic() >= next_discovery:
                    self._discover_resources()
                    next_discovery = time.monotonic() + DISCOVERY_INTERVAL
                openapi_wait = self.openapi.sync(dict(self.apiservices), changed)
            except Exception:  # the thread must outlive a bug in one pass
                log.exception("fetching the extension servers' discovery and OpenAPI failed")
                openapi_wait = DISCOVERY_INTERVAL

    def _discover_resources(self) -> None:
        changed = False
        for name, apiservice in list(self.apiservices.items()):
            if is_local(apiservice):
                continue
            resources = self._fetch(apiservice) if is_available(apiservice) else None
            if resources != self.remote_resources.get(name):
                self.remote_resources[name] = resources
                changed = True
        if changed:
            with self.follower.lock:
                self.server.set_discovery_order(self.order)

    def _fetch(self, apiservice: dict) -> list | None:
        """The backend's aggregated discovery entries for the APIService's group version."""
        spec = apiservice["spec"]
        try:
            handler = self.proxy(apiservice)
            headers = [("Accept", AGGREGATED_ACCEPT), *identity_headers(AggregatorUser)]
            status, _, body = handler.request("GET", "/apis", headers)
            if status != 200:
                return None
            document = json.loads(body)
        except errors.StatusError:
            return None
        except (OSError, http.client.HTTPException, ValueError) as err:
            log.info("discovery of %s failed: %s", apiservice["metadata"]["name"], err)
            return None
        for item in document.get("items") or []:
            if (item.get("metadata") or {}).get("name") != spec.get("group"):
                continue
            for version in item.get("versions") or []:
                if version.get("version") == spec.get("version"):
                    return version.get("resources") or []
        return None
