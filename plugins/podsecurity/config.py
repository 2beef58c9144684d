"""PodSecurityConfiguration: the defaults and exemptions of the PodSecurity plugin.

Given in ``--admission-control-config-file`` (``pod-security.admission.config.k8s.io``
``v1``, ``v1beta1`` or ``v1alpha1``, which share their fields); without one every mode is
``privileged:latest`` and nothing is exempt, ``kube-system`` included (upstream's
``LoadFromData(nil)``). Validated as ``ValidatePodSecurityConfiguration`` validates it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kapiserver.apimachinery.field_errors import FieldError, FieldPath
from kapiserver.apimachinery.validation import name_is_dns_label, name_is_dns_subdomain
from kapiserver.errors import ConfigError

from .policy import LATEST, PRIVILEGED, LevelVersion, Policy, PolicyValueError, parse_level
from .policy import parse_version

GROUP = "pod-security.admission.config.k8s.io"
API_VERSIONS = tuple(f"{GROUP}/{v}" for v in ("v1", "v1beta1", "v1alpha1"))
KIND = "PodSecurityConfiguration"
_MODES = ("enforce", "warn", "audit")


@dataclass
class PodSecurityConfiguration:
    defaults: Policy = field(default_factory=Policy)
    usernames: tuple = ()
    namespaces: tuple = ()
    runtime_classes: tuple = ()


def _strings(value, path: str, problems: list) -> list:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.append(f"{path}: must be a list of strings")
        return []
    return value


def _validate_exemptions(name: str, values: list, check) -> list[FieldError]:
    errs, seen = [], set()
    for index, value in enumerate(values):
        path = FieldPath("exemptions", name).index(index)
        problems = check(value)
        if problems:
            errs.append(FieldError.invalid(path, value, ", ".join(problems)))
        elif value in seen:
            errs.append(FieldError.duplicate(path, value))
        else:
            seen.add(value)
    return errs


def parse_configuration(document: dict | None) -> PodSecurityConfiguration:
    """The configuration in ``document`` (``None``: the default one). Raises
    ``ConfigError`` listing every problem."""
    if document is None:
        return PodSecurityConfiguration()
    prefix = "--admission-control-config-file: PodSecurity"
    if document.get("kind") != KIND or document.get("apiVersion") not in API_VERSIONS:
        raise ConfigError(f"{prefix}: expected a {KIND} of one of {', '.join(API_VERSIONS)}")
    problems: list[str] = []
    defaults = document.get("defaults") or {}
    exemptions = document.get("exemptions") or {}
    if not isinstance(defaults, dict) or not isinstance(exemptions, dict):
        raise ConfigError(f"{prefix}: defaults and exemptions must be objects")
    # SetDefaults_PodSecurityDefaults: an unset level is privileged, an unset version latest.
    values = {}
    for mode in _MODES:
        for key, default in ((mode, PRIVILEGED), (f"{mode}-version", LATEST)):
            value = defaults.get(key)
            if value is None or value == "":
                value = default
            if not isinstance(value, str):
                problems.append(f"defaults.{key}: must be a string")
                value = default
            values[key] = value
    errs: list[FieldError] = []
    levels = {}
    for mode in _MODES:
        try:
            level = parse_level(values[mode])
        except PolicyValueError as err:
            errs.append(FieldError.invalid(FieldPath("defaults", mode), values[mode], str(err)))
            level = PRIVILEGED
        try:
            version = parse_version(values[f"{mode}-version"])
        except PolicyValueError as err:
            errs.append(FieldError.invalid(FieldPath("defaults", f"{mode}-version"),
                                           values[f"{mode}-version"], str(err)))
            version = parse_version(LATEST)
        levels[mode] = LevelVersion(level, version)
    namespaces = _strings(exemptions.get("namespaces"), "exemptions.namespaces", problems)
    runtime_classes = _strings(exemptions.get("runtimeClasses"), "exemptions.runtimeClasses",
                               problems)
    usernames = _strings(exemptions.get("usernames"), "exemptions.usernames", problems)
    errs += _validate_exemptions("namespaces", namespaces, name_is_dns_label)
    errs += _validate_exemptions("runtimeClasses", runtime_classes, name_is_dns_subdomain)
    errs += _validate_exemptions("usernames", usernames,
                                 lambda u: [] if u else ["username must not be empty"])
    problems += [str(err) for err in errs]
    if problems:
        raise ConfigError([f"{prefix}: {problem}" for problem in problems])
    return PodSecurityConfiguration(
        Policy(levels["enforce"], levels["audit"], levels["warn"]),
        tuple(usernames), tuple(namespaces), tuple(runtime_classes))
