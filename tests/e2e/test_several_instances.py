"""Two kapiserver instances on one 3-member etcd cluster behave as one API server.

Each instance binds its own loopback address on the same port (as instances on different
hosts would) and advertises a documentation address (192.0.2.x, never contacted): a
write through one is seen by reads and watches on the other at once, resourceVersions
and continue tokens are shared, the controllers run on one instance, and the
``kubernetes`` Service's endpoints list every live instance.
"""

import json
import threading
import time

import pytest

from kapiserver.etcdtesting import etcd_available

pytestmark = pytest.mark.skipif(not etcd_available(), reason="etcd is not installed")
pytest.importorskip("pyetcd", reason="the etcd extra is not installed")

ADMIN = dict(user="admin", groups=["system:masters"])
CMS = "/api/v1/namespaces/default/configmaps"
ENDPOINTS = "/api/v1/namespaces/default/endpoints/kubernetes"


def start_instances(tmp_path, cluster, count=2, **config):
    from kapiserver.testing import KapiserverProcess, free_port

    port = free_port()
    instances = []
    for i in range(count):
        instances.append(KapiserverProcess(str(tmp_path / f"kapiserver-{i}"), {
            "storage-backend": "etcd3", "etcd-servers": cluster.urls,
            "bind-address": f"127.0.0.{i + 1}", "advertise-address": f"192.0.2.{i + 1}",
            **config}, workers=1, port=port))
    for instance in instances:
        instance.start(60)
    return instances


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    from kapiserver.etcdtesting import EtcdCluster

    tmp_path = tmp_path_factory.mktemp("pair")
    cluster = EtcdCluster(str(tmp_path / "etcd"), size=3).start()
    instances = []
    try:
        instances = start_instances(tmp_path, cluster)
        yield cluster, instances
    finally:
        for instance in instances:
            instance.stop()
        cluster.stop()


def create(server, name, **data):
    answer = server.request("POST", CMS, json={"metadata": {"name": name},
                                               "data": data or {"k": "v"}}, **ADMIN)
    assert answer.status_code == 201, answer.text
    return answer.json()


def test_a_write_through_one_is_read_and_watched_through_the_other(pair):
    _, (a, b) = pair
    rv = b.get(CMS, **ADMIN).json()["metadata"]["resourceVersion"]
    events, ready = [], threading.Event()

    def watch():
        with b.get(f"{CMS}?watch=1&resourceVersion={rv}&timeoutSeconds=10", stream=True,
                   **ADMIN) as response:
            ready.set()
            for line in response.iter_lines():
                events.append((time.monotonic(), json.loads(line)))
                return

    watcher = threading.Thread(target=watch)
    watcher.start()
    ready.wait(10)
    written_at = time.monotonic()
    created = create(a, "from-a")
    watcher.join(15)
    (seen_at, event), = events
    assert event["type"] == "ADDED" and event["object"]["metadata"]["name"] == "from-a"
    assert event["object"]["metadata"]["resourceVersion"] == created["metadata"][
        "resourceVersion"]
    assert seen_at - written_at < 2.0  # tens of ms when the machine is idle
    read = b.get(f"{CMS}/from-a", **ADMIN)
    assert read.status_code == 200
    assert read.json()["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    # A conflict is a conflict whichever instance wrote first.
    stale = dict(created, data={"k": "a"})
    assert a.request("PUT", f"{CMS}/from-a", json=stale, **ADMIN).status_code == 200
    assert b.request("PUT", f"{CMS}/from-a", json=dict(created, data={"k": "b"}),
                     **ADMIN).status_code == 409


def test_resource_versions_and_continue_tokens_are_shared(pair):
    _, (a, b) = pair
    for i in range(5):
        create(a if i % 2 else b, f"page-{i}")
    first = a.get(f"{CMS}?limit=2&labelSelector=", **ADMIN).json()
    token = first["metadata"]["continue"]
    rest = b.get(f"{CMS}?limit=100&continue={token}", **ADMIN).json()
    assert rest["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    names = [i["metadata"]["name"] for i in first["items"] + rest["items"]]
    assert names == sorted(names) and {f"page-{i}" for i in range(5)} <= set(names)
    at_a = int(a.get(CMS, **ADMIN).json()["metadata"]["resourceVersion"])
    at_b = int(b.get(CMS, **ADMIN).json()["metadata"]["resourceVersion"])
    assert abs(at_a - at_b) <= 2  # one revision sequence (a lease renewal may slip between)


def test_the_controllers_run_on_one_instance(pair):
    _, (a, b) = pair
    path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kapiserver-controllers"
    # Both instances read the same Lease (a renewal may land between two reads: read again).
    for _ in range(20):
        lease = a.get(path, **ADMIN).json()
        if lease == b.get(path, **ADMIN).json():
            break
    else:
        raise AssertionError("the instances never read the same Lease")
    holder = lease["spec"]["holderIdentity"]
    leaders = [s for s in (a, b) if "became the leader" in s.log()]
    assert len(leaders) == 1 and holder.split("_")[1] in leaders[0].log()


def test_the_kubernetes_service_lists_every_live_instance(pair):
    _, (a, b) = pair
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        subsets = a.get(ENDPOINTS, **ADMIN).json().get("subsets") or []
        if [x["ip"] for x in subsets[0]["addresses"]] == ["192.0.2.1", "192.0.2.2"]:
            break
        time.sleep(0.5)
    assert subsets == [{"addresses": [{"ip": "192.0.2.1"}, {"ip": "192.0.2.2"}],
                        "ports": [{"name": "https", "port": a.port, "protocol": "TCP"}]}]
    slices = b.get("/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes",
                   **ADMIN).json()
    assert [e["addresses"] for e in slices["endpoints"]] == [["192.0.2.1"], ["192.0.2.2"]]


def test_every_instance_serves_while_an_etcd_member_is_down(pair):
    cluster, (a, b) = pair
    member = cluster.members[2]
    member.kill()
    try:
        for i, server in enumerate((a, b, a, b)):
            create(server, f"one-member-down-{i}")
            assert server.get(f"{CMS}/one-member-down-{i}", **ADMIN).status_code == 200
    finally:
        member.start()


def test_an_instance_that_stops_leaves_the_endpoints(pair):
    _, (a, b) = pair
    assert b.stop() == 0
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        subsets = a.get(ENDPOINTS, **ADMIN).json().get("subsets") or []
        if [x["ip"] for x in subsets[0]["addresses"]] == ["192.0.2.1"]:
            break
        time.sleep(0.5)
    assert [x["ip"] for x in subsets[0]["addresses"]] == ["192.0.2.1"]


def test_losing_the_etcd_quorum_fails_readiness_and_writes_then_recovers(pair):
    cluster, (a, _) = pair
    assert a.get("/readyz", **ADMIN).status_code == 200
    create(a, "before-the-loss")
    lost = cluster.members[1:]
    for member in lost:
        member.kill()
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            ready = a.get("/readyz?verbose", **ADMIN)
            if ready.status_code != 200:
                break
            time.sleep(0.5)
        assert ready.status_code == 500
        assert "[-]etcd failed: reason withheld" in ready.text
        started = time.monotonic()
        write = a.request("POST", CMS, json={"metadata": {"name": "during-the-loss"}},
                          timeout=90, **ADMIN)
        assert 500 <= write.status_code < 600, write.text
        assert write.json()["kind"] == "Status"
        assert time.monotonic() - started < 65  # within --request-timeout (60 s)
        # resourceVersion=0 asks for any version: served without a quorum.
        listed = a.get(f"{CMS}?resourceVersion=0", **ADMIN)
        assert listed.status_code == 200, listed.text
        assert "before-the-loss" in [i["metadata"]["name"] for i in listed.json()["items"]]
        got = a.get(f"{CMS}/before-the-loss?resourceVersion=0", **ADMIN)
        assert got.status_code == 200, got.text
        assert got.json()["metadata"]["name"] == "before-the-loss"
    finally:
        for member in lost:
            member.start(wait=False)
        for member in lost:
            member.wait_ready(60)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # recovers without a restart
        if a.get("/readyz", **ADMIN).status_code == 200:
            break
        time.sleep(0.5)
    assert a.get("/readyz", **ADMIN).status_code == 200
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        answer = a.request("POST", CMS, json={"metadata": {"name": "after-the-loss"}}, **ADMIN)
        if answer.status_code == 201:
            break
        time.sleep(0.5)
    assert answer.status_code == 201, answer.text


def test_kill_9_of_an_instance_under_writes_loses_and_duplicates_nothing(tmp_path, pair):
    import requests

    cluster, _ = pair
    a, b = start_instances(tmp_path, cluster, **{"etcd-prefix": "/kill9"})
    try:
        start_rv = b.get(CMS, **ADMIN).json()["metadata"]["resourceVersion"]
        acknowledged, seen, stop = {}, [], threading.Event()

        def write():
            for i in range(400):
                if stop.is_set():
                    return
                name = f"w-{i:03d}"
                for server in (b, a):  # the client retries on the other instance
                    try:
                        answer = server.request("POST", CMS, json={"metadata": {"name": name}},
                                                timeout=10, **ADMIN)
                    except requests.RequestException:
                        continue
                    if answer.status_code in (201, 409):  # 409: the lost answer's write
                        acknowledged[name] = answer.status_code
                        break

        def watch():
            rv, servers = start_rv, [b, a]
            while not stop.is_set() and servers:
                server = servers[0]
                try:
                    with server.get(f"{CMS}?watch=1&resourceVersion={rv}&timeoutSeconds=30",
                                    stream=True, timeout=40, **ADMIN) as response:
                        for line in response.iter_lines():
                            event = json.loads(line)
                            seen.append((event["type"], event["object"]["metadata"]["name"]))
                            rv = event["object"]["metadata"]["resourceVersion"]
                            if stop.is_set():
                                return
                except requests.RequestException:
                    servers.pop(0)  # that instance is gone: resume on the next

        writer, watcher = threading.Thread(target=write), threading.Thread(target=watch)
        writer.start()
        watcher.start()
        time.sleep(2.0)
        b.stop(sig=9)  # kill -9 under load
        time.sleep(3.0)
        stop.set()
        writer.join(60)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and \
                set(acknowledged) - {n for t, n in seen if t == "ADDED"}:
            time.sleep(0.2)
        stored = {i["metadata"]["name"] for i in a.get(CMS, **ADMIN).json()["items"]}
        assert len(acknowledged) > 10
        assert set(acknowledged) <= stored  # no acknowledged write lost
        added = [n for t, n in seen if t == "ADDED" and n.startswith("w-")]
        assert len(added) == len(set(added))  # nothing twice
        assert set(acknowledged) <= set(added)  # nothing missed across the reconnect
        assert set(added) <= stored
    finally:
        stop.set()
        a.stop()
        b.stop()
