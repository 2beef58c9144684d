"""A policy's CEL expressions compiled and evaluated (upstream's ``admission/plugin/cel``:
``filter``, ``composition`` and the cost budget of ``apis/cel/config.go``).

Compiling: each expression is checked where the policy's validation checked it
(``admissionregistration.cel``), then planned in the server's runtime environment where
``object``, ``oldObject``, ``params``, ``request`` and ``namespaceObject`` are plain values and
``authorizer``/``authorizer.requestResource`` the authorization library's (``authz``).

Variables are lazy, as upstream's ``CompositedCompiler``: the program reads
``variables.name`` through a function (the checked AST is rewritten: ``@variable("name")``)
that evaluates the variable the first time an expression of the running phase asks for
it and remembers its value (or error) for that phase. The function finds the running
evaluation in a context variable (one per greenlet and thread).

Cost: cel-cpp counts none, so an evaluation is charged the estimate of the expression
with the sizes actually bound (``apiextensions.cel.cost``), an upper bound of what cel-go
would count: more than ``PerCallLimit`` fails that expression (``operation cancelled:
actual cost limit exceeded``), and the expressions of one phase share one budget
(``RuntimeCELCostBudget``; ``RuntimeCELCostBudgetMatchConditions`` for match conditions).
A policy whose every expression stays under the limits whatever the input (the estimate
with every size at the request limit) is not charged at all.
"""

from __future__ import annotations

import contextvars
import json
from dataclasses import dataclass

from kapiserver.apimachinery.field_errors import go_quote
from kapiserver_plugins.apiextensions.cel import cost as costs
from kapiserver_plugins.apiextensions.cel.checked import read_checked
from kapiserver_plugins.apiextensions.cel.compiler import (PER_CALL_LIMIT, RUNTIME_COST_BUDGET,
                                                            runtime_error)
from kapiserver_plugins.apiextensions.cel.library import LibraryError
from kapiserver_plugins.apiextensions.cel.rewrite import (EXPR_CALL, EXPR_IDENT, ExprRewriter,
                                                          delimited, number_field,
                                                          rewrite_checked, string_constant)
from kapiserver_plugins.apiextensions.cel.checked import _one, fields
from kapiserver_plugins.apiextensions.cel.types import MAX_REQUEST_SIZE

#: ``RuntimeCELCostBudgetMatchConditions``
MATCH_CONDITIONS_BUDGET = 2_500_000
VARIABLE_FUNCTION = "@variable"
ROOTS = ("object", "oldObject", "params", "request", "namespaceObject", "authorizer",
         "authorizer.requestResource", "variables")
OUT_OF_BUDGET = ("validation failed due to running out of cost budget, no further validation "
                 "rules will be run")
CALL_LIMIT = "operation cancelled: actual cost limit exceeded"
_EXPR_SELECT = 5
_CURRENT: contextvars.ContextVar = contextvars.ContextVar("admission policy evaluation")


@dataclass
class Expression:
    """One compiled expression: a program, or the compile error (``error``)."""

    source: str
    program: object = None
    checked: object = None
    error: str = ""
    #: the estimated cost with every input at the request size limit
    worst: int = 0
    #: estimates by size bucket (see ``charge``)
    charges: dict = None

    def charge(self, size: int) -> int:
        """An upper bound of the cost with inputs of ``size`` (the estimate grows with the
        size, so the estimate at the next power of two bounds it; one estimate per bucket
        and worker)."""
        bucket = 1 << max(size, 1023).bit_length()
        if self.charges is None:
            self.charges = {}
        found = self.charges.get(bucket)
        if found is None:
            found = self.charges[bucket] = costs.estimate(
                self.checked, _no_size, (0, bucket + len(self.source)))[1]
        return found


class _Variables(ExprRewriter):
    """``variables.name`` as ``@variable("name")``; ``has(variables.name)`` as true (every
    declared variable is present)."""

    def skip(self, buf: bytes) -> bool:
        return b"variables" not in buf

    def node(self, expr_id: int, fs: dict, buf: bytes, shadowed: frozenset) -> bytes | None:
        select = _one(fs, _EXPR_SELECT)
        if select is None or "variables" in shadowed:
            return None
        sfs = fields(select)
        operand = _one(sfs, 1)
        ident = _one(fields(operand), EXPR_IDENT) if operand is not None else None
        if ident is None or _one(fields(ident), 1, b"") != b"variables":
            return None
        name = _one(sfs, 2, b"").decode()
        self.dropped.add(expr_id)
        if _one(sfs, 3, 0):  # has(variables.name)
            return number_field(2, expr_id) + delimited(3, number_field(2, 1))
        call = (delimited(2, VARIABLE_FUNCTION.encode())
                + delimited(3, string_constant(self.new_id(), name)))
        return number_field(2, expr_id) + delimited(EXPR_CALL, call)


def _no_size(path):
    return None


class Runtime:
    """The runtime environment of one server's policies (its authorizer answers the
    authorization library)."""

    def __init__(self, authorizer):
        from cel_expr_python import cel

        from kapiserver_plugins.apiextensions.cel.declarations import _wrap
        from kapiserver_plugins.apiextensions.cel.environment import new_runtime

        from .authz import Library, descriptor_file

        self.authz = Library(authorizer)
        variable = cel.FunctionDecl(VARIABLE_FUNCTION, [cel.Overload(
            "kapiserver_variable_string", cel.Type.DYN, [cel.Type.STRING],
            impl=_variable)])
        self.runtime = new_runtime(ROOTS, files=[descriptor_file()],
                                   functions=[variable, *self.authz.declarations(_wrap)])
        self.authz.bind(self.runtime.pool)

    def compile(self, source: str, result_types: tuple[str, ...], *, params: bool,
                authorizer: bool, variables: tuple[str, ...] | None) -> Expression:
        from kapiserver_plugins.admissionregistration.cel import check_expression

        checked, error = check_expression(source, result_types, params=params,
                                          authorizer=authorizer, variables=variables)
        if error is not None:
            return Expression(source, error=error.detail)
        serialized = checked.serialize()
        ast = read_checked(serialized)
        if variables is not None and b"variables" in serialized:
            serialized = rewrite_checked(serialized, _Variables(ast))
        try:
            program = self.runtime.plan(serialized, ast)
        except RuntimeError as err:
            return Expression(source, error=f"compilation failed: {err}")
        worst = costs.estimate(ast, _no_size, (0, MAX_REQUEST_SIZE))[1]
        return Expression(source, program, ast, worst=worst)

    def activation(self, data: dict):
        return self.runtime.env.Activation(data)


class Inputs:
    """The values an evaluation binds; ``size`` bounds what anything derived from them can
    measure (every string, list and map counted once: their JSON text is longer), computed
    once, when a charge needs it."""

    __slots__ = ("values", "_size")

    def __init__(self, *values):
        self.values = values
        self._size = None

    @property
    def size(self) -> int:
        if self._size is None:
            self._size = sum(len(json.dumps(v, separators=(",", ":"), default=str))
                             for v in self.values if v is not None)
        return self._size


class OutOfBudget(Exception):
    """The phase's budget ran out: no further expression is evaluated."""


class Evaluation:
    """One phase of one policy evaluation (validations, message expressions, audit
    annotations or match conditions): the activation, the policy's variables and what
    they evaluated to, and the remaining budget.

    ``accounting`` is false when no evaluation of the policy could exceed a limit."""

    __slots__ = ("activation", "values", "variables", "accounting", "remaining", "_inputs")

    def __init__(self, activation, inputs: Inputs, variables: dict, accounting: bool,
                 budget: int = RUNTIME_COST_BUDGET):
        self.activation = activation
        self.variables = variables
        self.values: dict = {}
        self.accounting = accounting
        self.remaining = budget
        self._inputs = inputs

    def _charge(self, expr: Expression) -> str:
        """Charge ``expr``'s cost: ``CALL_LIMIT`` when it is over the per-call limit;
        raises ``OutOfBudget``."""
        if not self.accounting:
            return ""
        charge = expr.charge(self._inputs.size)
        if charge > PER_CALL_LIMIT:
            return CALL_LIMIT
        if charge > self.remaining:
            raise OutOfBudget
        self.remaining -= charge
        return ""

    def evaluate(self, expr: Expression):
        """``(value, None)`` or ``(None, error)`` of a compiled expression (the error as
        upstream's ``filter`` words it); raises ``OutOfBudget``."""
        if expr.error:
            return None, f"compilation error: {expr.error}"
        problem = self._charge(expr)
        if problem:
            return None, f"expression {_quoted(expr.source)} resulted in error: {problem}"
        token = _CURRENT.set(self)
        try:
            result = expr.program.eval(self.activation)
            failed = result.type() == _error_type()
            value = result.value()
        except RuntimeError as err:
            failed, value = True, err
        finally:
            _CURRENT.reset(token)
        if failed:
            if isinstance(value, OutOfBudget) or self.remaining < 0:
                raise OutOfBudget
            return None, (f"expression {_quoted(expr.source)} resulted in error: "
                          f"{runtime_error(str(value))}")
        return (value, result.type()), None

    def variable(self, name: str):
        """The value of variable ``name`` (evaluated once per phase); raises
        ``LibraryError`` with upstream's words when it fails."""
        found = self.values.get(name)
        if found is None:
            found = self.values[name] = self._variable(name)
        value, error = found
        if error:
            raise LibraryError(error)
        return value

    def _variable(self, name: str):
        expr = self.variables.get(name)
        if expr is None:
            return None, f"no such key: {name}"
        if expr.error:
            return None, f"composited variable {go_quote(name)} fails to compile: {expr.error}"
        try:
            problem = self._charge(expr)
        except OutOfBudget:
            self.remaining = -1
            return None, OUT_OF_BUDGET
        if problem:
            return None, f"composited variable {go_quote(name)} fails to evaluate: {problem}"
        result = expr.program.eval(self.activation)
        if result.type() == _error_type():
            return None, (f"composited variable {go_quote(name)} fails to evaluate: "
                          f"{runtime_error(str(result.value()))}")
        return result.plain_value(), ""


def _variable(name):
    evaluation = _CURRENT.get(None)
    if evaluation is None:
        raise LibraryError(f"no such key: {name}")
    return evaluation.variable(name)


def _quoted(source: str) -> str:
    # cel.Error's text (filter.go): the expression printed with %v inside single quotes.
    return f"'{source}'"


_ERROR_TYPE = []


def _error_type():
    if not _ERROR_TYPE:
        from cel_expr_python import cel

        _ERROR_TYPE.append(cel.Type.ERROR)
    return _ERROR_TYPE[0]


def is_string(type_) -> bool:
    from cel_expr_python import cel

    return type_ == cel.Type.STRING


def is_null(type_) -> bool:
    from cel_expr_python import cel

    return type_ == cel.Type.NULL


def type_name(type_) -> str:
    """cel-go's name of a result type (``int``, ``bool``, ``map``…)."""
    text = str(type_).lower()
    return text.split("<", 1)[0]
