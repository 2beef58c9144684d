"""Unit tests of service cluster IP and node port allocation, on a real SQLite store."""

import json
import threading

import pytest

from kapiserver.registry.store import encode
from kapiserver.storage.sqlite import SQLiteStore
from kapiserver_plugins.core import service_allocation as alloc
from kapiserver_plugins.core.service_allocation import (AllocationError, IPRange, Pool,
                                                        PortRange, ServiceAllocators,
                                                        Transaction, validate_node_port_range,
                                                        validate_service_cidr)
from kapiserver_plugins.core.services import SERVICES
from marshmallow import ValidationError

OWNER = ("default", "web")


@pytest.fixture
def store(tmp_path):
    s = SQLiteStore(str(tmp_path / "kapiserver.db"))
    yield s
    s.close()


def pool(store, cidr="10.0.0.0/24", holds=lambda owner, member: True):
    return Pool(store, alloc.IP_PREFIX, IPRange(cidr), holds, alloc.ALREADY_ALLOCATED)


# -- ranges ---------------------------------------------------------------------------------

def test_ip_range_is_upstreams():
    ipv4 = IPRange("10.0.0.0/24")
    assert (ipv4.first, ipv4.size, ipv4.offset, ipv4.family) == ("10.0.0.1", 254, 16, "IPv4")
    assert ipv4.index("10.0.0.254") == 253
    assert ipv4.index("10.0.0.255") is None and ipv4.index("10.0.0.0") is None
    assert ipv4.index("010.0.0.5") == 4 and ipv4.canonical("010.0.0.5") == "10.0.0.5"
    assert ipv4.index("fd00::1") is None and ipv4.index("nope") is None
    small = IPRange("10.96.0.5/28")  # host bits are masked, as ParseCIDR does
    assert (str(small), small.size, small.offset) == ("10.96.0.0/28", 14, 0)
    ipv6 = IPRange("fd00::/64")
    assert (ipv6.size, ipv6.offset, ipv6.family) == (65535, 256, "IPv6")
    assert str(ipv4.not_in_range("1.2.3.4")) == (
        "the provided IP (1.2.3.4) is not in the valid range. The range of valid IPs is "
        "10.0.0.0/24")


def test_port_range():
    ports = PortRange("30000-32767")
    assert (ports.size, ports.offset, ports.index(30000), ports.index(29999)) == (2768, 86, 0,
                                                                                  None)
    assert str(ports.not_in_range(80)) == ("provided port is not in the valid range. The range "
                                           "of valid ports is 30000-32767")


@pytest.mark.parametrize("value, message", [
    ("10.0.0.0/8", "specified --service-cluster-ip-range is too large; for 32-bit addresses, "
                   "the mask must be >= 12"),
    ("fd00::/64", "specified --service-cluster-ip-range is too large; for 128-bit addresses, "
                  "the mask must be >= 108"),
    ("10.0.0.0/31", "specified --service-cluster-ip-range is too small; it must hold at least "
                    "2 addresses besides the network address"),
    ("10.0.0.0", "'10.0.0.0' is not a valid CIDR (e.g. 10.0.0.0/24 or fd00::/108)"),
    ("garbage/24", "'garbage/24' is not a valid CIDR (e.g. 10.0.0.0/24 or fd00::/108)"),
])
def test_service_cidr_option_errors(value, message):
    with pytest.raises(ValidationError) as err:
        validate_service_cidr(value)
    assert err.value.messages == [message]


def test_option_values_accepted():
    for value in ("10.0.0.0/24", "10.96.0.0/12", "fd00::/108", "10.0.0.0/30"):
        validate_service_cidr(value)
    validate_node_port_range("30000-32767")
    validate_node_port_range("31000")
    for bad in ("a-b", "0-10", "40000-30000", "1-70000"):
        with pytest.raises(ValidationError):
            validate_node_port_range(bad)


# -- one pool ---------------------------------------------------------------------------------

def test_allocate_check_and_release(store):
    ips = pool(store)
    ips.allocate("10.0.0.10", OWNER)
    record = json.loads(store.get(alloc.IP_PREFIX + "10.0.0.10").value)
    assert record["owner"] == {"namespace": "default", "name": "web"}
    with pytest.raises(AllocationError, match="^provided IP is already allocated$"):
        ips.allocate("10.0.0.10", ("default", "other"))
    with pytest.raises(AllocationError, match="not in the valid range"):
        ips.check("10.0.1.10", OWNER)
    ips.release("10.0.0.10", ("default", "other"))  # not the owner: nothing happens
    ips.check("10.0.0.11", OWNER)
    with pytest.raises(AllocationError):
        ips.check("10.0.0.10", OWNER)
    ips.release("010.0.0.10", OWNER)  # released whatever the spelling
    ips.allocate("10.0.0.10", ("default", "other"))


def test_first_address_is_the_kubernetes_services(store):
    ips = pool(store)
    with pytest.raises(AllocationError, match="already allocated"):
        ips.allocate("10.0.0.1", OWNER)
    ips.allocate("10.0.0.1", ("default", "kubernetes"))
    assert all(ips.allocate_next(OWNER) != "10.0.0.1" for _ in range(50))


def test_dynamic_allocation_prefers_the_upper_range_then_fills_the_lower(store):
    ips = pool(store, "10.0.0.0/26")  # 62 addresses, the lower 16 kept for requests
    upper = {ips.allocate_next(OWNER) for _ in range(62 - 16)}
    assert {int(ip.rsplit(".", 1)[1]) for ip in upper} == set(range(17, 63))
    lower = {ips.allocate_next(OWNER) for _ in range(15)}
    assert {int(ip.rsplit(".", 1)[1]) for ip in lower} == set(range(2, 17))
    with pytest.raises(AllocationError, match="^range is full$"):
        ips.allocate_next(OWNER)


def test_dry_run_picks_without_reserving(store):
    ips = pool(store, "10.0.0.0/29")
    picked = ips.allocate_next(OWNER, dry_run=True)
    assert store.list(alloc.IP_PREFIX).items == []
    ips.allocate(picked, OWNER)
    assert ips.allocate_next(OWNER, dry_run=True, exclude={"10.0.0.2"}) not in (picked,
                                                                                 "10.0.0.2")


def test_stale_reservations_are_reclaimed(store, monkeypatch):
    held = set()
    ips = pool(store, holds=lambda owner, member: member in held)
    ips.allocate("10.0.0.20", ("default", "crashed"))
    ips.allocate("10.0.0.21", ("default", "alive"))
    held.add("10.0.0.21")
    with pytest.raises(AllocationError):  # recent: its owner may be being written
        ips.allocate("10.0.0.20", OWNER)
    monkeypatch.setattr(alloc, "STALE_AFTER", -1)
    ips.allocate("10.0.0.20", OWNER)  # its owner never held it: reclaimed
    with pytest.raises(AllocationError):
        ips.allocate("10.0.0.21", OWNER)  # still in force
    assert json.loads(store.get(alloc.IP_PREFIX + "10.0.0.20").value)["owner"]["name"] == "web"


def test_full_range_reclaims_stale_members(store, monkeypatch):
    ips = pool(store, "10.0.0.0/30", holds=lambda owner, member: False)
    assert ips.allocate_next(("default", "gone")) == "10.0.0.2"
    with pytest.raises(AllocationError, match="range is full"):
        ips.allocate_next(OWNER)
    monkeypatch.setattr(alloc, "STALE_AFTER", -1)
    assert ips.allocate_next(OWNER) == "10.0.0.2"


def test_concurrent_allocations_never_share_a_member(tmp_path):
    path = str(tmp_path / "kapiserver.db")
    results, errors = [], []

    def worker(i):
        store = SQLiteStore(path)  # one connection per thread, as workers have
        try:
            ips = pool(store, "10.0.0.0/25")
            for j in range(5):
                results.append(ips.allocate_next(("ns", f"svc-{i}-{j}")))
        except Exception as err:  # pragma: no cover - reported below
            errors.append(err)
        finally:
            store.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 60 and len(set(results)) == 60


def test_transaction_revert_and_commit(store):
    ips = pool(store)
    txn = Transaction()
    txn.allocate(ips, "10.0.0.30", OWNER)
    with pytest.raises(AllocationError):
        txn.allocate(ips, "10.0.0.30", OWNER)  # never twice in one write
    txn.revert()
    ips.check("10.0.0.30", ("default", "other"))
    ips.allocate("10.0.0.31", OWNER)
    txn = Transaction()
    txn.release_later(ips, "10.0.0.31", OWNER)
    with pytest.raises(AllocationError):
        ips.check("10.0.0.31", ("default", "other"))
    txn.commit()
    ips.check("10.0.0.31", ("default", "other"))
    dry = Transaction(dry_run=True)
    dry.allocate(ips, "10.0.0.32", OWNER)
    dry.release_later(ips, "10.0.0.33", OWNER)
    assert dry.allocated == [] and dry.to_release == []


# -- what services take ---------------------------------------------------------------------------

def stored_service(store, name, spec):
    store.create(SERVICES.key("default", name), encode({"metadata": {"name": name}, "spec": spec}))


def test_service_create_update_delete(store):
    # 30005 lies in the range's static band (below its offset of 16), which dynamic
    # allocation leaves alone while the rest has room: with a range of 11 ports there is
    # no such band, and the port 80 allocated first could take 30005 (upstream too).
    allocators = ServiceAllocators(store, SERVICES, "10.0.0.0/24", "30000-30100")
    svc = {"metadata": {"name": "web"}, "spec": {
        "type": "NodePort", "ipFamilies": ["IPv4"], "externalTrafficPolicy": "Cluster",
        "ports": [{"port": 80, "protocol": "TCP"}, {"port": 80, "protocol": "UDP"},
                  {"port": 81, "protocol": "TCP", "nodePort": 30005}]}}
    txn = allocators.allocate_create(svc, OWNER)
    spec = svc["spec"]
    assert spec["clusterIPs"] == [spec["clusterIP"]]
    # TCP and UDP on one port number share their node port.
    assert spec["ports"][0]["nodePort"] == spec["ports"][1]["nodePort"] != 30005
    stored_service(store, "web", spec)
    txn.commit()
    assert allocators._holds_ip(OWNER, spec["clusterIP"])
    assert allocators._holds_node_port(OWNER, "30005")
    # To ClusterIP: the node ports go once the write succeeds.
    old, new = json.loads(json.dumps(svc)), json.loads(json.dumps(svc))
    new["spec"]["type"] = "ClusterIP"
    for port in new["spec"]["ports"]:
        port.pop("nodePort")
    txn = allocators.allocate_update(new, old, OWNER)
    with pytest.raises(AllocationError):
        allocators.node_ports.check("30005", ("default", "other"))
    txn.commit()
    allocators.node_ports.check("30005", ("default", "other"))
    allocators.release_all(new, OWNER)
    allocators.ips.check(spec["clusterIP"], ("default", "other"))


def test_requested_ip_errors_are_upstreams(store):
    from kapiserver import errors

    allocators = ServiceAllocators(store, SERVICES)
    allocators.ips.allocate("10.0.0.40", ("default", "first"))
    svc = {"spec": {"clusterIP": "10.0.0.40", "clusterIPs": ["10.0.0.40"],
                    "ipFamilies": ["IPv4"], "ports": [{"port": 80}]}}
    with pytest.raises(errors.Invalid) as err:
        allocators.allocate_create(svc, OWNER)
    assert err.value.message == (
        'Service "web" is invalid: spec.clusterIPs: Invalid value: []string{"10.0.0.40"}: '
        "failed to allocate IP 10.0.0.40: provided IP is already allocated")
    full = ServiceAllocators(store, SERVICES, "10.1.0.0/30")
    full.ips.allocate("10.1.0.2", ("default", "first"))
    with pytest.raises(errors.InternalError) as err:
        full.allocate_create({"spec": {"ports": [{"port": 80}]}}, OWNER)
    assert err.value.message == ("Internal error occurred: failed to allocate a serviceIP: "
                                 "range is full")
