"""The gunicorn worker class: gevent, so one worker holds thousands of open watches.

Each connection is a greenlet, not a thread: an idle watch costs a few KiB, and
``--worker-connections`` (default 10,000) bounds them per worker. On SIGTERM the worker
stops accepting, tells the ``APIServer`` to end long-running requests, closes the kept-alive
connections that wait for their next request (as Go's ``Server.Shutdown`` does: otherwise
each would hold the worker for the keep-alive timeout), and lets in-flight requests finish
within ``--shutdown-grace-period``.

Connections take turns. gevent switches greenlets only when one waits, and a kept-alive
connection whose client has already sent its next request (a fast client, a busy server)
never waits: reading the request, answering it and reading the next all complete at once,
so one greenlet kept the worker for as long as its client kept up, while the requests of
every other connection, new connections' handshakes included, waited — seconds at 16
connections, with a median under a millisecond (a bare Flask app showed the same). So a
connection that answered a request without the event loop having run since its previous
one yields (``gevent.sleep(0)``) before reading the next: the loop polls, and every
connection with a request waiting gets its turn first. One that waited for its request
anyway (the usual case below saturation) does not yield again: fairness costs a switch
per request only when the worker is saturated.

The WSGI environ joins a header sent several times into one value (``a,b``); the app
also gets the headers as sent, in ``environ["kapiserver.raw_headers"]`` (a list of
``(NAME, value)``), so that identity headers keep values that contain commas (an LDAP
group such as ``cn=ops,dc=example,dc=com``).
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
import queue
import signal

import gevent
import gevent.local
from gevent.server import StreamServer
from gunicorn.http import wsgi
from gunicorn.workers import ggevent
from gunicorn.workers.ggevent import GeventWorker

from .. import heap
from ..endpoints.context import RAW_HEADERS

#: Signals that end a worker; one that arrives before the worker's handlers exist is replayed.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT)


class KapiserverWorker(GeventWorker):
    """gunicorn's gevent worker, plus telling the server that shutdown has begun."""

    def init_process(self):
        heap.tune()  # before any thread of this worker allocates
        #: The connections waiting for their next request (``IdleWait``).
        self.idle: set[IdleWait] = set()
        # gunicorn's gevent worker builds its servers from this module attribute; this
        # process is one worker, so the server class is this worker's to choose.
        ggevent.StreamServer = AcceptedServer
        # Likewise its responses: kube-apiserver sends no Server header, and clients
        # that log or compare headers must not see "gunicorn".
        wsgi.Response = QuietResponse
        super().init_process()

    def patch(self):
        # gevent looks for plugins of each of its ~30 monkey-patching events by scanning
        # every installed distribution's entry points (several ms each time): scan once.
        with _entry_points_scanned_once():
            super().patch()

    def timeout_ctx(self):
        # gunicorn waits for each request of a kept-alive connection inside this context.
        return IdleWait(self)

    def close_idle(self) -> None:
        """End every connection that waits for its next request (shutdown has begun)."""
        for wait in list(self.idle):
            wait.cut()

    def _server(self):
        # The app may not be built yet: SIGTERM can arrive while the worker boots.
        app = getattr(self, "wsgi", None)
        return getattr(app, "extensions", {}).get("kapiserver") if app is not None else None

    def init_signals(self):
        # Until now this process ran the master's inherited handler, which only queues the
        # signal in the master's (copied) queue: a SIGTERM sent while the worker was booting
        # would be lost, and the master would wait the whole graceful timeout for it.
        master = getattr(signal.getsignal(signal.SIGTERM), "__self__", None)
        super().init_signals()
        missed = _drain(getattr(master, "SIG_QUEUE", None))
        stop = next((sig for sig in missed if sig in STOP_SIGNALS), None)
        if stop is not None:
            os.kill(os.getpid(), stop)

    def handle_exit(self, sig, frame):
        server = self._server()
        if server is not None:
            # Out of the signal handler: setting an Event may need the hub.
            gevent.spawn(server.begin_shutdown)
        super().handle_exit(sig, frame)
        gevent.get_hub().loop.run_callback(self.close_idle)

    def load_wsgi(self):
        super().load_wsgi()
        server = self._server()
        if not self.alive and server is not None:
            server.begin_shutdown()  # SIGTERM came while the app was being built
        # One connection is one greenlet: its request's headers wait for the app there.
        self._current = gevent.local.local()
        self._loop = gevent.get_hub().loop
        if hasattr(self.wsgi, "wsgi_app"):
            self.wsgi.wsgi_app = _RawHeaders(self.wsgi.wsgi_app, self._current)

    def handle_request(self, listener_name, req, sock, addr):
        self._current.headers = req.headers
        try:
            handled = super().handle_request(listener_name, req, sock, addr)
        finally:
            self._current.headers = None
        self._take_turns()
        return handled

    def _take_turns(self) -> None:
        """Let the other connections go first if this one has not waited since its last
        request (see "Connections take turns" above)."""
        # libev counts its loop's iterations; a loop that does not (libuv) yields always.
        current, iteration = self._current, getattr(self._loop, "iteration", None)
        if getattr(current, "turn", -1) == iteration:
            gevent.sleep(0)
            iteration = getattr(self._loop, "iteration", None)
        current.turn = iteration


#: Bytes up to which a head and its body part are joined into one send.
COALESCE_MAX = 64 * 1024


class QuietResponse(wsgi.Response):
    """gunicorn's response without its ``Server`` header (Go's net/http sends none), its
    head sent together with the first part of its body.

    gunicorn writes the head, then each part of the body: two TLS records and two sends
    for the usual one-part answer, each waking the client (which then waits again for the
    rest). Here the head waits for the body's first write and goes out with it in one
    ``sendall``; every ``write()`` and ``close()`` still leaves everything given so far
    sent, so streamed answers (watches) and empty bodies go out as before. A part larger
    than ``COALESCE_MAX`` is sent after the head, not copied into one buffer with it.
    """

    #: The head, built but not sent yet.
    _head: bytes | None = None
    #: False while a file is sent by ``sendfile``, which writes the head itself.
    _coalesce = True

    def default_headers(self):
        return [line for line in super().default_headers() if not line.startswith("Server:")]

    def send_headers(self):
        if self.headers_sent or not self._coalesce:
            return super().send_headers()
        sock, self.sock = self.sock, _Collected()
        try:
            super().send_headers()
        finally:
            self._head, self.sock = b"".join(self.sock.parts), sock
        return None

    def _emit_body(self, data):
        if self._head is None:
            return super()._emit_body(data)
        sock, self.sock = self.sock, _Collected([self._head])
        self._head = None
        try:
            super()._emit_body(data)
        finally:
            collected, self.sock = self.sock, sock
        parts = collected.parts
        if sum(map(len, parts)) <= COALESCE_MAX:
            sock.sendall(b"".join(parts))
            return None
        # A large body (a LIST of thousands) is not copied only to join its head to it:
        # each large part goes out as it is, the small ones around it joined.
        small = []
        for part in parts:
            if len(part) <= COALESCE_MAX:
                small.append(part)
                continue
            if small:
                sock.sendall(b"".join(small))
                small = []
            sock.sendall(part)
        if small:
            sock.sendall(b"".join(small))
        return None

    def write(self, arg):
        super().write(arg)
        self._send_head()  # an empty part (or a body-less answer) sends the head alone

    def close(self):
        if not self.headers_sent:
            self.send_headers()
        if self._head is not None:
            head, self._head = self._head, None
            # A chunked answer with no body: its head and its last chunk together.
            self.sock.sendall(head + b"0\r\n\r\n" if self.chunked else head)
            return
        super().close()

    def sendfile(self, respiter):
        self._send_head()
        self._coalesce = False
        try:
            return super().sendfile(respiter)
        finally:
            self._coalesce = True

    def _send_head(self) -> None:
        if self._head is not None:
            head, self._head = self._head, None
            self.sock.sendall(head)


class _Collected:
    """A stand-in socket that keeps what is sent to it."""

    __slots__ = ("parts",)

    def __init__(self, parts=None):
        self.parts = parts if parts is not None else []

    def sendall(self, data) -> None:
        self.parts.append(data)


class AcceptedServer(StreamServer):
    """gevent's ``StreamServer``, quiet about connections it accepted just before
    ``close()`` (at shutdown).

    ``close()`` drops the server's ``handle`` and closes the listening socket, which
    gunicorn's handler asks for its name: a connection still in its TLS handshake then
    died with a traceback (``AttributeError``, then ``Bad file descriptor``). Such a
    connection is closed without a word; the client connects again, as to a server that
    has gone."""

    def wrap_socket_and_handle(self, client_socket, address):
        handle = getattr(self, "handle", None)
        if handle is None:  # closed before this connection's greenlet first ran
            client_socket.close()
            return None
        with contextlib.closing(self.wrap_socket(client_socket, **self.ssl_args)) as tls:
            if self.closed:  # closed during the handshake
                return None
            return handle(tls, address)


class IdleWait:
    """The wait for a connection's next request: gunicorn's keep-alive timeout, which
    shutdown cuts short (``KapiserverWorker.close_idle``)."""

    __slots__ = ("worker", "timeout", "greenlet")

    def __init__(self, worker):
        self.worker = worker
        # A connection that becomes idle once shutdown has begun is closed at once.
        self.timeout = gevent.Timeout(worker.cfg.keepalive if worker.alive else 0.001, False)
        self.greenlet = None

    def __enter__(self):
        self.greenlet = gevent.getcurrent()
        self.timeout.start()
        self.worker.idle.add(self)
        return self

    def __exit__(self, kind, value, traceback):
        self.worker.idle.discard(self)
        # The timeout expiring (or cut) leaves the request None: gunicorn closes.
        return self.timeout.__exit__(kind, value, traceback)

    def cut(self) -> None:
        """Expire the wait now; called from the hub, so the greenlet is parked in it."""
        if self in self.worker.idle:
            self.worker.idle.discard(self)
            self.greenlet.throw(self.timeout)


class _RawHeaders:
    """WSGI middleware: put the headers of the request being handled into the environ."""

    def __init__(self, app, current):
        self.app = app
        self.current = current

    def __call__(self, environ, start_response):
        headers = getattr(self.current, "headers", None)
        if headers is not None:
            environ[RAW_HEADERS] = headers
        return self.app(environ, start_response)


@contextlib.contextmanager
def _entry_points_scanned_once():
    """``importlib.metadata.entry_points(...)`` answered from one scan meanwhile (this
    process has one thread yet: no caller elsewhere sees the stand-in)."""
    scan = importlib.metadata.entry_points
    found = None

    def entry_points(**params):
        nonlocal found
        if found is None:
            found = scan()
        return found.select(**params) if params else found

    importlib.metadata.entry_points = entry_points
    try:
        yield
    finally:
        importlib.metadata.entry_points = scan


def _drain(signal_queue) -> list:
    """Everything queued in ``signal_queue`` (a gunicorn master's ``SIG_QUEUE``), if any."""
    drained = []
    while signal_queue is not None:
        try:
            drained.append(signal_queue.get_nowait())
        except (queue.Empty, AttributeError):
            break
    return drained
