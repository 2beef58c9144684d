"""The request scenarios: GET, LIST, paginated walks, CREATE and read-modify-write PUTs.

Each runs for a bounded time (and request count) against kapiserver and, where a
framework-only equivalent exists, against the bare-Flask ceiling in the same run; each
prints one table and returns its key figures for the summary.
"""

from __future__ import annotations

import http.client
import multiprocessing
import threading
import time
from dataclasses import dataclass

from . import load, objects
from .ceiling import LIST_ITEMS
from .client import Client, Credentials, create_namespace, populate
from .report import percentile, ratio, table

CONFIGMAPS = "/api/v1/namespaces/{namespace}/configmaps"
LIST_NAMESPACE = "bench-list"
PAGE_LIMIT = 100
RMW_CLIENTS = 8


@dataclass
class Bench:
    """What every scenario needs: both servers' addresses and the time each run gets."""

    kapiserver: Credentials
    ceiling: Credentials
    duration: float

    def load(self, target: Credentials, path: str, connections: int, **kwargs):
        return load.run(target.host, target.port, path, target.ca, target.cert, target.key,
                        connections, self.duration, **kwargs)

    def compare(self, path: str, ceiling_path: str, connection_counts, **kwargs) -> dict:
        """{connections: (kapiserver figures, ceiling figures)}, each (rate, p50, p99, errors)."""
        figures = {}
        for connections in connection_counts:
            figures[connections] = (self.load(self.kapiserver, path, connections, **kwargs),
                                    self.load(self.ceiling, ceiling_path, connections, **kwargs))
        return figures


def _compare_table(title: str, unit: str, figures: dict) -> None:
    headers = ["connections", f"kapiserver {unit}", "p50 ms", "p99 ms", "errors",
               f"ceiling {unit}", "p50 ms", "p99 ms", "errors", "ratio"]
    table(title, headers, [[f"x{n}", *mine, *ceiling, ratio(mine[0], ceiling[0])]
                           for n, (mine, ceiling) in figures.items()])


def get_one(bench: Bench) -> dict:
    """GET one ~1 KiB ConfigMap at 1, 16 and 64 connections, beside the ceiling's fixed
    object."""
    client = Client(bench.kapiserver)
    status, body = client.request("POST", CONFIGMAPS.format(namespace="default"),
                                  objects.configmap("bench-get", seed="bench-get"))
    client.close()
    if status != 201:
        raise RuntimeError(f"creating the ConfigMap to GET: {status} {body}")
    ceiling_size = len(objects.body(objects.stored_configmap("fixed", "default", 1)))
    figures = bench.compare(CONFIGMAPS.format(namespace="default") + "/bench-get", "/object",
                            (1, 16, 64))
    _compare_table(f"1. GET one ConfigMap ({len(objects.body(body))} B; ceiling: a fixed "
                   f"{ceiling_size} B object), {bench.duration:g} s per run", "req/s", figures)
    return figures


def populate_list(bench: Bench) -> float:
    """Create the 1,000 ConfigMaps that LIST and the paginated walk read; return seconds."""
    create_namespace(bench.kapiserver, LIST_NAMESPACE)
    start = time.monotonic()
    populate(bench.kapiserver, LIST_NAMESPACE, LIST_ITEMS)
    return time.monotonic() - start


def list_many(bench: Bench) -> dict:
    """LIST 1,000 ~1 KiB ConfigMaps at 1 and 4 connections, beside the ceiling's /list."""
    setup = populate_list(bench)
    client = Client(bench.kapiserver)
    status, body = client.request("GET", CONFIGMAPS.format(namespace=LIST_NAMESPACE))
    client.close()
    items = len(body["items"]) if status == 200 else 0
    size = len(objects.body(body)) if status == 200 else 0
    ceiling_size = len(objects.body(objects.configmap_list(LIST_ITEMS, LIST_NAMESPACE)))
    print(f"\n(set-up: {LIST_ITEMS} ConfigMaps created from 8 threads in {setup:.1f} s, "
          f"{LIST_ITEMS / setup:.0f}/s)")
    figures = bench.compare(CONFIGMAPS.format(namespace=LIST_NAMESPACE), "/list", (1, 4))
    _compare_table(f"2. LIST {items} ConfigMaps ({size / 1e6:.2f} MB; ceiling: json.dumps of a "
                   f"{ceiling_size / 1e6:.2f} MB list per request), {bench.duration:g} s per run",
                   "lists/s", figures)
    return figures


def paginated_walk(bench: Bench) -> dict:
    """Walk the 1,000 ConfigMaps with limit=100 and continue tokens, one connection."""
    client = Client(bench.kapiserver)
    base = CONFIGMAPS.format(namespace=LIST_NAMESPACE) + f"?limit={PAGE_LIMIT}"
    walks, pages, items, errors = [], 0, 0, 0
    deadline = time.monotonic() + bench.duration
    while time.monotonic() < deadline and len(walks) < 10_000:
        start = time.perf_counter()
        token, walk_items, ok = None, 0, True
        while True:
            path = base + (f"&continue={token}" if token else "")
            status, body = client.request("GET", path)
            if status != 200:
                errors, ok = errors + 1, False
                break
            pages += 1
            walk_items += len(body["items"])
            token = body["metadata"].get("continue")
            if not token:
                break
        if ok:
            walks.append(time.perf_counter() - start)
            items += walk_items
    client.close()
    walks.sort()
    elapsed = sum(walks)
    row = [f"limit={PAGE_LIMIT} x1", len(walks), len(walks) / elapsed if elapsed else 0.0,
           percentile(walks, 0.5) * 1000, percentile(walks, 0.99) * 1000,
           pages / max(len(walks), 1), items / max(len(walks), 1), errors]
    table(f"3. Paginated walk over the {LIST_ITEMS} ConfigMaps, {bench.duration:g} s",
          ["walk", "walks", "walks/s", "p50 ms/walk", "p99 ms/walk", "pages/walk",
           "items/walk", "errors"], [row])
    return {"walks_per_s": row[2], "ms_per_walk": row[3]}


def create(bench: Bench) -> dict:
    """POST new ConfigMaps (unique names, fresh namespace) at 1, 16 and 64 connections."""
    body = objects.body(objects.configmap(load.NAME.decode()))
    figures = {}
    for connections in (1, 16, 64):
        namespace = f"bench-create-{connections}"
        create_namespace(bench.kapiserver, namespace)
        figures[connections] = (
            bench.load(bench.kapiserver, CONFIGMAPS.format(namespace=namespace), connections,
                       method="POST", body=body, expect=201),
            bench.load(bench.ceiling, "/create", connections, method="POST", body=body,
                       expect=201))
    _compare_table(f"4. CREATE ConfigMaps ({len(body)} B bodies; ceiling: parse the body, answer "
                   f"it back), {bench.duration:g} s per run", "creates/s", figures)
    return figures


def _read_modify_write(credentials: Credentials, path: str, threads: int, duration: float):
    """Worker process: ``threads`` clients incrementing ``data.counter`` until the deadline."""
    deadline = time.monotonic() + duration
    results = []
    lock = threading.Lock()

    def client_loop():
        client = Client(credentials)
        writes, conflicts, errors, latencies = 0, 0, 0, []
        while time.monotonic() < deadline:
            start = time.perf_counter()
            while time.monotonic() < deadline:
                try:
                    status, obj = client.request("GET", path)
                    if status != 200:
                        errors += 1
                        continue
                    obj["data"]["counter"] = str(int(obj["data"]["counter"]) + 1)
                    status, _ = client.request("PUT", path, obj)
                except (OSError, http.client.HTTPException):
                    errors += 1
                    client = Client(credentials)
                    continue
                if status == 200:
                    writes += 1
                    latencies.append(time.perf_counter() - start)
                    break
                if status == 409:
                    conflicts += 1
                else:
                    errors += 1
        client.close()
        with lock:
            results.append((writes, conflicts, errors, latencies))

    workers = [threading.Thread(target=client_loop) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return results


def read_modify_write(bench: Bench) -> dict:
    """8 clients GET then PUT one ConfigMap's counter (retrying on 409) for the duration."""
    path = CONFIGMAPS.format(namespace="default") + "/bench-counter"
    client = Client(bench.kapiserver)
    obj = objects.configmap("bench-counter", seed="bench-counter")
    obj["data"]["counter"] = "0"
    status, body = client.request("POST", CONFIGMAPS.format(namespace="default"), obj)
    if status != 201:
        raise RuntimeError(f"creating the counter ConfigMap: {status} {body}")
    processes = 2
    jobs = [(bench.kapiserver, path, RMW_CLIENTS // processes, bench.duration)] * processes
    start = time.monotonic()
    with multiprocessing.Pool(processes) as pool:
        results = [r for rs in pool.starmap(_read_modify_write, jobs) for r in rs]
    elapsed = min(time.monotonic() - start, bench.duration + 1)
    status, body = client.request("GET", path)
    client.close()
    counter = int(body["data"]["counter"]) if status == 200 else -1
    writes = sum(r[0] for r in results)
    conflicts = sum(r[1] for r in results)
    errors = sum(r[2] for r in results)
    latencies = sorted(l for r in results for l in r[3])
    lost = writes - counter
    table(f"5. Read-modify-write: {RMW_CLIENTS} clients GET+PUT one ConfigMap's counter, "
          f"retrying on 409, {bench.duration:g} s",
          ["clients", "writes", "writes/s", "conflicts", "conflicts/write", "p50 ms/write",
           "p99 ms/write", "errors", "final counter", "lost updates"],
          [[RMW_CLIENTS, writes, writes / elapsed, conflicts, conflicts / max(writes, 1),
            percentile(latencies, 0.5) * 1000, percentile(latencies, 0.99) * 1000, errors,
            counter, lost]])
    print(f"  lost updates: {lost} (successful PUTs {writes}, final counter {counter}; "
          "ms/write counts from the first GET to the accepted PUT, retries included)")
    return {"writes_per_s": writes / elapsed, "conflicts": conflicts, "lost": lost}
