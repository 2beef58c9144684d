"""Pod Security Standards: levels, policy versions and the namespace labels that choose them.

Upstream's ``k8s.io/pod-security-admission/api``: a namespace's
``pod-security.kubernetes.io/{enforce,audit,warn}`` labels name a level (``privileged``,
``baseline``, ``restricted``) and the ``-version`` labels a policy version (``latest`` or
``v1.x``); what a label leaves unset comes from the configured defaults.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kapiserver.apimachinery.field_errors import FieldError, FieldPath

PRIVILEGED, BASELINE, RESTRICTED = "privileged", "baseline", "restricted"
LEVELS = (PRIVILEGED, BASELINE, RESTRICTED)
LATEST = "latest"

LABEL_PREFIX = "pod-security.kubernetes.io/"
ENFORCE_LEVEL_LABEL = LABEL_PREFIX + "enforce"
ENFORCE_VERSION_LABEL = LABEL_PREFIX + "enforce-version"
AUDIT_LEVEL_LABEL = LABEL_PREFIX + "audit"
AUDIT_VERSION_LABEL = LABEL_PREFIX + "audit-version"
WARN_LEVEL_LABEL = LABEL_PREFIX + "warn"
WARN_VERSION_LABEL = LABEL_PREFIX + "warn-version"

#: Audit annotations are these keys under ``LABEL_PREFIX`` (``api.AuditAnnotationPrefix``).
EXEMPTION_REASON_ANNOTATION = "exempt"
AUDIT_VIOLATIONS_ANNOTATION = "audit-violations"
ENFORCED_POLICY_ANNOTATION = "enforce-policy"

_LEVEL_ERROR = f"must be one of {', '.join(LEVELS)}"
_VERSION_ERROR = 'must be "latest" or "v1.x"'
_VERSION_RE = re.compile(r"^v1\.([0-9]|[1-9][0-9]*)$")
_LABELS = FieldPath("metadata", "labels")


@dataclass(frozen=True, order=False)
class Version:
    """A policy version: ``v<major>.<minor>``, or ``latest`` (newer than any other)."""

    major: int = 0
    minor: int = 0
    latest: bool = False

    def __str__(self) -> str:
        return LATEST if self.latest else f"v{self.major}.{self.minor}"

    def older(self, other: Version) -> bool:
        """``Version.Older``: ``latest`` is never older, and every other is older than it."""
        if self.latest:
            return False
        if other.latest:
            return True
        return (self.major, self.minor) < (other.major, other.minor)

    def next_minor(self) -> Version:
        return self if self.latest else Version(self.major, self.minor + 1)


LATEST_VERSION = Version(latest=True)


def major_minor(major: int, minor: int) -> Version:
    return Version(major, minor)


class PolicyValueError(ValueError):
    """A level or version label value upstream's parsers refuse (``str()``: their text)."""


def parse_level(value: str) -> str:
    """``ParseLevel``: one of ``LEVELS``; raises ``PolicyValueError`` otherwise."""
    if value in LEVELS:
        return value
    raise PolicyValueError(_LEVEL_ERROR)


def parse_version(value: str) -> Version:
    """``ParseVersion``: ``latest`` or ``v1.x``; raises ``PolicyValueError`` otherwise."""
    if value == LATEST:
        return LATEST_VERSION
    match = _VERSION_RE.match(value)
    if match is None:
        raise PolicyValueError(_VERSION_ERROR)
    return Version(1, int(match.group(1)))


def compare_levels(a: str, b: str) -> int:
    """``CompareLevels``: 1 when ``a`` is stricter than ``b``, -1 when less strict, else 0."""
    if a == b:
        return 0
    if a == PRIVILEGED:
        return -1
    if a == RESTRICTED:
        return 1
    if b == PRIVILEGED:
        return 1
    if b == RESTRICTED:
        return -1
    return 0


@dataclass(frozen=True)
class LevelVersion:
    """A level at a policy version, printed ``restricted:latest``."""

    level: str
    version: Version = LATEST_VERSION

    def __str__(self) -> str:
        return f"{self.level}:{self.version}"

    def equivalent(self, other: LevelVersion) -> bool:
        return (self.level == PRIVILEGED and other.level == PRIVILEGED) or self == other


@dataclass(frozen=True)
class Policy:
    """The level and version a namespace enforces, audits and warns at."""

    enforce: LevelVersion = LevelVersion(PRIVILEGED)
    audit: LevelVersion = LevelVersion(PRIVILEGED)
    warn: LevelVersion = LevelVersion(PRIVILEGED)

    def fully_privileged(self) -> bool:
        return PRIVILEGED == self.enforce.level == self.audit.level == self.warn.level

    def equivalent(self, other: Policy) -> bool:
        return (self.enforce.equivalent(other.enforce) and self.audit.equivalent(other.audit)
                and self.warn.equivalent(other.warn))


def policy_to_evaluate(labels: dict | None, defaults: Policy) -> tuple[Policy, list[FieldError]]:
    """``PolicyToEvaluate``: the namespace's policy from its labels over ``defaults``, and
    the label errors. A bad enforce value means ``restricted``/``latest`` (fail closed); a
    bad audit or warn level means ``privileged`` (fail open). Warn follows an explicit,
    stricter enforce level unless warn is labelled itself."""
    labels = labels if isinstance(labels, dict) else {}
    if not labels:
        return defaults, []
    errs: list[FieldError] = []
    enforce, audit, warn = defaults.enforce, defaults.audit, defaults.warn
    has_enforce_level = has_warn_level = has_warn_version = False

    def level(label: str, fallback: str) -> str:
        try:
            return parse_level(labels[label])
        except PolicyValueError as err:
            errs.append(FieldError.invalid(_LABELS.key(label), labels[label], str(err)))
            return fallback

    def version(label: str) -> Version:
        try:
            return parse_version(labels[label])
        except PolicyValueError as err:
            errs.append(FieldError.invalid(_LABELS.key(label), labels[label], str(err)))
            return LATEST_VERSION

    if ENFORCE_LEVEL_LABEL in labels:
        count = len(errs)
        enforce = LevelVersion(level(ENFORCE_LEVEL_LABEL, RESTRICTED), enforce.version)
        has_enforce_level = len(errs) == count
    if ENFORCE_VERSION_LABEL in labels:
        enforce = LevelVersion(enforce.level, version(ENFORCE_VERSION_LABEL))
    if AUDIT_LEVEL_LABEL in labels:
        audit = LevelVersion(level(AUDIT_LEVEL_LABEL, PRIVILEGED), audit.version)
    if AUDIT_VERSION_LABEL in labels:
        audit = LevelVersion(audit.level, version(AUDIT_VERSION_LABEL))
    if WARN_LEVEL_LABEL in labels:
        has_warn_level = True
        warn = LevelVersion(level(WARN_LEVEL_LABEL, PRIVILEGED), warn.version)
    if WARN_VERSION_LABEL in labels:
        has_warn_version = True
        warn = LevelVersion(warn.level, version(WARN_VERSION_LABEL))
    if not has_warn_level and has_enforce_level and \
            compare_levels(enforce.level, warn.level) > 0:
        warn = LevelVersion(enforce.level,
                            warn.version if has_warn_version else enforce.version)
    return Policy(enforce, audit, warn), errs
