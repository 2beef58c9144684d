"""``python -m tests.benchmarks.noisy_neighbour``: one user floods, another runs the GET
benchmark; with API Priority and Fairness and without.

A 2-worker TLS server holds 1,000 ConfigMaps (~1 KiB each) in namespace ``flood``. User
``victim`` GETs one ConfigMap over 4 keep-alive connections (opened before the timed
window), first alone (its baseline), then while user ``flooder`` keeps 64 LISTs of the
1,000 ConfigMaps in flight (64 connections, each sending its next LIST when the last is
answered, and waiting the ``Retry-After`` a 429 asks for, as client-go does); the victim
is measured once the flood has run ``RAMP`` seconds, past the first re-divisions of seats
between priority levels. Both users are ordinary authenticated users: the bootstrap
FlowSchema ``global-default`` puts them in one priority level, each its own flow
(``ByUser``).

Servers: APF on (the default) and off (the max-in-flight filter) with the default limits
(400 + 200); APF with the flooder put in a priority level of its own (``JAIL``: what an
operator does about a known noisy client); APF and max-in-flight with limits sized for
two Python workers (8 + 4). Target: with APF, the victim's GET p99 under the flood stays
within 2× of its p99 alone, and the flooder gets 429s rather than the server slowing
for everyone. Prints figures, asserts nothing; every loop is bounded in requests and in
time.
"""

from __future__ import annotations

import argparse
import http.client
import multiprocessing
import os
import ssl
import tempfile
import threading
import time

from kapiserver.testing import KapiserverProcess

from .client import Credentials, create_namespace, populate, send_all
from .report import table

OBJECTS = 1000
FLOODERS = 64
VICTIM_CONNECTIONS = 4
TARGET = 2.0
LIST = "/api/v1/namespaces/flood/configmaps"
GET = "/api/v1/namespaces/default/configmaps/cm-00000"
#: Most LISTs one flooding connection sends in a run (the run is bounded in time too).
MAX_LISTS = 2000
#: Seconds the flood runs before the victim is measured.
RAMP = 12.0


def _flood_process(args):
    host, port, ca, cert, key, connections, duration = args
    context = ssl.create_default_context(cafile=ca)
    context.load_cert_chain(cert, key)
    deadline = time.monotonic() + duration
    lock = threading.Lock()
    totals = {"ok": 0, "429": 0, "other": 0, "latencies": []}

    def drive():
        conn = http.client.HTTPSConnection(host, port, context=context, timeout=120)
        ok = refused = other = 0
        latencies = []
        for _ in range(MAX_LISTS):
            if time.monotonic() >= deadline:
                break
            start = time.perf_counter()
            try:
                conn.request("GET", LIST)
                response = conn.getresponse()
                response.read()
            except (OSError, http.client.HTTPException):
                other += 1
                conn.close()
                continue
            if response.status == 200:
                ok += 1
                latencies.append(time.perf_counter() - start)
            elif response.status == 429:
                refused += 1
                wait = float(response.getheader("Retry-After") or 1)
                time.sleep(max(0.0, min(wait, deadline - time.monotonic())))
            else:
                other += 1
        conn.close()
        with lock:
            totals["ok"] += ok
            totals["429"] += refused
            totals["other"] += other
            totals["latencies"] += latencies

    threads = [threading.Thread(target=drive) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return totals


def _victim_process(args):
    """GETs over warm keep-alive connections: each connection is opened (TLS handshake)
    and used once before the timed window, as a client with its connections open."""
    host, port, ca, cert, key, connections, duration = args
    context = ssl.create_default_context(cafile=ca)
    context.load_cert_chain(cert, key)
    lock = threading.Lock()
    results = {"latencies": [], "errors": 0, "elapsed": 0.0}
    conns = []
    for _ in range(connections):
        conn = http.client.HTTPSConnection(host, port, context=context, timeout=120)
        try:
            conn.request("GET", GET)
            conn.getresponse().read()
        except (OSError, http.client.HTTPException):
            conn.close()
        conns.append(conn)
    deadline = time.monotonic() + duration

    def drive(conn):
        latencies, errors = [], 0
        while time.monotonic() < deadline and len(latencies) < 50_000:
            start = time.perf_counter()
            try:
                conn.request("GET", GET)
                response = conn.getresponse()
                response.read()
            except (OSError, http.client.HTTPException):
                errors += 1
                conn.close()
                continue
            if response.status == 200:
                latencies.append(time.perf_counter() - start)
            else:
                errors += 1
        conn.close()
        with lock:
            results["latencies"] += latencies
            results["errors"] += errors

    began = time.monotonic()
    threads = [threading.Thread(target=drive, args=(conn,)) for conn in conns]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    results["elapsed"] = time.monotonic() - began
    return results


def victim(server, cert, key, duration: float, processes: int = 2) -> tuple:
    """(requests/s, p50 ms, p99 ms, errors) of the victim's GETs."""
    with multiprocessing.Pool(processes) as pool:
        parts = pool.map(_victim_process, [("127.0.0.1", server.port, server.ca_file, cert,
                                            key, VICTIM_CONNECTIONS // processes,
                                            duration)] * processes, chunksize=1)
    latencies = [x for part in parts for x in part["latencies"]]
    elapsed = max(part["elapsed"] for part in parts) or duration
    return (len(latencies) / elapsed, _percentile(latencies, 0.5) * 1000,
            _percentile(latencies, 0.99) * 1000, sum(part["errors"] for part in parts))


def flood(server, cert, key, duration: float, processes: int = 4):
    """Start the flood in the background: ``FLOODERS`` connections over ``processes``."""
    pool = multiprocessing.Pool(processes)
    per = FLOODERS // processes
    result = pool.map_async(_flood_process, [("127.0.0.1", server.port, server.ca_file, cert,
                                              key, per, duration)] * processes)
    pool.close()
    return pool, result


def _percentile(values: list, fraction: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


#: What an operator does about a known noisy client: a FlowSchema puts it in a priority
#: level of its own, with few seats, no borrowing and short queues.
JAIL = [
    ("/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations", {
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
        "metadata": {"name": "noisy"},
        "spec": {"type": "Limited", "limited": {
            "nominalConcurrencyShares": 1, "lendablePercent": 0, "borrowingLimitPercent": 0,
            "limitResponse": {"type": "Queue", "queuing": {
                "queues": 2, "handSize": 1, "queueLengthLimit": 10}}}}}),
    ("/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas", {
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
        "metadata": {"name": "noisy"},
        "spec": {"priorityLevelConfiguration": {"name": "noisy"}, "matchingPrecedence": 500,
                 "distinguisherMethod": {"type": "ByUser"},
                 "rules": [{"subjects": [{"kind": "User", "user": {"name": "flooder"}}],
                            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"],
                                               "resources": ["*"], "namespaces": ["*"],
                                               "clusterScope": True}]}]}}),
]


def measure(workdir: str, name: str, config: dict, duration: float,
            extra: list = ()) -> dict:
    server = KapiserverProcess(os.path.join(workdir, name.replace(" ", "-").replace(",", "")),
                               {**config, "log-level": "warning"}, workers=2)
    server.start(timeout=180)
    try:
        admin = server.client_cert("admin", ["system:masters"])
        credentials = Credentials(server.port, server.ca_file, *admin)
        failures = send_all(credentials, [("POST", path, obj) for path, obj in extra], 1)
        if failures:
            raise RuntimeError(f"creating {failures[0][0]}: {failures[0][1:]}")
        create_namespace(credentials, "flood")
        populate(credentials, "flood", OBJECTS)
        populate(credentials, "default", 1)
        victims = server.client_cert("victim")
        flooder = server.client_cert("flooder")
        alone = victim(server, *victims, duration)
        pool, result = flood(server, *flooder, RAMP + duration + 5)
        # Past the first borrowing adjustments (every 10 s): the flood's steady state.
        time.sleep(RAMP)
        crowded = victim(server, *victims, duration)
        totals = {"ok": 0, "429": 0, "other": 0, "latencies": []}
        for part in result.get(timeout=RAMP + duration + 300):
            for key_ in totals:
                totals[key_] += part[key_]
        pool.join()
        return {"alone": alone, "crowded": crowded, "flood": totals}
    finally:
        server.stop()


SCENARIOS = {
    "APF, 400+200": {},
    "no APF, 400+200": {"enable-priority-and-fairness": False},
    "APF, 400+200, flooder's own level": ({}, JAIL),
    "APF, 8+4": {"max-requests-inflight": 8, "max-mutating-requests-inflight": 4},
    "no APF, 8+4": {"enable-priority-and-fairness": False, "max-requests-inflight": 8,
                    "max-mutating-requests-inflight": 4},
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.noisy_neighbour")
    parser.add_argument("--duration", type=float, default=8.0, help="seconds per load run")
    parser.add_argument("--only", default="", help="run only the scenarios containing this")
    args = parser.parse_args(argv)
    results = {}
    with tempfile.TemporaryDirectory() as workdir:
        for name, config in SCENARIOS.items():
            if args.only in name:
                config, extra = config if isinstance(config, tuple) else (config, ())
                results[name] = measure(workdir, name, config, args.duration, extra)
    rows, targets = [], []
    for name, figures in results.items():
        alone, crowded, flooded = figures["alone"], figures["crowded"], figures["flood"]
        lists = flooded["latencies"]
        rows.append([name, f"{alone[0]:.0f}", f"{alone[2]:.1f}", f"{crowded[0]:.0f}",
                     f"{crowded[2]:.1f}", f"{crowded[3]}", flooded["ok"], flooded["429"],
                     flooded["other"], f"{_percentile(lists, 0.5) * 1000:.0f}"])
        ratio = crowded[2] / alone[2] if alone[2] else float("inf")
        targets.append([name, f"{ratio:.1f}x", f"<= {TARGET:g}x",
                        "yes" if ratio <= TARGET else "NO",
                        "yes" if flooded["429"] else "no"])
    table(f"Victim's GET (x{VICTIM_CONNECTIONS}) alone and under a flood of {FLOODERS} LISTs "
          f"of {OBJECTS} ConfigMaps, 2 workers, {args.duration:g} s runs",
          ["server", "alone req/s", "alone p99 ms", "flooded req/s", "flooded p99 ms",
           "victim errors", "flood LISTs ok", "flood 429s", "flood other", "LIST p50 ms"], rows)
    table("Targets", ["server", "victim p99 flooded / alone", "target", "met",
                      "flooder got 429s"], targets)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
