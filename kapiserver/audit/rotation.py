"""A log file rotated by size, with backups kept by count and age (lumberjack's rules).

As the ``lumberjack.Logger`` kube-apiserver writes its audit log with: a write that would
take the file past ``--audit-log-maxsize`` megabytes (100 when 0) first renames it to
``NAME-2006-01-02T15-04-05.000.EXT`` (UTC) and starts a new one; then, off the request
path, backups beyond ``--audit-log-maxbackup`` (0: all kept) or older than
``--audit-log-maxage`` days (0: any age) are removed, and with ``--audit-log-compress``
the others gzip-compressed. New files are ``0600``.

Every gunicorn worker appends to the same file (``O_APPEND``: each line is one
``write``). The size checked is the file's own, whoever wrote it; a rotation is done
under a lock on the directory (taken for a rename, never for longer), and a worker that
finds the path names another file than the one it holds (another worker rotated) opens
the new one.
"""

from __future__ import annotations

import datetime
import fcntl
import gzip
import logging
import os
import re
import shutil
import threading
import time

log = logging.getLogger(__name__)

MEGABYTE = 1024 * 1024
DEFAULT_MAX_SIZE_MB = 100
BACKUP_TIME_FORMAT = "%Y-%m-%dT%H-%M-%S"
#: How often a writer checks whether another process rotated the file.
FOLLOW_INTERVAL = 0.25


def _in_background(function) -> None:
    """Run ``function`` in a native thread: gevent's pool in a worker (compressing must not
    stall the worker's greenlets), a plain thread elsewhere."""
    try:
        from gevent import get_hub, monkey

        if monkey.is_module_patched("socket"):
            get_hub().threadpool.spawn(function)
            return
    except ImportError:  # pragma: no cover - gevent is a dependency
        pass
    threading.Thread(target=function, daemon=True).start()


class RotatingFile:
    """An append-only file rotated as the module docstring says; ``write(bytes)``."""

    def __init__(self, path: str, max_size_mb: int = 0, max_backups: int = 0,
                 max_age_days: int = 0, compress: bool = False):
        self.path = os.path.abspath(path)
        self.max_bytes = (max_size_mb or DEFAULT_MAX_SIZE_MB) * MEGABYTE
        self.max_backups = max_backups
        self.max_age_days = max_age_days
        self.compress = compress
        self.directory = os.path.dirname(self.path)
        name = os.path.basename(self.path)
        self.prefix, self.ext = os.path.splitext(name)
        self._backup = re.compile(re.escape(self.prefix) + r"-(\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3})"
                                  + re.escape(self.ext) + r"(\.gz)?$")
        self._fd: int | None = None
        self._inode = None
        self._next_follow = 0.0
        os.makedirs(self.directory, mode=0o700, exist_ok=True)

    def _open(self) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        if self._fd is not None:
            os.close(self._fd)
        self._fd = fd
        self._inode = os.fstat(fd).st_ino

    def _follow(self) -> None:
        """Reopen the path when another process rotated the file away."""
        try:
            inode = os.stat(self.path).st_ino
        except FileNotFoundError:
            inode = None
        if inode != self._inode:
            self._open()

    def write(self, data: bytes) -> int:
        if len(data) > self.max_bytes:
            raise ValueError(f"write length {len(data)} exceeds maximum file size "
                             f"{self.max_bytes}")
        now = time.monotonic()
        if self._fd is None:
            self._open()
        elif now >= self._next_follow:
            self._follow()
        self._next_follow = now + FOLLOW_INTERVAL
        if os.fstat(self._fd).st_size + len(data) > self.max_bytes:
            self._rotate(len(data))
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        return len(data)

    def _rotate(self, incoming: int) -> None:
        directory = os.open(self.directory, os.O_RDONLY)
        try:
            try:
                # Never wait on the request path: a process that holds the lock (rotating,
                # or compressing backups) will have rotated, or this write goes to the
                # current file and the next one tries again.
                fcntl.flock(directory, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return
            try:
                current = os.stat(self.path)
            except FileNotFoundError:
                current = None
            if current is None or current.st_ino != self._inode:
                self._open()  # another process rotated it already
                return
            if current.st_size + incoming <= self.max_bytes:
                return
            os.rename(self.path, self.backup_name(datetime.datetime.now(datetime.timezone.utc)))
            self._open()
        finally:
            os.close(directory)  # closing releases the lock
        _in_background(self.mill)

    def backup_name(self, moment: datetime.datetime) -> str:
        stamp = moment.strftime(BACKUP_TIME_FORMAT) + f".{moment.microsecond // 1000:03d}"
        return os.path.join(self.directory, f"{self.prefix}-{stamp}{self.ext}")

    def backups(self) -> list[tuple[datetime.datetime, str]]:
        """The backups of this file, newest first."""
        found = []
        for name in os.listdir(self.directory):
            match = self._backup.match(name)
            if match:
                moment = datetime.datetime.strptime(match.group(1), BACKUP_TIME_FORMAT + ".%f")
                found.append((moment.replace(tzinfo=datetime.timezone.utc),
                              os.path.join(self.directory, name)))
        return sorted(found, reverse=True)

    def mill(self) -> None:
        """Remove the backups too many or too old; compress the others if asked.

        Without the directory's lock: a rotation must never find it taken for the seconds
        a compression lasts (it would skip, and the file would grow past its size). Every
        step tolerates another process milling the same backups at once: a file already
        removed is skipped, and each process compresses into a partial file of its own
        before the atomic rename."""
        self._mill()

    def _mill(self) -> None:
        try:
            backups = self.backups()
            remove = []
            if self.max_backups > 0:
                remove += backups[self.max_backups:]
                backups = backups[:self.max_backups]
            if self.max_age_days > 0:
                cutoff = datetime.datetime.now(datetime.timezone.utc) - \
                    datetime.timedelta(days=self.max_age_days)
                remove += [b for b in backups if b[0] < cutoff]
                backups = [b for b in backups if b[0] >= cutoff]
            for _, path in remove:
                try:
                    os.remove(path)
                except FileNotFoundError:
                    pass
            if self.compress:
                for _, path in backups:
                    if not path.endswith(".gz"):
                        self._compress(path)
        except OSError as err:
            log.error("audit log rotation: %s", err)

    @staticmethod
    def _compress(path: str) -> None:
        partial = f"{path}.gz.partial-{os.getpid()}-{threading.get_ident()}"
        try:
            with open(path, "rb") as source, gzip.open(partial, "wb") as target:
                shutil.copyfileobj(source, target)
            os.chmod(partial, 0o600)
            os.replace(partial, path + ".gz")
            os.remove(path)
        except FileNotFoundError:  # removed, or compressed by another process, meanwhile
            if os.path.exists(partial):
                os.remove(partial)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
