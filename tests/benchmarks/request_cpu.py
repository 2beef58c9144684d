"""``python -m tests.benchmarks.request_cpu``: the server CPU one GET and one CREATE cost.

One kapiserver worker serves N GETs of one ~1 KiB ConfigMap, then N CREATEs, sent one at
a time over one keep-alive TLS connection (client certificate, as the throughput
scenarios send them). The worker's own CPU time (``/proc/PID/stat``: user + system) is
read before and after each run, less what it spends idle over the same wall time, so the
machine's other load matters little. ``--profile DIR`` also samples the worker with
py-spy (``--idle`` off) and prints each run's 15 functions seen in most samples
(cumulative: anywhere on the stack).
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
import time

from kapiserver.testing import KapiserverProcess

from . import objects
from .client import Client, Credentials, create_namespace

CONFIGMAPS = "/api/v1/namespaces/{namespace}/configmaps"
TICK = os.sysconf("SC_CLK_TCK")
#: Each run is sent in this many batches: the cheapest batch is the least disturbed by
#: the machine's other load.
BATCHES = 10


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def worker_pid(master: int) -> int:
    with open(f"/proc/{master}/task/{master}/children") as f:
        children = [int(pid) for pid in f.read().split()]
    if len(children) != 1:
        raise RuntimeError(f"expected one worker, found {children}")
    return children[0]


def measure(pid: int, fn, profile: str | None):
    spy = None
    if profile:
        spy = subprocess.Popen(["py-spy", "record", "--pid", str(pid), "--format", "raw",
                                "--rate", "250", "--output", profile, "--nonblocking"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.0)
    wall, cpu = time.monotonic(), cpu_seconds(pid)
    batches = []
    for batch in range(BATCHES):
        batch_wall, batch_cpu = time.monotonic(), cpu_seconds(pid)
        fn(batch)
        batches.append((time.monotonic() - batch_wall, cpu_seconds(pid) - batch_cpu))
    wall, cpu = time.monotonic() - wall, cpu_seconds(pid) - cpu
    if spy is not None:
        spy.send_signal(2)
        spy.wait(30)
    return wall, cpu, batches


def top(profile: str, count: int = 15) -> list[tuple[str, float]]:
    """The functions on the stack in most samples of py-spy's raw (collapsed) output."""
    seen: collections.Counter = collections.Counter()
    total = 0
    with open(profile) as f:
        for line in f:
            stack, _, samples = line.rstrip("\n").rpartition(" ")
            if not stack:
                continue
            n = int(samples)
            total += n
            frames = {frame.rpartition(":")[0] if frame.count(":") >= 1 else frame
                      for frame in stack.split(";")}
            for frame in frames:
                seen[frame] += n
    return [(frame, 100 * n / total) for frame, n in seen.most_common(count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gets", type=int, default=2000)
    parser.add_argument("--creates", type=int, default=500)
    parser.add_argument("--profile", metavar="DIR")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        server = KapiserverProcess(os.path.join(workdir, "k"), {"log-level": "warning"},
                                   workers=1).start(60)
        try:
            cert, key = server.client_cert("admin", ["system:masters"])
            creds = Credentials(server.port, server.ca_file, cert, key)
            create_namespace(creds, "bench")
            client = Client(creds)
            status, body = client.request("POST", CONFIGMAPS.format(namespace="bench"),
                                          objects.configmap("get", seed="get"))
            assert status == 201, (status, body)
            pid = worker_pid(server.process.pid)
            path = CONFIGMAPS.format(namespace="bench") + "/get"
            for _ in range(50):  # warm up
                client.request("GET", path)
            time.sleep(1.0)
            idle_wall, idle_cpu, _ = measure(pid, lambda _: time.sleep(0.3), None)
            idle_rate = idle_cpu / idle_wall
            print(f"idle: {idle_rate * 1000:.1f} ms CPU per s")
            bodies = {}

            def gets(batch):
                for _ in range(args.gets // BATCHES):
                    status, _ = client.request("GET", path)
                    assert status == 200, status

            def creates(batch):
                size = args.creates // BATCHES
                for i in range(batch * size, (batch + 1) * size):
                    status, _ = client.request("POST", CONFIGMAPS.format(namespace="bench"),
                                               bodies[i])
                    assert status == 201, status

            for round_ in range(args.rounds):
                for i in range(args.creates):
                    bodies[i] = objects.body(objects.configmap(f"cm-{round_}-{i:05d}",
                                                               seed=str(i)))
                for name, fn, n in (("GET", gets, args.gets),
                                    ("CREATE", creates, args.creates)):
                    profile = (os.path.join(args.profile, f"{name.lower()}.txt")
                               if args.profile else None)
                    wall, cpu, batches = measure(pid, fn, profile)
                    net = cpu - idle_rate * wall
                    cheapest = min((c - idle_rate * w) / (n // BATCHES) for w, c in batches)
                    print(f"{name}: {n} in {wall:.2f} s wall, {cpu * 1e6 / n:.0f} us CPU per "
                          f"request ({net * 1e6 / n:.0f} us less idle; cheapest batch "
                          f"{cheapest * 1e6:.0f} us)", flush=True)
                    if profile and os.path.exists(profile):
                        for frame, share in top(profile):
                            print(f"  {share:5.1f}%  {frame}")
            client.close()
        finally:
            server.stop()


if __name__ == "__main__":
    sys.exit(main())
