"""PeerWakeups: tell the other workers' watch caches at once that the store changed.

Every worker's watch cache polls the store's event log (every 20 ms) for writes made by
other workers. On one host that poll delay is avoidable: after a write, a worker sends a
one-byte datagram to every other worker of the same store, which reads its log right
away. Workers find each other through marker files named by pid in ``<dir>/wakeups/``;
the sockets themselves live in Linux's abstract namespace (no path length limit, nothing
left behind). The poll stays as the fallback (other hosts, lost datagrams).
"""

from __future__ import annotations

import hashlib
import logging
import os
import socket
import sys
import time

log = logging.getLogger(__name__)

#: How often the list of peers is read again from the marker directory.
REFRESH_SECONDS = 1.0


class PeerWakeups:
    """This process's wake-up socket, and the peers it wakes after a write."""

    def __init__(self, store_path: str, pid: int | None = None):
        store_path = os.path.abspath(store_path)
        self.directory = os.path.join(os.path.dirname(store_path), "wakeups")
        os.makedirs(self.directory, exist_ok=True)
        self.prefix = "\0kapiserver-" + hashlib.sha1(store_path.encode()).hexdigest()[:16] + "-"
        self.pid = pid or os.getpid()  # tests run two "workers" in one process
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.prefix + str(self.pid))
        # Its own socket, never blocking: the receiving one waits with a timeout.
        self.sender = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sender.setblocking(False)
        self.marker = os.path.join(self.directory, str(self.pid))
        with open(self.marker, "w"):
            pass
        self._peers: list[str] = []
        self._listed = 0.0

    @classmethod
    def create(cls, store_path: str) -> "PeerWakeups | None":
        """Wake-ups for the store at ``store_path``, or None where they cannot work."""
        if not sys.platform.startswith("linux"):
            return None
        try:
            return cls(store_path)
        except OSError as err:
            log.warning("no wake-ups between workers (%s); polling only", err)
            return None

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for a peer's wake-up; True when one came."""
        self.sock.settimeout(timeout)
        try:
            self.sock.recv(64)
        except (socket.timeout, OSError):
            return False
        return True

    def notify_peers(self) -> None:
        """Wake every other process of this store (never blocks)."""
        now = time.monotonic()
        if now - self._listed > REFRESH_SECONDS:
            try:
                self._peers = [name for name in os.listdir(self.directory)
                               if name.isdigit() and int(name) != self.pid]
            except OSError:
                self._peers = []
            self._listed = now
        for peer in list(self._peers):
            try:
                self.sender.sendto(b"!", self.prefix + peer)
            except (ConnectionRefusedError, FileNotFoundError):
                self._forget(peer)  # that worker is gone
            except OSError:
                pass  # its queue is full: it is awake already

    def _forget(self, peer: str) -> None:
        self._peers.remove(peer)
        try:
            os.unlink(os.path.join(self.directory, peer))
        except OSError:
            pass

    def close(self) -> None:
        try:
            os.unlink(self.marker)
        except OSError:
            pass
        self.sock.close()
        self.sender.close()
