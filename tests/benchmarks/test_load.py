"""The load generator's two entry points against a real HTTPS server on loopback, so that a
change to one cannot leave the other broken until the next ``tox -e bench``."""

import http.server
import ssl
import threading
import time

import pytest

from kapiserver.pki import PKI
from tests.benchmarks import load


@pytest.fixture
def server(tmp_path):
    pki = PKI(str(tmp_path))
    pki.ensure_serving_cert(["127.0.0.1"])
    cert_pem, key_pem = pki.issue_client_cert("bench", ())
    (tmp_path / "client.crt").write_bytes(cert_pem)
    (tmp_path / "client.key").write_bytes(key_pem)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _answer(self, code):
            length = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(length)
            self.send_response(code)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def do_GET(self):
            if self.path == "/accept":
                self.send_response(200 if self.headers.get("Accept") == "x/y" else 406)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self._answer(200)

        def do_POST(self):
            self._answer(201)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki.serving_cert_file, pki.serving_key_file)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield (httpd.server_address[1], pki.ca_cert_file, str(tmp_path / "client.crt"),
           str(tmp_path / "client.key"))
    httpd.shutdown()
    httpd.server_close()


def test_run_measures_every_connection(server):
    port, ca, cert, key = server
    rate, p50, p99, errors = load.run("127.0.0.1", port, "/x", ca, cert, key, 2, 0.5,
                                      max_requests=20)
    assert errors == 0 and rate > 0 and 0 < p50 <= p99
    rate, _, _, errors = load.run("127.0.0.1", port, "/x", ca, cert, key, 1, 0.5,
                                  max_requests=10, method="POST", body=b'{"n":"__NAME__"}',
                                  expect=201)
    assert errors == 0 and rate > 0


def test_samples_on_one_connection(server):
    port, ca, cert, key = server
    latencies, errors = load.samples("127.0.0.1", port, "/x", ca, cert, key, 0.5,
                                     max_requests=10)
    assert errors == 0 and len(latencies) == 10


def test_total_bounds_the_answered_requests_and_accept_is_sent(server):
    port, ca, cert, key = server
    started = time.monotonic()
    rate, _, _, errors = load.run("127.0.0.1", port, "/x", ca, cert, key, 3, 30, total=10)
    assert errors == 0 and rate > 0 and time.monotonic() - started < 20
    rate, _, _, errors = load.run("127.0.0.1", port, "/accept", ca, cert, key, 2, 30,
                                  accept="x/y", total=4)
    assert errors == 0 and rate > 0
