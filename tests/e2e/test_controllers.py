"""Controllers end to end: one leader across workers, and namespaces that finish deleting."""

import time

ADMIN = dict(user="admin", groups=["system:masters"])
PROBE = "tests.support.probe_plugin"


def test_exactly_one_worker_runs_controllers_and_another_takes_over(kapiserver_factory, tmp_path):
    pids_file = tmp_path / "pids"
    server = kapiserver_factory(plugins=[PROBE], workers=2,
                                config={"probe-controller-file": str(pids_file)})
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not pids_file.exists():
        time.sleep(0.1)
    time.sleep(1.0)
    pids = set(pids_file.read_text().split())
    assert len(pids) == 1, pids
    lease = server.get("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/"
                       "kapiserver-controllers", **ADMIN)
    if lease.status_code == 200:  # once the leases resource is installed
        assert lease.json()["spec"]["holderIdentity"].split("_")[1] == next(iter(pids))
    # Kill the leader: a surviving worker takes over within the lease duration.
    import os
    import signal

    leader = int(next(iter(pids)))
    os.kill(leader, signal.SIGKILL)
    pids_file.write_text("")
    deadline = time.monotonic() + 25
    while time.monotonic() < deadline and not pids_file.read_text().split():
        time.sleep(0.2)
    new = set(pids_file.read_text().split())
    assert new and str(leader) not in new


def test_kubectl_delete_namespace_finishes(kapiserver_factory):
    server = kapiserver_factory(workers=2)
    server.kubectl("create", "namespace", "gone-soon", check=True)
    for i in range(3):
        assert server.request("POST", "/api/v1/namespaces/gone-soon/configmaps", json={
            "metadata": {"name": f"cm{i}"}}, **ADMIN).status_code == 201
    held = server.request("POST", "/api/v1/namespaces/gone-soon/configmaps", json={
        "metadata": {"name": "held", "finalizers": ["example.com/hold"]}}, **ADMIN)
    assert held.status_code == 201
    result = server.kubectl("delete", "namespace", "gone-soon", "--wait=false", check=True)
    assert result.stdout.strip() == 'namespace "gone-soon" deleted'
    # Content goes; the namespace waits for the object held by its finalizer.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        items = server.get("/api/v1/namespaces/gone-soon/configmaps", **ADMIN).json()["items"]
        if [i["metadata"]["name"] for i in items] == ["held"]:
            break
        time.sleep(0.1)
    assert items[0]["metadata"]["deletionTimestamp"]
    assert server.get("/api/v1/namespaces/gone-soon", **ADMIN).json()["status"]["phase"] == \
        "Terminating"
    # As upstream's controller, the namespace's conditions say what it waits for.
    deadline = time.monotonic() + 10
    while True:
        status = server.get("/api/v1/namespaces/gone-soon", **ADMIN).json()["status"]
        conditions = {c["type"]: c for c in status.get("conditions") or []}
        if "NamespaceFinalizersRemaining" in conditions or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert [c["type"] for c in status["conditions"]] == [
        "NamespaceDeletionDiscoveryFailure", "NamespaceDeletionGroupVersionParsingFailure",
        "NamespaceDeletionContentFailure", "NamespaceContentRemaining",
        "NamespaceFinalizersRemaining"]
    assert {kind: c["status"] for kind, c in conditions.items()} == {
        "NamespaceDeletionDiscoveryFailure": "False",
        "NamespaceDeletionGroupVersionParsingFailure": "False",
        "NamespaceDeletionContentFailure": "False", "NamespaceContentRemaining": "True",
        "NamespaceFinalizersRemaining": "True"}
    assert conditions["NamespaceContentRemaining"]["message"] == \
        "Some resources are remaining: configmaps. has 1 resource instances"
    assert (conditions["NamespaceFinalizersRemaining"]["reason"],
            conditions["NamespaceFinalizersRemaining"]["message"]) == (
        "SomeFinalizersRemain",
        "Some content in the namespace has finalizers remaining: example.com/hold in 1 "
        "resource instances")
    held = server.get("/api/v1/namespaces/gone-soon/configmaps/held", **ADMIN).json()
    held["metadata"]["finalizers"] = []
    assert server.request("PUT", "/api/v1/namespaces/gone-soon/configmaps/held", json=held,
                          **ADMIN).status_code == 200
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if server.get("/api/v1/namespaces/gone-soon", **ADMIN).status_code == 404:
            break
        time.sleep(0.1)
    result = server.kubectl("get", "namespace", "gone-soon")
    assert 'Error from server (NotFound): namespaces "gone-soon" not found' in result.stderr
