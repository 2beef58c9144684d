"""Leader election on a ``coordination.k8s.io/v1`` Lease kept in the store (client-go's
``leaderelection`` semantics).

A candidate takes the lease when it is free or when its holder has not renewed it for
``lease_duration`` seconds *as measured by this candidate's clock since it last saw the
lease change* (so clocks of different hosts need not agree), and renews it every
``retry_period`` seconds; writes are conditional on the revision read, so two candidates
can never both win.
"""

from __future__ import annotations

import logging
import time
import uuid

from ..registry.store import decode, encode, now_rfc3339
from ..storage import Conflict, KeyExists, KeyNotFound

log = logging.getLogger(__name__)


def _micro_now() -> str:
    """A ``metav1.MicroTime`` in RFC 3339 with microseconds."""
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1e6) % 1000000:06d}Z"


class LeaderElector:
    """Try to hold the lease ``namespace/name`` under ``identity`` (see module docstring)."""

    def __init__(self, storage, key: str, namespace: str, name: str, identity: str,
                 lease_duration: float = 15.0, retry_period: float = 2.0):
        self.storage = storage
        self.key = key
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.lease_duration = lease_duration
        self.retry_period = retry_period
        self.leading = False
        self._observed_revision = 0
        self._observed_at = 0.0

    def try_acquire_or_renew(self) -> bool:
        """One round: return whether this candidate holds the lease afterwards."""
        now = time.monotonic()
        try:
            current = self.storage.get(self.key)
        except KeyNotFound:
            try:
                self.storage.create(self.key, encode(self._lease(None)))
            except KeyExists:
                return self._lost()
            return self._won()
        lease = decode(current.value, current.mod_revision)
        spec = lease.get("spec") or {}
        if current.mod_revision != self._observed_revision:
            self._observed_revision, self._observed_at = current.mod_revision, now
        holder = spec.get("holderIdentity", "")
        duration = spec.get("leaseDurationSeconds") or self.lease_duration
        expired = now - self._observed_at > duration
        if holder and holder != self.identity and not expired:
            return self._lost()
        try:
            self.storage.update(self.key, encode(self._lease(lease)), current.mod_revision)
        except (Conflict, KeyNotFound):
            return self._lost()
        return self._won()

    def _lease(self, previous: dict | None) -> dict:
        now = _micro_now()
        spec = dict((previous or {}).get("spec") or {})
        transitions = spec.get("leaseTransitions", 0)
        if spec.get("holderIdentity") != self.identity:
            if spec.get("holderIdentity"):
                transitions += 1
            spec["acquireTime"] = now
        spec.update(holderIdentity=self.identity, leaseDurationSeconds=int(self.lease_duration),
                    renewTime=now, leaseTransitions=transitions)
        meta = dict((previous or {}).get("metadata") or {})
        meta.pop("resourceVersion", None)
        if not meta:
            meta = {"name": self.name, "namespace": self.namespace, "uid": str(uuid.uuid4()),
                    "creationTimestamp": now_rfc3339()}
        return {"kind": "Lease", "apiVersion": "coordination.k8s.io/v1", "metadata": meta,
                "spec": spec}

    def release(self) -> None:
        """Give the lease up at shutdown so another worker takes over at once."""
        if not self.leading:
            return
        self.leading = False
        try:
            current = self.storage.get(self.key)
            lease = decode(current.value, current.mod_revision)
            if (lease.get("spec") or {}).get("holderIdentity") == self.identity:
                lease["spec"]["holderIdentity"] = ""
                lease["spec"]["leaseDurationSeconds"] = 1
                self.storage.update(self.key, encode(lease), current.mod_revision)
        except (Conflict, KeyNotFound):
            pass

    def _won(self) -> bool:
        if not self.leading:
            log.info("%s became the leader of %s/%s", self.identity, self.namespace, self.name)
        self.leading = True
        self._observed_at = time.monotonic()
        return True

    def _lost(self) -> bool:
        if self.leading:
            log.warning("%s lost the lease %s/%s", self.identity, self.namespace, self.name)
        self.leading = False
        return False

