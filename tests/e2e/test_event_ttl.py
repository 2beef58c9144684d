"""Events expire ``--event-ttl`` after their last write; watchers see them deleted."""

import json
import time

from kapiserver.testing import assert_status

ADMIN = dict(user="admin", groups=["system:masters"])
#: TTLs are SQLite leases on one backend and etcd leases on the other.
STORAGE_BACKENDS = ("sqlite", "etcd3")
CORE = "/api/v1/namespaces/default/events"
V1 = "/apis/events.k8s.io/v1/namespaces/default/events"


def event(name: str) -> dict:
    return {"metadata": {"name": name, "namespace": "default"},
            "involvedObject": {"kind": "Pod", "name": "web-1", "namespace": "default"},
            "reason": "Started", "message": "started", "type": "Normal",
            "source": {"component": "kubelet"}}


def test_events_expire_after_their_last_write(kapiserver_factory):
    server = kapiserver_factory(workers=2, config={"event-ttl": "3s"})
    created = server.request("POST", CORE, json=event("short"), **ADMIN)
    assert created.status_code == 201
    rv = created.json()["metadata"]["resourceVersion"]
    assert server.request("POST", V1, json={
        "metadata": {"name": "new-style"}, "eventTime": "2024-05-01T10:00:00.000000Z",
        "reportingController": "example.com/ctl", "reportingInstance": "ctl-0",
        "action": "Scale", "reason": "Scaled", "type": "Normal",
        "regarding": {"kind": "Deployment", "name": "web", "namespace": "default"}},
        **ADMIN).status_code == 201
    kept = server.request("POST", "/api/v1/namespaces/default/configmaps",
                          json={"metadata": {"name": "kept"}}, **ADMIN)
    assert kept.status_code == 201

    # A write refreshes the lease: "renewed" outlives "short".
    time.sleep(1.5)
    renewed = server.request("POST", CORE, json=event("renewed"), **ADMIN).json()
    watch = server.request("GET", f"{CORE}?watch=1&resourceVersion={rv}&timeoutSeconds=10",
                           stream=True, **ADMIN)
    deleted_at = {}
    started = time.monotonic()
    for line in watch.iter_lines():
        change = json.loads(line)
        if change["type"] == "DELETED":
            deleted_at[change["object"]["metadata"]["name"]] = time.monotonic() - started
        if {"short", "new-style", "renewed"} <= set(deleted_at):
            break
    watch.close()
    assert set(deleted_at) >= {"short", "new-style", "renewed"}, deleted_at
    assert deleted_at["short"] < deleted_at["renewed"]
    assert_status(server.get(f"{CORE}/short", **ADMIN), 404, "NotFound",
                  'events "short" not found')
    assert server.get(f"{V1}/new-style", **ADMIN).status_code == 404
    assert renewed["metadata"]["name"] == "renewed"
    assert server.get("/api/v1/namespaces/default/configmaps/kept", **ADMIN).status_code == 200
