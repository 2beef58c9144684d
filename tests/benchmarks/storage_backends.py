"""``python -m tests.benchmarks.storage_backends``: the same scenarios on SQLite, on a
one-member etcd, and on two kapiserver instances sharing a three-member etcd.

Scenarios (each bounded in time): GET one ~1 KiB ConfigMap at 16 connections, LIST 1,000
ConfigMaps at 4, CREATE at 16, and 1,000 watchers receiving paced creates (p99 delay,
lost). With two instances the connections and the watchers are split evenly between
them (each on its own loopback address, as separate hosts behind a load balancer); the
writes of the watch scenario go through the first. Everything — load generators, both
instances, the etcd members — shares this machine's cores, so the two-instance figures
say how the work divides, not what two hosts would do. Compare within one run only.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time

from kapiserver.etcdtesting import EtcdCluster, EtcdProcess, etcd_available
from kapiserver.testing import KapiserverProcess, free_port

from . import load, objects, watchers
from .client import Client, Credentials, create_namespace, populate
from .report import table

CONFIGMAPS = "/api/v1/namespaces/{namespace}/configmaps"
LIST_ITEMS = 1000


def credentials(server: KapiserverProcess) -> Credentials:
    cert, key = server.client_cert("admin", ["system:masters"])
    return Credentials(server.port, server.ca_file, cert, key,
                       host=server.config["bind-address"])


def split_load(targets: list[Credentials], path: str, connections: int, duration: float,
               **kwargs) -> tuple[float, float, float, int]:
    """``load.run`` against every target at once, the connections split between them:
    (summed rate, worst p50, worst p99, errors)."""
    results = [None] * len(targets)
    share = [connections // len(targets) + (1 if i < connections % len(targets) else 0)
             for i in range(len(targets))]

    def one(i: int) -> None:
        t = targets[i]
        results[i] = load.run(t.host, t.port, path, t.ca, t.cert, t.key, share[i], duration,
                              **kwargs)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(targets))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return (sum(r[0] for r in results), max(r[1] for r in results),
            max(r[2] for r in results), sum(r[3] for r in results))


def scenarios(name: str, targets: list[Credentials], duration: float, watchers_count: int,
              writes: int, rate: float) -> dict:
    first = targets[0]
    figures = {"setup": name}
    client = Client(first)
    status, body = client.request("POST", CONFIGMAPS.format(namespace="default"),
                                  objects.configmap("bench-get", seed="bench-get"))
    client.close()
    if status != 201:
        raise RuntimeError(f"{name}: creating the ConfigMap to GET: {status} {body}")
    time.sleep(0.5)  # every instance's cache has it
    figures["GET x16"] = split_load(targets, CONFIGMAPS.format(namespace="default") +
                                    "/bench-get", 16, duration)
    create_namespace(first, "bench-list")
    populate(first, "bench-list", LIST_ITEMS)
    figures["LIST 1000 x4"] = split_load(targets, CONFIGMAPS.format(namespace="bench-list"),
                                         4, duration)
    create_namespace(first, "bench-create")
    body = objects.body(objects.configmap(load.NAME.decode()))
    figures["CREATE x16"] = split_load(targets, CONFIGMAPS.format(namespace="bench-create"),
                                       16, duration, method="POST", body=body, expect=201)
    fan = watchers.fan_out(first, watchers_count, writes, rate, watch_on=targets)
    figures["watch"] = fan
    return figures


def start(setup: str, workdir: str) -> tuple[list, list[KapiserverProcess]]:
    """(etcd processes, kapiserver instances) of one set-up, started."""
    if setup == "sqlite":
        return [], [KapiserverProcess(os.path.join(workdir, "k"), workers=2).start(60)]
    if setup == "etcd":
        etcd = EtcdProcess(os.path.join(workdir, "etcd")).start()
        server = KapiserverProcess(os.path.join(workdir, "k"), {
            "storage-backend": "etcd3", "etcd-servers": [etcd.url]}, workers=2)
        return [etcd], [server.start(60)]
    cluster = EtcdCluster(os.path.join(workdir, "etcd"), size=3).start()
    port = free_port()
    servers = [KapiserverProcess(os.path.join(workdir, f"k{i}"), {
        "storage-backend": "etcd3", "etcd-servers": cluster.urls,
        "bind-address": f"127.0.0.{i + 1}", "advertise-address": f"192.0.2.{i + 1}"},
        workers=1, port=port) for i in range(2)]
    for server in servers:
        server.start(60)
    return cluster.members, servers


SETUPS = {"sqlite": "SQLite, 1 instance (2 workers)",
          "etcd": "etcd (1 member), 1 instance (2 workers)",
          "etcd-x2": "etcd (3 members), 2 instances (1 worker each)"}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per load run")
    parser.add_argument("--watchers", type=int, default=1000)
    parser.add_argument("--writes", type=int, default=50)
    parser.add_argument("--write-rate", type=float, default=20.0)
    parser.add_argument("--only", default=",".join(SETUPS))
    args = parser.parse_args(argv)
    if not etcd_available():
        print("etcd is not installed (apt-get install etcd-server): SQLite only")
    rows = []
    for setup in args.only.split(","):
        if setup != "sqlite" and not etcd_available():
            continue
        with tempfile.TemporaryDirectory() as workdir:
            etcds, servers = start(setup, workdir)
            try:
                rows.append(scenarios(SETUPS[setup], [credentials(s) for s in servers],
                                      args.duration, args.watchers, args.writes,
                                      args.write_rate))
            finally:
                for server in servers:
                    server.stop()
                for etcd in etcds:
                    etcd.stop()
    headers = ["set-up", "GET x16 req/s", "p99 ms", "LIST x4 lists/s", "p99 ms",
               "CREATE x16 /s", "p99 ms", "errors", f"watch x{args.watchers} p99 ms",
               "lost", "dup"]
    table(f"Storage back-ends side by side, {args.duration:g} s per load run", headers, [
        [r["setup"], r["GET x16"][0], r["GET x16"][2], r["LIST 1000 x4"][0],
         r["LIST 1000 x4"][2], r["CREATE x16"][0], r["CREATE x16"][2],
         r["GET x16"][3] + r["LIST 1000 x4"][3] + r["CREATE x16"][3],
         r["watch"]["p99_ms"], r["watch"]["lost"], r["watch"]["duplicates"]] for r in rows])
    if rows:
        base = rows[0]
        for r in rows[1:]:
            print(f"{r['setup']} / {base['setup']}: GET {r['GET x16'][0] / base['GET x16'][0]:.2f}"
                  f", LIST {r['LIST 1000 x4'][0] / base['LIST 1000 x4'][0]:.2f}, CREATE "
                  f"{r['CREATE x16'][0] / base['CREATE x16'][0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
