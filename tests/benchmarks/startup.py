"""``python -m tests.benchmarks.startup``: start to ready, start-up CPU, idle memory, first requests.

A 2-worker server on an empty data dir, started ``--runs`` times as ``kapiserver serve``:
* start to ready: from starting the process to the first 200 of ``/readyz`` once every
  worker has logged that its post-start hooks finished (``KapiserverProcess.start``);
* CPU seconds the whole process tree used until then (the master, the workers, and the
  children the master already reaped, such as the one that prepares TLS);
* idle memory one second later: RSS and PSS (PSS counts pages shared after fork once)
  summed over the master and its workers;
* the first requests one worker of a fresh server answers for built-in kinds (a LIST, a
  CREATE, a GET, a Table, OpenAPI), each beside the same request again, to show what
  start-up left to the first request;
* a restart on the last run's data dir, where the bootstrap objects exist already.

Targets (issue 17): start to ready < 0.6 s, idle memory < 120 MiB (RSS counts the pages
the workers share with the master in each of them; PSS counts them once). Prints figures,
asserts nothing; every wait is bounded.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import requests

from kapiserver.testing import KapiserverProcess

from .report import table

TARGET_READY = 0.6
TARGET_MEMORY = 120.0

DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "first"},
    "spec": {"selector": {"matchLabels": {"app": "first"}},
             "template": {"metadata": {"labels": {"app": "first"}},
                          "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
}

#: (label, method, path, body): the first requests, each sent twice.
FIRST_REQUESTS = [
    ("LIST deployments", "GET", "/apis/apps/v1/namespaces/default/deployments", None),
    ("CREATE deployment", "POST", "/apis/apps/v1/namespaces/default/deployments", DEPLOYMENT),
    ("GET deployment", "GET", "/apis/apps/v1/namespaces/default/deployments/first", None),
    ("LIST cronjobs", "GET", "/apis/batch/v1/namespaces/default/cronjobs", None),
    ("LIST pods as Table", "GET", "/api/v1/namespaces/default/pods", None),
    # kubectl's way: the v3 index, then a group version's document; v2 on its own.
    ("GET /openapi/v3", "GET", "/openapi/v3", None),
    ("GET /openapi/v3/apis/apps/v1", "GET", "/openapi/v3/apis/apps/v1", None),
    ("GET /openapi/v2", "GET", "/openapi/v2", None),
]


def process_tree(pid: int) -> list[int]:
    """``pid`` and its children."""
    try:
        children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True,
                                  text=True, timeout=10).stdout.split()
    except (OSError, subprocess.TimeoutExpired):
        children = []
    return [pid, *(int(c) for c in children)]


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds of ``pid``, its live children and the children it has reaped."""
    total = 0.0
    for n, p in enumerate(process_tree(pid)):
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # utime, stime; and for the master, cutime and cstime (reaped children)
        ticks = [int(x) for x in fields[11:15]] if n == 0 else [int(x) for x in fields[11:13]]
        total += sum(ticks) / os.sysconf("SC_CLK_TCK")
    return total


def memory_mib(pid: int) -> tuple[float, float]:
    """(RSS, PSS) of the one process ``pid``, in MiB (PSS counts shared pages once)."""
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Rss:"):
                    rss += int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss += int(line.split()[1])
    except OSError:
        pass
    return rss / 1024, pss / 1024


def tree_memory_mib(pid: int) -> tuple[float, float]:
    """(RSS, PSS) summed over ``pid`` and its children, in MiB."""
    figures = [memory_mib(p) for p in process_tree(pid)]
    return sum(f[0] for f in figures), sum(f[1] for f in figures)


def process_memory_mib(pid: int) -> list[tuple[str, float, float]]:
    """(role, RSS, PSS) of each process of the tree."""
    return [("master" if n == 0 else f"worker {p}", *memory_mib(p))
            for n, p in enumerate(process_tree(pid))]


def tree_command(tree: str, workdir: str) -> list[str]:
    """``kapiserver serve`` as the source tree ``tree`` (a checkout: ``kapiserver/``,
    ``plugins/``) has it, whatever is installed; ``tree``'s packages are linked into
    ``workdir`` under their import names."""
    path = os.path.join(workdir, "tree-" + str(abs(hash(tree))))
    os.makedirs(path, exist_ok=True)
    for name, source in (("kapiserver", "kapiserver"), ("kapiserver_plugins", "plugins")):
        if not os.path.exists(os.path.join(path, name)):
            os.symlink(os.path.join(os.path.abspath(tree), source), os.path.join(path, name))
    code = (f"import sys; sys.path.insert(0, {path!r}); "
            "from kapiserver.cli import main; sys.exit(main())")
    return [sys.executable, "-c", code, "serve"]


def start_once(workdir: str, settle: float, env: dict, command=None) -> dict:
    """One start (on ``workdir``'s data dir, empty or not): ready time, CPU, then memory
    after ``settle`` seconds; the server is left running under ``"server"``. ``command``:
    ``kapiserver serve`` of another tree (``tree_command``)."""
    server = KapiserverProcess(workdir, workers=2, env=env)
    if command:
        server.command = [*command, "--config", server.config_file]
    began = time.monotonic()
    server.start(timeout=120)
    ready = time.monotonic() - began
    cpu = tree_cpu_seconds(server.process.pid)
    time.sleep(settle)
    return {"ready": ready, "cpu": cpu, "memory": tree_memory_mib(server.process.pid),
            "processes": process_memory_mib(server.process.pid), "server": server}


def first_requests(server: KapiserverProcess) -> list[list]:
    """Each of ``FIRST_REQUESTS`` on one kept-alive connection (so one worker): how long
    the first took, and the same request again (a GET for the CREATE)."""
    session = requests.Session()
    session.cert = server.client_cert("admin", ["system:masters"])
    rows = []
    for label, method, path, body in FIRST_REQUESTS:
        times = []
        for attempt in range(2):
            headers = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"} \
                if label.endswith("Table") else {}
            data = None
            if body is not None and attempt == 0:
                data, headers["Content-Type"] = json.dumps(body), "application/json"
            start = time.perf_counter()
            response = session.request(method if attempt == 0 else "GET", server.url + path,
                                       data=data, headers=headers, timeout=60,
                                       verify=server.ca_file)  # REQUESTS_CA_BUNDLE wins
                                                               # over a session's verify
            elapsed = (time.perf_counter() - start) * 1000
            times.append(elapsed if response.status_code < 400 else
                         f"HTTP {response.status_code}")
        rows.append([label, *times])
    session.close()
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.startup")
    parser.add_argument("--runs", type=int, default=3, help="starts on fresh data dirs")
    parser.add_argument("--settle", type=float, default=1.0,
                        help="seconds between ready and the memory reading")
    parser.add_argument("--baseline", metavar="TREE",
                        help="a checkout of another commit (git worktree add TREE COMMIT): "
                             "its starts alternate with this tree's, and the medians of "
                             "both are compared (both run from linked source trees)")
    args = parser.parse_args(argv)
    print("host: %d CPU(s), load average %.2f %.2f %.2f at the start (other processes' "
          "load stretches start-up; compare within one run)" % (os.cpu_count(),
                                                                 *os.getloadavg()))
    with tempfile.TemporaryDirectory() as workdir:
        # An installed kapiserver has its bytecode compiled (pip compiles on install); a
        # source tree under PYTHONDONTWRITEBYTECODE would compile every module on every
        # start. The servers here keep their bytecode in a directory of their own: the
        # first start writes it (shown apart), the others read it.
        env = {"PYTHONPYCACHEPREFIX": os.path.join(workdir, "bytecode"),
               "PYTHONDONTWRITEBYTECODE": ""}
        cold = start_once(os.path.join(workdir, "cold"), 0.0, env)
        cold.pop("server").stop()
        runs = []
        for i in range(max(1, args.runs)):
            figures = start_once(os.path.join(workdir, f"run-{i}"), args.settle, env)
            server = figures.pop("server")
            if i == args.runs - 1:
                try:
                    first = first_requests(server)
                finally:
                    server.stop()
            else:
                server.stop()
            runs.append(figures)
        # A restart finds the bootstrap objects there already.
        restart = start_once(os.path.join(workdir, f"run-{len(runs) - 1}"), args.settle, env)
        restart.pop("server").stop()
        if args.baseline:
            compared = compare(workdir, args, env)
    rows = [["compiling bytecode", cold["ready"], cold["cpu"], "", ""]]
    rows += [[f"#{n + 1}", r["ready"], r["cpu"], *r["memory"]] for n, r in enumerate(runs)]
    rows += [["restart (data dir kept)", restart["ready"], restart["cpu"],
              *restart["memory"]]]
    table("start to ready (2 workers; empty data dir but the restart)",
          ["run", "ready s", "CPU s (all processes)", "idle RSS MiB", "idle PSS MiB"], rows)
    table("idle memory per process (last run)", ["process", "RSS MiB", "PSS MiB"],
          [list(row) for row in runs[-1]["processes"]])
    table("first requests of a fresh server (one kept-alive connection: one worker)",
          ["request", "first ms", "again ms"], first)
    if args.baseline:
        table(f"this tree beside {args.baseline} (alternating starts, medians)",
              ["tree", "starts", "ready s", "CPU s", "idle RSS MiB", "idle PSS MiB"], compared)
    worst = max(r["ready"] for r in runs)
    rss = max(r["memory"][0] for r in runs)
    pss = max(r["memory"][1] for r in runs)
    table("targets (issue 17)", ["figure", "value", "target", "met"],
          [["start to ready (worst run)", f"{worst:.2f} s", f"< {TARGET_READY} s",
            "yes" if worst < TARGET_READY else "NO"],
           ["idle RSS, all server processes", f"{rss:.1f} MiB", f"< {TARGET_MEMORY:.0f} MiB",
            "yes" if rss < TARGET_MEMORY else "NO"],
           ["idle PSS, all server processes", f"{pss:.1f} MiB", f"< {TARGET_MEMORY:.0f} MiB",
            "yes" if pss < TARGET_MEMORY else "NO"]])
    return 0


def compare(workdir: str, args, env: dict) -> list[list]:
    """Starts of this tree and of ``args.baseline`` in turn (after one start of each to
    write their bytecode); a row of medians for each."""
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    trees = {"this tree": tree_command(here, workdir),
             "baseline": tree_command(args.baseline, workdir)}
    figures = {name: [] for name in trees}
    for n in range(max(1, args.runs) + 1):
        for name, command in trees.items():
            run = start_once(os.path.join(workdir, f"compare-{n}-{name[0]}"), args.settle,
                             env, command)
            run.pop("server").stop()
            if n:  # the first start of each wrote its bytecode
                figures[name].append(run)
    return [[name, len(runs), statistics.median(r["ready"] for r in runs),
             statistics.median(r["cpu"] for r in runs),
             statistics.median(r["memory"][0] for r in runs),
             statistics.median(r["memory"][1] for r in runs)]
            for name, runs in figures.items()]


if __name__ == "__main__":
    raise SystemExit(main())
