"""Which etcd client a gevent worker should use: gRPC (``pyetcd``) or the JSON gateway.

``python -m tests.benchmarks.etcd_clients`` starts one etcd member on loopback and, for
each client in its own process patched as a gunicorn gevent worker is (gevent's
``patch_all``; for gRPC also ``grpc.experimental.gevent.init_gevent()``), measures:

* get: one 1 KiB key, sequentially and from 16 greenlets at once;
* range: 100 keys of 1 KiB under a prefix (a LIST page);
* put-txn: a transaction comparing ``mod_revision`` then putting (a conditional update),
  sequentially and from 16 greenlets (distinct keys);
* watch: one prefix watch replaying 5,000 events (with previous values) from history.

The gateway client (``pip install etcd3gw``) is not a dependency: install it to compare.
Figures are operations (or events) per second; compare within one run only. Every loop
is bounded in count and time; everything stays on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

VALUE = b"x" * 1024
SECONDS = 3.0  # per figure, at most


def _timed(fn, count: int, concurrency: int = 1) -> float:
    """Operations per second of ``fn(i)`` run ``count`` times by ``concurrency`` greenlets."""
    import gevent

    done = [0]
    deadline = time.monotonic() + SECONDS

    def loop(worker: int):
        i = worker
        while i < count and time.monotonic() < deadline:
            fn(i)
            done[0] += 1
            i += concurrency

    start = time.monotonic()
    gevent.joinall([gevent.spawn(loop, w) for w in range(concurrency)], raise_error=True)
    return done[0] / (time.monotonic() - start)


class GrpcClient:
    name = "grpc (pyetcd)"

    def __init__(self, url: str):
        import grpc.experimental.gevent as grpc_gevent

        grpc_gevent.init_gevent()
        import pyetcd

        host, port = url.rsplit("//", 1)[1].rsplit(":", 1)
        self.client = pyetcd.client(host=host, port=int(port))

    def put(self, key: str, value: bytes) -> None:
        self.client.put(key, value)

    def get(self, key: str) -> None:
        value, meta = self.client.get(key)
        assert value == VALUE and meta.mod_revision > 0

    def range(self, prefix: str) -> int:
        return len(list(self.client.get_prefix(prefix)))

    def txn(self, key: str, revision: int) -> int:
        t = self.client.transactions
        ok, responses = self.client.transaction(compare=[t.mod(key) == revision],
                                                success=[t.put(key, VALUE)],
                                                failure=[t.get(key)])
        assert ok
        return self.client.get(key)[1].mod_revision if False else 0

    def mod_revision(self, key: str) -> int:
        return self.client.get(key)[1].mod_revision

    def watch_replay(self, prefix: str, start: int, count: int) -> int:
        events, cancel = self.client.watch_prefix(prefix, start_revision=start, prev_kv=True)
        seen = 0
        deadline = time.monotonic() + 30
        for _ in events:
            seen += 1
            if seen >= count or time.monotonic() > deadline:
                break
        cancel()
        return seen


class GatewayClient:
    name = "json gateway (etcd3gw)"

    def __init__(self, url: str):
        import etcd3gw

        host, port = url.rsplit("//", 1)[1].rsplit(":", 1)
        self.client = etcd3gw.client(host=host, port=int(port))

    def put(self, key: str, value: bytes) -> None:
        self.client.put(key, value)

    def get(self, key: str) -> None:
        [(value, meta)] = self.client.get(key, metadata=True)
        assert value == VALUE and int(meta["mod_revision"]) > 0

    def range(self, prefix: str) -> int:
        return len(self.client.get_prefix(prefix))

    def txn(self, key: str, revision: int) -> int:
        import base64

        b64 = base64.b64encode(key.encode()).decode()
        answer = self.client.transaction({
            "compare": [{"key": b64, "result": "EQUAL", "target": "MOD",
                         "mod_revision": revision}],
            "success": [{"request_put": {"key": b64,
                                         "value": base64.b64encode(VALUE).decode()}}],
            "failure": [{"request_range": {"key": b64}}]})
        assert answer.get("succeeded"), answer
        return 0

    def mod_revision(self, key: str) -> int:
        return int(self.client.get(key, metadata=True)[0][1]["mod_revision"])

    def watch_replay(self, prefix: str, start: int, count: int) -> int:
        events, cancel = self.client.watch_prefix(prefix, start_revision=start, prev_kv=True)
        seen = 0
        deadline = time.monotonic() + 30
        for _ in events:
            seen += 1
            if seen >= count or time.monotonic() > deadline:
                break
        cancel()
        return seen


CLIENTS = {"grpc": GrpcClient, "gateway": GatewayClient}


def measure(kind: str, url: str) -> dict:
    """The figures of one client (run in a process of its own, patched for gevent)."""
    client = CLIENTS[kind](url)
    run = f"/bench-{kind}-{os.getpid()}/"
    figures = {"client": client.name}
    client.put(run + "one", VALUE)
    figures["get"] = _timed(lambda i: client.get(run + "one"), 5000)
    figures["get x16"] = _timed(lambda i: client.get(run + "one"), 20000, 16)
    for i in range(100):
        client.put(f"{run}list/{i:03d}", VALUE)
    assert client.range(run + "list/") == 100
    figures["range 100"] = _timed(lambda i: client.range(run + "list/"), 1000)
    keys = [f"{run}txn/{i:03d}" for i in range(16)]
    for key in keys:
        client.put(key, VALUE)
    revisions = {key: client.mod_revision(key) for key in keys}

    def txn(i: int) -> None:
        key = keys[i % 16]
        client.txn(key, revisions[key])
        revisions[key] = client.mod_revision(key)

    # Each conditional update reads the new mod_revision back: a get and a txn per op.
    figures["put-txn"] = _timed(txn, 2000)
    figures["put-txn x16"] = _timed(txn, 8000, 16)
    start = client.mod_revision(run + "one") + 1
    for i in range(5000):
        client.put(f"{run}watch/{i % 500:03d}", VALUE)
    began = time.monotonic()
    seen = client.watch_replay(run + "watch/", start, 5000)
    figures["watch replay"] = seen / (time.monotonic() - began)
    figures["watch events"] = seen
    return figures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client", choices=sorted(CLIENTS))
    parser.add_argument("--url")
    args = parser.parse_args(argv)
    if args.client:  # the child: patch as a gevent worker is, then measure
        from gevent import monkey

        monkey.patch_all()
        print(json.dumps(measure(args.client, args.url)))
        return 0
    from kapiserver.etcdtesting import EtcdProcess

    with tempfile.TemporaryDirectory() as workdir:
        etcd = EtcdProcess(workdir).start()
        try:
            rows = []
            for kind in ("grpc", "gateway"):
                out = subprocess.run([sys.executable, "-m", "tests.benchmarks.etcd_clients",
                                      "--client", kind, "--url", etcd.url],
                                     capture_output=True, text=True, timeout=300)
                if out.returncode:
                    print(f"{kind}: failed\n{out.stderr[-2000:]}")
                    continue
                rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        finally:
            etcd.stop()
    names = ["get", "get x16", "range 100", "put-txn", "put-txn x16", "watch replay"]
    print(f"{'client':24}" + "".join(f"{n:>14}" for n in names))
    for row in rows:
        print(f"{row['client']:24}" + "".join(f"{row[n]:>14.0f}" for n in names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
