"""Post-start hooks that write bootstrap objects (the RBAC policy, API Priority and
Fairness configuration), taking turns across the workers of one data dir.

Every worker runs those hooks. Run at once, the workers race to create the same objects:
each pays for the creates the other wins (a whole create, then a read of what the other
wrote), and both wait on the store's write lock. Taking turns (a file lock), the first
worker writes them and the others, once it is done, find them there with one list. The
lock only saves work: the hooks stay correct without it (a create that finds the object
reads and reconciles it, updates carry preconditions), so a wait that lasts too long
goes on without it.

Within a hook, ``controllers.concurrently`` sends the writes together: each durable commit waits for
an fsync, and writes that arrive together share one (the store's group commit), where
one after another they would wait for one each.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import time

log = logging.getLogger(__name__)

#: Seconds between two attempts to take the lock (``time.sleep``: a greenlet's turn
#: under gevent), and the longest wait before going on without it.
POLL = 0.01
LONGEST_WAIT = 30.0


@contextlib.contextmanager
def one_at_a_time(path: str, longest_wait: float = LONGEST_WAIT):
    """Hold the file lock ``path`` (created if missing) for the ``with`` block; a process
    that holds it and dies releases it."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + longest_wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    log.warning("%s still held after %.0fs; going on without it", path,
                                longest_wait)
                    break
                time.sleep(POLL)  # never a blocking flock: it would stall the whole worker
        yield
    finally:
        os.close(fd)  # releases the lock
