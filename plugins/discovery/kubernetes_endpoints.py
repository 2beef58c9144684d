"""The endpoints of the ``default/kubernetes`` Service: where workloads reach the API server.

Upstream's endpoint reconciler (``controlplane/reconcilers``, through its
``EndpointsAdapter``) keeps an Endpoints object and, beside it, an EndpointSlice, both named
``kubernetes`` in ``default``, listing the addresses the servers advertise and port
``https`` on their secure port. ``--endpoint-reconciler-type``:

* ``lease`` (the default, upstream's): every instance keeps a lease of its own,
  ``/registry/masterleases/<ip>`` written with a TTL of 15 s and renewed every 10 s, and
  writes the Endpoints and the slice listing every address with a live lease; an instance
  that stops removes its lease at shutdown, one that dies drops out when its lease
  expires. Several instances on one etcd are so listed together.
* ``master-count`` (one server): this server's address alone, replacing what was there.
* ``none``: nothing is written.

The advertised address is ``--advertise-address``, else ``--bind-address``, or, when that
is unspecified or loopback (the default), the address of the interface holding the
default route, as kube-apiserver picks its ``--advertise-address``; endpoints may not list
a loopback address.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import socket
import threading
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


def _ips(ips) -> list[str]:
    return [ips] if isinstance(ips, str) else list(ips)


def desired_endpoints(ips, port: int) -> dict:
    """The Endpoints listing ``ips`` (one address or several, in the order given)."""
    return {"apiVersion": "v1", "kind": "Endpoints",
            "metadata": {"name": NAME, "namespace": NAMESPACE,
                         "labels": {SKIP_MIRROR_LABEL: "true"}},
            "subsets": [{"addresses": [{"ip": ip} for ip in _ips(ips)],
                         "ports": [{"name": PORT_NAME, "port": port, "protocol": "TCP"}]}]}


def desired_slice(ips, port: int) -> dict:
    """The EndpointSlice of ``ips``: one endpoint each, of the first one's family."""
    ips = _ips(ips)
    version = ipaddress.ip_address(ips[0]).version
    family = "IPv6" if version == 6 else "IPv4"
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": NAME, "namespace": NAMESPACE,
                         "labels": {SERVICE_NAME_LABEL: NAME}},
            "addressType": family,
            "endpoints": [{"addresses": [ip], "conditions": {"ready": True}}
                          for ip in ips if ipaddress.ip_address(ip).version == version],
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


# -- leases (upstream's "lease" reconciler) -------------------------------------------------------

#: Where each instance's lease lives (upstream's ``masterleases``), and its timing:
#: ``DefaultEndpointReconcilerTTL`` and ``DefaultEndpointReconcilerInterval``.
MASTER_LEASES = "/registry/masterleases/"
LEASE_TTL = 15.0
RECONCILE_INTERVAL = 10.0
RECONCILER_TYPES = ("lease", "master-count", "none")


def _lease_value(ip: str) -> bytes:
    # What upstream keeps there: an Endpoints object named by the address.
    return json.dumps({"kind": "Endpoints", "apiVersion": "v1",
                       "metadata": {"name": ip, "creationTimestamp": None},
                       "subsets": [{"addresses": [{"ip": ip}]}]},
                      separators=(",", ":")).encode()


def update_lease(storage, ip: str, ttl: float = LEASE_TTL) -> None:
    """Write (or renew) ``ip``'s lease, to expire ``ttl`` seconds from now."""
    from kapiserver.storage import Conflict, KeyExists, KeyNotFound

    key = MASTER_LEASES + ip
    for _ in range(5):
        try:
            storage.update(key, _lease_value(ip), 0, ttl=ttl)
            return
        except KeyNotFound:
            try:
                storage.create(key, _lease_value(ip), ttl=ttl)
                return
            except KeyExists:
                continue  # another worker of this instance wrote it first
        except Conflict:
            continue


def remove_lease(storage, ip: str) -> None:
    from kapiserver.storage import KeyNotFound

    try:
        storage.delete(MASTER_LEASES + ip)
    except KeyNotFound:
        pass


def live_addresses(storage) -> list[str]:
    """The addresses with a live lease, sorted as upstream sorts them (as strings); ones an
    Endpoints may not hold (a kube-apiserver on loopback wrote ``127.0.0.1``) are left out."""
    found = []
    for kv in storage.list(MASTER_LEASES).items:
        text = kv.key[len(MASTER_LEASES):]
        try:
            if _usable(ipaddress.ip_address(text)):
                found.append(text)
        except ValueError:
            continue
    return sorted(found)


def _write(server, ips: list[str], port: int, attempts: int) -> None:
    _sync(server.registries[("", "endpoints")], desired_endpoints(ips, port), attempts)
    slices = server.registries[("discovery.k8s.io", "endpointslices")]
    _remove_other_slices(slices)
    _sync(slices, desired_slice(ips, port), attempts)


def reconcile(server, ip: str, port: int, attempts: int = 50, leaving: bool = False) -> None:
    """Renew (or, ``leaving``, remove) this instance's lease, then list every live one."""
    if leaving:
        remove_lease(server.storage, ip)
    else:
        update_lease(server.storage, ip)
    ips = live_addresses(server.storage)
    if not leaving and ip not in ips:
        ips = sorted(ips + [ip])
    if ips:
        _write(server, ips, port, attempts)


def _reconcile_loop(server, ip: str, port: int) -> None:
    stopping = server.stopping
    while not stopping.wait(RECONCILE_INTERVAL):
        try:
            reconcile(server, ip, port)
        except Exception:  # retried at the next tick
            log.exception("reconciling the kubernetes Service's endpoints failed")
    try:  # shutting down: this instance leaves the endpoints now, not at lease expiry
        reconcile(server, ip, port, attempts=5, leaving=True)
    except Exception:
        log.warning("could not remove this server from the kubernetes Service's endpoints",
                    exc_info=True)


def ensure_kubernetes_endpoints(server, attempts: int = 50) -> None:
    """Write the Endpoints and the EndpointSlice (post-start hook; every worker runs it),
    and with the ``lease`` reconciler keep them current until shutdown."""
    config = server.config
    kind = getattr(config, "endpoint_reconciler_type", "lease")
    if kind == "none":
        return
    ip = getattr(config, "advertise_address", "") or advertise_address(config.bind_address)
    if ip is None:
        log.warning("no address to advertise for the kubernetes Service (bind address %s, no "
                    "default route): its Endpoints and EndpointSlice are not written",
                    config.bind_address)
        return
    port = config.secure_port
    if kind == "master-count":
        _write(server, [ip], port, attempts)
        return
    reconcile(server, ip, port, attempts)
    threading.Thread(target=_reconcile_loop, args=(server, ip, port),
                     name="kubernetes-endpoints", daemon=True).start()
