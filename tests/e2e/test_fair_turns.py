"""Connections of one worker take turns: a client that always has its next request ready
(here: pipelined requests) does not hold the worker while another connection's request
waits (``kapiserver/server/worker.py``, "Connections take turns")."""

import select
import socket
import ssl
import time

import pytest

from kapiserver.testing import KapiserverProcess

PIPELINED = 300
REQUEST = b"GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = KapiserverProcess(str(tmp_path_factory.mktemp("fair")), workers=1).start()
    yield server
    server.stop()


def _connect(server) -> ssl.SSLSocket:
    cert, key = server.client_cert("admin", ["system:masters"])
    context = ssl.create_default_context(cafile=server.ca_file)
    context.load_cert_chain(cert, key)
    sock = context.wrap_socket(socket.create_connection(("127.0.0.1", server.port)),
                               server_hostname="127.0.0.1")
    sock.sendall(REQUEST)  # the handshake and a first answer: the connection is served
    assert _answers(sock, 1, timeout=10) == 1
    return sock


def _answers(sock: ssl.SSLSocket, wanted: int, timeout: float) -> int:
    """Read until ``wanted`` answers came (or ``timeout``); return how many came."""
    data, deadline = b"", time.monotonic() + timeout
    while data.count(b"HTTP/1.1 200") < wanted and time.monotonic() < deadline:
        if not sock.pending() and not select.select([sock], [], [], 0.05)[0]:
            continue
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data.count(b"HTTP/1.1 200")


def _answered_so_far(sock: ssl.SSLSocket) -> int:
    """The answers that already arrived, without waiting for more."""
    sock.setblocking(False)
    data = b""
    try:
        while True:
            try:
                chunk = sock.recv(65536)
            except (ssl.SSLWantReadError, BlockingIOError):
                break
            if not chunk:
                break
            data += chunk
    finally:
        sock.setblocking(True)
    return data.count(b"HTTP/1.1 200")


def test_a_connection_with_requests_always_ready_does_not_starve_another(server):
    busy, other = _connect(server), _connect(server)
    try:
        # Every answer the busy connection needs is already in the worker's buffer: it
        # never waits for its client. Without turns the worker answered all of them
        # before it even read the other connection's request.
        busy.sendall(REQUEST * PIPELINED)
        time.sleep(0.005)  # the worker has begun on them
        began = time.monotonic()
        other.sendall(REQUEST)
        assert _answers(other, 1, timeout=30) == 1
        waited = time.monotonic() - began
        ahead = _answered_so_far(busy)
        assert ahead < PIPELINED // 2, (ahead, waited)
        # The busy connection is served all the same.
        assert ahead + _answers(busy, PIPELINED - ahead, timeout=60) == PIPELINED
    finally:
        busy.close()
        other.close()
