"""A webhook's ``matchConditions``: CEL expressions that decide whether it is called
(upstream's ``admission/plugin/webhook/matchconditions`` on ``admission/plugin/cel``).

Expressions are checked in the environment the configuration's validation used
(``admissionregistration.cel``: ``object``, ``oldObject``, a typed ``request``,
``authorizer``), then planned in a runtime environment where the variables are plain
values, as the CRD rules are (``apiextensions.cel.compiler``). Evaluation follows
upstream's ``matcher.Match``: a condition that is false skips the webhook at once; errors
(and conditions that do not compile) are then aggregated and the failure policy decides:
``Fail`` refuses the request, ``Ignore`` skips the webhook.

Departure: ``authorizer`` checks are not evaluated (an expression that calls one fails
with an error, so the failure policy decides).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass


@dataclass
class MatchResult:
    matches: bool
    error: str = ""
    failed_condition: str = ""


@functools.lru_cache(maxsize=1)
def _runtime():
    """The runtime environment (one per process: it holds no server state)."""
    from cel_expr_python import cel
    from cel_expr_python.ext import ext_optional

    from kapiserver_plugins.apiextensions.cel import declarations, library, types

    pool = types.new_pool(library.library_files())
    variables = {name: cel.Type.DYN for name in ("object", "oldObject", "request")}
    return cel.NewEnv(pool, variables=variables,
                      functions=declarations.runtime_declarations(library.Runtime(pool)),
                      extensions=[ext_optional.ExtOptional()])


def _compile(expression: str):
    """(program, None) or (None, the error as upstream words a compile failure)."""
    from kapiserver_plugins.admissionregistration.cel import _environment
    from kapiserver_plugins.apiextensions.cel import format_library
    from kapiserver_plugins.apiextensions.cel.checked import read_checked
    from kapiserver_plugins.apiextensions.cel.compiler import compile_issues

    try:
        checked = _environment(False, True, None).compile(expression)
    except RuntimeError as err:
        return None, f"compilation failed: {compile_issues(err)}"
    serialized = checked.serialize()
    serialized = format_library.rewrite(serialized, read_checked(serialized))
    try:
        return _runtime().deserialize(serialized), None
    except RuntimeError as err:
        return None, f"compilation failed: {err}"


class MatchConditions:
    """The compiled conditions of one webhook."""

    def __init__(self, conditions: list, failure_policy: str):
        self.failure_policy = failure_policy
        self.conditions = []
        for condition in conditions:
            if not isinstance(condition, dict):
                continue
            expression = condition.get("expression") or ""
            program, error = _compile(expression)
            self.conditions.append((condition.get("name", ""), expression, program, error))

    def __bool__(self) -> bool:
        return bool(self.conditions)

    def match(self, obj, old, request: dict) -> MatchResult:
        from kapiserver_plugins.apiextensions.cel.compiler import runtime_error

        activation = _runtime().Activation({"object": obj, "oldObject": old,
                                            "request": request})
        errors = []
        for name, expression, program, error in self.conditions:
            if program is None:
                errors.append(f"compilation error: {error}")
                continue
            try:
                value = program.eval(activation).value()
            except RuntimeError as err:
                value = err
            if value is False:
                return MatchResult(False, failed_condition=name)
            if value is not True:
                detail = runtime_error(str(value))
                # cel.Error's text (filter.go): the expression quoted as %v in quotes.
                errors.append(f"expression '{expression}' resulted in error: {detail}")
        if errors:
            if self.failure_policy == "Ignore":
                return MatchResult(False)
            return MatchResult(False, error=errors[0] if len(errors) == 1
                               else "[" + ", ".join(errors) + "]")
        return MatchResult(True)
