"""The ``TeamOwnership`` admission plugin: every Deployment names the team that owns it.

* Validating: a Deployment without a ``team`` label is refused (422, the field named), as
  is one whose team is not among the configured ``teams``; changing a Deployment's team is
  reserved to the ``adminGroups`` (403).
* Mutating: the ``example.com/team-contact`` annotation is defaulted from the team, the
  pod template gets the ``team`` label too (so the pods can be counted per team), and
  ``example.com/created-by`` records who created the Deployment (kept as it was on
  updates, whatever the update says).
* Each Deployment admitted for creation is recorded in the server log — a side effect,
  so not for dry runs.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from kapiserver.admission import CREATE, UPDATE, AdmissionPlugin
from kapiserver.admission.helpers import forbidden
from kapiserver.apimachinery.field_errors import FieldError, FieldPath, new_invalid
from kapiserver.apimachinery.validation import is_dns1123_subdomain, is_valid_label_value

log = logging.getLogger(__name__)

NAME = "TeamOwnership"
TEAM_LABEL = "team"
CONTACT = "example.com/team-contact"
CREATED_BY = "example.com/created-by"
TEAM_PATH = FieldPath("metadata", "labels").key(TEAM_LABEL)


@dataclass(frozen=True)
class Settings:
    """The plugin's configuration (its entry in ``--admission-control-config-file``)."""

    #: The teams a Deployment may name; empty: any valid label value.
    teams: tuple[str, ...] = ()
    #: ``team-contact`` defaults to ``<team>@<contactDomain>`` ...
    contact_domain: str = "example.com"
    #: ... unless the team has its own address here.
    contacts: dict = field(default_factory=dict)
    #: Who may move a Deployment to another team.
    admin_groups: tuple[str, ...] = ("system:masters",)

    @classmethod
    def parse(cls, configuration: dict | None) -> "Settings":
        """Settings from the plugin's configuration; ``ValueError`` lists what is wrong."""
        configuration = dict(configuration or {})
        problems = [f"unknown field {key!r}" for key in sorted(configuration)
                    if key not in ("teams", "contactDomain", "contacts", "adminGroups")]
        teams = configuration.get("teams") or []
        if not isinstance(teams, list):
            problems.append("teams: must be a list of label values")
            teams = []
        for index, team in enumerate(teams):
            for message in is_valid_label_value(team) if isinstance(team, str) \
                    else ["must be a string"]:
                problems.append(f"teams[{index}]: {team!r}: {message}")
        domain = configuration.get("contactDomain", cls.contact_domain)
        for message in is_dns1123_subdomain(domain) if isinstance(domain, str) \
                else ["must be a string"]:
            problems.append(f"contactDomain: {domain!r}: {message}")
        contacts = configuration.get("contacts") or {}
        if not isinstance(contacts, dict) or not all(
                isinstance(v, str) and "@" in v for v in contacts.values()):
            problems.append("contacts: must map teams to e-mail addresses")
            contacts = {}
        groups = configuration.get("adminGroups", list(cls.admin_groups))
        if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
            problems.append("adminGroups: must be a list of group names")
            groups = []
        if problems:
            raise ValueError("; ".join(problems))
        return cls(tuple(teams), domain, dict(contacts), tuple(groups))

    def contact(self, team: str) -> str:
        return self.contacts.get(team) or f"{team}@{self.contact_domain}"


def _meta(obj: dict) -> dict:
    return obj.setdefault("metadata", {})


def _put(mapping_owner: dict, key: str, name: str, value: str) -> None:
    """Set ``mapping_owner[key][name]`` (labels, annotations), keys sorted as Go writes
    a map."""
    current = dict(mapping_owner.get(key) or {}, **{name: value})
    mapping_owner[key] = dict(sorted(current.items()))


class TeamOwnership(AdmissionPlugin):
    """See the module docstring."""

    name = NAME
    operations = frozenset({CREATE, UPDATE})

    def __init__(self, server, settings: Settings):
        self.settings = settings

    @staticmethod
    def _applies(attributes) -> bool:
        # The Deployment itself: not its status or scale subresources, not other kinds.
        group, _, resource = attributes.gvr
        return (group, resource) == ("apps", "deployments") and not attributes.subresource

    def admit(self, attributes) -> None:
        if not self._applies(attributes):
            return
        deployment = attributes.object
        meta = _meta(deployment)
        team = (meta.get("labels") or {}).get(TEAM_LABEL)
        if team and not (meta.get("annotations") or {}).get(CONTACT):
            _put(meta, "annotations", CONTACT, self.settings.contact(team))
        if team:
            template = deployment.setdefault("spec", {}).setdefault("template", {})
            template_meta = _meta(template)
            if (template_meta.get("labels") or {}).get(TEAM_LABEL) != team:
                _put(template_meta, "labels", TEAM_LABEL, team)
        if attributes.operation == CREATE:
            creator = attributes.user.name if attributes.user else ""
        else:
            creator = ((attributes.old_object.get("metadata") or {}).get("annotations")
                       or {}).get(CREATED_BY, "")
        if creator and (meta.get("annotations") or {}).get(CREATED_BY) != creator:
            _put(meta, "annotations", CREATED_BY, creator)

    def validate(self, attributes) -> None:
        if not self._applies(attributes):
            return
        meta = attributes.object.get("metadata") or {}
        team = (meta.get("labels") or {}).get(TEAM_LABEL)
        name = attributes.name or meta.get("name", "")
        if not team:
            raise new_invalid("Deployment", "apps", name, [FieldError.required(
                TEAM_PATH, "every Deployment names the team that owns it")])
        if self.settings.teams and team not in self.settings.teams:
            raise new_invalid("Deployment", "apps", name, [FieldError.not_supported(
                TEAM_PATH, team, self.settings.teams)])
        if attributes.operation == UPDATE:
            old = ((attributes.old_object.get("metadata") or {}).get("labels") or {}).get(
                TEAM_LABEL)
            groups = attributes.user.groups if attributes.user else ()
            if old and old != team and not set(groups) & set(self.settings.admin_groups):
                raise forbidden(attributes, f"only members of "
                                f"{', '.join(self.settings.admin_groups)} may move a "
                                f"Deployment to another team ({old} to {team})")
        if attributes.operation == CREATE and not attributes.dry_run:
            log.info("deployment %s/%s admitted for team %s, created by %s",
                     attributes.namespace, name, team,
                     attributes.user.name if attributes.user else "?")

