"""PodDisruptionBudgets (with ``status``): ``pkg/registry/policy/poddisruptionbudget`` and
``ValidatePodDisruptionBudget`` of kube-apiserver 1.32.

policy/v1 has no defaults; decoding strips the label v1beta1 used for its empty-selector
semantics unless the selector is exactly one of the two special selectors
(``Convert_v1_PodDisruptionBudget_To_policy_PodDisruptionBudget``). As upstream, only the
spec is checked by the kind's own validation: the name is held to the generic rule (a
path segment), which runs once the spec is valid. The status subresource validates the
``metav1.Condition`` list and the counters.
"""

from __future__ import annotations

from kapiserver.apimachinery.condition_validation import validate_conditions
from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue
from kapiserver.apimachinery.gosyntax import go_int, go_pointer, go_str, go_struct
from kapiserver.apimachinery.selector_validation import (LabelSelectorValidationOptions,
                                                         label_selector_has_invalid_label_value,
                                                         validate_label_selector)
from kapiserver.apimachinery.validation import (is_valid_percent, validate_nonnegative_field,
                                                validate_object_meta,
                                                validate_object_meta_update,
                                                validate_path_segment_name)
from kapiserver.registry.builtin import builtin_spec
from kapiserver.registry.printers import age
from kapiserver_plugins.apps.base import AppsStrategy

PDBS = builtin_spec("policy", "v1", "poddisruptionbudgets")
#: ``policy.PDBV1beta1Label``: marks the selectors that kept v1beta1's meaning of "empty".
PDB_V1BETA1_LABEL = "pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match"
#: ``supportedUnhealthyPodEvictionPolicies``, as ``sets.List`` returns them.
UNHEALTHY_POD_EVICTION_POLICIES = ("AlwaysAllow", "IfHealthyBudget")
SPEC = FieldPath("spec")


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value) -> list:
    return value if isinstance(value, list) else []


def _spec(obj: dict) -> dict:
    return _dict(obj.get("spec"))


# -- IntOrString -----------------------------------------------------------------------------

def go_int_or_string(value) -> GoValue:
    """An ``intstr.IntOrString`` as ``%#v`` prints it (its ``String`` has a pointer
    receiver, so a field error shows the struct)."""
    if isinstance(value, str):
        fields = (("Type", "1"), ("IntVal", "0"), ("StrVal", go_str(value)))
    else:
        fields = (("Type", "0"), ("IntVal", go_int(value)), ("StrVal", '""'))
    return GoValue(go_struct("intstr.IntOrString", fields))


def int_or_string_text(value) -> str:
    """``IntOrString.String()``: the number or the string."""
    return value if isinstance(value, str) else str(go_int(value))


def validate_positive_int_or_percent(value, path: FieldPath) -> list[FieldError]:
    """``ValidatePositiveIntOrPercent``: a percent string or a non-negative integer."""
    if isinstance(value, str):
        return [FieldError.invalid(path, go_int_or_string(value), msg)
                for msg in is_valid_percent(value)]
    if isinstance(value, int) and not isinstance(value, bool):
        return validate_nonnegative_field(value, path)
    return [FieldError.invalid(path, go_int_or_string(value),
                               "must be an integer or percentage (e.g '5%')")]


def is_not_more_than_100_percent(value, path: FieldPath) -> list[FieldError]:
    """``IsNotMoreThan100Percent``: a valid percent string may not exceed 100%."""
    if not isinstance(value, str) or is_valid_percent(value):
        return []
    if int(value[:-1]) <= 100:
        return []
    return [FieldError.invalid(path, go_int_or_string(value), "must not be greater than 100%")]


# -- defaults (conversion from v1) ---------------------------------------------------------

def _is_match_all(selector: dict) -> bool:
    """``NonV1beta1MatchAllSelector`` (``{}``), compared as ``Semantic.DeepEqual``
    compares (a nil and an empty list or map are equal)."""
    return not selector.get("matchLabels") and not selector.get("matchExpressions")


def _is_match_none(selector: dict) -> bool:
    """``NonV1beta1MatchNoneSelector``: only ``<label> Exists``."""
    expressions = _list(selector.get("matchExpressions"))
    if selector.get("matchLabels") or len(expressions) != 1:
        return False
    only = _dict(expressions[0])
    return (only.get("key") == PDB_V1BETA1_LABEL and only.get("operator") == "Exists"
            and not only.get("values"))


def strip_v1beta1_label(obj: dict) -> None:
    """``Convert_v1_PodDisruptionBudget_To_policy_PodDisruptionBudget``: the v1beta1 label
    is never combined with what the user selects."""
    selector = _spec(obj).get("selector")
    if not isinstance(selector, dict) or _is_match_all(selector) or _is_match_none(selector):
        return
    expressions = selector.get("matchExpressions")
    if isinstance(expressions, list):
        selector["matchExpressions"] = [e for e in expressions
                                        if _dict(e).get("key") != PDB_V1BETA1_LABEL]


# -- validation ------------------------------------------------------------------------------

def go_pdb_spec(spec: dict) -> GoValue:
    """``%#v`` of the internal ``policy.PodDisruptionBudgetSpec``."""
    return GoValue(go_struct("policy.PodDisruptionBudgetSpec", (
        ("MinAvailable", go_pointer("intstr.IntOrString", spec.get("minAvailable") is not None)),
        ("Selector", go_pointer("v1.LabelSelector", spec.get("selector") is not None)),
        ("MaxUnavailable",
         go_pointer("intstr.IntOrString", spec.get("maxUnavailable") is not None)),
        ("UnhealthyPodEvictionPolicy", go_pointer(
            "policy.UnhealthyPodEvictionPolicyType",
            spec.get("unhealthyPodEvictionPolicy") is not None)))))


def validate_pdb_spec(spec: dict, opts: LabelSelectorValidationOptions,
                      path: FieldPath = SPEC) -> list[FieldError]:
    """``ValidatePodDisruptionBudgetSpec``."""
    errs = []
    min_available, max_unavailable = spec.get("minAvailable"), spec.get("maxUnavailable")
    if min_available is not None and max_unavailable is not None:
        errs.append(FieldError.invalid(path, go_pdb_spec(spec),
                                       "minAvailable and maxUnavailable cannot be both set"))
    for name, value in (("minAvailable", min_available), ("maxUnavailable", max_unavailable)):
        if value is not None:
            errs += validate_positive_int_or_percent(value, path.child(name))
            errs += is_not_more_than_100_percent(value, path.child(name))
    selector = spec.get("selector")
    errs += validate_label_selector(selector if isinstance(selector, dict) else None, opts,
                                    path.child("selector"))
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in UNHEALTHY_POD_EVICTION_POLICIES:
        errs.append(FieldError.not_supported(path.child("unhealthyPodEvictionPolicy"), policy,
                                             UNHEALTHY_POD_EVICTION_POLICIES))
    return errs


def validate_pdb_status(status: dict, path: FieldPath = FieldPath("status")) -> list[FieldError]:
    """``ValidatePodDisruptionBudgetStatusUpdate`` for policy/v1."""
    errs = validate_conditions(status.get("conditions"), path.child("conditions"))
    for name in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"):
        errs += validate_nonnegative_field(go_int_value(status.get(name)), path.child(name))
    return errs


def go_int_value(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class PodDisruptionBudgetStrategy(AppsStrategy):
    """``podDisruptionBudgetStrategy`` and its status strategy (``AppsStrategy`` for its
    normalizing, which keeps the metadata dict the store holds)."""

    has_generation = True

    def set_defaults(self, obj):
        strip_v1beta1_label(obj)

    def spec_changed(self, new, old):
        return _spec(new) != _spec(old)

    def name_validator(self):
        return validate_path_segment_name

    def validate(self, obj):
        # rest.BeforeCreate: the strategy's errors (the spec's) first; the generic object
        # meta rules only once those pass.
        errs = validate_pdb_spec(_spec(obj), LabelSelectorValidationOptions())
        if errs:
            return errs
        return self.validate_meta(obj.get("metadata") or {})

    def validate_update(self, new, old):
        new_meta, old_meta = new.get("metadata") or {}, old.get("metadata") or {}
        opts = LabelSelectorValidationOptions(
            allow_invalid_label_value=label_selector_has_invalid_label_value(
                _spec(old).get("selector")))
        # validateCommonFields (the generic object meta rules), then the strategy's.
        return (validate_object_meta(new_meta, True, validate_path_segment_name)
                + validate_object_meta_update(new_meta, old_meta)
                + validate_pdb_spec(_spec(new), opts))

    def validate_status(self, new, old):
        return validate_pdb_status(_dict(new.get("status")))

    def table_cells(self, obj):
        meta, spec = obj.get("metadata") or {}, _spec(obj)
        min_available, max_unavailable = spec.get("minAvailable"), spec.get("maxUnavailable")
        return [meta.get("name", ""),
                "N/A" if min_available is None else int_or_string_text(min_available),
                "N/A" if max_unavailable is None else int_or_string_text(max_unavailable),
                go_int_value(_dict(obj.get("status")).get("disruptionsAllowed")),
                age(meta.get("creationTimestamp"))]
