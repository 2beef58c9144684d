"""TLS handshakes of accepted connections, answered as Go's ``http.Server`` answers them.

gevent's server wraps each accepted socket before gunicorn sees it, and a failed handshake
ended with a full traceback in the log. kube-apiserver, on Go's ``net/http``, logs one line
(``http: TLS handshake error from 127.0.0.1:54321: ...``) and, to a client that spoke
plain HTTP to the TLS port, answers ``400 Bad Request`` with ``Client sent an HTTP request
to an HTTPS server.``, which kubectl shows. ``quiet_handshakes`` gives a server's
``SSLContext`` that behaviour.
"""

from __future__ import annotations

import logging
import socket
import ssl

import gevent

log = logging.getLogger(__name__)

#: Go's ``tlsRecordHeaderLooksLikeHTTP``: the first five bytes of a plain HTTP request.
_HTTP_STARTS = (b"GET /", b"HEAD ", b"POST ", b"PUT /", b"OPTIO")
_PLAIN_HTTP_ANSWER = (b"HTTP/1.0 400 Bad Request\r\n\r\n"
                      b"Client sent an HTTP request to an HTTPS server.\n")


def quiet_handshakes(context: ssl.SSLContext) -> ssl.SSLContext:
    """``context``, whose server-side ``wrap_socket`` (the one gevent's server calls)
    answers plain HTTP and logs a failed handshake in one line; the connection is then
    closed without a traceback."""
    wrap = context.wrap_socket

    def wrap_socket(sock, *args, **kwargs):
        try:
            first = sock.recv(5, socket.MSG_PEEK)
        except OSError:
            first = b""
        if first in _HTTP_STARTS:
            _answer_plain_http(sock)
            raise gevent.GreenletExit  # gevent's server closes the socket, quietly
        try:
            peer = "%s:%s" % sock.getpeername()[:2]
        except OSError:
            peer = "?"
        try:
            return wrap(sock, *args, **kwargs)
        except (ssl.SSLError, OSError) as err:
            log.info("http: TLS handshake error from %s: %s", peer, err)
            raise gevent.GreenletExit from None

    context.wrap_socket = wrap_socket
    return context


def _answer_plain_http(sock) -> None:
    """Write the 400, then read what the client sent until it hangs up (at most a
    second): closing with its request unread would reset the connection, and the client
    could lose the answer."""
    try:
        sock.sendall(_PLAIN_HTTP_ANSWER)
        sock.shutdown(socket.SHUT_WR)
        with gevent.Timeout(1, False):
            while sock.recv(65536):
                pass
    except OSError:
        pass

