"""What webhooks and admission policies share: rules of operations on resources, match
resources, match conditions (CEL), and their v1 defaults, as
``pkg/apis/admissionregistration`` validates and defaults them in 1.32."""

from __future__ import annotations

from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue, go_quote
from kapiserver.apimachinery.selector_validation import (LabelSelectorValidationOptions,
                                                         validate_label_selector)
from kapiserver.apimachinery.validation import is_qualified_name, validate_path_segment_name

from .cel import BOOL, compile_expression

FAILURE_POLICIES = ("Fail", "Ignore")
MATCH_POLICIES = ("Equivalent", "Exact")
SCOPES = ("*", "Cluster", "Namespaced")
#: ``supportedOperations``, sorted as ``sets.List`` sorts them.
OPERATIONS = ("*", "CONNECT", "CREATE", "DELETE", "UPDATE")
MAX_MATCH_CONDITIONS = 64


def dict_of(value) -> dict:
    return value if isinstance(value, dict) else {}


def list_of(value) -> list:
    return value if isinstance(value, list) else []


def str_of(value) -> str:
    return value if isinstance(value, str) else ""


def go_strings(values, go_type: str = "string") -> GoValue:
    """A ``[]T`` of strings as ``%#v`` prints it."""
    if not isinstance(values, list):
        return GoValue(f"[]{go_type}(nil)")
    return GoValue(f"[]{go_type}{{" + ", ".join(go_quote(str_of(v)) for v in values) + "}")


# -- defaults -------------------------------------------------------------------------------------

def set_rule_defaults(rule: dict) -> None:
    """``SetDefaults_Rule``: the scope is ``*``."""
    if rule.get("scope") is None:
        rule["scope"] = "*"


def set_match_resources_defaults(match: dict) -> None:
    """``SetDefaults_MatchResources``, and its rules'."""
    if match.get("matchPolicy") is None:
        match["matchPolicy"] = "Equivalent"
    for key in ("namespaceSelector", "objectSelector"):
        if match.get(key) is None:
            match[key] = {}
    for key in ("resourceRules", "excludeResourceRules"):
        for rule in list_of(match.get(key)):
            if isinstance(rule, dict):
                set_rule_defaults(rule)


# -- rules ------------------------------------------------------------------------------------

def _validate_resources(resources: list, path: FieldPath) -> list[FieldError]:
    """``validateResources``: resources and ``resource/subresource``, wildcards alone."""
    errs = [] if resources else [FieldError.required(path, "")]
    with_wildcard_sub, with_wildcard_resource = set(), set()
    double = single = plain = False
    for i, item in enumerate(resources):
        item = str_of(item)
        if not item:
            errs.append(FieldError.required(path.index(i), ""))
            continue
        double = double or item == "*/*"
        single = single or item == "*"
        if "/" not in item:
            plain = item != "*"
            continue
        resource, sub = item.split("/", 1)
        if resource in with_wildcard_sub:
            errs.append(FieldError.invalid(path.index(i), item, f"if '{resource}/*' is present, "
                                                               f"must not specify {item}"))
        if sub in with_wildcard_resource:
            errs.append(FieldError.invalid(path.index(i), item, f"if '*/{sub}' is present, must "
                                                               f"not specify {item}"))
        if sub == "*":
            with_wildcard_sub.add(resource)
        if resource == "*":
            with_wildcard_resource.add(sub)
    if len(resources) > 1 and double:
        errs.append(FieldError.invalid(path, go_strings(resources),
                                       "if '*/*' is present, must not specify other resources"))
    if single and plain:
        errs.append(FieldError.invalid(path, go_strings(resources), "if '*' is present, must not "
                                       "specify other resources without subresources"))
    return errs


def validate_rule(rule: dict, path: FieldPath) -> list[FieldError]:
    """``validateRule`` (subresources allowed)."""
    errs = []
    groups = list_of(rule.get("apiGroups"))
    if not groups:
        errs.append(FieldError.required(path.child("apiGroups"), ""))
    if len(groups) > 1 and "*" in groups:
        errs.append(FieldError.invalid(path.child("apiGroups"), go_strings(groups),
                                       "if '*' is present, must not specify other API groups"))
    versions = list_of(rule.get("apiVersions"))
    if not versions:
        errs.append(FieldError.required(path.child("apiVersions"), ""))
    if len(versions) > 1 and "*" in versions:
        errs.append(FieldError.invalid(path.child("apiVersions"), go_strings(versions),
                                       "if '*' is present, must not specify other API versions"))
    for i, version in enumerate(versions):
        if not version:
            errs.append(FieldError.required(path.child("apiVersions").index(i), ""))
    errs += _validate_resources(list_of(rule.get("resources")), path.child("resources"))
    scope = rule.get("scope")
    if scope is not None and scope not in SCOPES:
        errs.append(FieldError.not_supported(path.child("scope"), str_of(scope), SCOPES))
    return errs


def validate_rule_with_operations(rule: dict, path: FieldPath) -> list[FieldError]:
    """``validateRuleWithOperations``."""
    errs = []
    operations = list_of(rule.get("operations"))
    if not operations:
        errs.append(FieldError.required(path.child("operations"), ""))
    if len(operations) > 1 and "*" in operations:
        shown = go_strings(operations, "admissionregistration.OperationType")
        errs.append(FieldError.invalid(path.child("operations"), shown,
                                       "if '*' is present, must not specify other operations"))
    for i, operation in enumerate(operations):
        if operation not in OPERATIONS:
            errs.append(FieldError.not_supported(path.child("operations").index(i),
                                                 str_of(operation), OPERATIONS))
    return errs + validate_rule(rule, path)


def validate_selector(selector, path: FieldPath, allow_invalid_label_value: bool = False) -> list:
    options = LabelSelectorValidationOptions(allow_invalid_label_value=allow_invalid_label_value)
    return validate_label_selector(dict_of(selector), options, path)


def _validate_named_rule(rule: dict, path: FieldPath) -> list[FieldError]:
    """``validateNamedRuleWithOperations``: resource names usable in a path, each once."""
    errs, seen = [], set()
    for i, name in enumerate(list_of(rule.get("resourceNames"))):
        name = str_of(name)
        at = path.child("resourceNames").index(i)
        errs += [FieldError.invalid(at, name, msg) for msg in validate_path_segment_name(name)]
        if name in seen:
            errs.append(FieldError.duplicate(at, name))
        seen.add(name)
    return errs + validate_rule_with_operations(rule, path)


def validate_match_resources(match, path: FieldPath) -> list[FieldError]:
    """``validateMatchResources`` (selectors validated strictly)."""
    if match is None:
        return []
    match = dict_of(match)
    errs = []
    policy = match.get("matchPolicy")
    if policy is None:
        errs.append(FieldError.required(path.child("matchPolicy"), ""))
    elif policy not in MATCH_POLICIES:
        errs.append(FieldError.not_supported(path.child("matchPolicy"), str_of(policy),
                                             MATCH_POLICIES))
    for key in ("namespaceSelector", "objectSelector"):
        if match.get(key) is None:
            errs.append(FieldError.required(path.child(key), ""))
        else:
            errs += validate_selector(match[key], path.child(key))
    for key in ("resourceRules", "excludeResourceRules"):
        for i, rule in enumerate(list_of(match.get(key))):
            errs += _validate_named_rule(dict_of(rule), path.child(key).index(i))
    return errs


# -- CEL ------------------------------------------------------------------------------------

def cel_error(path: FieldPath, source: str, error) -> FieldError:
    """``convertCELErrorToValidationError``."""
    if error.kind == "required":
        return FieldError.required(path, error.detail)
    if error.kind == "invalid":
        return FieldError.invalid(path, source, error.detail)
    return FieldError.internal(path, error.detail)


def validate_match_conditions(conditions: list, path: FieldPath,
                              allow_params: bool = False) -> list[FieldError]:
    """``validateMatchConditions``: at most 64, each named (uniquely) and a boolean CEL
    expression."""
    errs = []
    if len(conditions) > MAX_MATCH_CONDITIONS:
        errs.append(FieldError.too_many(path, len(conditions), MAX_MATCH_CONDITIONS))
    names = set()
    for i, condition in enumerate(conditions):
        condition = dict_of(condition)
        at = path.index(i)
        expression = str_of(condition.get("expression")).strip()
        if not expression:
            errs.append(FieldError.required(at.child("expression"), ""))
        else:
            error = compile_expression(expression, (BOOL,), params=allow_params,
                                       authorizer=True)
            if error is not None:
                errs.append(cel_error(at.child("expression"), expression, error))
        name = str_of(condition.get("name"))
        if not name:
            errs.append(FieldError.required(at.child("name"), ""))
        else:
            errs += [FieldError.invalid(at.child("name"), name, msg)
                     for msg in is_qualified_name(name)]
        if name:
            if name in names:
                errs.append(FieldError.duplicate(at.child("name"), name))
            names.add(name)
    return errs
