"""The status conditions of a terminating namespace (upstream's ``status_condition_utils.go``).

After each pass over a namespace's content the namespace controller states, in five
conditions, what stands in the way: discovery failures, resource types it could not parse
(never, here: kept for upstream's set), deletions that failed, objects left, and the
finalizers holding them. A condition is ``True`` while its trouble lasts, and ``False``
with upstream's reason and message once it is gone.
"""

from __future__ import annotations

from kapiserver.registry.store import now_rfc3339

DISCOVERY_FAILURE = "NamespaceDeletionDiscoveryFailure"
GV_PARSING_FAILURE = "NamespaceDeletionGroupVersionParsingFailure"
CONTENT_FAILURE = "NamespaceDeletionContentFailure"
CONTENT_REMAINING = "NamespaceContentRemaining"
FINALIZERS_REMAINING = "NamespaceFinalizersRemaining"
#: The conditions the controller maintains, in upstream's order.
CONDITION_TYPES = (DISCOVERY_FAILURE, GV_PARSING_FAILURE, CONTENT_FAILURE, CONTENT_REMAINING,
                   FINALIZERS_REMAINING)
OK = {
    DISCOVERY_FAILURE: ("ResourcesDiscovered", "All resources successfully discovered"),
    GV_PARSING_FAILURE: ("ParsedGroupVersions", "All legacy kube types successfully parsed"),
    CONTENT_FAILURE: ("ContentDeleted",
                      "All content successfully deleted, may be waiting on finalization"),
    CONTENT_REMAINING: ("ContentRemoved", "All content successfully removed"),
    FINALIZERS_REMAINING: ("ContentHasNoFinalizers",
                           "All content-preserving finalizers finished"),
}


class ConditionUpdater:
    """Collects one pass's troubles (``namespaceConditionUpdater``); ``update(namespace)``
    writes them into its ``status.conditions``."""

    def __init__(self):
        self.conditions: dict[str, tuple[str, str]] = {}  # type -> (reason, message)
        self.content_errors: list[str] = []

    def discovery_failed(self, failures: int, message: str) -> None:
        self.conditions[DISCOVERY_FAILURE] = (
            "DiscoveryFailed", f"Discovery failed for some groups, {failures} failing: {message}")

    def delete_content_failed(self, message: str) -> None:
        self.content_errors.append(message)

    def content_totals(self, remaining: dict[tuple[str, str], int],
                       finalizers: dict[str, int]) -> None:
        """``remaining`` maps ``(group, resource)`` to how many objects are left,
        ``finalizers`` each finalizer to how many of them it holds."""
        left = sorted(f"{resource}.{group} has {count} resource instances"
                      for (group, resource), count in remaining.items() if count)
        if left:
            self.conditions[CONTENT_REMAINING] = (
                "SomeResourcesRemain", "Some resources are remaining: " + ", ".join(left))
        held = sorted(f"{finalizer} in {count} resource instances"
                      for finalizer, count in finalizers.items() if count)
        if held:
            self.conditions[FINALIZERS_REMAINING] = (
                "SomeFinalizersRemain",
                "Some content in the namespace has finalizers remaining: " + ", ".join(held))

    def update(self, namespace: dict) -> bool:
        """Set every condition of ``CONDITION_TYPES`` on ``namespace`` (the trouble, else
        the all-clear); True when anything changed. ``lastTransitionTime`` moves only when
        a condition's status does."""
        conditions = dict(self.conditions)
        if CONTENT_FAILURE not in conditions and self.content_errors:
            errors = sorted(self.content_errors)
            conditions[CONTENT_FAILURE] = (
                "ContentDeletionFailed",
                f"Failed to delete all resource types, {len(errors)} remaining: "
                + ", ".join(errors))
        current = namespace.setdefault("status", {}).setdefault("conditions", [])
        changed = False
        for kind in CONDITION_TYPES:
            status, (reason, message) = (("True", conditions[kind]) if kind in conditions
                                         else ("False", OK[kind]))
            old = next((c for c in current if c.get("type") == kind), None)
            if old is None:
                current.append({"type": kind, "status": status,
                                "lastTransitionTime": now_rfc3339(), "reason": reason,
                                "message": message})
                changed = True
            elif (old.get("status"), old.get("reason"), old.get("message")) != (
                    status, reason, message):
                if old.get("status") != status:
                    old["lastTransitionTime"] = now_rfc3339()
                old.update(status=status, reason=reason, message=message)
                changed = True
        return changed
