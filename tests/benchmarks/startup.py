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
import subprocess
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
    ("GET /openapi/v2", "GET", "/openapi/v2", None),
    ("GET /openapi/v3/apis/apps/v1", "GET", "/openapi/v3/apis/apps/v1", None),
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


def start_once(workdir: str, settle: float, env: dict) -> dict:
    """One start (on ``workdir``'s data dir, empty or not): ready time, CPU, then memory
    after ``settle`` seconds; the server is left running under ``"server"``."""
    server = KapiserverProcess(workdir, workers=2, env=env)
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


if __name__ == "__main__":
    raise SystemExit(main())
