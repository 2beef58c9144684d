"""Webhook failures worded as Go's HTTP client and client-go word them, from real failures
on loopback."""

import http.server
import socket
import threading

import pytest
import requests

from kapiserver.webhookerrors import refusal, request_error
from tests.support.conversion_webhook import ConversionWebhook


@pytest.fixture(scope="module")
def hook(tmp_path_factory):
    webhook = ConversionWebhook(str(tmp_path_factory.mktemp("pki")), lambda obj, v: obj,
                                hosts=("127.0.0.1", "hook.ns.svc"))
    yield webhook
    webhook.close()


def failure(url: str, verify=True, timeout=5, **kwargs) -> BaseException:
    with pytest.raises(requests.RequestException) as raised:
        requests.post(url, json={}, verify=verify, timeout=timeout, **kwargs)
    return raised.value


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def listening(handle) -> socket.socket:
    """A loopback listener whose connections ``handle(conn)`` serves, one thread each."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)

    def accept():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return server


def test_unknown_authority(hook, tmp_path):
    other = ConversionWebhook(str(tmp_path / "other"), lambda obj, v: obj)
    try:
        err = failure(hook.url, verify=other.pki.ca_cert_file)
    finally:
        other.close()
    assert request_error(err, "POST", hook.url, ("127.0.0.1", hook.port), "127.0.0.1",
                         other.pki.ca_cert_file) == (
        f'Post "{hook.url}": tls: failed to verify certificate: x509: certificate signed by '
        "unknown authority")


def test_a_name_the_certificate_does_not_hold(hook):
    url = f"https://localhost:{hook.port}/convert"
    err = failure(url, verify=hook.pki.ca_cert_file)
    assert request_error(err, "POST", url, ("localhost", hook.port), "localhost",
                         hook.pki.ca_cert_file).endswith(
        "tls: failed to verify certificate: x509: certificate is valid for hook.ns.svc, "
        "not localhost")


def test_connection_refused():
    port = free_port()
    url = f"https://127.0.0.1:{port}/x"
    assert request_error(failure(url), "POST", url, ("127.0.0.1", port), "127.0.0.1", True) \
        == f'Post "{url}": dial tcp 127.0.0.1:{port}: connect: connection refused'


def test_unknown_host():
    url = "https://nowhere.invalid/x"
    assert request_error(failure(url), "POST", url, ("nowhere.invalid", 443),
                         "nowhere.invalid", True) == \
        f'Post "{url}": dial tcp: lookup nowhere.invalid: no such host'


def test_plain_http_server_and_closed_connections():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             http.server.BaseHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"https://127.0.0.1:{server.server_address[1]}/x"
        assert request_error(failure(url), "POST", url, server.server_address, "127.0.0.1",
                             True).endswith(": http: server gave HTTP response to HTTPS client")
    finally:
        server.shutdown()
        server.server_close()
    closing = listening(lambda conn: conn.close())
    try:
        url = f"https://127.0.0.1:{closing.getsockname()[1]}/x"
        assert request_error(failure(url), "POST", url, closing.getsockname(), "127.0.0.1",
                             True) == f'Post "{url}": EOF'
    finally:
        closing.close()


def test_no_answer_in_time():
    held = []
    silent = listening(held.append)
    try:
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/x"
        assert request_error(failure(url, timeout=0.3), "POST", url, silent.getsockname(),
                             "127.0.0.1", True) == (
            f'Post "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting '
            "headers)")
    finally:
        silent.close()
        for conn in held:
            conn.close()


def test_a_service_that_does_not_resolve():
    err = LookupError('service/gone in "ns" is not present')
    assert request_error(err, "POST", "https://gone.ns.svc:443/", ("", 443), "gone.ns.svc",
                         True) == 'Post "https://gone.ns.svc:443/": service/gone in "ns" is ' \
                                  "not present"


@pytest.mark.parametrize("code,body,content_type,message", [
    (500, b"boom\n", "text/plain", 'an error on the server ("boom") has prevented the request '
                                   "from succeeding"),
    (502, b'{"x":1}', "application/json", 'an error on the server ("unknown") has prevented '
                                          "the request from succeeding"),
    (500, b'{"kind":"Status","apiVersion":"v1","status":"Failure","message":"no way"}',
     "application/json", "no way"),
    (404, b"nope", "text/plain", "the server could not find the requested resource"),
    (400, b"", "", "the server rejected our request for an unknown reason"),
    (403, b"go away", "text/plain", "go away"),
    (429, b"", "", "the server has received too many requests and has asked us to try again "
                   "later"),
    (418, b"", "", "the server responded with the status code 418 but did not return more "
                   "information"),
])
def test_refusals_are_worded_as_client_go(code, body, content_type, message):
    assert refusal(code, body, content_type) == message
