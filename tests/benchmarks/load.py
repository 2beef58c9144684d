"""A bounded load generator: N keep-alive HTTPS connections, for a duration, in processes."""

from __future__ import annotations

from typing import NamedTuple

import http.client
import multiprocessing
import os
import ssl
import threading
import time

#: In a request body template, replaced by a name unique to each request (for creates).
NAME = b"__NAME__"
#: In a path, replaced by the number of the connection (0, 1, ...): each connection can
#: write an object of its own.
CONNECTION = "__CONNECTION__"


def _worker(args):
    (host, port, path, ca, cert, key, connections, first, duration, max_requests,
     method, body, expect, content_type, accept, quotas) = args
    context = ssl.create_default_context(cafile=ca)
    context.load_cert_chain(cert, key)
    conns = [http.client.HTTPSConnection(host, port, context=context) for _ in range(connections)]
    headers = {"Content-Type": content_type} if body is not None else {}
    if accept:
        headers["Accept"] = accept
    latencies, errors = [], 0
    #: Answers per connection: a starved connection shows as a count far below the others'.
    counts = [0] * connections
    began = deadline = 0.0
    # One process drives its connections round-robin: each request waits for its answer,
    # as a client with that many connections in flight would.
    lock = threading.Lock()
    # The connections (TCP and TLS handshakes) are all made before the clock starts: the
    # figures are those of requests on open connections, as a client's that keeps them.
    ready = threading.Barrier(connections, action=lambda: start_clock())

    def start_clock():
        nonlocal began, deadline
        began, deadline = time.time(), time.monotonic() + duration

    def drive(index, conn):
        nonlocal errors
        local = []
        try:
            conn.connect()
        except OSError:
            with lock:
                errors += 1
            conn.close()  # the first request connects again
        ready.wait()
        target = path.replace(CONNECTION, str(first + index))
        quota = min(max_requests, quotas[index]) if quotas else max_requests
        while time.monotonic() < deadline and len(local) < quota:
            data = body
            if body is not None and NAME in body:
                data = body.replace(NAME, f"c-{os.getpid()}-{index}-{len(local)}".encode())
            start = time.perf_counter()
            try:
                conn.request(method, target, body=data, headers=headers)
                response = conn.getresponse()
                response.read()
                if response.status != expect:
                    errors += 1
                    continue
            except OSError:
                errors += 1
                conn.close()
                continue
            local.append(time.perf_counter() - start)
        with lock:
            latencies.extend(local)
            counts[index] = len(local)

    threads = [threading.Thread(target=drive, args=(i, c)) for i, c in enumerate(conns)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies, errors, began, time.time(), counts


class Figures(NamedTuple):
    """What ``measure`` found; the first four are ``run``'s answer."""

    rate: float  #: answered requests per second
    p50: float  #: milliseconds
    p99: float  #: milliseconds
    errors: int
    p999: float = 0.0  #: milliseconds
    max: float = 0.0  #: milliseconds, the slowest answer
    #: The least-served connection's answers over the mean connection's (1.0: all alike;
    #: near 0: some connection starved while the others were served).
    fairness: float = 0.0


def run(*args, **kwargs):
    """Return (requests/s, p50 ms, p99 ms, errors): ``measure``'s first four figures."""
    return tuple(measure(*args, **kwargs)[:4])


def measure(url_host, port, path, ca, cert, key, connections, duration=5.0, max_requests=200_000,
        method="GET", body: bytes | None = None, expect: int = 200,
        content_type: str = "application/json", accept: str = "", total: int = 0):
    """The ``Figures`` of ``connections`` keep-alive clients sending requests at once.

    ``body`` is sent with every request; each ``__NAME__`` in it becomes a name unique to
    the request (sent as ``content_type``). Each ``__CONNECTION__`` in ``path`` becomes the
    number of the connection sending it. Answers other than ``expect`` count as errors, not
    requests. ``accept`` is sent as the Accept header. ``total`` (when not 0) bounds the
    answered requests of the whole run, shared evenly between the connections: the run
    ends when they are all answered or at ``duration``, whichever comes first. The rate
    is over the time the worker processes ran (from the first's start to the last's end).
    """
    processes = min(connections, 4)
    per_process = [connections // processes + (1 if i < connections % processes else 0)
                   for i in range(processes)]
    quotas = ([total // connections + (1 if i < total % connections else 0)
               for i in range(connections)] if total else [])
    jobs = []
    for i, n in enumerate(per_process):
        first = sum(per_process[:i])
        jobs.append((url_host, port, path, ca, cert, key, n, first, duration, max_requests,
                     method, body, expect, content_type, accept, quotas[first:first + n]))
    with multiprocessing.Pool(processes) as pool:
        results = pool.map(_worker, jobs)
    elapsed = max(result[3] for result in results) - min(result[2] for result in results)
    latencies = sorted(l for result in results for l in result[0])
    errors = sum(result[1] for result in results)
    if not latencies:
        return Figures(0.0, 0.0, 0.0, errors)
    p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000
    counts = [count for result in results for count in result[4]]
    fairness = min(counts) / (sum(counts) / len(counts))
    return Figures(len(latencies) / min(elapsed, duration + 1), p(0.50), p(0.99), errors,
                   p(0.999), latencies[-1] * 1000, fairness)


def samples(url_host, port, path, ca, cert, key, duration: float,
            max_requests: int = 200_000) -> tuple[list[float], int]:
    """GET ``path`` on one keep-alive connection in this process for ``duration``; return
    (latencies in seconds, errors): raw figures, to pool over several rounds."""
    return _worker((url_host, port, path, ca, cert, key, 1, 0, duration, max_requests, "GET",
                    None, 200, "application/json", "", []))[:2]
