"""``ValidateJob``, ``ValidateJobSpec`` and the Job status rules of
``pkg/apis/batch/validation`` (kube-apiserver 1.32), worded as upstream words them.

``validate_job_spec_fields`` is the part a CronJob's job template shares
(``validateJobSpec``). The pod template is checked by ``kapiserver.apis.core``.
Upstream's ``ValidateImmutableField`` of a whole pod template prints the template with
``%#v`` (hundreds of Go fields and pointer addresses): that one value is shortened to
``core.PodTemplateSpec{...}`` here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone

from kapiserver.apimachinery.field_errors import OMIT, FieldError, FieldPath, GoValue, go_quote
from kapiserver.apimachinery.gosyntax import (go_pointer, go_slice, go_str, go_string_map,
                                              go_struct)
from kapiserver.apimachinery.labels import SelectorError, selector_from_label_selector
from kapiserver.apimachinery.selector_validation import (LabelSelectorValidationOptions,
                                                         go_label_selector,
                                                         label_selector_has_invalid_label_value,
                                                         validate_label_selector)
from kapiserver.apimachinery.validation import (FIELD_IMMUTABLE_ERROR_MSG, go_time,
                                                is_dns1123_label, is_dns1123_subdomain,
                                                is_qualified_name, regex_error,
                                                validate_nonnegative_field)

from . import podtemplates
from .cron import atoi

SPEC = FieldPath("spec")
STATUS = FieldPath("status")
#: batch's label keys: ``LegacyJobNameLabel``/``JobNameLabel``,
#: ``LegacyControllerUidLabel``/``ControllerUidLabel``.
LEGACY_JOB_NAME_LABEL = "job-name"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
LEGACY_CONTROLLER_UID_LABEL = "controller-uid"
CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
NON_INDEXED, INDEXED = "NonIndexed", "Indexed"
MAX_PARALLELISM_FOR_INDEXED_JOB = 100_000
MAX_FAILED_INDEXES_FOR_INDEXED_JOB = 100_000
COMPLETIONS_SOFT_LIMIT = 100_000
PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS = 10_000
MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS = 10_000
MAX_POD_FAILURE_POLICY_RULES = 20
MAX_ON_EXIT_CODES_VALUES = 255
MAX_ON_POD_CONDITIONS_PATTERNS = 20
MAX_MANAGED_BY_LENGTH = 63
MAX_SUCCEEDED_INDEXES_LENGTH = 64 * 1024
MAX_SUCCESS_POLICY_RULES = 20
#: The sets upstream lists (``sets.List``: sorted).
POD_FAILURE_POLICY_ACTIONS = ("Count", "FailIndex", "FailJob", "Ignore")
ON_EXIT_CODES_OPERATORS = ("In", "NotIn")
CONDITION_STATUSES = ("False", "True", "Unknown")
POD_REPLACEMENT_POLICIES = ("Failed", "TerminatingOrFailed")
HTTP_PATH_FMT = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+"
_HTTP_PATH = re.compile(f"^{HTTP_PATH_FMT}$")


def as_dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def as_list(value) -> list:
    return value if isinstance(value, list) else []


def as_int(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def opt_int(value):
    """A ``*int32``: the number, or None when unset."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def as_str(value) -> str:
    return value if isinstance(value, str) else ""


def _go_list(values) -> str:
    """A ``[]string`` as ``%q`` prints it in a detail: ``["a" "b"]``."""
    return "[" + " ".join(go_quote(v) for v in values) + "]"


@dataclass(frozen=True)
class JobValidationOptions:
    """``JobValidationOptions``."""

    pod: object = None
    allow_invalid_label_value_in_selector: bool = False
    allow_mutable_scheduling_directives: bool = False
    allow_elastic_indexed_jobs: bool = True
    require_prefixed_labels: bool = True


# -- small validators ---------------------------------------------------------------------------

def is_domain_prefixed_path(path: FieldPath, value: str) -> list[FieldError]:
    """``IsDomainPrefixedPath``: ``acme.io/foo``."""
    if not value:
        return [FieldError.required(path, "")]
    host, slash, rest = value.partition("/")
    if not slash or not host or not rest:
        return [FieldError.invalid(path, value,
                                   'must be a domain-prefixed path (such as "acme.io/foo")')]
    errs = [FieldError.invalid(path, host, msg) for msg in is_dns1123_subdomain(host)]
    if not _HTTP_PATH.fullmatch(rest):
        errs.append(FieldError.invalid(path, rest, regex_error("Invalid path", HTTP_PATH_FMT)))
    return errs


def validate_has_label(meta: dict, path: FieldPath, key: str, expected: str) -> list[FieldError]:
    """core's ``ValidateHasLabel``."""
    labels = as_dict(meta.get("labels"))
    if key not in labels:
        return [FieldError.required(path.child("labels").key(key), expected)]
    if labels[key] != expected:
        return [FieldError.invalid(path.child("labels").key(key),
                                   GoValue(go_string_map(labels)), f"must be '{expected}'")]
    return []


def _selects(selector, labels: dict) -> bool | None:
    """Whether ``metav1.LabelSelectorAsSelector(selector)`` matches ``labels``; None when
    the selector does not convert (upstream then skips the check)."""
    try:
        return selector_from_label_selector(
            selector if isinstance(selector, dict) else None).matches(labels)
    except SelectorError:
        return None


# -- indexes --------------------------------------------------------------------------------------

def _parse_index_interval(text: str, completions: int) -> tuple[int, int]:
    """``parseIndexInterval``; ``ValueError`` with upstream's message."""
    limits = text.split("-")
    if len(limits) > 2:
        raise ValueError(f"the fragment {go_quote(text)} violates the requirement that an "
                         "index interval can have at most two parts separated by '-'")
    parsed = []
    for limit in limits:
        try:
            value = atoi(limit)
        except ValueError:
            raise ValueError(f"cannot convert string to integer for index: "
                             f"{go_quote(limit)}") from None
        if value >= completions:
            raise ValueError(f"too large index: {go_quote(limit)}")
        parsed.append(value)
    if len(parsed) == 2:
        if parsed[0] >= parsed[1]:
            raise ValueError(f"non-increasing order, previous: {parsed[0]}, "
                             f"current: {parsed[1]}")
        return parsed[0], parsed[1]
    return parsed[0], parsed[0]


def validate_indexes_format(text: str, completions: int) -> int:
    """``validateIndexesFormat``: how many indexes ``1,3-5`` names; ``ValueError`` when it
    does not parse."""
    if not text:
        return 0
    last, total = None, 0
    for interval in text.split(","):
        x, y = _parse_index_interval(interval, completions)
        if last is not None and last >= x:
            raise ValueError(f"non-increasing order, previous: {last}, current: {x}")
        total += y - x + 1
        last = y
    return total


def _failed_overlaps_completed(completed: str, failed: str, completions: int) -> str:
    """``validateFailedIndexesNotOverlapCompleted``: the error text, or ""."""
    if not completed or not failed:
        return ""

    def intervals(text):
        for interval in text.split(","):
            try:
                yield _parse_index_interval(interval, completions)
            except ValueError:
                continue  # reported when validating the format

    completed_list, failed_list = list(intervals(completed)), list(intervals(failed))
    ci = fi = 0
    while ci < len(completed_list) and fi < len(failed_list):
        (cx, cy), (fx, fy) = completed_list[ci], failed_list[fi]
        if cx <= fy and fx <= cy:
            return f"failedIndexes and completedIndexes overlap at index: {max(cx, fx)}"
        if cx <= fx:
            ci += 1
        else:
            fi += 1
    return ""


# -- the pod failure and success policies --------------------------------------------------------

def _validate_on_exit_codes(requirement: dict, path: FieldPath,
                            container_names: set[str]) -> list[FieldError]:
    errs = []
    operator = as_str(requirement.get("operator"))
    if not operator:
        errs.append(FieldError.required(path.child("operator"),
                                        f"valid values: {_go_list(ON_EXIT_CODES_OPERATORS)}"))
    elif operator not in ON_EXIT_CODES_OPERATORS:
        errs.append(FieldError.not_supported(path.child("operator"), operator,
                                             ON_EXIT_CODES_OPERATORS))
    container = requirement.get("containerName")
    if isinstance(container, str) and container not in container_names:
        errs.append(FieldError.invalid(path.child("containerName"), container,
                                       "must be one of the container or initContainer names "
                                       "in the pod template"))
    values_path = path.child("values")
    values = [as_int(v) for v in as_list(requirement.get("values"))]
    shown = GoValue(go_slice("int32", None if requirement.get("values") is None
                             else (str(v) for v in values)))
    if not values:
        errs.append(FieldError.invalid(values_path, shown, "at least one value is required"))
    elif len(values) > MAX_ON_EXIT_CODES_VALUES:
        errs.append(FieldError.too_many(values_path, len(values), MAX_ON_EXIT_CODES_VALUES))
    ordered, seen = True, set()
    for index, value in enumerate(values):
        if operator == "In" and value == 0:
            errs.append(FieldError.invalid(values_path.index(index), value,
                                           "must not be 0 for the In operator"))
        if value in seen:
            errs.append(FieldError.duplicate(values_path.index(index), value))
        else:
            seen.add(value)
        if index > 0 and values[index - 1] > value:
            ordered = False
    if not ordered:
        errs.append(FieldError.invalid(values_path, shown, "must be ordered"))
    return errs


def _validate_on_pod_conditions(patterns: list, path: FieldPath) -> list[FieldError]:
    errs = []
    if len(patterns) > MAX_ON_POD_CONDITIONS_PATTERNS:
        errs.append(FieldError.too_many(path, len(patterns), MAX_ON_POD_CONDITIONS_PATTERNS))
    for index, pattern in enumerate(as_dict(p) for p in patterns):
        pattern_path = path.index(index)
        kind = as_str(pattern.get("type"))
        errs += [FieldError.invalid(pattern_path.child("type"), kind, msg)
                 for msg in is_qualified_name(kind)]
        status = as_str(pattern.get("status"))
        if not status:
            errs.append(FieldError.required(pattern_path.child("status"),
                                            f"valid values: {_go_list(CONDITION_STATUSES)}"))
        elif status not in CONDITION_STATUSES:
            errs.append(FieldError.not_supported(pattern_path.child("status"), status,
                                                 CONDITION_STATUSES))
    return errs


def _validate_pod_failure_policy_rule(spec: dict, rule: dict, path: FieldPath,
                                      container_names: set[str]) -> list[FieldError]:
    errs = []
    action = as_str(rule.get("action"))
    if not action:
        errs.append(FieldError.required(path.child("action"),
                                        f"valid values: {_go_list(POD_FAILURE_POLICY_ACTIONS)}"))
    elif action == "FailIndex":
        if spec.get("backoffLimitPerIndex") is None:
            errs.append(FieldError.invalid(path.child("action"), action,
                                           "requires the backoffLimitPerIndex to be set"))
    elif action not in POD_FAILURE_POLICY_ACTIONS:
        errs.append(FieldError.not_supported(path.child("action"), action,
                                             POD_FAILURE_POLICY_ACTIONS))
    on_exit_codes = rule.get("onExitCodes")
    on_conditions = as_list(rule.get("onPodConditions"))
    if isinstance(on_exit_codes, dict):
        errs += _validate_on_exit_codes(on_exit_codes, path.child("onExitCodes"),
                                        container_names)
    if on_conditions:
        errs += _validate_on_pod_conditions(on_conditions, path.child("onPodConditions"))
    if isinstance(on_exit_codes, dict) and on_conditions:
        errs.append(FieldError.invalid(path, OMIT, "specifying both OnExitCodes and "
                                                   "OnPodConditions is not supported"))
    if not isinstance(on_exit_codes, dict) and not on_conditions:
        errs.append(FieldError.invalid(path, OMIT, "specifying one of OnExitCodes and "
                                                   "OnPodConditions is required"))
    return errs


def validate_pod_failure_policy(spec: dict, path: FieldPath) -> list[FieldError]:
    """``validatePodFailurePolicy``."""
    errs = []
    rules = as_list(as_dict(spec.get("podFailurePolicy")).get("rules"))
    rules_path = path.child("rules")
    if len(rules) > MAX_POD_FAILURE_POLICY_RULES:
        errs.append(FieldError.too_many(rules_path, len(rules), MAX_POD_FAILURE_POLICY_RULES))
    pod_spec = as_dict(as_dict(spec.get("template")).get("spec"))
    names = {as_str(as_dict(c).get("name")) for key in ("containers", "initContainers")
             for c in as_list(pod_spec.get(key))}
    for index, rule in enumerate(rules):
        errs += _validate_pod_failure_policy_rule(spec, as_dict(rule), rules_path.index(index),
                                                  names)
    return errs


def go_pod_failure_policy(policy: dict) -> GoValue:
    """``%#v`` of a ``batch.PodFailurePolicy``."""
    rules = policy.get("rules")

    def rule_text(rule: dict) -> str:
        patterns = rule.get("onPodConditions")
        return go_struct("batch.PodFailurePolicyRule", (
            ("Action", go_str(rule.get("action"))),
            ("OnExitCodes", go_pointer("batch.PodFailurePolicyOnExitCodesRequirement",
                                       rule.get("onExitCodes") is not None)),
            ("OnPodConditions", go_slice(
                "batch.PodFailurePolicyOnPodConditionsPattern",
                None if not isinstance(patterns, list) else [
                    go_struct("batch.PodFailurePolicyOnPodConditionsPattern", (
                        ("Type", go_str(as_dict(p).get("type"))),
                        ("Status", go_str(as_dict(p).get("status")))))
                    for p in patterns]))))

    return GoValue(go_struct("batch.PodFailurePolicy", (("Rules", go_slice(
        "batch.PodFailurePolicyRule",
        None if not isinstance(rules, list) else [rule_text(as_dict(r)) for r in rules])),)))


def go_success_policy(policy: dict) -> GoValue:
    """``%#v`` of a ``batch.SuccessPolicy``."""
    rules = policy.get("rules")
    return GoValue(go_struct("batch.SuccessPolicy", (("Rules", go_slice(
        "batch.SuccessPolicyRule",
        None if not isinstance(rules, list) else [
            go_struct("batch.SuccessPolicyRule", (
                ("SucceededIndexes",
                 go_pointer("string", as_dict(r).get("succeededIndexes") is not None)),
                ("SucceededCount",
                 go_pointer("int32", as_dict(r).get("succeededCount") is not None))))
            for r in rules])),)))


def _validate_success_policy_rule(spec: dict, rule: dict, path: FieldPath) -> list[FieldError]:
    errs = []
    indexes, count = rule.get("succeededIndexes"), opt_int(rule.get("succeededCount"))
    if count is None and indexes is None:
        errs.append(FieldError.required(path, "at least one of succeededCount or "
                                              "succeededIndexes must be specified"))
    completions = opt_int(spec.get("completions"))
    total = 0
    if isinstance(indexes, str):
        indexes_path = path.child("succeededIndexes")
        if len(indexes) > MAX_SUCCEEDED_INDEXES_LENGTH:
            errs.append(FieldError.too_long(indexes_path, indexes, MAX_SUCCEEDED_INDEXES_LENGTH))
        if completions is not None:
            try:
                total = validate_indexes_format(indexes, completions)
            except ValueError as err:
                errs.append(FieldError.invalid(indexes_path, indexes,
                                               f"error parsing succeededIndexes: {err}"))
    if count is not None:
        count_path = path.child("succeededCount")
        errs += validate_nonnegative_field(count, count_path)
        if completions is not None and count > completions:
            errs.append(FieldError.invalid(count_path, count,
                                           f"must be less than or equal to {completions} (the "
                                           "number of specified completions)"))
        if isinstance(indexes, str) and count > total:
            errs.append(FieldError.invalid(count_path, count,
                                           f"must be less than or equal to {total} (the number "
                                           "of indexes in the specified succeededIndexes field)"))
    return errs


def validate_success_policy(spec: dict, path: FieldPath) -> list[FieldError]:
    """``validateSuccessPolicy``."""
    errs = []
    rules = as_list(as_dict(spec.get("successPolicy")).get("rules"))
    rules_path = path.child("rules")
    if not rules:
        errs.append(FieldError.required(rules_path, "at least one rules must be specified "
                                                    "when the successPolicy is specified"))
    if len(rules) > MAX_SUCCESS_POLICY_RULES:
        errs.append(FieldError.too_many(rules_path, len(rules), MAX_SUCCESS_POLICY_RULES))
    for index, rule in enumerate(rules):
        errs += _validate_success_policy_rule(spec, as_dict(rule), rules_path.index(index))
    return errs


# -- the spec --------------------------------------------------------------------------------------

def validate_job_spec_fields(spec: dict, path: FieldPath, pod_opts) -> list[FieldError]:
    """``validateJobSpec``: what a Job and a CronJob's job template share."""
    errs = []
    for name in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit",
                 "ttlSecondsAfterFinished", "backoffLimitPerIndex"):
        value = opt_int(spec.get(name))
        if value is not None:
            errs += validate_nonnegative_field(value, path.child(name))
    parallelism, completions = opt_int(spec.get("parallelism")), opt_int(spec.get("completions"))
    per_index, max_failed = (opt_int(spec.get("backoffLimitPerIndex")),
                             opt_int(spec.get("maxFailedIndexes")))
    if max_failed is not None:
        errs += validate_nonnegative_field(max_failed, path.child("maxFailedIndexes"))
        if per_index is None:
            errs.append(FieldError.required(path.child("backoffLimitPerIndex"),
                                            "when maxFailedIndexes is specified"))
    managed_by = spec.get("managedBy")
    if isinstance(managed_by, str):
        errs += is_domain_prefixed_path(path.child("managedBy"), managed_by)
        if len(managed_by) > MAX_MANAGED_BY_LENGTH:
            errs.append(FieldError.too_long(path.child("managedBy"), managed_by,
                                            MAX_MANAGED_BY_LENGTH))
    mode = spec.get("completionMode")
    if mode is not None:
        if mode not in (NON_INDEXED, INDEXED):
            errs.append(FieldError.not_supported(path.child("completionMode"), mode,
                                                 (NON_INDEXED, INDEXED)))
        if mode == INDEXED:
            if completions is None:
                errs.append(FieldError.required(path.child("completions"),
                                                f"when completion mode is {INDEXED}"))
            if parallelism is not None and parallelism > MAX_PARALLELISM_FOR_INDEXED_JOB:
                errs.append(FieldError.invalid(
                    path.child("parallelism"), parallelism,
                    f"must be less than or equal to {MAX_PARALLELISM_FOR_INDEXED_JOB} when "
                    f"completion mode is {INDEXED}"))
            if completions is not None and max_failed is not None and max_failed > completions:
                errs.append(FieldError.invalid(path.child("maxFailedIndexes"), max_failed,
                                               "must be less than or equal to completions"))
            if max_failed is not None and max_failed > MAX_FAILED_INDEXES_FOR_INDEXED_JOB:
                errs.append(FieldError.invalid(
                    path.child("maxFailedIndexes"), max_failed,
                    f"must be less than or equal to {MAX_FAILED_INDEXES_FOR_INDEXED_JOB}"))
            if (completions is not None and completions > COMPLETIONS_SOFT_LIMIT
                    and per_index is not None):
                high = (f"when completions are above {COMPLETIONS_SOFT_LIMIT} and used with "
                        "backoff limit per index")
                if max_failed is None:
                    errs.append(FieldError.required(
                        path.child("maxFailedIndexes"),
                        f"must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}"))
                if parallelism is not None and parallelism > PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS:
                    errs.append(FieldError.invalid(
                        path.child("parallelism"), parallelism,
                        f"must be less than or equal to {PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS} "
                        + high))
                if (max_failed is not None
                        and max_failed > MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS):
                    errs.append(FieldError.invalid(
                        path.child("maxFailedIndexes"), max_failed,
                        "must be less than or equal to "
                        f"{MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS} " + high))
    if mode is None or mode == NON_INDEXED:
        if per_index is not None:
            errs.append(FieldError.invalid(path.child("backoffLimitPerIndex"), per_index,
                                           "requires indexed completion mode"))
        if max_failed is not None:
            errs.append(FieldError.invalid(path.child("maxFailedIndexes"), max_failed,
                                           "requires indexed completion mode"))
    if spec.get("podFailurePolicy") is not None:
        errs += validate_pod_failure_policy(spec, path.child("podFailurePolicy"))
    success = spec.get("successPolicy")
    if success is not None:
        if (mode or NON_INDEXED) != INDEXED:
            errs.append(FieldError.invalid(path.child("successPolicy"),
                                           go_success_policy(as_dict(success)),
                                           "requires indexed completion mode"))
        else:
            errs += validate_success_policy(spec, path.child("successPolicy"))
    replacement = spec.get("podReplacementPolicy")
    if replacement is not None:
        if spec.get("podFailurePolicy") is not None:
            if replacement != "Failed":
                errs.append(FieldError.not_supported(path.child("podReplacementPolicy"),
                                                     replacement, ("Failed",)))
        elif replacement not in POD_REPLACEMENT_POLICIES:
            errs.append(FieldError.not_supported(path.child("podReplacementPolicy"),
                                                 replacement, POD_REPLACEMENT_POLICIES))
    template = as_dict(spec.get("template"))
    errs += podtemplates.validate_template(template, path.child("template"), pod_opts)
    restart = as_str(as_dict(template.get("spec")).get("restartPolicy"))
    restart_path = path.child("template", "spec", "restartPolicy")
    # The pod spec's defaulting turns an unset restartPolicy into Always.
    if restart in ("Always", ""):
        errs.append(FieldError.required(restart_path, 'valid values: "OnFailure", "Never"'))
    elif restart not in ("OnFailure", "Never"):
        errs.append(FieldError.not_supported(restart_path, restart, ("OnFailure", "Never")))
    elif spec.get("podFailurePolicy") is not None and restart != "Never":
        errs.append(FieldError.invalid(restart_path, restart,
                                       'only "Never" is supported when podFailurePolicy is '
                                       "specified"))
    return errs


def validate_job_spec(spec: dict, opts: JobValidationOptions,
                      path: FieldPath = SPEC) -> list[FieldError]:
    """``ValidateJobSpec``: the shared rules, a selector that matches the template."""
    errs = validate_job_spec_fields(spec, path, opts.pod)
    selector = spec.get("selector")
    if not isinstance(selector, dict):
        errs.append(FieldError.required(path.child("selector"), ""))
    else:
        errs += validate_label_selector(selector, LabelSelectorValidationOptions(
            allow_invalid_label_value=opts.allow_invalid_label_value_in_selector),
            path.child("selector"))
    labels = as_dict(as_dict(as_dict(spec.get("template")).get("metadata")).get("labels"))
    if _selects(selector, labels) is False:
        raw = as_dict(spec.get("template")).get("metadata")
        shown = as_dict(raw).get("labels")
        errs.append(FieldError.invalid(path.child("template", "metadata", "labels"),
                                       GoValue(go_string_map(shown if isinstance(shown, dict)
                                                             else None)),
                                       "`selector` does not match template `labels`"))
    return errs


def validate_generated_selector(job: dict, validate_batch_labels: bool) -> list[FieldError]:
    """``validateGeneratedSelector``: the generated selector and template labels are the
    job's own."""
    meta, spec = as_dict(job.get("metadata")), as_dict(job.get("spec"))
    if spec.get("manualSelector") is True or not isinstance(spec.get("selector"), dict):
        return []
    errs = []
    uid, name = as_str(meta.get("uid")), as_str(meta.get("name"))
    if not uid:
        errs.append(FieldError.required(FieldPath("metadata", "uid"), ""))
    template_meta = as_dict(as_dict(spec.get("template")).get("metadata"))
    template_path = FieldPath("spec", "template", "metadata")
    errs += validate_has_label(template_meta, template_path, LEGACY_CONTROLLER_UID_LABEL, uid)
    errs += validate_has_label(template_meta, template_path, LEGACY_JOB_NAME_LABEL, name)
    expected = {}
    if validate_batch_labels:
        errs += validate_has_label(template_meta, template_path, CONTROLLER_UID_LABEL, uid)
        errs += validate_has_label(template_meta, template_path, JOB_NAME_LABEL, name)
        expected = {CONTROLLER_UID_LABEL: uid, JOB_NAME_LABEL: name}
    expected.update({LEGACY_CONTROLLER_UID_LABEL: uid, LEGACY_JOB_NAME_LABEL: name})
    if _selects(spec["selector"], expected) is False:
        errs.append(FieldError.invalid(FieldPath("spec", "selector"),
                                       go_label_selector(spec["selector"]),
                                       "`selector` not auto-generated"))
    return errs


def validate_job(job: dict, opts: JobValidationOptions) -> list[FieldError]:
    """``ValidateJob`` beyond the object meta: the generated selector, the spec, and the
    pod hostnames an Indexed job will use."""
    meta, spec = as_dict(job.get("metadata")), as_dict(job.get("spec"))
    errs = validate_generated_selector(job, opts.require_prefixed_labels)
    errs += validate_job_spec(spec, opts)
    completions = opt_int(spec.get("completions"))
    if spec.get("completionMode") == INDEXED and completions is not None and completions > 0:
        name = as_str(meta.get("name"))
        hostname = f"{name}-{completions - 1}"
        if is_dns1123_label(hostname):
            errs.append(FieldError.invalid(FieldPath("metadata", "name"), name,
                                           "will not able to create pod with invalid DNS "
                                           f"label: {hostname}"))
    return errs


# -- updates ----------------------------------------------------------------------------------

def _validate_completions_update(spec: dict, old_spec: dict, path: FieldPath,
                                 opts: JobValidationOptions) -> list[FieldError]:
    """``validateCompletions``: only Indexed jobs scale, completions with parallelism."""
    new, old = opt_int(spec.get("completions")), opt_int(old_spec.get("completions"))
    if not opts.allow_elastic_indexed_jobs or spec.get("completionMode") != INDEXED:
        return [] if new == old else [FieldError.invalid(path, new, FIELD_IMMUTABLE_ERROR_MSG)]
    if new == old or new is None:
        return []
    if new != opt_int(spec.get("parallelism")):
        return [FieldError.invalid(path, new, "can only be modified in tandem with "
                                              "spec.parallelism")]
    return []


def _scheduling_directives_relaxed(template: dict, old_template: dict) -> dict:
    """``validatePodTemplateUpdate``'s copy of the old template with the scheduling
    directives a suspended, never started job may change taken from the new one."""
    import copy

    old = copy.deepcopy(old_template)
    new_spec, old_spec = as_dict(template.get("spec")), old.setdefault("spec", {})
    new_affinity, old_affinity = new_spec.get("affinity"), old_spec.get("affinity")
    if new_affinity is None and old_affinity is not None:
        old_affinity = dict(as_dict(old_affinity))
        old_affinity.pop("nodeAffinity", None)
        old_spec["affinity"] = old_affinity or None
        if old_spec["affinity"] is None:
            old_spec.pop("affinity")
    elif new_affinity is not None and old_affinity is None:
        old_spec["affinity"] = {k: v for k, v in {
            "nodeAffinity": as_dict(new_affinity).get("nodeAffinity")}.items() if v is not None}
    elif new_affinity is not None:
        old_affinity = dict(as_dict(old_affinity))
        if as_dict(new_affinity).get("nodeAffinity") is None:
            old_affinity.pop("nodeAffinity", None)
        else:
            old_affinity["nodeAffinity"] = new_affinity["nodeAffinity"]
        old_spec["affinity"] = old_affinity
    for key in ("nodeSelector", "tolerations", "schedulingGates"):
        if key in new_spec:
            old_spec[key] = new_spec[key]
        else:
            old_spec.pop(key, None)
    new_meta, old_meta = as_dict(template.get("metadata")), old.setdefault("metadata", {})
    for key in ("annotations", "labels"):
        if key in new_meta:
            old_meta[key] = new_meta[key]
        else:
            old_meta.pop(key, None)
    return old


def _empty_is_absent(value):
    """A value compared as ``Semantic.DeepEqual`` compares: empty lists and maps as unset."""
    if isinstance(value, dict):
        return {k: _empty_is_absent(v) for k, v in value.items()
                if v is not None and v != {} and v != []}
    if isinstance(value, list):
        return [_empty_is_absent(v) for v in value]
    return value


def validate_job_spec_update(spec: dict, old_spec: dict, opts: JobValidationOptions,
                             path: FieldPath = SPEC) -> list[FieldError]:
    """``ValidateJobSpecUpdate``: the spec again, then what may not change."""
    errs = validate_job_spec(spec, opts, path)
    errs += _validate_completions_update(spec, old_spec, path.child("completions"), opts)
    if spec.get("selector") != old_spec.get("selector"):
        errs.append(FieldError.invalid(path.child("selector"),
                                       go_label_selector(spec.get("selector")),
                                       FIELD_IMMUTABLE_ERROR_MSG))
    template, old_template = as_dict(spec.get("template")), as_dict(old_spec.get("template"))
    if opts.allow_mutable_scheduling_directives:
        old_template = _scheduling_directives_relaxed(template, old_template)
    if _empty_is_absent(template) != _empty_is_absent(old_template):
        errs.append(FieldError.invalid(path.child("template"),
                                       GoValue("core.PodTemplateSpec{...}"),
                                       FIELD_IMMUTABLE_ERROR_MSG))
    if spec.get("completionMode") != old_spec.get("completionMode"):
        errs.append(FieldError.invalid(path.child("completionMode"), spec.get("completionMode"),
                                       FIELD_IMMUTABLE_ERROR_MSG))
    if spec.get("podFailurePolicy") != old_spec.get("podFailurePolicy"):
        policy = spec.get("podFailurePolicy")
        errs.append(FieldError.invalid(path.child("podFailurePolicy"),
                                       go_pod_failure_policy(policy)
                                       if isinstance(policy, dict) else None,
                                       FIELD_IMMUTABLE_ERROR_MSG))
    for name in ("backoffLimitPerIndex", "managedBy"):
        if spec.get(name) != old_spec.get(name):
            errs.append(FieldError.invalid(path.child(name), spec.get(name),
                                           FIELD_IMMUTABLE_ERROR_MSG))
    if spec.get("successPolicy") != old_spec.get("successPolicy"):
        success = spec.get("successPolicy")
        errs.append(FieldError.invalid(path.child("successPolicy"),
                                       go_success_policy(success)
                                       if isinstance(success, dict) else None,
                                       FIELD_IMMUTABLE_ERROR_MSG))
    return errs


def update_options(job: dict, old: dict, pod_opts) -> JobValidationOptions:
    """``validationOptionsForJob`` for an update."""
    old_spec = as_dict(old.get("spec"))
    old_labels = as_dict(as_dict(as_dict(old_spec.get("template")).get("metadata")).get("labels"))
    return JobValidationOptions(
        pod=pod_opts,
        allow_invalid_label_value_in_selector=label_selector_has_invalid_label_value(
            old_spec.get("selector")),
        # Only a suspended job that never started may move its pods elsewhere.
        allow_mutable_scheduling_directives=(
            old_spec.get("suspend") is True
            and as_dict(old.get("status")).get("startTime") is None),
        # A job created before the prefixed labels existed is not held to them.
        require_prefixed_labels=JOB_NAME_LABEL in old_labels and CONTROLLER_UID_LABEL in old_labels)


# -- status ---------------------------------------------------------------------------------------

def _conditions(job: dict) -> list[dict]:
    return [as_dict(c) for c in as_list(as_dict(job.get("status")).get("conditions"))]


def is_condition_true(job: dict, kind: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == "True" for c in _conditions(job))


def is_finished(job: dict) -> bool:
    return is_condition_true(job, "Complete") or is_condition_true(job, "Failed")


def _time(value):
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


@dataclass(frozen=True)
class JobStatusValidationOptions:
    """``JobStatusValidationOptions``."""

    reject_decreasing_succeeded_counter: bool = False
    reject_decreasing_failed_counter: bool = False
    reject_disabling_terminal_condition: bool = False
    reject_invalid_completed_indexes: bool = False
    reject_invalid_failed_indexes: bool = False
    reject_failed_indexes_overlapping_completed: bool = False
    reject_completed_indexes_for_non_indexed_job: bool = False
    reject_failed_indexes_for_no_backoff_limit_per_index: bool = False
    reject_failed_job_without_failure_target: bool = False
    reject_complete_job_without_success_criteria_met: bool = False
    reject_finished_job_with_active_pods: bool = False
    reject_finished_job_without_start_time: bool = False
    reject_finished_job_with_uncounted_terminated_pods: bool = False
    reject_start_time_update_for_unsuspended_job: bool = False
    reject_completion_time_before_start_time: bool = False
    reject_mutating_completion_time: bool = False
    reject_complete_job_without_completion_time: bool = False
    reject_not_complete_job_with_completion_time: bool = False
    reject_complete_job_with_failed_condition: bool = False
    reject_complete_job_with_failure_target_condition: bool = False
    allow_for_success_criteria_met_in_extended_scope: bool = False
    reject_more_ready_than_active_pods: bool = False
    reject_finished_job_with_terminating_pods: bool = False


def status_validation_options(new: dict, old: dict) -> JobStatusValidationOptions:
    """``getStatusValidationOptions`` with JobManagedBy on (beta in 1.32): each rule on the
    status applies when the fields it reads changed."""
    status, old_status = as_dict(new.get("status")), as_dict(old.get("status"))
    spec = as_dict(new.get("spec"))
    indexed = spec.get("completionMode") == INDEXED

    def changed(name):
        return status.get(name) != old_status.get(name)

    finished_changed = is_finished(old) != is_finished(new)
    complete_changed = (is_condition_true(old, "Complete")
                        != is_condition_true(new, "Complete"))
    failed_changed = is_condition_true(old, "Failed") != is_condition_true(new, "Failed")
    failure_target_changed = (is_condition_true(old, "FailureTarget")
                              != is_condition_true(new, "FailureTarget"))
    completed_changed = as_str(status.get("completedIndexes")) != \
        as_str(old_status.get("completedIndexes"))
    failed_indexes_changed = changed("failedIndexes")
    active_changed = as_int(status.get("active")) != as_int(old_status.get("active"))
    start_changed = _time(status.get("startTime")) != _time(old_status.get("startTime"))
    completion_changed = (_time(status.get("completionTime"))
                          != _time(old_status.get("completionTime")))
    uncounted_changed = (_empty_is_absent(status.get("uncountedTerminatedPods") or {})
                         != _empty_is_absent(old_status.get("uncountedTerminatedPods") or {}))
    return JobStatusValidationOptions(
        reject_decreasing_succeeded_counter=(not indexed or opt_int(spec.get("completions"))
                                             != opt_int(spec.get("parallelism"))),
        reject_decreasing_failed_counter=True,
        reject_disabling_terminal_condition=True,
        reject_invalid_completed_indexes=completed_changed,
        reject_invalid_failed_indexes=failed_indexes_changed,
        reject_completed_indexes_for_non_indexed_job=completed_changed,
        reject_failed_indexes_for_no_backoff_limit_per_index=failed_indexes_changed,
        reject_failed_indexes_overlapping_completed=failed_indexes_changed or completed_changed,
        reject_finished_job_with_active_pods=finished_changed or active_changed,
        reject_finished_job_without_start_time=finished_changed or start_changed,
        reject_finished_job_with_uncounted_terminated_pods=finished_changed or uncounted_changed,
        reject_start_time_update_for_unsuspended_job=start_changed,
        reject_completion_time_before_start_time=start_changed or completion_changed,
        reject_mutating_completion_time=True,
        reject_not_complete_job_with_completion_time=complete_changed or completion_changed,
        reject_complete_job_without_completion_time=complete_changed or completion_changed,
        reject_complete_job_with_failed_condition=complete_changed or failed_changed,
        reject_complete_job_with_failure_target_condition=(complete_changed
                                                           or failure_target_changed),
        allow_for_success_criteria_met_in_extended_scope=True)


def _go_uncounted(uncounted: dict) -> GoValue:
    def uids(key):
        values = uncounted.get(key)
        return go_slice("types.UID", None if not isinstance(values, list)
                        else (go_str(v) for v in values))

    return GoValue(go_struct("batch.UncountedTerminatedPods",
                             (("Succeeded", uids("succeeded")), ("Failed", uids("failed")))))


def validate_job_status(job: dict, opts: JobStatusValidationOptions,
                        path: FieldPath = STATUS) -> list[FieldError]:
    """``validateJobStatus``."""
    status, spec = as_dict(job.get("status")), as_dict(job.get("spec"))
    errs = []
    for name in ("active", "succeeded", "failed"):
        errs += validate_nonnegative_field(as_int(status.get(name)), path.child(name))
    for name in ("ready", "terminating"):
        value = opt_int(status.get(name))
        if value is not None:
            errs += validate_nonnegative_field(value, path.child(name))
    uncounted = status.get("uncountedTerminatedPods")
    if isinstance(uncounted, dict):
        seen = set()
        for key in ("succeeded", "failed"):
            for index, uid in enumerate(as_list(uncounted.get(key))):
                item = path.child("uncountedTerminatedPods", key).index(index)
                uid = as_str(uid)
                if not uid:
                    errs.append(FieldError.invalid(item, uid, "must not be empty"))
                elif uid in seen:
                    errs.append(FieldError.duplicate(item, uid))
                else:
                    seen.add(uid)
    complete, failed = is_condition_true(job, "Complete"), is_condition_true(job, "Failed")
    failure_target = is_condition_true(job, "FailureTarget")
    criteria_met = is_condition_true(job, "SuccessCriteriaMet")
    conditions = path.child("conditions")
    start, completion = status.get("startTime"), status.get("completionTime")
    if opts.reject_complete_job_with_failed_condition and complete and failed:
        errs.append(FieldError.invalid(conditions, OMIT, "cannot set Complete=True and "
                                                         "Failed=true conditions"))
    if opts.reject_complete_job_with_failure_target_condition and complete and failure_target:
        errs.append(FieldError.invalid(conditions, OMIT, "cannot set Complete=True and "
                                                         "FailureTarget=true conditions"))
    if opts.reject_not_complete_job_with_completion_time and completion and not complete:
        errs.append(FieldError.invalid(path.child("completionTime"), go_time(completion),
                                       "cannot set completionTime when there is no "
                                       "Complete=True condition"))
    if opts.reject_complete_job_without_completion_time and not completion and complete:
        errs.append(FieldError.required(path.child("completionTime"),
                                        "completionTime is required for Complete jobs"))
    if opts.reject_completion_time_before_start_time and start and completion:
        started, completed = _time(start), _time(completion)
        if started and completed and completed < started:
            errs.append(FieldError.invalid(path.child("completionTime"), go_time(completion),
                                           "completionTime cannot be set before startTime"))
    if opts.reject_failed_job_without_failure_target and failed and not failure_target:
        errs.append(FieldError.invalid(conditions, OMIT, "cannot set Failed=True condition "
                                                         "without the FailureTarget=true "
                                                         "condition"))
    if opts.reject_complete_job_without_success_criteria_met and complete and not criteria_met:
        errs.append(FieldError.invalid(conditions, OMIT, "cannot set Complete=True condition "
                                                         "without the SuccessCriteriaMet=true "
                                                         "condition"))
    finished = complete or failed
    active = as_int(status.get("active"))
    if opts.reject_finished_job_with_active_pods and active > 0 and finished:
        errs.append(FieldError.invalid(path.child("active"), active,
                                       "active>0 is invalid for finished job"))
    if opts.reject_finished_job_without_start_time and not start and finished:
        errs.append(FieldError.required(path.child("startTime"),
                                        "startTime is required for finished job"))
    if (opts.reject_finished_job_with_uncounted_terminated_pods and finished
            and isinstance(uncounted, dict)
            and as_list(uncounted.get("failed")) + as_list(uncounted.get("succeeded"))):
        errs.append(FieldError.invalid(path.child("uncountedTerminatedPods"),
                                       _go_uncounted(uncounted),
                                       "uncountedTerminatedPods needs to be empty for finished "
                                       "job"))
    completions = opt_int(spec.get("completions"))
    completed_indexes = as_str(status.get("completedIndexes"))
    failed_indexes = status.get("failedIndexes")
    if opts.reject_invalid_completed_indexes and completions is not None:
        try:
            validate_indexes_format(completed_indexes, completions)
        except ValueError as err:
            errs.append(FieldError.invalid(path.child("completedIndexes"), completed_indexes,
                                           f"error parsing completedIndexes: {err}"))
    if (opts.reject_invalid_failed_indexes and completions is not None
            and spec.get("backoffLimitPerIndex") is not None and isinstance(failed_indexes, str)):
        try:
            validate_indexes_format(failed_indexes, completions)
        except ValueError as err:
            errs.append(FieldError.invalid(path.child("failedIndexes"), failed_indexes,
                                           f"error parsing failedIndexes: {err}"))
    indexed = spec.get("completionMode") == INDEXED
    if opts.reject_completed_indexes_for_non_indexed_job and completed_indexes and not indexed:
        errs.append(FieldError.invalid(path.child("completedIndexes"), completed_indexes,
                                       "cannot set non-empty completedIndexes when non-indexed "
                                       "completion mode"))
    if (opts.reject_failed_indexes_for_no_backoff_limit_per_index
            and spec.get("backoffLimitPerIndex") is None and isinstance(failed_indexes, str)):
        errs.append(FieldError.invalid(path.child("failedIndexes"), failed_indexes,
                                       "cannot set non-null failedIndexes when "
                                       "backoffLimitPerIndex is null"))
    if (opts.reject_failed_indexes_overlapping_completed and completions is not None
            and isinstance(failed_indexes, str)):
        overlap = _failed_overlaps_completed(completed_indexes, failed_indexes, completions)
        if overlap:
            errs.append(FieldError.invalid(path.child("failedIndexes"), failed_indexes, overlap))
    terminating = opt_int(status.get("terminating"))
    if (opts.reject_finished_job_with_terminating_pods and terminating is not None
            and terminating > 0 and finished):
        errs.append(FieldError.invalid(path.child("terminating"), terminating,
                                       "terminating>0 is invalid for finished job"))
    ready = opt_int(status.get("ready"))
    if opts.reject_more_ready_than_active_pods and ready is not None and ready > active:
        errs.append(FieldError.invalid(path.child("ready"), ready,
                                       "cannot set more ready pods than active"))
    if not opts.allow_for_success_criteria_met_in_extended_scope and not indexed and criteria_met:
        errs.append(FieldError.invalid(conditions, OMIT,
                                       "cannot set SuccessCriteriaMet to NonIndexed Job"))
    if criteria_met and failed:
        errs.append(FieldError.invalid(conditions, OMIT, "cannot set SuccessCriteriaMet=True "
                                                         "and Failed=true conditions"))
    if criteria_met and failure_target:
        errs.append(FieldError.invalid(conditions, OMIT, "cannot set SuccessCriteriaMet=True "
                                                         "and FailureTarget=true conditions"))
    if (not opts.allow_for_success_criteria_met_in_extended_scope
            and spec.get("successPolicy") is None and criteria_met):
        errs.append(FieldError.invalid(conditions, OMIT, "cannot set SuccessCriteriaMet=True "
                                                         "for Job without SuccessPolicy"))
    if spec.get("successPolicy") is not None and not criteria_met and complete:
        errs.append(FieldError.invalid(conditions, OMIT, "cannot set Complete=True for Job with "
                                                         "SuccessPolicy unless "
                                                         "SuccessCriteriaMet=True"))
    return errs


def validate_job_status_update(job: dict, old: dict,
                               opts: JobStatusValidationOptions) -> list[FieldError]:
    """``ValidateJobStatusUpdate``: the status, and the transitions upstream refuses."""
    errs = validate_job_status(job, opts)
    status, old_status = as_dict(job.get("status")), as_dict(old.get("status"))
    spec = as_dict(job.get("spec"))
    conditions = STATUS.child("conditions")
    if opts.reject_disabling_terminal_condition:
        for kind in ("Failed", "Complete", "FailureTarget"):
            if is_condition_true(old, kind) and not is_condition_true(job, kind):
                errs.append(FieldError.invalid(conditions, OMIT, "cannot disable the terminal "
                                                                 f"{kind}=True condition"))
    for name, reject in (("failed", opts.reject_decreasing_failed_counter),
                         ("succeeded", opts.reject_decreasing_succeeded_counter)):
        if reject and as_int(status.get(name)) < as_int(old_status.get(name)):
            errs.append(FieldError.invalid(STATUS.child(name), as_int(status.get(name)),
                                           f"cannot decrease the {name} counter"))
    completion, old_completion = status.get("completionTime"), old_status.get("completionTime")
    if (opts.reject_mutating_completion_time and completion and old_completion
            and _time(completion) != _time(old_completion)):
        errs.append(FieldError.invalid(STATUS.child("completionTime"), go_time(completion),
                                       "completionTime cannot be mutated"))
    start, old_start = status.get("startTime"), old_status.get("startTime")
    if (opts.reject_start_time_update_for_unsuspended_job and old_start
            and _time(old_start) != _time(start) and spec.get("suspend") is not True):
        errs.append(FieldError.required(STATUS.child("startTime"),
                                        "startTime cannot be removed for unsuspended job"))
    if is_condition_true(old, "SuccessCriteriaMet") and \
            not is_condition_true(job, "SuccessCriteriaMet"):
        errs.append(FieldError.invalid(conditions, OMIT,
                                       "cannot disable the SuccessCriteriaMet=True condition"))
    if (is_condition_true(old, "Complete") and not is_condition_true(old, "SuccessCriteriaMet")
            and is_condition_true(job, "SuccessCriteriaMet")):
        errs.append(FieldError.invalid(conditions, OMIT, "cannot set SuccessCriteriaMet=True "
                                                         "for Job already has Complete=true "
                                                         "conditions"))
    return errs

