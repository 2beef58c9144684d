"""Watch end to end: the Python client's list+watch loop, resume, selectors, 410, kubectl -w."""

import json
import subprocess
import threading
import time

import pytest

ADMIN = dict(user="admin", groups=["system:masters"])
#: The server tests run on each storage backend (tests/conftest.py).
STORAGE_BACKENDS = ("sqlite", "etcd3")
CMS = "/api/v1/namespaces/default/configmaps"


@pytest.fixture(scope="module")
def api(tmp_path_factory, kapiserver_storage):
    from kapiserver.testing import KapiserverProcess

    server = KapiserverProcess(str(tmp_path_factory.mktemp("watch")), workers=2,
                               config={**kapiserver_storage.config(),
                                       "etcd-compaction-interval": "1s"}).start()
    yield server
    server.stop()


def stream(api, path, lines, stop_after, timeout=10, headers=None):
    """Collect watch events from ``path`` into ``lines`` until ``stop_after`` events."""
    with api.get(path, **ADMIN, stream=True, timeout=timeout, headers=headers) as response:
        assert response.status_code == 200
        assert response.headers["Content-Type"] == "application/json"
        for line in response.iter_lines():
            if line:
                lines.append(json.loads(line))
                if len(lines) >= stop_after:
                    return


def create(api, name, labels=None, data=None):
    response = api.request("POST", CMS, json={"metadata": {"name": name, "labels": labels or {}},
                                              "data": data or {}}, **ADMIN)
    assert response.status_code == 201, response.text
    return response.json()


def test_python_client_list_then_watch_sees_every_change_in_order(api):
    from kubernetes import client, watch

    with api.python_client() as api_client:
        core = client.CoreV1Api(api_client)
        listed = core.list_namespaced_config_map("default", label_selector="loop=1")
        seen = []

        def run():
            w = watch.Watch()
            for event in w.stream(core.list_namespaced_config_map, "default",
                                  label_selector="loop=1",
                                  resource_version=listed.metadata.resource_version,
                                  timeout_seconds=10):
                seen.append((event["type"], event["object"].metadata.name,
                             dict(event["object"].data or {})))
                if len(seen) == 3:
                    w.stop()

        thread = threading.Thread(target=run)
        thread.start()
        time.sleep(0.5)
        create(api, "loop-a", {"loop": "1"}, {"v": "1"})
        cm = core.read_namespaced_config_map("loop-a", "default")
        cm.data = {"v": "2"}
        core.replace_namespaced_config_map("loop-a", "default", cm)
        core.delete_namespaced_config_map("loop-a", "default")
        thread.join(15)
    assert seen == [("ADDED", "loop-a", {"v": "1"}), ("MODIFIED", "loop-a", {"v": "2"}),
                    ("DELETED", "loop-a", {"v": "2"})]


def test_writes_reach_watchers_on_every_worker(api):
    start = api.get(CMS, **ADMIN).json()["metadata"]["resourceVersion"]
    results = [[] for _ in range(6)]  # six watches spread over the two workers
    threads = [threading.Thread(target=stream, args=(
        api, f"{CMS}?watch=1&resourceVersion={start}&labelSelector=fan=out", r, 3))
        for r in results]
    for thread in threads:
        thread.start()
    time.sleep(0.5)
    for i in range(3):
        create(api, f"fan-{i}", {"fan": "out"})  # each write on a fresh connection
    for thread in threads:
        thread.join(15)
    for result in results:
        assert [(e["type"], e["object"]["metadata"]["name"]) for e in result] == [
            ("ADDED", "fan-0"), ("ADDED", "fan-1"), ("ADDED", "fan-2")]


def test_resource_version_zero_starts_with_current_state(api):
    create(api, "state-a", {"state": "x"})
    events = []
    stream(api, f"{CMS}?watch=1&resourceVersion=0&labelSelector=state=x", events, 1)
    assert events[0]["type"] == "ADDED" and events[0]["object"]["metadata"]["name"] == "state-a"
    assert events[0]["object"]["kind"] == "ConfigMap"


def test_send_initial_events_ends_with_the_bookmark(api):
    create(api, "initial-a", {"initial": "y"})
    events = []
    stream(api, f"{CMS}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
                "&allowWatchBookmarks=true&labelSelector=initial=y", events, 2)
    assert [e["type"] for e in events] == ["ADDED", "BOOKMARK"]
    bookmark = events[1]["object"]
    assert bookmark["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert int(bookmark["metadata"]["resourceVersion"]) >= int(
        events[0]["object"]["metadata"]["resourceVersion"])


def test_objects_entering_and_leaving_a_selector(api):
    create(api, "mover", {"team": "a"})
    start = api.get(CMS, **ADMIN).json()["metadata"]["resourceVersion"]
    events = []
    thread = threading.Thread(target=stream, args=(
        api, f"{CMS}?watch=1&resourceVersion={start}&labelSelector=team=b", events, 2))
    thread.start()
    time.sleep(0.5)
    for team in ("b", "c"):
        cm = api.get(f"{CMS}/mover", **ADMIN).json()
        cm["metadata"]["labels"] = {"team": team}
        assert api.request("PUT", f"{CMS}/mover", json=cm, **ADMIN).status_code == 200
    thread.join(15)
    assert [e["type"] for e in events] == ["ADDED", "DELETED"]


def test_an_idle_watch_gets_bookmarks_between_events(api):
    start = api.get(CMS, **ADMIN).json()["metadata"]["resourceVersion"]
    events = []
    thread = threading.Thread(target=stream, args=(
        api, f"{CMS}?watch=1&resourceVersion={start}&allowWatchBookmarks=true"
             "&labelSelector=idle=z&timeoutSeconds=30", events, 3, 30))
    thread.start()
    deadline = time.monotonic() + 15
    while not events and time.monotonic() < deadline:
        time.sleep(0.1)
    create(api, "idle-a", {"idle": "z"})
    thread.join(30)
    # The first bookmark comes after 5 s of silence, then the write, then the next bookmark.
    assert [e["type"] for e in events] == ["BOOKMARK", "ADDED", "BOOKMARK"]
    assert events[0]["object"]["kind"] == "ConfigMap"
    assert int(events[2]["object"]["metadata"]["resourceVersion"]) >= int(
        events[1]["object"]["metadata"]["resourceVersion"])


def test_timeout_seconds_ends_the_stream(api):
    started = time.monotonic()
    events = []
    stream(api, f"{CMS}?watch=1&timeoutSeconds=1&labelSelector=none=none", events, 99)
    assert events == [] and time.monotonic() - started < 5


def test_compacted_resource_version_is_an_error_event_410(api):
    old = api.get(CMS, **ADMIN).json()["metadata"]["resourceVersion"]
    create(api, "churn-1")
    create(api, "churn-2")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        events = []
        stream(api, f"{CMS}?watch=1&resourceVersion={old}&timeoutSeconds=1", events, 1)
        if events and events[0]["type"] == "ERROR":
            break
        time.sleep(0.5)
    status = events[0]["object"]
    assert status["code"] == 410 and status["reason"] == "Expired"
    assert status["message"].startswith(f"too old resource version: {old} (")


def test_kubectl_get_watch_prints_changes(api):
    process = subprocess.Popen(["kubectl", "--kubeconfig", api.kubeconfig(), "get", "cm", "-n",
                                "default", "-w", "-l", "kw=1", "--request-timeout=20s"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1.5)
        create(api, "kw-cm", {"kw": "1"}, {"a": "b"})
        deadline = time.monotonic() + 5
        output = ""
        import os
        import select

        while time.monotonic() < deadline and "kw-cm" not in output:
            ready, _, _ = select.select([process.stdout], [], [], 0.2)
            if ready:
                output += os.read(process.stdout.fileno(), 4096).decode()
        assert "kw-cm" in output and "1" in output.split("kw-cm")[1]
    finally:
        process.terminate()
        process.wait(10)


def test_plain_requests_watch_unknown_rv_format_is_400(api):
    response = api.get(f"{CMS}?watch=1&resourceVersion=abc", **ADMIN)
    assert response.status_code == 400

