"""``tox -e bench``: figures for kapiserver against the bare-Flask ceiling, from one run.

Start-to-ready on an empty data dir, idle RSS of all server processes, and GET
throughput/latency at 1 and 16 keep-alive connections — kapiserver (``/version``
through the whole filter chain) beside a bare Flask app under the same gunicorn
settings (gevent workers, TLS, 2 workers). Then the API scenarios (``scenarios.py``,
``watchers.py``): GET of one ConfigMap and CREATE at 1, 16 and 64 connections (with p50
and p99; ``saturation.py`` has them at length, durable and not, beside both ceilings),
LIST of 1,000, paginated walks, read-modify-write PUTs on one object, pods beside
ConfigMaps (``pods.py``), protobuf
beside JSON (``protobuf_json.py``), and watch fan-out to 100 and 1,000 watchers, each
followed by what the server logged meanwhile; then memory with 10,000 pods beside 10,000
ConfigMaps, each on a fresh server; last, the key ratios beside their targets.
Compare ratios within one run only. Everything runs on loopback, bounded in time.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import traceback

from kapiserver.testing import KapiserverProcess, free_port

from . import load, pods, protobuf_json, scenarios, watchers
from .client import Credentials
from .report import ServerLog, table
from .startup import tree_memory_mib as memory_mib  # (RSS, PSS) of the server's processes


def start_to_ready(workdir: str, runs: int = 3) -> list[float]:
    times = []
    for i in range(runs):
        server = KapiserverProcess(os.path.join(workdir, f"ready-{i}"), workers=2)
        start = time.monotonic()
        server.start()
        times.append(time.monotonic() - start)
        server.stop()
    return times


def ceiling_server(workdir: str, pki_dir_server: KapiserverProcess):
    """Run the bare Flask app under kapiserver's gunicorn settings and TLS files."""
    port = free_port()
    pki = pki_dir_server.pki
    code = (
        "import sys, ssl\n"
        "from gunicorn.app.base import BaseApplication\n"
        "from kapiserver.server.serving import WORKER_CLASS, KEEPALIVE, ssl_context\n"
        "from tests.benchmarks.ceiling import create_app\n"
        "class App(BaseApplication):\n"
        "    def load_config(self):\n"
        f"        for k, v in dict(bind=['127.0.0.1:{port}'], workers=2, worker_class=WORKER_CLASS,\n"
        f"                         worker_connections=10000, certfile={pki.serving_cert_file!r},\n"
        f"                         keyfile={pki.serving_key_file!r}, ca_certs={pki.client_ca_bundle_file!r},\n"
        "                         cert_reqs=ssl.CERT_OPTIONAL, ssl_context=ssl_context,\n"
        "                         keepalive=KEEPALIVE, loglevel='warning',\n"
        "                         control_socket_disable=True).items():\n"
        "            self.cfg.set(k, v)\n"
        "    def load(self):\n"
        "        return create_app()\n"
        "App().run()\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    process = subprocess.Popen([sys.executable, "-c", code], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return process, port


def wait_for_ceiling(port: int, server: KapiserverProcess, cert: str, key: str) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            rate, _, _, errors = load.run("127.0.0.1", port, "/", server.ca_file, cert, key,
                                          2, 0.2)
            if rate and not errors:  # both workers answer (refused connections are errors)
                return
        except Exception:
            pass
        time.sleep(0.2)


SCENARIOS = ("version", "get", "list", "walk", "create", "rmw", "pods", "protobuf", "watch",
             "memory")


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per load run")
    parser.add_argument("--quick", action="store_true",
                        help="1 s runs, one start-to-ready, 100 watchers, 20 writes and "
                             "2,000 objects for memory only")
    parser.add_argument("--watchers", default="100,1000",
                        help="comma-separated watcher counts for the fan-out (default 100,1000)")
    parser.add_argument("--writes", type=int, default=50, help="writes made to the watchers")
    parser.add_argument("--write-rate", type=float, default=20.0, help="writes per second")
    parser.add_argument("--memory-objects", type=int, default=10_000,
                        help="objects of each kind created for the memory figures")
    parser.add_argument("--only", default=",".join(SCENARIOS),
                        help=f"comma-separated scenarios to run, of {','.join(SCENARIOS)}")
    args = parser.parse_args(argv)
    args.ready_runs = 3
    if args.quick:
        args.duration = min(args.duration, 1.0)
        args.watchers, args.writes, args.ready_runs = "100", min(args.writes, 20), 1
        args.memory_objects = min(args.memory_objects, 2_000)
    args.watcher_counts = [int(n) for n in args.watchers.split(",") if n]
    args.only = set(args.only.split(","))
    unknown = args.only - set(SCENARIOS)
    if unknown:
        parser.error(f"unknown scenario(s) {', '.join(sorted(unknown))}; "
                     f"valid: {', '.join(SCENARIOS)}")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    began = time.monotonic()
    print(f"host: {os.cpu_count()} CPU(s), load average %.2f %.2f %.2f at the start "
          "(other processes' load skews every figure; compare ratios within one run)"
          % os.getloadavg())
    with tempfile.TemporaryDirectory() as workdir:
        ready = start_to_ready(workdir, args.ready_runs)
        print(f"start to ready (empty data dir, 2 workers): "
              f"{', '.join(f'{t:.2f}s' for t in ready)}")

        server = KapiserverProcess(os.path.join(workdir, "main"), workers=2,
                                   config={"log-level": "warning"}).start()
        server_log = ServerLog(server.log_file, from_start=True)
        time.sleep(1.0)
        idle = memory_mib(server.process.pid)
        print("idle memory, all server processes: RSS %.1f MiB, PSS %.1f MiB" % idle)
        print(server_log.summary().replace("server log:", "server log after start-up:", 1))
        ceiling, port = ceiling_server(workdir, server)
        summary = {"ready": ready, "idle": idle}
        try:
            cert, key = server.client_cert("admin", ["system:masters"])
            wait_for_ceiling(port, server, cert, key)
            bench = scenarios.Bench(Credentials(server.port, server.ca_file, cert, key),
                                    Credentials(port, server.ca_file, cert, key),
                                    args.duration)
            runs = {"version": lambda: version_scenario(server, port, cert, key, args.duration),
                    "get": lambda: scenarios.get_one(bench),
                    "list": lambda: scenarios.list_many(bench),
                    "walk": lambda: scenarios.paginated_walk(bench),
                    "create": lambda: scenarios.create(bench),
                    "rmw": lambda: scenarios.read_modify_write(bench),
                    "pods": lambda: pods.beside(bench),
                    "protobuf": lambda: protobuf_json.compare(bench),
                    "watch": lambda: watch_scenario(server, bench, args, server_log)}
            if "walk" in args.only and "list" not in args.only:
                scenarios.populate_list(bench)
            for name in SCENARIOS:
                if name not in args.only or name == "memory":
                    continue
                try:
                    summary[name] = runs[name]()
                except Exception:  # one broken scenario must not hide the others' figures
                    print(f"\nscenario {name!r} failed:\n{traceback.format_exc()}")
                if name != "watch":  # it reports after each watcher count
                    print(server_log.summary())
            print("\nloaded memory, all server processes: RSS %.1f MiB, PSS %.1f MiB"
                  % memory_mib(server.process.pid))
        finally:
            ceiling.terminate()
            ceiling.wait(30)
            server.stop()
        if "memory" in args.only:  # fresh servers, once the main one has stopped
            try:
                summary["memory"] = pods.memory(workdir, args.memory_objects, memory_mib,
                                                args.duration)
            except Exception:
                print(f"\nscenario 'memory' failed:\n{traceback.format_exc()}")
        print_targets(summary)
    print(f"\n(whole run: {time.monotonic() - began:.0f} s; load average %.2f %.2f %.2f at "
          "the end)" % os.getloadavg())
    return 0


def version_scenario(server, port, cert, key, duration) -> None:
    """The original comparison: GET /version through the filter chain vs the bare app."""
    print(f"{'scenario':<34}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'errors':>8}")
    figures = {}
    for connections in (1, 16):
        for name, target_port, path in (("kapiserver GET /version", server.port, "/version"),
                                        ("ceiling GET (bare Flask)", port, "/")):
            rate, p50, p99, errors = load.run("127.0.0.1", target_port, path,
                                              server.ca_file, cert, key, connections,
                                              duration)
            figures[(name, connections)] = rate
            print(f"{name + f' x{connections}':<34}{rate:>10.0f}{p50:>10.2f}"
                  f"{p99:>10.2f}{errors:>8}")
    print("loaded memory, all server processes: RSS %.1f MiB, PSS %.1f MiB"
          % memory_mib(server.process.pid))
    for connections in (1, 16):
        ratio = (figures[("kapiserver GET /version", connections)]
                 / max(figures[("ceiling GET (bare Flask)", connections)], 1))
        print(f"kapiserver / ceiling at {connections} connection(s): {ratio:.0%}")


def watch_scenario(server, bench, args, server_log) -> list[dict]:
    """Fan-out to each watcher count in turn; one table for all of them."""
    rows = []
    for count in args.watcher_counts:
        def established(n, count=count):
            print(f"\n({n} of {count} watches established; server RSS %.1f MiB, "
                  "PSS %.1f MiB)" % memory_mib(server.process.pid))

        workers = [int(pid) for pid in subprocess.run(
            ["pgrep", "-P", str(server.process.pid)], capture_output=True,
            text=True).stdout.split()]
        try:
            rows.append(watchers.fan_out(bench.kapiserver, count, args.writes, args.write_rate,
                                         on_established=established, server_pids=workers))
        except Exception:  # report the other counts all the same
            print(f"\nwatch fan-out to {count} failed:\n{traceback.format_exc()}")
        print(server_log.summary().replace("server log:", f"server log ({count} watchers):", 1))
    watchers.report(rows, args.writes, args.write_rate)
    return rows


def print_targets(summary: dict) -> None:
    """The key figures beside their targets (printed, never asserted)."""
    rows = []

    def add(figure, shown, target, met):
        rows.append([figure, shown, target, "yes" if met else "NO"])

    def versus(figures, connections):
        mine, ceiling = figures[connections]
        return mine[0] / ceiling[0] if ceiling[0] else 0.0

    def tail(figures, connections):
        p50, p99 = figures[connections][0][1:3]
        return p99 / p50 if p50 else float("inf")

    if "get" in summary:
        value = versus(summary["get"], 16)
        add("GET one ConfigMap x16 / ceiling", f"{value:.0%}", ">= 80%", value >= 0.8)
        for connections in (16, 64):
            value = tail(summary["get"], connections)
            add(f"GET one ConfigMap x{connections}: p99 / p50", f"{value:.1f}", "<= 10",
                value <= 10)
    if "list" in summary:
        for connections in summary["list"]:
            value = versus(summary["list"], connections)
            add(f"LIST 1,000 x{connections} / ceiling", f"{value:.0%}", ">= 100%", value >= 1)
    if "create" in summary:
        value = versus(summary["create"], 16)
        add("CREATE x16 (durable) / ceiling POST", f"{value:.0%}", ">= 50%", value >= 0.5)
        for connections in (16, 64):
            value = tail(summary["create"], connections)
            add(f"CREATE x{connections}: p99 / p50", f"{value:.1f}", "<= 10", value <= 10)
    if "rmw" in summary:
        lost = summary["rmw"]["lost"]
        add("read-modify-write: lost updates", str(lost), "0", lost == 0)
    if "pods" in summary:
        for (what, connections), (mine, theirs) in summary["pods"].items():
            value = mine[0] / theirs[0] if theirs[0] else 0.0
            add(f"{what.upper()} 1,000 pods x{connections} / ConfigMaps", f"{value:.0%}",
                ">= 70%", value >= 0.7)
    if "protobuf" in summary:
        for (verb, kind, connections), (mine, theirs) in summary["protobuf"].items():
            if verb.startswith("LIST"):
                value = mine[0] / theirs[0] if theirs[0] else 0.0
                add(f"{verb} {kind} x{connections}: protobuf / JSON", f"{value:.0%}",
                    ">= 100%", value >= 1)
    if "memory" in summary:
        for kind, figures in summary["memory"].items():
            rss = figures["listed"][0]
            shown = f"{rss:.1f} MiB"
            if kind == "pods":
                add(f"RSS with {figures['items']:,} pods (after LISTs)", shown, "< 250 MiB",
                    rss < 250)
            else:
                rows.append([f"RSS with {figures['items']:,} ConfigMaps (after LISTs)", shown,
                             "-", "-"])
    for row in summary.get("watch", []):
        add(f"{row['watchers']} watchers: delivery delay p99", f"{row['p99_ms']:.1f} ms",
            "< 100 ms", row["p99_ms"] < 100)
        add(f"{row['watchers']} watchers: lost events (watchers never started)",
            f"{row['lost']} ({row['failed']})", "0 (0)", row["lost"] == row["failed"] == 0)
    rss = summary["idle"][0]
    add("idle RSS, all server processes", f"{rss:.1f} MiB", "< 150 MiB", rss < 150)
    worst = max(summary["ready"])
    add("start to ready (worst run)", f"{worst:.2f} s", "< 1 s", worst < 1)
    table("Targets", ["figure", "measured", "target", "met"], rows)


if __name__ == "__main__":
    sys.exit(main())
