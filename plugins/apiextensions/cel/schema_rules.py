"""Checking the ``x-kubernetes-validations`` of a CRD's schema when the CRD is written.

The part of upstream's ``ValidateCustomResourceDefinitionOpenAPISchema``
(apiextensions/validation/validation.go) about rules: each rule's fields, its compilation (and
its messageExpression's), transition rules where no old value can be correlated, and the
estimated costs, per rule (``StaticEstimatedCostLimit``) and for the whole schema
(``StaticEstimatedCRDCostLimit``), every error at upstream's path and in its words.
"""

from __future__ import annotations

from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue, go_quote

from . import compiler, types
from .compiler import STATIC_COST_LIMIT, STATIC_CRD_COST_LIMIT

SUPPORTED_REASONS = ("FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid",
                     "FieldValueRequired")
_COMPOSITIONS = ("allOf", "anyOf", "oneOf")


def validate_schema_rules(schema: dict, path: FieldPath, *, compile_rules: bool = True,
                          per_expression_cost: bool = True) -> list[FieldError]:
    """The errors of every ``x-kubernetes-validations`` in ``schema`` (an
    ``openAPIV3Schema`` at ``path``).

    ``compile_rules=False`` skips compilation and costs, as upstream does when the schema is
    not structural; ``per_expression_cost=False`` drops the per-rule cost limit, as upstream
    does for a version whose schema an update left unchanged.
    """
    checker = _Checker(per_expression_cost)
    root_decl = None
    if compile_rules and isinstance(schema, dict):
        root_decl = types.decl_type(schema, True)
        if root_decl is not None and _has_any_rules(schema):
            checker.name(root_decl)
    checker.walk(schema, path, root_decl if compile_rules else None, 1, None, compile_rules)
    errors = checker.schema_errors + checker.cel_errors
    if checker.total > STATIC_CRD_COST_LIMIT:
        for rule_path, _ in checker.most_expensive:
            errors.append(FieldError.forbidden(
                rule_path, "contributed to estimated rule cost total exceeding cost limit for "
                "entire OpenAPIv3 schema"))
        errors.append(FieldError.forbidden(path, cost_error_message(
            "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
            checker.total, STATIC_CRD_COST_LIMIT)))
    return errors


def cost_error_message(name: str, cost: int, limit: int) -> str:
    """``getCostErrorMessage``."""
    factor = cost / limit
    if factor > 100.0:
        text = "more than 100x"
    elif factor < 1.5:
        text = f"{factor:f}x"
    else:
        text = f"{factor:.1f}x"
    return (f"{name} exceeds budget by factor of {text} (try simplifying the rule, or adding "
            "maxItems, maxProperties, and maxLength where arrays, maps, and strings are "
            "declared)")


def _has_any_rules(schema) -> bool:
    if not isinstance(schema, dict):
        return False
    if schema.get("x-kubernetes-validations"):
        return True
    subs = list((schema.get("properties") or {}).values())
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            subs.append(schema[key])
    return any(_has_any_rules(s) for s in subs)


def _has_newlines(text: str) -> bool:
    return "\n" in text or "\r" in text


def _rule_value(rule: dict) -> GoValue:
    """A rule as ``%#v`` prints the internal ``apiextensions.ValidationRule``."""

    def ptr(type_name: str, value) -> str:
        # A set pointer prints its address, which no client can depend on.
        return f"(*{type_name})(nil)" if value is None else f"(*{type_name})(0xc000a6e2a0)"

    return GoValue(
        "apiextensions.ValidationRule{"
        f"Rule:{go_quote(str(rule.get('rule') or ''))}, "
        f"Message:{go_quote(str(rule.get('message') or ''))}, "
        f"MessageExpression:{go_quote(str(rule.get('messageExpression') or ''))}, "
        f"Reason:{ptr('apiextensions.FieldValueErrorReason', rule.get('reason'))}, "
        f"FieldPath:{go_quote(str(rule.get('fieldPath') or ''))}, "
        f"OptionalOldSelf:{ptr('bool', rule.get('optionalOldSelf'))}}}")


class _Checker:
    def __init__(self, per_expression_cost: bool):
        self.per_expression_cost = per_expression_cost
        self.env: compiler.Environment | None = None
        self.base = types.unique_type_name()
        self.named = 0
        self.schema_errors: list[FieldError] = []
        self.cel_errors: list[FieldError] = []
        self.total = 0
        self.most_expensive: list[tuple] = []

    def name(self, decl: types.DeclType) -> None:
        if self.env is None:
            self.env = compiler.Environment()
        types.assign_names(decl, self.base if not self.named else f"{self.base}x{self.named}")
        self.named += 1
        self.env.declare([decl])

    def observe(self, path: FieldPath, cost: int) -> None:
        """``TotalCost.ObserveExpressionCost``."""
        self.total = min(self.total + cost, (1 << 64) - 1)
        if cost < STATIC_CRD_COST_LIMIT // 100:
            return
        self.most_expensive.append((path, cost))
        self.most_expensive.sort(key=lambda pc: -pc[1])
        del self.most_expensive[4:]

    def walk(self, schema, path: FieldPath, decl, cardinality, uncorrelatable,
             compile_rules: bool) -> None:
        if not isinstance(schema, dict):
            return
        errors_before = len(self.schema_errors)
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            self.walk(extra, path.child("additionalProperties"),
                      decl.elem if decl is not None and decl.kind == types.MAP else None,
                      _child_cardinality(schema, cardinality), uncorrelatable, compile_rules)
        for prop in sorted(props):
            sub = props[prop]
            sub_decl = None
            if decl is not None and decl.kind == types.OBJECT:
                escaped = types.escape(prop)
                sub_decl = decl.field_type(escaped) if escaped else None
                if escaped is None and _has_any_rules(sub):
                    sub_decl = types.decl_type(sub, bool(isinstance(sub, dict) and sub.get(
                        "x-kubernetes-embedded-resource")))
                    if sub_decl is not None:
                        self.name(sub_decl)
            sub_uncorrelatable = uncorrelatable
            if schema.get("x-kubernetes-map-type") not in (None, "granular", "atomic") and \
                    sub_uncorrelatable is None:
                sub_uncorrelatable = path
            self.walk(sub, path.child("properties").key(prop), sub_decl,
                      _child_cardinality(schema, cardinality), sub_uncorrelatable, compile_rules)
        for key in ("not",):
            self.walk(schema.get(key), path.child(key), None, None, uncorrelatable, False)
        for key in _COMPOSITIONS:
            for i, sub in enumerate(schema.get(key) or []):
                self.walk(sub, path.child(key).index(i), None, None, uncorrelatable, False)
        items = schema.get("items")
        if isinstance(items, dict):
            sub_uncorrelatable = uncorrelatable
            if schema.get("x-kubernetes-list-type") != "map" and sub_uncorrelatable is None:
                sub_uncorrelatable = path
            self.walk(items, path.child("items"),
                      decl.elem if decl is not None and decl.kind == types.LIST else None,
                      _child_cardinality(schema, cardinality), sub_uncorrelatable,
                      compile_rules)
        rules = schema.get("x-kubernetes-validations")
        if not rules:
            return
        self._rule_fields(schema, path, rules)
        if len(self.schema_errors) != errors_before or not compile_rules or decl is None:
            return
        self._compile(schema, path, decl, rules, cardinality, uncorrelatable)

    def _rule_fields(self, schema: dict, path: FieldPath, rules: list) -> None:
        out = self.schema_errors
        for i, rule in enumerate(rules):
            if not isinstance(rule, dict):
                rule = {}
            at = path.child("x-kubernetes-validations").index(i)
            text = rule.get("rule") or ""
            message = rule.get("message") or ""
            trimmed_rule, trimmed_message = text.strip(), message.strip()
            if not trimmed_rule:
                out.append(FieldError.required(at.child("rule"), "rule is not specified"))
            elif message and not trimmed_message:
                out.append(FieldError.invalid(at.child("message"), message,
                                              "message must be non-empty if specified"))
            elif _has_newlines(trimmed_message):
                out.append(FieldError.invalid(at.child("message"), message,
                                              "message must not contain line breaks"))
            elif _has_newlines(trimmed_rule) and not trimmed_message:
                out.append(FieldError.required(
                    at.child("message"), "message must be specified if rule contains line breaks"))
            message_expression = rule.get("messageExpression") or ""
            if message_expression and not message_expression.strip():
                out.append(FieldError.required(
                    at.child("messageExpression"),
                    "messageExpression must be non-empty if specified"))
            reason = rule.get("reason")
            if reason is not None and reason not in SUPPORTED_REASONS:
                out.append(FieldError.not_supported(at.child("reason"), reason,
                                                    SUPPORTED_REASONS))
            field_path = rule.get("fieldPath") or ""
            if field_path and not field_path.strip():
                out.append(FieldError.invalid(at.child("fieldPath"), field_path,
                                              "fieldPath must be non-empty if specified"))
            if _has_newlines(field_path):
                out.append(FieldError.invalid(at.child("fieldPath"), field_path,
                                              "fieldPath must not contain line breaks"))
            if field_path:
                from ..schema.fieldpath import valid_field_path

                _, _, problem = valid_field_path(field_path, schema)
                if problem:
                    out.append(FieldError.invalid(at.child("fieldPath"), field_path,
                                                  "fieldPath must be a valid path"))

    def _compile(self, schema, path, decl, rules, cardinality, uncorrelatable) -> None:
        if self.env is None:
            self.name(decl)
        out = self.cel_errors
        for i, rule in enumerate(rules):
            if not isinstance(rule, dict):
                rule = {}
            at = path.child("x-kubernetes-validations").index(i)
            result = self.env.compile_rule(decl, rule, schema)
            max_cost = result.compiled.max_cost if result.compiled is not None else 0
            count = cardinality if cardinality is not None else \
                types.max_cardinality(decl.min_size)
            cost = 0 if max_cost == 0 else min(max_cost * count, (1 << 64) - 1)
            if self.per_expression_cost and cost > STATIC_COST_LIMIT:
                out.append(FieldError.forbidden(at.child("rule"), cost_error_message(
                    "estimated rule cost", cost, STATIC_COST_LIMIT)))
            self.observe(at.child("rule"), cost)
            if result.error:
                out.append(FieldError.invalid(at.child("rule"), _rule_value(rule), result.error))
            if result.message_error:
                out.append(FieldError.invalid(at.child("messageExpression"), _rule_value(rule),
                                              result.message_error))
            elif result.message is not None:
                message_cost = result.message.max_cost
                if self.per_expression_cost and message_cost > STATIC_COST_LIMIT:
                    out.append(FieldError.forbidden(at.child("messageExpression"),
                                                    cost_error_message(
                                                        "estimated messageExpression cost",
                                                        message_cost, STATIC_COST_LIMIT)))
                self.observe(at.child("messageExpression"), message_cost)
            if result.uses_old_self:
                if uncorrelatable is not None:
                    out.append(FieldError.invalid(
                        at.child("rule"), rule.get("rule") or "",
                        f"oldSelf cannot be used on the uncorrelatable portion of the schema "
                        f"within {uncorrelatable}"))
            elif rule.get("optionalOldSelf") is not None:
                out.append(FieldError.invalid(at.child("optionalOldSelf"),
                                              rule["optionalOldSelf"],
                                              "may not be set if oldSelf is not used in rule"))


def _child_cardinality(schema: dict, cardinality):
    """``childContext``: the parent's cardinality times what the parent multiplies by."""
    if cardinality is None:
        return None
    kind = schema.get("type")
    if kind == "object" and schema.get("additionalProperties") is not None:
        bound = schema.get("maxProperties")
    elif kind == "array":
        bound = schema.get("maxItems")
    else:
        return cardinality
    if bound is None:
        return None
    return min(cardinality * max(int(bound), 0), (1 << 64) - 1)
