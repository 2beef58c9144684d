"""Writes under load survive ``kill -9`` of the whole server: every create answered 201 by
a group commit (``kapiserver/storage/sqlite.py``) is there after a restart, with its uid
and resourceVersion, and no revision was given twice — in the durable default and in
``--sqlite-synchronous=normal`` (which only gives up surviving OS crashes)."""

import os
import signal
import threading
import time

import pytest
import requests

from kapiserver.testing import KapiserverProcess

ADMIN = dict(user="admin", groups=["system:masters"])
CMS = "/api/v1/namespaces/default/configmaps"
CLIENTS = 12


@pytest.mark.parametrize("synchronous", ["full", "normal"])
def test_kill_9_under_concurrent_creates_loses_no_acknowledged_write(tmp_path, synchronous):
    config = {"sqlite-synchronous": synchronous}
    server = KapiserverProcess(str(tmp_path / "k"), config, workers=2).start(90)
    acknowledged, stop = {}, threading.Event()
    lock = threading.Lock()

    def client(n):
        i = 0
        while not stop.is_set():
            name = f"w-{n}-{i}"
            i += 1
            try:
                answer = server.request("POST", CMS, json={"metadata": {"name": name},
                                                           "data": {"n": name}},
                                        timeout=10, **ADMIN)
            except requests.RequestException:
                return  # the server is gone
            if answer.status_code == 201:
                with lock:
                    acknowledged[name] = answer.json()["metadata"]

    threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 30
    while len(acknowledged) < 150 and time.monotonic() < deadline:
        time.sleep(0.05)
    # SIGKILL master and workers at once, by PID, while the clients keep writing.
    workers = [int(p) for p in os.popen(f"pgrep -P {server.process.pid}").read().split()]
    for pid in [server.process.pid, *workers]:
        os.kill(pid, signal.SIGKILL)
    server.process.wait(10)
    stop.set()
    for thread in threads:
        thread.join(30)
    with lock:
        answered = dict(acknowledged)
    assert len(answered) >= 150

    restarted = KapiserverProcess(server.workdir, config, port=server.port, workers=2).start(90)
    try:
        listed = restarted.get(CMS, **ADMIN).json()["items"]
        stored = {item["metadata"]["name"]: item["metadata"] for item in listed}
        missing = [name for name in answered if name not in stored]
        assert not missing, f"{len(missing)} acknowledged creates lost, e.g. {missing[:5]}"
        for name, metadata in answered.items():
            assert stored[name]["uid"] == metadata["uid"]
            assert stored[name]["resourceVersion"] == metadata["resourceVersion"]
        revisions = [item["metadata"]["resourceVersion"] for item in listed]
        assert len(revisions) == len(set(revisions))
        # Writes go on after the restart, at new revisions.
        created = restarted.request("POST", CMS, json={"metadata": {"name": "after"}}, **ADMIN)
        assert created.status_code == 201
        assert int(created.json()["metadata"]["resourceVersion"]) > max(map(int, revisions))
    finally:
        restarted.stop()
