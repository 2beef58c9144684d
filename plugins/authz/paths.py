"""Paths allowed without asking anyone (upstream's ``authorization/path`` authorizer).

An extension server with delegated authorization (``--authorization-kubeconfig``) answers
its health checks without a SubjectAccessReview on the main server:
``--authorization-always-allow-paths`` (default ``/healthz``, ``/readyz``, ``/livez``, as
upstream's ``NewDelegatingAuthorizationOptions``). A path matches exactly, or by prefix
when it ends in ``*``; the leading ``/`` is optional. Resource requests never match.
"""

from __future__ import annotations

from marshmallow import ValidationError

from kapiserver.authorization import Authorizer, Decision

DEFAULT_ALWAYS_ALLOW_PATHS = ("/healthz", "/readyz", "/livez")


def validate_paths(paths) -> None:
    """Only a trailing ``*`` is allowed (upstream's message)."""
    for path in paths:
        bare = path[1:] if path.startswith("/") else path
        if "*" in bare[:-1]:
            raise ValidationError(f"only trailing * allowed in {bare!r}".replace("'", '"'))


class PathAuthorizer(Authorizer):
    """Allow non-resource requests for the given paths; no opinion on anything else."""

    name = "AlwaysAllowPaths"

    def __init__(self, paths):
        validate_paths(paths)
        self.exact, self.prefixes = set(), []
        for path in paths:
            bare = path[1:] if path.startswith("/") else path
            if bare.endswith("*"):
                self.prefixes.append(bare[:-1])
            else:
                self.exact.add(bare)

    def authorize(self, attributes):
        if attributes.resource_request:
            return Decision.NO_OPINION, ""
        path = attributes.path[1:] if attributes.path.startswith("/") else attributes.path
        if path in self.exact or any(path.startswith(p) for p in self.prefixes):
            return Decision.ALLOW, ""
        return Decision.NO_OPINION, ""


class WithAlwaysAllowPaths(Authorizer):
    """A mode preceded by a ``PathAuthorizer`` (the delegating authorizer's union)."""

    def __init__(self, paths: PathAuthorizer, inner: Authorizer):
        self.paths = paths
        self.inner = inner
        self.name = inner.name

    def authorize(self, attributes):
        decision, reason = self.paths.authorize(attributes)
        if decision is Decision.ALLOW:
            return decision, reason
        return self.inner.authorize(attributes)

    def rules_for(self, user, namespace):
        return self.inner.rules_for(user, namespace)
