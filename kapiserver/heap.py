"""The C heap of a worker: glibc's malloc told to give freed memory back to the system.

A LIST of thousands of objects decodes and encodes each of them: tens of megabytes of
short-lived objects, freed as soon as the answer is built. glibc keeps freed memory for
reuse, so a worker's RSS stays at its highest point for good: with one heap (arena) per
thread that allocated (the storage thread pool's too), a threshold for using ``mmap``
that rises with every large block freed, and freed pages in the middle of a heap kept.
``tune()`` (once per worker, before its threads start) caps the arenas at two and fixes
the ``mmap`` threshold, so that list bodies and other large blocks are unmapped when
freed; ``release()`` (after a burst of such work) returns the free pages inside the
heaps (``malloc_trim``). Elsewhere than glibc both do nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

#: ``mallopt`` parameters (``<malloc.h>``).
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8
#: Blocks from this size on are mapped on their own, and unmapped when freed.
MMAP_THRESHOLD = 256 * 1024
ARENA_MAX = 2


@functools.cache
def _glibc():
    """glibc's ``mallopt`` and ``malloc_trim``, or None elsewhere (musl, macOS)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt, malloc_trim = libc.mallopt, libc.malloc_trim
    except (OSError, AttributeError):
        return None
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    malloc_trim.argtypes, malloc_trim.restype = [ctypes.c_size_t], ctypes.c_int
    return mallopt, malloc_trim


def tune() -> bool:
    """Cap the arenas and fix the ``mmap`` threshold; True when glibc took both."""
    glibc = _glibc()
    if glibc is None:
        return False
    mallopt, _ = glibc
    return bool(mallopt(_M_ARENA_MAX, ARENA_MAX)) and bool(
        mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))


def release() -> None:
    """Give the free pages of every heap back to the system (a few milliseconds)."""
    glibc = _glibc()
    if glibc is not None:
        glibc[1](0)
