"""What HTTP/1.1 costs a client-go program: one TLS connection per open watch.

client-go multiplexes every request over one HTTP/2 connection when the server offers
``h2``; over HTTP/1.1 each concurrent request, each watch among them, holds a connection
of its own. kapiserver serves HTTP/1.1 only (gunicorn has no HTTP/2), so this measures
what that costs on both sides, in one run:

* the server's memory per open watch connection (RSS of all processes, before and after
  opening ``--watches`` watch connections, each a TLS connection of its own);
* the time to open a connection and get an answer (TCP + TLS handshake + GET) beside a GET
  on a kept-alive connection — what a client pays for each extra connection.

``python -m tests.benchmarks.connections [--watches N]``; every loop is bounded.
"""

from __future__ import annotations

import argparse
import socket
import ssl
import statistics
import tempfile
import time

from kapiserver.testing import KapiserverProcess

from .__main__ import memory_mib

PATH = "/api/v1/namespaces/default/configmaps"


def _context(server) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=server.ca_file)
    context.load_cert_chain(*server.client_cert("admin", ("system:masters",)))
    return context


def _connect(server, context) -> ssl.SSLSocket:
    raw = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    return context.wrap_socket(raw, server_hostname="127.0.0.1")


def _request(sock, path: str, keep_alive: bool = True) -> bytes:
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n"
                 f"Connection: {'keep-alive' if keep_alive else 'close'}\r\n\r\n".encode())
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length")))
    while len(body) < length:
        body += sock.recv(65536)
    return body


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--watches", type=int, default=500)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as workdir:
        server = KapiserverProcess(workdir, workers=2).start()
        try:
            context = _context(server)
            # Warm both workers up (first requests import lazily loaded modules).
            for _ in range(20):
                with _connect(server, context) as sock:
                    _request(sock, PATH, keep_alive=False)
            time.sleep(1)
            before, _ = memory_mib(server.process.pid)
            watches = []
            deadline = time.monotonic() + 120
            for _ in range(args.watches):
                if time.monotonic() > deadline:
                    break
                sock = _connect(server, context)
                sock.sendall(f"GET {PATH}?watch=1&timeoutSeconds=300 HTTP/1.1\r\nHost: x\r\n"
                             "Accept: application/json\r\n\r\n".encode())
                watches.append(sock)
            time.sleep(2)
            after, _ = memory_mib(server.process.pid)
            opened = len(watches)
            for sock in watches:
                sock.close()

            fresh, kept = [], []
            with _connect(server, context) as kept_alive:
                _request(kept_alive, PATH)
                for _ in range(args.requests):
                    start = time.perf_counter()
                    with _connect(server, context) as sock:
                        _request(sock, PATH, keep_alive=False)
                    fresh.append((time.perf_counter() - start) * 1000)
                    start = time.perf_counter()
                    _request(kept_alive, PATH)
                    kept.append((time.perf_counter() - start) * 1000)
        finally:
            server.stop()
    per_connection = (after - before) * 1024 / max(opened, 1)
    print(f"open watch connections: {opened}; server RSS {before:.1f} -> {after:.1f} MiB "
          f"({per_connection:.1f} KiB per connection)")
    print(f"new connection + GET: p50 {statistics.median(fresh):.2f} ms, "
          f"p99 {sorted(fresh)[int(len(fresh) * 0.99) - 1]:.2f} ms")
    print(f"GET on a kept-alive connection: p50 {statistics.median(kept):.2f} ms, "
          f"p99 {sorted(kept)[int(len(kept) * 0.99) - 1]:.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
