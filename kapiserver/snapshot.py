"""Snapshots of a kapiserver's stored objects: ``kapiserver snapshot save`` and ``restore``.

SQLite (the embedded store, ``<data dir>/kapiserver.db``)
    ``save`` copies the store with SQLite's online backup API in one step: the copy is
    one read transaction, so it is the store at one revision however many writes the
    serving workers make meanwhile (WAL readers never block writers, nor writers them).
    The snapshot is a standalone SQLite database (one file, rollback journal) written
    beside its destination and renamed into place, so a failed save never leaves half a
    file under that name. ``restore`` checks the snapshot, then copies it into the data
    dir's store while holding SQLite's exclusive lock on it: a store any process has open
    (a running server's) cannot be locked, and is refused.

etcd (``--storage-backend etcd3``)
    ``save`` streams etcd's own snapshot (the ``Maintenance.Snapshot`` RPC: the whole
    member's keyspace, every prefix, as ``etcdctl snapshot save`` writes it). Restoring
    one makes a new etcd member and is etcd's job: ``etcdutl snapshot restore``.

Only stored objects are in a snapshot, as in etcd's: the data dir's certificates and
keys are not (a restore into another data dir serves the objects with that dir's CA;
tokens signed by the old service-account key are no longer accepted there).
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from dataclasses import dataclass

DB_NAME = "kapiserver.db"
#: The tables every kapiserver SQLite store has (``storage/sqlite.py``).
TABLES = ("kv", "meta", "lease")
#: Seconds ``save`` waits for a write lock another connection holds (a checkpoint).
BUSY_TIMEOUT = 10.0

SQL_REVISION = "SELECT seq FROM sqlite_sequence WHERE name = 'kv'"
# Keys whose newest row is not a deletion: the objects a read at the revision lists.
SQL_LIVE_KEYS = ("SELECT COUNT(*) FROM kv AS o WHERE o.deleted = 0 AND o.rev = "
                 "(SELECT MAX(i.rev) FROM kv AS i WHERE i.key = o.key)")


class SnapshotError(Exception):
    """A snapshot could not be taken or restored; the message says why."""


@dataclass(frozen=True)
class SnapshotInfo:
    """What a snapshot holds: its file, the store's revision and live keys, its size."""

    path: str
    revision: int
    keys: int
    size: int

    def describe(self) -> str:
        return f"{self.path}: revision {self.revision}, {self.keys} keys, {self.size} bytes"


def store_path(data_dir: str) -> str:
    return os.path.join(data_dir, DB_NAME)


def _inspect(conn: sqlite3.Connection, what: str) -> tuple[int, int]:
    """``(revision, live keys)`` of a kapiserver store; ``SnapshotError`` for anything
    else (another database, a damaged file)."""
    try:
        tables = {row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        missing = [t for t in TABLES if t not in tables]
        if missing:
            raise SnapshotError(f"{what} is not a kapiserver store (no table "
                                f"{', '.join(missing)})")
        (check,) = conn.execute("PRAGMA quick_check").fetchone()
        if check != "ok":
            raise SnapshotError(f"{what} is damaged: {check}")
        row = conn.execute(SQL_REVISION).fetchone()
        return (row[0] if row else 0), conn.execute(SQL_LIVE_KEYS).fetchone()[0]
    except sqlite3.DatabaseError as err:
        raise SnapshotError(f"{what} is not a kapiserver store: {err}") from None


def save_sqlite(data_dir: str, destination: str) -> SnapshotInfo:
    """Copy the SQLite store of ``data_dir`` to ``destination``, consistently, whether or
    not a server is serving it."""
    source_path = store_path(data_dir)
    if not os.path.exists(source_path):
        raise SnapshotError(f"no store to save: {source_path} does not exist")
    destination = os.path.abspath(destination)
    directory = os.path.dirname(destination)
    if not os.path.isdir(directory):
        raise SnapshotError(f"cannot write {destination}: {directory} is not a directory")
    fd, partial = tempfile.mkstemp(prefix=f".{os.path.basename(destination)}.",
                                   suffix=".part", dir=directory)
    os.close(fd)
    try:
        source = sqlite3.connect(source_path, timeout=BUSY_TIMEOUT)
        try:
            copy = sqlite3.connect(partial, isolation_level=None)
            try:
                # pages=-1: every page in one step, one read transaction on the source.
                source.backup(copy, pages=-1)
                # One file on its own: no -wal beside it once written.
                copy.execute("PRAGMA journal_mode = DELETE")
                revision, keys = _inspect(copy, "the copy")
            finally:
                copy.close()
        finally:
            source.close()
        with open(partial, "rb") as f:
            os.fsync(f.fileno())
        os.replace(partial, destination)
    except sqlite3.Error as err:
        raise SnapshotError(f"cannot copy {source_path}: {err}") from None
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    return SnapshotInfo(destination, revision, keys, os.path.getsize(destination))


def restore_sqlite(snapshot: str, data_dir: str) -> tuple[SnapshotInfo, int | None]:
    """Make ``snapshot`` the store of ``data_dir``; return what it holds and the revision
    of the store it replaced (``None``: there was none). Refused while any process has
    that store open."""
    if not os.path.isfile(snapshot):
        raise SnapshotError(f"{snapshot}: no such file")
    try:
        source = sqlite3.connect(f"file:{os.path.abspath(snapshot)}?mode=ro", uri=True)
    except sqlite3.Error as err:
        raise SnapshotError(f"cannot open {snapshot}: {err}") from None
    try:
        revision, keys = _inspect(source, snapshot)
        os.makedirs(data_dir, mode=0o700, exist_ok=True)
        target_path = store_path(data_dir)
        existed = os.path.exists(target_path)
        if existed and os.path.samefile(target_path, snapshot):
            raise SnapshotError(f"{snapshot} is the store of {data_dir} itself")
        target = sqlite3.connect(target_path, timeout=0, isolation_level=None)
        try:
            # Exclusive locking mode keeps the lock after the transaction, until close:
            # no server can open the store while it is replaced, and a server that has
            # it open makes taking the lock fail at once.
            target.execute("PRAGMA locking_mode = EXCLUSIVE")
            try:
                target.execute("BEGIN EXCLUSIVE")
                target.execute("COMMIT")
            except sqlite3.OperationalError as err:
                if "locked" in str(err) or "busy" in str(err):
                    raise SnapshotError(
                        f"{target_path} is in use (is a kapiserver serving {data_dir}?): "
                        "stop it before restoring") from None
                raise
            replaced = None
            if existed:
                try:
                    replaced, _ = _inspect(target, target_path)
                except SnapshotError:
                    replaced = None  # whatever was there goes
            source.backup(target, pages=-1)
            restored, _ = _inspect(target, target_path)
            if restored != revision:
                raise SnapshotError(f"{target_path}: restored revision {restored}, "
                                    f"expected {revision}")
        finally:
            target.close()
    except sqlite3.Error as err:
        raise SnapshotError(f"cannot restore {snapshot} into {data_dir}: {err}") from None
    finally:
        source.close()
    return SnapshotInfo(snapshot, revision, keys, os.path.getsize(snapshot)), replaced


def save_etcd(config, destination: str) -> int:
    """Stream etcd's snapshot of the member ``config``'s ``--etcd-servers`` reach into
    ``destination``; return its size in bytes."""
    from .storage.etcd import EtcdStore

    destination = os.path.abspath(destination)
    directory = os.path.dirname(destination)
    if not os.path.isdir(directory):
        raise SnapshotError(f"cannot write {destination}: {directory} is not a directory")
    store = EtcdStore(config.etcd_servers, prefix=config.etcd_prefix,
                      ca_file=config.etcd_cafile, cert_file=config.etcd_certfile,
                      key_file=config.etcd_keyfile, timeout=config.request_timeout)
    fd, partial = tempfile.mkstemp(prefix=f".{os.path.basename(destination)}.",
                                   suffix=".part", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            try:
                store._client.snapshot(f)
            except Exception as err:  # grpc's and pyetcd's errors alike
                raise SnapshotError(f"etcd snapshot from {', '.join(config.etcd_servers)} "
                                    f"failed: {err}") from None
            f.flush()
            os.fsync(f.fileno())
        if os.path.getsize(partial) == 0:
            raise SnapshotError("etcd sent an empty snapshot")
        os.replace(partial, destination)
    finally:
        store.close()
        if os.path.exists(partial):
            os.unlink(partial)
    return os.path.getsize(destination)
