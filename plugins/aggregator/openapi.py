"""OpenAPIAggregation: the extension servers' OpenAPI documents, merged into this server's.

Upstream's OpenAPI aggregation controllers (``kube-aggregator/pkg/controllers/openapi``
for v2, ``.../openapiv3`` for v3), run in each worker beside the discovery fetch
(``APIServiceRegistry``), never per request. For every *available* APIService backed by
a Service, as user ``system:aggregator``:

* **v3**: the backend's ``/openapi/v3`` index; each of its documents under ``apis/`` for a
  group this server does not serve itself is fetched when its hash in the index changes,
  and served here at ``/openapi/v3/<key>`` (listed in this server's index with the hash of
  its bytes, so clients cache it as they cache the local ones).
* **v2**: the backend's ``/openapi/v2`` (asked with ``If-None-Match``), reduced to its
  ``/apis/`` paths, merged into this server's document (``kapiserver.openapi.merge``).

Each APIService is refreshed when any APIService changes (added, removed, its
availability flipped) and every ``REFRESH_INTERVAL`` (upstream: a minute); a failed fetch
is retried sooner, keeping what was fetched last. An APIService that goes away or turns
unavailable drops out of the documents (upstream keeps its last v2 document and proxies v3
requests to it, which then answer 503).
"""

from __future__ import annotations

import http.client
import json
import logging
import time
import urllib.parse
from dataclasses import dataclass, field

from kapiserver import errors
from kapiserver.authentication import UserInfo
from kapiserver.openapi.builder import AggregatedSpec
from kapiserver.openapi.merge import filter_by_paths

from .apiservices import is_available, is_local
from .proxy import identity_headers

log = logging.getLogger(__name__)

#: Upstream's successfulUpdateDelay.
REFRESH_INTERVAL = 60.0
#: First retry after a failed fetch; doubled each time, up to REFRESH_INTERVAL.
RETRY_INTERVAL = 1.0
#: The identity of upstream's OpenAPI downloads (``aggregatorUser``, no groups).
OPENAPI_USER = UserInfo("system:aggregator")
#: What an extension server may add: upstream merges its v2 paths under ``/apis/``.
V2_PREFIXES = ("/apis/",)
V3_PREFIX = "apis/"
JSON = "application/json"


class FetchError(Exception):
    """A backend's OpenAPI could not be fetched."""


@dataclass
class _Backend:
    """What was fetched from one APIService's backend, and when to fetch again."""

    v3_urls: dict = field(default_factory=dict)   # key -> serverRelativeURL in its index
    v3: dict = field(default_factory=dict)        # key -> bytes
    v2: dict | None = None
    v2_etag: str = ""
    due: float = 0.0
    failures: int = 0


class OpenAPIAggregation:
    """One worker's copy of its extension servers' OpenAPI (see the module docstring).

    ``sync(apiservices, changed)`` is called by the registry's discovery thread; it fetches
    what is due and hands the result to ``server.openapi.set_aggregated`` when anything
    changed. ``proxy(apiservice)`` gives the ``ProxyHandler`` of a backend.
    """

    def __init__(self, server, proxy):
        self.server = server
        self.proxy = proxy
        self.backends: dict[str, _Backend] = {}

    def sync(self, apiservices: dict, changed: bool) -> float:
        """Refresh what is due (everything when ``changed``); return the seconds until
        the next refresh is due."""
        now = time.monotonic()
        wanted = {name: a for name, a in apiservices.items()
                  if not is_local(a) and is_available(a)}
        updated = False
        for name in set(self.backends) - set(wanted):
            del self.backends[name]
            updated = True
        local = {group.name for group in self.server.discovery.groups}
        for name, apiservice in wanted.items():
            backend = self.backends.get(name)
            if backend is None:
                backend = self.backends[name] = _Backend()
            if not changed and now < backend.due:
                continue
            try:
                handler = self.proxy(apiservice)
                updated |= self._fetch_v3(handler, backend, local)
                updated |= self._fetch_v2(handler, backend)
            except (errors.StatusError, FetchError, OSError, http.client.HTTPException,
                    ValueError) as err:
                backend.failures += 1
                backend.due = now + min(REFRESH_INTERVAL,
                                        RETRY_INTERVAL * 2 ** (backend.failures - 1))
                log.info("loading OpenAPI spec for %r failed with: %s", name, err)
                continue
            backend.failures = 0
            backend.due = now + REFRESH_INTERVAL
        if updated:
            self.server.openapi.set_aggregated(self.specs(wanted))
        dues = [backend.due for backend in self.backends.values()]
        return max(0.0, min(dues) - now) if dues else REFRESH_INTERVAL

    def specs(self, apiservices: dict) -> list[AggregatedSpec]:
        """What each backend adds, in upstream's merge order: groups by their highest
        ``groupPriorityMinimum``, then APIService names."""
        group_priority: dict[str, int] = {}
        for apiservice in apiservices.values():
            spec = apiservice.get("spec") or {}
            group = spec.get("group") or ""
            group_priority[group] = max(group_priority.get(group, 0),
                                        spec.get("groupPriorityMinimum", 0))

        def order(name):
            return (-group_priority[(apiservices[name].get("spec") or {}).get("group") or ""],
                    name)

        return [AggregatedSpec(name, self.backends[name].v2, dict(self.backends[name].v3))
                for name in sorted(self.backends, key=order)]

    # -- downloads -----------------------------------------------------------------------------

    def _get(self, handler, path: str, headers=()) -> tuple[int, dict, bytes]:
        return handler.request("GET", path, [("Accept", JSON), *headers,
                                             *identity_headers(OPENAPI_USER)])

    def _fetch_v3(self, handler, backend: _Backend, local: set) -> bool:
        """The backend's v3 index and the documents whose hash changed; True when the
        documents it adds changed."""
        status, _, body = self._get(handler, "/openapi/v3")
        if status == 404:
            paths = {}  # serves no v3 (upstream would convert its v2; not done here)
        elif status != 200:
            raise FetchError(f"failed to retrieve openAPI spec, http error: {status}")
        else:
            paths = json.loads(body).get("paths") or {}
        wanted = {key: (entry or {}).get("serverRelativeURL") or ""
                  for key, entry in paths.items()
                  if key.startswith(V3_PREFIX) and key.split("/")[1] not in local}
        changed = False
        for key in set(backend.v3) - set(wanted):
            del backend.v3[key]
            changed = True
        for key, url in wanted.items():
            if key in backend.v3 and backend.v3_urls.get(key) == url:
                continue
            # Without the hash: a document newer than the index is not redirected.
            path = urllib.parse.urlsplit(url).path or f"/openapi/v3/{key}"
            status, _, data = self._get(handler, path)
            if status == 404:
                changed |= backend.v3.pop(key, None) is not None
                continue
            if status != 200:
                raise FetchError(f"failed to retrieve openAPI spec {key}, http error: "
                                 f"{status}")
            json.loads(data)  # a document, not something else that answered 200
            backend.v3_urls[key] = url
            if backend.v3.get(key) != data:
                backend.v3[key] = data
                changed = True
        return changed

    def _fetch_v2(self, handler, backend: _Backend) -> bool:
        """The backend's v2 document unless its ETag is unchanged; True when it changed."""
        headers = [("If-None-Match", backend.v2_etag)] if backend.v2_etag else []
        status, answer_headers, body = self._get(handler, "/openapi/v2", headers)
        if status == 304:
            return False
        if status == 404:
            # Serves no v2 (upstream skips it gracefully).
            changed, backend.v2, backend.v2_etag = backend.v2 is not None, None, ""
            return changed
        if status != 200:
            raise FetchError(f"failed to retrieve openAPI spec, http error: {status}")
        backend.v2 = filter_by_paths(json.loads(body), V2_PREFIXES)
        backend.v2_etag = answer_headers.get("etag", "")
        return True
