"""SelfSubjectRulesReview: what the requesting user may do in a namespace.

Mirrors ``pkg/registry/authorization/selfsubjectrulesreview`` over upstream's union rule
resolver: every configured authorization mode lists its rules (``Authorizer.rules_for``),
the lists are concatenated in mode order, any incomplete one makes the answer
incomplete, and evaluation errors are aggregated.
"""

from __future__ import annotations

from kapiserver import errors
from kapiserver.authentication import SYSTEM_PRIVILEGED_GROUP
from kapiserver.authorization.union import PrivilegedGroupsAuthorizer

#: What ``cluster-admin`` (bound to ``system:masters`` upstream) grants.
SUPERUSER_RESOURCE_RULE = {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}
SUPERUSER_NON_RESOURCE_RULE = {"verbs": ["*"], "nonResourceURLs": ["*"]}


def resource_rule(rule: dict) -> dict:
    """A ``ResourceRule`` in Go's field order; empty lists omitted except ``verbs``."""
    out = {"verbs": list(rule.get("verbs") or [])}
    for key in ("apiGroups", "resources", "resourceNames"):
        if rule.get(key):
            out[key] = list(rule[key])
    return out


def non_resource_rule(rule: dict) -> dict:
    """A ``NonResourceRule`` in Go's field order."""
    out = {"verbs": list(rule.get("verbs") or [])}
    if rule.get("nonResourceURLs"):
        out["nonResourceURLs"] = list(rule["nonResourceURLs"])
    return out


def aggregate(messages: list[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one message alone, several in brackets."""
    messages = [m for m in messages if m]
    if len(messages) <= 1:
        return "".join(messages)
    return f"[{', '.join(messages)}]"


def rules_for(authorizers, user, namespace: str):
    """The union rule resolver over ``authorizers``: ``(resource, non_resource,
    incomplete, evaluation_error)``."""
    resource, non_resource, problems = [], [], []
    incomplete = False
    for authorizer in authorizers:
        if isinstance(authorizer, PrivilegedGroupsAuthorizer):
            continue  # upstream's superuser authorizer is not a rule resolver
        resolve = getattr(authorizer, "rules_for", None)
        if resolve is None:
            incomplete = True
            continue
        rules, non_rules, partial, problem = resolve(user, namespace)
        resource += [resource_rule(r) for r in rules or ()]
        non_resource += [non_resource_rule(r) for r in non_rules or ()]
        incomplete = incomplete or bool(partial)
        if problem:
            problems.append(str(problem))
    if SYSTEM_PRIVILEGED_GROUP in user.groups:
        # Upstream binds system:masters to cluster-admin; say so whichever modes are on
        # (no duplicate when a mode already grants it).
        if SUPERUSER_RESOURCE_RULE not in resource:
            resource.insert(0, dict(SUPERUSER_RESOURCE_RULE))
        if SUPERUSER_NON_RESOURCE_RULE not in non_resource:
            non_resource.insert(0, dict(SUPERUSER_NON_RESOURCE_RULE))
    return resource, non_resource, incomplete, aggregate(problems)


class RulesReviewer:
    """Answer ``SelfSubjectRulesReview`` for the request's user (after impersonation)."""

    def __init__(self, server):
        self.server = server

    def __call__(self, ctx, obj: dict) -> dict:
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        namespace = spec.get("namespace") or ""
        if not namespace:
            raise errors.BadRequest("no namespace on request")
        authorizers = getattr(self.server.authorizer, "authorizers", [self.server.authorizer])
        resource, non_resource, incomplete, problem = rules_for(authorizers, ctx.user,
                                                                namespace)
        status = {"resourceRules": resource, "nonResourceRules": non_resource,
                  "incomplete": incomplete}
        if problem:
            status["evaluationError"] = problem
        # Upstream answers with a new object: no metadata but its timestamp, an empty spec.
        return {"kind": "SelfSubjectRulesReview", "apiVersion": "authorization.k8s.io/v1",
                "metadata": {"creationTimestamp": None}, "spec": {}, "status": status}
