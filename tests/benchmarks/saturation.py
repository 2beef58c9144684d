"""``python -m tests.benchmarks.saturation``: GET and CREATE at saturation (16 and 64
connections) beside the bare-Flask ceiling, with their tail latency, in one run.

Servers, all running at once, measured in turn (``--rounds`` times, interleaved, each
figure the median of its rounds):

* kapiserver on SQLite, durable (the default ``--sqlite-synchronous=full``: every write
  fsynced before its 201), 2 workers;
* kapiserver with ``--sqlite-synchronous=normal`` (the old mode: no fsync), 2 workers;
* the ceiling (``../shared/bench/ceiling_app.py``, falling back to ``ceiling.py``) under
  kapiserver's gunicorn settings: its worker class, TLS, 2 workers, keep-alive;
* the same ceiling under gunicorn's stock gevent worker, whose connections do not take
  turns: its p99 shows the starvation ``worker.py`` ("Connections take turns") removes.

Scenarios: GET of one ~1 KiB ConfigMap at 1, 16 and 64 connections; CREATE of new
ConfigMaps at 16 and 64. Each row gives requests/s, p50, p99, p99/p50 and "fair" (the
least-served connection's answers over the mean's: near 0 means a connection starved).
The load generator (``load.py``) opens its connections before the clock starts and
shares the machine's cores with the servers: compare the ratios within one run only.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from kapiserver.server.serving import KEEPALIVE, WORKER_CLASS
from kapiserver.testing import KapiserverProcess, free_port

from . import load, objects
from .client import Client, Credentials, create_namespace
from .report import table

CONFIGMAPS = "/api/v1/namespaces/{namespace}/configmaps"
SHARED_CEILING = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "bench",
                              "ceiling_app.py")
STOCK_WORKER = "gevent"

#: (name, connections, kind): kind "get" or "create".
SCENARIOS = (("GET one ConfigMap", 1, "get"), ("GET one ConfigMap", 16, "get"),
             ("GET one ConfigMap", 64, "get"), ("CREATE ConfigMaps", 16, "create"),
             ("CREATE ConfigMaps", 64, "create"))


def start_ceiling(server: KapiserverProcess, worker_class: str) -> tuple[subprocess.Popen, int,
                                                                          dict]:
    """The ceiling under kapiserver's gunicorn settings but ``worker_class``: (process,
    port, its paths)."""
    port = free_port()
    pki = server.pki
    if os.path.exists(SHARED_CEILING):
        load_app = ("sys.path.insert(0, %r)\nimport ceiling_app\nreturn_app = ceiling_app.app"
                    % os.path.dirname(os.path.abspath(SHARED_CEILING)))
        paths = {"get": CONFIGMAPS.format(namespace="default") + "/bench-get",
                 "create": CONFIGMAPS.format(namespace="bench-create")}
    else:
        load_app = "from tests.benchmarks.ceiling import create_app\nreturn_app = create_app()"
        paths = {"get": "/object", "create": "/create"}
    code = (
        "import sys, ssl\n"
        "from gunicorn.app.base import BaseApplication\n"
        "from kapiserver.server.serving import ssl_context\n"
        "class App(BaseApplication):\n"
        "    def load_config(self):\n"
        f"        for k, v in dict(bind=['127.0.0.1:{port}'], workers=2,\n"
        f"                         worker_class={worker_class!r}, worker_connections=10000,\n"
        f"                         certfile={pki.serving_cert_file!r},\n"
        f"                         keyfile={pki.serving_key_file!r},\n"
        f"                         ca_certs={pki.client_ca_bundle_file!r},\n"
        "                         cert_reqs=ssl.CERT_OPTIONAL, ssl_context=ssl_context,\n"
        f"                         keepalive={KEEPALIVE}, loglevel='warning',\n"
        "                         control_socket_disable=True).items():\n"
        "            self.cfg.set(k, v)\n"
        "    def load(self):\n"
        + "".join(f"        {line}\n" for line in load_app.splitlines()) +
        "        return return_app\n"
        "App().run()\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    process = subprocess.Popen([sys.executable, "-c", code], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cert, key = server.client_cert("admin", ["system:masters"])
    paths["tls"] = (server.ca_file, cert, key)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            figures = load.measure("127.0.0.1", port, paths["get"], server.ca_file, cert, key,
                                   2, 0.2)
            if figures.rate and not figures.errors:
                break
        except Exception:
            pass
        time.sleep(0.2)
    return process, port, paths


def kapiserver_paths(server: KapiserverProcess) -> dict:
    cert, key = server.client_cert("admin", ["system:masters"])
    target = Credentials(server.port, server.ca_file, cert, key)
    client = Client(target)
    status, body = client.request("POST", CONFIGMAPS.format(namespace="default"),
                                  objects.configmap("bench-get", seed="bench-get"))
    client.close()
    if status != 201:
        raise RuntimeError(f"creating the ConfigMap to GET: {status} {body}")
    return {"get": CONFIGMAPS.format(namespace="default") + "/bench-get",
            "create": "/api/v1/namespaces/{namespace}/configmaps", "target": target,
            "tls": (server.ca_file, cert, key)}


def measure(port: int, paths: dict, connections: int, kind: str, duration: float,
            round_: int) -> load.Figures:
    ca, cert, key = paths["tls"]
    if kind == "get":
        return load.measure("127.0.0.1", port, paths["get"], ca, cert, key, connections,
                            duration)
    path = paths["create"]
    if "{namespace}" in path:  # kapiserver: a fresh namespace for each run
        namespace = f"bench-create-{connections}-{round_}"
        create_namespace(paths["target"], namespace)
        path = path.format(namespace=namespace)
    body = objects.body(objects.configmap(load.NAME.decode()))
    return load.measure("127.0.0.1", port, path, ca, cert, key, connections, duration,
                        method="POST", body=body, expect=201)


def median_figures(runs: list[load.Figures]) -> load.Figures:
    return load.Figures(*(statistics.median(values) for values in zip(*runs)))


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.saturation")
    parser.add_argument("--duration", type=float, default=4.0, help="seconds per run")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each scenario")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    print(f"host: {os.cpu_count()} CPU(s), load average %.2f %.2f %.2f at the start "
          "(compare ratios within one run)" % os.getloadavg())
    began = time.monotonic()
    with tempfile.TemporaryDirectory() as workdir:
        config = {"log-level": "warning"}
        durable = KapiserverProcess(os.path.join(workdir, "durable"), config,
                                    workers=2).start(60)
        normal = KapiserverProcess(os.path.join(workdir, "normal"),
                                   {**config, "sqlite-synchronous": "normal"},
                                   workers=2).start(60)
        ceilings = []
        try:
            targets = {"kapiserver (durable)": (durable.port, kapiserver_paths(durable)),
                       "kapiserver (sync normal)": (normal.port, kapiserver_paths(normal))}
            for name, worker_class in (("ceiling", WORKER_CLASS),
                                       ("ceiling, stock gevent worker", STOCK_WORKER)):
                process, port, paths = start_ceiling(durable, worker_class)
                ceilings.append(process)
                targets[name] = (port, paths)
            runs: dict = {}
            for round_ in range(args.rounds):
                for scenario in SCENARIOS:
                    for name, (port, paths) in targets.items():
                        figures = measure(port, paths, scenario[1], scenario[2],
                                          args.duration, round_)
                        runs.setdefault((scenario, name), []).append(figures)
            report(runs, targets, args)
        finally:
            for process in ceilings:
                process.terminate()
                process.wait(30)
            normal.stop()
            durable.stop()
    print(f"\n(whole run: {time.monotonic() - began:.0f} s; load average %.2f %.2f %.2f at "
          "the end)" % os.getloadavg())
    return 0


def report(runs: dict, targets: dict, args) -> None:
    figures = {key: median_figures(values) for key, values in runs.items()}
    for scenario in SCENARIOS:
        rows = []
        ceiling = figures[(scenario, "ceiling")]
        for name in targets:
            f = figures[(scenario, name)]
            spread = [r.rate for r in runs[(scenario, name)]]
            rows.append([name, f.rate, f"{min(spread):.0f}-{max(spread):.0f}", f.p50, f.p99,
                         f.p99 / f.p50 if f.p50 else 0.0, f.max, f.fairness, f.errors,
                         f"{f.rate / ceiling.rate:.0%}" if ceiling.rate else "n/a"])
        table(f"{scenario[0]} x{scenario[1]} (median of {args.rounds} runs of "
              f"{args.duration:g} s)",
              ["server", "req/s", "range", "p50 ms", "p99 ms", "p99/p50", "max ms", "fair",
               "errors", "/ ceiling"], rows)
    rows = []

    def add(label, shown, target, met):
        rows.append([label, shown, target, "yes" if met else "NO"])

    def ratio(scenario, name="kapiserver (durable)"):
        ceiling = figures[(scenario, "ceiling")].rate
        return figures[(scenario, name)].rate / ceiling if ceiling else 0.0

    get16, get64, create16, create64 = SCENARIOS[1], SCENARIOS[2], SCENARIOS[3], SCENARIOS[4]
    value = ratio(get16)
    add("GET x16 / ceiling", f"{value:.0%}", ">= 80%", value >= 0.8)
    for scenario in (get16, get64, create16, create64):
        f = figures[(scenario, "kapiserver (durable)")]
        tail = f.p99 / f.p50 if f.p50 else float("inf")
        add(f"{scenario[0].split()[0]} x{scenario[1]}: p99 / p50", f"{tail:.1f}",
            "<= 10", tail <= 10)
    value = ratio(create16)
    add("CREATE x16 (durable) / ceiling", f"{value:.0%}", ">= 50%", value >= 0.5)
    value = ratio(create16, "kapiserver (sync normal)")
    rows.append(["CREATE x16 (sync normal) / ceiling", f"{value:.0%}", "-", "-"])
    durable_rate = figures[(create16, "kapiserver (durable)")].rate
    normal_rate = figures[(create16, "kapiserver (sync normal)")].rate
    if normal_rate:
        rows.append(["CREATE x16: durable / sync normal", f"{durable_rate / normal_rate:.0%}",
                     "-", "-"])
    for scenario in (get16, get64):
        stock = figures[(scenario, "ceiling, stock gevent worker")]
        rows.append([f"stock-worker ceiling GET x{scenario[1]}: p99 / p50",
                     f"{stock.p99 / stock.p50:.1f}" if stock.p50 else "n/a", "-", "-"])
    table("Targets (issue 17)", ["figure", "measured", "target", "met"], rows)


if __name__ == "__main__":
    sys.exit(main())
