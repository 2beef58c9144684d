"""Fair queuing for one priority level: shuffle sharding, the queue set and its virtual
time (``util/shufflesharding`` and ``util/flowcontrol/fairqueuing/queueset``).

A ``QueueSet`` belongs to one worker and is used from its greenlets only: nothing here
yields between reading and writing its state, so it needs no lock. A waiting request is a
greenlet blocked on its own event; whoever frees seats dispatches as many waiting
requests as now fit and wakes them.

Virtual time ``R`` counts seat-seconds as upstream does (integers of 10⁻⁸ seat-seconds,
``SeatSeconds``): it advances at ``min(seats asked, limit) / active queues`` per second,
and a queue's next request is due at ``nextDispatchR``; the queue whose oldest request
would finish first in virtual time is served next.
"""

from __future__ import annotations

import math
import time
from collections import deque

#: ``ssScale``: R is kept in units of 10⁻⁸ seat-seconds.
SS_SCALE = 100_000_000
#: ``estimatedServiceDuration``: what a request is assumed to take until it has finished.
ESTIMATED_SERVICE_SECONDS = 0.003
#: ``shufflesharding.MaxHashBits``.
MAX_HASH_BITS = 60
EXECUTE, REJECT = "execute", "reject"


def seat_seconds(seats: float, seconds: float) -> int:
    """``SeatsTimesDuration``."""
    return int(round(seats * seconds * SS_SCALE))


def format_seat_seconds(value: int) -> str:
    """``SeatSeconds.String``: ``12.00000000ss``."""
    return f"{value // SS_SCALE}.{value % SS_SCALE:08d}ss"


def required_entropy_bits(deck_size: int, hand_size: int) -> int:
    return math.ceil(math.log2(deck_size) * hand_size)


class Dealer:
    """``shufflesharding.Dealer``: deals a hand of distinct queue indices from a hash."""

    __slots__ = ("deck_size", "hand_size")

    def __init__(self, deck_size: int, hand_size: int):
        if deck_size <= 0 or hand_size <= 0:
            raise ValueError(f"deckSize {deck_size} or handSize {hand_size} is not positive")
        if hand_size > deck_size:
            raise ValueError(f"handSize {hand_size} is greater than deckSize {deck_size}")
        if deck_size > 1 << 26:
            raise ValueError(f"deckSize {deck_size} is impractically large")
        if required_entropy_bits(deck_size, hand_size) > MAX_HASH_BITS:
            raise ValueError(f"required entropy bits of deckSize {deck_size} and handSize "
                             f"{hand_size} is greater than {MAX_HASH_BITS}")
        self.deck_size, self.hand_size = deck_size, hand_size

    def deal(self, hash_value: int) -> list[int]:
        remainders = []
        for i in range(self.hand_size):
            hash_value, remainder = divmod(hash_value, self.deck_size - i)
            remainders.append(remainder)
        hand = []
        for i, card in enumerate(remainders):
            for j in range(i, 0, -1):
                if card >= remainders[j - 1]:
                    card += 1
            hand.append(card)
        return hand


class Integrator:
    """``fairqueuing.Integrator``: the time-weighted average, deviation and maximum of a
    value since the last ``reset``."""

    __slots__ = ("clock", "value", "since", "last", "sum", "sum2", "max")

    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self.value = 0.0
        self.since = self.last = clock()
        self.sum = self.sum2 = self.max = 0.0

    def _advance(self) -> None:
        now = self.clock()
        elapsed = now - self.last
        if elapsed > 0:
            self.sum += self.value * elapsed
            self.sum2 += self.value * self.value * elapsed
        self.last = now

    def set(self, value: float) -> None:
        self._advance()
        self.value = value
        if value > self.max:
            self.max = value

    def reset(self) -> tuple[float, float, float, float]:
        """(average, deviation, maximum, duration) since the last reset; starts again."""
        self._advance()
        duration = self.last - self.since
        average = self.sum / duration if duration > 0 else 0.0
        variance = self.sum2 / duration - average * average if duration > 0 else 0.0
        result = (average, math.sqrt(variance) if variance > 0 else 0.0, self.max, duration)
        self.since, self.sum, self.sum2, self.max = self.last, 0.0, 0.0, self.value
        return result


class WorkEstimate:
    """``request.WorkEstimate``: seats while executing, seats kept after it (a write's
    watch notifications) and for how long."""

    __slots__ = ("initial_seats", "final_seats", "additional_latency")

    def __init__(self, initial_seats: int = 1, final_seats: int = 0,
                 additional_latency: float = 0.0):
        self.initial_seats = initial_seats
        self.final_seats = final_seats
        self.additional_latency = additional_latency

    @property
    def max_seats(self) -> int:
        return max(self.initial_seats, self.final_seats)


class Request:
    """One request in a queue set (``queueset.request``)."""

    __slots__ = ("fs_name", "distinguisher", "queue", "work", "seats", "total_work",
                 "arrival", "arrival_r", "start", "decision", "event", "details")

    def __init__(self, fs_name, distinguisher, work: WorkEstimate, total_work: int,
                 arrival: float, arrival_r: int, details):
        self.fs_name = fs_name
        self.distinguisher = distinguisher
        self.queue = None
        self.work = work
        self.seats = work.max_seats
        self.total_work = total_work
        self.arrival = arrival
        self.arrival_r = arrival_r
        self.start = None
        self.decision = None
        self.event = None
        #: (user name, RequestInfo) for dump_requests.
        self.details = details


class Queue:
    """One queue: its waiting requests (FIFO, with their sums), the requests it has
    executing, and when its next request is due in virtual time."""

    __slots__ = ("index", "waiting", "executing", "seats_in_use", "next_dispatch_r",
                 "initial_seats_sum", "max_seats_sum", "total_work_sum")

    def __init__(self, index: int):
        self.index = index
        self.waiting: deque[Request] = deque()
        self.executing: set[Request] = set()
        self.seats_in_use = 0
        self.next_dispatch_r = 0
        self.initial_seats_sum = self.max_seats_sum = self.total_work_sum = 0

    @property
    def active(self) -> bool:
        return bool(self.waiting) or bool(self.executing)

    def push(self, request: Request) -> None:
        self.waiting.append(request)
        self._add(request, 1)

    def pop(self) -> Request:
        request = self.waiting.popleft()
        self._add(request, -1)
        return request

    def remove(self, request: Request) -> bool:
        try:
            self.waiting.remove(request)
        except ValueError:
            return False
        self._add(request, -1)
        return True

    def _add(self, request: Request, sign: int) -> None:
        self.initial_seats_sum += sign * request.work.initial_seats
        self.max_seats_sum += sign * request.seats
        self.total_work_sum += sign * request.total_work


class Observer:
    """What a queue set reports as it goes (the priority level's metrics); every method
    does nothing here."""

    def waiting(self, fs_name: str, requests: int, seats: int) -> None:
        pass

    def executing(self, fs_name: str, requests: int, seats: int) -> None:
        pass

    def rejected(self, fs_name: str, reason: str) -> None:
        pass

    def enqueued(self, fs_name: str, length: int) -> None:
        pass

    def demand(self, seats: int) -> None:
        pass

    def current_r(self, value: int) -> None:
        pass


class QueueSet:
    """The queues of one priority level and the seats its requests occupy.

    ``configure`` sets the queuing (``queues`` > 0), Reject (0) or Exempt (-1) behaviour
    and the concurrency limit; ``start_request`` enqueues (or dispatches at once, or
    rejects) a request; ``wait`` blocks a queued one until it is dispatched or its time
    is up; ``finish`` frees its seats and dispatches what now fits.
    """

    def __init__(self, name: str, clock=time.monotonic, observer: Observer | None = None,
                 event_factory=None):
        self.name = name
        self.clock = clock
        self.observer = observer or Observer()
        self.event_factory = event_factory or _default_event
        self.num_queues = 0
        self.queue_length_limit = 0
        self.hand_size = 0
        self.dealer = None
        self.concurrency_limit = 0
        self.queues: list[Queue] = []
        self.current_r = 0
        self.last_real_time = clock()
        self.robin_index = 0
        self.enqueues = 0
        self.waiting = 0
        self.seats_waiting = 0
        self.executing = 0
        self.seats_in_use = 0
        #: Requests executing outside any queue (Exempt and Reject levels).
        self.queueless: set[Request] = set()
        #: Sum over queues of their seats in use and waiting: ``getVirtualTimeRatio``'s
        #: numerator, kept up to date instead of summed at every step.
        self.queued_seats = 0
        self.active_queues = 0
        self.nonempty: set[Queue] = set()
        self.dispatched = self.rejected = self.timed_out = self.cancelled = 0

    # -- configuration ---------------------------------------------------------------------

    def configure(self, num_queues: int, queue_length_limit: int, hand_size: int,
                  concurrency_limit: int) -> None:
        """``setConfiguration``: queues are added at once, and removed as they empty."""
        self._sync_time()
        if num_queues > 0:
            self.dealer = Dealer(num_queues, hand_size)
            while len(self.queues) < num_queues:
                self.queues.append(Queue(len(self.queues)))
            self.queue_length_limit, self.hand_size = queue_length_limit, hand_size
        else:
            self.dealer = None
        self.num_queues = num_queues
        self.concurrency_limit = concurrency_limit
        self._dispatch_as_much_as_possible()

    @property
    def idle(self) -> bool:
        return self.waiting == 0 and self.executing == 0

    # -- virtual time ------------------------------------------------------------------------

    def _sync_time(self) -> None:
        now = self.clock()
        elapsed = now - self.last_real_time
        self.last_real_time = now
        if elapsed > 0 and self.active_queues:
            ratio = min(self.queued_seats, self.concurrency_limit) / self.active_queues
            self.current_r += seat_seconds(ratio, elapsed)
            self.observer.current_r(self.current_r)

    def _activity(self, queue: Queue, was_active: bool) -> None:
        active = queue.active
        if active != was_active:
            self.active_queues += 1 if active else -1
        if queue.waiting:
            self.nonempty.add(queue)
        else:
            self.nonempty.discard(queue)

    def _bound_next_dispatch(self, queue: Queue) -> None:
        """Anti-windup: a queue's next dispatch is never before its oldest request came."""
        if queue.waiting and queue.next_dispatch_r < queue.waiting[0].arrival_r:
            queue.next_dispatch_r = queue.waiting[0].arrival_r

    def _demand(self) -> None:
        self.observer.demand(self.seats_in_use + self.seats_waiting)

    # -- requests ---------------------------------------------------------------------------

    def _can_accommodate(self, seats: int) -> bool:
        if self.num_queues < 0:
            return True
        if seats > self.concurrency_limit:
            return self.executing == 0
        return self.seats_in_use + seats <= self.concurrency_limit

    def start_request(self, work: WorkEstimate, hash_value: int, distinguisher: str,
                      fs_name: str, details=None) -> tuple[Request | None, str]:
        """Returns ``(request, "")`` — dispatched already when ``request.decision`` is
        ``EXECUTE``, else queued — or ``(None, reason)`` when rejected."""
        self._sync_time()
        total = seat_seconds(work.initial_seats, ESTIMATED_SERVICE_SECONDS) + \
            seat_seconds(work.final_seats, work.additional_latency)
        now = self.clock()
        request = Request(fs_name, distinguisher, work, total, now, self.current_r, details)
        if self.num_queues < 1:
            if not self._can_accommodate(request.seats):
                self.rejected += 1
                self.observer.rejected(fs_name, "concurrency-limit")
                return None, "concurrency-limit"
            request.decision, request.start = EXECUTE, now
            self.executing += 1
            self.seats_in_use += request.seats
            self.queueless.add(request)
            self.observer.executing(fs_name, 1, request.seats)
            self._demand()
            return request, ""
        queue = self.queues[self._shuffle_shard(hash_value)]
        if self.seats_in_use >= self.concurrency_limit and \
                len(queue.waiting) >= self.queue_length_limit:
            self.rejected += 1
            self.observer.rejected(fs_name, "queue-full")
            return None, "queue-full"
        was_active = queue.active
        if not was_active:
            queue.next_dispatch_r = self.current_r
        request.queue = queue
        request.event = self.event_factory()
        queue.push(request)
        self._activity(queue, was_active)
        self.queued_seats += request.seats
        self.waiting += 1
        self.seats_waiting += request.seats
        self.observer.waiting(fs_name, 1, request.seats)
        self._demand()
        self._bound_next_dispatch(queue)
        self.observer.enqueued(fs_name, len(queue.waiting))
        self._dispatch_as_much_as_possible()
        return request, ""

    def _shuffle_shard(self, hash_value: int) -> int:
        """The index of the queue, among the hand dealt for the flow, with the least work
        waiting; ties go to the first looked at, starting at a rotating offset."""
        hand = self.dealer.deal(hash_value)
        offset = self.enqueues % len(hand)
        self.enqueues += 1
        best, least = -1, None
        for i in range(len(hand)):
            index = hand[(offset + i) % len(hand)]
            work = self.queues[index].total_work_sum
            if least is None or work < least:
                best, least = index, work
        return best

    def wait(self, request: Request, timeout: float) -> bool:
        """Block until ``request`` is dispatched (True) or ``timeout`` seconds pass
        (False: it leaves its queue, rejected as ``time-out``)."""
        if request.decision is None:
            request.event.wait(max(timeout, 0.0))
        if request.decision == EXECUTE:
            return True
        self.cancel(request)
        return False

    def cancel(self, request: Request) -> None:
        """Take a request that was not dispatched out of its queue (its time is up, or
        its greenlet was killed), counted as rejected for ``time-out``."""
        self._sync_time()
        queue = request.queue
        if queue is not None and request.decision is None:
            was_active = queue.active
            if queue.remove(request):
                self._activity(queue, was_active)
                self._bound_next_dispatch(queue)
                self.queued_seats -= request.seats
                self.waiting -= 1
                self.seats_waiting -= request.seats
                self.rejected += 1
                self.cancelled += 1
                self.observer.waiting(request.fs_name, -1, -request.seats)
                self.observer.rejected(request.fs_name, "time-out")
                self._demand()
        request.decision = REJECT

    def _dispatch_as_much_as_possible(self) -> None:
        while self.waiting and self.seats_in_use < self.concurrency_limit and \
                self._dispatch_one():
            pass

    def _dispatch_one(self) -> bool:
        """``dispatchLocked``: start the oldest request of the queue whose next request
        finishes first in virtual time, if its seats fit."""
        count = len(self.queues)
        best = best_key = None
        for queue in self.nonempty:
            finish = queue.next_dispatch_r + queue.waiting[0].total_work
            # Ties go to the queue met first going round from the last one served.
            key = (finish, (queue.index - self.robin_index - 1) % count)
            if best_key is None or key < best_key:
                best, best_key = queue, key
        if best is None:
            return False
        request = best.waiting[0]
        if not self._can_accommodate(request.seats):
            return False
        best.pop()
        self.waiting -= 1
        self.seats_waiting -= request.seats
        self.observer.waiting(request.fs_name, -1, -request.seats)
        self.robin_index = best.index
        request.decision, request.start = EXECUTE, self.clock()
        self.executing += 1
        self.seats_in_use += request.seats
        best.executing.add(request)
        best.seats_in_use += request.seats
        if best.waiting:
            self.nonempty.add(best)
        else:
            self.nonempty.discard(best)
        self.observer.executing(request.fs_name, 1, request.seats)
        self._demand()
        best.next_dispatch_r += request.total_work
        self._bound_next_dispatch(best)
        request.event.set()
        return True

    def finish(self, request: Request) -> None:
        """``finishRequestAndDispatchAsMuchAsPossible``: the request is done; its seats go
        to whoever is due next."""
        self._sync_time()
        now = self.clock()
        self.executing -= 1
        self.seats_in_use -= request.seats
        self.observer.executing(request.fs_name, -1, -request.seats)
        queue = request.queue
        if queue is None:
            self.queueless.discard(request)
        else:
            was_active = queue.active
            queue.executing.discard(request)
            queue.seats_in_use -= request.seats
            self.queued_seats -= request.seats
            # Charge the queue for the time the request really took.
            queue.next_dispatch_r -= seat_seconds(
                request.work.initial_seats, ESTIMATED_SERVICE_SECONDS - (now - request.start))
            self._bound_next_dispatch(queue)
            self._activity(queue, was_active)
            if len(self.queues) > max(self.num_queues, 0) and not queue.active:
                self._remove_queue(queue)
        self._demand()
        self._dispatch_as_much_as_possible()

    def _remove_queue(self, queue: Queue) -> None:
        """A queue beyond the configured number goes once empty."""
        index = queue.index
        del self.queues[index]
        for later in self.queues[index:]:
            later.index -= 1
        if self.robin_index >= index:
            self.robin_index -= 1

    def note_dispatched(self) -> None:
        self.dispatched += 1


def _default_event():
    import gevent.event

    return gevent.event.Event()
