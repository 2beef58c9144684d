"""ControllerManager: elect a leader among workers and hosts, run controllers on the leader."""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid

from ..registry.keys import key_prefix
from .leaderelection import LeaderElector

log = logging.getLogger(__name__)

LEASE_NAMESPACE = "kube-system"
LEASE_NAME = "kapiserver-controllers"
#: Where the Lease is stored: the key the coordination.k8s.io leases registry uses, so
#: ``kubectl -n kube-system get lease kapiserver-controllers`` shows the leader.
LEASE_KEY = f"{key_prefix('coordination.k8s.io', 'leases', LEASE_NAMESPACE)}{LEASE_NAME}"


class ControllerManager:
    """Run ``controllers`` in this worker only while it holds the controllers' Lease."""

    def __init__(self, storage, lease_key: str, controllers: list, stopping: threading.Event,
                 lease_duration: float = 15.0, retry_period: float = 2.0):
        identity = f"{socket.gethostname()}_{os.getpid()}_{uuid.uuid4().hex[:8]}"
        self.elector = LeaderElector(storage, lease_key, LEASE_NAMESPACE, LEASE_NAME, identity,
                                     lease_duration, retry_period)
        self.controllers = list(controllers)
        self.stopping = stopping
        self.wakeups = {c.name: threading.Event() for c in self.controllers}
        self._election: threading.Thread | None = None

    def start(self) -> None:
        if not self.controllers:
            return
        self._election = threading.Thread(target=self._elect, name="leader-election",
                                          daemon=True)
        self._election.start()
        for controller in self.controllers:
            threading.Thread(target=self._run, args=(controller,),
                             name=f"controller/{controller.name}", daemon=True).start()

    def stop(self, timeout: float = 5.0) -> None:
        """Wait (after ``stopping`` is set) for the Lease to be released, so the next leader
        need not wait for it to expire; the store must stay open until this returns."""
        if self._election is not None:
            self._election.join(timeout)

    def wake(self, name: str | None = None) -> None:
        """Ask a controller (or all) to sync now rather than at its next interval."""
        for key, event in self.wakeups.items():
            if name is None or key == name:
                event.set()

    def _elect(self) -> None:
        while not self.stopping.is_set():
            try:
                was_leading = self.elector.leading
                if self.elector.try_acquire_or_renew() and not was_leading:
                    self.wake()
            except Exception:
                log.exception("leader election round failed")
                self.elector.leading = False
            self.stopping.wait(self.elector.retry_period)
        self.elector.release()

    def _run(self, controller) -> None:
        wakeup = self.wakeups[controller.name]
        while not self.stopping.is_set():
            wakeup.wait(controller.interval)
            wakeup.clear()
            if not self.elector.leading or self.stopping.is_set():
                continue
            try:
                controller.sync()
            except Exception:
                log.exception("controller %s failed; retrying", controller.name)
