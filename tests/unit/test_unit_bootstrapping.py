"""Workers take turns at writing bootstrap objects: a file lock one process holds at a time."""

import os
import time

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
