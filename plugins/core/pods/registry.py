"""Pods' storage and REST handler: graceful deletion, as upstream's generic ``Store.Delete``
with the pod strategy's ``CheckGracefulDelete`` (``rest.BeforeDelete``).

A DELETE gives the pod a grace period (the request's ``gracePeriodSeconds``, else the
pod's ``terminationGracePeriodSeconds``; 0 for a pod no node runs or a finished one): the
pod is written with ``deletionTimestamp`` (now plus the period) and
``deletionGracePeriodSeconds`` and kept while the period runs, for its kubelet to stop
it and delete it with grace 0; with a period of 0 it goes at once. A later DELETE may only
shorten the period. Every DELETE answers with the pod (``ReturnDeletedObject``).
"""

from __future__ import annotations

import calendar
import time

from kapiserver import errors
from kapiserver.registry.store import RegistryStore
from kapiserver.storage import Conflict, KeyNotFound

_ATTEMPTS = 16
_TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def _int(value):
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _format_time(seconds: float) -> str:
    return time.strftime(_TIME_FORMAT, time.gmtime(seconds))


def _parse_time(value: str) -> float | None:
    try:
        return float(calendar.timegm(time.strptime(value, _TIME_FORMAT)))
    except (TypeError, ValueError):
        return None


class DeleteOptions:
    """What a DELETE of a pod says: ``gracePeriodSeconds`` (``None``: not given), its
    preconditions (``uid``, ``resourceVersion``) and its propagation (``propagationPolicy``
    and ``orphanDependents`` as JSON, for the garbage collector's finalizers)."""

    def __init__(self, grace_period: int | None = None, uid: str = "",
                 resource_version: str = "", propagation: dict | None = None):
        self.grace_period = grace_period
        self.uid = uid
        self.resource_version = resource_version
        self.propagation = propagation or {}

    @classmethod
    def from_body(cls, body: dict) -> "DeleteOptions":
        """From a ``metav1.DeleteOptions`` body (its types already checked)."""
        pre = body.get("preconditions") if isinstance(body.get("preconditions"), dict) else {}
        return cls(_int(body.get("gracePeriodSeconds")), pre.get("uid") or "",
                   pre.get("resourceVersion") or "",
                   {key: body[key] for key in ("propagationPolicy", "orphanDependents")
                    if body.get(key) is not None})

    def copy(self) -> "DeleteOptions":
        """A copy for one of many deletes (a delete may change the resourceVersion)."""
        return DeleteOptions(self.grace_period, self.uid, self.resource_version,
                             self.propagation)


class PodRegistry(RegistryStore):
    """The pods' ``RegistryStore``: deletion is graceful (see the module docstring)."""

    def delete(self, namespace: str, name: str, preconditions=None, dry_run: bool = False,
               admit=None, options: DeleteOptions | None = None) -> tuple[dict, bool]:
        """Delete gracefully; returns ``(pod, deleted)``. Without ``options`` (a caller
        inside the server, like upstream's nil options) the grace period is 0; ``options``
        may also be ``DeleteOptions`` as JSON (the garbage collector's)."""
        if options is None:
            options = DeleteOptions(0)
        elif isinstance(options, dict):
            options = DeleteOptions.from_body(options)
        if preconditions is not None:
            options.uid = options.uid or preconditions.uid
            options.resource_version = options.resource_version or \
                preconditions.resource_version
        key = self.spec.key(namespace, name)
        for _ in range(_ATTEMPTS):
            try:
                current = self.storage.get(key)
            except KeyNotFound:
                raise self._not_found(name) from None
            obj = self.decode(current.value, current.mod_revision)
            self._check_preconditions(name, obj, options)
            graceful, pending, period = before_delete(obj, options.grace_period)
            if pending:
                return obj, False
            meta = obj["metadata"]
            if admit is not None:
                admit(obj)
            # Graceful or not, the propagation puts the garbage collector's finalizers on
            # (upstream's updateForGracefulDeletionAndFinalizers).
            changed = self.strategy.gc_finalizers(obj, options.propagation)
            if changed is not None:
                meta["finalizers"] = changed
                if not changed:
                    del meta["finalizers"]
            finalizers = bool(meta.get("finalizers"))
            if not graceful and not finalizers:
                return self._delete_now(key, name, obj, current.mod_revision, dry_run, options)
            if not graceful:
                mark_as_deleting(meta)
            normalize = getattr(self.strategy, "normalize", None)
            if normalize is not None:
                normalize(obj)  # Go's field order for what was added
            revision = current.mod_revision
            if not dry_run:
                try:
                    revision = self.storage.update(key, self.encode(obj), revision,
                                                   self.strategy.ttl)
                except Conflict:
                    continue
                meta["resourceVersion"] = str(revision)
                self.on_write()
            if finalizers or period > 0:
                return obj, False
            if options.resource_version:
                options.resource_version = str(revision)
            return self._delete_now(key, name, obj, revision, dry_run, options)
        raise errors.Conflict(f"Operation cannot be fulfilled on pods {errors.go_quote(name)}: "
                              "the object has been modified; please apply your changes to "
                              "the latest version and try again",
                              errors.status_details(name, "", "pods"))

    def _delete_now(self, key: str, name: str, obj: dict, revision: int, dry_run: bool,
                    options: DeleteOptions) -> tuple[dict, bool]:
        """Remove the pod (upstream's ``Storage.Delete``, retried on a race; a pod already
        gone after a graceful update counts as deleted)."""
        if dry_run:
            return obj, True
        for _ in range(_ATTEMPTS):
            try:
                self.storage.delete(key, revision)
            except KeyNotFound:
                return obj, True
            except Conflict:
                try:
                    current = self.storage.get(key)
                except KeyNotFound:
                    return obj, True
                obj = self.decode(current.value, current.mod_revision)
                self._check_stored_preconditions(name, obj, options)
                revision = current.mod_revision
                continue
            self.on_write()
            return obj, True
        raise errors.Conflict(f"Operation cannot be fulfilled on pods {errors.go_quote(name)}: "
                              "the object has been modified; please apply your changes to "
                              "the latest version and try again",
                              errors.status_details(name, "", "pods"))

    @staticmethod
    def _check_preconditions(name: str, obj: dict, options: DeleteOptions) -> None:
        """``BeforeDelete``'s early precondition check (its wording names the kind)."""
        meta = obj["metadata"]
        if options.uid and options.uid != meta.get("uid"):
            raise errors.Conflict(
                f"Operation cannot be fulfilled on Pod {errors.go_quote(name)}: the UID in the "
                f"precondition ({options.uid}) does not match the UID in record "
                f"({meta.get('uid', '')}). The object might have been deleted and then "
                "recreated", errors.status_details(name, "", "Pod"))
        if options.resource_version and options.resource_version != meta.get("resourceVersion"):
            raise errors.Conflict(
                f"Operation cannot be fulfilled on Pod {errors.go_quote(name)}: the "
                f"ResourceVersion in the precondition ({options.resource_version}) does not "
                f"match the ResourceVersion in record ({meta.get('resourceVersion', '')}). "
                "The object might have been modified", errors.status_details(name, "", "Pod"))

    def _check_stored_preconditions(self, name: str, obj: dict, options: DeleteOptions) -> None:
        """The storage layer's check, when the object changed under the delete."""
        from kapiserver.registry.store import Preconditions

        Preconditions(options.uid, options.resource_version).check(self.spec, name, obj)


def before_delete(obj: dict, grace_period: int | None) -> tuple[bool, bool, int]:
    """``rest.BeforeDelete`` with the pod strategy: ``(graceful, pending, period)``.

    Marks ``obj`` for graceful deletion (``deletionTimestamp`` and
    ``deletionGracePeriodSeconds``) when it is to be deleted gracefully; ``pending`` when
    a graceful deletion already runs and the request does not shorten it.
    """
    from .strategy import check_graceful_delete

    meta = obj["metadata"]
    if grace_period is not None and grace_period < 0:
        grace_period = 1
    current = _int(meta.get("deletionGracePeriodSeconds"))
    if current is not None and current < 0:
        current = meta["deletionGracePeriodSeconds"] = 1
    if meta.get("deletionTimestamp"):
        if not current:
            return False, False, 0
        if grace_period is None:
            return False, True, current
        if grace_period >= current:
            return False, True, grace_period
        # Only a shorter grace period may be given: the deletion moves earlier by the
        # difference.
        started = _parse_time(meta["deletionTimestamp"])
        if started is not None:
            meta["deletionTimestamp"] = _format_time(started - current + grace_period)
        meta["deletionGracePeriodSeconds"] = grace_period
        return True, False, grace_period
    period = check_graceful_delete(obj, grace_period)
    meta["deletionTimestamp"] = _format_time(time.time() + period)
    meta["deletionGracePeriodSeconds"] = period
    return True, False, period


def mark_as_deleting(meta: dict) -> None:
    """``markAsDeleting``: an object held by finalizers is marked deleted now, grace 0."""
    now = time.time()
    started = _parse_time(meta.get("deletionTimestamp") or "")
    if started is None or started > now:
        meta["deletionTimestamp"] = _format_time(now)
    meta["deletionGracePeriodSeconds"] = 0
