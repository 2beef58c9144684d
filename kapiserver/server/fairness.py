"""The API Priority and Fairness filter (``WithPriorityAndFairness``) and its debug endpoints
(``/debug/api_priority_and_fairness/dump_*``); the machinery is ``kapiserver.flowcontrol``.

Long-running requests other than watches pass untouched; a watch holds its seats while its
handler starts it (until the stream is returned), as upstream's holds them until the
watch is initialized; any other request holds them until its answer is written. Every
classified request carries the uids of its FlowSchema and priority level in
``X-Kubernetes-PF-FlowSchema-UID`` and ``X-Kubernetes-PF-PriorityLevel-UID``; a refused
one gets upstream's 429 with the level's ``Retry-After``.
"""

from __future__ import annotations

import logging
import math
import threading
import time

from flask import Response

from ..endpoints.responses import http_error, status_response
from ..errors import StatusError
from ..flowcontrol import FlowControl
from ..flowcontrol import debug as dumps
from ..flowcontrol import metrics as families
from ..flowcontrol.config import ConfigConsumer
from ..flowcontrol.controller import BORROWING_PERIOD
from ..flowcontrol.estimate import ObjectCounts, WorkEstimator
from .instrumentation import record_dropped

log = logging.getLogger(__name__)

FLOW_SCHEMA_UID = "X-Kubernetes-PF-FlowSchema-UID"
PRIORITY_LEVEL_UID = "X-Kubernetes-PF-PriorityLevel-UID"
TOO_MANY = "Too many requests, please try again later."
DEBUG_PREFIX = "/debug/api_priority_and_fairness/"
#: The longest a request waits in a queue, whatever its timeout (upstream's cap).
MAX_WAIT = 60.0


def worker_share(config) -> int:
    """This worker's seats: the server's concurrency limit shared equally by the workers
    (see the design note in ``kapiserver.flowcontrol``)."""
    total = config.max_requests_inflight + config.max_mutating_requests_inflight
    return max(1, math.ceil(total / max(config.workers, 1)))


def _set_headers(response, admission) -> None:
    headers = response.headers
    headers[PRIORITY_LEVEL_UID] = admission.level.uid
    headers[FLOW_SCHEMA_UID] = admission.schema.uid


def with_priority_and_fairness(server, handler):
    """Classify, queue and limit every request (see the module docstring)."""
    config = server.config
    flow_control = FlowControl(worker_share(config), server.metrics)
    server.flow_control = flow_control
    counts = ObjectCounts(server)
    estimator = WorkEstimator(counts)
    consumer = ConfigConsumer(server, flow_control)
    server.add_post_start_hook("priority-and-fairness-config-consumer",
                               lambda _: consumer.start())
    server.add_post_start_hook("priority-and-fairness-filter",
                               lambda s: _start_borrowing(s, flow_control, consumer))
    server.add_post_start_hook("storage-object-count-tracker-hook",
                               lambda _: counts.count_all())
    default_wait = min(config.request_timeout / 4, MAX_WAIT)

    def priority_and_fairness(ctx):
        info = ctx.info
        watch = info.verb == "watch"
        if info.is_long_running and not watch:
            return handler(ctx)
        wait = default_wait
        if ctx.deadline is not None:
            # A quarter of the request's own time, counted from its arrival.
            elapsed = time.perf_counter() - ctx.started
            wait = min((ctx.deadline - time.monotonic() + elapsed) / 4, MAX_WAIT) - elapsed
        args = ctx.request.args
        admission = flow_control.admit(ctx.user, info,
                                       lambda level: estimator(info, args, level), wait,
                                       (ctx.user.name, info))
        if admission.rejected:
            record_dropped(server, ctx)
            response = http_error(TOO_MANY, 429)
            response.headers["Retry-After"] = str(flow_control.retry_after(
                admission.level.name))
            _set_headers(response, admission)
            return response
        try:
            response = handler(ctx)
        except StatusError as err:
            # Answered here so that the answer, too, names its flow schema and level.
            response = status_response(err, ctx.accept)
        except BaseException:
            flow_control.release(admission, watch)
            raise
        if watch:
            flow_control.release(admission, watch)
        else:
            # Held until the answer is written (the response is closed), as upstream's
            # handler writes it while it holds them: sending a LIST of megabytes is much
            # of its work, and the seats are what keeps a flood of them in its queues.
            response.call_on_close(lambda: flow_control.release(admission, watch))
        _set_headers(response, admission)
        return response

    return priority_and_fairness


#: Seconds between two writes of the timing ratio histograms.
FLUSH_PERIOD = 1.0


def _start_borrowing(server, flow_control, consumer) -> None:
    """Write the timing ratio histograms every second, re-divide seats between levels
    every ``BORROWING_PERIOD`` (and reload a config feed whose watch ended), until the
    server stops."""
    rounds = round(BORROWING_PERIOD / FLUSH_PERIOD)

    def loop():
        count = 0
        while not server.stopping.wait(FLUSH_PERIOD):
            count += 1
            try:
                flow_control.flush_timing()
                if count % rounds == 0:
                    flow_control.update_borrowing()
                    consumer.refresh()
            except Exception:
                log.exception("priority and fairness: periodic adjustment failed")

    threading.Thread(target=loop, name="apf-borrowing", daemon=True).start()


def _server_totals(server) -> dict:
    """Per level, the counts of ``dump_priority_levels`` summed over the workers (from
    the metrics every worker writes)."""
    wanted = {families.INQUEUE_REQUESTS.name: 0, families.EXECUTING_REQUESTS.name: 1,
              families.DISPATCHED.name: 2, families.REJECTED.name: 3}
    totals: dict[str, list] = {}
    for metric in server.metrics.registry.collect():
        column = wanted.get(metric.name)
        if column is None:
            continue
        for sample in metric.samples:
            if sample.name.endswith("_created"):
                continue
            level = sample.labels.get("priority_level", "")
            row = totals.setdefault(level, [0, 0, 0, 0, 0, 0])
            row[column] += int(sample.value)
            if column == 3 and sample.labels.get("reason") == "time-out":
                row[5] += int(sample.value)
    return {level: tuple(row) for level, row in totals.items()}


def with_debug_paths(server, handler):
    """Serve ``/debug/api_priority_and_fairness/dump_priority_levels``, ``dump_queues`` and
    ``dump_requests`` (``?includeRequestDetails=1``) when APF is on; authorized as the
    non-resource URLs they are, by the filters before this one."""

    def debug(ctx):
        flow_control = getattr(server, "flow_control", None)
        path = ctx.request.path
        if flow_control is None or not path.startswith(DEBUG_PREFIX):
            return handler(ctx)
        what = path[len(DEBUG_PREFIX):]
        levels = flow_control.levels
        if what == "dump_priority_levels":
            body = dumps.priority_levels(levels, _server_totals(server))
        elif what == "dump_queues":
            body = dumps.queues(levels)
        elif what == "dump_requests":
            offset = time.time() - time.monotonic()
            body = dumps.requests(levels, lambda m: m + offset,
                                  bool(ctx.request.args.get("includeRequestDetails")))
        else:
            return handler(ctx)
        return Response(body, 200, content_type="text/plain; charset=utf-8")

    return debug
