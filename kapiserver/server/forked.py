"""Run a function in a short-lived forked child and hand its result back to the parent.

The gunicorn master forks every worker, and a worker's RSS counts each page it inherited.
Work that needs a large library once at start-up (certificates need ``cryptography``,
about 12 MiB per process) runs in a throwaway child, so the master never maps it.
"""

from __future__ import annotations

import os
import pickle


def call_in_child(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` computed in a forked child; its exception is raised here."""
    return start_in_child(fn, *args, **kwargs).result()


class Child:
    """A forked child computing one call; ``result()`` waits for it."""

    def __init__(self, name: str, pid: int, read_end: int):
        self.name = name
        self.pid = pid
        self.read_end = read_end

    def result(self):
        """The call's value (its exception is raised here)."""
        with os.fdopen(self.read_end, "rb") as pipe:
            payload = pipe.read()
        _, status = os.waitpid(self.pid, 0)
        if not payload:
            raise RuntimeError(f"the child computing {self.name} died (wait status {status})")
        ok, value = pickle.loads(payload)
        if ok:
            return value
        raise value


def start_in_child(fn, *args, **kwargs) -> Child:
    """Start computing ``fn(*args, **kwargs)`` in a forked child, while this process goes
    on; ``.result()`` of what is returned waits for it."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_end)
        try:
            outcome = (True, fn(*args, **kwargs))
        except BaseException as err:  # handed to the parent, which decides
            outcome = (False, err)
        try:
            payload = pickle.dumps(outcome)
        except Exception as err:
            payload = pickle.dumps((False, RuntimeError(f"unpicklable result: {err!r}")))
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(payload)
        os._exit(0)
    os.close(write_end)
    return Child(getattr(fn, "__name__", repr(fn)), pid, read_end)
