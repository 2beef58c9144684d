"""What the apps kinds share: their pod templates, selectors, rolling-update numbers,
status counters and Table cells (``pkg/apis/apps/validation``, ``pkg/printers``).

Objects are the ``apps/v1`` JSON dicts as ``BuiltinStrategy.normalize`` leaves them, so a
nil pointer or slice may be ``None``; the helpers read them as Go reads the internal types
(a nil ``*int32`` as 0, a missing template as an empty one).
"""

from __future__ import annotations

import dataclasses

from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue
from kapiserver.apimachinery.gosyntax import go_int, go_str, go_string_map, go_struct
from kapiserver.apimachinery.labels import SelectorError, selector_from_label_selector
from kapiserver.apimachinery.selector_validation import (LabelSelectorValidationOptions,
                                                         go_label_selector,
                                                         label_selector_has_invalid_label_value,
                                                         validate_label_selector)
from kapiserver.apimachinery.validation import (FIELD_IMMUTABLE_ERROR_MSG, is_dns1123_label,
                                                is_valid_percent, validate_annotations,
                                                validate_labels, validate_nonnegative_field)
from kapiserver.apis.core.defaults import set_pod_template_spec_defaults
from kapiserver.apis.core.validation import (PodValidationOptions,
                                             pod_template_validation_options,
                                             validate_pod_template_spec)
from kapiserver.apis.core.validation.pod import validate_pod_specific_annotations
from kapiserver.registry.printers import age

RESTART_POLICY_ALWAYS = "Always"
DOES_NOT_MATCH = "`selector` does not match template `labels`"
NOT_GREATER_THAN_REPLICAS = "cannot be greater than status.replicas"


# -- reading ------------------------------------------------------------------------------

def as_dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def as_list(value) -> list:
    return value if isinstance(value, list) else []


def as_int(value) -> int:
    """An integer field as Go holds it: 0 when unset (a nil pointer in v1)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def spec_of(obj: dict) -> dict:
    return as_dict(obj.get("spec"))


def template_of(spec: dict) -> dict:
    return as_dict(spec.get("template"))


def template_spec_of(spec: dict) -> dict:
    return as_dict(template_of(spec).get("spec"))


# -- defaults -----------------------------------------------------------------------------

def set_template_defaults(spec: dict) -> None:
    """``SetDefaults_PodSpec`` and the rest of the pod template's defaults
    (``SetObjectDefaults_<Kind>`` reaches into ``spec.template``)."""
    template = spec.get("template")
    if not isinstance(template, dict):
        template = spec["template"] = {}
    if not isinstance(template.get("spec"), dict):
        template["spec"] = {}
    set_pod_template_spec_defaults(template)


# -- pod templates --------------------------------------------------------------------------

def pod_validation_options(new_template: dict,
                           old_template: dict | None = None) -> PodValidationOptions:
    """``pod.GetValidationOptionsFromPodTemplate``: what the pod template may keep because
    the old one had it."""
    return pod_template_validation_options(new_template, old_template)


def allow_invalid_selector_values(opts: PodValidationOptions,
                                  old_selector) -> PodValidationOptions:
    """``opts`` letting label selectors keep invalid values when ``old_selector`` already
    held some (``LabelSelectorHasInvalidLabelValue``; DaemonSet updates)."""
    if not label_selector_has_invalid_label_value(old_selector if isinstance(old_selector, dict)
                                                  else None):
        return opts
    return dataclasses.replace(opts, allow_invalid_label_value_in_selector=True)


def label_selector_options(opts: PodValidationOptions) -> LabelSelectorValidationOptions:
    """The label selector options a pod template's options imply."""
    return LabelSelectorValidationOptions(
        allow_invalid_label_value=opts.allow_invalid_label_value_in_selector)


def validate_selector(spec: dict, path: FieldPath, kind_word: str) -> list[FieldError]:
    """The ``spec.selector`` checks of Deployments, ReplicaSets and StatefulSets: required,
    strictly valid, not empty (``empty selector is invalid for <kind_word>``)."""
    selector = spec.get("selector")
    if not isinstance(selector, dict):
        return [FieldError.required(path.child("selector"), "")]
    errs = validate_label_selector(selector, LabelSelectorValidationOptions(),
                                   path.child("selector"))
    if not as_dict(selector.get("matchLabels")) and not as_list(selector.get("matchExpressions")):
        errs.append(FieldError.invalid(path.child("selector"), go_label_selector(selector),
                                       f"empty selector is invalid for {kind_word}"))
    return errs


def selector_immutable(spec: dict, old_spec: dict) -> list[FieldError]:
    """apps/v1 forbids changing ``spec.selector`` (the strategies' ``ValidateUpdate``)."""
    if spec.get("selector") == old_spec.get("selector"):
        return []
    return [FieldError.invalid(FieldPath("spec", "selector"),
                               go_label_selector(spec.get("selector")), FIELD_IMMUTABLE_ERROR_MSG)]


def parse_selector(spec: dict):
    """``metav1.LabelSelectorAsSelector(spec.Selector)``: the selector, or ``None`` when it
    cannot be read (a nil selector selects nothing)."""
    selector = spec.get("selector")
    try:
        return selector_from_label_selector(selector if isinstance(selector, dict) else None)
    except SelectorError:
        return None


def template_labels_value(template: dict):
    """The template's labels as a field error prints them (``map[string]string{...}``)."""
    labels = as_dict(template.get("metadata")).get("labels")
    return GoValue(go_string_map(labels if isinstance(labels, dict) else None))


def selector_mismatch(selector, template: dict, path: FieldPath) -> list[FieldError]:
    """The template's labels must be selected by a selector that is not empty."""
    labels = as_dict(as_dict(template.get("metadata")).get("labels"))
    if selector.empty or selector.matches(labels):
        return []
    return [FieldError.invalid(path.child("metadata", "labels"), template_labels_value(template),
                               DOES_NOT_MATCH)]


def validate_restart_policy(template_spec: dict, path: FieldPath, kind: str) -> list[FieldError]:
    """Templates of controllers must restart always and have no active deadline."""
    errs = []
    policy = template_spec.get("restartPolicy") or ""
    if policy != RESTART_POLICY_ALWAYS:
        errs.append(FieldError.not_supported(path.child("restartPolicy"), policy,
                                             [RESTART_POLICY_ALWAYS]))
    if template_spec.get("activeDeadlineSeconds") is not None:
        errs.append(FieldError.forbidden(path.child("activeDeadlineSeconds"),
                                         f"activeDeadlineSeconds in {kind} is not Supported"))
    return errs


def validate_pod_template_for_replica_set(template: dict, selector, path: FieldPath,
                                          opts) -> list[FieldError]:
    """``ValidatePodTemplateSpecForReplicaSet`` (Deployments use it too)."""
    errs = selector_mismatch(selector, template, path)
    errs += validate_pod_template_spec(template, path, opts)
    errs += validate_restart_policy(as_dict(template.get("spec")), path.child("spec"),
                                    "ReplicaSet")
    return errs


def validate_template_metadata(template: dict, path: FieldPath, opts) -> list[FieldError]:
    """What StatefulSets check of their template: labels, annotations and the
    pod-specific annotations, not the pod spec (``ValidatePodTemplateSpecForStatefulSet``)."""
    meta = as_dict(template.get("metadata"))
    annotations = as_dict(meta.get("annotations"))
    errs = validate_labels(as_dict(meta.get("labels")), path.child("labels"))
    errs += validate_annotations(annotations, path.child("annotations"))
    errs += validate_pod_specific_annotations(annotations, as_dict(template.get("spec")),
                                              path.child("annotations"), opts)
    return errs


# -- numbers --------------------------------------------------------------------------------

def nonnegative(obj: dict, key: str, path: FieldPath) -> list[FieldError]:
    """``ValidateNonnegativeField`` of an integer field (unset reads as 0)."""
    return validate_nonnegative_field(as_int(obj.get(key)), path.child(key))


def nonnegative_if_set(obj: dict, key: str, path: FieldPath) -> list[FieldError]:
    """``ValidateNonnegativeField`` of a pointer field, when it is set."""
    value = obj.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        return []
    return validate_nonnegative_field(value, path.child(key))


def go_int_or_string(value) -> GoValue:
    """An ``intstr.IntOrString`` as ``%#v`` prints it (Type 0 is an int, 1 a string)."""
    if isinstance(value, str):
        fields = (("Type", "1"), ("IntVal", "0"), ("StrVal", go_str(value)))
    else:
        fields = (("Type", "0"), ("IntVal", go_int(value)), ("StrVal", '""'))
    return GoValue(go_struct("intstr.IntOrString", fields))


def _percent(value) -> int | None:
    """``getPercentValue``: the number of a valid percent string, else ``None``."""
    if isinstance(value, str) and not is_valid_percent(value):
        return int(value[:-1])
    return None


def int_or_percent_value(value) -> int:
    """``getIntOrPercentValue``: a percent's number, an int, or a string's ``Atoi`` (0 if
    it is no number, as ``IntOrString.IntValue``)."""
    percent = _percent(value)
    if percent is not None:
        return percent
    if isinstance(value, str):
        try:
            return int(value) if value.lstrip("+-").isdigit() else 0
        except ValueError:
            return 0
    return as_int(value)


def validate_positive_int_or_percent(value, path: FieldPath) -> list[FieldError]:
    """``ValidatePositiveIntOrPercent``: a valid percent string or an int >= 0."""
    if isinstance(value, str):
        return [FieldError.invalid(path, go_int_or_string(value), msg)
                for msg in is_valid_percent(value)]
    return validate_nonnegative_field(as_int(value), path)


def not_more_than_100_percent(value, path: FieldPath) -> list[FieldError]:
    """``IsNotMoreThan100Percent``."""
    percent = _percent(value)
    if percent is None or percent <= 100:
        return []
    return [FieldError.invalid(path, go_int_or_string(value), "must not be greater than 100%")]


def validate_counters(status: dict, path: FieldPath, keys) -> list[FieldError]:
    """Status counters that may not be negative."""
    errs = []
    for key in keys:
        errs += nonnegative(status, key, path)
    return errs


def not_above(status: dict, key: str, limit_key: str, path: FieldPath,
              message: str = NOT_GREATER_THAN_REPLICAS) -> list[FieldError]:
    value = as_int(status.get(key))
    if value > as_int(status.get(limit_key)):
        return [FieldError.invalid(path.child(key), value, message)]
    return []


def collision_count_decremented(new_status: dict, old_status: dict,
                                path: FieldPath) -> list[FieldError]:
    """``IsDecremented`` of ``status.collisionCount``: it may grow or appear, never shrink
    or go."""
    new, old = new_status.get("collisionCount"), old_status.get("collisionCount")
    if old is None:
        return []
    if new is None or as_int(new) < as_int(old):
        return [FieldError.invalid(path.child("collisionCount"), as_int(new),
                                   "cannot be decremented")]
    return []


# -- warnings -------------------------------------------------------------------------------

def name_warnings(obj: dict) -> list[str]:
    """The warning Deployments and ReplicaSets give a name that is no DNS label: their pods
    are named after them and take it as hostname."""
    messages = is_dns1123_label(as_dict(obj.get("metadata")).get("name") or "")
    if not messages:
        return []
    return ["metadata.name: this is used in Pod names and hostnames, which can result in "
            f"surprising behavior; a DNS label is recommended: [{' '.join(messages)}]"]


# -- Table cells ----------------------------------------------------------------------------

def container_cells(template_spec: dict) -> tuple[str, str]:
    """``layoutContainerCells``: container names and images, comma-separated."""
    containers = [as_dict(c) for c in as_list(template_spec.get("containers"))]
    return (",".join(c.get("name") or "" for c in containers),
            ",".join(c.get("image") or "" for c in containers))


def format_labels(labels) -> str:
    """``labels.FormatLabels``: ``k=v,...`` sorted, ``<none>`` when empty."""
    labels = as_dict(labels)
    text = ",".join(f"{key}={labels[key]}" for key in sorted(labels))
    return text or "<none>"


def format_label_selector(selector) -> str:
    """``metav1.FormatLabelSelector``: ``<error>`` when unreadable, ``<none>`` when empty."""
    try:
        text = str(selector_from_label_selector(selector if isinstance(selector, dict)
                                                else None))
    except SelectorError:
        return "<error>"
    return text or "<none>"


def created(obj: dict) -> str:
    return age(as_dict(obj.get("metadata")).get("creationTimestamp"))
