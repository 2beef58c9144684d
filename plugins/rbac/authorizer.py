"""The ``RBAC`` authorization mode (``plugin/pkg/auth/authorizer/rbac``)."""

from __future__ import annotations

from kapiserver.authorization import Authorizer, Decision

from .rules import aggregate_errors


def index_for(server):
    """The server's one ``RBACIndex``, shared by the authorizer, the escalation checks and
    the aggregation controller, created on first use (state lives on the server object)."""
    index = server.__dict__.get("rbac_index")
    if index is None:
        from .index import RBACIndex

        index = server.__dict__.setdefault("rbac_index", RBACIndex(server))
    return index


class RBACAuthorizer(Authorizer):
    """Allow what a Role or ClusterRole bound to the user, a group or service account grants.

    Nothing else is refused outright: without a matching rule the answer is NO_OPINION,
    with upstream's reason only when a binding refers to a missing role, so the next mode
    decides and a 403 reads as kube-apiserver's.
    """

    name = "RBAC"

    def __init__(self, server):
        self.server = server

    @property
    def index(self):
        return index_for(self.server)

    def authorize(self, attributes):
        index = self.index
        errors = []
        for binding in index.bindings_for(attributes.user, attributes.namespace):
            rules, error = index.rules_of(binding)
            if error:
                errors.append(error)
                continue
            for rule in rules:
                if rule.allows(attributes):
                    return Decision.ALLOW, f"RBAC: allowed by {binding.describe(attributes.user)}"
        return Decision.NO_OPINION, f"RBAC: {aggregate_errors(errors)}" if errors else ""

    def rules_for(self, user, namespace):
        """The rules ``user`` holds in ``namespace``, as a SelfSubjectRulesReview lists them
        (``RBACAuthorizer.RulesFor``): a rule with resources is a resource rule, one with
        non-resource URLs a non-resource rule; missing roles are the evaluation error."""
        rules, errors = self.index.resolve(user, namespace)
        resource_rules, non_resource_rules = [], []
        for rule in rules:
            if rule.get("resources"):
                entry = {"verbs": list(rule.get("verbs") or []),
                         "apiGroups": list(rule.get("apiGroups") or []),
                         "resources": list(rule["resources"])}
                if rule.get("resourceNames"):
                    entry["resourceNames"] = list(rule["resourceNames"])
                resource_rules.append(entry)
            if rule.get("nonResourceURLs"):
                non_resource_rules.append({"verbs": list(rule.get("verbs") or []),
                                           "nonResourceURLs": list(rule["nonResourceURLs"])})
        return resource_rules, non_resource_rules, False, aggregate_errors(errors)
