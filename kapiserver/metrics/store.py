"""Where metric values live: one set of memory-mapped files per process, summed at scrape.

Each worker writes its own values into prometheus_client's multiprocess files
(``counter_<pid>.db``, ``histogram_<pid>.db``, ``gauge_<mode>_<pid>.db``) in one directory;
whichever worker answers ``/metrics`` reads every file and merges them with
prometheus_client's ``MultiProcessCollector.merge``, so the answer is the whole server's,
not one worker's. A dead worker's counters stay in the sum (they are the server's totals);
its ``live*`` gauges are removed (``mark_process_dead``).

The children here write through the library's ``MmapedDict`` without its per-value lock and
fork check: a worker is one process of greenlets that never switch inside ``inc``, and
every registry is built after the fork. That keeps an increment on the request path to a
float addition and one ``struct.pack_into``.
"""

from __future__ import annotations

import bisect
import glob
import os
import shutil
import time

from prometheus_client.mmap_dict import MmapedDict, mmap_key
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.utils import floatToGoString

from .families import COUNTER, GAUGE, HISTOGRAM, LIVEMOSTRECENT, Family


def prepare_directory(directory: str) -> None:
    """Empty ``directory`` (created if missing) before the workers start writing in it."""
    if os.path.isdir(directory):
        shutil.rmtree(directory)
    os.makedirs(directory, mode=0o700, exist_ok=True)


def mark_process_dead(directory: str, pid: int) -> None:
    """Drop the live gauges of a worker that ended (its counters stay in the sums)."""
    for path in glob.glob(os.path.join(directory, f"gauge_live*_{pid}.db")):
        try:
            os.remove(path)
        except FileNotFoundError:
            pass


class Registry:
    """The metric values one process writes for one server, under ``directory``."""

    def __init__(self, directory: str, pid: int | None = None):
        self.directory = directory
        #: Names this process's files (another value only in tests).
        self.pid = pid or os.getpid()
        self._files: dict[str, MmapedDict] = {}
        self._vectors: dict[str, Vector] = {}

    def file(self, prefix: str) -> MmapedDict:
        mapped = self._files.get(prefix)
        if mapped is None:
            path = os.path.join(self.directory, f"{prefix}_{self.pid}.db")
            mapped = self._files[prefix] = MmapedDict(path)
        return mapped

    def vector(self, family: Family) -> "Vector":
        """The vector of ``family``'s children (one per label values), made once."""
        vector = self._vectors.get(family.name)
        if vector is None:
            vector = self._vectors[family.name] = Vector(self, family)
        elif vector.family != family:
            raise ValueError(f"metric {family.name} declared twice, differently")
        return vector

    def collect(self) -> list:
        """Every process's values merged (prometheus_client ``Metric`` objects)."""
        files = glob.glob(os.path.join(self.directory, "*.db"))
        return list(MultiProcessCollector.merge(files, accumulate=True))

    def close(self) -> None:
        for mapped in self._files.values():
            mapped.close()
        self._files.clear()


class Vector:
    """The children of one family: ``labels(*values)`` returns the one for those values
    (in the family's label order), made on first use and cached."""

    __slots__ = ("registry", "family", "_children", "_make")

    def __init__(self, registry: Registry, family: Family):
        self.registry = registry
        self.family = family
        self._children: dict[tuple, object] = {}
        self._make = {COUNTER: Counter, GAUGE: Gauge, HISTOGRAM: Histogram}[family.type]
        if not family.labels:
            self.labels()  # a label-less family shows its 0 from the start, as upstream's

    def labels(self, *values):
        child = self._children.get(values)
        if child is None:
            if len(values) != len(self.family.labels):
                raise ValueError(f"{self.family.name} takes labels {self.family.labels}, "
                                 f"got {values!r}")
            child = self._children[values] = self._make(self.registry, self.family,
                                                        tuple(str(v) for v in values))
        return child

    def inc(self, amount: float = 1.0) -> None:
        """Increment the label-less child."""
        self.labels().inc(amount)


class Counter:
    __slots__ = ("_file", "_key", "value")

    def __init__(self, registry: Registry, family: Family, values: tuple):
        self._file = registry.file("counter")
        self._key = mmap_key(family.name, family.name, family.labels, values, family.help)
        self.value = self._file.read_value(self._key)[0]

    def inc(self, amount: float = 1.0) -> None:
        self.value += amount
        self._file.write_value(self._key, self.value, 0.0)


class Gauge:
    __slots__ = ("_file", "_key", "_stamped", "value")

    def __init__(self, registry: Registry, family: Family, values: tuple):
        self._file = registry.file(f"gauge_{family.mode}")
        self._key = mmap_key(family.name, family.name, family.labels, values, family.help)
        # The latest write wins across workers: it carries its time.
        self._stamped = family.mode == LIVEMOSTRECENT
        self.value = self._file.read_value(self._key)[0]

    def set(self, value: float) -> None:
        self.value = value
        self._file.write_value(self._key, value, time.time() if self._stamped else 0.0)

    def inc(self, amount: float = 1.0) -> None:
        self.set(self.value + amount)

    def dec(self, amount: float = 1.0) -> None:
        self.set(self.value - amount)


class Histogram:
    """Per-bucket counts (not cumulative: the merge accumulates them) and the sum."""

    __slots__ = ("_file", "_bounds", "_bucket_keys", "_sum_key", "counts", "sum")

    def __init__(self, registry: Registry, family: Family, values: tuple):
        self._file = registry.file("histogram")
        self._bounds = family.buckets + (float("inf"),)
        names = family.labels + ("le",)
        self._bucket_keys = [mmap_key(family.name, family.name + "_bucket", names,
                                      values + (floatToGoString(bound),), family.help)
                             for bound in self._bounds]
        self._sum_key = mmap_key(family.name, family.name + "_sum", family.labels, values,
                                 family.help)
        # Every bucket is written at once, so the exposition lists them all, zeros included.
        self.counts = [self._file.read_value(key)[0] for key in self._bucket_keys]
        self.sum = self._file.read_value(self._sum_key)[0]

    def observe(self, value: float) -> None:
        index = bisect.bisect_left(self._bounds, value)  # the first bucket with value <= le
        count = self.counts[index] = self.counts[index] + 1.0
        self._file.write_value(self._bucket_keys[index], count, 0.0)
        self.sum += value
        self._file.write_value(self._sum_key, self.sum, 0.0)

    def observe_many(self, counts: list, total: float) -> None:
        """Add observations tallied elsewhere: ``counts[i]`` in bucket ``i`` (the bounds'
        order, +Inf last), summing to ``total``."""
        for index, count in enumerate(counts):
            if count:
                value = self.counts[index] = self.counts[index] + count
                self._file.write_value(self._bucket_keys[index], value, 0.0)
        self.sum += total
        self._file.write_value(self._sum_key, self.sum, 0.0)
