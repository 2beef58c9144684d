"""``metav1.Condition`` validation, as ``k8s.io/apimachinery/pkg/apis/meta/v1/validation``
(1.32) words it: ``ValidateConditions`` and ``ValidateCondition``.

Kinds whose status holds ``[]metav1.Condition`` (PodDisruptionBudgets) check their status
writes with these.
"""

from __future__ import annotations

import re

from .field_errors import FieldError, FieldPath
from .validation import regex_error, validate_label_name

#: ``validConditionStatuses``, as ``sets.List`` returns them (sorted).
CONDITION_STATUSES = ("False", "True", "Unknown")
MAX_REASON_LENGTH = 1 * 1024
MAX_MESSAGE_LENGTH = 32 * 1024
CONDITION_REASON_FMT = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?"
CONDITION_REASON_ERROR = ("a condition reason must start with alphabetic character, optionally "
                          "followed by a string of alphanumeric characters or '_,:', and must "
                          "end with an alphanumeric character or '_'")
_REASON = re.compile(f"^{CONDITION_REASON_FMT}$")
#: ``metav1.Time`` decodes these to Go's zero time, which ``IsZero`` reports.
_ZERO_TIMES = (None, "", "0001-01-01T00:00:00Z")


def _text(value) -> str:
    return value if isinstance(value, str) else ""


def is_valid_condition_reason(value: str) -> list[str]:
    """``isValidConditionReason``: the format only, not the length."""
    if _REASON.fullmatch(value) and not value.endswith("\n"):
        return []
    return [regex_error(CONDITION_REASON_ERROR, CONDITION_REASON_FMT, "my_name", "MY_NAME",
                        "MyName", "ReasonA,ReasonB", "ReasonA:ReasonB")]


def validate_condition(condition: dict, path: FieldPath) -> list[FieldError]:
    """``ValidateCondition``: type, status, observedGeneration, lastTransitionTime, reason
    and message of one condition."""
    errs = validate_label_name(_text(condition.get("type")), path.child("type"))
    status = _text(condition.get("status"))
    if status not in CONDITION_STATUSES:
        errs.append(FieldError.not_supported(path.child("status"), status, CONDITION_STATUSES))
    generation = condition.get("observedGeneration")
    if isinstance(generation, int) and not isinstance(generation, bool) and generation < 0:
        errs.append(FieldError.invalid(path.child("observedGeneration"), generation,
                                       "must be greater than or equal to zero"))
    if condition.get("lastTransitionTime") in _ZERO_TIMES:
        errs.append(FieldError.required(path.child("lastTransitionTime"), "must be set"))
    reason = _text(condition.get("reason"))
    if not reason:
        errs.append(FieldError.required(path.child("reason"), "must be set"))
    else:
        errs += [FieldError.invalid(path.child("reason"), reason, msg)
                 for msg in is_valid_condition_reason(reason)]
        if len(reason.encode()) > MAX_REASON_LENGTH:
            errs.append(FieldError.too_long(path.child("reason"), reason, MAX_REASON_LENGTH))
    message = _text(condition.get("message"))
    if len(message.encode()) > MAX_MESSAGE_LENGTH:
        errs.append(FieldError.too_long(path.child("message"), message, MAX_MESSAGE_LENGTH))
    return errs


def validate_conditions(conditions, path: FieldPath) -> list[FieldError]:
    """``ValidateConditions``: each condition, and no type twice."""
    errs = []
    seen = set()
    for index, condition in enumerate(conditions if isinstance(conditions, list) else []):
        condition = condition if isinstance(condition, dict) else {}
        kind = _text(condition.get("type"))
        if kind in seen:
            errs.append(FieldError.duplicate(path.index(index).child("type"), kind))
        else:
            seen.add(kind)
        errs += validate_condition(condition, path.index(index))
    return errs
