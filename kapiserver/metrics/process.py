"""``process_*`` of the whole server: the gunicorn master and every worker, summed.

client_golang's process collector describes one Go process; kapiserver is several Python
ones, so the figures that add up (CPU seconds, memory, open files) are the sums over the
master and its workers, the start time is the master's, and the limits are the master's
(the workers inherit them). Read from ``/proc``; on a system without it there are none.
"""

from __future__ import annotations

import os

from prometheus_client.metrics_core import Metric

_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _boot_time() -> float:
    with open("/proc/stat", "rb") as f:
        for line in f:
            if line.startswith(b"btime "):
                return float(line.split()[1])
    return 0.0


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        pass
    children = []  # no children file in this kernel: scan every process's parent
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    fields = f.read().rpartition(b")")[2].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                children.append(int(name))
    return children


def _stat(pid: int) -> dict:
    with open(f"/proc/{pid}/stat", "rb") as f:
        fields = f.read().rpartition(b")")[2].split()
    # Fields after the command name, from state (field 3): utime 14, stime 15,
    # starttime 22, vsize 23, rss 24.
    return {"cpu": (float(fields[11]) + float(fields[12])) / _TICKS,
            "start": float(fields[19]) / _TICKS, "vsize": float(fields[20]),
            "rss": float(fields[21]) * _PAGE_SIZE,
            "fds": float(len(os.listdir(f"/proc/{pid}/fd")))}


def _limits(pid: int) -> tuple[float, float]:
    """(max open files, max address space) from ``/proc/PID/limits`` (soft limits)."""
    files = space = float("inf")
    with open(f"/proc/{pid}/limits") as f:
        for line in f:
            value = line[26:47].strip()  # the "Soft Limit" column
            number = float(value) if value.isdigit() else float("inf")
            if line.startswith("Max open files"):
                files = number
            elif line.startswith("Max address space"):
                space = number
    return files, space


def _gauge(name: str, help_text: str, value: float, kind: str = "gauge") -> Metric:
    metric = Metric(name, help_text, kind)
    metric.add_sample(name, {}, value)
    return metric


def collect_self() -> list[Metric]:
    """The ``process_*`` families of this process alone (a server outside gunicorn)."""
    return collect(os.getpid(), children=False)


def collect(master: int, children: bool = True) -> list[Metric]:
    """The ``process_*`` families of ``master`` and its children (``[]`` without /proc)."""
    try:
        pids = [master, *(_children(master) if children else ())]
        stats = []
        for pid in pids:
            try:
                stats.append(_stat(pid))
            except OSError:  # a worker that just ended
                if pid == master:
                    raise
        max_fds, max_space = _limits(master)
        boot = _boot_time()
    except OSError:
        return []
    total = {key: sum(s[key] for s in stats) for key in ("cpu", "vsize", "rss", "fds")}
    max_space = max_space if max_space != float("inf") else 1.8446744073709552e19
    return [
        _gauge("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
               total["cpu"], "counter"),
        _gauge("process_max_fds", "Maximum number of open file descriptors.", max_fds),
        _gauge("process_open_fds", "Number of open file descriptors.", total["fds"]),
        _gauge("process_resident_memory_bytes", "Resident memory size in bytes.",
               total["rss"]),
        _gauge("process_start_time_seconds",
               "Start time of the process since unix epoch in seconds.",
               boot + stats[0]["start"]),
        _gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.",
               total["vsize"]),
        _gauge("process_virtual_memory_max_bytes",
               "Maximum amount of virtual memory available in bytes.", max_space),
    ]
