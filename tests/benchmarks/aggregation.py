"""``python -m tests.benchmarks.aggregation``: what the aggregator's proxy adds to a GET.

Two 2-worker TLS servers set up as an aggregated API server is deployed
(``tests/support/wardle.py``): the wardle extension with delegated authentication and
authorization behind a main server's APIService. One keep-alive connection GETs the same
Flunder directly from the extension and through the main server, alternating rounds in
the same run, as ``admin`` (``system:masters``: no SubjectAccessReview on either path).
The overhead is the main server's filter chain plus the proxy hop (front-proxy TLS
client certificate, identity headers, the extension's requestheader authentication).
Prints figures, asserts nothing; every run is bounded in time.
"""

from __future__ import annotations

import argparse
import tempfile

from tests.support.wardle import register, start_extension, start_main, wait_available

from . import load
from .client import Client, Credentials
from .report import percentile, table

NAMESPACE = "bench-wardle"
PATH = f"/apis/wardle.example.com/v1alpha1/namespaces/{NAMESPACE}/flunders/f1"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.aggregation")
    parser.add_argument("--duration", type=float, default=3.0, help="seconds per round")
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternating direct/proxied rounds (each path gets this many)")
    args = parser.parse_args(argv)
    quiet = {"log-level": "warning"}
    with tempfile.TemporaryDirectory() as base:
        main_server = start_main(base, quiet)
        extension = None
        try:
            extension = start_extension(base, main_server, quiet)
            register(main_server, extension)
            wait_available(main_server, "True", timeout=60)
            cert, key = main_server.client_cert("admin", ["system:masters"])
            through_main = Credentials(main_server.port, main_server.ca_file, cert, key)
            client = Client(through_main)
            client.request("POST", "/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})
            status, body = client.request(
                "POST", f"/apis/wardle.example.com/v1alpha1/namespaces/{NAMESPACE}/flunders",
                {"apiVersion": "wardle.example.com/v1alpha1", "kind": "Flunder",
                 "metadata": {"name": "f1"}, "spec": {"reference": "f0"}})
            client.close()
            if status not in (201, 409):
                raise RuntimeError(f"creating the Flunder: {status} {body}")
            # The extension trusts the main server's client CA (its published ConfigMap), so
            # the same certificate serves both paths.
            targets = {"direct to the extension": (extension.port, extension.ca_file),
                       "through the main server": (main_server.port, main_server.ca_file)}
            for port, ca in targets.values():  # warm both paths: connections, caches
                load.samples("127.0.0.1", port, PATH, ca, cert, key, 1.0)
            latencies = {label: [] for label in targets}
            errors = {label: 0 for label in targets}
            for _ in range(args.rounds):
                for label, (port, ca) in targets.items():
                    samples, failed = load.samples("127.0.0.1", port, PATH, ca, cert, key,
                                                   args.duration)
                    latencies[label] += samples
                    errors[label] += failed
            rows, figures = [], {}
            for label, samples in latencies.items():
                samples.sort()
                p50, p99 = (percentile(samples, q) * 1000 for q in (0.5, 0.99))
                figures[label] = (p50, p99)
                rate = len(samples) / (args.duration * args.rounds)
                rows.append([label, f"{rate:.0f}", f"{p50:.2f}", f"{p99:.2f}", len(samples),
                             errors[label]])
            (d50, d99), (p50, p99) = figures.values()
            rows.append(["overhead of the proxy", "", f"{p50 - d50:+.2f}", f"{p99 - d99:+.2f}",
                         "", ""])
            table(f"GET one Flunder, 1 keep-alive connection, {args.rounds} alternating rounds "
                  f"of {args.duration:g} s per path",
                  ["path", "req/s", "p50 ms", "p99 ms", "requests", "errors"], rows)
        finally:
            if extension is not None:
                extension.stop()
            main_server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
