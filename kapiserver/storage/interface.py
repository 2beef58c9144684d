"""The storage interface every backend implements, modelled on upstream's ``storage.Interface``.

Keys are strings like ``/registry/configmaps/default/cm1``; values are bytes (the
serialised object, without its ``resourceVersion``: the revision is the version).
Revisions start at 1 and are shared by all keys. Deleting a key is a write: it gets a
revision and produces a ``DELETED`` event. ``compact(rev)`` forgets history older than
``rev``; reading or watching from a compacted revision raises ``Compacted``.
"""

from __future__ import annotations

from dataclasses import dataclass

ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"


class StorageError(Exception):
    """Base class of storage failures."""


class KeyNotFound(StorageError):
    """The key does not exist (or is deleted) at the revision read."""


class KeyExists(StorageError):
    """``create`` found the key already present."""


class Conflict(StorageError):
    """A conditional write found another ``mod_revision`` than the one expected."""

    def __init__(self, message: str, current: "KeyValue | None" = None):
        super().__init__(message)
        self.current = current


class Compacted(StorageError):
    """The revision asked for is older than the compacted revision."""

    def __init__(self, requested: int, compacted: int):
        super().__init__(f"required revision {requested} has been compacted "
                         f"(oldest available: {compacted})")
        self.requested = requested
        self.compacted = compacted


@dataclass(frozen=True)
class KeyValue:
    """A key's value at some revision: when it was created and last modified."""

    key: str
    value: bytes
    create_revision: int
    mod_revision: int


@dataclass(frozen=True)
class Event:
    """One write, as a watch sees it. ``prev_value`` is the value before it (or None)."""

    type: str
    key: str
    value: bytes | None
    prev_value: bytes | None
    revision: int
    create_revision: int = 0


@dataclass(frozen=True)
class ListResult:
    """A page of keys read at ``revision``; ``remaining`` counts keys after this page."""

    items: list[KeyValue]
    revision: int
    more: bool
    remaining: int


class Store:
    """What a storage backend provides. All methods are blocking and thread-safe.

    Several processes (gunicorn workers, hosts) may share one backend: every method
    must be correct under concurrent writers, with revisions strictly increasing.
    """

    def get(self, key: str, revision: int = 0) -> KeyValue:
        """The key's value at ``revision`` (0: now); raise ``KeyNotFound`` or ``Compacted``."""
        raise NotImplementedError

    def list(self, prefix: str, revision: int = 0, limit: int = 0,
             start_key: str = "", have=None, stale: bool = False) -> ListResult:
        """Keys under ``prefix`` at ``revision`` (0: now), in key order, from ``start_key``.

        ``limit`` 0 means all. Every page read at the same revision is a consistent
        snapshot. Raise ``Compacted`` when ``revision`` is older than the compaction.
        ``have`` (a container of ``(key, mod_revision)`` pairs) names values the caller
        keeps already: a backend may leave those out (``value`` None) rather than read
        and copy them; one that ignores ``have`` returns every value.
        ``stale`` (a list at ``resourceVersion=0``: any version will do) lets a
        replicated backend answer from one member's state without a quorum (etcd's
        serializable read), so such lists keep working while the quorum is lost.
        """
        raise NotImplementedError

    def create(self, key: str, value: bytes, ttl: float = 0) -> int:
        """Store a new key; return its revision. Raise ``KeyExists`` if it exists.

        With ``ttl`` (seconds), the key is deleted that long after this write unless it is
        written again first (an etcd lease: each write attaches a new one, or none).
        """
        raise NotImplementedError

    def update(self, key: str, value: bytes, expected_mod_revision: int,
               ttl: float = 0) -> int:
        """Replace the key's value if its ``mod_revision`` is as expected; return the revision.

        Raise ``KeyNotFound`` when absent, ``Conflict`` (carrying the current value) when
        another write came first. ``ttl`` as for ``create``.
        """
        raise NotImplementedError

    def delete(self, key: str, expected_mod_revision: int = 0) -> tuple[int, KeyValue]:
        """Delete the key (only if at ``expected_mod_revision`` when non-zero).

        Return the deletion's revision and the value deleted. Raise ``KeyNotFound`` or
        ``Conflict``.
        """
        raise NotImplementedError

    def expire(self) -> int:
        """Delete the keys whose ``ttl`` has run out; return how many. A backend whose keys
        expire by themselves (etcd leases) does nothing here. Safe to call concurrently."""
        raise NotImplementedError

    def current_revision(self) -> int:
        """The revision of the latest write (0 when nothing was ever written).

        Linearizable: at least the revision of every write acknowledged (by any process
        sharing the store) before the call. Every consistent GET and LIST calls it once
        (``storage.readcache``, concurrent readers sharing a call): keep it one cheap
        read, never a scan."""
        raise NotImplementedError

    def compacted_revision(self) -> int:
        """The oldest revision still readable (history before it is gone)."""
        raise NotImplementedError

    def compact(self, revision: int) -> None:
        """Forget history older than ``revision``; the latest value of every key stays."""
        raise NotImplementedError

    def events(self, after_revision: int, limit: int = 1000) -> list[Event]:
        """The writes with revision > ``after_revision``, oldest first, at most ``limit``.

        This is the feed of the watch cache. Raise ``Compacted`` when events after
        ``after_revision`` are no longer all available.
        """
        raise NotImplementedError

    def close(self) -> None:
        """Release connections and files."""
