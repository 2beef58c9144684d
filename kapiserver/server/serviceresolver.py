"""Where a Service's traffic goes, for the server's own clients (aggregator, webhooks).

As kube-apiserver with ``--enable-aggregator-routing``: a Service is reached through an
address of its Endpoints, on the port whose name matches the Service port's; an
``ExternalName`` Service is reached at its external name (upstream's cluster resolver).
kapiserver has no cluster network, so cluster IPs are never dialled. ``LookupError``
messages are the availability controller's (``service/x in "ns" is not present`` …).
"""

from __future__ import annotations

from .. import errors


def resolve_service(server, namespace: str, name: str, port: int) -> tuple[str, int]:
    """``(host, port)`` to dial for ``port`` of Service ``namespace/name``."""
    services = server.registries.get(("", "services"))
    endpoints = server.registries.get(("", "endpoints"))
    if services is None or endpoints is None:
        raise LookupError(f'service/{name} in "{namespace}" is not present')
    try:
        service = services.get(namespace, name)
    except errors.NotFound:
        raise LookupError(f'service/{name} in "{namespace}" is not present') from None
    spec = service.get("spec") or {}
    if spec.get("type") == "ExternalName":
        return spec.get("externalName", ""), port
    port_name = None
    for entry in spec.get("ports") or []:
        if entry.get("port") == port:
            port_name = entry.get("name", "")
            break
    if port_name is None:
        raise LookupError(f'service/{name} in "{namespace}" is not listening on port {port}')
    try:
        found = endpoints.get(namespace, name)
    except errors.NotFound:
        raise LookupError(f'cannot find endpoints for service/{name} in "{namespace}"') \
            from None
    for subset in found.get("subsets") or []:
        addresses = subset.get("addresses") or []
        for entry in subset.get("ports") or []:
            if entry.get("name", "") == port_name and addresses:
                return addresses[0]["ip"], entry["port"]
    raise LookupError(f'endpoints for service/{name} in "{namespace}" have no addresses with '
                      f'port name "{port_name}"')
