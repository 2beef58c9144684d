"""``metav1.LabelSelector`` validation and its Go rendering, as upstream words them.

Ports ``ValidateLabelSelector`` and ``ValidateLabelSelectorRequirement`` of
``k8s.io/apimachinery/pkg/apis/meta/v1/validation`` (1.32), and renders a selector as
``%#v`` prints it in errors such as ``spec.selector: Invalid value:
v1.LabelSelector{MatchLabels:map[string]string{"app":"web"},
MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .field_errors import FieldError, FieldPath, GoValue
from .gosyntax import go_slice, go_str, go_string_map, go_string_slice, go_struct
from .validation import is_valid_label_value, validate_label_name, validate_labels

_SET_OPERATORS = ("In", "NotIn")
_EXISTS_OPERATORS = ("Exists", "DoesNotExist")


@dataclass(frozen=True)
class LabelSelectorValidationOptions:
    """``LabelSelectorValidationOptions``."""

    #: Values of match expressions are not checked (existing invalid data on update).
    allow_invalid_label_value: bool = False
    #: An operator ``LabelSelectorAsSelector`` cannot read passes (SubjectAccessReviews).
    allow_unknown_operator: bool = False


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value) -> list:
    return value if isinstance(value, list) else []


def label_selector_has_invalid_label_value(selector: dict | None) -> bool:
    """``LabelSelectorHasInvalidLabelValue``: a match expression holds an invalid value."""
    for expression in _list(_dict(selector).get("matchExpressions")):
        for value in _list(_dict(expression).get("values")):
            if is_valid_label_value(value if isinstance(value, str) else ""):
                return True
    return False


def validate_label_selector_requirement(requirement: dict, opts: LabelSelectorValidationOptions,
                                        path: FieldPath) -> list[FieldError]:
    """``ValidateLabelSelectorRequirement``."""
    errs = []
    operator = requirement.get("operator") or ""
    values = _list(requirement.get("values"))
    if operator in _SET_OPERATORS:
        if not values:
            errs.append(FieldError.required(path.child("values"),
                                            "must be specified when `operator` is 'In' or "
                                            "'NotIn'"))
    elif operator in _EXISTS_OPERATORS:
        if values:
            errs.append(FieldError.forbidden(path.child("values"),
                                             "may not be specified when `operator` is 'Exists' "
                                             "or 'DoesNotExist'"))
    elif not opts.allow_unknown_operator:
        errs.append(FieldError.invalid(path.child("operator"), operator,
                                       "not a valid selector operator"))
    errs += validate_label_name(requirement.get("key") or "", path.child("key"))
    if not opts.allow_invalid_label_value:
        for index, value in enumerate(values):
            value = value if isinstance(value, str) else ""
            errs += [FieldError.invalid(path.child("values").index(index), value, msg)
                     for msg in is_valid_label_value(value)]
    return errs


def validate_label_selector(selector: dict | None, opts: LabelSelectorValidationOptions,
                            path: FieldPath) -> list[FieldError]:
    """``ValidateLabelSelector``: nothing for a nil selector; its labels, then each
    requirement."""
    if selector is None:
        return []
    errs = validate_labels(_dict(selector.get("matchLabels")), path.child("matchLabels"))
    for index, expression in enumerate(_list(selector.get("matchExpressions"))):
        errs += validate_label_selector_requirement(
            _dict(expression), opts, path.child("matchExpressions").index(index))
    return errs


def _go_requirement(requirement: dict) -> str:
    values = requirement.get("values")
    return go_struct("v1.LabelSelectorRequirement", (
        ("Key", go_str(requirement.get("key"))),
        ("Operator", go_str(requirement.get("operator"))),
        ("Values", go_string_slice(values if isinstance(values, list) else None))))


def go_label_selector_text(selector: dict) -> str:
    """``%#v`` of a ``metav1.LabelSelector`` (a dict, as decoded)."""
    labels = selector.get("matchLabels")
    expressions = selector.get("matchExpressions")
    return go_struct("v1.LabelSelector", (
        ("MatchLabels", go_string_map(labels if isinstance(labels, dict) else None)),
        ("MatchExpressions", go_slice(
            "v1.LabelSelectorRequirement",
            None if not isinstance(expressions, list)
            else [_go_requirement(_dict(e)) for e in expressions]))))


def go_label_selector(selector: dict | None):
    """A ``*metav1.LabelSelector`` as a field error's bad value: the struct it points to
    (``ErrorBody`` dereferences pointers), or ``None`` (printed ``"null"``) for nil."""
    if not isinstance(selector, dict):
        return None
    return GoValue(go_label_selector_text(selector))
