"""Timing ratio histograms: time spent at each ratio, counted in nanoseconds."""

from kapiserver.flowcontrol.timing import TimingRatio


class Recorder:
    def __init__(self):
        self.calls = []

    def observe_many(self, counts, total):
        self.calls.append((counts, total))


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_each_bucket_counts_the_nanoseconds_the_ratio_spent_in_it():
    histogram, clock = Recorder(), Clock()
    ratio = TimingRatio(histogram, (0.0, 0.5, 1.0), clock, denominator=4)
    clock.now += 1.0          # 1 s at 0/4 -> bucket le=0
    ratio.add(1)
    clock.now += 2.0          # 2 s at 1/4 -> bucket le=0.5
    ratio.set(4)
    clock.now += 0.5          # 0.5 s at 4/4 -> bucket le=1
    ratio.set_denominator(2)
    clock.now += 0.25         # 0.25 s at 4/2 -> +Inf
    ratio.flush()
    (counts, total), = histogram.calls
    assert counts == [1_000_000_000, 2_000_000_000, 500_000_000, 250_000_000]
    assert total == 0.25 * 2e9 + 1.0 * 0.5e9 + 2.0 * 0.25e9


def test_a_flush_with_nothing_new_writes_nothing():
    histogram, clock = Recorder(), Clock()
    ratio = TimingRatio(histogram, (0.0, 1.0), clock)
    ratio.flush()
    assert histogram.calls == []
    clock.now += 1
    ratio.flush()
    ratio.flush()
    assert len(histogram.calls) == 1


def test_a_zero_denominator_counts_as_ratio_zero():
    histogram, clock = Recorder(), Clock()
    ratio = TimingRatio(histogram, (0.0, 1.0), clock, numerator=3, denominator=0)
    clock.now += 1
    ratio.flush()
    assert histogram.calls == [([1_000_000_000, 0, 0], 0.0)]
