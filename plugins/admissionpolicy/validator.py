"""A ValidatingAdmissionPolicy compiled once, and its evaluation for one binding and one
params object (upstream's ``validating.compilePolicy`` and ``validator.Validate``).

The evaluation runs in phases, each with its own budget as upstream's filters: the match
conditions (a false one ends it: the policy does not apply), the validations, the message
of each failed validation, then the audit annotations. Evaluation errors become decisions
that the failure policy turns into a denial (``Fail``) or an admission (``Ignore``).
Departure: a ``messageExpression`` is evaluated only when its validation fails (upstream
evaluates all of them and throws the unused messages away), which changes nothing but the
cost charged.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kapiserver_plugins.admissionregistration.cel import ANY, BOOL, NULL, STRING

from .cel import (MATCH_CONDITIONS_BUDGET, OUT_OF_BUDGET, Evaluation, OutOfBudget,
                  is_null, is_string, type_name)
from .matching import Criteria

ADMIT, DENY = "Admit", "Deny"
#: ``celconfig.MaxEvaluatedMessageExpressionSizeBytes``
MAX_MESSAGE_BYTES = 5 * 1024


@dataclass
class Decision:
    """``PolicyDecision``: ``evaluation`` is ``admit``, ``deny`` or ``error``."""

    action: str
    evaluation: str
    message: str = ""
    reason: str = ""


@dataclass
class Result:
    """``ValidateResult``: the decisions in the order of the validations, and the audit
    annotations to publish (``(key, value)``)."""

    decisions: list = field(default_factory=list)
    annotations: list = field(default_factory=list)
    #: an audit annotation's error under failurePolicy Fail (a denial)
    annotation_errors: list = field(default_factory=list)


def _strings(value) -> list:
    return value if isinstance(value, list) else []


class CompiledPolicy:
    """Everything a request needs of one policy, compiled from one resourceVersion."""

    def __init__(self, policy: dict, runtime):
        meta = policy.get("metadata") or {}
        spec = policy.get("spec") or {}
        self.name = meta.get("name", "")
        self.resource_version = meta.get("resourceVersion", "")
        self.failure_policy = spec.get("failurePolicy") or "Fail"
        self.param_kind = spec.get("paramKind") if isinstance(spec.get("paramKind"),
                                                                dict) else None
        match = spec.get("matchConstraints")
        self.criteria = Criteria(match) if isinstance(match, dict) else None
        params = self.param_kind is not None
        variables = [v for v in _strings(spec.get("variables")) if isinstance(v, dict)]
        declared = () if variables else None
        self.variables = {}
        for variable in variables:
            name = variable.get("name") or ""
            self.variables[name] = runtime.compile(
                variable.get("expression") or "", (ANY,), params=params, authorizer=True,
                variables=declared)
            declared = declared + (name,)
        names = tuple(self.variables) if variables else None

        def compile_(source, types, authorizer=True):
            return runtime.compile(source or "", types, params=params, authorizer=authorizer,
                                   variables=names)

        self.match_conditions = [(c.get("name", ""), compile_(c.get("expression"), (BOOL,)))
                                 for c in _strings(spec.get("matchConditions"))
                                 if isinstance(c, dict)]
        self.validations = []
        for validation in _strings(spec.get("validations")):
            if not isinstance(validation, dict):
                continue
            message = validation.get("messageExpression") or ""
            self.validations.append((validation, compile_(validation.get("expression"), (BOOL,)),
                                     compile_(message, (STRING,), authorizer=False)
                                     if message else None))
        self.audit_annotations = [
            (a.get("key", ""), a.get("valueExpression", ""),
             compile_(a.get("valueExpression"), (STRING, NULL)))
            for a in _strings(spec.get("auditAnnotations")) if isinstance(a, dict)]
        self.accounting = self._needs_accounting()
        every = [*self.variables.values(), *(e for _, e in self.match_conditions),
                 *(e for _, e, _ in self.validations),
                 *(m for _, _, m in self.validations if m is not None),
                 *(e for _, _, e in self.audit_annotations)]
        names = set()
        for e in every:
            if e.checked is not None:
                names |= e.checked.referenced_names()
        #: whether an expression reads ``namespaceObject`` (else it is not looked up) or
        #: the authorizer (else its values are not made)
        self.uses_namespace = "namespaceObject" in names
        self.uses_authorizer = bool(names & {"authorizer", "authorizer.requestResource"})

    def _needs_accounting(self) -> bool:
        """Whether some evaluation could exceed a limit (then each is charged)."""
        from kapiserver_plugins.apiextensions.cel.compiler import (PER_CALL_LIMIT,
                                                                    RUNTIME_COST_BUDGET)

        variables = sum(e.worst for e in self.variables.values())
        phases = [(MATCH_CONDITIONS_BUDGET, [e for _, e in self.match_conditions]),
                  (RUNTIME_COST_BUDGET, [e for _, e, _ in self.validations]
                   + [m for _, _, m in self.validations if m is not None]),
                  (RUNTIME_COST_BUDGET, [e for _, _, e in self.audit_annotations])]
        for budget, exprs in phases:
            if any(e.worst > PER_CALL_LIMIT for e in exprs):
                return True
            if sum(e.worst for e in exprs) + variables > budget:
                return True
        return any(e.worst > PER_CALL_LIMIT for e in self.variables.values())

    @property
    def ignores_failures(self) -> bool:
        return self.failure_policy == "Ignore"

    def _error_action(self) -> str:
        return ADMIT if self.ignores_failures else DENY

    def _error(self, message: str) -> Result:
        return Result([Decision(self._error_action(), "error", message)])

    def validate(self, activation, inputs) -> Result:
        """``Validate`` with the activation of one request, binding and params (``inputs``:
        the ``cel.Inputs`` bound, for the cost of what nothing bounds)."""
        def phase(budget):
            return Evaluation(activation, inputs, self.variables, self.accounting, budget)

        if self.match_conditions:
            error = self._match(phase(MATCH_CONDITIONS_BUDGET))
            if error is False:
                return Result()
            if error:
                if self.ignores_failures:
                    return Result()
                return self._error(error)
        result = Result()
        evaluation = phase(10_000_000)
        messages = None
        try:
            outcomes = [evaluation.evaluate(expr) for _, expr, _ in self.validations]
        except OutOfBudget:
            return self._error(OUT_OF_BUDGET)
        for (validation, _, message), (value, error) in zip(self.validations, outcomes):
            if error:
                result.decisions.append(Decision(self._error_action(), "error", error))
                continue
            if value[0] is True:
                result.decisions.append(Decision(ADMIT, "admit"))
                continue
            if messages is None:
                messages = phase(evaluation.remaining)
            text = ""
            if message is not None:
                try:
                    text = self._message(messages, message)
                except OutOfBudget:
                    result.decisions.append(Decision(
                        self._error_action(), "error", f"failed messageExpression: "
                        f"{OUT_OF_BUDGET}"))
                    continue
            if not text:
                text = (validation.get("message") or "").strip()
            if not text:
                text = f"failed expression: {(validation.get('expression') or '').strip()}"
            result.decisions.append(Decision(DENY, "deny", text,
                                             validation.get("reason") or "Invalid"))
        if self.audit_annotations:
            try:
                self._annotate(phase(10_000_000), result)
            except OutOfBudget:
                return self._error(OUT_OF_BUDGET)
        return result

    def _match(self, evaluation):
        """False when a condition is false, else the errors' text ("" without any)."""
        errors = []
        for _, expr in self.match_conditions:
            try:
                value, error = evaluation.evaluate(expr)
            except OutOfBudget:
                return OUT_OF_BUDGET
            if error:
                errors.append(error)
            elif value[0] is False:
                return False
        if not errors:
            return ""
        # utilerrors.NewAggregate
        return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"

    @staticmethod
    def _message(evaluation, expr) -> str:
        value, error = evaluation.evaluate(expr)
        if error or not is_string(value[1]):
            return ""
        text = value[0].strip()
        if len(text.encode()) > MAX_MESSAGE_BYTES or "\n" in text:
            return ""
        return text

    def _annotate(self, evaluation, result: Result) -> None:
        for key, source, expr in self.audit_annotations:
            value, error = evaluation.evaluate(expr)
            if error:
                if not self.ignores_failures:
                    result.annotation_errors.append(error)
                continue
            if is_string(value[1]):
                text = value[0].strip()
                if text:
                    result.annotations.append((key, text))
            elif not is_null(value[1]):
                result.annotation_errors.append(
                    f"valueExpression '{source}' resulted in unsupported return type: "
                    f"{type_name(value[1])}. Return type must be either string or null.")
