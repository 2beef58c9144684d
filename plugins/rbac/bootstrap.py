"""The ``rbac/bootstrap-roles`` post-start hook: reconcile the bootstrap policy.

Mirrors ``pkg/registry/rbac/rest.PolicyData.EnsureRBACPolicy`` with upstream's
reconciliation (``pkg/registry/rbac/reconciliation``, ``RemoveExtraPermissions`` and
``RemoveExtraSubjects`` off): a missing object is created; an existing one annotated
``rbac.authorization.kubernetes.io/autoupdate: "false"`` is left alone; otherwise missing
labels and annotations, rules (broken down, as ``Covers`` reports them), aggregation
selectors and subjects are added, and a binding whose roleRef differs is recreated.
Every worker runs it, so AlreadyExists and Conflict mean "someone else was first": read
again and retry.
"""

from __future__ import annotations

import contextlib
import copy
import logging

from kapiserver import errors
from kapiserver.controllers import concurrently

from .reference_policy import load
from .rules import covers

log = logging.getLogger(__name__)

GROUP = "rbac.authorization.k8s.io"
AUTOUPDATE = "rbac.authorization.kubernetes.io/autoupdate"
MANAGER = "kube-apiserver"
ATTEMPTS = 10


def _merged_metadata(existing: dict, expected: dict) -> dict:
    meta = existing.setdefault("metadata", {})
    for key in ("labels", "annotations"):
        # merge(expected, existing): what is set on the existing object wins.
        merged = {**(expected["metadata"].get(key) or {}), **(meta.get(key) or {})}
        if merged:
            meta[key] = merged
    return existing


def reconcile_role(existing: dict, expected: dict) -> dict | None:
    """The role to write, or None when ``existing`` needs nothing (``computeReconciledRole``)."""
    if ((existing.get("metadata") or {}).get("annotations") or {}).get(AUTOUPDATE) == "false":
        return None
    result = _merged_metadata(copy.deepcopy(existing), expected)
    wanted_rule = expected.get("aggregationRule")
    if wanted_rule:
        current = result.get("aggregationRule") or {}
        selectors = list(current.get("clusterRoleSelectors") or [])
        missing = [s for s in wanted_rule.get("clusterRoleSelectors") or []
                   if s not in selectors]
        if missing or "aggregationRule" not in result:
            result["aggregationRule"] = {**current,
                                         "clusterRoleSelectors": selectors + missing}
    else:
        # Aggregated roles' rules belong to the aggregation controller.
        rules, wanted = existing.get("rules") or [], expected.get("rules") or []
        # A rule covers itself: when every expected rule is there as it is (every start
        # after the first), Covers has nothing to find.
        uncovered = [] if all(r in rules for r in wanted) else covers(rules, wanted)[1]
        if uncovered:
            result["rules"] = list(existing.get("rules") or []) + uncovered
    return None if result == existing else result


def reconcile_binding(existing: dict, expected: dict) -> dict | None:
    """The binding to write, or None (``computeReconciledRoleBinding``)."""
    if ((existing.get("metadata") or {}).get("annotations") or {}).get(AUTOUPDATE) == "false":
        return None
    result = _merged_metadata(copy.deepcopy(existing), expected)
    subjects = list(existing.get("subjects") or [])
    result["subjects"] = subjects + [s for s in expected.get("subjects") or []
                                     if s not in subjects]
    if not result["subjects"]:
        result.pop("subjects")
    return None if result == existing else result


def _read(registry, namespace: str, name: str) -> dict | None:
    try:
        return registry.get(namespace, name)
    except errors.NotFound:
        return None


def _ensure(registry, expected: dict, reconcile, listed=False, manage=None) -> str:
    """Create or reconcile ``expected``. ``listed`` is what a list just found under its
    name (``None``: nothing); ``False``: read it. After a conflict it is read again."""
    meta = expected["metadata"]
    namespace, name = meta.get("namespace", ""), meta["name"]
    manage = manage or registry.field_manager(MANAGER)
    for attempt in range(ATTEMPTS):
        existing = listed if attempt == 0 and listed is not False else \
            _read(registry, namespace, name)
        if existing is None:
            try:
                registry.create(copy.deepcopy(expected), namespace, manage=manage)
                return "created"
            except errors.AlreadyExists:
                continue
        if "roleRef" in expected and existing.get("roleRef") != expected["roleRef"] and \
                ((existing["metadata"].get("annotations") or {}).get(AUTOUPDATE) != "false"):
            # roleRef is immutable: upstream deletes and recreates the binding.
            try:
                registry.delete(namespace, name)
            except errors.NotFound:
                pass
            continue
        wanted = reconcile(existing, expected)
        if wanted is None:
            return "unchanged"
        try:
            registry.update(namespace, name, wanted, manage=manage)
            return "updated"
        except (errors.Conflict, errors.NotFound):
            continue
    raise RuntimeError(f"could not reconcile {registry.spec.resource} {namespace}/{name}")


def ensure_bootstrap_policy(server) -> None:
    """Create or reconcile every object of the bootstrap policy (the post-start hook)."""
    from .authorizer import index_for

    policy = load()
    counts = {}
    # One worker at a time: the first writes the policy, the others find it written.
    taking_turns = getattr(server, "taking_turns", None)
    with taking_turns("rbac-bootstrap") if taking_turns else contextlib.nullcontext():
        _reconcile_all(server, policy, counts)
    log.info("RBAC bootstrap policy reconciled: %s",
             ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    index_for(server).start()


def _reconcile_all(server, policy: dict, counts: dict) -> None:
    for resource in ("clusterroles", "clusterrolebindings", "roles", "rolebindings"):
        registry = server.registries[(GROUP, resource)]
        reconcile = reconcile_binding if resource.endswith("bindings") else reconcile_role
        manage = registry.field_manager(MANAGER)
        # One list instead of a read per object: on every start but the first, nearly
        # everything is there already and unchanged.
        existing = {(item["metadata"].get("namespace", ""), item["metadata"]["name"]): item
                    for item in registry.list()["items"]}

        def ensure(expected, registry=registry, reconcile=reconcile, manage=manage,
                   existing=existing) -> str:
            meta = expected["metadata"]
            listed = existing.get((meta.get("namespace", ""), meta["name"]))
            return _ensure(registry, expected, reconcile, listed, manage)

        # Together, the writes share fsyncs (the store's group commit).
        for outcome in concurrently(ensure, policy[resource]):
            counts[outcome] = counts.get(outcome, 0) + 1
