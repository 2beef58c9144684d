"""The ClusterRole aggregation controller (``pkg/controller/clusterroleaggregation``).

A ClusterRole with ``aggregationRule.clusterRoleSelectors`` gets as rules the union of the
rules of every other ClusterRole its selectors match (selectors in order, roles by name,
each rule once). It reads the worker's RBAC index, is woken by every ClusterRole change
the index sees, and runs on the elected worker only.
"""

from __future__ import annotations

import logging

from kapiserver import errors
from kapiserver.controllers import Controller

log = logging.getLogger(__name__)

GROUP = "rbac.authorization.k8s.io"
NAME = "clusterrole-aggregation"


def aggregated_rules(role: dict, cluster_roles: dict) -> list[dict] | None:
    """The rules ``role`` should have, or None when it has no aggregation rule."""
    from kapiserver.apimachinery.labels import selector_from_label_selector

    rule = role.get("aggregationRule")
    if not isinstance(rule, dict):
        return None
    name = role["metadata"]["name"]
    rules: list[dict] = []
    for selector in rule.get("clusterRoleSelectors") or []:
        matcher = selector_from_label_selector(selector)
        for other_name in sorted(cluster_roles):
            other = cluster_roles[other_name]
            if other_name == name or not matcher.matches(
                    (other.get("metadata") or {}).get("labels") or {}):
                continue
            rules += [r for r in other.get("rules") or [] if r not in rules]
    return rules


class ClusterRoleAggregationController(Controller):
    """Keep aggregated ClusterRoles' rules the union of the roles they select."""

    name = NAME
    interval = 5.0

    def __init__(self, server):
        from .authorizer import index_for

        self.server = server
        self.index = index_for(server)
        # Any ClusterRole change may change an aggregation: sync now, not at the interval.
        self.index.listeners.append(
            lambda resource: resource == "clusterroles" and server.controllers.wake(NAME))

    def sync(self) -> None:
        self.index.start()
        registry = self.server.registries[(GROUP, "clusterroles")]
        roles = dict(self.index.cluster_roles)
        manage = registry.field_manager("clusterrole-aggregation-controller")
        for name, role in sorted(roles.items()):
            try:
                wanted = aggregated_rules(role, roles)
            except ValueError as err:  # a bad selector: leave the role as it is
                log.warning("ClusterRole %s: %s", name, err)
                continue
            # Semantic.DeepEqual: a nil and an empty rule list are equal.
            if wanted is None or wanted == (role.get("rules") or []):
                continue

            def set_rules(current, wanted=wanted):
                current["rules"] = wanted
                return current

            try:
                registry.guaranteed_update("", name, set_rules, manage=manage)
                log.info("ClusterRole %s: aggregated %d rules", name, len(wanted))
            except errors.NotFound:
                pass
