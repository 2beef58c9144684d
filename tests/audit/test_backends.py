"""Audit backends: the log's rotation and formats, the batch buffer, the webhook."""

import gzip
import http.server
import json
import os
import socket
import stat
import threading
import time

import pytest

from kapiserver.audit.backends import (BatchConfig, Buffered, IgnoreErrors, LogBackend,
                                       WebhookBackend, event_string)
from kapiserver.audit.rotation import MEGABYTE, RotatingFile

EVENT = {"kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "Metadata",
         "auditID": "id-1", "stage": "ResponseComplete", "requestURI": "/api/v1/pods",
         "verb": "list", "user": {"username": "jane", "groups": ["devs", "system:authenticated"]},
         "impersonatedUser": {"username": "bob"}, "sourceIPs": ["10.0.0.1"],
         "userAgent": "kubectl/v1.32", "objectRef": {"resource": "pods", "namespace": "ns"},
         "responseStatus": {"metadata": {}, "code": 200},
         "requestReceivedTimestamp": "2024-05-01T10:00:00.120000Z",
         "stageTimestamp": "2024-05-01T10:00:00.130000Z"}


def test_legacy_line_is_upstreams():
    assert event_string(EVENT) == (
        '2024-05-01T10:00:00.12Z AUDIT: id="id-1" stage="ResponseComplete" ip="10.0.0.1" '
        'method="list" user="jane" groups="\\"devs\\",\\"system:authenticated\\"" as="bob" '
        'asgroups="<lookup>" user-agent="kubectl/v1.32" namespace="ns" uri="/api/v1/pods" '
        'response="200"')


def test_json_lines_and_file_mode(tmp_path):
    path = tmp_path / "logs" / "audit.log"
    backend = LogBackend(RotatingFile(str(path)))
    assert backend.process_event(EVENT) and backend.process_event(EVENT)
    lines = path.read_text().splitlines()
    assert [json.loads(line) for line in lines] == [EVENT, EVENT]
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_rotation_by_size_keeps_max_backups(tmp_path):
    path = str(tmp_path / "audit.log")
    writer = RotatingFile(path, max_size_mb=1, max_backups=2)
    line = b"x" * 1023 + b"\n"
    for _ in range(4 * 1024 + 10):  # a little over 4 MiB: 4 rotations
        writer.write(line)
    writer.mill()  # as the rotations' background runs do
    backups = writer.backups()
    assert len(backups) == 2
    for _, backup in backups:
        assert os.path.getsize(backup) <= MEGABYTE
        assert os.path.basename(backup).startswith("audit-") and backup.endswith(".log")
    assert os.path.getsize(path) <= MEGABYTE


def test_rotation_shared_by_two_writers_loses_nothing(tmp_path):
    path = str(tmp_path / "audit.log")
    first, second = RotatingFile(path, max_size_mb=1), RotatingFile(path, max_size_mb=1)
    for i in range(3000):
        (first if i % 2 else second).write(b"%04d" % i + b"y" * 995 + b"\n")
    names = [path] + [p for _, p in first.backups()]
    seen = set()
    for name in names:
        with open(name, "rb") as f:
            seen.update(int(line[:4]) for line in f)
    assert seen == set(range(3000))
    assert all(os.path.getsize(n) <= MEGABYTE + 2000 for n in names)


def test_rotated_backups_compressed_and_aged(tmp_path):
    path = str(tmp_path / "audit.log")
    old = os.path.join(str(tmp_path), "audit-2000-01-01T00-00-00.000.log")
    with open(old, "w") as f:
        f.write("old\n")
    writer = RotatingFile(path, max_size_mb=1, max_age_days=30, compress=True)
    for _ in range(1100):
        writer.write(b"z" * 1023 + b"\n")
    writer.mill()
    assert not os.path.exists(old)
    (moment, backup), = writer.backups()
    assert backup.endswith(".log.gz")
    with gzip.open(backup) as f:
        assert len(f.read()) > 1000 * 1024


class Recorder:
    name = "recorder"

    def __init__(self, delay=0.0):
        self.batches = []
        self.delay = delay

    def process_events(self, events):
        time.sleep(self.delay)
        self.batches.append(list(events))
        return True

    def shutdown(self):
        pass


def test_batches_by_size_and_wait():
    recorder = Recorder()
    buffered = Buffered(recorder, BatchConfig(buffer_size=100, max_batch_size=3,
                                              max_batch_wait=0.2, throttle_enable=False,
                                              async_delegate=False))
    for i in range(7):
        buffered.process_event({"auditID": str(i)})
    deadline = time.monotonic() + 5
    while sum(map(len, recorder.batches)) < 7 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [len(b) for b in recorder.batches] == [3, 3, 1]
    buffered.shutdown()


def test_a_full_buffer_drops_and_counts_never_waits():
    dropped = []
    recorder = Recorder(delay=0.5)
    buffered = Buffered(recorder, BatchConfig(buffer_size=5, max_batch_size=1,
                                              max_batch_wait=0, throttle_enable=False,
                                              async_delegate=False),
                        errors=lambda plugin, n: dropped.append((plugin, n)))
    start = time.monotonic()
    for i in range(50):
        assert buffered.process_event({"auditID": str(i)}) is True
    assert time.monotonic() - start < 0.5
    assert len(dropped) >= 40 and {p for p, _ in dropped} == {"buffered"}
    buffered.shutdown()


def test_blocking_mode_ignores_failures(tmp_path):
    class Broken:
        def write(self, data):
            raise OSError("disk full")

    failures = []
    backend = LogBackend(Broken(), errors=lambda plugin, n: failures.append((plugin, n)))
    assert backend.process_event(EVENT) is False  # blocking-strict refuses the request
    assert IgnoreErrors(backend).process_event(EVENT) is True  # blocking does not
    assert failures == [("log", 1), ("log", 1)]


class Receiver:
    """A webhook receiver on loopback that records EventLists (after ``delay``)."""

    def __init__(self, delay=0.0, status=200):
        self.lists = []
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                time.sleep(delay)
                receiver.lists.append(json.loads(body))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/audit"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class Client:
    def __init__(self, url):
        self.url, self.verify, self.cert, self.token, self.timeout = url, True, None, "t", 5


def test_webhook_posts_event_lists():
    receiver = Receiver()
    try:
        backend = WebhookBackend(Client(receiver.url), initial_backoff=0.01)
        assert backend.process_events([EVENT, EVENT])
        (posted,) = receiver.lists
        assert posted["kind"] == "EventList" and posted["apiVersion"] == "audit.k8s.io/v1"
        assert posted["items"] == [EVENT, EVENT]
    finally:
        receiver.stop()


def test_webhook_down_retries_then_counts():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    failures = []
    backend = WebhookBackend(Client(f"http://127.0.0.1:{port}/audit"), initial_backoff=0.01,
                             errors=lambda plugin, n: failures.append((plugin, n)))
    assert backend.process_events([EVENT] * 3) is False
    assert failures == [("webhook", 3)]


def test_slow_webhook_never_holds_the_caller():
    receiver = Receiver(delay=1.0)
    try:
        buffered = Buffered(WebhookBackend(Client(receiver.url), initial_backoff=0.01),
                            BatchConfig(buffer_size=1000, max_batch_size=10,
                                        max_batch_wait=0.05, throttle_qps=100,
                                        throttle_burst=100))
        start = time.monotonic()
        for i in range(100):
            buffered.process_event(dict(EVENT, auditID=str(i)))
        assert time.monotonic() - start < 0.5
        deadline = time.monotonic() + 10
        while sum(len(l["items"]) for l in receiver.lists) < 100 and \
                time.monotonic() < deadline:
            time.sleep(0.05)
        assert sorted(int(e["auditID"]) for l in receiver.lists for e in l["items"]) == \
            list(range(100))
        buffered.shutdown()
    finally:
        receiver.stop()
