"""``python -m tests.benchmarks.webhooks``: ConfigMap creates with and without one
validating admission webhook.

One 2-worker TLS server; CREATE with 1 and 16 connections, first with no webhook, then
with a ValidatingWebhookConfiguration whose webhook (matching configmaps) is an HTTPS
server on loopback in this process (``http.server`` with keep-alive, its own CA) that
allows every request. Target: the webhook adds < 3 ms to the p50 latency of a single
connection's creates. Prints figures, asserts nothing; every run is bounded in time.
"""

from __future__ import annotations

import argparse
import base64
import http.server
import json
import os
import ssl
import tempfile
import threading

from kapiserver.pki import PKI
from kapiserver.testing import KapiserverProcess

from . import load, objects
from .client import Client, Credentials, create_namespace
from .report import table

TARGET_MS = 3.0


class AllowingWebhook:
    """An HTTPS admission webhook that allows everything, counting the reviews."""

    def __init__(self, workdir: str):
        pki = PKI(os.path.join(workdir, "webhook-pki"))
        pki.ensure_serving_cert(["127.0.0.1"])
        with open(pki.ca_cert_file, "rb") as f:
            self.ca_bundle = base64.b64encode(f.read()).decode()
        self.reviews = 0
        webhook = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as webhook clients expect
            # one segment per answer, as a Go server writes it (no Nagle delay)
            disable_nagle_algorithm = True

            def do_POST(self):
                review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                webhook.reviews += 1
                body = json.dumps({"apiVersion": review["apiVersion"],
                                   "kind": "AdmissionReview",
                                   "response": {"uid": review["request"]["uid"],
                                                "allowed": True}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(pki.serving_cert_file, pki.serving_key_file)
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.url = f"https://127.0.0.1:{self.httpd.server_address[1]}/validate"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def configuration(self) -> dict:
        return {"apiVersion": "admissionregistration.k8s.io/v1",
                "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "bench"},
                "webhooks": [{"name": "allow.bench.example.com",
                              "clientConfig": {"url": self.url, "caBundle": self.ca_bundle},
                              "rules": [{"operations": ["CREATE"], "apiGroups": [""],
                                         "apiVersions": ["v1"], "resources": ["configmaps"]}],
                              "sideEffects": "None", "admissionReviewVersions": ["v1"]}]}

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.webhooks")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per load run")
    args = parser.parse_args(argv)
    rows, p50 = [], {}
    with tempfile.TemporaryDirectory() as workdir:
        webhook = AllowingWebhook(workdir)
        server = KapiserverProcess(os.path.join(workdir, "server"), workers=2,
                                   config={"log-level": "warning"}).start()
        try:
            cert, key = server.client_cert("admin", ["system:masters"])
            credentials = Credentials(server.port, server.ca_file, cert, key)
            body = objects.body(objects.configmap(load.NAME.decode()))
            for phase in ("no webhook", "1 validating webhook"):
                namespace = "bench-none" if phase == "no webhook" else "bench-webhook"
                create_namespace(credentials, namespace)
                if phase != "no webhook":
                    client = Client(credentials)
                    status, answer = client.request(
                        "POST", "/apis/admissionregistration.k8s.io/v1/"
                        "validatingwebhookconfigurations", webhook.configuration())
                    client.close()
                    if status != 201:
                        raise RuntimeError(f"creating the configuration: {status} {answer}")
                path = f"/api/v1/namespaces/{namespace}/configmaps"
                for connections in (1, 16):
                    figures = load.run("127.0.0.1", server.port, path, server.ca_file, cert,
                                       key, connections, args.duration, method="POST",
                                       body=body, expect=201)
                    rows.append([f"CREATE x{connections}, {phase}", *figures])
                    p50[(phase, connections)] = figures[1]
        finally:
            server.stop()
            webhook.stop()
    table(f"ConfigMap creates with and without a validating webhook, {args.duration:g} s "
          f"per run ({webhook.reviews} reviews answered)",
          ["scenario", "req/s", "p50 ms", "p99 ms", "errors"], rows)
    added = p50[("1 validating webhook", 1)] - p50[("no webhook", 1)]
    table("Targets", ["figure", "measured", "target", "met"],
          [["p50 added by one webhook (x1)", f"{added:.2f} ms", f"< {TARGET_MS:g} ms",
            "yes" if added < TARGET_MS else "NO"]])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
