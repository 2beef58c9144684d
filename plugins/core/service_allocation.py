"""Service cluster IPs and node ports: allocated from their ranges, kept in storage.

Upstream (1.32) keeps each range as one bitmap object (``/registry/ranges/serviceips``,
``/registry/ranges/servicenodeports``) and allocates in the service REST storage's
``BeginCreate``/``BeginUpdate`` hooks, reverting on failure and releasing in
``AfterDelete``. Here every allocated member is one key under that prefix
(``/registry/ranges/serviceips/10.0.0.17``) whose value names the owning service: a
member is taken by creating its key, which storage makes atomic across workers and
hosts, so concurrent creates never contend on one hot key and never share a member.

A key whose owner no longer holds the member (the process died between reserving and
writing the service) is reclaimed once it is older than ``STALE_AFTER`` seconds, which
plays the part of upstream's repair controller.
"""

from __future__ import annotations

import calendar
import ipaddress
import json
import random
import time

from marshmallow import ValidationError

from kapiserver import errors
from kapiserver.apimachinery.field_errors import FieldError, new_invalid
from kapiserver.apimachinery.validation import parse_ip_sloppy
from kapiserver.registry.store import decode, now_rfc3339
from kapiserver.storage import Conflict, KeyExists, KeyNotFound

from .service_fields import (NODE_PORT, NONE, SPEC, _slice, is_headless, needs_cluster_ip,
                             needs_health_check, needs_node_port, node_ports, ports_of, spec_of)

IP_PREFIX = "/registry/ranges/serviceips/"
NODE_PORT_PREFIX = "/registry/ranges/servicenodeports/"
#: kube-apiserver's default ``--service-cluster-ip-range`` and ``--service-node-port-range``.
DEFAULT_SERVICE_CIDR = "10.0.0.0/24"
DEFAULT_NODE_PORTS = "30000-32767"
#: upstream's ``maxCIDRBits``: a range holds at most 2^20 addresses.
MAX_CIDR_BITS = 20
#: A reservation whose owner does not hold it is reclaimed after this many seconds.
STALE_AFTER = 60.0
#: The service given the first address of the range (created by upstream's bootstrap).
KUBERNETES_SERVICE = ("default", "kubernetes")

ALREADY_ALLOCATED = "provided IP is already allocated"
PORT_ALREADY_ALLOCATED = "provided port is already allocated"
RANGE_FULL = "range is full"


class AllocationError(Exception):
    """A member could not be allocated; ``str()`` is upstream's error text."""


def parse_cidr(value: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    """``netutils.ParseCIDRSloppy``: host bits are masked off; raise ``ValueError``."""
    address, slash, bits = str(value).partition("/")
    ip = parse_ip_sloppy(address)
    if ip is None or not slash or not (bits.isascii() and bits.isdigit()):
        raise ValueError(f"invalid CIDR address: {value}")
    return ipaddress.ip_network(f"{ip}/{int(bits)}", strict=False)


def _range_offset(size: int, low: int, high: int, step: int) -> int:
    """upstream's ``calculateRangeOffset``: min(max(low, size/step), high); 0 when tiny."""
    if size <= low:
        return 0
    return min(max(low, size // step), high)


# -- ranges ------------------------------------------------------------------------------------

class IPRange:
    """``--service-cluster-ip-range``: the addresses after the network address (and before
    the IPv4 broadcast address), at most 65536 of them for IPv6, as upstream's allocator."""

    def __init__(self, cidr: str):
        self.network = parse_cidr(cidr)
        self.family = "IPv4" if self.network.version == 4 else "IPv6"
        size = self.network.num_addresses
        self.base = int(self.network.network_address) + 1
        self.size = size - 2 if self.network.version == 4 else min(size, 65536) - 1
        # Dynamic allocation prefers the upper part of the range (ServiceIPStaticSubrange).
        self.offset = _range_offset(self.network.num_addresses, 16, 256, 16)
        self.first = self.member(0)

    def __str__(self) -> str:
        return str(self.network)

    def member(self, index: int) -> str:
        return str(ipaddress.ip_address(self.base + index))

    def canonical(self, value: str) -> str:
        """The address as Go's ``net.IP.String()`` writes it (``010.0.0.1`` is ``10.0.0.1``)."""
        ip = parse_ip_sloppy(str(value))
        return str(ip) if ip is not None else str(value)

    def index(self, value: str) -> int | None:
        """The member's index in the range, or None when it is outside."""
        ip = parse_ip_sloppy(str(value))
        if ip is None or ip.version != self.network.version or ip not in self.network:
            return None
        index = int(ip) - self.base
        return index if 0 <= index < self.size else None

    def not_in_range(self, value: str) -> AllocationError:
        return AllocationError(f"the provided IP ({value}) is not in the valid range. The "
                               f"range of valid IPs is {self.network}")

    def reserved_for(self, value: str) -> tuple[str, str] | None:
        # The first address is the kubernetes service's, as kube-apiserver's bootstrap
        # controller takes it before anyone else can.
        return KUBERNETES_SERVICE if value == self.first else None


class PortRange:
    """``--service-node-port-range``: ``30000-32767`` by default."""

    def __init__(self, spec: str):
        low, _, high = spec.partition("-")
        self.low = int(low)
        self.high = int(high) if high else self.low
        self.size = self.high - self.low + 1
        self.base = self.low
        self.offset = _range_offset(self.size, 16, 128, 32)
        self.family = ""

    def __str__(self) -> str:
        return f"{self.low}-{self.high}"

    def canonical(self, value) -> str:
        return str(value)

    def member(self, index: int) -> str:
        return str(self.low + index)

    def index(self, value) -> int | None:
        try:
            port = int(value)
        except (TypeError, ValueError):
            return None
        return port - self.low if self.low <= port <= self.high else None

    def not_in_range(self, value) -> AllocationError:
        return AllocationError(f"provided port is not in the valid range. The range of valid "
                               f"ports is {self}")

    def reserved_for(self, value) -> tuple[str, str] | None:
        return None


# -- one pool in storage ----------------------------------------------------------------------

class Pool:
    """The members of one range, each reserved by a key naming its owner (a service).

    ``holds(owner, member)`` says whether the owner, as stored now, uses the member; it
    decides whether an old reservation is still in force.
    """

    def __init__(self, storage, prefix: str, members, holds, taken: str):
        self.storage = storage
        self.prefix = prefix
        self.range = members
        self.holds = holds
        self.taken = taken

    def _key(self, member: str) -> str:
        return self.prefix + member

    def _record(self, owner) -> bytes:
        namespace, name = owner
        return json.dumps({"owner": {"namespace": namespace, "name": name},
                           "created": now_rfc3339()}, separators=(",", ":")).encode()

    def _in_force(self, kv, member: str) -> bool:
        try:
            record = json.loads(kv.value)
            owner = (record["owner"]["namespace"], record["owner"]["name"])
            created = calendar.timegm(time.strptime(record["created"], "%Y-%m-%dT%H:%M:%SZ"))
        except (ValueError, KeyError, TypeError):
            return False
        if time.time() - created < STALE_AFTER:
            return True  # its owner may be being written right now
        return self.holds(owner, member)

    def check(self, member: str, owner) -> None:
        """Raise ``AllocationError`` unless ``member`` could be allocated to ``owner`` now."""
        member = self.range.canonical(member)
        if self.range.index(member) is None:
            raise self.range.not_in_range(member)
        holder = self.range.reserved_for(member)
        if holder is not None and tuple(owner) != holder:
            raise AllocationError(self.taken)
        try:
            kv = self.storage.get(self._key(member))
        except KeyNotFound:
            return
        if self._in_force(kv, member):
            raise AllocationError(self.taken)

    def allocate(self, member: str, owner) -> None:
        """Reserve ``member`` for ``owner``; raise ``AllocationError`` when it cannot be."""
        self.check(member, owner)
        member = self.range.canonical(member)
        key, record = self._key(member), self._record(owner)
        for _ in range(8):
            try:
                self.storage.create(key, record)
                return
            except KeyExists:
                pass
            try:
                kv = self.storage.get(key)
            except KeyNotFound:
                continue
            if self._in_force(kv, member):
                break
            try:  # reclaim a stale reservation, unless someone else does first
                self.storage.update(key, record, kv.mod_revision)
                return
            except (Conflict, KeyNotFound):
                continue
        raise AllocationError(self.taken)

    def _candidates(self):
        """Indexes in upstream's dynamic order: a random walk of the upper part, then of
        the lower part (which requested members usually come from)."""
        size, offset = self.range.size, min(self.range.offset, self.range.size)
        upper = size - offset
        start = random.randrange(upper) if upper > 0 else 0
        for i in range(upper):
            yield offset + (start + i) % upper
        start = random.randrange(offset) if offset > 0 else 0
        for i in range(offset):
            yield (start + i) % offset

    def allocate_next(self, owner, dry_run: bool = False, exclude=()) -> str:
        """Reserve a free member for ``owner`` (only find one when ``dry_run``)."""
        used = {kv.key[len(self.prefix):] for kv in self.storage.list(self.prefix).items}
        for reclaiming in (False, True):
            for index in self._candidates():
                member = self.range.member(index)
                if ((member in used) != reclaiming or self.range.reserved_for(member)
                        or member in exclude):
                    continue
                try:
                    if dry_run:
                        self.check(member, owner)
                    else:
                        self.allocate(member, owner)
                except AllocationError:
                    continue
                return member
        raise AllocationError(RANGE_FULL)

    def release(self, member: str, owner) -> None:
        """Free ``member`` if ``owner`` still holds its reservation."""
        key = self._key(self.range.canonical(member))
        for _ in range(8):
            try:
                kv = self.storage.get(key)
            except KeyNotFound:
                return
            try:
                record = json.loads(kv.value)
                if (record["owner"]["namespace"], record["owner"]["name"]) != tuple(owner):
                    return
            except (ValueError, KeyError, TypeError):
                pass
            try:
                self.storage.delete(key, kv.mod_revision)
                return
            except KeyNotFound:
                return
            except Conflict:
                continue


class Transaction:
    """What one write takes from the pools: ``revert`` gives it back when the write fails,
    ``commit`` frees what the write gave up. A dry run only checks and picks."""

    def __init__(self, dry_run: bool = False):
        self.dry_run = dry_run
        self.allocated: list[tuple[Pool, str, tuple]] = []
        self.to_release: list[tuple[Pool, str, tuple]] = []
        self.picked: set[tuple[str, str]] = set()

    def allocate(self, pool: Pool, member, owner) -> None:
        member = pool.range.canonical(member)
        if (pool.prefix, member) in self.picked:
            raise AllocationError(pool.taken)  # one write cannot take a member twice
        if self.dry_run:
            pool.check(member, owner)
        else:
            pool.allocate(member, owner)
            self.allocated.append((pool, member, owner))
        self.picked.add((pool.prefix, member))

    def allocate_next(self, pool: Pool, owner) -> str:
        exclude = {m for prefix, m in self.picked if prefix == pool.prefix}
        member = pool.allocate_next(owner, self.dry_run, exclude)
        if not self.dry_run:
            self.allocated.append((pool, member, owner))
        self.picked.add((pool.prefix, member))
        return member

    def release_later(self, pool: Pool, member, owner) -> None:
        if not self.dry_run:
            self.to_release.append((pool, pool.range.canonical(member), owner))

    def revert(self) -> None:
        for pool, member, owner in reversed(self.allocated):
            pool.release(member, owner)
        self.allocated = []

    def commit(self) -> None:
        for pool, member, owner in self.to_release:
            pool.release(member, owner)
        self.to_release = []


# -- what a service write takes (upstream's ``Allocators``) ------------------------------------

def _invalid(name: str, error: FieldError) -> errors.Invalid:
    return new_invalid("Service", "", name, [error])


def _should_allocate_node_ports(svc: dict) -> bool:
    """``shouldAllocateNodePorts``: NodePort always; LoadBalancer unless told not to."""
    spec = spec_of(svc)
    return spec.get("type") == NODE_PORT or spec.get("allocateLoadBalancerNodePorts") is not False


def _int(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class ServiceAllocators:
    """The cluster IP and node port pools, and what creating, updating or deleting a
    service takes from them or gives back (``pkg/registry/core/service/storage/alloc.go``)."""

    def __init__(self, storage, spec, ip_range: str = DEFAULT_SERVICE_CIDR,
                 node_port_range: str = DEFAULT_NODE_PORTS):
        self.storage = storage
        self.spec = spec  # the services' ResourceSpec: where owners are read from
        self.ip_range = IPRange(ip_range)
        self.family = self.ip_range.family
        self.ips = Pool(storage, IP_PREFIX, self.ip_range, self._holds_ip, ALREADY_ALLOCATED)
        self.node_ports = Pool(storage, NODE_PORT_PREFIX, PortRange(node_port_range),
                               self._holds_node_port, PORT_ALREADY_ALLOCATED)

    def _stored(self, owner) -> dict | None:
        try:
            kv = self.storage.get(self.spec.key(*owner))
        except KeyNotFound:
            return None
        return decode(kv.value, kv.mod_revision)

    def _holds_ip(self, owner, ip: str) -> bool:
        svc = self._stored(owner)
        return svc is not None and needs_cluster_ip(svc) and ip in {
            self.ip_range.canonical(v) for v in spec_of(svc).get("clusterIPs") or []}

    def _holds_node_port(self, owner, port: str) -> bool:
        svc = self._stored(owner)
        return svc is not None and port in {str(p) for p in node_ports(svc)}

    # -- create --

    def allocate_create(self, svc: dict, owner, dry_run: bool = False) -> Transaction:
        """Allocate the cluster IPs, node ports and health check port ``svc`` needs."""
        txn = Transaction(dry_run)
        try:
            self._cluster_ips(svc, owner, txn)
            if needs_node_port(svc):
                self._init_node_ports(svc, owner, txn)
            if needs_health_check(svc):
                self._health_check_port(svc, owner, txn)
        except BaseException:
            txn.revert()
            raise
        return txn

    def _cluster_ips(self, svc: dict, owner, txn: Transaction) -> None:
        spec = spec_of(svc)
        ips = list(spec.get("clusterIPs") or [])
        if not needs_cluster_ip(svc) or ips[:1] == [NONE]:
            return
        for i, family in enumerate(spec.get("ipFamilies") or [self.family]):
            if family != self.family:
                continue  # refused by init_ip_family_fields already
            if i >= len(ips):
                ips.append("")
            if not ips[i]:
                try:
                    ips[i] = txn.allocate_next(self.ips, owner)
                except AllocationError as err:
                    raise errors.InternalError.wrap(
                        f"failed to allocate a serviceIP: {err}") from None
                continue
            try:
                txn.allocate(self.ips, ips[i], owner)
            except AllocationError as err:
                raise _invalid(owner[1], FieldError.invalid(
                    SPEC.child("clusterIPs"), _slice(ips),
                    f"failed to allocate IP {ips[i]}: {err}")) from None
        spec["clusterIPs"] = ips
        spec["clusterIP"] = ips[0]

    def _node_port(self, port: int, path, owner, txn: Transaction) -> None:
        try:
            txn.allocate(self.node_ports, port, owner)
        except AllocationError as err:
            raise _invalid(owner[1], FieldError.invalid(path, port, str(err))) from None

    def _next_node_port(self, owner, txn: Transaction) -> int:
        try:
            return int(txn.allocate_next(self.node_ports, owner))
        except AllocationError as err:
            raise errors.InternalError.wrap(f"failed to allocate a nodePort: {err}") from None

    def _init_node_ports(self, svc: dict, owner, txn: Transaction) -> None:
        """``initNodePorts``: ports sharing a port number (TCP and UDP) share a node port."""
        ports = ports_of(svc)
        by_number: dict[int, int] = {}
        for i, port in enumerate(ports):
            node_port = _int(port.get("nodePort"))
            if not node_port and not _should_allocate_node_ports(svc):
                continue  # don't allocate new ports, but respect specific requests
            number = _int(port.get("port"))
            allocated = by_number.get(number, 0)
            path = SPEC.child("ports").index(i).child("nodePort")
            if not allocated:
                requested = next((_int(p.get("nodePort")) for p in ports
                                  if _int(p.get("port")) == number and _int(p.get("nodePort"))),
                                 0)
                if requested:
                    self._node_port(requested, path, owner, txn)
                else:
                    requested = self._next_node_port(owner, txn)
                port["nodePort"] = by_number[number] = requested
            elif node_port != allocated:
                if node_port:
                    self._node_port(node_port, path, owner, txn)
                else:
                    port["nodePort"] = allocated

    def _health_check_port(self, svc: dict, owner, txn: Transaction) -> None:
        spec = spec_of(svc)
        requested = _int(spec.get("healthCheckNodePort"))
        try:
            if requested:
                txn.allocate(self.node_ports, requested, owner)
            else:
                spec["healthCheckNodePort"] = int(txn.allocate_next(self.node_ports, owner))
        except AllocationError as err:
            what = f"requested HealthCheck NodePort {requested}" if requested else \
                "a HealthCheck NodePort 0"
            raise errors.InternalError.wrap(f"failed to allocate {what}: {err}") from None

    # -- update --

    def allocate_update(self, svc: dict, old: dict, owner, dry_run: bool = False) -> Transaction:
        """Allocate what a type change needs; release, on commit, what it gives up."""
        txn = Transaction(dry_run)
        try:
            if not needs_cluster_ip(old) and needs_cluster_ip(svc):
                self._cluster_ips(svc, owner, txn)
            elif needs_cluster_ip(old) and not needs_cluster_ip(svc) and not is_headless(old):
                for ip in spec_of(old).get("clusterIPs") or []:
                    txn.release_later(self.ips, ip, owner)
            if needs_node_port(old) and not needs_node_port(svc):
                for port in node_ports(old):
                    txn.release_later(self.node_ports, port, owner)
            if needs_node_port(svc):
                self._update_node_ports(svc, old, owner, txn)
            if not needs_health_check(old) and needs_health_check(svc):
                self._health_check_port(svc, owner, txn)
            elif needs_health_check(old) and not needs_health_check(svc):
                txn.release_later(self.node_ports, spec_of(old).get("healthCheckNodePort"),
                                  owner)
        except BaseException:
            txn.revert()
            raise
        return txn

    def _update_node_ports(self, svc: dict, old: dict, owner, txn: Transaction) -> None:
        held = set(node_ports(old))
        taken = set()
        for i, port in enumerate(ports_of(svc)):
            node_port = _int(port.get("nodePort"))
            if not node_port and not _should_allocate_node_ports(svc):
                continue
            if not node_port:
                port["nodePort"] = self._next_node_port(owner, txn)
            elif node_port not in held and node_port not in taken:
                self._node_port(node_port, SPEC.child("ports").index(i).child("nodePort"),
                                owner, txn)
                taken.add(node_port)
        kept = set(node_ports(svc))
        for port in held - kept:
            txn.release_later(self.node_ports, port, owner)

    # -- delete --

    def release_all(self, svc: dict, owner) -> None:
        """Give back everything a deleted service held (upstream's ``AfterDelete``)."""
        if needs_cluster_ip(svc):
            for ip in spec_of(svc).get("clusterIPs") or []:
                if ip != NONE:
                    self.ips.release(ip, owner)
        for port in node_ports(svc):
            self.node_ports.release(str(port), owner)


# -- options and installation ------------------------------------------------------------------

def validate_service_cidr(value) -> None:
    """marshmallow validator of ``--service-cluster-ip-range`` (one CIDR, upstream's limits)."""
    try:
        network = parse_cidr(value)
    except (ValueError, TypeError):
        raise ValidationError(f"{value!r} is not a valid CIDR (e.g. 10.0.0.0/24 or "
                              "fd00::/108)") from None
    bits = network.max_prefixlen
    if bits - network.prefixlen > MAX_CIDR_BITS:
        raise ValidationError(f"specified --service-cluster-ip-range is too large; for {bits}-"
                              f"bit addresses, the mask must be >= {bits - MAX_CIDR_BITS}")
    if IPRange(str(network)).size < 2:
        raise ValidationError("specified --service-cluster-ip-range is too small; it must hold "
                              "at least 2 addresses besides the network address")


def validate_node_port_range(value) -> None:
    """marshmallow validator of ``--service-node-port-range`` (``low-high``)."""
    low, dash, high = str(value).partition("-")
    try:
        ports = (int(low), int(high) if dash else int(low))
    except ValueError:
        ports = None
    if ports is None or not 1 <= ports[0] <= ports[1] <= 65535:
        raise ValidationError(f"{value!r} is not a valid port range (e.g. 30000-32767)")
