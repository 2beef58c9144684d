"""Metrics: upstream's families, counted cheaply in each worker, served summed.

``Metrics`` belongs to one ``APIServer``. Its vectors are written on the request path
(``labels(...)`` returns a cached child; ``inc``/``observe`` is a float addition and one
write to this worker's memory-mapped file, see ``store``). ``exposition()`` answers
``/metrics`` with every worker's values merged, plus what is computed at scrape time
(``add_collector``: stored object counts, build info, ``process_*`` of all processes).

Under ``kapiserver serve`` (or ``conf/gunicorn.conf.py``) the gunicorn master empties
``<data-dir>/metrics`` before the workers start (``prepare_multiprocess``) and names it in
``$KAPISERVER_METRICS_DIR``; a server built anywhere else (a test building ``APIServer``
in-process) keeps its values in a private directory, removed when it closes.
"""

from __future__ import annotations

import bisect
import logging
import os
import shutil
import tempfile
import threading

from . import exposition, families, process
from .families import Family
from .store import Registry, mark_process_dead, prepare_directory

log = logging.getLogger(__name__)

#: Set by the gunicorn master for its workers: the directory they all write into.
DIRECTORY_ENV = "KAPISERVER_METRICS_DIR"
#: How often a worker publishes its in-flight high-water mark (upstream: every second).
INFLIGHT_PERIOD = 1.0
READ_ONLY, MUTATING = "readOnly", "mutating"


def directory_of(data_dir: str) -> str:
    return os.path.join(data_dir, "metrics")


def prepare_multiprocess(data_dir: str) -> str:
    """In the gunicorn master, before any worker: empty the data dir's metrics directory
    and hand it to the workers. Returns the directory."""
    directory = directory_of(data_dir)
    prepare_directory(directory)
    os.environ[DIRECTORY_ENV] = directory
    return directory


def worker_exited(data_dir: str, pid: int) -> None:
    """In the gunicorn master, when worker ``pid`` ended: its live gauges stop counting."""
    mark_process_dead(directory_of(data_dir), pid)


class InFlight:
    """Requests executing in this worker, by kind, and the most seen since the last
    publication (upstream's ``apiserver_current_inflight_requests`` is a per-second
    high-water mark)."""

    __slots__ = ("current", "peak")

    def __init__(self):
        self.current = {READ_ONLY: 0, MUTATING: 0}
        self.peak = {READ_ONLY: 0, MUTATING: 0}

    def enter(self, kind: str) -> None:
        count = self.current[kind] = self.current[kind] + 1
        if count > self.peak[kind]:
            self.peak[kind] = count

    def leave(self, kind: str) -> None:
        self.current[kind] -= 1


class WatchTally:
    """The events one watch sent and their sizes, added up locally and written to
    ``apiserver_watch_events_total`` and ``apiserver_watch_events_sizes`` by ``flush``
    (a watch flushes at least every second and when it ends): an event costs a watcher
    two additions, not two writes, however many watchers there are."""

    __slots__ = ("_events", "_sizes", "_bounds", "counts", "sent", "total")

    def __init__(self, metrics: "Metrics", group: str, version: str, kind: str):
        self._events = metrics.watch_events.labels(group, version, kind)
        self._sizes = metrics.watch_event_sizes.labels(group, version, kind)
        self._bounds = families.WATCH_EVENT_SIZES.buckets
        self.counts = [0] * (len(self._bounds) + 1)
        self.sent = 0
        self.total = 0

    def add(self, size: int) -> None:
        self.sent += 1
        self.total += size
        self.counts[bisect.bisect_left(self._bounds, size)] += 1

    def flush(self) -> None:
        if self.sent:
            self._events.inc(self.sent)
            self._sizes.observe_many(self.counts, float(self.total))
            self.counts = [0] * len(self.counts)
            self.sent = self.total = 0


class Metrics:
    """The metrics of one server (see the module docstring)."""

    def __init__(self, directory: str | None = None, master_pid: int | None = None):
        self._private = directory is None
        self.directory = tempfile.mkdtemp(prefix="kapiserver-metrics-") if directory is None \
            else directory
        #: Whose ``process_*`` are reported: the master and its children, or this process.
        self.master_pid = master_pid
        self.registry = Registry(self.directory)
        self._collectors: list = []
        self.inflight = InFlight()
        vector = self.registry.vector
        self.request_total = vector(families.REQUEST_TOTAL)
        self.request_duration = vector(families.REQUEST_DURATION)
        self.response_sizes = vector(families.RESPONSE_SIZES)
        self.current_inflight = vector(families.CURRENT_INFLIGHT)
        self.longrunning = vector(families.LONGRUNNING)
        self.watch_events = vector(families.WATCH_EVENTS)
        self.watch_event_sizes = vector(families.WATCH_EVENT_SIZES)
        self.admission_step = vector(families.ADMISSION_STEP)
        self.admission_controller = vector(families.ADMISSION_CONTROLLER)
        self.admission_webhook = vector(families.ADMISSION_WEBHOOK)
        self.admission_webhook_requests = vector(families.ADMISSION_WEBHOOK_REQUESTS)
        self.audit_events = vector(families.AUDIT_EVENTS)
        self.audit_errors = vector(families.AUDIT_ERRORS)
        self.audit_levels = vector(families.AUDIT_LEVELS)
        self.audit_rejected = vector(families.AUDIT_REJECTED)
        self.authenticated_user_requests = vector(families.AUTHENTICATED_USER_REQUESTS)
        self.authentication_attempts = vector(families.AUTHENTICATION_ATTEMPTS)
        self.healthcheck = vector(families.HEALTHCHECK)
        self.healthchecks_total = vector(families.HEALTHCHECKS_TOTAL)
        self._sli_names = {f.name for f in families.SLI_FAMILIES}

    @classmethod
    def for_data_dir(cls, data_dir: str) -> "Metrics":
        """The metrics of a server on ``data_dir``: shared with the other workers when the
        gunicorn master prepared its directory, else private to this process."""
        shared = os.environ.get(DIRECTORY_ENV)
        if shared and os.path.abspath(shared) == os.path.abspath(directory_of(data_dir)) \
                and os.path.isdir(shared):
            return cls(shared, master_pid=os.getppid())
        return cls()

    # -- extension ------------------------------------------------------------------------

    def vector(self, family: Family):
        """The vector of ``family`` (declared once per server, by the core or a plugin):
        its values are summed across workers like the core's."""
        return self.registry.vector(family)

    def add_collector(self, collect) -> None:
        """Call ``collect() -> [prometheus_client Metric]`` at every scrape of ``/metrics``
        (values computed then, in the worker that answers: counts, constants)."""
        self._collectors.append(collect)

    # -- recording ------------------------------------------------------------------------

    def watch_tally(self, group: str, version: str, kind: str) -> WatchTally:
        return WatchTally(self, group, version, kind)

    def observe_healthcheck(self, name: str, kind: str, ok: bool) -> None:
        """``slis.ObserveHealthcheck``: one health check's result."""
        self.healthcheck.labels(name, kind).set(1.0 if ok else 0.0)
        self.healthchecks_total.labels(name, kind, "success" if ok else "error").inc()

    def publish_inflight(self) -> None:
        """Set the in-flight gauges to the high-water mark, and start a new period."""
        inflight = self.inflight
        for kind in (READ_ONLY, MUTATING):
            self.current_inflight.labels(kind).set(float(inflight.peak[kind]))
            inflight.peak[kind] = inflight.current[kind]

    def start(self, stopping: threading.Event) -> None:
        """Publish the in-flight high-water marks every second until ``stopping``."""
        self.publish_inflight()

        def loop():
            while not stopping.wait(INFLIGHT_PERIOD):
                self.publish_inflight()

        threading.Thread(target=loop, name="metrics-inflight", daemon=True).start()

    # -- scraping -------------------------------------------------------------------------

    def collect(self, slis: bool = False) -> list:
        merged = [m for m in self.registry.collect()
                  if (m.name in self._sli_names) == slis]
        if slis:
            return merged
        for collect in self._collectors:
            try:
                merged.extend(collect())
            except Exception:  # one broken collector must not take the others with it
                log.exception("metrics collector %r failed", collect)
        master = self.master_pid
        merged.extend(process.collect(master) if master else process.collect_self())
        return merged

    def exposition(self, slis: bool = False) -> bytes:
        """The text of ``/metrics`` (``slis``: of ``/metrics/slis``)."""
        return exposition.render(self.collect(slis))

    def close(self) -> None:
        self.registry.close()
        if self._private:
            shutil.rmtree(self.directory, ignore_errors=True)
