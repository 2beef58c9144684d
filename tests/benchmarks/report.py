"""Printing the figures: aligned tables, percentiles, and what the server logged meanwhile."""

from __future__ import annotations

import collections
import os
import re


def percentile(sorted_values: list, q: float) -> float:
    """The ``q`` quantile (0..1) of already sorted values; 0.0 when there are none."""
    if not sorted_values:
        return 0.0
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds ``pid`` has used so far (0.0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ratio(value: float, reference: float) -> str:
    return f"{value / reference:.0%}" if reference else "n/a"


def table(title: str, headers: list[str], rows: list[list]) -> None:
    """Print ``rows`` under ``headers``: first column left-aligned, the others right."""
    cells = [[str(c) for c in headers]] + [[_cell(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    print(f"\n{title}")
    for n, row in enumerate(cells):
        print("  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                               for i, (c, w) in enumerate(zip(row, widths))))
        if n == 0:
            print("  " + "  ".join("-" * w for w in widths))


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:.0f}" if abs(value) >= 100 else f"{value:.2f}"
    return str(value)


# "2024-01-01 12:00:00,000 123 WARNING name: message" (kapiserver's logging format) and
# "[2024-01-01 12:00:00 +0000] [123] [ERROR] message" (gunicorn's).
_LEVEL = re.compile(r"^\S+ \S+ \d+ (WARNING|ERROR|CRITICAL) |^\[[^]]+\] \[\d+\] \[(\w+)\] ")
# gevent's hub prints "<timestamp> " and then its report; two workers share the log, so
# another line may follow the timestamp.
_HUB_TIME = re.compile(r"^\d{4}-\d\d-\d\dT[\d:.]+Z ")
_HUB = re.compile(r"\) failed with (\w+)\s*$")
_METHOD = re.compile(r"bound method (\S+)")
# The last line of a traceback: a dotted exception name, or a builtin one.
_EXCEPTION = re.compile(r"^((?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*|[A-Z]\w*(?:Error|Exception|Exit|"
                        r"Interrupt|Warning))(?::|$)")
_VARYING = re.compile(r"0x[0-9a-f]+|\d+")


class ServerLog:
    """The server's log file, read from where the previous ``summary()`` stopped."""

    def __init__(self, path: str, from_start: bool = False):
        self.path = path
        self.offset = 0 if from_start else self._size()

    def _size(self) -> int:
        try:
            with open(self.path, "rb") as f:
                return f.seek(0, 2)
        except OSError:
            return 0

    def news(self) -> list[str]:
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            text = f.read().decode(errors="replace")
            self.offset = f.tell()
        return text.splitlines()

    def summary(self) -> str:
        """One line per kind of warning, error, traceback or stray output since last time."""
        lines = self.news()
        kinds: collections.Counter = collections.Counter()
        for line in lines:
            line = _HUB_TIME.sub("", line)
            if not line.strip() or line.startswith((" ", "\t", "Traceback (most recent call",
                                                    "During handling of the above",
                                                    "The above exception")):
                continue  # blank, or a traceback's frames: its last line names it
            level, hub, exception = _LEVEL.match(line), _HUB.search(line), _EXCEPTION.match(line)
            if level:
                message = _VARYING.sub("N", line[level.end():].strip())
                kinds[f"{level.group(1) or level.group(2)}: {message[:90]}"] += 1
            elif hub:
                method = _METHOD.search(line)
                kinds[f"gevent hub printed: {method.group(1) if method else 'a call'} failed "
                      f"with {hub.group(1)}"] += 1
            elif exception:
                kinds[f"traceback printed, ending {exception.group(1)}"] += 1
            else:
                kinds[f"other: {_VARYING.sub('N', line.strip())[:90]}"] += 1
        if not kinds:
            return f"server log: clean ({len(lines)} new line(s))"
        out = [f"server log: {sum(kinds.values())} warning(s)/error(s)/traceback(s) in "
               f"{len(lines)} new line(s):"]
        for kind, count in kinds.most_common(6):
            out.append(f"  {count:>6} x {kind}")
        if len(kinds) > 6:
            out.append(f"  ... and {len(kinds) - 6} other kind(s)")
        return "\n".join(out)
