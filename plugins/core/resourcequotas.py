"""ResourceQuotas (with ``status``): ``pkg/registry/core/resourcequota``.

``spec.hard`` names standard quota resources (or fully qualified ones) with non-negative
quantities, whole numbers for object counts; ``scopes`` and ``scopeSelector`` must apply
to every resource they limit and may not conflict; scopes cannot change. The status (hard
limits in force and usage) is written through ``resourcequotas/status`` by the quota
controller, never by a create or an update.
"""

from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue
from kapiserver.apimachinery.gosyntax import go_slice, go_str, go_string_slice, go_struct
from kapiserver.apimachinery.resource_validation import (is_standard_quota_resource_name,
                                                         validate_resource_quantity_value,
                                                         validate_resource_quota_resource_name)
from kapiserver.apimachinery.validation import (FIELD_IMMUTABLE_ERROR_MSG,
                                                validate_core_object_meta_update)
from kapiserver.registry.builtin import builtin_spec
from kapiserver.registry.printers import age

from .kind_helpers import CoreStrategy, as_dict, as_list, meta_of, resource_list, spec_of, status_of

RESOURCE_QUOTAS = builtin_spec("", "v1", "resourcequotas")
SPEC, STATUS = FieldPath("spec"), FieldPath("status")

TERMINATING, NOT_TERMINATING = "Terminating", "NotTerminating"
BEST_EFFORT, NOT_BEST_EFFORT = "BestEffort", "NotBestEffort"
PRIORITY_CLASS, CROSS_NAMESPACE_POD_AFFINITY = "PriorityClass", "CrossNamespacePodAffinity"
#: ``helper.IsStandardResourceQuotaScope`` in 1.32 (VolumeAttributesClass is off).
STANDARD_SCOPES = (TERMINATING, NOT_TERMINATING, BEST_EFFORT, NOT_BEST_EFFORT, PRIORITY_CLASS,
                   CROSS_NAMESPACE_POD_AFFINITY)
_POD_OBJECT_COUNT = frozenset({"pods"})
_POD_COMPUTE = frozenset({"cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu",
                          "requests.memory"})
_CONFLICTING_SCOPES = ((BEST_EFFORT, NOT_BEST_EFFORT), (TERMINATING, NOT_TERMINATING))
_EXISTS_ONLY_SCOPES = (BEST_EFFORT, NOT_BEST_EFFORT, TERMINATING, NOT_TERMINATING,
                       CROSS_NAMESPACE_POD_AFFINITY)


def scope_valid_for_resource(scope: str, resource: str) -> bool:
    """``helper.IsResourceQuotaScopeValidForResource``."""
    if scope in (TERMINATING, NOT_TERMINATING, NOT_BEST_EFFORT, PRIORITY_CLASS,
                 CROSS_NAMESPACE_POD_AFFINITY):
        return resource in _POD_OBJECT_COUNT or resource in _POD_COMPUTE
    if scope == BEST_EFFORT:
        return resource in _POD_OBJECT_COUNT
    return True


def _go_scopes(scopes) -> GoValue:
    """``%#v`` of a ``[]core.ResourceQuotaScope``."""
    return GoValue(go_slice("core.ResourceQuotaScope",
                            None if not isinstance(scopes, list) else
                            [go_str(scope) for scope in scopes]))


def _go_scope_selector(selector: dict) -> GoValue:
    """``%#v`` of the ``core.ScopeSelector`` a pointer points to."""
    expressions = selector.get("matchExpressions")
    rendered = None if not isinstance(expressions, list) else [
        go_struct("core.ScopedResourceSelectorRequirement", (
            ("ScopeName", go_str(as_dict(e).get("scopeName"))),
            ("Operator", go_str(as_dict(e).get("operator"))),
            ("Values", go_string_slice(as_dict(e).get("values")
                                       if isinstance(as_dict(e).get("values"), list)
                                       else None))))
        for e in expressions]
    return GoValue(go_struct("core.ScopeSelector", (
        ("MatchExpressions", go_slice("core.ScopedResourceSelectorRequirement", rendered)),)))


def _validate_hard(hard, path: FieldPath) -> list:
    errs = []
    for name, value in resource_list(hard):
        errs += validate_resource_quota_resource_name(name, path.key(name))
        errs += validate_resource_quantity_value(name, value, path.key(name))
    return errs


def _validate_scopes(spec: dict, path: FieldPath) -> list:
    """``validateResourceQuotaScopes``."""
    scopes = spec.get("scopes")
    if not as_list(scopes):
        return []
    hard = sorted(as_dict(spec.get("hard")))
    scopes_path = path.child("scopes")
    errs, seen = [], set()
    for scope in as_list(scopes):
        if scope not in STANDARD_SCOPES:
            errs.append(FieldError.invalid(scopes_path, _go_scopes(scopes), "unsupported scope"))
        for resource in hard:
            if is_standard_quota_resource_name(resource) and \
                    not scope_valid_for_resource(scope, resource):
                errs.append(FieldError.invalid(scopes_path, _go_scopes(scopes),
                                               "unsupported scope applied to resource"))
        seen.add(scope)
    for pair in _CONFLICTING_SCOPES:
        if all(scope in seen for scope in pair):
            errs.append(FieldError.invalid(scopes_path, _go_scopes(scopes), "conflicting scopes"))
    return errs


def _validate_scope_selector(spec: dict, path: FieldPath) -> list:
    """``validateScopeSelector`` and ``validateScopedResourceSelectorRequirement``."""
    selector = spec.get("scopeSelector")
    if not isinstance(selector, dict):
        return []
    hard = sorted(as_dict(spec.get("hard")))
    expressions_path = path.child("scopeSelector", "matchExpressions")
    errs, seen = [], set()
    for requirement in as_list(selector.get("matchExpressions")):
        requirement = as_dict(requirement)
        scope = requirement.get("scopeName") or ""
        operator = requirement.get("operator") or ""
        values = requirement.get("values")
        if scope not in STANDARD_SCOPES:
            errs.append(FieldError.invalid(expressions_path.child("scopeName"), scope,
                                           "unsupported scope"))
        for resource in hard:
            if is_standard_quota_resource_name(resource) and \
                    not scope_valid_for_resource(scope, resource):
                errs.append(FieldError.invalid(expressions_path, _go_scope_selector(selector),
                                               "unsupported scope applied to resource"))
        if scope in _EXISTS_ONLY_SCOPES and operator != "Exists":
            errs.append(FieldError.invalid(
                expressions_path.child("operator"), operator,
                "must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, "
                "ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, "
                "ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"))
        if operator in ("In", "NotIn"):
            if not as_list(values):
                errs.append(FieldError.required(
                    expressions_path.child("values"),
                    "must be at least one value when `operator` is 'In' or 'NotIn' for scope "
                    "selector"))
        elif operator in ("Exists", "DoesNotExist"):
            if as_list(values):
                errs.append(FieldError.invalid(
                    expressions_path.child("values"), GoValue(go_string_slice(values)),
                    "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope "
                    "selector"))
        else:
            errs.append(FieldError.invalid(expressions_path.child("operator"), operator,
                                           "not a valid selector operator"))
        seen.add(scope)
    for pair in _CONFLICTING_SCOPES:
        if all(scope in seen for scope in pair):
            errs.append(FieldError.invalid(expressions_path, _go_scopes(spec.get("scopes")),
                                           "conflicting scopes"))
    return errs


def validate_quota_spec(spec: dict, path: FieldPath = SPEC) -> list:
    """``ValidateResourceQuotaSpec``."""
    return _validate_hard(spec.get("hard"), path.child("hard")) + \
        _validate_scopes(spec, path) + _validate_scope_selector(spec, path)


def validate_quota_status(status: dict, path: FieldPath = STATUS) -> list:
    """``ValidateResourceQuotaStatus``."""
    return _validate_hard(status.get("hard"), path.child("hard")) + \
        _validate_hard(status.get("used"), path.child("used"))


def _set_quota_defaults(obj: dict) -> None:
    """``SetObjectDefaults_ResourceQuota``: quantities rounded up to thousandths."""
    from kapiserver.apis.core.defaults import set_resource_list_defaults

    for part, lists in (("spec", ("hard",)), ("status", ("hard", "used"))):
        for name in lists:
            set_resource_list_defaults(as_dict(obj.get(part)).get(name))


def _usage_cells(status: dict) -> tuple[str, str]:
    """``printResourceQuota``'s REQUEST and LIMIT cells: ``name: used/hard`` of each hard
    resource by name, ``limits.*`` in the second."""
    used = dict(resource_list(status.get("used")))
    requests, limits = [], []
    for name, hard in resource_list(status.get("hard")):
        in_use = used[name].canonical() if name in used else "0"
        pieces = name.split(".")
        column = limits if len(pieces) > 1 and pieces[0] == "limits" else requests
        column.append(f"{name}: {in_use}/{hard.canonical()}")
    return ", ".join(requests), ", ".join(limits)


class ResourceQuotaStrategy(CoreStrategy):
    """``resourcequota.Strategy`` and its status strategy."""

    #: Its upstream store is built with ``ReturnDeletedObject``: DELETE answers the object.
    return_deleted_object = True

    def set_defaults(self, obj):
        _set_quota_defaults(obj)

    def on_create(self, obj):
        obj["status"] = {}

    def validate(self, obj):
        return super().validate(obj) + validate_quota_spec(spec_of(obj)) + \
            validate_quota_status(status_of(obj))

    def validate_update(self, new, old):
        # ValidateResourceQuotaUpdate: scopes are fixed at creation.
        errs = validate_core_object_meta_update(meta_of(new), meta_of(old))
        errs += validate_quota_spec(spec_of(new))
        scopes = spec_of(new).get("scopes")
        if set(as_list(scopes)) != set(as_list(spec_of(old).get("scopes"))):
            errs.append(FieldError.invalid(SPEC.child("scopes"), _go_scopes(scopes),
                                           FIELD_IMMUTABLE_ERROR_MSG))
        return errs

    def validate_status(self, new, old):
        errs = []
        if not meta_of(new).get("resourceVersion"):
            errs.append(FieldError.required(FieldPath("resourceVersion")))
        return errs + validate_quota_status(status_of(new))

    def table_cells(self, obj):
        meta = meta_of(obj)
        requests, limits = _usage_cells(status_of(obj))
        return [meta.get("name", ""), age(meta.get("creationTimestamp")), requests, limits]


def install(server) -> dict:
    """The handlers of this module's resources, keyed as ``APIGroupInfo`` keys them."""
    from kapiserver.server.apigroups import builtin_handlers

    return builtin_handlers(server, ResourceQuotaStrategy(RESOURCE_QUOTAS))
