"""What issue 3 promises about writes: nothing acknowledged is lost, no update is lost,
and a slow watcher never stalls the others."""

import json
import os
import signal
import socket
import ssl
import threading
import time


from kapiserver.testing import KapiserverProcess

ADMIN = dict(user="admin", groups=["system:masters"])
CMS = "/api/v1/namespaces/default/configmaps"


def test_kill_9_right_after_201_keeps_the_object(kapiserver_factory):
    server = kapiserver_factory(workers=2)
    created = server.request("POST", CMS, json={"metadata": {"name": "durable"},
                                                "data": {"k": "v"}}, **ADMIN)
    assert created.status_code == 201
    # SIGKILL the whole server (master and workers) at once, by PID: no clean shutdown.
    workers = [int(p) for p in os.popen(f"pgrep -P {server.process.pid}").read().split()]
    for pid in [server.process.pid, *workers]:
        os.kill(pid, signal.SIGKILL)
    server.process.wait(10)
    restarted = KapiserverProcess(server.workdir, port=server.port, workers=2).start()
    try:
        stored = restarted.get(f"{CMS}/durable", **ADMIN).json()
        assert stored["data"] == {"k": "v"}
        assert stored["metadata"]["uid"] == created.json()["metadata"]["uid"]
        assert stored["metadata"]["resourceVersion"] == created.json()["metadata"]["resourceVersion"]
    finally:
        restarted.stop()


def test_concurrent_read_modify_write_clients_lose_no_update(kapiserver_factory):
    server = kapiserver_factory(workers=2)
    server.request("POST", CMS, json={"metadata": {"name": "counter"}, "data": {"n": "0"}},
                   **ADMIN)
    clients, increments, conflicts = 8, 5, []

    def client():
        for _ in range(increments):
            for _attempt in range(200):
                current = server.get(f"{CMS}/counter", **ADMIN).json()
                current["data"]["n"] = str(int(current["data"]["n"]) + 1)
                answer = server.request("PUT", f"{CMS}/counter", json=current, **ADMIN)
                if answer.status_code == 200:
                    break
                assert answer.status_code == 409, answer.text
                conflicts.append(1)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    final = server.get(f"{CMS}/counter", **ADMIN).json()["data"]["n"]
    assert int(final) == clients * increments
    assert conflicts  # the clients did race


def test_a_slow_watcher_never_stalls_the_others(kapiserver_factory):
    server = kapiserver_factory(workers=1)
    start = server.get(CMS, **ADMIN).json()["metadata"]["resourceVersion"]
    # A watcher that never reads: its socket buffers fill, and the server must not wait on it.
    cert, key = server.client_cert("admin", ["system:masters"])
    context = ssl.create_default_context(cafile=server.ca_file)
    context.load_cert_chain(cert, key)
    slow = context.wrap_socket(socket.create_connection(("127.0.0.1", server.port)),
                               server_hostname="127.0.0.1")
    slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    slow.sendall(f"GET {CMS}?watch=1&resourceVersion={start} HTTP/1.1\r\nHost: x\r\n\r\n"
                 .encode())
    received = []

    def fast():
        with server.get(f"{CMS}?watch=1&resourceVersion={start}&timeoutSeconds=60", **ADMIN,
                        stream=True, timeout=60) as response:
            for line in response.iter_lines():
                if line:
                    received.append(json.loads(line))
                    if len(received) == 200:
                        return

    thread = threading.Thread(target=fast)
    thread.start()
    payload = "x" * 8000
    started = time.monotonic()
    for i in range(200):
        assert server.request("POST", CMS, json={"metadata": {"name": f"big-{i}"},
                                                 "data": {"p": payload}}, **ADMIN).status_code == 201
    thread.join(60)
    assert len(received) == 200
    assert time.monotonic() - started < 60
    slow.close()
