"""The composed authenticator: an ordered union, the authenticated-group adder, anonymous.

Mirrors ``pkg/kubeapiserver/authenticator/config.go``: ``union.New`` over the configured
authenticators (first success wins, errors are aggregated and only reported when nothing
succeeds), wrapped by ``group.NewAuthenticatedGroupAdder``, then
``union.NewFailOnError(..., anonymous)`` so that bad credentials are never downgraded to
anonymous access.
"""

from __future__ import annotations

import logging

from . import (ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, ANONYMOUS, AuthenticationError,
               AuthenticationRequest, Authenticator, UserInfo)

log = logging.getLogger(__name__)

#: The order upstream consults its authenticators in; others follow, sorted by name.
DEFAULT_ORDER = ("requestheader", "x509", "tokenfile", "serviceaccount", "bootstrap",
                 "oidc", "webhook")


def order(names, configured=None) -> list[str]:
    """Return ``names`` in the configured order, else upstream's, unknown ones by name."""
    ranking = list(configured or DEFAULT_ORDER)
    known = [n for n in ranking if n in names]
    return known + sorted(n for n in names if n not in ranking)


class UnionAuthenticator:
    """Authenticate with the first authenticator that succeeds (see module docstring)."""

    def __init__(self, authenticators: list[Authenticator], anonymous: list[Authenticator]):
        self.authenticators = list(authenticators)
        self.anonymous = list(anonymous)

    def authenticate(self, request: AuthenticationRequest) -> UserInfo | None:
        """Return the user, ``None`` when no credentials were found, or raise on bad ones."""
        errors, messages = [], []
        for authenticator in self.authenticators:
            try:
                user = authenticator.authenticate(request)
            except AuthenticationError as err:
                errors.append(f"[{authenticator.name}] {err}")
                messages.append(str(err))
                continue
            if user is not None:
                return add_authenticated_group(user)
        if errors:
            error = AuthenticationError("; ".join(errors))
            # Each authenticator's own message, for answers worded as upstream's
            # aggregate (TokenReview's status.error).
            error.messages = messages
            raise error
        for authenticator in self.anonymous:
            user = authenticator.authenticate(request)
            if user is not None:
                return user
        return None


def add_authenticated_group(user: UserInfo) -> UserInfo:
    """Add ``system:authenticated`` to a non-anonymous user, as ``AuthenticatedGroupAdder``."""
    if user.name == ANONYMOUS or ALL_AUTHENTICATED in user.groups:
        return user
    if ALL_UNAUTHENTICATED in user.groups:
        return user
    return user.with_groups(user.groups + (ALL_AUTHENTICATED,))


def build(authenticators: dict[str, Authenticator], configured_order=None) -> UnionAuthenticator:
    """Compose named authenticators into the union, logging the order used."""
    named = {n: a for n, a in authenticators.items() if not a.anonymous}
    anonymous = [authenticators[n] for n in sorted(authenticators) if authenticators[n].anonymous]
    names = order(named, configured_order)
    log.info("authenticators, in order: %s%s", ", ".join(names) or "(none)",
             "; then anonymous" if anonymous else "")
    return UnionAuthenticator([named[n] for n in names], anonymous)
