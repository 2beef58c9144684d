"""Scheduling constraints: node and pod (anti-)affinity, tolerations, topology spread,
scheduling and readiness gates (``pkg/apis/core/validation``, 1.32)."""

from __future__ import annotations

from ....apimachinery import validation as apivalidation
from ....apimachinery.field_errors import FieldError, FieldPath
from ....apimachinery.selector_validation import (LabelSelectorValidationOptions,
                                                  validate_label_selector)
from .common import (IS_NOT_POSITIVE_ERROR_MSG, d, dicts, i, lst, opt, opt_int,
                     opt_str, s, strs, validate_name, validate_qualified_name)
from .options import PodValidationOptions

_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_SCHEDULE_ACTIONS = ("DoNotSchedule", "ScheduleAnyway")
_NODE_INCLUSION_POLICIES = ("Honor", "Ignore")


# -- node affinity ----------------------------------------------------------------------------

def validate_node_selector_requirement(requirement: dict, path: FieldPath) -> list[FieldError]:
    """``ValidateNodeSelectorRequirement`` (1.32: values are not checked as label values)."""
    errs = []
    operator = s(requirement, "operator")
    values = lst(requirement, "values")
    if operator in ("In", "NotIn"):
        if not values:
            errs.append(FieldError.required(path.child("values"),
                                            "must be specified when `operator` is 'In' or "
                                            "'NotIn'"))
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            errs.append(FieldError.forbidden(path.child("values"),
                                             "may not be specified when `operator` is 'Exists' "
                                             "or 'DoesNotExist'"))
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(FieldError.required(path.child("values"),
                                            "must be specified single value when `operator` is "
                                            "'Lt' or 'Gt'"))
    else:
        errs.append(FieldError.invalid(path.child("operator"), operator,
                                       "not a valid selector operator"))
    return errs + apivalidation.validate_label_name(s(requirement, "key"), path.child("key"))


def validate_node_field_selector_requirement(requirement: dict,
                                             path: FieldPath) -> list[FieldError]:
    """``ValidateNodeFieldSelectorRequirement``: only ``metadata.name``, one value."""
    errs = []
    operator = s(requirement, "operator")
    values = strs(requirement.get("values"))
    if operator in ("In", "NotIn"):
        if len(values) != 1:
            errs.append(FieldError.required(path.child("values"),
                                            "must be only one value when `operator` is 'In' or "
                                            "'NotIn' for node field selector"))
    else:
        errs.append(FieldError.invalid(path.child("operator"), operator,
                                       "not a valid selector operator"))
    key = s(requirement, "key")
    if key != "metadata.name":
        errs.append(FieldError.invalid(path.child("key"), key, "not a valid field selector key"))
    else:
        for index, value in enumerate(values):
            errs += validate_name(apivalidation.name_is_dns_subdomain, value,
                                  path.child("values").index(index))
    return errs


def validate_node_selector_term(term: dict, path: FieldPath) -> list[FieldError]:
    """``ValidateNodeSelectorTerm``."""
    errs = []
    for index, requirement in enumerate(dicts(term.get("matchExpressions"))):
        errs += validate_node_selector_requirement(requirement,
                                                   path.child("matchExpressions").index(index))
    for index, requirement in enumerate(dicts(term.get("matchFields"))):
        errs += validate_node_field_selector_requirement(requirement,
                                                         path.child("matchFields").index(index))
    return errs


def validate_node_selector(selector: dict, path: FieldPath) -> list[FieldError]:
    """``ValidateNodeSelector``: at least one term."""
    terms_path = path.child("nodeSelectorTerms")
    terms = dicts(selector.get("nodeSelectorTerms"))
    if not terms:
        return [FieldError.required(terms_path, "must have at least one node selector term")]
    errs = []
    for index, term in enumerate(terms):
        errs += validate_node_selector_term(term, terms_path.index(index))
    return errs


def _validate_node_affinity(affinity: dict, path: FieldPath) -> list[FieldError]:
    errs = []
    required = opt(affinity, "requiredDuringSchedulingIgnoredDuringExecution")
    if required is not None:
        errs += validate_node_selector(required,
                                       path.child("requiredDuringSchedulingIgnoredDuringExecution"))
    preferred = dicts(affinity.get("preferredDuringSchedulingIgnoredDuringExecution"))
    preferred_path = path.child("preferredDuringSchedulingIgnoredDuringExecution")
    for index, term in enumerate(preferred):
        weight = i(term, "weight")
        if weight <= 0 or weight > 100:
            errs.append(FieldError.invalid(preferred_path.index(index).child("weight"), weight,
                                           "must be in the range 1-100"))
        errs += validate_node_selector_term(d(term, "preference"),
                                            preferred_path.index(index).child("preference"))
    return errs


# -- pod affinity -----------------------------------------------------------------------------

def _validate_label_keys(path: FieldPath, keys: list[str],
                         selector: dict | None) -> list[FieldError]:
    if not keys:
        return []
    if selector is None:
        return [FieldError.forbidden(path, "must not be specified when labelSelector is not set")]
    errs = []
    for index, key in enumerate(keys):
        errs += apivalidation.validate_label_name(key, path.index(index))
    return errs


def validate_match_label_keys_and_mismatch_label_keys(
        path: FieldPath, match_keys: list[str], mismatch_keys: list[str],
        selector: dict | None) -> list[FieldError]:
    """``validateMatchLabelKeysAndMismatchLabelKeys`` of a pod affinity term."""
    errs = _validate_label_keys(path.child("matchLabelKeys"), match_keys, selector)
    errs += _validate_label_keys(path.child("mismatchLabelKeys"), mismatch_keys, selector)
    if selector is not None:
        positions = {key: index for index, key in enumerate(match_keys)}
        selector_keys = set(d(selector, "matchLabels"))
        for expression in dicts(selector.get("matchExpressions")):
            key = s(expression, "key")
            if key in positions and key in selector_keys:
                # upstream indexes the term's path itself here, not matchLabelKeys
                errs.append(FieldError.invalid(path.index(positions[key]), key,
                                               "exists in both matchLabelKeys and labelSelector"))
            selector_keys.add(key)
    mismatch = set(mismatch_keys)
    for index, key in enumerate(match_keys):
        if key in mismatch:
            errs.append(FieldError.invalid(path.child("matchLabelKeys").index(index), key,
                                           "exists in both matchLabelKeys and mismatchLabelKeys"))
    return errs


def _validate_pod_affinity_term(term: dict, allow_invalid_label_value: bool,
                                path: FieldPath) -> list[FieldError]:
    options = LabelSelectorValidationOptions(allow_invalid_label_value=allow_invalid_label_value)
    errs = validate_label_selector(opt(term, "labelSelector"), options,
                                   path.child("labelSelector"))
    errs += validate_label_selector(opt(term, "namespaceSelector"), options,
                                    path.child("namespaceSelector"))
    for name in strs(term.get("namespaces")):
        errs += validate_name(apivalidation.validate_namespace_name, name,
                              path.child("namespace"))
    errs += validate_match_label_keys_and_mismatch_label_keys(
        path, strs(term.get("matchLabelKeys")), strs(term.get("mismatchLabelKeys")),
        opt(term, "labelSelector"))
    topology_key = s(term, "topologyKey")
    if not topology_key:
        errs.append(FieldError.required(path.child("topologyKey"), "can not be empty"))
    return errs + apivalidation.validate_label_name(topology_key, path.child("topologyKey"))


def _validate_pod_affinity(affinity: dict, allow_invalid_label_value: bool,
                           path: FieldPath) -> list[FieldError]:
    # validatePodAffinity and validatePodAntiAffinity
    errs = []
    required_path = path.child("requiredDuringSchedulingIgnoredDuringExecution")
    for index, term in enumerate(dicts(
            affinity.get("requiredDuringSchedulingIgnoredDuringExecution"))):
        errs += _validate_pod_affinity_term(term, allow_invalid_label_value,
                                            required_path.index(index))
    preferred_path = path.child("preferredDuringSchedulingIgnoredDuringExecution")
    for index, weighted in enumerate(dicts(
            affinity.get("preferredDuringSchedulingIgnoredDuringExecution"))):
        weight = i(weighted, "weight")
        if weight <= 0 or weight > 100:
            errs.append(FieldError.invalid(preferred_path.index(index).child("weight"), weight,
                                           "must be in the range 1-100"))
        errs += _validate_pod_affinity_term(d(weighted, "podAffinityTerm"),
                                            allow_invalid_label_value,
                                            preferred_path.index(index).child("podAffinityTerm"))
    return errs


def validate_affinity(affinity: dict | None, opts: PodValidationOptions,
                      path: FieldPath) -> list[FieldError]:
    """``validateAffinity``."""
    if affinity is None:
        return []
    errs = []
    node = opt(affinity, "nodeAffinity")
    if node is not None:
        errs += _validate_node_affinity(node, path.child("nodeAffinity"))
    for kind in ("podAffinity", "podAntiAffinity"):
        section = opt(affinity, kind)
        if section is not None:
            errs += _validate_pod_affinity(section, opts.allow_invalid_label_value_in_selector,
                                           path.child(kind))
    return errs


# -- tolerations ------------------------------------------------------------------------------

def validate_taint_effect(effect: str, allow_empty: bool, path: FieldPath) -> list[FieldError]:
    """``validateTaintEffect``."""
    if not allow_empty and not effect:
        return [FieldError.required(path, "")]
    if effect not in _TAINT_EFFECTS:
        return [FieldError.not_supported(path, effect, _TAINT_EFFECTS)]
    return []


def validate_tolerations(tolerations: list, path: FieldPath) -> list[FieldError]:
    """``ValidateTolerations``."""
    errs = []
    for index, toleration in enumerate(dicts(tolerations)):
        item_path = path.index(index)
        key, operator = s(toleration, "key"), s(toleration, "operator")
        value, effect = s(toleration, "value"), s(toleration, "effect")
        if key:
            errs += apivalidation.validate_label_name(key, item_path.child("key"))
        if not key and operator != "Exists":
            errs.append(FieldError.invalid(item_path.child("operator"), operator,
                                           "operator must be Exists when `key` is empty, which "
                                           "means \"match all values and all keys\""))
        if toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
            errs.append(FieldError.invalid(item_path.child("effect"), effect,
                                           "effect must be 'NoExecute' when `tolerationSeconds` "
                                           "is set"))
        if operator in ("Equal", ""):
            messages = apivalidation.is_valid_label_value(value)
            if messages:
                errs.append(FieldError.invalid(item_path.child("operator"), value,
                                               ";".join(messages)))
        elif operator == "Exists":
            if value:
                errs.append(FieldError.invalid(item_path.child("operator"), value,
                                               "value must be empty when `operator` is 'Exists'"))
        else:
            errs.append(FieldError.not_supported(item_path.child("operator"), operator,
                                                 ("Equal", "Exists")))
        if effect:
            errs += validate_taint_effect(effect, True, item_path.child("effect"))
    return errs


def _toleration_key(toleration: dict) -> tuple:
    return (s(toleration, "key"), s(toleration, "operator"), s(toleration, "value"),
            s(toleration, "effect"))


def validate_only_added_tolerations(new: list, old: list, path: FieldPath) -> list[FieldError]:
    """``validateOnlyAddedTolerations``: existing tolerations stay, but for their seconds."""
    new_keys = [_toleration_key(t) for t in dicts(new)]
    for toleration in dicts(old):
        if _toleration_key(toleration) not in new_keys:
            return [FieldError.forbidden(path, "existing toleration can not be modified except "
                                               "its tolerationSeconds")]
    return validate_tolerations(new, path)


# -- topology spread ----------------------------------------------------------------------------

def _validate_match_label_keys_in_topology_spread(path: FieldPath, keys: list[str],
                                                  selector: dict | None) -> list[FieldError]:
    if not keys:
        return []
    errs = []
    selector_keys: set[str] = set()
    if selector is not None:
        selector_keys.update(d(selector, "matchLabels"))
        selector_keys.update(s(e, "key") for e in dicts(selector.get("matchExpressions")))
    else:
        errs.append(FieldError.forbidden(path, "must not be specified when labelSelector is not "
                                               "set"))
    for index, key in enumerate(keys):
        errs += apivalidation.validate_label_name(key, path.index(index))
        if key in selector_keys:
            errs.append(FieldError.invalid(path.index(index), key,
                                           "exists in both matchLabelKeys and labelSelector"))
    return errs


def validate_topology_spread_constraints(constraints: list, path: FieldPath,
                                         opts: PodValidationOptions) -> list[FieldError]:
    """``validateTopologySpreadConstraints``."""
    errs = []
    constraints = dicts(constraints)
    for index, constraint in enumerate(constraints):
        item_path = path.index(index)
        max_skew = i(constraint, "maxSkew")
        if max_skew <= 0:
            errs.append(FieldError.invalid(item_path.child("maxSkew"), max_skew,
                                           IS_NOT_POSITIVE_ERROR_MSG))
        topology_key = s(constraint, "topologyKey")
        if not topology_key:
            errs.append(FieldError.required(item_path.child("topologyKey"), "can not be empty"))
        action = s(constraint, "whenUnsatisfiable")
        if action not in _SCHEDULE_ACTIONS:
            errs.append(FieldError.not_supported(item_path.child("whenUnsatisfiable"), action,
                                                 _SCHEDULE_ACTIONS))
        for rest in constraints[index + 1:]:
            if (s(rest, "topologyKey"), s(rest, "whenUnsatisfiable")) == (topology_key, action):
                errs.append(FieldError.duplicate(
                    item_path.child("{topologyKey, whenUnsatisfiable}"),
                    f"{{{topology_key}, {action}}}"))
                break
        min_domains = opt_int(constraint, "minDomains")
        if min_domains is not None:
            if min_domains <= 0:
                errs.append(FieldError.invalid(item_path.child("minDomains"), min_domains,
                                               IS_NOT_POSITIVE_ERROR_MSG))
            if action != "DoNotSchedule":
                errs.append(FieldError.invalid(item_path.child("minDomains"), min_domains,
                                               "can only use minDomains if "
                                               f"whenUnsatisfiable=DoNotSchedule, not {action}"))
        for key in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            policy = opt_str(constraint, key)
            if policy is not None and policy not in _NODE_INCLUSION_POLICIES:
                errs.append(FieldError.not_supported(item_path.child(key), policy,
                                                     _NODE_INCLUSION_POLICIES))
        errs += _validate_match_label_keys_in_topology_spread(
            item_path.child("matchLabelKeys"), strs(constraint.get("matchLabelKeys")),
            opt(constraint, "labelSelector"))
        if not opts.allow_invalid_topology_spread_constraint_label_selector:
            errs += validate_label_selector(opt(constraint, "labelSelector"),
                                            LabelSelectorValidationOptions(),
                                            item_path.child("labelSelector"))
    return errs


# -- gates ----------------------------------------------------------------------------------------

def validate_readiness_gates(gates: list, path: FieldPath) -> list[FieldError]:
    """``validateReadinessGates``: qualified condition types."""
    errs = []
    for index, gate in enumerate(dicts(gates)):
        errs += validate_qualified_name(s(gate, "conditionType"),
                                        path.index(index).child("conditionType"))
    return errs


def validate_scheduling_gates(gates: list, path: FieldPath) -> list[FieldError]:
    """``validateSchedulingGates``: qualified names, no duplicates."""
    errs = []
    seen: set[str] = set()
    for index, gate in enumerate(dicts(gates)):
        name = s(gate, "name")
        errs += validate_qualified_name(name, path.index(index))
        if name in seen:
            errs.append(FieldError.duplicate(path.index(index), name))
        seen.add(name)
    return errs


def validate_only_deleted_scheduling_gates(new: list, old: list,
                                           path: FieldPath) -> list[FieldError]:
    """``validateOnlyDeletedSchedulingGates``: gates may only be removed."""
    new_gates = dicts(new)
    if not new_gates:
        return []
    added = {s(gate, "name"): index for index, gate in enumerate(new_gates)}
    for gate in dicts(old):
        added.pop(s(gate, "name"), None)
    return [FieldError.forbidden(path.index(index).child("name"),
                                 f"only deletion is allowed, but found new scheduling gate "
                                 f"'{name}'") for name, index in added.items()]
