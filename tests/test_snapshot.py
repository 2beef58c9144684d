"""kapiserver.snapshot: saving a SQLite store while it is written, restoring one only
where no process has the store open, and what both refuse."""

import os
import sqlite3
import subprocess
import sys
import threading

import pytest

from kapiserver.snapshot import (SnapshotError, restore_sqlite, save_sqlite, store_path)
from kapiserver.storage.sqlite import SQLiteStore


@pytest.fixture
def data_dir(tmp_path):
    path = tmp_path / "data"
    path.mkdir()
    store = SQLiteStore(store_path(str(path)))
    for i in range(20):
        store.create(f"/registry/configmaps/default/c{i}", b'{"n": %d}' % i)
    rev = store.create("/registry/configmaps/default/gone", b"{}")
    store.delete("/registry/configmaps/default/gone", rev)
    store.close()
    return str(path)


def test_save_copies_the_store_into_one_standalone_file(data_dir, tmp_path):
    info = save_sqlite(data_dir, str(tmp_path / "snap.db"))
    assert (info.revision, info.keys) == (22, 20)
    assert info.size == os.path.getsize(tmp_path / "snap.db")
    # A rollback-journal database: no -wal or -shm beside it, nothing left behind.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "snap.db"]
    conn = sqlite3.connect(tmp_path / "snap.db")
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    conn.close()
    copy = SQLiteStore(str(tmp_path / "snap.db"))
    assert copy.get("/registry/configmaps/default/c7").value == b'{"n": 7}'
    assert copy.current_revision() == 22
    copy.close()


def test_save_while_writing_is_the_store_at_one_revision(data_dir, tmp_path):
    store = SQLiteStore(store_path(data_dir))
    stop = threading.Event()
    written = []

    def write():
        i = 0
        while not stop.is_set() and i < 5000:
            written.append(store.create(f"/registry/configmaps/busy/k{i:05}", b"x" * 200))
            i += 1

    writer = threading.Thread(target=write)
    writer.start()
    try:
        while len(written) < 50:
            threading.Event().wait(0.01)
        info = save_sqlite(data_dir, str(tmp_path / "snap.db"))
    finally:
        stop.set()
        writer.join(60)
    copy = SQLiteStore(str(tmp_path / "snap.db"))
    # Exactly the keys written up to the snapshot's revision, and nothing after it.
    keys = [kv.key for kv in copy.list("/registry/configmaps/busy/").items]
    assert len(keys) == len([r for r in written if r <= info.revision]) > 0
    assert max(kv.mod_revision for kv in copy.list("/registry/").items) == info.revision
    assert store.list("/registry/configmaps/busy/", revision=info.revision).items == \
        copy.list("/registry/configmaps/busy/").items
    copy.close()
    store.close()


def test_restore_into_an_empty_and_into_a_used_data_dir(data_dir, tmp_path):
    save_sqlite(data_dir, str(tmp_path / "snap.db"))
    info, replaced = restore_sqlite(str(tmp_path / "snap.db"), str(tmp_path / "fresh"))
    assert (info.revision, info.keys, replaced) == (22, 20, None)

    store = SQLiteStore(store_path(data_dir))
    for i in range(5):
        store.create(f"/registry/secrets/default/s{i}", b"{}")
    store.close()
    info, replaced = restore_sqlite(str(tmp_path / "snap.db"), data_dir)
    assert (info.revision, replaced) == (22, 27)
    store = SQLiteStore(store_path(data_dir))
    assert store.current_revision() == 22
    assert store.list("/registry/secrets/").items == []
    # The restored store is written as any other: the next revision follows the snapshot.
    assert store.create("/registry/secrets/default/new", b"{}") == 23
    store.close()


def test_restore_is_refused_while_a_process_has_the_store_open(data_dir, tmp_path):
    save_sqlite(data_dir, str(tmp_path / "snap.db"))
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, sqlite3\n"
         f"c = sqlite3.connect({store_path(data_dir)!r})\n"
         "c.execute('SELECT COUNT(*) FROM kv').fetchall()\n"
         "print('open', flush=True)\nsys.stdin.read()\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "open\n"
        with pytest.raises(SnapshotError) as refused:
            restore_sqlite(str(tmp_path / "snap.db"), data_dir)
        assert str(refused.value) == (
            f"{store_path(data_dir)} is in use (is a kapiserver serving {data_dir}?): "
            "stop it before restoring")
    finally:
        holder.stdin.close()
        holder.wait(30)
    # Once it is closed, the restore goes ahead.
    restore_sqlite(str(tmp_path / "snap.db"), data_dir)


def test_what_save_and_restore_refuse(data_dir, tmp_path):
    with pytest.raises(SnapshotError, match="no store to save: .*/empty/kapiserver.db does "
                                            "not exist"):
        save_sqlite(str(tmp_path / "empty"), str(tmp_path / "x.db"))
    with pytest.raises(SnapshotError, match="is not a directory"):
        save_sqlite(data_dir, str(tmp_path / "missing" / "x.db"))
    with pytest.raises(SnapshotError, match="no such file"):
        restore_sqlite(str(tmp_path / "nothing.db"), data_dir)

    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database at all" * 100)
    with pytest.raises(SnapshotError, match="is not a kapiserver store: file is not a "
                                            "database"):
        restore_sqlite(str(garbage), data_dir)
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(SnapshotError, match=r"is not a kapiserver store \(no table kv, "
                                            r"meta, lease\)"):
        restore_sqlite(str(other), data_dir)
    with pytest.raises(SnapshotError, match="is the store of .* itself"):
        restore_sqlite(store_path(data_dir), data_dir)
    # Nothing refused changed the store, and no partial file was left.
    store = SQLiteStore(store_path(data_dir))
    assert store.current_revision() == 22
    store.close()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]
