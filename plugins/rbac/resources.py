"""Roles, ClusterRoles, RoleBindings and ClusterRoleBindings: specs, defaults, validation,
tables (``pkg/apis/rbac/validation``, ``pkg/apis/rbac/v1/defaults.go``, rbac printers)."""

from __future__ import annotations

from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue, go_quote
from kapiserver.apimachinery.field_errors import go_string_slice
from kapiserver.apimachinery.validation import (validate_path_segment_name,
                                                validate_service_account_name)
from kapiserver.registry.printers import AGE_COLUMN, NAME_COLUMN, age
from kapiserver.registry.resource import ResourceSpec
from kapiserver.registry.strategy import Strategy

GROUP = "rbac.authorization.k8s.io"


def _spec(kind, resource, namespaced, storage_version_hash):
    return ResourceSpec(group=GROUP, version="v1", kind=kind, resource=resource,
                        singular=resource[:-1], namespaced=namespaced,
                        storage_version_hash=storage_version_hash)


ROLES = _spec("Role", "roles", True, "7FuwZcIIItM=")
CLUSTERROLES = _spec("ClusterRole", "clusterroles", False, "bYE5ZWDrJ44=")
ROLEBINDINGS = _spec("RoleBinding", "rolebindings", True, "eGsCzGH6b1g=")
CLUSTERROLEBINDINGS = _spec("ClusterRoleBinding", "clusterrolebindings", False, "48tpQ8gZHFc=")

SERVICE_ACCOUNT, USER, GROUP_KIND = "ServiceAccount", "User", "Group"


def _list(obj: dict, key: str) -> list:
    value = obj.get(key)
    return value if isinstance(value, list) else []


def validate_policy_rule(rule: dict, namespaced: bool, path: FieldPath) -> list:
    """``ValidatePolicyRule``."""
    errs = []
    if not _list(rule, "verbs"):
        errs.append(FieldError.required(path.child("verbs"),
                                        "verbs must contain at least one value"))
    urls = _list(rule, "nonResourceURLs")
    if urls:
        value = GoValue(go_string_slice(urls))
        if namespaced:
            errs.append(FieldError.invalid(path.child("nonResourceURLs"), value,
                                           "namespaced rules cannot apply to non-resource URLs"))
        if _list(rule, "apiGroups") or _list(rule, "resources") or _list(rule, "resourceNames"):
            errs.append(FieldError.invalid(path.child("nonResourceURLs"), value,
                                           "rules cannot apply to both regular resources and "
                                           "non-resource URLs"))
        return errs
    if not _list(rule, "apiGroups"):
        errs.append(FieldError.required(path.child("apiGroups"),
                                        "resource rules must supply at least one api group"))
    if not _list(rule, "resources"):
        errs.append(FieldError.required(path.child("resources"),
                                        "resource rules must supply at least one resource"))
    return errs


def validate_rules(obj: dict, namespaced: bool) -> list:
    errs = []
    for i, rule in enumerate(_list(obj, "rules")):
        errs += validate_policy_rule(rule if isinstance(rule, dict) else {}, namespaced,
                                     FieldPath("rules").index(i))
    return errs


def validate_aggregation_rule(obj: dict) -> list:
    """``ValidateClusterRole``'s aggregationRule part."""
    from kapiserver.apimachinery.labels import SelectorError, selector_from_label_selector

    rule = obj.get("aggregationRule")
    if not isinstance(rule, dict):
        return []
    path = FieldPath("aggregationRule", "clusterRoleSelectors")
    selectors = _list(rule, "clusterRoleSelectors")
    errs = []
    if not selectors:
        errs.append(FieldError.required(path, "at least one clusterRoleSelector required if "
                                              "aggregationRule is non-nil"))
    for i, selector in enumerate(selectors):
        try:
            selector_from_label_selector(selector if isinstance(selector, dict) else {})
        except SelectorError as err:
            errs.append(FieldError.invalid(path.index(i), GoValue("nil"), str(err)))
    return errs


def _role_ref(obj: dict) -> dict:
    ref = obj.get("roleRef")
    return ref if isinstance(ref, dict) else {}


def validate_subject(subject: dict, namespaced: bool, path: FieldPath) -> list:
    """``ValidateRoleBindingSubject``."""
    errs = []
    name, kind = subject.get("name") or "", subject.get("kind") or ""
    api_group = subject.get("apiGroup") or ""
    if not name:
        errs.append(FieldError.required(path.child("name")))
    if kind == SERVICE_ACCOUNT:
        if name:
            errs += [FieldError.invalid(path.child("name"), name, msg)
                     for msg in validate_service_account_name(name, False)]
        if api_group:
            errs.append(FieldError.not_supported(path.child("apiGroup"), api_group, [""]))
        if not namespaced and not subject.get("namespace"):
            errs.append(FieldError.required(path.child("namespace")))
    elif kind in (USER, GROUP_KIND):
        if api_group != GROUP:
            errs.append(FieldError.not_supported(path.child("apiGroup"), api_group, [GROUP]))
    else:
        errs.append(FieldError.not_supported(path.child("kind"), kind,
                                             [SERVICE_ACCOUNT, USER, GROUP_KIND]))
    return errs


def validate_binding(obj: dict, namespaced: bool) -> list:
    """``ValidateRoleBinding`` / ``ValidateClusterRoleBinding`` (after the metadata)."""
    ref = _role_ref(obj)
    errs = []
    if (ref.get("apiGroup") or "") != GROUP:
        errs.append(FieldError.not_supported(FieldPath("roleRef", "apiGroup"),
                                             ref.get("apiGroup") or "", [GROUP]))
    kinds = ["Role", "ClusterRole"] if namespaced else ["ClusterRole"]
    if (ref.get("kind") or "") not in kinds:
        errs.append(FieldError.not_supported(FieldPath("roleRef", "kind"), ref.get("kind") or "",
                                             kinds))
    name = ref.get("name") or ""
    if not name:
        errs.append(FieldError.required(FieldPath("roleRef", "name")))
    else:
        errs += [FieldError.invalid(FieldPath("roleRef", "name"), name, msg)
                 for msg in validate_path_segment_name(name, False)]
    for i, subject in enumerate(_list(obj, "subjects")):
        errs += validate_subject(subject if isinstance(subject, dict) else {}, namespaced,
                                 FieldPath("subjects").index(i))
    return errs


def go_role_ref(ref: dict) -> GoValue:
    """A ``rbac.RoleRef`` as ``%#v`` prints it."""
    return GoValue(f"rbac.RoleRef{{APIGroup:{go_quote(ref.get('apiGroup') or '')}, "
                   f"Kind:{go_quote(ref.get('kind') or '')}, "
                   f"Name:{go_quote(ref.get('name') or '')}}}")


class RBACStrategy(Strategy):
    """What the four kinds share: names are path segments (``ValidateRBACName``)."""

    #: ``rules``, ``subjects`` and ``clusterRoleSelectors`` are atomic lists upstream (no
    #: patchMergeKey): a strategic merge patch replaces them whole.
    merge_keys: dict = {}

    def name_validator(self):
        return validate_path_segment_name


class RoleStrategy(RBACStrategy):
    """``ValidateRole`` / ``ValidateClusterRole``: rules, and a ClusterRole's aggregation."""

    def validate(self, obj):
        errs = super().validate(obj) + validate_rules(obj, self.spec.namespaced)
        if not self.spec.namespaced:
            errs += validate_aggregation_rule(obj)
        return errs


class BindingStrategy(RBACStrategy):
    """``ValidateRoleBinding`` / ``ValidateClusterRoleBinding``; roleRef is immutable."""

    def apply_defaults(self, obj):
        # SetDefaults_RoleBinding / SetDefaults_Subject
        ref = obj.get("roleRef")
        if isinstance(ref, dict) and not ref.get("apiGroup"):
            ref["apiGroup"] = GROUP
        for subject in _list(obj, "subjects"):
            if isinstance(subject, dict) and not subject.get("apiGroup") and \
                    subject.get("kind") in (USER, GROUP_KIND):
                subject["apiGroup"] = GROUP

    def validate(self, obj):
        return super().validate(obj) + validate_binding(obj, self.spec.namespaced)

    def validate_update(self, new, old):
        errs = super().validate_update(new, old)
        ref, old_ref = _role_ref(new), _role_ref(old)
        fields = ("apiGroup", "kind", "name")
        if any((ref.get(f) or "") != (old_ref.get(f) or "") for f in fields):
            errs.append(FieldError.invalid(FieldPath("roleRef"), go_role_ref(ref),
                                           "cannot change roleRef"))
        return errs

    def table_columns(self):
        # printers.go: the role column's text is the v1beta1 roleRef documentation.
        where = "roleBinding" if self.spec.namespaced else "clusterRoleBinding"
        role_doc = ("RoleRef can reference a Role in the current namespace or a ClusterRole "
                    "in the global namespace. If the RoleRef cannot be resolved, the "
                    "Authorizer must return an error." if self.spec.namespaced else
                    "RoleRef can only reference a ClusterRole in the global namespace. If "
                    "the RoleRef cannot be resolved, the Authorizer must return an error.")

        def column(name, description, priority=0):
            return {"name": name, "type": "string", "format": "", "description": description,
                    "priority": priority}

        return [NAME_COLUMN, column("Role", role_doc), AGE_COLUMN,
                column("Users", f"Users in the {where}", 1),
                column("Groups", f"Groups in the {where}", 1),
                column("ServiceAccounts", f"ServiceAccounts in the {where}", 1)]

    def table_cells(self, obj):
        meta = obj.get("metadata") or {}
        ref = _role_ref(obj)
        users, groups, accounts = [], [], []
        for subject in _list(obj, "subjects"):
            kind, name = subject.get("kind"), subject.get("name", "")
            if kind == USER:
                users.append(name)
            elif kind == GROUP_KIND:
                groups.append(name)
            elif kind == SERVICE_ACCOUNT:
                namespace = subject.get("namespace")
                accounts.append(f"{namespace}/{name}" if namespace else name)
        return [meta.get("name", ""), f"{ref.get('kind', '')}/{ref.get('name', '')}",
                age(meta.get("creationTimestamp")), ", ".join(users), ", ".join(groups),
                ", ".join(accounts)]
