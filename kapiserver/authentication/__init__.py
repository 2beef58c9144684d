"""Authentication: who is making a request (``k8s.io/apiserver/pkg/authentication``).

Authenticators are plain objects built at start-up from the factories plugins return
through ``kapiserver_authenticators``; the core composes them with ``union.build``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

#: Upstream's well-known user and group names (``k8s.io/apiserver/pkg/authentication/user``).
ANONYMOUS = "system:anonymous"
ALL_UNAUTHENTICATED = "system:unauthenticated"
ALL_AUTHENTICATED = "system:authenticated"
SYSTEM_PRIVILEGED_GROUP = "system:masters"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
SERVICE_ACCOUNTS_GROUP_PREFIX = "system:serviceaccounts:"
ALL_SERVICE_ACCOUNTS_GROUP = "system:serviceaccounts"


@dataclass(frozen=True)
class UserInfo:
    """An authenticated identity: name, uid, groups and extra (``user.Info``)."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def with_groups(self, groups) -> "UserInfo":
        return UserInfo(self.name, self.uid, tuple(groups), self.extra)

    def to_v1(self) -> dict:
        """As ``authentication.k8s.io/v1`` ``UserInfo`` (reviews, audit events): empty
        fields omitted."""
        out = {}
        if self.name:
            out["username"] = self.name
        if self.uid:
            out["uid"] = self.uid
        if self.groups:
            out["groups"] = list(self.groups)
        if self.extra:
            out["extra"] = {key: list(values) for key, values in self.extra.items()}
        return out


@dataclass
class AuthenticationRequest:
    """What an authenticator may read of a request, without the web framework.

    ``headers`` is a case-insensitive mapping; ``peer_certificate`` is the DER bytes of the
    client certificate the TLS layer accepted, or ``None``; ``peer_certificate_info`` the
    same certificate as ``ssl`` decodes it after verifying it in the handshake.

    ``audiences`` are those the credentials must be meant for (a TokenReview's
    ``spec.audiences``); empty means the server's ``--api-audiences``. An audience-aware
    authenticator (service-account tokens) sets ``matched_audiences`` to those it matched;
    ``None`` means audience-agnostic, as upstream's ``WrapAudienceAgnosticToken``.

    An authenticator that consumed headers which must not travel further (a front proxy's
    identity headers) lists their names in ``remove_headers``; the server drops them
    from the request once it is authenticated.
    """

    headers: Mapping[str, str]
    peer_certificate: bytes | None = None
    remote_addr: str = ""
    audiences: tuple[str, ...] = ()
    matched_audiences: tuple[str, ...] | None = None
    peer_certificate_info: dict | None = None
    remove_headers: list[str] | None = None


class AuthenticationError(Exception):
    """Raised by an authenticator that found credentials of its kind and rejected them."""


class Authenticator:
    """Base class of authenticators.

    ``authenticate`` returns a ``UserInfo`` when the request carries valid credentials of
    this authenticator's kind, ``None`` when it carries none, and raises
    ``AuthenticationError`` when it carries bad ones. An authenticator with
    ``anonymous = True`` is only consulted when every other one found no credentials.
    """

    name = ""
    anonymous = False

    def authenticate(self, request: AuthenticationRequest) -> UserInfo | None:
        raise NotImplementedError
