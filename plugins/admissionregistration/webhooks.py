"""Mutating and validating webhook configurations: their v1 defaults and validation
(``ValidateMutatingWebhookConfiguration`` & co.) and registry strategies, as in 1.32, as
objects: calling the webhooks is the admission plugins' business."""

from __future__ import annotations

from kapiserver.apimachinery.field_errors import FieldError, FieldPath
from kapiserver.apimachinery.validation import (is_dns1035_label, is_fully_qualified_name,
                                                name_is_dns_subdomain, validate_object_meta,
                                                validate_object_meta_update)
from kapiserver.apimachinery.webhook_validation import (validate_webhook_service,
                                                        validate_webhook_url)
from kapiserver.registry.builtin import builtin_spec
from kapiserver.registry.builtin_strategy import BuiltinStrategy
from kapiserver.registry.printers import AGE_COLUMN, NAME_COLUMN, age

from .common import (FAILURE_POLICIES, MATCH_POLICIES, dict_of, go_strings, list_of,
                     set_rule_defaults, str_of, validate_match_conditions,
                     validate_rule_with_operations, validate_selector)

MUTATING = builtin_spec("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations")
VALIDATING = builtin_spec("admissionregistration.k8s.io", "v1",
                          "validatingwebhookconfigurations")
SIDE_EFFECT_CLASSES = ("None", "NoneOnDryRun", "Some", "Unknown")
NO_SIDE_EFFECT_CLASSES = ("None", "NoneOnDryRun")
REINVOCATION_POLICIES = ("IfNeeded", "Never")
#: ``AcceptedAdmissionReviewVersions``.
REVIEW_VERSIONS = ("v1", "v1beta1")
DEFAULT_TIMEOUT_SECONDS = 10
WEBHOOKS_COLUMN = {"name": "Webhooks", "type": "integer", "format": "",
                   "description": "Webhooks indicates the number of webhooks registered in this "
                                  "configuration", "priority": 0}


def set_webhook_defaults(hook: dict, mutating: bool) -> None:
    """``SetDefaults_ValidatingWebhook``/``SetDefaults_MutatingWebhook``, and the defaults of
    their rules and service references."""
    for key, value in (("failurePolicy", "Fail"), ("matchPolicy", "Equivalent"),
                       ("namespaceSelector", {}), ("objectSelector", {}),
                       ("timeoutSeconds", DEFAULT_TIMEOUT_SECONDS)):
        if hook.get(key) is None:
            hook[key] = value
    if mutating and hook.get("reinvocationPolicy") is None:
        hook["reinvocationPolicy"] = "Never"
    for rule in list_of(hook.get("rules")):
        if isinstance(rule, dict):
            set_rule_defaults(rule)
    service = dict_of(hook.get("clientConfig")).get("service")
    if isinstance(service, dict) and service.get("port") is None:
        service["port"] = 443


def _validate_client_config(config: dict, path: FieldPath) -> list[FieldError]:
    """Exactly one of a URL (https, no user, query or fragment) and a service."""
    url, service = config.get("url"), config.get("service")
    if (url is None) == (service is None):
        return [FieldError.required(path, "exactly one of url or service is required")]
    if url is not None:
        return validate_webhook_url(path.child("url"), str_of(url))
    service = dict_of(service)
    return validate_webhook_service(path.child("service"), str_of(service.get("namespace")),
                            str_of(service.get("name")), service.get("path"),
                            service.get("port"))


class Options:
    """``validationOptions`` of webhook configurations: strict for new configurations;
    an update may keep what the stored one already had."""

    def __init__(self, old: dict | None = None, new: dict | None = None):
        hooks = [dict_of(h) for h in list_of((old or {}).get("webhooks"))]
        self.require_no_side_effects = all(
            h.get("sideEffects") in NO_SIDE_EFFECT_CLASSES for h in hooks)
        self.require_recognized_review_version = all(
            not list_of(h.get("admissionReviewVersions"))
            or any(v in REVIEW_VERSIONS for v in list_of(h.get("admissionReviewVersions")))
            for h in hooks)
        names = [h.get("name") for h in hooks]
        self.require_unique_names = len(set(names)) == len(names)
        self.allow_invalid_label_value = any(
            validate_selector(h.get(key), FieldPath("x"))
            for h in hooks for key in ("namespaceSelector", "objectSelector")
            if h.get(key) is not None)
        new_hooks = [dict_of(h) for h in list_of((new or {}).get("webhooks"))]
        self.ignore_match_conditions = old is not None and len(new_hooks) == len(hooks) and all(
            a.get("matchConditions") == b.get("matchConditions")
            for a, b in zip(new_hooks, hooks))


def _validate_review_versions(versions: list, require_recognized: bool,
                              path: FieldPath) -> list[FieldError]:
    """``validateAdmissionReviewVersions``."""
    if not versions:
        return [FieldError.required(path, "must specify one of " + ", ".join(REVIEW_VERSIONS))]
    errs, seen, recognized = [], set(), False
    for i, version in enumerate(versions):
        version = str_of(version)
        if version in seen:
            errs.append(FieldError.invalid(path.index(i), version, "duplicate version"))
            continue
        seen.add(version)
        errs += [FieldError.invalid(path.index(i), version, msg)
                 for msg in is_dns1035_label(version)]
        recognized = recognized or version in REVIEW_VERSIONS
    if require_recognized and not recognized:
        errs.append(FieldError.invalid(path, go_strings(versions), "must include at least one of "
                                       + ", ".join(REVIEW_VERSIONS)))
    return errs


def validate_webhook(hook: dict, mutating: bool, opts: Options,
                     path: FieldPath) -> list[FieldError]:
    """``validateValidatingWebhook``/``validateMutatingWebhook``."""
    errs = is_fully_qualified_name(path.child("name"), str_of(hook.get("name")))
    for i, rule in enumerate(list_of(hook.get("rules"))):
        errs += validate_rule_with_operations(dict_of(rule), path.child("rules").index(i))
    for key, allowed in (("failurePolicy", FAILURE_POLICIES), ("matchPolicy", MATCH_POLICIES)):
        value = hook.get(key)
        if value is not None and value not in allowed:
            errs.append(FieldError.not_supported(path.child(key), str_of(value), allowed))
    allowed = NO_SIDE_EFFECT_CLASSES if opts.require_no_side_effects else SIDE_EFFECT_CLASSES
    side_effects = hook.get("sideEffects")
    if side_effects is None:
        errs.append(FieldError.required(path.child("sideEffects"),
                                        "must specify one of " + ", ".join(allowed)))
    elif side_effects not in allowed:
        errs.append(FieldError.not_supported(path.child("sideEffects"), str_of(side_effects),
                                             allowed))
    timeout = hook.get("timeoutSeconds")
    if isinstance(timeout, int) and not 1 <= timeout <= 30:
        errs.append(FieldError.invalid(path.child("timeoutSeconds"), timeout,
                                       "the timeout value must be between 1 and 30 seconds"))
    for key in ("namespaceSelector", "objectSelector"):
        if hook.get(key) is not None:
            errs += validate_selector(hook[key], path.child(key), opts.allow_invalid_label_value)
    if mutating:
        policy = hook.get("reinvocationPolicy")
        if policy is not None and policy not in REINVOCATION_POLICIES:
            errs.append(FieldError.not_supported(path.child("reinvocationPolicy"),
                                                 str_of(policy), REINVOCATION_POLICIES))
    errs += _validate_client_config(dict_of(hook.get("clientConfig")), path.child("clientConfig"))
    if not opts.ignore_match_conditions:
        errs += validate_match_conditions(list_of(hook.get("matchConditions")),
                                          path.child("matchConditions"))
    return errs


def validate_webhook_configuration(obj: dict, mutating: bool, opts: Options) -> list:
    """``validateValidatingWebhookConfiguration``/``validateMutatingWebhookConfiguration``."""
    errs = validate_object_meta(dict_of(obj.get("metadata")), False, name_is_dns_subdomain)
    names = set()
    for i, hook in enumerate(list_of(obj.get("webhooks"))):
        hook = dict_of(hook)
        path = FieldPath("webhooks").index(i)
        errs += validate_webhook(hook, mutating, opts, path)
        errs += _validate_review_versions(list_of(hook.get("admissionReviewVersions")),
                                          opts.require_recognized_review_version,
                                          path.child("admissionReviewVersions"))
        name = str_of(hook.get("name"))
        if opts.require_unique_names and name:
            if name in names:
                errs.append(FieldError.duplicate(path.child("name"), name))
            names.add(name)
    return errs


class WebhookConfigurationStrategy(BuiltinStrategy):
    """The ``mutatingwebhookconfiguration`` and ``validatingwebhookconfiguration``
    strategies: generation 1 on create, bumped when the webhooks change."""

    has_generation = True

    def __init__(self, spec, ttl: float = 0):
        super().__init__(spec, ttl)
        self.mutating = spec.resource == MUTATING.resource

    def set_defaults(self, obj):
        for hook in list_of(obj.get("webhooks")):
            if isinstance(hook, dict):
                set_webhook_defaults(hook, self.mutating)

    def validate(self, obj):
        return validate_webhook_configuration(obj, self.mutating, Options())

    def validate_update(self, new, old):
        errs = validate_object_meta_update(dict_of(new.get("metadata")),
                                           dict_of(old.get("metadata")))
        return errs + validate_webhook_configuration(new, self.mutating, Options(old, new))

    def table_columns(self):
        return [NAME_COLUMN, WEBHOOKS_COLUMN, AGE_COLUMN]

    def table_cells(self, obj):
        meta = dict_of(obj.get("metadata"))
        return [meta.get("name", ""), len(list_of(obj.get("webhooks"))),
                age(meta.get("creationTimestamp"))]
