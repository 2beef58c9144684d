"""Authorization: may this user do this (``k8s.io/apiserver/pkg/authorization/authorizer``).

Authorizers are plain objects built at start-up from the factories plugins return through
``kapiserver_authorizers``, chosen and ordered by ``--authorization-mode``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ..authentication import UserInfo


class Decision(enum.Enum):
    """An authorizer's answer: ``ALLOW`` and ``DENY`` end the union; ``NO_OPINION`` goes on."""

    DENY = 0
    ALLOW = 1
    NO_OPINION = 2


@dataclass(frozen=True)
class Attributes:
    """What is being attempted (``authorizer.AttributesRecord``)."""

    user: UserInfo
    verb: str
    resource_request: bool
    path: str = ""
    namespace: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""


class Authorizer:
    """Base class of authorizers: ``authorize`` returns ``(Decision, reason)``."""

    name = ""

    def authorize(self, attributes: Attributes) -> tuple[Decision, str]:
        raise NotImplementedError

    def rules_for(self, user: UserInfo, namespace: str):
        """What ``user`` may do in ``namespace`` (``authorizer.RuleResolver.RulesFor``).

        Returns ``(resource_rules, non_resource_rules, incomplete, evaluation_error)``:
        rules are dicts shaped as ``authorization.k8s.io/v1`` ``ResourceRule``
        (``verbs``, ``apiGroups``, ``resources``, ``resourceNames``) and
        ``NonResourceRule`` (``verbs``, ``nonResourceURLs``). An authorizer that cannot
        list its rules says the list is incomplete, as this default does.
        """
        return [], [], True, ""


def forbidden_message(attributes: Attributes) -> str:
    """Word a denial as upstream's ``responsewriters.forbiddenMessage``."""
    from ..errors import go_quote as q

    username = q(attributes.user.name if attributes.user else "")
    if not attributes.resource_request:
        return f"User {username} cannot {attributes.verb} path {q(attributes.path)}"
    resource = attributes.resource
    if attributes.subresource:
        resource = f"{resource}/{attributes.subresource}"
    where = (f"in the namespace {q(attributes.namespace)}" if attributes.namespace
             else "at the cluster scope")
    return (f"User {username} cannot {attributes.verb} resource {q(resource)} "
            f"in API group {q(attributes.api_group)} {where}")
