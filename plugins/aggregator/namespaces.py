"""AggregatedContent: the extension servers' namespaced objects, for the namespace controller.

Upstream's namespace controller discovers every group the server offers, aggregated ones
included, and deletes a terminating namespace's objects through the API; for an
extension server's resources that means through the aggregator's proxy. This provider
(registered with ``server.add_namespace_content``) does the same from the elected worker:

* **discovery** is the backends' aggregated discovery each worker already keeps
  (``APIServiceRegistry.remote_resources``): for each group its namespaced resources, each
  from the first version in priority order that has it (client-go's
  ``ServerPreferredNamespacedResources``). An APIService that is unavailable, or whose
  backend has not answered discovery yet, is a failed group version, as aggregated
  discovery marks it ``Stale`` — and the namespace waits for it.
* **requests** go through the APIService's proxy with the identity of kube-controller-
  manager's namespace controller, ``system:serviceaccount:kube-system:namespace-controller``
  (upstream runs it with that service account's credentials; the bootstrap policy's
  ``system:controller:namespace-controller`` ClusterRole lets it list, delete and
  deletecollection every resource, so an extension server that asks the main server's RBAC
  — delegated authorization — allows what it would allow upstream's controller), with
  background propagation as upstream's deleter asks.
"""

from __future__ import annotations

import http.client
import json

from kapiserver import errors
from kapiserver.apimachinery.versions import kube_version_key
from kapiserver.authentication import UserInfo
from kapiserver.controllers.namespace_content import (ContentError, ContentResource,
                                                      NamespaceContent, stale_group_version)

from .apiservices import is_available, is_local
from .proxy import identity_headers

#: The service account upstream's namespace controller runs as, with the groups a
#: service-account token gives.
NAMESPACE_CONTROLLER = UserInfo(
    "system:serviceaccount:kube-system:namespace-controller",
    groups=("system:serviceaccounts", "system:serviceaccounts:kube-system",
            "system:authenticated"))
DELETE_OPTIONS = json.dumps({"kind": "DeleteOptions", "apiVersion": "v1",
                             "propagationPolicy": "Background"}).encode()
JSON = "application/json"
#: How long one request to a backend may take.
TIMEOUT = 30.0


class AggregatedContent(NamespaceContent):
    """The namespaced resources of the APIServices ``registry`` proxies (module docstring)."""

    name = "aggregator"

    def __init__(self, registry):
        self.registry = registry

    def discover(self):
        by_group: dict[str, list[dict]] = {}
        for apiservice in list(self.registry.apiservices.values()):
            if not is_local(apiservice):
                group = (apiservice.get("spec") or {}).get("group") or ""
                by_group.setdefault(group, []).append(apiservice)
        resources, failures = [], {}
        for group, apiservices in sorted(by_group.items()):
            seen = set()
            apiservices.sort(key=lambda a: (-a["spec"].get("versionPriority", 0),
                                            kube_version_key(a["spec"].get("version") or "")))
            for apiservice in apiservices:
                version = apiservice["spec"].get("version") or ""
                entries = self.registry.remote_resources.get(apiservice["metadata"]["name"])
                if not is_available(apiservice) or entries is None:
                    failures[f"{group}/{version}"] = stale_group_version(f"{group}/{version}")
                    continue
                for entry in entries:
                    name = entry.get("resource") or ""
                    if entry.get("scope") != "Namespaced" or not name or name in seen:
                        continue
                    seen.add(name)
                    resources.append(ContentResource(group, version, name,
                                                     frozenset(entry.get("verbs") or ())))
        return resources, failures

    # -- requests through the proxy -----------------------------------------------------------

    def _call(self, resource: ContentResource, method: str, path: str,
              body: bytes | None = None) -> tuple[int, bytes]:
        apiservice = self.registry.apiservices.get(f"{resource.version}.{resource.group}")
        if apiservice is None or is_local(apiservice) or not is_available(apiservice):
            raise ContentError("the server is currently unable to handle the request")
        headers = [("Accept", JSON), *identity_headers(NAMESPACE_CONTROLLER)]
        if body is not None:
            headers.append(("Content-Type", JSON))
        try:
            handler = self.registry.proxy(apiservice)
            status, _, data = handler.request(method, path, headers, body, timeout=TIMEOUT)
        except errors.StatusError as err:
            raise ContentError(err.message) from None
        except (OSError, http.client.HTTPException) as err:
            raise ContentError(f"error trying to reach service: {err}") from None
        return status, data

    @staticmethod
    def _collection(resource: ContentResource, namespace: str) -> str:
        return (f"/apis/{resource.group}/{resource.version}/namespaces/{namespace}/"
                f"{resource.resource}")

    def delete_collection(self, resource, namespace):
        status, data = self._call(resource, "DELETE", self._collection(resource, namespace),
                                  DELETE_OPTIONS)
        if status in (404, 405):
            return False  # upstream: not supported, delete each
        if status >= 300:
            raise ContentError(_error_text(status, data))
        return True

    def list(self, resource, namespace):
        status, data = self._call(resource, "GET", self._collection(resource, namespace))
        if status in (404, 405):
            return None
        if status >= 300:
            raise ContentError(_error_text(status, data))
        try:
            return json.loads(data).get("items") or []
        except (ValueError, AttributeError):
            raise ContentError("the server returned an object that is not a list") from None

    def delete(self, resource, namespace, name):
        path = f"{self._collection(resource, namespace)}/{name}"
        status, data = self._call(resource, "DELETE", path, DELETE_OPTIONS)
        if status >= 300 and status not in (404, 405):
            raise ContentError(_error_text(status, data))


def _error_text(status: int, data: bytes) -> str:
    """What client-go reports for an error answer: the ``Status`` message, else its words
    for a bare status code."""
    try:
        body = json.loads(data)
    except ValueError:
        body = None
    if isinstance(body, dict) and body.get("kind") == "Status" and body.get("message"):
        return body["message"]
    if status == 503:
        return "the server is currently unable to handle the request"
    return (f"the server responded with the status code {status} but did not return more "
            "information")
