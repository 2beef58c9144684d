"""SocketSink on real TLS connections over loopback, driven by gevent as in a worker."""

import ssl

import gevent
import gevent.event
import gevent.socket
import gevent.ssl
import pytest

from kapiserver.endpoints.watchsink import SocketSink, chunk
from kapiserver.pki import PKI


@pytest.fixture
def tls_pair(tmp_path):
    """(server-side TLS socket, client-side TLS socket), both gevent sockets."""
    pki = PKI(str(tmp_path))
    pki.ensure_serving_cert(["127.0.0.1"])
    server_context = gevent.ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(pki.serving_cert_file, pki.serving_key_file)
    client_context = gevent.ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    client_context.load_verify_locations(pki.ca_cert_file)
    listener = gevent.socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    accepted = gevent.spawn(lambda: server_context.wrap_socket(listener.accept()[0],
                                                                server_side=True))
    raw = gevent.socket.create_connection(listener.getsockname())
    # Small buffers: a few MiB fill the connection and writes must wait.
    raw.setsockopt(gevent.socket.SOL_SOCKET, gevent.socket.SO_RCVBUF, 65536)
    client = client_context.wrap_socket(raw, server_hostname="127.0.0.1")
    server = accepted.get(timeout=10)
    server.setsockopt(gevent.socket.SOL_SOCKET, gevent.socket.SO_SNDBUF, 65536)
    yield server, client
    for sock in (client, server, listener):
        sock.close()


def read_exactly(sock, size: int, timeout: float = 10) -> bytes:
    data = bytearray()
    with gevent.Timeout(timeout):
        while len(data) < size:
            got = sock.recv(size - len(data))
            if not got:
                break
            data += got
    return bytes(data)


def test_chunk_frames_as_http_chunked():
    assert chunk(b'{"a":1}\n') == b'8\r\n{"a":1}\n\r\n'


def test_writes_go_straight_out_when_the_connection_takes_them(tls_pair):
    server, client = tls_pair
    sink = SocketSink(server, gevent.event.Event(), max_backlog=10)
    sink.offer(b"one\n")
    sink.offer(b"two\n")
    assert not sink.backlog and not sink.ready.is_set()
    assert read_exactly(client, 8) == b"one\ntwo\n"


def test_a_full_connection_queues_in_order_and_flush_writes_it(tls_pair):
    server, client = tls_pair
    sink = SocketSink(server, gevent.event.Event(), max_backlog=10_000)
    pieces = [bytes([65 + i % 26]) * 16384 for i in range(200)]  # ~3 MiB, far past buffers
    for piece in pieces:
        sink.offer(piece)  # never blocks, whatever the client does
    assert sink.backlog and sink.ready.is_set() and not sink.failed
    reader = gevent.spawn(read_exactly, client, sum(map(len, pieces)), 30)
    assert sink.flush()
    assert reader.get(timeout=30) == b"".join(pieces)
    assert not sink.backlog


def test_offers_during_a_flush_queue_behind_it(tls_pair):
    server, client = tls_pair
    sink = SocketSink(server, gevent.event.Event(), max_backlog=10_000)
    big = b"x" * (1 << 20)
    sink.offer(big)
    assert sink.backlog
    flusher = gevent.spawn(sink.flush)
    gevent.sleep(0)  # the flush starts and waits for the client
    assert sink.busy
    sink.offer(b"after\n")  # must not overtake the chunk being written
    assert list(sink.backlog)[-1] == b"after\n"
    data = read_exactly(client, len(big) + 6, 30)
    assert flusher.get(timeout=30) is True
    assert data == big + b"after\n"


def test_a_client_that_falls_too_far_behind_is_ended(tls_pair):
    server, _ = tls_pair
    sink = SocketSink(server, gevent.event.Event(), max_backlog=3)
    for _ in range(100):
        sink.offer(b"y" * 65536)
    assert sink.failed == "watcher fell too far behind"
    assert not sink.backlog and sink.ready.is_set()
    assert sink.flush() is False


def test_a_closed_connection_fails_the_sink(tls_pair):
    server, client = tls_pair
    client.close()
    sink = SocketSink(server, gevent.event.Event(), max_backlog=10)
    with gevent.Timeout(10):
        while not sink.failed:
            sink.offer(b"z" * 65536)
            gevent.sleep(0.01)
    assert sink.failed.startswith("write failed")


def test_a_failed_sink_leaves_no_half_written_record_to_finish(tls_pair):
    """A watcher dropped while a TLS record is half written: the server's closing chunk
    must fail as a broken pipe (quietly closed), not as OpenSSL's BAD_LENGTH."""
    server, client = tls_pair
    sink = SocketSink(server, gevent.event.Event(), max_backlog=3)
    for _ in range(4):
        sink.offer(b"y" * (1 << 20))  # the first write blocks half way; the 4th is too many
    assert sink.failed == "watcher fell too far behind" and not sink.backlog
    with pytest.raises(BrokenPipeError):
        server.sendall(b"0\r\n\r\n")
