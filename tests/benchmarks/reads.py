"""``python -m tests.benchmarks.reads``: GET and LIST on SQLite and on etcd beside the
bare-Flask ceiling, in one run, and the memory a server holds with 10,000 objects.

Scenarios (each bounded in time): GET one ~1 KiB ConfigMap at 16 connections, LIST
1,000 ConfigMaps at 1 and 4 connections, on kapiserver over SQLite, over a one-member
etcd (both 2 workers), and on the ceiling: ``../shared/bench/ceiling_app.py`` (falling
back to ``tests/benchmarks/ceiling.py``) under kapiserver's gunicorn settings, which
serialises its 1,000-item list on every request (first, the same LIST and a GET in this
process, in CPU time: from SQLite, from the read cache, and ``json.dumps``). All three
servers run at once and are measured in turn, ``--rounds`` times, keeping each
scenario's best run (the others measured the neighbours). Then, on each server, RSS of
all its processes idle (just started) and once 10,000 ConfigMaps more were created and
LISTed. Everything shares this machine's cores: compare the ratios printed at the end,
within one run only.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

from kapiserver.etcdtesting import EtcdProcess, etcd_available
from kapiserver.testing import KapiserverProcess, free_port

from . import load, objects
from .__main__ import memory_mib
from .client import Client, Credentials, create_namespace, populate
from .report import table

CONFIGMAPS = "/api/v1/namespaces/{namespace}/configmaps"
LIST_ITEMS = 1000
SHARED_CEILING = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "bench",
                              "ceiling_app.py")


def credentials(server: KapiserverProcess, port: int = 0) -> Credentials:
    cert, key = server.client_cert("admin", ["system:masters"])
    return Credentials(port or server.port, server.ca_file, cert, key,
                       host=server.config.get("bind-address", "127.0.0.1"))


def start_ceiling(server: KapiserverProcess) -> tuple[subprocess.Popen, int, dict]:
    """The ceiling app under kapiserver's gunicorn settings and TLS files: (process, port,
    its paths for GET and LIST)."""
    port = free_port()
    pki = server.pki
    shared = os.path.exists(SHARED_CEILING)
    if shared:
        load_app = ("sys.path.insert(0, %r)\nimport ceiling_app\nreturn_app = ceiling_app.app"
                    % os.path.dirname(os.path.abspath(SHARED_CEILING)))
        paths = {"get": CONFIGMAPS.format(namespace="default") + "/bench-get",
                 "list": CONFIGMAPS.format(namespace="bench-list")}
    else:
        load_app = ("from tests.benchmarks.ceiling import create_app\n"
                    "return_app = create_app()")
        paths = {"get": "/object", "list": "/list"}
    code = (
        "import sys, ssl\n"
        "from gunicorn.app.base import BaseApplication\n"
        "from kapiserver.server.serving import WORKER_CLASS, KEEPALIVE, ssl_context\n"
        "class App(BaseApplication):\n"
        "    def load_config(self):\n"
        f"        for k, v in dict(bind=['127.0.0.1:{port}'], workers=2,\n"
        "                         worker_class=WORKER_CLASS, worker_connections=10000,\n"
        f"                         certfile={pki.serving_cert_file!r},\n"
        f"                         keyfile={pki.serving_key_file!r},\n"
        f"                         ca_certs={pki.client_ca_bundle_file!r},\n"
        "                         cert_reqs=ssl.CERT_OPTIONAL, ssl_context=ssl_context,\n"
        "                         keepalive=KEEPALIVE, loglevel='warning',\n"
        "                         control_socket_disable=True).items():\n"
        "            self.cfg.set(k, v)\n"
        "    def load(self):\n"
        + "".join(f"        {line}\n" for line in load_app.splitlines()) +
        "        return return_app\n"
        "App().run()\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p),
               CEILING_LIST_N=str(LIST_ITEMS))
    process = subprocess.Popen([sys.executable, "-c", code], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    creds = credentials(server, port)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            rate, _, _, errors = load.run("127.0.0.1", port, paths["get"], creds.ca,
                                          creds.cert, creds.key, 1, 0.2)
            if rate and not errors:
                break
        except Exception:
            pass
        time.sleep(0.2)
    return process, port, paths


def run(target: Credentials, path: str, connections: int, duration: float):
    return load.run(target.host, target.port, path, target.ca, target.cert, target.key,
                    connections, duration)


def scenarios(target: Credentials, paths: dict, duration: float) -> dict:
    return {"GET x16": run(target, paths["get"], 16, duration),
            "LIST x1": run(target, paths["list"], 1, duration),
            "LIST x4": run(target, paths["list"], 4, duration)}


def set_up(target: Credentials) -> None:
    client = Client(target)
    status, body = client.request("POST", CONFIGMAPS.format(namespace="default"),
                                  objects.configmap("bench-get", seed="bench-get"))
    client.close()
    if status != 201:
        raise RuntimeError(f"creating the ConfigMap to GET: {status} {body}")
    create_namespace(target, "bench-list")
    populate(target, "bench-list", LIST_ITEMS)


def memory(server: KapiserverProcess, target: Credentials, count: int) -> float:
    """RSS (MiB) of the server's processes with ``count`` more ConfigMaps created and
    LISTed (twice on each of a few connections: every worker serves some)."""
    create_namespace(target, "bench-memory")
    populate(target, "bench-memory", count)
    for _ in range(4):
        client = Client(target, timeout=120)
        for _ in range(2):
            status, _ = client.request("GET", CONFIGMAPS.format(namespace="bench-memory"))
            if status != 200:
                raise RuntimeError(f"LIST of {count} ConfigMaps: {status}")
        client.close()
    time.sleep(1.0)
    return memory_mib(server.process.pid)[0]


def start(setup: str, workdir: str) -> tuple[list, KapiserverProcess]:
    config = {"log-level": "warning"}
    if setup == "sqlite":
        return [], KapiserverProcess(os.path.join(workdir, "k-sqlite"), config,
                                     workers=2).start(60)
    etcd = EtcdProcess(os.path.join(workdir, "etcd")).start()
    server = KapiserverProcess(os.path.join(workdir, "k-etcd"), {
        **config, "storage-backend": "etcd3", "etcd-servers": [etcd.url]}, workers=2)
    return [etcd], server.start(60)


def in_process(items: int = LIST_ITEMS) -> None:
    """CPU time of one LIST (``list_json``) and one GET (``get_json``) of ~1 KiB
    ConfigMaps in this process: from a SQLite store, and from the read cache (objects
    written canonical, as a server writes them, and not) beside ``json.dumps`` of the
    same list (the ceiling's work). CPU time: the machine's other load matters less."""
    import json

    from kapiserver.registry.store import RegistryStore
    from kapiserver.storage.sqlite import SQLiteStore
    from kapiserver.storage.watchcache import WatchCache
    from kapiserver_plugins.core.configmaps import CONFIGMAPS, ConfigMapStrategy

    def cpu_ms(fn, runs: int) -> float:
        fn()
        start = time.process_time()
        for _ in range(runs):
            fn()
        return (time.process_time() - start) / runs * 1000

    rows = []
    for canonical in (True, False):
        with tempfile.TemporaryDirectory() as workdir:
            store = SQLiteStore(os.path.join(workdir, "kv.db"))
            cache = WatchCache(store, interval=0.01)
            registry = RegistryStore(CONFIGMAPS, ConfigMapStrategy(CONFIGMAPS), store,
                                     cache.written)
            try:
                for i in range(items):
                    obj = objects.configmap(f"cm-{i:05d}", seed=f"cm-{i:05d}")
                    if canonical:  # kind first, as the server's decoding leaves it
                        obj = {"kind": obj.pop("kind"), **obj}
                    registry.create(obj, "bench")
                cache.wait_for(store.current_revision(), 10)
                reads = registry.read_cache
                for source, read_cache in (("read cache", reads), ("SQLite", None)):
                    registry.read_cache = read_cache
                    rows.append([f"{source}, {'canonical' if canonical else 'other'} values",
                                 cpu_ms(lambda: registry.list_json("bench"), 20),
                                 cpu_ms(lambda: registry.get_json("bench", "cm-00001"), 500)
                                 * 1000])
                listed = json.loads(registry.list_json("bench"))
            finally:
                cache.close()
                store.close()
    rows.append(["json.dumps of the list (the ceiling)",
                 cpu_ms(lambda: json.dumps(listed, separators=(",", ":")), 10), "-"])
    table(f"In process: CPU per LIST of {items:,} ConfigMaps and per GET",
          ["source", "LIST ms", "GET us"], rows)


def best(runs: list[dict]) -> dict:
    """Of several rounds, each scenario's run with the highest rate: on a shared machine
    a slower run measures the neighbours, not the server."""
    return {what: max((r[what] for r in runs), key=lambda figures: figures[0])
            for what in runs[0]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per load run")
    parser.add_argument("--rounds", type=int, default=2,
                        help="rounds of every scenario on every server, in turn (best kept)")
    parser.add_argument("--memory-objects", type=int, default=10_000)
    parser.add_argument("--only", default="sqlite,etcd")
    args = parser.parse_args(argv)
    setups = [s for s in args.only.split(",") if s == "sqlite" or etcd_available()]
    print("host: %d CPU(s), load average %.2f %.2f %.2f at the start"
          % ((os.cpu_count(),) + os.getloadavg()))
    in_process()
    runs, memory_rows, etcds, servers, ceiling = {}, [], [], {}, None
    paths = {"get": CONFIGMAPS.format(namespace="default") + "/bench-get",
             "list": CONFIGMAPS.format(namespace="bench-list")}
    with tempfile.TemporaryDirectory() as workdir:
        try:
            # Every server up at once, the rounds in turn: each is measured beside the
            # same neighbours.
            targets, idle = {}, {}
            for setup in setups:
                started, server = start(setup, workdir)
                etcds += started
                servers[setup] = server
                time.sleep(1.0)
                idle[setup] = memory_mib(server.process.pid)[0]
                targets[f"kapiserver on {setup}"] = (credentials(server), paths)
                set_up(credentials(server))
            first = next(iter(servers.values()))
            ceiling, port, ceiling_paths = start_ceiling(first)
            targets = {"ceiling (bare Flask)": (credentials(first, port), ceiling_paths),
                       **targets}
            time.sleep(0.5)
            for _ in range(max(args.rounds, 1)):
                for name, (target, target_paths) in targets.items():
                    runs.setdefault(name, []).append(
                        scenarios(target, target_paths, args.duration))
            if args.memory_objects:
                for setup, server in servers.items():
                    memory_rows.append([setup, idle[setup],
                                        memory(server, credentials(server),
                                               args.memory_objects)])
        finally:
            if ceiling is not None:
                ceiling.terminate()
                ceiling.wait(30)
            for server in servers.values():
                server.stop()
            for etcd in etcds:
                etcd.stop()
    rows = {name: best(figures) for name, figures in runs.items()}
    headers = ["server", "GET x16 req/s", "p50 ms", "p99 ms", "LIST x1 /s", "p99 ms",
               "LIST x4 /s", "p99 ms", "errors"]
    table(f"GET and LIST, {args.duration:g} s per run, best of {args.rounds} rounds", headers, [
        [name, r["GET x16"][0], r["GET x16"][1], r["GET x16"][2], r["LIST x1"][0],
         r["LIST x1"][2], r["LIST x4"][0], r["LIST x4"][2],
         sum(figures[3] for figures in r.values())] for name, r in rows.items()])
    ceiling = rows.get("ceiling (bare Flask)")
    for name, r in rows.items():
        if r is ceiling:
            continue
        print(f"{name} / ceiling: " + ", ".join(
            f"{what} {r[what][0] / ceiling[what][0]:.2f}x" for what in r if ceiling[what][0]))
    if "kapiserver on sqlite" in rows and "kapiserver on etcd" in rows:
        base, other = rows["kapiserver on sqlite"], rows["kapiserver on etcd"]
        print("etcd / SQLite: " + ", ".join(
            f"{what} {other[what][0] / base[what][0]:.2f}x" for what in base if base[what][0]))
    if memory_rows:
        table(f"RSS of all server processes (MiB): idle after start, and after the "
              f"scenarios with {args.memory_objects:,} ConfigMaps more, LISTed",
              ["backend", "idle", "loaded"], memory_rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
