"""Workers take turns at writing bootstrap objects: a file lock one process holds at a time."""

import os
import time

from kapiserver.controllers import concurrently
from kapiserver.server.bootstrapping import one_at_a_time


def _hold_in_child(path: str, seconds: float) -> int:
    """Fork a child that holds the lock ``path`` for ``seconds``; return once it holds it."""
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(ready_r)
        with one_at_a_time(path):
            os.write(ready_w, b"x")
            time.sleep(seconds)
        os._exit(0)
    os.close(ready_w)
    assert os.read(ready_r, 1) == b"x"
    os.close(ready_r)
    return pid


def test_second_process_waits_for_the_first(tmp_path):
    path = str(tmp_path / "turns" / "bootstrap")
    pid = _hold_in_child(path, 0.5)
    started = time.monotonic()
    with one_at_a_time(path):
        waited = time.monotonic() - started
    os.waitpid(pid, 0)
    assert waited >= 0.3


def test_a_lock_held_too_long_is_gone_past(tmp_path, caplog):
    path = str(tmp_path / "bootstrap")
    pid = _hold_in_child(path, 3)
    started = time.monotonic()
    with one_at_a_time(path, longest_wait=0.2):
        waited = time.monotonic() - started
    os.waitpid(pid, 0)
    assert 0.2 <= waited < 2
    assert "going on without it" in caplog.text


def test_a_holder_that_dies_releases_it(tmp_path):
    path = str(tmp_path / "bootstrap")
    pid = _hold_in_child(path, 30)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    started = time.monotonic()
    with one_at_a_time(path):
        assert time.monotonic() - started < 1


def test_concurrently_keeps_the_order_and_bounds_the_threads():
    import threading

    running, most = [0], [0]
    lock = threading.Lock()

    def square(n):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.01)
        with lock:
            running[0] -= 1
        return n * n

    assert concurrently(square, range(40), workers=4) == [n * n for n in range(40)]
    assert 1 < most[0] <= 4
    assert concurrently(square, []) == []


def test_concurrently_raises_the_first_failure_once_all_are_done():
    done = []

    def fail_on_three(n):
        if n == 3:
            raise ValueError("three")
        done.append(n)
        return n

    try:
        concurrently(fail_on_three, range(5), workers=1)
    except ValueError as err:
        assert str(err) == "three"
    else:
        raise AssertionError("no exception")
    assert done == [0, 1, 2]  # nothing is started after a failure
