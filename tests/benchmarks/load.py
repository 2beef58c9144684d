"""A bounded load generator: N keep-alive HTTPS connections, for a duration, in processes."""

from __future__ import annotations

import http.client
import multiprocessing
import ssl
import time


def _worker(args):
    host, port, path, ca, cert, key, connections, duration, max_requests = args
    context = ssl.create_default_context(cafile=ca)
    context.load_cert_chain(cert, key)
    conns = [http.client.HTTPSConnection(host, port, context=context) for _ in range(connections)]
    latencies, errors = [], 0
    deadline = time.monotonic() + duration
    # One process drives its connections round-robin: each request waits for its answer,
    # as a client with that many connections in flight would.
    import threading

    lock = threading.Lock()

    def drive(conn):
        nonlocal errors
        local = []
        while time.monotonic() < deadline and len(local) < max_requests:
            start = time.perf_counter()
            try:
                conn.request("GET", path)
                response = conn.getresponse()
                response.read()
                if response.status != 200:
                    errors += 1
            except OSError:
                errors += 1
                conn.close()
                continue
            local.append(time.perf_counter() - start)
        with lock:
            latencies.extend(local)

    threads = [threading.Thread(target=drive, args=(c,)) for c in conns]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies, errors


def run(url_host, port, path, ca, cert, key, connections, duration=5.0, max_requests=200_000):
    """Return (requests/s, p50 ms, p99 ms, errors) for ``connections`` keep-alive clients."""
    processes = min(connections, 4)
    per_process = [connections // processes + (1 if i < connections % processes else 0)
                   for i in range(processes)]
    jobs = [(url_host, port, path, ca, cert, key, n, duration, max_requests) for n in per_process]
    start = time.monotonic()
    with multiprocessing.Pool(processes) as pool:
        results = pool.map(_worker, jobs)
    elapsed = time.monotonic() - start
    latencies = sorted(l for result in results for l in result[0])
    errors = sum(result[1] for result in results)
    if not latencies:
        return 0.0, 0.0, 0.0, errors
    p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000
    return len(latencies) / min(elapsed, duration + 1), p(0.50), p(0.99), errors
