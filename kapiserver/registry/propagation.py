"""Deletion propagation: the garbage collector's finalizers a DELETE puts on an object.

Upstream's generic store (``deletionFinalizersForGarbageCollection`` in
``k8s.io/apiserver/pkg/registry/generic/registry/store.go``): a DELETE's
``propagationPolicy`` (``Orphan``, ``Background``, ``Foreground``) or its deprecated
``orphanDependents``, else the object's own ``orphan`` / ``foregroundDeletion`` finalizer,
else the kind's default policy (``rest.GarbageCollectionPolicy``: ``DeleteDependents`` for
most kinds, ``OrphanDependents`` for batch/v1 Jobs and v1 ReplicationControllers,
``Unsupported`` for events) decides whether the object keeps the ``orphan`` finalizer
(its dependents lose their owner reference before it goes) or the ``foregroundDeletion``
one (it stays, with ``deletionTimestamp``, until its blocking dependents are gone). The
garbage collector (``kapiserver_plugins.core.garbagecollector``) does the rest.
"""

from __future__ import annotations

from ..apimachinery.field_errors import FieldError, FieldPath, GoValue, go_string_slice
from ..apimachinery.validation import FINALIZER_DELETE_DEPENDENTS, FINALIZER_ORPHAN_DEPENDENTS

#: ``metav1.DeletionPropagation`` values.
ORPHAN, BACKGROUND, FOREGROUND = "Orphan", "Background", "Foreground"
#: ``rest.GarbageCollectionPolicy`` values: a strategy's ``default_garbage_collection_policy``.
DELETE_DEPENDENTS, ORPHAN_DEPENDENTS, UNSUPPORTED = "DeleteDependents", "OrphanDependents", \
    "Unsupported"
_GC_FINALIZERS = (FINALIZER_ORPHAN_DEPENDENTS, FINALIZER_DELETE_DEPENDENTS)


def validate_delete_options(options: dict) -> list[FieldError]:
    """``ValidateDeleteOptions``' checks of the propagation (``dryRun`` is checked apart)."""
    errs = []
    policy = options.get("propagationPolicy")
    if options.get("orphanDependents") is not None and policy is not None:
        errs.append(FieldError.invalid(FieldPath("propagationPolicy"), policy,
                                       "orphanDependents and deletionPropagation cannot be "
                                       "both set"))
    if policy is not None and policy not in (FOREGROUND, BACKGROUND, ORPHAN):
        errs.append(FieldError.not_supported(FieldPath("propagationPolicy"), policy,
                                             (FOREGROUND, BACKGROUND, ORPHAN, "nil")))
    return errs


def validate_dry_run(values) -> list[FieldError]:
    """``ValidateDryRun``: ``All`` is the only value."""
    values = list(values or [])
    if any(value != "All" for value in values):
        return [FieldError.not_supported(FieldPath("dryRun"), GoValue(go_string_slice(values)),
                                         ("All",))]
    return []


def should_orphan(finalizers, options: dict | None, default_policy: str) -> bool:
    """``shouldOrphanDependents``."""
    if default_policy == UNSUPPORTED:
        return False
    options = options or {}
    if options.get("orphanDependents") is not None:
        return bool(options["orphanDependents"])
    policy = options.get("propagationPolicy")
    if policy == ORPHAN:
        return True
    if policy in (BACKGROUND, FOREGROUND):
        return False
    for finalizer in finalizers:
        if finalizer == FINALIZER_ORPHAN_DEPENDENTS:
            return True
        if finalizer == FINALIZER_DELETE_DEPENDENTS:
            return False
    return default_policy == ORPHAN_DEPENDENTS


def should_delete_dependents(finalizers, options: dict | None, default_policy: str) -> bool:
    """``shouldDeleteDependents``: deletion in the foreground."""
    if default_policy == UNSUPPORTED:
        return False
    options = options or {}
    if options.get("orphanDependents") is not None:
        return False
    policy = options.get("propagationPolicy")
    if policy == FOREGROUND:
        return True
    if policy in (BACKGROUND, ORPHAN):
        return False
    return FINALIZER_DELETE_DEPENDENTS in finalizers


def gc_finalizers(finalizers, options: dict | None, default_policy: str) -> list[str] | None:
    """The object's finalizers after a DELETE with ``options`` (``None``: a caller inside
    the server, upstream's nil options), or ``None`` when they do not change."""
    finalizers = list(finalizers or [])
    new = [f for f in finalizers if f not in _GC_FINALIZERS]
    if should_orphan(finalizers, options, default_policy):
        new.append(FINALIZER_ORPHAN_DEPENDENTS)
    if should_delete_dependents(finalizers, options, default_policy):
        new.append(FINALIZER_DELETE_DEPENDENTS)
    return None if set(new) == set(finalizers) else new
