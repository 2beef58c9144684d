"""Timing ratio histograms (``util/flowcontrol/metrics/timing_ratio_histogram.go``): a value
divided by a denominator, observed "at the end of every nanosecond": each bucket counts
the nanoseconds the ratio spent in it, and the sum adds ratio × nanoseconds.

Time is added up in memory as the value changes and written to the worker's metric file
by ``flush`` (every second, and at each scrape of that worker), so a change costs a few
additions, not a write.
"""

from __future__ import annotations

import bisect
import time


class TimingRatio:
    """One child: ``set``/``add`` change the numerator, ``set_denominator`` the divisor."""

    __slots__ = ("_histogram", "_bounds", "_clock", "numerator", "denominator", "_last",
                 "_pending", "_pending_sum")

    def __init__(self, histogram, bounds: tuple, clock=time.monotonic,
                 numerator: float = 0.0, denominator: float = 1.0):
        self._histogram = histogram
        self._bounds = bounds
        self._clock = clock
        self.numerator = numerator
        self.denominator = denominator
        self._last = clock()
        self._pending = [0.0] * (len(bounds) + 1)
        self._pending_sum = 0.0

    def _account(self) -> None:
        now = self._clock()
        nanoseconds = (now - self._last) * 1e9
        self._last = now
        if nanoseconds <= 0:
            return
        ratio = self.numerator / self.denominator if self.denominator else 0.0
        self._pending[bisect.bisect_left(self._bounds, ratio)] += nanoseconds
        self._pending_sum += ratio * nanoseconds

    def set(self, value: float) -> None:
        self._account()
        self.numerator = value

    def add(self, delta: float) -> None:
        self._account()
        self.numerator += delta

    def set_denominator(self, value: float) -> None:
        self._account()
        self.denominator = value

    def flush(self) -> None:
        self._account()
        if any(self._pending):
            self._histogram.observe_many([round(n) for n in self._pending], self._pending_sum)
            self._pending = [0.0] * len(self._pending)
            self._pending_sum = 0.0
