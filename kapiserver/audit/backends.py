"""The audit backends kube-apiserver has: a log file and a webhook, each in a mode.

* ``LogBackend`` (``plugin/pkg/audit/log``): one line per event, JSON (``json``) or
  upstream's one-line text (``legacy``), to a rotated file or standard output.
* ``WebhookBackend`` (``plugin/pkg/audit/webhook``): events POSTed as an ``EventList``
  to the server a kubeconfig names, retried with exponential backoff.
* Modes (``--audit-log-mode``, ``--audit-webhook-mode``): ``blocking`` writes on the
  request path and ignores failures (``IgnoreErrors``); ``blocking-strict`` also refuses
  the request when its first event cannot be stored; ``batch`` (``Buffered``) puts events
  in a bounded buffer that a background greenlet drains in batches (size, wait, throttle):
  a request never waits for the receiver, and events that find the buffer full are dropped
  and counted in ``apiserver_audit_error_total{plugin="buffered"}``, as upstream.

Every backend has ``process_events(events) -> bool`` (True when stored) besides the
``AuditBackend.process_event`` the filter calls.
"""

from __future__ import annotations

import logging
import queue
import random
import threading
import time
from dataclasses import dataclass

from ..serialization import dumps_json
from . import AuditBackend

log = logging.getLogger(__name__)

BLOCKING, BLOCKING_STRICT, BATCH = "blocking", "blocking-strict", "batch"
MODES = (BATCH, BLOCKING, BLOCKING_STRICT)
FORMAT_JSON, FORMAT_LEGACY = "json", "legacy"
FORMATS = (FORMAT_LEGACY, FORMAT_JSON)
#: How long shutting down waits for buffered events to be written or sent.
SHUTDOWN_WAIT = 5.0


def _no_errors(plugin: str, count: int) -> None:
    """Where backends report events they failed to store when nobody counts them."""


@dataclass(frozen=True)
class BatchConfig:
    """``buffered.BatchConfig``: the buffer, the batches, the throttle, async sending."""

    buffer_size: int = 10000
    max_batch_size: int = 400
    max_batch_wait: float = 30.0
    throttle_enable: bool = True
    throttle_qps: float = 10.0
    throttle_burst: int = 15
    async_delegate: bool = True


#: Upstream's defaults: the webhook batches 400 events or 30 s, 10 batches a second; the
#: log, in batch mode, writes each event on its own, unthrottled, from one greenlet.
WEBHOOK_BATCH = BatchConfig()
LOG_BATCH = BatchConfig(max_batch_size=1, max_batch_wait=0.0, throttle_enable=False,
                        async_delegate=False)


def _quoted(value: str) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def event_string(event: dict) -> str:
    """``audit.EventString``: the ``legacy`` log format's line (without its newline)."""
    user = event.get("user") or {}
    username, groups = "<none>", "<none>"
    if user.get("username"):
        username = user["username"]
        if user.get("groups"):
            groups = ",".join(_quoted(g) for g in user["groups"])
    asuser, asgroups = "<self>", "<lookup>"
    impersonated = event.get("impersonatedUser")
    if impersonated is not None:
        asuser = impersonated.get("username", "")
        if impersonated.get("groups") is not None:
            asgroups = ",".join(_quoted(g) for g in impersonated["groups"])
    namespace = (event.get("objectRef") or {}).get("namespace") or "<none>"
    status = event.get("responseStatus")
    response = str(status.get("code", 0)) if status is not None else "<deferred>"
    ips = event.get("sourceIPs") or []
    ip = ips[0] if ips else "<unknown>"
    received = event.get("requestReceivedTimestamp", "")
    # Go's RFC3339Nano drops trailing zeros of the fraction.
    if "." in received:
        head, _, fraction = received[:-1].partition(".")
        fraction = fraction.rstrip("0")
        received = f"{head}.{fraction}Z" if fraction else f"{head}Z"
    return (f"{received} AUDIT: id={_quoted(event.get('auditID', ''))} "
            f"stage={_quoted(event.get('stage', ''))} ip={_quoted(ip)} "
            f"method={_quoted(event.get('verb', ''))} user={_quoted(username)} "
            f"groups={_quoted(groups)} as={_quoted(asuser)} asgroups={_quoted(asgroups)} "
            f"user-agent={_quoted(event.get('userAgent', ''))} "
            f"namespace={_quoted(namespace)} uri={_quoted(event.get('requestURI', ''))} "
            f'response="{response}"')


class LogBackend(AuditBackend):
    """Events as lines of ``writer`` (anything with ``write(bytes)``)."""

    name = "log"

    def __init__(self, writer, format: str = FORMAT_JSON, errors=_no_errors):
        self.writer = writer
        self.format = format
        self.errors = errors

    def process_event(self, event: dict) -> bool:
        return self.process_events([event])

    def process_events(self, events: list) -> bool:
        if self.format == FORMAT_LEGACY:
            data = "".join(event_string(e) + "\n" for e in events).encode()
        else:
            data = b"".join(dumps_json(e) for e in events)
        try:
            self.writer.write(data)
        except (OSError, ValueError) as err:
            self.errors(self.name, len(events))
            log.error("Error in audit plugin 'log' affecting %d audit events: %s",
                      len(events), err)
            return False
        return True

    def shutdown(self) -> None:
        close = getattr(self.writer, "close", None)
        if close is not None:
            close()


class StandardOutput:
    """``--audit-log-path -``: the process's standard output, flushed per write."""

    def write(self, data: bytes) -> None:
        import sys

        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


class WebhookBackend(AuditBackend):
    """Events POSTed as ``audit.k8s.io/v1`` ``EventList`` to a webhook.

    Every failure (no connection, a timeout, any answer but 2xx) is retried after
    ``initial_backoff`` seconds, then 1.5 times longer each time with ±20 % jitter, five
    attempts in all (``webhook.DefaultRetryBackoffWithInitialDelay``); events still not
    sent are counted in ``apiserver_audit_error_total{plugin="webhook"}``.
    """

    name = "webhook"
    STEPS, FACTOR, JITTER = 5, 1.5, 0.2

    def __init__(self, client, initial_backoff: float = 10.0, errors=_no_errors,
                 stopping: threading.Event | None = None):
        self.client = client
        self.initial_backoff = initial_backoff
        self.errors = errors
        self.stopping = stopping or threading.Event()
        self._session = None

    def process_event(self, event: dict) -> bool:
        return self.process_events([event])

    def process_events(self, events: list) -> bool:
        body = dumps_json({"kind": "EventList", "apiVersion": "audit.k8s.io/v1",
                           "metadata": {}, "items": events})
        delay, problem = self.initial_backoff, ""
        for attempt in range(self.STEPS):
            if attempt:
                wait = delay * (1 + random.random() * self.JITTER)
                if self.stopping.wait(wait):
                    problem = f"{problem} (not retried: the server is shutting down)"
                    break
                delay *= self.FACTOR
            problem = self._post(body)
            if not problem:
                return True
        self.errors(self.name, len(events))
        log.error("Error in audit plugin 'webhook' affecting %d audit events: %s",
                  len(events), problem)
        return False

    def _post(self, body: bytes) -> str:
        """POST once; return the failure's wording, or "" when the webhook took it."""
        import requests

        from ..webhookerrors import refusal, request_error

        client = self.client
        if self._session is None:
            self._session = requests.Session()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if client.token:
            headers["Authorization"] = f"Bearer {client.token}"
        try:
            response = self._session.post(client.url, data=body, headers=headers,
                                          verify=client.verify, cert=client.cert,
                                          timeout=client.timeout)
        except requests.RequestException as err:
            import urllib.parse

            target = urllib.parse.urlsplit(client.url)
            return request_error(err, "POST", client.url,
                                 (target.hostname or "", target.port or 443),
                                 target.hostname or "", client.verify)
        if 200 <= response.status_code < 300:
            return ""
        return refusal(response.status_code, response.content,
                       response.headers.get("Content-Type", ""))

    def shutdown(self) -> None:
        self.stopping.set()
        if self._session is not None:
            self._session.close()


class IgnoreErrors(AuditBackend):
    """``blocking`` mode: the delegate's failures never refuse a request."""

    def __init__(self, delegate):
        self.delegate = delegate
        self.name = delegate.name

    def process_event(self, event: dict) -> bool:
        self.delegate.process_event(event)
        return True

    def shutdown(self) -> None:
        self.delegate.shutdown()


class Throttle:
    """A token bucket: ``accept()`` waits until a batch may go (``qps``, ``burst``)."""

    def __init__(self, qps: float, burst: int):
        self.qps = qps
        self.burst = float(burst)
        self.tokens = float(burst)
        self.last = time.monotonic()

    def accept(self) -> None:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.last) * self.qps)
        self.last = now
        if self.tokens < 1.0:
            time.sleep((1.0 - self.tokens) / self.qps)
            self.tokens = 1.0
            self.last = time.monotonic()
        self.tokens -= 1.0


class Buffered(AuditBackend):
    """``batch`` mode (``plugin/pkg/audit/buffered``): see the module docstring."""

    PLUGIN = "buffered"

    def __init__(self, delegate, config: BatchConfig, errors=_no_errors):
        self.delegate = delegate
        self.name = delegate.name
        self.config = config
        self.errors = errors
        self.buffer: queue.Queue = queue.Queue(maxsize=config.buffer_size)
        self.throttle = Throttle(config.throttle_qps, config.throttle_burst) \
            if config.throttle_enable else None
        self.stopping = threading.Event()
        self._sending: set = set()
        self._thread = threading.Thread(target=self._run, name=f"audit-{self.name}-batches",
                                        daemon=True)
        self._thread.start()

    def process_event(self, event: dict) -> bool:
        if self.stopping.is_set():
            self.errors(self.PLUGIN, 1)
            return True
        try:
            self.buffer.put_nowait(event)
        except queue.Full:
            # "audit buffer queue blocked": dropped, counted, never waited for.
            self.errors(self.PLUGIN, 1)
        return True

    def _collect(self, wait: float | None) -> list:
        """Up to a batch of events: the first waits (at most ``wait``), the rest until the
        batch is full or its ``max_batch_wait`` has passed."""
        config = self.config
        events = []
        deadline = time.monotonic() + config.max_batch_wait
        while len(events) < config.max_batch_size:
            timeout = wait if not events else deadline - time.monotonic()
            if config.max_batch_size == 1 or timeout is None:
                timeout = wait
            if timeout is not None and timeout <= 0:
                break
            try:
                events.append(self.buffer.get(timeout=timeout))
            except queue.Empty:
                break
        return events

    def _run(self) -> None:
        while not self.stopping.is_set():
            events = self._collect(0.5)
            if events:
                self._send(events)
        while True:  # shutting down: what is buffered goes out, without waiting
            events = self._collect(0)
            if not events:
                break
            self._send(events)

    def _send(self, events: list) -> None:
        if self.throttle is not None and not self.stopping.is_set():
            self.throttle.accept()
        if not self.config.async_delegate:
            self._deliver(events)
            return
        sender = threading.Thread(target=self._deliver, args=(events,), daemon=True,
                                  name=f"audit-{self.name}-send")
        self._sending.add(sender)
        sender.start()

    def _deliver(self, events: list) -> None:
        try:
            self.delegate.process_events(events)
        except Exception:
            self.errors(self.name, len(events))
            log.exception("audit backend %s failed", self.name)
        finally:
            self._sending.discard(threading.current_thread())

    def shutdown(self) -> None:
        """Send what is buffered (waiting ``SHUTDOWN_WAIT`` at most), then stop."""
        self.stopping.set()
        deadline = time.monotonic() + SHUTDOWN_WAIT
        self._thread.join(SHUTDOWN_WAIT)
        for sender in list(self._sending):
            sender.join(max(0.0, deadline - time.monotonic()))
        self.delegate.shutdown()


def with_mode(backend, mode: str, batch: BatchConfig, errors=_no_errors):
    """``AuditBatchOptions.wrapBackend``."""
    if mode == BLOCKING_STRICT:
        return backend
    if mode == BLOCKING:
        return IgnoreErrors(backend)
    return Buffered(backend, batch, errors)
