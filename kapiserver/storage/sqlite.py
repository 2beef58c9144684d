"""The embedded storage backend: an MVCC log of every write in one SQLite file, like kine.

Schema
------
``kv`` holds one row per write, keyed by the global revision::

    rev         INTEGER PRIMARY KEY AUTOINCREMENT  -- the write's revision
    key         TEXT     -- e.g. /registry/configmaps/ns/name
    value       BLOB     -- NULL for a delete (tombstone)
    create_rev  INTEGER  -- revision that created this incarnation of the key
    prev_rev    INTEGER  -- the key's previous row (0 for a create)
    deleted     INTEGER  -- 1 for a tombstone

The index ``(key, rev, deleted)`` finds a key's newest row at or below any revision with
one seek and lets range reads and counts run on the index alone. ``AUTOINCREMENT`` keeps
the highest revision ever used in ``sqlite_sequence``, so revisions never repeat even
after compaction deleted the rows that carried them. ``meta`` holds the compacted
revision. ``lease`` holds, for each key written with a ``ttl``, the revision of that
write and when it expires; ``expire()`` deletes the key if it was not written since.

Concurrency
-----------
Every write is one ``BEGIN IMMEDIATE`` transaction: it takes SQLite's single write lock
(shared by all processes through the file) before reading anything, so "next revision =
highest revision + 1" and the precondition check are atomic with the insert, and
revisions commit in order. A reader that sees revision R therefore sees every write up
to R, and a read at R stays correct however many writes follow (WAL readers never block
writers). Each thread uses its own connection.

Group commit
------------
Concurrent writes of one process share transactions (``_GroupCommit``): a write that
arrives while another thread commits queues up; when that commit is done, the first
queued write's thread leads the next transaction, which applies every queued write in
order, each in its own savepoint (a write that fails — a conflict, an existing key —
rolls back alone and raises in its own thread), commits once and wakes the others. So
under load one commit, and its one fsync, serves many writes, while a lone write still
commits at once. Revisions stay gap-free and ordered: the writes of a transaction take
consecutive revisions in queue order. Processes sharing the file (gunicorn's workers)
still take turns on SQLite's write lock, each committing its own batch: writes that
arrive at one while the other holds the lock join its next batch.

Durability
----------
By default (``synchronous="FULL"``) a commit fsyncs the WAL before it returns, so an
acknowledged write survives the death of the process, of the OS and of power, as
etcd's do. ``NORMAL`` (option ``--sqlite-synchronous=normal``) skips that fsync: a write
then survives the death of the process (``kill -9``; it is in the OS's page cache) but
an OS crash or power loss may lose the last ones (never corrupting the file).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import weakref
from contextlib import contextmanager

from .interface import (ADDED, DELETED, MODIFIED, Compacted, Conflict, Event, KeyExists,
                        KeyNotFound, KeyValue, ListResult, Store, StorageError)

SYNCHRONOUS_MODES = ("NORMAL", "FULL", "EXTRA")

#: The most writes one group commit applies: bounds how long it holds the write lock.
MAX_BATCH = 256

# Real locks even under gevent's monkey-patching: the writers are native threads (gevent's
# thread pool), and gevent's locks only work among the greenlets of one thread.
try:
    from gevent import monkey as _monkey

    _allocate_lock = _monkey.get_original("_thread", "allocate_lock")
    _sleep = _monkey.get_original("time", "sleep")
except ImportError:  # pragma: no cover - gevent is a dependency
    import _thread

    _allocate_lock, _sleep = _thread.allocate_lock, time.sleep

#: How long a group commit waits between tries for the write lock another process holds
#: (doubling up to the second figure). SQLite's own busy handler sleeps 1, 2, 5, 10, 15,
#: 20, 25... ms: under contention from the other workers it slept long past the moment
#: the lock came free.
LOCK_RETRY = (0.0001, 0.002)

# Seconds a statement waits for another connection's lock before failing.
BUSY_TIMEOUT = 10.0

# The -wal file is reused, not shrunk, after a checkpoint; this truncates it back to at
# most 4 MiB each time it restarts, so a burst (or a reader that held back checkpoints
# for a while) does not leave a large file behind for good.
JOURNAL_SIZE_LIMIT = 4 * 1024 * 1024

# Statements, not a script: executescript() would commit the surrounding transaction.
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS kv ("
    " rev INTEGER PRIMARY KEY AUTOINCREMENT,"
    " key TEXT NOT NULL,"
    " value BLOB,"
    " create_rev INTEGER NOT NULL,"
    " prev_rev INTEGER NOT NULL,"
    " deleted INTEGER NOT NULL)",
    "CREATE UNIQUE INDEX IF NOT EXISTS kv_key_rev ON kv (key, rev, deleted)",
    "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL)"
    " WITHOUT ROWID",
    "INSERT OR IGNORE INTO meta (name, value) VALUES ('compacted', 0)",
    "CREATE TABLE IF NOT EXISTS lease (key TEXT PRIMARY KEY, rev INTEGER NOT NULL,"
    " expires REAL NOT NULL) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS lease_expires ON lease (expires)",
)

SQL_CURRENT = "SELECT seq FROM sqlite_sequence WHERE name = 'kv'"
SQL_COMPACTED = "SELECT value FROM meta WHERE name = 'compacted'"
SQL_LATEST = ("SELECT rev, create_rev, deleted, value FROM kv WHERE key = ? "
              "ORDER BY rev DESC LIMIT 1")
SQL_AT = ("SELECT rev, create_rev, deleted, value FROM kv WHERE key = ? AND rev <= ? "
          "ORDER BY rev DESC LIMIT 1")
# What a write checks: the key's newest row, without reading its (maybe large) value.
SQL_HEAD = ("SELECT rev, create_rev, deleted FROM kv WHERE key = ? "
            "ORDER BY rev DESC LIMIT 1")
SQL_VALUE = "SELECT value FROM kv WHERE rev = ?"
SQL_INSERT = ("INSERT INTO kv (rev, key, value, create_rev, prev_rev, deleted) "
              "VALUES (?, ?, ?, ?, ?, ?)")
SQL_LEASE = "INSERT OR REPLACE INTO lease (key, rev, expires) VALUES (?, ?, ?)"
SQL_UNLEASE = "DELETE FROM lease WHERE key = ?"
SQL_EXPIRED = "SELECT key, rev FROM lease WHERE expires <= ? ORDER BY expires LIMIT ?"
SQL_EVENTS = (
    "SELECT kv.rev, kv.key, kv.value, kv.create_rev, kv.deleted, prev.value "
    "FROM kv LEFT JOIN kv AS prev ON prev.rev = kv.prev_rev "
    "WHERE kv.rev > ? ORDER BY kv.rev LIMIT ?")


def _range_sql(select: str, lower: str, bounded: bool, tail: str = "") -> str:
    """A read of the newest row at or below a revision of each key in a key range.

    Parameters, by name: ``lo`` (lower key bound), ``hi`` (upper bound, exclusive; only
    when ``bounded``), ``rev``. The index is walked in key order, so ``ORDER BY key
    LIMIT n`` stops after n live keys.
    """
    upper = "AND o.key < :hi " if bounded else ""
    return (f"SELECT {select} FROM kv AS o "
            f"WHERE o.key {lower} :lo {upper}AND o.rev <= :rev AND o.deleted = 0 "
            "AND o.rev = (SELECT MAX(i.rev) FROM kv AS i "
            "WHERE i.key = o.key AND i.rev <= :rev) " + tail)


# Indexed by "has an upper bound". The page starts at start_key (inclusive); the count
# of what remains starts after the page's last key (exclusive).
SQL_PAGE = {b: _range_sql("o.key, o.value, o.create_rev, o.rev", ">=", b,
                          "ORDER BY o.key LIMIT :limit") for b in (False, True)}
# The same page without the values, and the values of some of its rows.
SQL_PAGE_HEADS = {b: _range_sql("o.key, o.create_rev, o.rev", ">=", b,
                                "ORDER BY o.key LIMIT :limit") for b in (False, True)}
_VALUES_CHUNK = 500
SQL_VALUES = "SELECT rev, value FROM kv WHERE rev IN ({})"
SQL_COUNT_AFTER = {b: _range_sql("COUNT(*)", ">", b) for b in (False, True)}

# compact(C), in one transaction. Only rows written since the previous compaction (rev
# in [old, C)) can newly supersede older rows, so only their keys are visited: for each,
# every row older than its newest row below C goes.
SQL_COMPACT_SUPERSEDED = (
    "DELETE FROM kv WHERE rev IN ("
    "SELECT o.rev FROM (SELECT key, MAX(rev) AS top FROM kv "
    "WHERE rev >= :old AND rev < :new GROUP BY key) AS n "
    "JOIN kv AS o ON o.key = n.key AND o.rev < n.top)")
SQL_COMPACT_TOMBSTONES = "DELETE FROM kv WHERE rev >= :old AND rev < :new AND deleted = 1"


class _Connection(sqlite3.Connection):
    """A connection that can be weakly referenced (``sqlite3.Connection`` cannot)."""


def prefix_end(prefix: str) -> str | None:
    """The smallest string greater than every string starting with ``prefix``.

    None when there is none (the empty prefix: every key). Python orders strings by code
    point, as SQLite's BINARY collation orders their UTF-8 bytes, so both agree.
    """
    stripped = prefix.rstrip("\U0010ffff")
    if not stripped:
        return None
    code = ord(stripped[-1]) + 1
    if 0xD800 <= code <= 0xDFFF:  # surrogates cannot be encoded; skip past them
        code = 0xE000
    return stripped[:-1] + chr(code)


def _os_thread_local():
    """A thread-local of OS threads, even under gevent's monkey-patching.

    gevent makes ``threading.local`` greenlet-local: every request would open its own
    connection. Per OS thread, greenlets of one thread share a connection, which is safe
    because a statement runs to completion without yielding to another greenlet.
    """
    try:
        from gevent import monkey
    except ImportError:  # pragma: no cover - gevent is a dependency
        return threading.local()
    return monkey.get_original("_thread", "_local")()


class _Write:
    """One write waiting for its group commit."""

    __slots__ = ("apply", "result", "error", "done", "lead", "wake")

    def __init__(self, apply):
        self.apply = apply
        self.result = self.error = None
        self.done = self.lead = False
        self.wake = _allocate_lock()
        self.wake.acquire()  # released when done, or when it is to lead


class _GroupCommit:
    """Leader and followers: the writes queued while a transaction commits are applied
    together by the next one (see "Group commit" above)."""

    def __init__(self, store: "SQLiteStore"):
        self.store = store
        self.mutex = _allocate_lock()
        self.queue: list[_Write] = []
        self.leading = False

    def run(self, apply):
        write = _Write(apply)
        with self.mutex:
            self.queue.append(write)
            write.lead = not self.leading
            self.leading = True
        while not write.done:
            if write.lead:
                self._lead()
            else:
                write.wake.acquire()  # until done, or asked to lead
        if write.error is not None:
            raise write.error
        return write.result

    def _lead(self) -> None:
        with self.mutex:
            batch, self.queue = self.queue[:MAX_BATCH], self.queue[MAX_BATCH:]
        try:
            self._apply(batch)
        finally:
            with self.mutex:
                for write in batch:
                    write.done = True
                    write.lead = False
                    if write.wake.locked():
                        write.wake.release()
                if self.queue:  # the first write that waits leads the next transaction
                    following = self.queue[0]
                    following.lead = True
                    if following.wake.locked():
                        following.wake.release()
                else:
                    self.leading = False

    @staticmethod
    def _begin(conn: sqlite3.Connection) -> None:
        """BEGIN IMMEDIATE, trying again briefly while another process holds the lock."""
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            delay, deadline = LOCK_RETRY[0], time.monotonic() + BUSY_TIMEOUT
            while True:
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    return
                except sqlite3.OperationalError as e:
                    if "locked" not in str(e) or time.monotonic() > deadline:
                        raise
                _sleep(delay)
                delay = min(delay * 2, LOCK_RETRY[1])
        finally:
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")

    def _apply(self, batch: list[_Write]) -> None:
        """One transaction: each write in its savepoint, then one commit."""
        try:
            conn = self.store._conn()
            self._begin(conn)
        except (sqlite3.Error, StorageError) as e:
            error = e if isinstance(e, StorageError) else StorageError(
                f"sqlite write failed: {e}")
            for write in batch:
                write.error = error
            return
        alone = len(batch) == 1
        try:
            for write in batch:
                if not alone:
                    conn.execute("SAVEPOINT w")
                try:
                    write.result = write.apply(conn)
                except Exception as e:
                    if alone:
                        raise
                    conn.execute("ROLLBACK TO w")
                    write.error = (StorageError(f"sqlite write failed: {e}")
                                   if isinstance(e, sqlite3.Error) else e)
                if not alone:
                    conn.execute("RELEASE w")
            conn.execute("COMMIT")
        except BaseException as e:
            if conn.in_transaction:  # also when COMMIT itself failed (disk full)
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            error = StorageError(f"sqlite write failed: {e}") if isinstance(
                e, sqlite3.Error) else e
            for write in batch:
                if write.error is None or not isinstance(e, (sqlite3.Error, StorageError)):
                    write.result, write.error = None, error
            if not isinstance(e, Exception):
                raise


class SQLiteStore(Store):
    """A ``Store`` in one SQLite file, shared safely by threads and processes.

    ``synchronous`` is SQLite's ``PRAGMA synchronous``. The default, ``FULL``, fsyncs the
    WAL on every commit: an acknowledged write survives power loss (one fsync serves all
    the writes of a group commit). ``NORMAL`` makes an acknowledged write survive the
    death of the process (``kill -9``): in WAL mode a commit has been written to the
    -wal file, i.e. handed to the OS, before it returns; an OS crash or power loss may
    lose the last commits (never corrupt the file).
    """

    def __init__(self, path: str | os.PathLike, synchronous: str = "FULL", clock=time.time):
        synchronous = synchronous.upper()
        if synchronous not in SYNCHRONOUS_MODES:
            raise ValueError(f"synchronous must be one of {', '.join(SYNCHRONOUS_MODES)}, "
                             f"not {synchronous!r}")
        self.path = os.fspath(path)
        self.synchronous = synchronous
        #: Wall-clock seconds: expiry times are shared by processes and survive restarts.
        self._clock = clock
        self._closed = False
        self._reset_connections()
        self._init_schema()

    # -- connections ---------------------------------------------------------------

    def _reset_connections(self) -> None:
        self._pid = os.getpid()
        self._local = _os_thread_local()
        self._lock = threading.Lock()
        # Weak: a connection closes when its thread ends and drops its thread-local.
        self._connections: weakref.WeakSet[sqlite3.Connection] = weakref.WeakSet()
        self._group = _GroupCommit(self)

    def _conn(self) -> sqlite3.Connection:
        """This thread's connection, opened on first use."""
        if self._closed:
            raise StorageError(f"the store {self.path} is closed")
        if self._pid != os.getpid():
            # A forked child (gunicorn --preload) must not use, nor close, the parent's
            # connections: SQLite connections do not survive fork. Abandon them.
            self._reset_connections()
        conn = getattr(self._local, "conn", None)
        if conn is None:
            # check_same_thread=False only lets close() release every thread's
            # connection at shutdown; each connection is used by its own thread alone.
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, isolation_level=None,
                                   check_same_thread=False, factory=_Connection)
            conn.execute(f"PRAGMA synchronous = {self.synchronous}")
            conn.execute(f"PRAGMA journal_size_limit = {JOURNAL_SIZE_LIMIT}")
            self._local.conn = conn
            with self._lock:
                self._connections.add(conn)
        return conn

    def _init_schema(self) -> None:
        conn = self._conn()
        try:
            # auto_vacuum only takes effect on a database without tables: it must come
            # first. INCREMENTAL lets compact() give freed pages back to the file system.
            conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
            self._ensure_wal(conn)
            with self._write() as c:
                for statement in SCHEMA:
                    c.execute(statement)
        except sqlite3.Error as e:
            raise StorageError(f"cannot open {self.path}: {e}") from e

    @staticmethod
    def _ensure_wal(conn) -> None:
        """Switch a new file to WAL (persistent: once per file). The switch needs the file
        to itself and SQLite answers "database is locked" at once, without waiting, when
        another connection has it open: processes opening a new file together (the
        workers on an empty data dir) retry until one of them has switched it."""
        if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal":
            return
        deadline = time.monotonic() + BUSY_TIMEOUT
        while True:
            try:
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            except sqlite3.OperationalError as e:
                if "locked" not in str(e):
                    raise
                mode = ""
            if mode.lower() == "wal":
                return
            if time.monotonic() > deadline:
                raise sqlite3.OperationalError(f"cannot switch to WAL: journal mode {mode!r}")
            time.sleep(0.005)

    @contextmanager
    def _write(self):
        """A write transaction: holds the database's write lock from the start."""
        conn = self._conn()
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:  # also when COMMIT itself failed (disk full)
                    conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as e:
            raise StorageError(f"sqlite write failed: {e}") from e

    @contextmanager
    def _read(self):
        """A read transaction: every statement in it sees the same snapshot."""
        conn = self._conn()
        try:
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                if conn.in_transaction:
                    conn.execute("COMMIT")
        except sqlite3.Error as e:
            raise StorageError(f"sqlite read failed: {e}") from e

    @staticmethod
    def _current(conn: sqlite3.Connection) -> int:
        row = conn.execute(SQL_CURRENT).fetchone()
        return row[0] if row else 0

    @staticmethod
    def _compacted(conn: sqlite3.Connection) -> int:
        return conn.execute(SQL_COMPACTED).fetchone()[0]

    def _read_revision(self, conn: sqlite3.Connection, revision: int) -> int:
        """The revision a read at ``revision`` (0: now) uses, inside a read transaction.

        A revision beyond the current one is read as the current one: nothing newer
        exists yet (the caller sees which revision was read where the API returns it).
        """
        current = self._current(conn)
        if revision <= 0 or revision >= current:
            return current
        compacted = self._compacted(conn)
        if revision < compacted:
            raise Compacted(revision, compacted)
        return revision

    # -- reads ---------------------------------------------------------------------

    def get(self, key: str, revision: int = 0) -> KeyValue:
        """The key's value at ``revision`` (0: now); raise ``KeyNotFound`` or ``Compacted``."""
        if revision <= 0:
            # One statement is one snapshot: no transaction needed for the common case.
            try:
                row = self._conn().execute(SQL_LATEST, (key,)).fetchone()
            except sqlite3.Error as e:
                raise StorageError(f"sqlite read failed: {e}") from e
        else:
            with self._read() as conn:
                row = conn.execute(SQL_AT, (key, self._read_revision(conn, revision))
                                   ).fetchone()
        if row is None or row[2]:
            raise KeyNotFound(key)
        return KeyValue(key, row[3], row[1], row[0])

    def list(self, prefix: str, revision: int = 0, limit: int = 0,
             start_key: str = "", have=None, stale: bool = False) -> ListResult:
        """Keys under ``prefix`` at ``revision`` (0: now), in key order, from ``start_key``.

        ``start_key`` is inclusive: to read the next page, pass the last key returned
        plus ``"\\x00"`` (as upstream's etcd3 store does) and the same ``revision`` as
        the first page returned. ``remaining`` counts the live keys after this page.
        The values of the ``(key, mod_revision)`` pairs in ``have`` are not read (``value``
        None): the others are read in the same snapshot, by revision.
        """
        hi = prefix_end(prefix)
        bounded = hi is not None
        params = {"lo": max(prefix, start_key), "hi": hi,
                  "limit": limit if limit > 0 else -1}
        with self._read() as conn:
            params["rev"] = read_rev = self._read_revision(conn, revision)
            if have is None:
                items = [KeyValue(k, v, c, m)
                         for k, v, c, m in conn.execute(SQL_PAGE[bounded], params)]
            else:
                heads = conn.execute(SQL_PAGE_HEADS[bounded], params).fetchall()
                wanted = [m for k, c, m in heads if (k, m) not in have]
                values = {}
                for i in range(0, len(wanted), _VALUES_CHUNK):
                    chunk = wanted[i:i + _VALUES_CHUNK]
                    values.update(conn.execute(
                        SQL_VALUES.format(",".join("?" * len(chunk))), chunk))
                items = [KeyValue(k, values.get(m), c, m) for k, c, m in heads]
            remaining = 0
            if 0 < limit <= len(items):
                params["lo"] = items[-1].key
                remaining = conn.execute(SQL_COUNT_AFTER[bounded], params).fetchone()[0]
        return ListResult(items=items, revision=read_rev, more=remaining > 0,
                          remaining=remaining)

    def current_revision(self) -> int:
        """The revision of the latest write (0 when nothing was ever written)."""
        try:
            return self._current(self._conn())
        except sqlite3.Error as e:
            raise StorageError(f"sqlite read failed: {e}") from e

    def compacted_revision(self) -> int:
        """The oldest revision still readable (0 before the first compaction)."""
        try:
            return self._compacted(self._conn())
        except sqlite3.Error as e:
            raise StorageError(f"sqlite read failed: {e}") from e

    def events(self, after_revision: int, limit: int = 1000) -> list[Event]:
        """The writes with revision > ``after_revision``, oldest first, at most ``limit``.

        ``ADDED`` carries the new value; ``MODIFIED`` the new value and ``prev_value``;
        ``DELETED`` has ``value`` None and the deleted value as ``prev_value``.
        After ``compact(C)`` every write from revision C on is still here, with its
        ``prev_value``; so ``Compacted`` is raised exactly when
        ``after_revision < C - 1`` (the write at ``after_revision + 1`` may be gone).
        """
        with self._read() as conn:
            compacted = self._compacted(conn)
            if after_revision + 1 < compacted:
                raise Compacted(after_revision + 1, compacted)
            rows = conn.execute(SQL_EVENTS, (after_revision, limit if limit > 0 else -1)
                                ).fetchall()
        events = []
        for rev, key, value, create_rev, deleted, prev_value in rows:
            if deleted:
                events.append(Event(DELETED, key, None, prev_value, rev, create_rev))
            elif create_rev == rev:
                events.append(Event(ADDED, key, value, None, rev, create_rev))
            else:
                events.append(Event(MODIFIED, key, value, prev_value, rev, create_rev))
        return events

    # -- writes --------------------------------------------------------------------

    def create(self, key: str, value: bytes, ttl: float = 0) -> int:
        """Store a new key; return its revision. Raise ``KeyExists`` if it exists.

        With ``ttl`` (seconds), ``expire()`` deletes the key that long after this write
        unless it is written again first.
        """
        def apply(conn):
            row = conn.execute(SQL_HEAD, (key,)).fetchone()
            if row is not None and not row[2]:
                raise KeyExists(key)
            rev = self._current(conn) + 1
            conn.execute(SQL_INSERT, (rev, key, value, rev, 0, 0))
            self._lease(conn, key, rev, ttl)
            return rev

        return self._commit(apply)

    def update(self, key: str, value: bytes, expected_mod_revision: int,
               ttl: float = 0) -> int:
        """Replace the key's value if its ``mod_revision`` is as expected; return the revision.

        ``expected_mod_revision`` 0 means no precondition (no write ever has revision 0).
        Raise ``KeyNotFound`` when absent, ``Conflict`` (carrying the current value) when
        another write came first. ``ttl`` as for ``create`` (none: the key stays).
        """
        def apply(conn):
            mod_rev, create_rev = self._check(conn, key, expected_mod_revision)
            rev = self._current(conn) + 1
            conn.execute(SQL_INSERT, (rev, key, value, create_rev, mod_rev, 0))
            self._lease(conn, key, rev, ttl)
            return rev

        return self._commit(apply)

    def _lease(self, conn: sqlite3.Connection, key: str, rev: int, ttl: float) -> None:
        # Like an etcd put: each write attaches its own lease, or none.
        if ttl and ttl > 0:
            conn.execute(SQL_LEASE, (key, rev, self._clock() + ttl))
        else:
            conn.execute(SQL_UNLEASE, (key,))

    def expire(self, batch: int = 500) -> int:
        """Delete the keys whose ``ttl`` ran out since their last write; return how many.

        A key written again after its expiry was read is left alone (the delete's
        revision precondition fails), so concurrent callers and writers are safe.
        """
        expired = self._conn().execute(SQL_EXPIRED, (self._clock(), batch)).fetchall()
        deleted = 0
        for key, rev in expired:
            try:
                self.delete(key, rev)
                deleted += 1
            except (KeyNotFound, Conflict):
                with self._write() as conn:  # stale: a newer write or a delete won
                    conn.execute("DELETE FROM lease WHERE key = ? AND rev = ?", (key, rev))
        return deleted

    def delete(self, key: str, expected_mod_revision: int = 0) -> tuple[int, KeyValue]:
        """Delete the key (only if at ``expected_mod_revision`` when non-zero).

        Return the deletion's revision and the value deleted. Raise ``KeyNotFound`` or
        ``Conflict``.
        """
        def apply(conn):
            mod_rev, create_rev = self._check(conn, key, expected_mod_revision)
            value = conn.execute(SQL_VALUE, (mod_rev,)).fetchone()[0]
            rev = self._current(conn) + 1
            conn.execute(SQL_INSERT, (rev, key, None, create_rev, mod_rev, 1))
            conn.execute(SQL_UNLEASE, (key,))
            return rev, KeyValue(key, value, create_rev, mod_rev)

        return self._commit(apply)

    def _commit(self, apply):
        """``apply(conn)`` in a write transaction, shared with the writes of other threads
        that wait meanwhile; its answer once committed (fsynced, in durable mode)."""
        if self._closed:
            raise StorageError(f"the store {self.path} is closed")
        if self._pid != os.getpid():
            self._reset_connections()
        return self._group.run(apply)

    @staticmethod
    def _check(conn: sqlite3.Connection, key: str, expected: int) -> tuple[int, int]:
        """The key's (mod_revision, create_revision), if it exists and is as expected."""
        row = conn.execute(SQL_HEAD, (key,)).fetchone()
        if row is None or row[2]:
            raise KeyNotFound(key)
        mod_rev, create_rev, _ = row
        if expected and expected != mod_rev:
            value = conn.execute(SQL_VALUE, (mod_rev,)).fetchone()[0]
            raise Conflict(f"{key}: expected mod_revision {expected}, found {mod_rev}",
                           KeyValue(key, value, create_rev, mod_rev))
        return mod_rev, create_rev

    # -- migrations ----------------------------------------------------------------

    def migrate_keys(self, name: str, rename) -> int:
        """Rename every key through ``rename(key) -> key`` once per file; return how many.

        ``name`` marks the migration done in ``meta`` (in the same transaction), so it
        runs once, and never on a new file: an empty file is marked at once. History,
        revisions and leases keep their rows; only the keys change, so resourceVersions
        clients hold stay valid.
        """
        marker = f"migration:{name}"
        with self._write() as conn:
            if conn.execute("SELECT 1 FROM meta WHERE name = ?", (marker,)).fetchone():
                return 0
            renamed = 0
            for (key,) in conn.execute("SELECT DISTINCT key FROM kv").fetchall():
                new = rename(key)
                if new != key:
                    conn.execute("UPDATE kv SET key = ? WHERE key = ?", (new, key))
                    conn.execute("UPDATE lease SET key = ? WHERE key = ?", (new, key))
                    renamed += 1
            conn.execute("INSERT INTO meta (name, value) VALUES (?, 1)", (marker,))
        return renamed

    # -- compaction ----------------------------------------------------------------

    def compact(self, revision: int) -> None:
        """Forget history older than ``revision``; the latest value of every key stays.

        Every key keeps its newest row below ``revision`` (unless it is a tombstone)
        and all its rows from ``revision`` on: reads at ``revision`` or later work, and
        so does every event from ``revision`` on, including its ``prev_value`` (which
        is why the newest row *below* ``revision`` is kept, not only the newest at or
        below it). A revision beyond the current one compacts to the current one; an
        older revision than the compacted one does nothing. The freed pages are
        returned to the file system and the WAL is checkpointed, so the files do not
        grow under steady churn when the server compacts regularly.
        """
        with self._write() as conn:
            old = self._compacted(conn)
            new = min(revision, self._current(conn))
            if new <= old:
                return
            params = {"old": old, "new": new}
            conn.execute(SQL_COMPACT_SUPERSEDED, params)
            conn.execute(SQL_COMPACT_TOMBSTONES, params)
            conn.execute("UPDATE meta SET value = ? WHERE name = 'compacted'", (new,))
        conn = self._conn()
        try:
            # incremental_vacuum frees one page per step, and execute() steps once (the
            # pragma returns no columns); executescript() steps it to the end. No
            # transaction is open here, so its implicit COMMIT does nothing.
            conn.executescript("PRAGMA incremental_vacuum")
            # TRUNCATE waits for readers and holds off writers meanwhile: allow it a
            # short while only. If it cannot finish, the WAL is still reused from its
            # start at the next restart and cut to JOURNAL_SIZE_LIMIT.
            conn.execute("PRAGMA busy_timeout = 200")
            try:
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            finally:
                conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
        except sqlite3.Error as e:
            raise StorageError(f"sqlite vacuum failed: {e}") from e

    def close(self) -> None:
        """Close every connection this store opened, in this process.

        Call it when no other thread uses the store any more; later calls raise.
        """
        self._closed = True
        if self._pid != os.getpid():
            return
        with self._lock:
            connections = list(self._connections)
            self._connections.clear()
        for conn in connections:
            conn.close()
        self._local = threading.local()
