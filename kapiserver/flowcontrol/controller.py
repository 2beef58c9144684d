"""One worker's API Priority and Fairness state (``util/flowcontrol/apf_controller.go``):
the FlowSchemas in matching order, a ``QueueSet`` per priority level, the seats each level
may use, and the periodic re-division of seats between levels that lend and borrow.

``apply_config`` digests the stored objects (the mandatory ones are imagined when
missing) and answers the FlowSchema status conditions to write; ``admit`` classifies a
request, estimates its seats and queues it (blocking its greenlet) or rejects it;
``release`` frees its seats. Nothing here touches storage or HTTP.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

from . import bootstrap
from . import metrics as families
from .allocation import Item, compute_allocation
from .fairqueuing import EXECUTE, Integrator, Observer, QueueSet
from .matching import flow_distinguisher, hash_flow, matches, matching_order
from .timing import TimingRatio

log = logging.getLogger(__name__)

#: ``priorityLevelMaxSeatsPercent``: a request takes at most 15 % of its level's seats.
MAX_SEATS_PERCENT = 0.15
#: ``MaximumSeatsLimit``.
MAXIMUM_SEATS = 10
#: ``borrowingAdjustmentPeriod`` and ``seatDemandSmoothingCoefficient``.
BORROWING_PERIOD = 10.0
SMOOTHING = 0.977
DANGLING = "Dangling"
#: The most (user, request) classes ``classify`` remembers before it starts over.
CLASSIFY_CACHE = 4096


def go_round(value: float) -> int:
    """Go's ``math.Round``: halves away from zero."""
    return int(math.floor(value + 0.5)) if value >= 0 else -int(math.floor(-value + 0.5))


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _int(value, default=None):
    return value if isinstance(value, int) and not isinstance(value, bool) else default


@dataclass
class Schema:
    """One FlowSchema as the filter uses it."""

    name: str
    uid: str
    spec: dict
    level: str


class LevelMetrics(Observer):
    """A priority level's metric children, written as its queue set reports."""

    def __init__(self, vectors: dict, name: str, clock=time.monotonic):
        self.vectors = vectors
        self.name = name
        self.clock = clock
        self._children: dict = {}
        #: The timing ratio histograms, flushed every second.
        self.timing: list[TimingRatio] = []
        self.seat_utilization = self._timing(families.SEAT_UTILIZATION, "executing")
        self.waiting_utilization = self._timing(families.REQUEST_UTILIZATION, "waiting")
        self.executing_utilization = self._timing(families.REQUEST_UTILIZATION, "executing")
        self.demand_ratio = self._timing(families.DEMAND_SEATS)

    def _timing(self, family, *phase) -> TimingRatio:
        child = TimingRatio(self.vectors[family.name].labels(*phase, self.name),
                            family.buckets, self.clock)
        self.timing.append(child)
        return child

    def set_denominators(self, concurrency: float, waiting: float | None = None) -> None:
        for child in (self.seat_utilization, self.executing_utilization, self.demand_ratio):
            child.set_denominator(concurrency)
        if waiting is not None:
            self.waiting_utilization.set_denominator(waiting)

    def child(self, family, *labels):
        key = (family.name, labels)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = self.vectors[family.name].labels(self.name, *labels)
        return child

    def waiting(self, fs_name, requests, seats):
        self.child(families.INQUEUE_REQUESTS, fs_name).inc(requests)
        self.child(families.INQUEUE_SEATS, fs_name).inc(seats)
        self.waiting_utilization.add(requests)

    def executing(self, fs_name, requests, seats):
        self.child(families.EXECUTING_REQUESTS, fs_name).inc(requests)
        self.child(families.EXECUTING_SEATS, fs_name).inc(seats)
        self.executing_utilization.add(requests)
        self.seat_utilization.add(seats)

    def demand(self, seats):
        self.demand_ratio.set(seats)

    def rejected(self, fs_name, reason):
        self.child(families.REJECTED, fs_name, reason).inc()

    def enqueued(self, fs_name, length):
        self.child(families.QUEUE_LENGTH, fs_name).observe(float(length))

    def current_r(self, value):
        pass  # written at each borrowing adjustment, not at every step

    def set(self, family, value: float) -> None:
        self.child(family).set(float(value))


class _NoVectors(dict):
    """Metric vectors of a controller that records nothing (unit tests)."""

    def __missing__(self, name):
        return _Nothing()


class _Nothing:
    def labels(self, *values):
        return self

    def inc(self, amount=1.0):
        pass

    def set(self, value):
        pass

    def observe(self, value):
        pass

    def observe_many(self, counts, total):
        pass


class LevelState:
    """``priorityLevelState``: one priority level's object, queues and limits."""

    def __init__(self, obj: dict, queues: QueueSet, observer: LevelMetrics, clock):
        self.obj = obj
        self.queues = queues
        self.metrics = observer
        self.demand = Integrator(clock)
        self.quiescing = False
        self.nominal = self.min = self.max = self.current = 0
        self.max_seats = 0
        self.new = True
        self.smoothed = self.average = self.deviation = 0.0
        self.high_watermark = 0

    @property
    def name(self) -> str:
        return _dict(self.obj.get("metadata")).get("name", "")

    @property
    def uid(self) -> str:
        return _dict(self.obj.get("metadata")).get("uid", "")

    @property
    def spec(self) -> dict:
        return _dict(self.obj.get("spec"))

    @property
    def exempt(self) -> bool:
        return self.spec.get("type") == "Exempt"

    def commons(self) -> tuple[int, int | None, int | None]:
        """``plSpecCommons``: nominal shares, lendable and borrowing-limit percents."""
        if self.exempt:
            exempt = _dict(self.spec.get("exempt"))
            return _int(exempt.get("nominalConcurrencyShares"), 0), \
                _int(exempt.get("lendablePercent")), None
        limited = _dict(self.spec.get("limited"))
        return _int(limited.get("nominalConcurrencyShares"), 30), \
            _int(limited.get("lendablePercent")), _int(limited.get("borrowingLimitPercent"))

    def queuing(self) -> dict | None:
        if self.exempt:
            return None
        response = _dict(_dict(self.spec.get("limited")).get("limitResponse"))
        queuing = response.get("queuing")
        return queuing if response.get("type") == "Queue" and isinstance(queuing, dict) \
            else None

    def configure_queues(self) -> None:
        queuing = self.queuing()
        if self.exempt:
            self.queues.configure(-1, 0, 0, self.current)
        elif queuing is None:
            self.queues.configure(0, 0, 0, self.current)
        else:
            self.queues.configure(_int(queuing.get("queues"), 64),
                                  _int(queuing.get("queueLengthLimit"), 50),
                                  _int(queuing.get("handSize"), 8), self.current)


def _broken(obj: dict) -> str:
    """Why a priority level's spec cannot be used (``queueSetCompleterForPL``), or ""."""
    spec = _dict(obj.get("spec"))
    kind, name = spec.get("type"), _dict(obj.get("metadata")).get("name")
    if (kind == "Limited") != isinstance(spec.get("limited"), dict):
        return "broken union structure at the top, for Limited"
    if (kind == "Exempt") != isinstance(spec.get("exempt"), dict):
        return "broken union structure at the top, for Exempt"
    if (kind == "Exempt") != (name == bootstrap.EXEMPT):
        return "non-alignment between name and type"
    if kind == "Limited":
        response = _dict(spec["limited"].get("limitResponse"))
        if (response.get("type") == "Reject") != (response.get("queuing") is None):
            return "broken union structure for limit response"
        queuing = response.get("queuing")
        if isinstance(queuing, dict):
            from .fairqueuing import Dealer

            try:
                Dealer(_int(queuing.get("queues"), 0), _int(queuing.get("handSize"), 0))
            except ValueError as err:
                return str(err)
    return ""


class Admission:
    """What ``admit`` decided for one request: its FlowSchema and priority level (their
    uids go in the response headers) and, unless ``rejected``, its place in a queue set."""

    __slots__ = ("schema", "level", "request", "reason", "estimate", "queued", "started",
                 "arrival", "kind")

    def __init__(self, schema: Schema, level: LevelState):
        self.schema, self.level = schema, level
        self.request = None
        self.reason = ""
        self.estimate = None
        self.queued = False
        self.started = 0.0
        self.arrival = 0.0
        self.kind = "readOnly"

    @property
    def rejected(self) -> bool:
        return self.request is None or self.request.decision != EXECUTE


class FlowControl:
    """A worker's API Priority and Fairness (see the module docstring).

    ``server_limit`` is this worker's share of the server's seats; ``metrics`` a
    ``kapiserver.metrics.Metrics`` (or None); ``event_factory`` makes the events queued
    requests wait on (gevent's by default)."""

    def __init__(self, server_limit: int, metrics=None, clock=time.monotonic,
                 event_factory=None):
        self.server_limit = max(server_limit, 1)
        self.clock = clock
        self.event_factory = event_factory
        self.vectors = _NoVectors() if metrics is None else \
            {family.name: metrics.vector(family) for family in families.ALL}
        self.schemas: list[Schema] = []
        self.levels: dict[str, LevelState] = {}
        #: ``classify``'s answers for ``_classified_for`` (the schemas they were found in).
        self._classified: dict[tuple, Schema] = {}
        self._classified_for: list[Schema] | None = None
        self.nominal_sum = 0
        self.fair_frac = 0.0
        #: The latest retry-after per priority level (``droppedRequestsTracker``).
        self.dropped = DroppedRequests(clock=time.time)
        #: ``read_vs_write_current_requests``: (phase, request kind) -> its timing ratio.
        self.read_vs_write = {
            (phase, kind): TimingRatio(self.vectors[families.READ_VS_WRITE.name].labels(
                phase, kind), families.READ_VS_WRITE.buckets, clock)
            for phase in ("waiting", "executing") for kind in ("readOnly", "mutating")}
        self.apply_config([], [])

    # -- configuration ------------------------------------------------------------------------

    def _state(self, obj: dict) -> LevelState:
        name = _dict(obj.get("metadata")).get("name", "")
        state = self.levels.get(name)
        if state is None:
            observer = LevelMetrics(self.vectors, name, self.clock)
            queues = QueueSet(name, self.clock, observer, self.event_factory)
            state = LevelState(obj, queues, observer, self.clock)
        state.obj = obj
        return state

    def apply_config(self, levels: list[dict], schemas: list[dict]) -> list[tuple[dict, dict]]:
        """Digest the stored PriorityLevelConfigurations and FlowSchemas; returns the
        ``(flowSchema, condition)`` pairs whose ``Dangling`` condition must be written."""
        new: dict[str, LevelState] = {}
        for obj in levels:
            reason = _broken(obj)
            name = _dict(obj.get("metadata")).get("name", "")
            if reason:
                log.warning("ignoring PriorityLevelConfiguration %s: %s", name, reason)
                continue
            state = self._state(obj)
            state.quiescing = False
            new[name] = state
        updates, sequence = [], []
        for obj in sorted(schemas, key=matching_order):
            meta, spec = _dict(obj.get("metadata")), _dict(obj.get("spec"))
            level = _dict(spec.get("priorityLevelConfiguration")).get("name", "")
            condition = dangling_condition(obj, level not in new, level)
            if condition is not None:
                updates.append((obj, condition))
            if level in new:
                sequence.append(Schema(meta.get("name", ""), meta.get("uid", ""), spec, level))
        names = {schema.name for schema in sequence}
        if bootstrap.EXEMPT not in names:
            sequence.insert(0, self._imagined_schema(bootstrap.EXEMPT))
        if bootstrap.CATCH_ALL not in names:
            sequence.append(self._imagined_schema(bootstrap.CATCH_ALL))
        for name, state in self.levels.items():
            if name in new:
                continue
            mandatory = name in bootstrap.MANDATORY_PRIORITY_LEVELS
            if not mandatory and state.queues.idle:
                continue  # an undesired level goes once idle
            if not mandatory:
                state.quiescing = True
            new[name] = state
        for name in bootstrap.MANDATORY_PRIORITY_LEVELS:
            if name not in new:
                new[name] = self._state(bootstrap.mandatory_object(
                    "PriorityLevelConfiguration", name))
        self.schemas = sequence
        self.levels = new
        self._set_limits()
        return updates

    def _imagined_schema(self, name: str) -> Schema:
        spec = bootstrap.MANDATORY_FLOW_SCHEMAS[name]
        return Schema(name, "", spec, spec["priorityLevelConfiguration"]["name"])

    def _set_limits(self) -> None:
        """``finishQueueSetReconfigsLocked``: each level's nominal, lower and upper limits
        from the shares, then the current limits (``updateBorrowingLocked``)."""
        share_sum = sum(state.commons()[0] for state in self.levels.values()) or 1
        self.nominal_sum = 0
        most_waiting = 0
        for state in self.levels.values():
            shares, lendable, borrowing = state.commons()
            nominal = math.ceil(self.server_limit * shares / share_sum)
            lendable_cl = go_round(nominal * lendable / 100) if lendable is not None else 0
            borrowing_cl = go_round(nominal * borrowing / 100) if borrowing is not None \
                else self.server_limit
            state.nominal, state.min = nominal, nominal - lendable_cl
            state.max = nominal + borrowing_cl
            state.metrics.set(families.NOMINAL_LIMIT, nominal)
            state.metrics.set(families.LOWER_LIMIT, state.min)
            state.metrics.set(families.UPPER_LIMIT, state.max)
            self.nominal_sum += nominal
            queuing = state.queuing()
            waiting = 1
            if queuing is not None:
                waiting = max(_int(queuing.get("queueLengthLimit"), 50), 1) * \
                    max(_int(queuing.get("queues"), 64), 1)
                most_waiting += waiting
            state.metrics.waiting_utilization.set_denominator(waiting)
            if queuing is not None:
                hand = _int(queuing.get("handSize"), 8) or 1
                state.max_seats = max(1, min(math.ceil(nominal * MAX_SEATS_PERCENT),
                                             nominal // hand))
            else:
                state.max_seats = 0
            if state.new:
                state.current = max(nominal - lendable_cl // 2, 0 if state.exempt else 1)
                state.new = False
        for (phase, _), child in self.read_vs_write.items():
            child.set_denominator(most_waiting if phase == "waiting" else self.nominal_sum)
        self.update_borrowing(reset=False)

    def update_borrowing(self, reset: bool = True) -> None:
        """``updateBorrowingLocked``: share the seats out again from each level's demand
        over the last period (called every ``BORROWING_PERIOD`` seconds)."""
        items, names, exempt_current = [], [], {}
        min_sum = min_current_sum = 0
        remaining = self.nominal_sum
        for name, state in self.levels.items():
            if reset:
                average, deviation, highest, duration = state.demand.reset()
                state.high_watermark = go_round(highest)
                if duration > 0:
                    state.average, state.deviation = average, deviation
                    envelope = average + deviation
                    state.smoothed = max(envelope, SMOOTHING * state.smoothed +
                                         (1 - SMOOTHING) * envelope)
            if state.exempt:
                current = max(state.min, state.high_watermark)
                exempt_current[name] = current
                remaining -= current
            else:
                current = max(state.min, min(state.nominal, state.high_watermark))
                names.append(name)
                items.append(Item(max(float(current), state.smoothed), float(current),
                                  float(state.max)))
                min_sum += state.min
                min_current_sum += current
        allocations, share = None, 0.0
        if remaining <= min_sum:
            self.fair_frac = 0.0
        elif remaining <= min_current_sum:
            share = (remaining - min_sum) / (min_current_sum - min_sum)
            self.fair_frac = 0.0
        else:
            try:
                allocations, self.fair_frac = compute_allocation(self.nominal_sum, items)
            except ValueError as err:
                log.error("unable to derive new concurrency limits: %s", err)
                allocations = [float(self.levels[n].current) for n in names]
        self.vectors[families.FAIR_FRAC.name].labels().set(self.fair_frac)
        for name, state in self.levels.items():
            if state.exempt:
                current, target = exempt_current[name], float(exempt_current[name])
            else:
                index = names.index(name)
                target = items[index].target
                if remaining <= min_sum:
                    current = state.min
                elif remaining <= min_current_sum:
                    floor = max(state.min, min(state.nominal, state.high_watermark))
                    current = state.min + go_round((floor - state.min) * share)
                else:
                    current = go_round(allocations[index])
                # A worker's share of a small server can round a level's floor down to no
                # seat at all, and a level with no seat never dispatches what it queues:
                # a limited level keeps at least one.
                current = max(current, 1)
            state.current = current
            observer = state.metrics
            observer.set_denominators(current if current > 0 else
                                      max(1, go_round(self.server_limit / 10)))
            observer.set(families.DEMAND_HIGH_WATERMARK, state.high_watermark)
            observer.set(families.DEMAND_AVERAGE, state.average)
            observer.set(families.DEMAND_STDEV, state.deviation)
            observer.set(families.DEMAND_SMOOTHED, state.smoothed)
            observer.set(families.TARGET_SEATS, target)
            observer.set(families.CURRENT_LIMIT, current)
            observer.set(families.CURRENT_R, state.queues.current_r / 1e8)
            state.configure_queues()

    # -- requests ------------------------------------------------------------------------------

    def classify(self, user, info) -> tuple[Schema, LevelState]:
        """The first FlowSchema in matching order that matches, and its level.

        A schema matches on the user's name and groups and the request's verb, group,
        resource, subresource and namespace (or, outside the API, its path): the schema
        found for those is remembered until the flow schemas change."""
        schemas = self.schemas
        if self._classified_for is not schemas or len(self._classified) >= CLASSIFY_CACHE:
            self._classified, self._classified_for = {}, schemas
        if info.is_resource_request:
            key = (user.name, user.groups, True, info.verb, info.api_group, info.resource,
                   info.subresource, info.namespace)
        else:
            key = (user.name, user.groups, False, info.verb, info.path)
        try:
            schema = self._classified.get(key)
        except TypeError:  # groups that are not a tuple: not remembered
            schema, key = None, None
        if schema is None:
            for schema in schemas:
                if matches(schema.spec, user, info):
                    break
            else:
                schema = schemas[-1]  # catch-all is always last (imagined if need be)
            if key is not None:
                self._classified[key] = schema
        return schema, self.levels[schema.level]

    def admit(self, user, info, estimate, wait_limit: float, details=None) -> Admission:
        """Classify the request, ask ``estimate(level_state)`` for its ``WorkEstimate``,
        and queue it; blocks while it waits. ``release`` it unless ``rejected``."""
        schema, state = self.classify(user, info)
        admission = Admission(schema, state)
        admission.arrival = self.clock()
        admission.kind = kind = "readOnly" if info.is_read_only else "mutating"
        hash_value, distinguisher = 0, ""
        if not state.exempt:
            queuing = state.queuing()
            if queuing is not None and _int(queuing.get("queues"), 0) > 1:
                distinguisher = flow_distinguisher(schema.spec, user, info)
                hash_value = hash_flow(schema.name, distinguisher)
        work = admission.estimate = estimate(state)
        metrics = state.metrics
        metrics.child(families.WORK_ESTIMATED_SEATS, schema.name).observe(float(work.max_seats))
        queues = state.queues
        request, reason = queues.start_request(work, hash_value, distinguisher, schema.name,
                                               details)
        state.demand.set(queues.seats_in_use + queues.seats_waiting)
        admission.request, admission.reason = request, reason
        if request is None:
            self.dropped.record(state.name)
            return admission
        if request.decision != EXECUTE:
            admission.queued = True
            waiting = self.read_vs_write[("waiting", kind)]
            waiting.add(1)
            try:
                executed = queues.wait(request, wait_limit)
            except BaseException:  # the greenlet was killed while it waited
                if request.decision == EXECUTE:
                    queues.finish(request)
                else:
                    queues.cancel(request)
                raise
            finally:
                waiting.add(-1)
            state.demand.set(queues.seats_in_use + queues.seats_waiting)
            metrics.child(families.WAIT_DURATION, schema.name, "true" if executed else "false") \
                .observe(self.clock() - admission.arrival)
            if not executed:
                admission.reason = "time-out"
                self.dropped.record(state.name)
                return admission
        queues.note_dispatched()
        self.read_vs_write[("executing", kind)].add(1)
        metrics.child(families.DISPATCHED, schema.name).inc()
        admission.started = self.clock()
        return admission

    def release(self, admission: Admission, watch: bool = False) -> None:
        """The admitted request has finished (a watch: its initialization)."""
        state, request = admission.level, admission.request
        state.queues.finish(request)
        self.read_vs_write[("executing", admission.kind)].add(-1)
        state.demand.set(state.queues.seats_in_use + state.queues.seats_waiting)
        state.metrics.child(families.EXECUTION_SECONDS, admission.schema.name,
                            "watch" if watch else "regular") \
            .observe(self.clock() - admission.started)

    def retry_after(self, level: str) -> int:
        return self.dropped.retry_after(level)

    def flush_timing(self) -> None:
        """Write the time the timing ratio histograms counted since the last flush."""
        for state in self.levels.values():
            for child in state.metrics.timing:
                child.flush()
        for child in self.read_vs_write.values():
            child.flush()


def dangling_condition(obj: dict, dangling: bool, level: str) -> dict | None:
    """``presyncFlowSchemaStatus``: the ``Dangling`` condition ``obj`` should have, or None
    when it has it already (the transition time is left to the writer)."""
    if dangling:
        status, reason = "True", "NotFound"
        message = (f"This FlowSchema references the PriorityLevelConfiguration object named "
                   f"\"{level}\" but there is no such object")
    else:
        status, reason = "False", "Found"
        message = (f"This FlowSchema references the PriorityLevelConfiguration object named "
                   f"\"{level}\" and it exists")
    for condition in _dict(obj.get("status")).get("conditions") or ():
        if _dict(condition).get("type") == DANGLING:
            if (condition.get("status"), condition.get("reason"), condition.get("message")) \
                    == (status, reason, message):
                return None
            break
    return {"type": DANGLING, "status": status, "reason": reason, "message": message}


#: ``maxRetryAfter``.
MAX_RETRY_AFTER = 32


class _DropStats:
    __slots__ = ("history", "current_second", "current_count", "retry_after", "updated")

    def __init__(self):
        self.history: list[tuple[int, int]] = []
        self.current_second = 0
        self.current_count = 0
        self.retry_after = 1
        self.updated = 0


class DroppedRequests:
    """``droppedRequestsTracker``: a priority level's ``Retry-After`` starts at 1 s, doubles
    (up to 32 s) while it keeps rejecting at least 3 requests per second of it, and comes
    back down a second at a time as rejections stop."""

    def __init__(self, clock=time.time):
        self.clock = clock
        self.levels: dict[str, _DropStats] = {}

    def record(self, level: str) -> None:
        now = int(self.clock())
        stats = self.levels.get(level)
        if stats is None:
            stats = self.levels[level] = _DropStats()
        if stats.current_second == now:
            stats.current_count += 1
            return
        stats.history.append((stats.current_second, stats.current_count))
        keep = min(2 * stats.retry_after, MAX_RETRY_AFTER)
        stats.history = [(t, n) for t, n in stats.history if now - t <= keep]
        stats.current_second, stats.current_count = now, 1
        retry = stats.retry_after
        dropped = sum(n for t, n in stats.history if now - t <= retry and t < now)
        if now - stats.updated >= retry and dropped >= 3 * retry:
            stats.retry_after = min(retry * 2, MAX_RETRY_AFTER)
            stats.updated = now
        elif dropped < retry and retry > 1:
            stats.retry_after = retry - 1

    def retry_after(self, level: str) -> int:
        stats = self.levels.get(level)
        return stats.retry_after if stats is not None else 1
