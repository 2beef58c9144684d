"""The worker's response (``QuietResponse``): no Server header, and the head sent in the
same ``sendall`` as the first part of the body — every ``write()`` and ``close()`` still
leaves all that was given sent, in order."""

from types import SimpleNamespace

import pytest

pytest.importorskip("gevent")

from kapiserver.server.worker import QuietResponse  # noqa: E402


class Socket:
    def __init__(self):
        self.sends = []

    def sendall(self, data):
        self.sends.append(bytes(data))


def response(method="GET", version=(1, 1)):
    req = SimpleNamespace(version=version, method=method, should_close=lambda: False)
    cfg = SimpleNamespace(sendfile=False, is_ssl=True)
    sock = Socket()
    return QuietResponse(req, sock, cfg), sock


def test_head_and_body_go_in_one_send():
    resp, sock = response()
    resp.start_response("200 OK", [("Content-Type", "application/json"),
                                   ("Content-Length", "2")])
    resp.write(b"{}")
    resp.close()
    assert len(sock.sends) == 1
    head, body = sock.sends[0].split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 200 OK\r\n") and b"\r\nServer:" not in head
    assert b"Content-Length: 2" in head and body == b"{}"


def test_chunked_parts_stream_at_once():
    """A watch: the head goes with the first event, each later event at its write, the
    last chunk at close."""
    resp, sock = response()
    resp.start_response("200 OK", [("Content-Type", "application/json"),
                                   ("Transfer-Encoding", "chunked")])
    resp.write(b"a")
    assert len(sock.sends) == 1 and sock.sends[0].endswith(b"\r\n\r\n1\r\na\r\n")
    resp.write(b"bc")
    assert sock.sends[1] == b"2\r\nbc\r\n"
    resp.close()
    assert sock.sends[2] == b"0\r\n\r\n"


def test_an_empty_first_part_sends_the_head_alone():
    resp, sock = response()
    resp.start_response("200 OK", [("Transfer-Encoding", "chunked")])
    resp.write(b"")  # a streamed answer flushing its head before any event
    assert len(sock.sends) == 1 and sock.sends[0].endswith(b"\r\n\r\n")
    resp.close()
    assert sock.sends[1:] == [b"0\r\n\r\n"]


def test_no_body_answers_send_the_head_at_close():
    resp, sock = response()
    resp.start_response("204 No Content", [])
    resp.close()
    assert len(sock.sends) == 1 and sock.sends[0].startswith(b"HTTP/1.1 204 No Content")
    head_request, sock = response(method="HEAD")
    head_request.start_response("200 OK", [("Content-Length", "10")])
    head_request.write(b"0123456789")  # dropped: a HEAD answer has no body
    assert len(sock.sends) == 1 and sock.sends[0].endswith(b"\r\n\r\n")
    head_request.close()
    assert len(sock.sends) == 1
