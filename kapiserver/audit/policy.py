"""The audit policy (``audit.k8s.io/v1`` ``Policy``): which requests are audited, how much.

Read from ``--audit-policy-file`` (YAML or JSON) as upstream's ``LoadPolicyFromBytes``:
a strict decode, or a lenient one with a warning when the file has unknown fields; only
``audit.k8s.io/v1``; validated as ``ValidatePolicy``; at least one rule. The first rule
that matches a request gives its level (``None`` when none does), the stages it omits
(the rule's and the policy's) and whether managed fields are left out of the objects
logged (the rule's ``omitManagedFields``, else the policy's).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass

import yaml

from ..apimachinery.field_errors import FieldError, FieldPath, GoValue, go_string_slice
from ..apimachinery.validation import name_is_dns_subdomain

log = logging.getLogger(__name__)

NONE, METADATA, REQUEST, REQUEST_RESPONSE = "None", "Metadata", "Request", "RequestResponse"
LEVELS = (NONE, METADATA, REQUEST, REQUEST_RESPONSE)
#: A level's rank: a level includes what every lower one logs.
RANK = {level: rank for rank, level in enumerate(LEVELS)}
REQUEST_RECEIVED, RESPONSE_STARTED = "RequestReceived", "ResponseStarted"
RESPONSE_COMPLETE, PANIC = "ResponseComplete", "Panic"
STAGES = (REQUEST_RECEIVED, RESPONSE_STARTED, RESPONSE_COMPLETE, PANIC)
API_VERSION = "audit.k8s.io/v1"


class PolicyError(ValueError):
    """The policy file cannot be used; the message is upstream's wording."""


@dataclass(frozen=True)
class RequestAuditConfig:
    """What the policy says of one request (``audit.RequestAuditConfig``)."""

    level: str
    omit_stages: frozenset = frozenset()
    omit_managed_fields: bool = False


@dataclass(frozen=True)
class GroupResources:
    group: str
    resources: tuple[str, ...]
    resource_names: tuple[str, ...]


@dataclass(frozen=True)
class PolicyRule:
    level: str
    users: tuple[str, ...]
    user_groups: tuple[str, ...]
    verbs: tuple[str, ...]
    resources: tuple[GroupResources, ...]
    namespaces: tuple[str, ...]
    non_resource_urls: tuple[str, ...]
    omit_stages: frozenset
    omit_managed_fields: bool | None

    def matches(self, attributes) -> bool:
        """``ruleMatches``."""
        user = attributes.user
        if self.users and (user is None or user.name not in self.users):
            return False
        if self.user_groups and (user is None or
                                 not any(g in self.user_groups for g in user.groups)):
            return False
        if self.verbs and attributes.verb not in self.verbs:
            return False
        if self.namespaces or self.resources:
            return self._matches_resource(attributes)
        if self.non_resource_urls:
            return not attributes.resource_request and any(
                _path_matches(attributes.path, spec) for spec in self.non_resource_urls)
        return True

    def _matches_resource(self, attributes) -> bool:
        if not attributes.resource_request:
            return False
        if self.namespaces and attributes.namespace not in self.namespaces:
            return False  # cluster-scoped resources have the namespace ""
        if not self.resources:
            return True
        resource, subresource = attributes.resource, attributes.subresource
        combined = f"{resource}/{subresource}" if subresource else resource
        for group in self.resources:
            if group.group != attributes.api_group:
                continue
            if not group.resources:
                return True
            if group.resource_names and attributes.name not in group.resource_names:
                continue
            for spec in group.resources:
                if spec in (combined, "*"):
                    return True
                if subresource and spec.startswith("*/") and subresource == spec[2:]:
                    return True
                if spec.endswith("/*") and resource == spec[:-2]:
                    return True
        return False


def _path_matches(path: str, spec: str) -> bool:
    if spec in ("*", path):
        return True
    return spec.endswith("*") and path.startswith(spec.rstrip("*"))


class Policy:
    """A validated audit policy; ``evaluate(attributes)`` applies it to one request."""

    def __init__(self, rules: list[PolicyRule], omit_stages: frozenset = frozenset(),
                 omit_managed_fields: bool = False):
        self.rules = rules
        self.omit_stages = omit_stages
        self.omit_managed_fields = omit_managed_fields
        # NewPolicyRuleEvaluator: each rule omits its stages and the policy's.
        self._configs = [RequestAuditConfig(
            rule.level, rule.omit_stages | omit_stages,
            omit_managed_fields if rule.omit_managed_fields is None
            else rule.omit_managed_fields) for rule in rules]
        self._default = RequestAuditConfig(NONE, omit_stages, omit_managed_fields)

    def evaluate(self, attributes) -> RequestAuditConfig:
        """The first matching rule's configuration, or level None."""
        for rule, config in zip(self.rules, self._configs):
            if rule.matches(attributes):
                return config
        return self._default

    @classmethod
    def everything(cls, level: str = METADATA, omit_stages=()) -> "Policy":
        """One rule auditing every request at ``level``."""
        return cls([PolicyRule(level, (), (), (), (), (), (), frozenset(omit_stages), None)])

    @classmethod
    def load(cls, path: str) -> "Policy":
        """Read, decode and validate the policy file at ``path`` (``LoadPolicyFromFile``)."""
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as err:
            raise PolicyError(f"failed to read file path {path!r}: {err.strerror}") from None
        try:
            return cls.from_bytes(data)
        except PolicyError as err:
            raise PolicyError(f"{err}: from file {path}") from None

    @classmethod
    def from_bytes(cls, data: bytes) -> "Policy":
        try:
            document = yaml.safe_load(data) if data.strip()[:1] != b"{" else json.loads(data)
        except (yaml.YAMLError, ValueError) as err:
            raise PolicyError(f"failed decoding: {err}") from None
        if not isinstance(document, dict):
            raise PolicyError("failed decoding: Object 'Kind' is missing in policy")
        if document.get("kind") != "Policy":
            raise PolicyError(f"failed decoding: no kind {document.get('kind')!r} is "
                              f"registered for version {document.get('apiVersion')!r}"
                              if document.get("kind") else
                              "failed decoding: Object 'Kind' is missing in policy")
        if document.get("apiVersion") != API_VERSION:
            raise PolicyError(f"unknown group version field {document.get('apiVersion')!r} "
                              "in policy")
        unknown = _unknown_fields(document)
        if unknown:
            # Upstream falls back to a lenient decoding, with a warning.
            log.warning("Audit policy contains errors, falling back to lenient decoding: "
                        "strict decoding error: %s", ", ".join(unknown))
        return cls.from_dict(document)

    @classmethod
    def from_dict(cls, document: dict) -> "Policy":
        errors: list[FieldError] = []
        omit = _omit_stages(document.get("omitStages"), FieldPath("omitStages"), errors)
        rules = []
        for index, raw in enumerate(document.get("rules") or []):
            path = FieldPath("rules").index(index)
            if not isinstance(raw, dict):
                errors.append(FieldError.invalid(path, raw, "must be an object"))
                continue
            rules.append(_rule(raw, path, errors))
        if errors:
            text = str(errors[0]) if len(errors) == 1 else \
                "[" + ", ".join(str(e) for e in errors) + "]"
            raise PolicyError(text)
        if not rules:
            raise PolicyError("loaded illegal policy with 0 rules")
        return cls(rules, omit, bool(document.get("omitManagedFields", False)))


_POLICY_FIELDS = {"kind", "apiVersion", "metadata", "rules", "omitStages", "omitManagedFields"}
_RULE_FIELDS = {"level", "users", "userGroups", "verbs", "resources", "namespaces",
                "nonResourceURLs", "omitStages", "omitManagedFields"}
_GROUP_FIELDS = {"group", "resources", "resourceNames"}


def _unknown_fields(document: dict) -> list[str]:
    unknown = [f'unknown field "{k}"' for k in document if k not in _POLICY_FIELDS]
    for i, rule in enumerate(document.get("rules") or []):
        if isinstance(rule, dict):
            unknown += [f'unknown field "rules[{i}].{k}"' for k in rule if k not in _RULE_FIELDS]
            for j, group in enumerate(rule.get("resources") or []):
                if isinstance(group, dict):
                    unknown += [f'unknown field "rules[{i}].resources[{j}].{k}"'
                                for k in group if k not in _GROUP_FIELDS]
    return unknown


def _strings(value) -> tuple[str, ...]:
    return tuple(str(v) for v in value or ())


def _omit_stages(value, path: FieldPath, errors: list) -> frozenset:
    stages = _strings(value)
    for index, stage in enumerate(stages):
        if stage not in STAGES:
            errors.append(FieldError.invalid(path.index(index), stage,
                                             "allowed stages are " + ",".join(STAGES)))
    return frozenset(stages)


def _rule(raw: dict, path: FieldPath, errors: list) -> PolicyRule:
    """``validatePolicyRule``."""
    level = raw.get("level") or ""
    if level == "":
        errors.append(FieldError.required(path.child("level"), ""))
    elif level not in LEVELS:
        errors.append(FieldError.not_supported(path.child("level"), level, list(LEVELS)))
    urls = _strings(raw.get("nonResourceURLs"))
    for index, url in enumerate(urls):
        if url == "*":
            continue
        if not url.startswith("/"):
            errors.append(FieldError.invalid(path.child("nonResourceURLs").index(index), url,
                                             "non-resource URL rules must begin with a '/' "
                                             "character"))
        if url and "*" in url[:-1]:
            errors.append(FieldError.invalid(path.child("nonResourceURLs").index(index), url,
                                             "non-resource URL wildcards '*' must be the "
                                             "final character of the rule"))
    groups = []
    for group in raw.get("resources") or []:
        group = group if isinstance(group, dict) else {}
        name = str(group.get("group") or "")
        if name:
            messages = name_is_dns_subdomain(name)
            if messages:
                errors.append(FieldError.invalid(path.child("resources").child("group"), name,
                                                 ",".join(messages)))
        resources, names = _strings(group.get("resources")), _strings(group.get("resourceNames"))
        if names and not resources:
            errors.append(FieldError.invalid(path.child("resources").child("resourceNames"),
                                             GoValue(go_string_slice(names)),
                                             "using resourceNames requires at least one "
                                             "resource"))
        groups.append(GroupResources(name, resources, names))
    omit = _omit_stages(raw.get("omitStages"), path.child("omitStages"), errors)
    namespaces = _strings(raw.get("namespaces"))
    if urls and (groups or namespaces):
        errors.append(FieldError.invalid(path.child("nonResourceURLs"),
                                         GoValue(go_string_slice(urls)),
                                         "rules cannot apply to both regular resources and "
                                         "non-resource URLs"))
    managed = raw.get("omitManagedFields")
    return PolicyRule(level, _strings(raw.get("users")), _strings(raw.get("userGroups")),
                      _strings(raw.get("verbs")), tuple(groups), namespaces, urls, omit,
                      None if managed is None else bool(managed))
