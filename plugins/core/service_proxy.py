"""``services/proxy``: requests passed on to one of a service's endpoints (upstream's
``ProxyREST`` over the service registry's ``ResourceLocation``).

The name is ``svc``, ``svc:port`` or ``scheme:svc:port`` (the port a service port's number
or name). A port number is turned into the service port's name; the service's
``Endpoints`` are then searched, from a random subset and address, for a ready address
behind a port of that name whose target is a pod of the namespace still holding that IP.
No service port of that number, no endpoints, or no such address: 503 as upstream words it.
"""

from __future__ import annotations

import dataclasses
import logging
import random

from kapiserver import errors

from .pods.connect import ProxyHandler, split_scheme_name_port

log = logging.getLogger(__name__)

#: ``proxyMethods`` of upstream's service ``ProxyREST``.
CONNECT_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
#: What discovery lists for them (``toDiscoveryKubeVerb``, sorted).
VERBS = ("create", "delete", "get", "patch", "update")


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _dicts(value) -> list[dict]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


class ServiceProxyHandler:
    """Serves ``services/{name}/proxy[/path]``."""

    connect_methods = CONNECT_METHODS
    connect_subpath = True

    def __init__(self, server, services_spec):
        self.server = server
        self.verbs = VERBS
        #: What discovery says of ``services/proxy``: ``ServiceProxyOptions``.
        self.spec = dataclasses.replace(services_spec, kind="ServiceProxyOptions",
                                        verbs=VERBS, short_names=(), categories=())

    def _store(self, resource: str):
        return self.server.registries[("", resource)]

    def serve(self, ctx):
        info = ctx.info
        if info.verb not in self.verbs:
            raise errors.MethodNotAllowed()
        from kapiserver.endpoints.connect import admit_connect

        admit_connect(ctx, self.spec, "/".join(info.parts[3:]))
        parsed = split_scheme_name_port(info.name)
        if parsed is None:
            raise errors.BadRequest(f"invalid service request {errors.go_quote(info.name)}")
        scheme, name, port = parsed
        host, target_port = self.resource_location(info.namespace, info.name, name, port)
        path = "/" + "/".join(info.parts[3:]) if len(info.parts) > 3 else "/"
        if ctx.request.path.endswith("/") and not path.endswith("/"):
            path += "/"
        query = ctx.request.query_string.decode()
        return ProxyHandler.forward(ctx, scheme or "http", host, str(target_port),
                                    path + (f"?{query}" if query else ""))

    def resource_location(self, namespace: str, id_: str, name: str, port: str):
        """``ResourceLocation``: the ``(ip, port)`` to send the request to."""
        if port.isdigit() or (port[:1] in "+-" and port[1:].isdigit()):
            number = int(port)
            service = self._store("services").get(namespace, name)
            for service_port in _dicts(_dict(service.get("spec")).get("ports")):
                if service_port.get("port") == number:
                    port = service_port.get("name") or ""
                    break
            else:
                raise errors.ServiceUnavailable(
                    f"no service port {number} found for service {errors.go_quote(name)}")
        endpoints = self._store("endpoints").get(namespace, name)
        subsets = _dicts(endpoints.get("subsets"))
        if not subsets:
            raise errors.ServiceUnavailable(
                f"no endpoints available for service {errors.go_quote(name)}")
        first = random.randrange(len(subsets))
        for i in range(len(subsets)):
            subset = subsets[(first + i) % len(subsets)]
            addresses = _dicts(subset.get("addresses"))
            if not addresses:
                continue
            for subset_port in _dicts(subset.get("ports")):
                if (subset_port.get("name") or "") != port:
                    continue
                start = random.randrange(len(addresses))
                for j in range(len(addresses)):
                    address = addresses[(start + j) % len(addresses)]
                    problem = self._invalid_address(namespace, address)
                    if problem:
                        log.info("Address %s isn't valid (%s)", address, problem)
                        continue
                    return address.get("ip", ""), subset_port.get("port")
                log.info("Failed to find a valid address, skipping a subset of %s/%s",
                         namespace, name)
        raise errors.ServiceUnavailable(
            f"no endpoints available for service {errors.go_quote(id_)}")

    def _invalid_address(self, namespace: str, address: dict) -> str:
        """``isValidAddress``: why ``address`` is no pod of ``namespace`` with its IP."""
        target = address.get("targetRef")
        if not isinstance(target, dict):
            return "Address has no target ref"
        if target.get("namespace") != namespace:
            return "Address namespace doesn't match context namespace"
        try:
            pod = self._store("pods").get(namespace, target.get("name") or "")
        except errors.StatusError as err:
            return str(err)
        ips = [ip.get("ip") for ip in _dicts(_dict(pod.get("status")).get("podIPs"))]
        if address.get("ip") not in ips:
            return "pod ip(s) doesn't match endpoint ip"
        return ""
