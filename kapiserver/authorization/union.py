"""The composed authorizer: privileged groups first, then the configured modes in order.

Mirrors ``pkg/kubeapiserver/authorizer/config.go``: ``authorizerfactory.NewPrivilegedGroups
(system:masters)`` is always consulted first, then each ``--authorization-mode``; the first
``ALLOW`` or ``DENY`` decides, ``NO_OPINION`` from all of them is a denial.
"""

from __future__ import annotations

import logging

from ..authentication import SYSTEM_PRIVILEGED_GROUP
from . import Attributes, Authorizer, Decision

log = logging.getLogger(__name__)


class PrivilegedGroupsAuthorizer(Authorizer):
    """Allow every request from a member of the privileged groups (``system:masters``)."""

    name = "PrivilegedGroups"

    def __init__(self, groups=(SYSTEM_PRIVILEGED_GROUP,)):
        self.groups = frozenset(groups)

    def authorize(self, attributes):
        if self.groups.intersection(attributes.user.groups):
            return Decision.ALLOW, ""
        return Decision.NO_OPINION, ""


class UnionAuthorizer(Authorizer):
    """Consult authorizers in order; the first ``ALLOW`` or ``DENY`` decides."""

    name = "Union"

    def __init__(self, authorizers: list[Authorizer]):
        self.authorizers = list(authorizers)

    def authorize(self, attributes: Attributes) -> tuple[Decision, str]:
        reasons = []
        for authorizer in self.authorizers:
            decision, reason = authorizer.authorize(attributes)
            if decision is not Decision.NO_OPINION:
                return decision, reason
            if reason:
                reasons.append(reason)
        return Decision.NO_OPINION, "\n".join(reasons)


def build(modes: list[str], authorizers: dict[str, Authorizer]) -> UnionAuthorizer:
    """Compose the privileged-group authorizer and the named modes, logging the order."""
    log.info("authorization modes, in order: %s (after the privileged group %s)",
             ", ".join(modes), SYSTEM_PRIVILEGED_GROUP)
    return UnionAuthorizer([PrivilegedGroupsAuthorizer()] + [authorizers[m] for m in modes])
