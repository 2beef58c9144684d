"""The ``apiserver_flowcontrol_*`` families, as ``util/flowcontrol/metrics`` of 1.32 declares
them (names, help, labels in declaration order, buckets).

Every worker writes its own values and ``/metrics`` sums them: counters and the gauges of
requests waiting or executing add up to the server's; each worker holds its own share of
every level's seats (see ``kapiserver.flowcontrol``), so the seat-limit gauges add up to
the server's limits too. ``seat_fair_frac`` and ``current_r`` are per-worker quantities:
the largest worker's is shown.
"""

from __future__ import annotations

from ..metrics.families import COUNTER, GAUGE, HISTOGRAM, LIVESUM, Family

_PL, _FS = "priority_level", "flow_schema"
QUEUE_LENGTH_BUCKETS = (0.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0)
REQUEST_DURATION_BUCKETS = (0.0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0,
                            30.0)
LIVEMAX = "livemax"


def _alpha(name: str, text: str, kind: str, labels=(), buckets=(), mode="") -> Family:
    return Family(f"apiserver_flowcontrol_{name}", f"[ALPHA] {text}", kind, tuple(labels),
                  tuple(buckets), mode)


def _beta(name: str, text: str, kind: str, labels=(), buckets=(), mode="") -> Family:
    return Family(f"apiserver_flowcontrol_{name}", f"[BETA] {text}", kind, tuple(labels),
                  tuple(buckets), mode)


REJECTED = _beta("rejected_requests_total",
                 "Number of requests rejected by API Priority and Fairness subsystem",
                 COUNTER, (_PL, _FS, "reason"))
DISPATCHED = _beta("dispatched_requests_total",
                   "Number of requests executed by API Priority and Fairness subsystem",
                   COUNTER, (_PL, _FS))
CURRENT_R = _alpha("current_r", "R(time of last change)", GAUGE, (_PL,), mode=LIVEMAX)
INQUEUE_REQUESTS = _beta("current_inqueue_requests", "Number of requests currently pending "
                         "in queues of the API Priority and Fairness subsystem", GAUGE,
                         (_PL, _FS), mode=LIVESUM)
INQUEUE_SEATS = _alpha("current_inqueue_seats", "Number of seats currently pending in queues "
                       "of the API Priority and Fairness subsystem", GAUGE, (_PL, _FS),
                       mode=LIVESUM)
QUEUE_LENGTH = _alpha("request_queue_length_after_enqueue", "Length of queue in the API "
                      "Priority and Fairness subsystem, as seen by each request after it is "
                      "enqueued", HISTOGRAM, (_PL, _FS), QUEUE_LENGTH_BUCKETS)
EXECUTING_REQUESTS = _beta("current_executing_requests", "Number of requests in initial (for "
                           "a WATCH) or any (for a non-WATCH) execution stage in the API "
                           "Priority and Fairness subsystem", GAUGE, (_PL, _FS), mode=LIVESUM)
EXECUTING_SEATS = _beta("current_executing_seats", "Concurrency (number of seats) occupied by "
                        "the currently executing (initial stage for a WATCH, any stage "
                        "otherwise) requests in the API Priority and Fairness subsystem",
                        GAUGE, (_PL, _FS), mode=LIVESUM)
WAIT_DURATION = _beta("request_wait_duration_seconds",
                      "Length of time a request spent waiting in its queue", HISTOGRAM,
                      (_PL, _FS, "execute"), REQUEST_DURATION_BUCKETS)
EXECUTION_SECONDS = _alpha("request_execution_seconds", "Duration of initial stage (for a "
                           "WATCH) or any (for a non-WATCH) stage of request execution in the "
                           "API Priority and Fairness subsystem", HISTOGRAM,
                           (_PL, _FS, "type"), REQUEST_DURATION_BUCKETS)
WORK_ESTIMATED_SEATS = _alpha("work_estimated_seats", "Number of estimated seats (maximum of "
                              "initial and final seats) associated with requests in API "
                              "Priority and Fairness", HISTOGRAM, (_PL, _FS),
                              (1.0, 2.0, 4.0, 10.0))
NO_ACCOMMODATION = _alpha("request_dispatch_no_accommodation_total", "Number of times a "
                          "dispatch attempt resulted in a non accommodation due to lack of "
                          "available seats", COUNTER, (_PL, _FS))
NOMINAL_LIMIT = _beta("nominal_limit_seats", "Nominal number of execution seats configured "
                      "for each priority level", GAUGE, (_PL,), mode=LIVESUM)
LOWER_LIMIT = _alpha("lower_limit_seats", "Configured lower bound on number of execution "
                     "seats available to each priority level", GAUGE, (_PL,), mode=LIVESUM)
UPPER_LIMIT = _alpha("upper_limit_seats", "Configured upper bound on number of execution "
                     "seats available to each priority level", GAUGE, (_PL,), mode=LIVESUM)
DEMAND_HIGH_WATERMARK = _alpha("demand_seats_high_watermark", "High watermark, over last "
                               "adjustment period, of demand_seats", GAUGE, (_PL,),
                               mode=LIVESUM)
DEMAND_AVERAGE = _alpha("demand_seats_average", "Time-weighted average, over last adjustment "
                        "period, of demand_seats", GAUGE, (_PL,), mode=LIVESUM)
DEMAND_STDEV = _alpha("demand_seats_stdev", "Time-weighted standard deviation, over last "
                      "adjustment period, of demand_seats", GAUGE, (_PL,), mode=LIVESUM)
DEMAND_SMOOTHED = _alpha("demand_seats_smoothed", "Smoothed seat demands", GAUGE, (_PL,),
                         mode=LIVESUM)
TARGET_SEATS = _alpha("target_seats", "Seat allocation targets", GAUGE, (_PL,), mode=LIVESUM)
FAIR_FRAC = _alpha("seat_fair_frac", "Fair fraction of server's concurrency to allocate to "
                   "each priority level that can use it", GAUGE, mode=LIVEMAX)
CURRENT_LIMIT = _alpha("current_limit_seats", "current derived number of execution seats "
                       "available to each priority level", GAUGE, (_PL,), mode=LIVESUM)


def _timing(name: str, text: str, labels, buckets) -> Family:
    return Family(f"apiserver_flowcontrol_{name}", f"EXPERIMENTAL: [ALPHA] {text}", HISTOGRAM,
                  tuple(labels), tuple(buckets))


SEAT_UTILIZATION = _timing(
    "priority_level_seat_utilization", "Observations, at the end of every nanosecond, of "
    "utilization of seats for any stage of execution (but only initial stage for WATCHes)",
    ("phase", _PL), (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0))
REQUEST_UTILIZATION = _timing(
    "priority_level_request_utilization", "Observations, at the end of every nanosecond, of "
    "number of requests (as a fraction of the relevant limit) waiting or in any stage of "
    "execution (but only initial stage for WATCHes)", ("phase", _PL),
    (0.0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.25, 0.5, 0.75, 1.0))
READ_VS_WRITE = _timing(
    "read_vs_write_current_requests", "Observations, at the end of every nanosecond, of the "
    "number of requests (as a fraction of the relevant limit) waiting or in regular stage "
    "of execution", ("phase", "request_kind"),
    (0.0, 0.001, 0.01, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0))
DEMAND_SEATS = _timing(
    "demand_seats", "Observations, at the end of every nanosecond, of (the number of seats "
    "each priority level could use) / (nominal number of seats for that level)", (_PL,),
    (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.7, 2.0, 2.8, 4.0, 6.0))

#: The families the filter writes, in the order ``/metrics`` has no use for.
ALL = (REJECTED, DISPATCHED, CURRENT_R, INQUEUE_REQUESTS, INQUEUE_SEATS, QUEUE_LENGTH,
       EXECUTING_REQUESTS, EXECUTING_SEATS, WAIT_DURATION, EXECUTION_SECONDS,
       WORK_ESTIMATED_SEATS, NO_ACCOMMODATION, NOMINAL_LIMIT, LOWER_LIMIT, UPPER_LIMIT,
       DEMAND_HIGH_WATERMARK, DEMAND_AVERAGE, DEMAND_STDEV, DEMAND_SMOOTHED, TARGET_SEATS,
       FAIR_FRAC, CURRENT_LIMIT, SEAT_UTILIZATION, REQUEST_UTILIZATION, READ_VS_WRITE,
       DEMAND_SEATS)
