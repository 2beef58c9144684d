"""``/debug/api_priority_and_fairness/dump_*`` (``apf_controller_debug.go``): text tables laid
out as Go's ``tabwriter`` (minimum cell width 8, one space of padding) lays them out."""

from __future__ import annotations

import datetime

from .fairqueuing import format_seat_seconds

PRIORITY_LEVEL_COLUMNS = ("PriorityLevelName", "ActiveQueues", "IsIdle", "IsQuiescing",
                          "WaitingRequests", "ExecutingRequests", "DispatchedRequests",
                          "RejectedRequests", "TimedoutRequests", "CancelledRequests")
QUEUE_COLUMNS = ("PriorityLevelName", "Index", "PendingRequests", "ExecutingRequests",
                 "SeatsInUse", "NextDispatchR", "InitialSeatsSum", "MaxSeatsSum",
                 "TotalWorkSum")
REQUEST_COLUMNS = ("PriorityLevelName", "FlowSchemaName", "QueueIndex", "RequestIndexInQueue",
                   "FlowDistingsher", "ArriveTime", "InitialSeats", "FinalSeats",
                   "AdditionalLatency", "StartTime")
REQUEST_DETAIL_COLUMNS = ("UserName", "Verb", "APIPath", "Namespace", "Name", "APIVersion",
                          "Resource", "SubResource")
MIN_WIDTH, PADDING = 8, 1


def tabulate(rows: list[list[str]]) -> str:
    """Each row's cells joined by ``,\\t`` and aligned: every cell but a line's last is
    padded to its column's widest (plus one space, at least 8 in all)."""
    cells = [[f"{cell}," for cell in row[:-1]] + [str(row[-1])] for row in rows]
    widths: dict[int, int] = {}
    for row in cells:
        for index, cell in enumerate(row[:-1]):
            widths[index] = max(widths.get(index, MIN_WIDTH), len(cell) + PADDING)
    lines = []
    for row in cells:
        lines.append("".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:-1]))
                     + row[-1])
    return "".join(line + "\n" for line in lines)


def _bool(value: bool) -> str:
    return "true" if value else "false"


def priority_levels(levels: dict, totals: dict | None = None) -> str:
    """``dump_priority_levels``. ``totals`` (level -> counts summed over the server's
    workers: waiting, executing, dispatched, rejected, cancelled) replaces this worker's
    own counts when given."""
    rows = [list(PRIORITY_LEVEL_COLUMNS)]
    for name in sorted(levels):
        state = levels[name]
        queues = state.queues
        active = sum(1 for q in queues.queues if q.waiting)
        counts = (queues.waiting, queues.executing, queues.dispatched, queues.rejected,
                  queues.timed_out, queues.cancelled)
        if totals is not None and name in totals:
            counts = totals[name]
        waiting, executing = counts[0], counts[1]
        rows.append([name, str(active), _bool(waiting == 0 and executing == 0),
                     _bool(state.quiescing)] + [str(c) for c in counts])
    return tabulate(rows)


def queues(levels: dict) -> str:
    """``dump_queues``: every queue of every level."""
    rows = [list(QUEUE_COLUMNS)]
    for name in sorted(levels):
        for index, queue in enumerate(levels[name].queues.queues):
            rows.append([name, str(index), str(len(queue.waiting)), str(len(queue.executing)),
                         str(queue.seats_in_use), format_seat_seconds(queue.next_dispatch_r),
                         str(queue.initial_seats_sum), str(queue.max_seats_sum),
                         format_seat_seconds(queue.total_work_sum)])
    return tabulate(rows)


def _time(wall_clock_of, monotonic: float | None) -> str:
    if monotonic is None:
        return "0001-01-01T00:00:00Z"  # Go's zero time
    moment = datetime.datetime.fromtimestamp(wall_clock_of(monotonic), datetime.timezone.utc)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S.%f").rstrip("0").rstrip(".")
    return text + "Z"


def _latency(seconds: float) -> str:
    """A ``time.Duration`` as Go prints it (only whole values here: ``0s``, ``5ms``)."""
    if not seconds:
        return "0s"
    if seconds < 1:
        return f"{seconds * 1000:g}ms"
    return f"{seconds:g}s"


def requests(levels: dict, wall_clock_of, details: bool) -> str:
    """``dump_requests``: waiting requests (with their index in their queue), then executing
    ones (index -1; -1 for the queue too when they never had one)."""
    header = list(REQUEST_COLUMNS) + (list(REQUEST_DETAIL_COLUMNS) if details else [])
    rows = [header]

    def row(level, request, queue_index, position):
        cells = [level, request.fs_name, str(queue_index), str(position),
                 request.distinguisher, _time(wall_clock_of, request.arrival),
                 str(request.work.initial_seats), str(request.work.final_seats),
                 _latency(request.work.additional_latency),
                 _time(wall_clock_of, request.start)]
        if details:
            user, info = request.details or ("", None)
            version = ""
            if info is not None:
                version = f"{info.api_group}/{info.api_version}" if info.api_group \
                    else info.api_version
            cells += [user, info.verb if info else "", info.path if info else "",
                      info.namespace if info else "", info.name if info else "", version,
                      info.resource if info else "", info.subresource if info else ""]
        rows.append(cells)

    for name in sorted(levels):
        queue_set = levels[name].queues
        for index, queue in enumerate(queue_set.queues):
            for position, request in enumerate(queue.waiting):
                row(name, request, index, position)
            for request in queue.executing:
                row(name, request, index, -1)
        for request in queue_set.queueless:
            row(name, request, -1, -1)
    return tabulate(rows)
