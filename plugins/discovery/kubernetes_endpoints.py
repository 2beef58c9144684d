"""The endpoints of the ``default/kubernetes`` Service: where workloads reach the API server.

Upstream's endpoint reconciler (``controlplane/reconcilers``, through its
``EndpointsAdapter``) keeps an Endpoints object and, beside it, an EndpointSlice, both named
``kubernetes`` in ``default``, listing the address the server advertises and port ``https``
on its secure port. This is the reconciler for one server (``master-count`` with a count of
one): at start it writes this server's address and port, replacing what was there, and
removes other slices labelled as the ``kubernetes`` Service's.

The advertised address is ``--bind-address``, or, when that is unspecified or loopback (the
default), the address of the interface holding the default route, as kube-apiserver picks
its ``--advertise-address``; endpoints may not list a loopback address.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import time

from kapiserver import errors

NAMESPACE, NAME = "default", "kubernetes"
PORT_NAME = "https"
MANAGER = "kube-apiserver"
#: ``discovery.LabelServiceName`` and ``discovery.LabelSkipMirror``.
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
SKIP_MIRROR_LABEL = "endpointslice.kubernetes.io/skip-mirror"
#: Where a datagram socket is pointed to learn the default route's source address (no
#: packet is sent): public unicast addresses, which only the default route reaches.
_PROBES = {4: "8.8.8.8", 6: "2001:4860:4860::8888"}

log = logging.getLogger(__name__)


def _usable(ip) -> bool:
    return not (ip.is_unspecified or ip.is_loopback or ip.is_link_local or ip.is_multicast)


def default_route_address(family: int = 4) -> str | None:
    """The source address the kernel picks for the default route, or None without one."""
    kind = socket.AF_INET if family == 4 else socket.AF_INET6
    try:
        with socket.socket(kind, socket.SOCK_DGRAM) as probe:
            probe.connect((_PROBES[family], 9))
            address = probe.getsockname()[0]
    except OSError:
        return None
    return address if _usable(ipaddress.ip_address(address)) else None


def advertise_address(bind_address: str) -> str | None:
    """The address this server advertises for ``bind_address`` (see the module docstring)."""
    ip = ipaddress.ip_address(bind_address)
    if _usable(ip):
        return str(ip)
    return default_route_address(ip.version) or default_route_address(6 if ip.version == 4
                                                                     else 4)


def desired_endpoints(ip: str, port: int) -> dict:
    return {"apiVersion": "v1", "kind": "Endpoints",
            "metadata": {"name": NAME, "namespace": NAMESPACE,
                         "labels": {SKIP_MIRROR_LABEL: "true"}},
            "subsets": [{"addresses": [{"ip": ip}],
                         "ports": [{"name": PORT_NAME, "port": port, "protocol": "TCP"}]}]}


def desired_slice(ip: str, port: int) -> dict:
    family = "IPv6" if ipaddress.ip_address(ip).version == 6 else "IPv4"
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": NAME, "namespace": NAMESPACE,
                         "labels": {SERVICE_NAME_LABEL: NAME}},
            "addressType": family,
            "endpoints": [{"addresses": [ip], "conditions": {"ready": True}}],
            "ports": [{"name": PORT_NAME, "port": port, "protocol": "TCP"}]}


#: What the reconciler owns in each object, beside the labels (``EndpointsAdapter.Sync``
#: compares these and rewrites them).
_OWNED = {"Endpoints": ("subsets",), "EndpointSlice": ("addressType", "endpoints", "ports")}


def _needs_sync(current: dict, desired: dict) -> bool:
    if (current.get("metadata") or {}).get("labels") != desired["metadata"]["labels"]:
        return True
    return any(current.get(key) != desired[key] for key in _OWNED[desired["kind"]])


def _sync(registry, desired: dict, attempts: int) -> None:
    """Create ``desired``, or rewrite what the reconciler owns of the stored object."""
    manage = registry.field_manager(MANAGER)

    def mend(obj: dict) -> dict:
        obj.setdefault("metadata", {})["labels"] = dict(desired["metadata"]["labels"])
        for key in _OWNED[desired["kind"]]:
            obj[key] = desired[key]
        return obj

    for attempt in range(attempts):
        try:
            try:
                current = registry.get(NAMESPACE, NAME)
            except errors.NotFound:
                registry.create(mend({"apiVersion": desired["apiVersion"],
                                      "kind": desired["kind"],
                                      "metadata": {"name": NAME, "namespace": NAMESPACE}}),
                                NAMESPACE, manage=manage)
                return
            if current.get("addressType", desired.get("addressType")) != \
                    desired.get("addressType"):
                # A slice's address type cannot change: replace the slice.
                registry.delete(NAMESPACE, NAME)
                continue
            if _needs_sync(current, desired):
                registry.guaranteed_update(NAMESPACE, NAME, mend, manage=manage)
            return
        except (errors.AlreadyExists, errors.Conflict, errors.NotFound):
            # Another worker wrote it meanwhile: look again.
            if attempt == attempts - 1:
                raise
            time.sleep(0.02)


def _remove_other_slices(slices) -> None:
    """Slices labelled as the ``kubernetes`` Service's other than ours go (a family the
    server no longer advertises)."""
    from kapiserver.apimachinery.labels import selector_from_set

    listed = slices.list(NAMESPACE, selector_from_set({SERVICE_NAME_LABEL: NAME}))
    for item in listed["items"]:
        name = item["metadata"]["name"]
        if name != NAME:
            try:
                slices.delete(NAMESPACE, name)
            except errors.NotFound:
                pass


def ensure_kubernetes_endpoints(server, attempts: int = 50) -> None:
    """Write the Endpoints and the EndpointSlice (post-start hook; every worker runs it)."""
    ip = advertise_address(server.config.bind_address)
    if ip is None:
        log.warning("no address to advertise for the kubernetes Service (bind address %s, no "
                    "default route): its Endpoints and EndpointSlice are not written",
                    server.config.bind_address)
        return
    port = server.config.secure_port
    _sync(server.registries[("", "endpoints")], desired_endpoints(ip, port), attempts)
    slices = server.registries[("discovery.k8s.io", "endpointslices")]
    _remove_other_slices(slices)
    _sync(slices, desired_slice(ip, port), attempts)
