"""ValidatingAdmissionPolicies (with ``status``) and their bindings: v1 defaults,
validation (their CEL expressions compiled) and registry strategies, as in 1.32, as
objects: enforcing them is the ValidatingAdmissionPolicy admission plugin's business."""

from __future__ import annotations

import re

from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue, go_quote
from kapiserver.apimachinery.validation import (is_dns1035_label, is_dns1123_subdomain,
                                                is_qualified_name, name_is_dns_subdomain,
                                                validate_object_meta,
                                                validate_object_meta_update,
                                                validate_path_segment_name)
from kapiserver.registry.builtin import builtin_spec
from kapiserver.registry.builtin_strategy import BuiltinStrategy
from kapiserver.registry.printers import AGE_COLUMN, NAME_COLUMN, age

from .cel import ANY, BOOL, NULL, STRING, compile_expression
from .common import (FAILURE_POLICIES, cel_error, dict_of, list_of, set_match_resources_defaults,
                     str_of, validate_match_conditions, validate_match_resources,
                     validate_selector)

POLICIES = builtin_spec("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies")
BINDINGS = builtin_spec("admissionregistration.k8s.io", "v1",
                        "validatingadmissionpolicybindings")
#: ``supportedValidationPolicyReason``, sorted.
REASONS = ("Forbidden", "Invalid", "RequestEntityTooLarge")
VALIDATION_ACTIONS = ("Audit", "Deny", "Warn")
PARAMETER_NOT_FOUND_ACTIONS = ("Deny", "Allow")
MAX_AUDIT_ANNOTATIONS = 20
MAX_AUDIT_ANNOTATION_EXPRESSION_LENGTH = 5 * 1024
_CEL_IDENTIFIER = re.compile(r"^[_a-zA-Z][_a-zA-Z0-9]*$")
_CEL_RESERVED = frozenset((
    "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for",
    "function", "if", "import", "let", "loop", "package", "namespace", "return", "var", "void",
    "while"))
_NEWLINES = re.compile(r"[\n\r]+")
#: What a status write may not change of the metadata (``metav1.ResetObjectMetaForStatus``).
STATUS_KEPT_METADATA = ("deletionTimestamp", "generation", "selfLink", "labels",
                        "annotations", "finalizers", "ownerReferences")


def is_cel_identifier(name: str) -> bool:
    return bool(_CEL_IDENTIFIER.match(name)) and name not in _CEL_RESERVED


# -- policies ------------------------------------------------------------------------------

def set_policy_defaults(obj: dict) -> None:
    """``SetDefaults_ValidatingAdmissionPolicySpec`` and its match constraints'."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if spec.get("failurePolicy") is None:
        spec["failurePolicy"] = "Fail"
    if isinstance(spec.get("matchConstraints"), dict):
        set_match_resources_defaults(spec["matchConstraints"])


def _parse_group_version(text: str):
    """``parseGroupVersion``: ``(group, version)``, or None for more than one '/'."""
    if not text or text == "/":
        return "", ""
    if text.count("/") > 1:
        return None
    group, _, version = text.rpartition("/")
    return group, version


def validate_param_kind(kind: dict, path: FieldPath) -> list[FieldError]:
    """``validateParamKind``."""
    errs = []
    api_version = str_of(kind.get("apiVersion"))
    at = path.child("apiVersion")
    if not api_version:
        errs.append(FieldError.required(at, ""))
    elif (parsed := _parse_group_version(api_version)) is None:
        errs.append(FieldError.invalid(at, api_version, f"unexpected GroupVersion string: "
                                                        f"{api_version}"))
    else:
        group, version = parsed
        if group and (problems := is_dns1123_subdomain(group)):
            errs.append(FieldError.invalid(at, group, ",".join(problems)))
        if not version:
            errs.append(FieldError.invalid(at, api_version, "version must be specified"))
        elif problems := is_dns1035_label(version):
            errs.append(FieldError.invalid(at, version, ",".join(problems)))
    name = str_of(kind.get("kind"))
    if not name:
        errs.append(FieldError.required(path.child("kind"), ""))
    elif problems := is_dns1035_label(name.lower()):
        errs.append(FieldError.invalid(path.child("kind"), name, "may have mixed case, but "
                                       "should otherwise match: " + ",".join(problems)))
    return errs


class PolicyOptions:
    """What a policy update may keep of the stored policy: unchanged match conditions (and
    paramKind) are not compiled again."""

    def __init__(self, new: dict | None = None, old: dict | None = None):
        new_spec, old_spec = dict_of((new or {}).get("spec")), dict_of((old or {}).get("spec"))
        self.ignore_match_conditions = old is not None and \
            new_spec.get("paramKind") == old_spec.get("paramKind") and \
            new_spec.get("matchConditions") == old_spec.get("matchConditions")


def _validate_variable(variable: dict, has_params: bool, declared: tuple,
                       path: FieldPath) -> list[FieldError]:
    """``validateVariable``: a CEL identifier, and an expression of any type."""
    errs = []
    name = str_of(variable.get("name"))
    if not name.strip():
        errs.append(FieldError.required(path.child("name"), "name is not specified"))
    elif not is_cel_identifier(name):
        errs.append(FieldError.invalid(path.child("name"), name,
                                       "name is not a valid CEL identifier"))
    expression = str_of(variable.get("expression"))
    if not expression.strip():
        errs.append(FieldError.required(path.child("expression"), "expression is not specified"))
    else:
        error = compile_expression(expression, (ANY,), params=has_params, authorizer=True,
                                   variables=declared)
        if error is not None:
            errs.append(cel_error(path.child("expression"), expression, error))
    return errs


def _validate_validation(validation: dict, has_params: bool, variables, path: FieldPath) -> list:
    """``validateValidation``."""
    errs = []
    expression = str_of(validation.get("expression"))
    if not expression.strip():
        errs.append(FieldError.required(path.child("expression"), "expression is not specified"))
    else:
        error = compile_expression(expression, (BOOL,), params=has_params, authorizer=True,
                                   variables=variables)
        if error is not None:
            errs.append(cel_error(path.child("expression"), expression, error))
    message_expression = str_of(validation.get("messageExpression"))
    at = path.child("messageExpression")
    if message_expression and not message_expression.strip():
        errs.append(FieldError.invalid(at, message_expression, "must be non-empty if specified"))
    elif message_expression.strip():
        # Upstream compiles the message expression with params only when the policy's
        # match conditions may use them, and without the authorizer.
        error = compile_expression(message_expression, (STRING,), params=has_params,
                                   variables=variables)
        if error is not None:
            errs.append(cel_error(at, message_expression, error))
    message = str_of(validation.get("message"))
    if message and not message.strip():
        errs.append(FieldError.invalid(path.child("message"), message,
                                       "message must be non-empty if specified"))
    elif _NEWLINES.search(message.strip()):
        errs.append(FieldError.invalid(path.child("message"), message,
                                       "message must not contain line breaks"))
    reason = validation.get("reason")
    if reason is not None and reason not in REASONS:
        errs.append(FieldError.not_supported(path.child("reason"), str_of(reason), REASONS))
    return errs


def _validate_audit_annotation(name: str, annotation: dict, has_params: bool, variables,
                               path: FieldPath) -> list[FieldError]:
    """``validateAuditAnnotation``: ``<policy>/<key>`` a qualified name, and a value
    expression giving a string or null."""
    errs = []
    key = str_of(annotation.get("key"))
    if name:
        errs += [FieldError.invalid(path.child("key"), f"{name}/{key}", msg)
                 for msg in is_qualified_name(f"{name}/{key}")]
    else:
        errs.append(FieldError.invalid(path.child("key"), key,
                                       "requires metadata.name be non-empty"))
    value = str_of(annotation.get("valueExpression"))
    at = path.child("valueExpression")
    trimmed = value.strip()
    if not trimmed:
        errs.append(FieldError.required(at, "valueExpression is not specified"))
    elif len(trimmed.encode()) > MAX_AUDIT_ANNOTATION_EXPRESSION_LENGTH:
        errs.append(FieldError.required(at, f"must not exceed "
                                            f"{MAX_AUDIT_ANNOTATION_EXPRESSION_LENGTH} bytes in "
                                            f"length"))
    else:
        error = compile_expression(trimmed, (STRING, NULL), params=has_params, authorizer=True,
                                   variables=variables)
        if error is not None:
            errs.append(cel_error(at, value, error))
    return errs


def validate_policy_spec(name: str, spec: dict, opts: PolicyOptions,
                         path: FieldPath) -> list[FieldError]:
    """``validateValidatingAdmissionPolicySpec``."""
    errs = []
    policy = spec.get("failurePolicy")
    if policy is None:
        errs.append(FieldError.required(path.child("failurePolicy"), ""))
    elif policy not in FAILURE_POLICIES:
        errs.append(FieldError.not_supported(path.child("failurePolicy"), str_of(policy),
                                             FAILURE_POLICIES))
    has_params = spec.get("paramKind") is not None
    if has_params:
        errs += validate_param_kind(dict_of(spec["paramKind"]), path.child("paramKind"))
    match = spec.get("matchConstraints")
    if match is None:
        errs.append(FieldError.required(path.child("matchConstraints"), ""))
    else:
        errs += validate_match_resources(match, path.child("matchConstraints"))
        if not list_of(dict_of(match).get("resourceRules")):
            errs.append(FieldError.required(path.child("matchConstraints", "resourceRules"), ""))
    if not opts.ignore_match_conditions:
        errs += validate_match_conditions(list_of(spec.get("matchConditions")),
                                          path.child("matchConditions"), has_params)
    variables = list_of(spec.get("variables"))
    # With variables, expressions see the ones composed so far (a CompositedCompiler).
    declared = () if variables else None
    for i, variable in enumerate(variables):
        variable = dict_of(variable)
        errs += _validate_variable(variable, has_params, declared,
                                   path.child("variables").index(i))
        if is_cel_identifier(str_of(variable.get("name"))):
            declared = declared + (str_of(variable["name"]),)
    validations = list_of(spec.get("validations"))
    annotations = spec.get("auditAnnotations")
    if not validations and not list_of(annotations):
        message = "validations or auditAnnotations must contain at least one item"
        errs.append(FieldError.required(path.child("validations"), message))
        errs.append(FieldError.required(path.child("auditAnnotations"), message))
        return errs
    for i, validation in enumerate(validations):
        errs += _validate_validation(dict_of(validation), has_params, declared,
                                     path.child("validations").index(i))
    if annotations is not None:
        annotations = list_of(annotations)
        at = path.child("auditAnnotations")
        if len(annotations) > MAX_AUDIT_ANNOTATIONS:
            shown = GoValue("[]admissionregistration.AuditAnnotation{" + ", ".join(
                "admissionregistration.AuditAnnotation{Key:"
                f"{go_quote(str_of(dict_of(a).get('key')))}, ValueExpression:"
                f"{go_quote(str_of(dict_of(a).get('valueExpression')))}}}" for a in annotations)
                + "}")
            errs.append(FieldError.invalid(at, shown, f"must not have more than "
                                                      f"{MAX_AUDIT_ANNOTATIONS} auditAnnotations"))
        keys = set()
        for i, annotation in enumerate(annotations):
            annotation = dict_of(annotation)
            errs += _validate_audit_annotation(name, annotation, has_params, declared,
                                               at.index(i))
            key = str_of(annotation.get("key"))
            if key in keys:
                errs.append(FieldError.duplicate(at.index(i).child("key"), key))
            keys.add(key)
    return errs


def validate_policy(obj: dict, opts: PolicyOptions) -> list[FieldError]:
    """``validateValidatingAdmissionPolicy``."""
    meta = dict_of(obj.get("metadata"))
    errs = validate_object_meta(meta, False, name_is_dns_subdomain)
    return errs + validate_policy_spec(str_of(meta.get("name")), dict_of(obj.get("spec")),
                                       opts, FieldPath("spec"))


def validate_policy_status(obj: dict) -> list[FieldError]:
    """``validateValidatingAdmissionPolicyStatus``: type checking warnings name a warning
    and a field (a JSONPath), and the conditions are valid ``metav1.Condition`` s."""
    from kapiserver.apimachinery.condition_validation import validate_conditions
    from kapiserver_plugins.apiextensions.jsonpath import JSONPathError, parse

    status = dict_of(obj.get("status"))
    errs = []
    checking = status.get("typeChecking")
    path = FieldPath("status", "typeChecking", "expressionWarnings")
    for i, warning in enumerate(list_of(dict_of(checking).get("expressionWarnings"))):
        warning = dict_of(warning)
        if not str_of(warning.get("warning")):
            errs.append(FieldError.required(path.index(i).child("warning"), ""))
        field_ref = str_of(warning.get("fieldRef")).strip()
        at = path.index(i).child("fieldRef")
        if not field_ref:
            errs.append(FieldError.required(at, ""))
        else:
            try:
                parse(field_ref)
            except JSONPathError as err:
                errs.append(FieldError.invalid(at, field_ref, f"invalid JSONPath: {err}"))
    return errs + validate_conditions(status.get("conditions"),
                                      FieldPath("status", "conditions"))


def param_kind_text(spec: dict) -> str:
    kind = spec.get("paramKind")
    if not isinstance(kind, dict):
        return "<unset>"
    return str_of(kind.get("apiVersion")) + "/" + str_of(kind.get("kind"))


class PolicyStrategy(BuiltinStrategy):
    """``pkg/registry/admissionregistration/validatingadmissionpolicy`` strategy:
    generation 1 on create, bumped by spec changes; the status is written through
    ``validatingadmissionpolicies/status``."""

    has_generation = True

    def set_defaults(self, obj):
        set_policy_defaults(obj)

    def validate(self, obj):
        return validate_policy(obj, PolicyOptions())

    def validate_update(self, new, old):
        errs = validate_object_meta_update(dict_of(new.get("metadata")),
                                           dict_of(old.get("metadata")))
        return errs + validate_policy(new, PolicyOptions(new, old))

    def prepare_status_update(self, new, old):
        # The status strategy's PrepareForUpdate: the spec stays, and so does the metadata
        # a status write may not change (metav1.ResetObjectMetaForStatus).
        super().prepare_status_update(new, old)
        meta, old_meta = new.setdefault("metadata", {}), dict_of(old.get("metadata"))
        for key in STATUS_KEPT_METADATA:
            if key in old_meta:
                meta[key] = old_meta[key]
            else:
                meta.pop(key, None)

    def validate_status(self, new, old):
        return validate_policy_status(new)

    def table_cells(self, obj):
        meta, spec = dict_of(obj.get("metadata")), dict_of(obj.get("spec"))
        return [meta.get("name", ""), len(list_of(spec.get("validations"))),
                param_kind_text(spec), age(meta.get("creationTimestamp"))]


# -- bindings --------------------------------------------------------------------------------

def set_binding_defaults(obj: dict) -> None:
    """The defaults of a binding's match resources."""
    match = dict_of(obj.get("spec")).get("matchResources")
    if isinstance(match, dict):
        set_match_resources_defaults(match)


def validate_param_ref(ref, path: FieldPath) -> list[FieldError]:
    """``validateParamRef``: a name or a selector (not both), and what to do without
    params."""
    if ref is None:
        return []
    ref = dict_of(ref)
    errs = []
    name, selector = str_of(ref.get("name")), ref.get("selector")
    exclusive = "name and selector are mutually exclusive"
    if name:
        errs += [FieldError.invalid(path.child("name"), name, msg)
                 for msg in validate_path_segment_name(name)]
        if selector is not None:
            errs.append(FieldError.forbidden(path.child("name"), exclusive))
    if selector is not None:
        errs += validate_selector(selector, path.child("selector"))
        if name:
            errs.append(FieldError.forbidden(path.child("selector"), exclusive))
    if not name and selector is None:
        errs.append(FieldError.required(path, "one of name or selector must be specified"))
    action = ref.get("parameterNotFoundAction")
    if not action:
        errs.append(FieldError.required(path.child("parameterNotFoundAction"), ""))
    elif action not in PARAMETER_NOT_FOUND_ACTIONS:
        errs.append(FieldError.not_supported(path.child("parameterNotFoundAction"),
                                             str_of(action), PARAMETER_NOT_FOUND_ACTIONS))
    return errs


def validate_validation_actions(actions: list, path: FieldPath) -> list[FieldError]:
    """``validateValidationActions``: known, each once, not both Deny and Warn."""
    errs, seen = [], set()
    for i, action in enumerate(actions):
        action = str_of(action)
        if action not in VALIDATION_ACTIONS:
            errs.append(FieldError.not_supported(path.index(i), action, VALIDATION_ACTIONS))
        if action in seen:
            errs.append(FieldError.duplicate(path.index(i), action))
        seen.add(action)
    if "Deny" in seen and "Warn" in seen:
        errs.append(FieldError.invalid(
            path, GoValue("[]admissionregistration.ValidationAction{"
                          + ", ".join(go_quote(str_of(a)) for a in actions) + "}"),
            "must not contain both Deny and Warn (repeating the same validation failure "
            "information in the API response and headers serves no purpose)"))
    if not seen:
        errs.append(FieldError.required(path, "at least one validation action is required"))
    return errs


def validate_binding(obj: dict) -> list[FieldError]:
    """``validateValidatingAdmissionPolicyBinding``."""
    errs = validate_object_meta(dict_of(obj.get("metadata")), False, name_is_dns_subdomain)
    spec, path = dict_of(obj.get("spec")), FieldPath("spec")
    policy = str_of(spec.get("policyName"))
    if not policy:
        errs.append(FieldError.required(path.child("policyName"), ""))
    else:
        errs += [FieldError.invalid(path.child("policyName"), policy, msg)
                 for msg in name_is_dns_subdomain(policy)]
    errs += validate_param_ref(spec.get("paramRef"), path.child("paramRef"))
    errs += validate_match_resources(spec.get("matchResources"), path.child("matchResources"))
    return errs + validate_validation_actions(list_of(spec.get("validationActions")),
                                              path.child("validationActions"))


def param_ref_text(spec: dict) -> str:
    """The ParamRef cell: ``namespace/name``, ``*/name``, the selector, or ``<unset>``."""
    from kapiserver.apimachinery.labels import SelectorError, selector_from_label_selector

    ref = spec.get("paramRef")
    if not isinstance(ref, dict):
        return "<unset>"
    name = str_of(ref.get("name"))
    if name:
        return f"{str_of(ref.get('namespace')) or '*'}/{name}"
    if isinstance(ref.get("selector"), dict):
        try:
            return str(selector_from_label_selector(ref["selector"]))
        except SelectorError:
            return "<error>"
    return "<unset>"


class BindingStrategy(BuiltinStrategy):
    """``pkg/registry/admissionregistration/validatingadmissionpolicybinding`` strategy."""

    has_generation = True

    def set_defaults(self, obj):
        set_binding_defaults(obj)

    def validate(self, obj):
        return validate_binding(obj)

    def validate_update(self, new, old):
        errs = validate_object_meta_update(dict_of(new.get("metadata")),
                                           dict_of(old.get("metadata")))
        return errs + validate_binding(new)

    def table_columns(self):
        return [NAME_COLUMN,
                {"name": "PolicyName", "type": "string", "format": "",
                 "description": "PolicyName indicates the policy definition which the policy "
                                "binding binded to", "priority": 0},
                {"name": "ParamRef", "type": "string", "format": "",
                 "description": "ParamRef indicates the param resource which sets the "
                                "configration param", "priority": 0},
                AGE_COLUMN]

    def table_cells(self, obj):
        meta, spec = dict_of(obj.get("metadata")), dict_of(obj.get("spec"))
        return [meta.get("name", ""), str_of(spec.get("policyName")), param_ref_text(spec),
                age(meta.get("creationTimestamp"))]
