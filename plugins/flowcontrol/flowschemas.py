"""FlowSchemas (with ``status``): ``ValidateFlowSchema`` of
``pkg/apis/flowcontrol/validation``, ``SetDefaults_FlowSchemaSpec`` and the ``flowschema``
registry strategies of 1.32, as objects: which requests they classify, and the bootstrap
schemas, are the API priority and fairness filter's business."""

from __future__ import annotations

from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue
from kapiserver.apimachinery.gosyntax import (go_bool, go_int, go_pointer, go_slice, go_str,
                                              go_string_slice, go_struct)
from kapiserver.apimachinery.validation import (name_is_dns_label, name_is_dns_subdomain,
                                                validate_core_object_meta,
                                                validate_core_object_meta_update)
from kapiserver.registry.builtin import builtin_spec
from kapiserver.registry.builtin_strategy import BuiltinStrategy
from kapiserver.registry.printers import age

from .common import (dict_of, keep_metadata_for_status, list_of, str_of,
                     validate_status_conditions)

FLOW_SCHEMAS = builtin_spec("flowcontrol.apiserver.k8s.io", "v1", "flowschemas")
DEFAULT_MATCHING_PRECEDENCE = 1000
MAX_MATCHING_PRECEDENCE = 10000
DISTINGUISHER_METHODS = ("ByNamespace", "ByUser")
#: ``supportedVerbs``, sorted as ``sets.List`` sorts them.
VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update",
         "watch")
SUBJECT_KINDS = ("Group", "ServiceAccount", "User")
NAMESPACE_INTRO = "each member of this list must be '*' or a DNS-1123 label; "
EXEMPT, CATCH_ALL = "exempt", "catch-all"
_EVERYTHING = {"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                                  "clusterScope": True, "namespaces": ["*"]}],
               "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}


def _group(name: str) -> dict:
    return {"kind": "Group", "group": {"name": name}}


#: ``internalbootstrap.MandatoryFlowSchemas``: their specs may not be changed.
MANDATORY_SPECS = {
    EXEMPT: {"priorityLevelConfiguration": {"name": EXEMPT}, "matchingPrecedence": 1,
             "rules": [{"subjects": [_group("system:masters")], **_EVERYTHING}]},
    CATCH_ALL: {"priorityLevelConfiguration": {"name": CATCH_ALL},
                "matchingPrecedence": MAX_MATCHING_PRECEDENCE,
                "distinguisherMethod": {"type": "ByUser"},
                "rules": [{"subjects": [_group("system:unauthenticated"),
                                        _group("system:authenticated")], **_EVERYTHING}]},
}


def set_flow_schema_defaults(obj: dict) -> None:
    """``SetDefaults_FlowSchemaSpec``: matchingPrecedence 1000 when unset."""
    spec = obj.get("spec")
    if isinstance(spec, dict) and not spec.get("matchingPrecedence"):
        spec["matchingPrecedence"] = DEFAULT_MATCHING_PRECEDENCE


# -- the spec as %#v prints it -----------------------------------------------------------------

def _strings(value) -> str:
    return go_string_slice([str_of(v) for v in value] if isinstance(value, list) else None)


def _go_subject(subject: dict) -> str:
    return go_struct("flowcontrol.Subject", (
        ("Kind", go_str(subject.get("kind"))),
        ("User", go_pointer("flowcontrol.UserSubject", subject.get("user") is not None)),
        ("Group", go_pointer("flowcontrol.GroupSubject", subject.get("group") is not None)),
        ("ServiceAccount", go_pointer("flowcontrol.ServiceAccountSubject",
                                      subject.get("serviceAccount") is not None))))


def _go_resource_rule(rule: dict) -> str:
    return go_struct("flowcontrol.ResourcePolicyRule", (
        ("Verbs", _strings(rule.get("verbs"))), ("APIGroups", _strings(rule.get("apiGroups"))),
        ("Resources", _strings(rule.get("resources"))),
        ("ClusterScope", go_bool(rule.get("clusterScope"))),
        ("Namespaces", _strings(rule.get("namespaces")))))


def _go_non_resource_rule(rule: dict) -> str:
    return go_struct("flowcontrol.NonResourcePolicyRule", (
        ("Verbs", _strings(rule.get("verbs"))),
        ("NonResourceURLs", _strings(rule.get("nonResourceURLs")))))


def _go_items(go_type: str, items, render) -> str:
    return go_slice(go_type, None if not isinstance(items, list)
                    else [render(dict_of(item)) for item in items])


def _go_rule(rule: dict) -> str:
    return go_struct("flowcontrol.PolicyRulesWithSubjects", (
        ("Subjects", _go_items("flowcontrol.Subject", rule.get("subjects"), _go_subject)),
        ("ResourceRules", _go_items("flowcontrol.ResourcePolicyRule", rule.get("resourceRules"),
                                    _go_resource_rule)),
        ("NonResourceRules", _go_items("flowcontrol.NonResourcePolicyRule",
                                       rule.get("nonResourceRules"), _go_non_resource_rule))))


def go_flow_schema_spec(spec: dict) -> GoValue:
    """A ``flowcontrol.FlowSchemaSpec`` as ``%#v`` prints it."""
    reference = dict_of(spec.get("priorityLevelConfiguration"))
    return GoValue(go_struct("flowcontrol.FlowSchemaSpec", (
        ("PriorityLevelConfiguration", go_struct(
            "flowcontrol.PriorityLevelConfigurationReference",
            (("Name", go_str(reference.get("name"))),))),
        ("MatchingPrecedence", go_int(spec.get("matchingPrecedence"))),
        ("DistinguisherMethod", go_pointer("flowcontrol.FlowDistinguisherMethod",
                                           spec.get("distinguisherMethod") is not None)),
        ("Rules", _go_items("flowcontrol.PolicyRulesWithSubjects", spec.get("rules"),
                            _go_rule)))))


# -- validation ------------------------------------------------------------------------------------

def _validate_subject(subject: dict, path: FieldPath) -> list[FieldError]:
    """``ValidateFlowSchemaSubject``: the member named by ``kind``, and no other."""
    kind = subject.get("kind")
    members = {"ServiceAccount": "serviceAccount", "User": "user", "Group": "group"}
    if kind not in members:
        return [FieldError.not_supported(path.child("kind"), str_of(kind), SUBJECT_KINDS)]
    member = members[kind]
    errs = []
    value = subject.get(member)
    if value is None:
        errs.append(FieldError.required(path.child(member), f"{member} is required when subject "
                                                            f"kind is '{kind}'"))
    elif kind == "ServiceAccount":
        value = dict_of(value)
        name, namespace = str_of(value.get("name")), str_of(value.get("namespace"))
        at = path.child(member)
        if not name:
            errs.append(FieldError.required(at.child("name"), ""))
        elif name != "*":
            errs += [FieldError.invalid(at.child("name"), name, msg)
                     for msg in name_is_dns_subdomain(name)]
        if namespace:
            errs += [FieldError.invalid(at.child("namespace"), namespace, msg)
                     for msg in name_is_dns_label(namespace)]
        else:
            errs.append(FieldError.required(at.child("namespace"),
                                            "must specify namespace for service account"))
    elif not str_of(dict_of(value).get("name")):
        errs.append(FieldError.required(path.child(member, "name"), ""))
    for other, other_kind in (("serviceAccount", "ServiceAccount"), ("user", "User"),
                              ("group", "Group")):
        if other != member and subject.get(other) is not None:
            errs.append(FieldError.forbidden(path.child(other), f"{other} is forbidden when "
                                                                f"subject kind is not "
                                                                f"'{other_kind}'"))
    return errs


def _validate_verbs(verbs: list, path: FieldPath) -> list[FieldError]:
    if not verbs:
        return [FieldError.required(path, "verbs must contain at least one value")]
    if "*" in verbs:
        if len(verbs) > 1:
            return [FieldError.invalid(path, GoValue(_strings(verbs)),
                                       "if '*' is present, must not specify other verbs")]
        return []
    if any(verb not in VERBS for verb in verbs):
        return [FieldError.not_supported(path, GoValue(_strings(verbs)), VERBS)]
    return []


def validate_non_resource_url_path(url: str, path: FieldPath) -> FieldError | None:
    """``ValidateNonResourceURLPath``."""
    if not url:
        return FieldError.invalid(path, url, "must not be empty")
    if url == "/":
        return None
    if not url.startswith("/"):
        return FieldError.invalid(path, url, "must start with slash")
    if " " in url:
        return FieldError.invalid(path, url, "must not contain white-space")
    if "//" in url:
        return FieldError.invalid(path, url, "must not contain double slash")
    wildcards = url.count("*")
    if wildcards > 1 or (wildcards == 1 and url[-2:] != "/*"):
        return FieldError.invalid(path, url, "wildcard can only do suffix matching")
    return None


def _validate_non_resource_rule(rule: dict, path: FieldPath) -> list[FieldError]:
    errs = _validate_verbs(list_of(rule.get("verbs")), path.child("verbs"))
    urls = [str_of(u) for u in list_of(rule.get("nonResourceURLs"))]
    at = path.child("nonResourceURLs")
    if not urls:
        errs.append(FieldError.required(at, "nonResourceURLs must contain at least one value"))
    elif "*" in urls:
        if len(urls) > 1:
            errs.append(FieldError.invalid(at, GoValue(_strings(urls)), "if '*' is present, "
                                           "must not specify other non-resource URLs"))
    else:
        for i, url in enumerate(urls):
            error = validate_non_resource_url_path(url, at.index(i))
            if error is not None:
                errs.append(error)
    return errs


def _validate_resource_rule(rule: dict, path: FieldPath) -> list[FieldError]:
    errs = _validate_verbs(list_of(rule.get("verbs")), path.child("verbs"))
    for key, noun in (("apiGroups", "api group"), ("resources", "resource")):
        values = list_of(rule.get(key))
        if not values:
            errs.append(FieldError.required(path.child(key), f"resource rules must supply at "
                                                             f"least one {noun}"))
        elif len(values) > 1 and "*" in values:
            plural = "api groups" if key == "apiGroups" else "resources"
            errs.append(FieldError.invalid(path.child(key), GoValue(_strings(values)),
                                           f"if '*' is present, must not specify other "
                                           f"{plural}"))
    namespaces = [str_of(n) for n in list_of(rule.get("namespaces"))]
    at = path.child("namespaces")
    if not namespaces and rule.get("clusterScope") is not True:
        errs.append(FieldError.required(at, "resource rules that are not cluster scoped must "
                                            "supply at least one namespace"))
    elif "*" in namespaces:
        if len(namespaces) > 1:
            errs.append(FieldError.invalid(at, GoValue(_strings(namespaces)),
                                           "if '*' is present, must not specify other "
                                           "namespaces"))
    else:
        for i, namespace in enumerate(namespaces):
            errs += [FieldError.invalid(at.index(i), namespace, NAMESPACE_INTRO + msg)
                     for msg in name_is_dns_label(namespace)]
    return errs


def _validate_rule(rule: dict, path: FieldPath) -> list[FieldError]:
    """``ValidateFlowSchemaPolicyRulesWithSubjects``."""
    errs = []
    subjects = list_of(rule.get("subjects"))
    if subjects:
        for i, subject in enumerate(subjects):
            errs += _validate_subject(dict_of(subject), path.child("subjects").index(i))
    else:
        errs.append(FieldError.required(path.child("subjects"),
                                        "subjects must contain at least one value"))
    resource_rules = list_of(rule.get("resourceRules"))
    non_resource_rules = list_of(rule.get("nonResourceRules"))
    if not resource_rules and not non_resource_rules:
        errs.append(FieldError.required(path, "at least one of resourceRules and "
                                              "nonResourceRules has to be non-empty"))
    for i, item in enumerate(resource_rules):
        errs += _validate_resource_rule(dict_of(item), path.child("resourceRules").index(i))
    for i, item in enumerate(non_resource_rules):
        errs += _validate_non_resource_rule(dict_of(item),
                                            path.child("nonResourceRules").index(i))
    return errs


def validate_flow_schema_spec(name: str, spec: dict, path: FieldPath) -> list[FieldError]:
    """``ValidateFlowSchemaSpec``."""
    errs = []
    precedence = spec.get("matchingPrecedence")
    precedence = precedence if isinstance(precedence, int) else 0
    at = path.child("matchingPrecedence")
    if precedence <= 0:
        errs.append(FieldError.invalid(at, precedence, "must be a positive value"))
    if precedence > MAX_MATCHING_PRECEDENCE:
        errs.append(FieldError.invalid(at, precedence, f"must not be greater than "
                                                       f"{MAX_MATCHING_PRECEDENCE}"))
    if precedence == 1 and name != EXEMPT:
        errs.append(FieldError.invalid(at, precedence, "only the schema named 'exempt' may "
                                                       "have matchingPrecedence 1"))
    method = spec.get("distinguisherMethod")
    if method is not None and dict_of(method).get("type") not in DISTINGUISHER_METHODS:
        shown = GoValue(go_struct("flowcontrol.FlowDistinguisherMethod",
                                  (("Type", go_str(dict_of(method).get("type"))),)))
        errs.append(FieldError.not_supported(path.child("distinguisherMethod", "type"), shown,
                                             DISTINGUISHER_METHODS))
    level = str_of(dict_of(spec.get("priorityLevelConfiguration")).get("name"))
    level_path = path.child("priorityLevelConfiguration", "name")
    if level:
        errs += [FieldError.invalid(level_path, level, msg)
                 for msg in name_is_dns_subdomain(level)]
    else:
        errs.append(FieldError.required(level_path, "must reference a priority level"))
    for i, rule in enumerate(list_of(spec.get("rules"))):
        errs += _validate_rule(dict_of(rule), path.child("rules").index(i))
    return errs


def validate_flow_schema(obj: dict) -> list[FieldError]:
    """``ValidateFlowSchema``: the mandatory schemas keep their fixed spec."""
    meta, spec = dict_of(obj.get("metadata")), dict_of(obj.get("spec"))
    name = str_of(meta.get("name"))
    errs = validate_core_object_meta(meta, False, name_is_dns_subdomain)
    errs += validate_flow_schema_spec(name, spec, FieldPath("spec"))
    if name in MANDATORY_SPECS and spec != MANDATORY_SPECS[name]:
        errs.append(FieldError.invalid(FieldPath("spec"), go_flow_schema_spec(spec),
                                       f"spec of '{name}' must equal the fixed value"))
    return errs + validate_status_conditions(obj)


class FlowSchemaStrategy(BuiltinStrategy):
    """``pkg/registry/flowcontrol/flowschema`` strategy."""

    has_generation = True

    def set_defaults(self, obj):
        set_flow_schema_defaults(obj)

    def validate(self, obj):
        return validate_flow_schema(obj)

    def validate_update(self, new, old):
        return validate_core_object_meta_update(dict_of(new.get("metadata")),
                                                dict_of(old.get("metadata"))) + \
            validate_flow_schema(new)

    def prepare_status_update(self, new, old):
        super().prepare_status_update(new, old)
        keep_metadata_for_status(new, old)

    def validate_status(self, new, old):
        return validate_status_conditions(new)

    def table_cells(self, obj):
        meta, spec = dict_of(obj.get("metadata")), dict_of(obj.get("spec"))
        method = spec.get("distinguisherMethod")
        missing = "?"
        for condition in list_of(dict_of(obj.get("status")).get("conditions")):
            if dict_of(condition).get("type") == "Dangling":
                missing = str_of(condition.get("status"))
                break
        precedence = spec.get("matchingPrecedence")
        return [meta.get("name", ""),
                str_of(dict_of(spec.get("priorityLevelConfiguration")).get("name")),
                precedence if isinstance(precedence, int) else 0,
                str_of(dict_of(method).get("type")) if method is not None else "<none>",
                age(meta.get("creationTimestamp")), missing]


def matching_order(obj: dict) -> tuple:
    """``FlowSchemaSequence``: by matchingPrecedence, then by name."""
    precedence = dict_of(obj.get("spec")).get("matchingPrecedence")
    return (precedence if isinstance(precedence, int) else 0,
            str_of(dict_of(obj.get("metadata")).get("name")))
