"""SocketSink: the watch cache's feed writes a watch's chunks straight to its TLS socket.

Fanning an event out to a thousand watches one greenlet at a time costs, per watch, a
wake-up, a timer, a generator step and gunicorn's write path around the one thing that
must be done per watch: encrypting the line for its connection. So once a watch has sent
its initial events, the feed (``WatchCache``) writes each event's chunk to the socket
itself with a non-blocking TLS write, in the same pass that matches the event to its
watchers. The watch's own greenlet sleeps until the connection pushes back: a write that
would block goes to the sink's backlog, in order, and the greenlet writes it cooperatively
(``flush``) while the feed queues behind it. A slow client therefore costs the feed
nothing; one that falls ``max_backlog`` chunks behind is ended, as upstream ends a
blocked watcher.

Only one writer touches the socket at a time: the feed when the backlog is empty and the
greenlet is not writing, the greenlet otherwise. Both run on the worker's gevent hub, so
each check-and-write is atomic. A TLS write that would block must be retried with the
same bytes (OpenSSL's rule), which the backlog guarantees: its first chunk is the one the
feed could not finish.
"""

from __future__ import annotations

import collections
import errno
import ssl

_WOULD_BLOCK = (ssl.SSLWantWriteError, ssl.SSLWantReadError)


def socket_of(environ) -> object | None:
    """The TLS socket a chunked HTTP/1.1 response is written to, when the server exposes
    it (gunicorn's ``gunicorn.socket``); None otherwise (tests' WSGI clients, HTTP/1.0)."""
    sock = environ.get("gunicorn.socket")
    if environ.get("SERVER_PROTOCOL") != "HTTP/1.1" or getattr(sock, "_sslobj", None) is None:
        return None
    return sock


def chunk(line: bytes) -> bytes:
    """``line`` framed as one HTTP/1.1 chunk (as gunicorn frames what a WSGI app yields)."""
    return b"%X\r\n%s\r\n" % (len(line), line)


class SocketSink:
    """The write side of one watch in direct mode (see the module docstring).

    ``ready`` is the watcher's event: set when the backlog needs the greenlet, when a
    write failed (``failed``) and when the watcher closes.
    """

    __slots__ = ("sock", "_write", "ready", "max_backlog", "backlog", "busy", "failed")

    def __init__(self, sock, ready, max_backlog: int):
        self.sock = sock
        # The TLS object's own write never waits: it raises when the socket is full,
        # where the gevent socket's send would park the feed.
        self._write = sock._sslobj.write
        self.ready = ready
        self.max_backlog = max_backlog
        self.backlog: collections.deque = collections.deque()
        self.busy = False
        self.failed = ""

    def offer(self, data: bytes) -> None:
        """Write ``data`` now if the connection takes it, else queue it; never blocks."""
        if self.failed:
            return
        if not self.backlog and not self.busy:
            try:
                self._write(data)
                return
            except _WOULD_BLOCK:
                pass
            except (OSError, ValueError) as err:  # reset, or closed under us
                self._fail(f"write failed: {err}")
                return
        if len(self.backlog) >= self.max_backlog:
            self._fail("watcher fell too far behind")
            return
        self.backlog.append(data)
        self.ready.set()

    def flush(self) -> bool:
        """Write the backlog, waiting cooperatively for the client; False on failure."""
        while self.backlog and not self.failed:
            self.busy = True
            try:
                self.sock.sendall(self.backlog[0])
            except (OSError, ValueError) as err:
                self._fail(f"write failed: {err}")
            finally:
                self.busy = False
            if not self.failed:
                self.backlog.popleft()
        return not self.failed

    def _fail(self, reason: str) -> None:
        self.failed = reason
        self.backlog.clear()
        _abandon(self.sock)
        self.ready.set()


def _abandon(sock) -> None:
    """Make every later write to ``sock`` fail as a broken pipe.

    A failed watch may leave a TLS record half written, which OpenSSL only lets a write of
    the same bytes finish; the server's closing chunk would fail with ``BAD_LENGTH`` (and
    be logged as an invalid request). The connection is over either way: a broken pipe is
    what the server quietly expects of a client gone away, and it closes the socket.
    """

    def broken_pipe(*args, **kwargs):
        raise BrokenPipeError(errno.EPIPE, "the watch connection was abandoned")

    sock.send = sock.sendall = broken_pipe
