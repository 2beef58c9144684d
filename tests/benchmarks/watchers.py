"""Watch fan-out: many concurrent watchers, a paced writer, and per-event delivery delay.

Watchers live in a couple of processes, each driving hundreds of non-blocking TLS
sockets with ``selectors`` (a watcher costs a socket, not a process or a thread). Set-up
is bounded: at most ``HANDSHAKES_IN_FLIGHT`` handshakes at a time and ``setup_timeout``
seconds overall. Every watcher stamps each event with ``time.time()`` when the bytes
completing it are read; the writer stamps each write when its response has been read.
Both clocks are the same host's wall clock, so delay = arrival - write response
(slightly negative when the event overtakes the writer's own response).
"""

from __future__ import annotations

import multiprocessing
import re
import selectors
import socket
import ssl
import time

from . import objects
from .client import Client, Credentials, create_namespace
from .report import cpu_seconds, percentile, table

HANDSHAKES_IN_FLIGHT = 64
PROCESSES = 2
# The type and resourceVersion of one event line, read without decoding all its JSON.
_TYPE = re.compile(rb'^\{"type":"(\w+)"')
_RESOURCE_VERSION = re.compile(rb'"resourceVersion":"(\d+)"')


class _Watch:
    """One watch connection: TLS handshake, response headers, then chunked JSON lines."""

    __slots__ = ("sock", "state", "streamed", "buffer", "line", "chunk_left", "skip", "events",
                 "other", "error")

    def __init__(self, sock):
        self.sock = sock
        self.state = "handshake"
        self.streamed = False  # the response headers said 200, chunked
        self.buffer = bytearray()
        self.line = bytearray()
        self.chunk_left = 0
        self.skip = 0
        self.events: list[tuple[int, float]] = []  # (resourceVersion, arrival) per event
        self.other: list[str] = []  # event types other than ADDED/MODIFIED/DELETED
        self.error = ""

    def feed(self, data: bytes, now: float) -> None:
        """Consume bytes read at ``now``; lines they complete are stamped with ``now``."""
        buffer = self.buffer
        buffer += data
        if self.state == "headers":
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(buffer[:end]).decode("latin-1")
            del buffer[:end + 4]
            status = head.split(" ", 2)[1] if " " in head else "?"
            if status != "200" or "chunked" not in head.lower():
                self.error = f"answered {head.splitlines()[0]!r}"
                self.state = "closed"
                return
            self.state, self.streamed = "stream", True
        pos, size = 0, len(buffer)
        while pos < size:
            if self.chunk_left:
                take = min(self.chunk_left, size - pos)
                self.line += buffer[pos:pos + take]
                pos += take
                self.chunk_left -= take
                if not self.chunk_left:
                    self.skip = 2  # the CRLF closing the chunk
            elif self.skip:
                take = min(self.skip, size - pos)
                pos += take
                self.skip -= take
            else:
                end = buffer.find(b"\r\n", pos)
                if end < 0:
                    break
                length = int(bytes(buffer[pos:end]).split(b";")[0], 16)
                pos = end + 2
                if not length:
                    self.error = "the server ended the watch"
                    self.state = "closed"
                    break
                self.chunk_left = length
        del buffer[:pos]
        while True:
            end = self.line.find(b"\n")
            if end < 0:
                break
            line = bytes(self.line[:end])
            del self.line[:end + 1]
            kind = _TYPE.match(line)
            version = _RESOURCE_VERSION.search(line)
            if kind and version and kind.group(1) in (b"ADDED", b"MODIFIED", b"DELETED"):
                self.events.append((int(version.group(1)), now))
            else:
                self.other.append(kind.group(1).decode() if kind else line[:60].decode())


def _watch_process(control, credentials: Credentials, path: str, count: int,
                   setup_timeout: float) -> None:
    """Child process: open ``count`` watches, stream until told what to expect, report."""
    context = credentials.context()
    request = (f"GET {path} HTTP/1.1\r\nHost: {credentials.host}:{credentials.port}\r\n"
               "Accept: application/json\r\nUser-Agent: kapiserver-bench\r\n\r\n").encode()
    selector = selectors.DefaultSelector()
    watches: list[_Watch] = []
    setting_up: set[_Watch] = set()  # in handshake or waiting for the response headers

    def close(watch: _Watch, reason: str) -> None:
        watch.error = watch.error or reason
        watch.state = "closed"
        setting_up.discard(watch)
        if watch.sock is not None:
            try:
                selector.unregister(watch.sock)
            except (KeyError, ValueError):
                pass
            watch.sock.close()

    def start_one() -> None:
        try:
            raw = socket.create_connection((credentials.host, credentials.port), timeout=5)
            raw.setblocking(False)
            sock = context.wrap_socket(raw, server_hostname=credentials.host,
                                       do_handshake_on_connect=False)
        except OSError as err:
            watch = _Watch(None)
            watches.append(watch)
            close(watch, f"connect: {err}")
            return
        watch = _Watch(sock)
        watches.append(watch)
        setting_up.add(watch)
        selector.register(sock, selectors.EVENT_READ | selectors.EVENT_WRITE, watch)
        handshake(watch)

    def handshake(watch: _Watch) -> None:
        try:
            watch.sock.do_handshake()
        except ssl.SSLWantReadError:
            selector.modify(watch.sock, selectors.EVENT_READ, watch)
            return
        except ssl.SSLWantWriteError:
            selector.modify(watch.sock, selectors.EVENT_WRITE, watch)
            return
        except OSError as err:
            close(watch, f"handshake: {err}")
            return
        try:
            # A few hundred bytes on a fresh loopback connection: the send buffer has room.
            watch.sock.send(request)
        except OSError as err:
            close(watch, f"request: {err}")
            return
        watch.state = "headers"
        selector.modify(watch.sock, selectors.EVENT_READ, watch)

    def read(watch: _Watch) -> None:
        while watch.state != "closed":
            try:
                data = watch.sock.recv(262144)
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
                return
            except OSError as err:
                close(watch, f"read: {err}")
                return
            if not data:
                close(watch, "connection closed")
                return
            watch.feed(data, time.time())
            if watch.state == "stream":
                setting_up.discard(watch)
            elif watch.state == "closed":
                close(watch, watch.error)

    def serve(timeout: float) -> list:
        messages = []
        for key, _ in selector.select(timeout):
            watch = key.data
            if watch is None:
                messages.append(control.recv())
            elif watch.state == "handshake":
                handshake(watch)
            elif watch.state != "closed":
                read(watch)
        return messages

    setup_start = time.monotonic()
    deadline = setup_start + setup_timeout
    while (len(watches) < count or setting_up) and time.monotonic() < deadline:
        while len(setting_up) < HANDSHAKES_IN_FLIGHT and len(watches) < count:
            start_one()
        serve(0.05)
    for watch in list(setting_up):
        close(watch, "not established within the set-up time")
    established = sum(w.state == "stream" for w in watches)
    control.send(("ready", established, count - established, time.monotonic() - setup_start))

    selector.register(control.fileno(), selectors.EVENT_READ, None)
    cpu, wall = time.process_time(), time.monotonic()
    expected: set[int] = set()
    stop_at = float("inf")
    while time.time() < stop_at:
        for message in serve(0.05):
            if message[0] == "expect":
                expected, stop_at = set(message[1]), message[2]
        if expected and all(expected <= {rv for rv, _ in w.events}
                            for w in watches if w.state == "stream"):
            break
    busy = (time.process_time() - cpu) / max(time.monotonic() - wall, 1e-9)
    control.send(("events", [(w.streamed, w.events, w.other, w.error) for w in watches], busy))
    for watch in watches:
        if watch.sock is not None:
            watch.sock.close()


def fan_out(credentials: Credentials, count: int, writes: int, rate: float,
            setup_timeout: float = 60.0, grace: float = 10.0, on_established=None,
            server_pids=(), watch_on=None) -> dict:
    """Open ``count`` watches on one namespace, make ``writes`` paced creates, report delays.

    ``server_pids`` (the workers) have their CPU use measured from the first write until
    the watchers have everything (or give up). ``watch_on`` (credentials of several
    servers sharing one store) spreads the watches over them; the writes go through
    ``credentials``.
    """
    watch_on = list(watch_on or [credentials])
    namespace = f"bench-watch-{count}"
    create_namespace(credentials, namespace)
    client = Client(credentials)
    status, body = client.request("GET", f"/api/v1/namespaces/{namespace}/configmaps")
    if status != 200:
        raise RuntimeError(f"listing {namespace}: {status} {body}")
    path = (f"/api/v1/namespaces/{namespace}/configmaps?watch=1"
            f"&resourceVersion={body['metadata']['resourceVersion']}")
    processes = max(min(PROCESSES, count), len(watch_on))
    shares = [count // processes + (1 if i < count % processes else 0) for i in range(processes)]
    children = []
    for index, share in enumerate(shares):
        parent_end, child_end = multiprocessing.Pipe()
        process = multiprocessing.Process(target=_watch_process, daemon=True,
                                          args=(child_end, watch_on[index % len(watch_on)],
                                                path, share, setup_timeout))
        process.start()
        children.append((process, parent_end))
    try:
        established = failed = 0
        setup = 0.0
        for process, pipe in children:
            if not pipe.poll(setup_timeout + 30):
                raise RuntimeError("a watcher process did not report its set-up")
            _, ok, bad, seconds = pipe.recv()
            established, failed, setup = established + ok, failed + bad, max(setup, seconds)
        if on_established is not None:
            on_established(established)
        time.sleep(0.5)  # let the last watches register with the watch cache

        written: dict[int, float] = {}
        write_latencies, write_errors = [], 0
        # A fresh connection: the server may have closed the one idle since the set-up.
        client.close()
        client = Client(credentials)
        server_cpu = [cpu_seconds(pid) for pid in server_pids]
        start = time.monotonic()
        for i in range(writes):
            pause = start + i / rate - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            sent = time.perf_counter()
            status, obj = client.request("POST", f"/api/v1/namespaces/{namespace}/configmaps",
                                         objects.configmap(f"w-{i:04d}", seed=str(i)))
            answered = time.time()
            write_latencies.append(time.perf_counter() - sent)
            if status == 201:
                written[int(obj["metadata"]["resourceVersion"])] = answered
            else:
                write_errors += 1
        client.close()
        last_write = max(written.values(), default=time.time())
        for _, pipe in children:
            pipe.send(("expect", sorted(written), time.time() + grace))
        results, client_cpu = [], []
        for _, pipe in children:
            if not pipe.poll(grace + 30):
                raise RuntimeError("a watcher process did not report its events")
            _, events, busy = pipe.recv()
            results.extend(events)
            client_cpu.append(busy)
        elapsed = time.monotonic() - start
        server_cpu = [(cpu_seconds(pid) - used) / elapsed
                      for pid, used in zip(server_pids, server_cpu)]
    finally:
        for process, pipe in children:
            process.join(5)
            if process.is_alive():
                process.terminate()
                process.join(5)
            pipe.close()

    delays, lost, duplicates, unexpected, last_arrival = [], 0, 0, 0, 0.0
    ended, others = 0, set()
    for streamed, events, other, error in results:
        if streamed:  # a watch that never started is counted apart, as failed
            seen: dict[int, int] = {}
            for rv, arrival in events:
                if rv in written:
                    seen[rv] = seen.get(rv, 0) + 1
                    if seen[rv] == 1:
                        delays.append(arrival - written[rv])
                        last_arrival = max(last_arrival, arrival)
                else:
                    unexpected += 1
            duplicates += sum(n - 1 for n in seen.values())
            lost += len(written) - len(seen)
            ended += bool(error)
            others.update(other)
    delays.sort()
    write_latencies.sort()
    figures = {
        "watchers": count, "established": established, "failed": failed, "setup_s": setup,
        "writes": len(written), "write_errors": write_errors,
        "write_p50_ms": percentile(write_latencies, 0.5) * 1000,
        "expected": len(written) * established, "received": len(delays), "lost": lost,
        "duplicates": duplicates, "unexpected": unexpected, "ended_early": ended,
        "p50_ms": percentile(delays, 0.5) * 1000, "p99_ms": percentile(delays, 0.99) * 1000,
        "max_ms": (delays[-1] * 1000) if delays else 0.0,
        "drain_ms": max(0.0, last_arrival - last_write) * 1000 if delays else 0.0,
        "other_events": sorted(others), "client_cpu": client_cpu,
        "server_cpu": server_cpu}
    return figures


def report(rows: list[dict], writes: int, rate: float) -> None:
    table(f"6. Watch fan-out: {writes} creates of ~1 KiB ConfigMaps at {rate:g}/s, each "
          "watcher on the namespace's ConfigMaps",
          ["watchers", "set-up s", "failed", "write p50 ms", "events expected", "received",
           "lost", "duplicates", "delay p50 ms", "p99 ms", "max ms", "last event after "
           "last write ms"],
          [[r["watchers"], r["setup_s"], r["failed"], r["write_p50_ms"], r["expected"],
            r["received"], r["lost"], r["duplicates"], r["p50_ms"], r["p99_ms"], r["max_ms"],
            r["drain_ms"]] for r in rows])
    for r in rows:
        notes = ["CPU while streaming: server workers "
                 + "/".join(f"{busy:.0%}" for busy in r["server_cpu"]) + ", watcher processes "
                 + "/".join(f"{busy:.0%}" for busy in r["client_cpu"]) + " of a core"]
        if r["write_errors"]:
            notes.append(f"{r['write_errors']} write(s) failed")
        if r["ended_early"]:
            notes.append(f"{r['ended_early']} watch(es) ended early")
        if r["unexpected"]:
            notes.append(f"{r['unexpected']} event(s) for writes not made by the writer")
        if r["other_events"]:
            notes.append(f"other lines: {', '.join(r['other_events'])}")
        if notes:
            print(f"  {r['watchers']} watchers: " + "; ".join(notes))
