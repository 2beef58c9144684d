"""Compiling ``x-kubernetes-validations`` rules with cel-cpp, as upstream's ``Compile``.

One :class:`Environment` serves one schema: a descriptor pool with the schema's types and the
library's, checker environments (``self`` and ``oldSelf`` typed as the node's schema, or
``oldSelf`` an ``optional_type`` of it for rules with ``optionalOldSelf``) and one runtime
environment where ``self`` and ``oldSelf`` are ``dyn`` and bound to unstructured values. Rules
are checked in the typed environment, then their checked expressions are planned in the
runtime one, which is what makes compile errors upstream's (``undefined field 'x'``) while
evaluation reads plain dicts. The runtime cannot bind optional values, so an
``optionalOldSelf`` rule's program reads ``oldSelf`` from a list (see ``optional``), and its
lists are plain, so operators on set and map lists call the schema-aware ones of
``listtypes``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import cost as costs
from . import declarations, format_library, library, listtypes, optional, types
from .checked import CheckedAST, read_checked

#: ``celconfig.PerCallLimit`` and ``RuntimeCELCostBudget`` (apiserver/pkg/apis/cel/config.go)
PER_CALL_LIMIT = 1_000_000
RUNTIME_COST_BUDGET = 10_000_000
#: ``StaticEstimatedCostLimit`` and ``StaticEstimatedCRDCostLimit`` (apiextensions validation)
STATIC_COST_LIMIT = 10_000_000
STATIC_CRD_COST_LIMIT = 100_000_000
MAX_MESSAGE_EXPRESSION_LENGTH = 5 * 1024

_STATUS_PREFIX = re.compile(r"^[A-Z_]+: ")
_STATUS_SUFFIX = re.compile(r" \[[A-Z_]+\]$")
_UNDEFINED_FIELD = re.compile(r"(undefined field '[^']*') not found in struct '[^']*'")
_TYPE_NAME = re.compile(r"selfType\d+(?:\.[A-Za-z0-9_]+)*")


def _type_names(text: str) -> str:
    """Our nested message names (``selfType1.spec__``) as upstream's (``selfType1.spec``)."""
    def fix(m):
        head, *parts = m.group().split(".")
        return ".".join([head] + [p[:-2] if p.endswith("__") else p for p in parts])

    return _TYPE_NAME.sub(fix, text)


def compile_issues(err: Exception) -> str:
    """cel-cpp's compile error as cel-go's ``Issues.String()``."""
    text = _STATUS_SUFFIX.sub("", _STATUS_PREFIX.sub("", str(err).strip()))
    return _type_names(_UNDEFINED_FIELD.sub(r"\1", text))


@dataclass
class Compiled:
    """One compiled expression."""

    source: str
    program: object
    checked: CheckedAST
    #: the static worst case (schema bounds), and the cost when it depends on no size
    max_cost: int
    constant_cost: int | None
    #: what an evaluation can cost at most: ``max_cost`` unless upstream's estimate sizes
    #: values that do not come from a variable by the rule's type (``cost.schema_sizes``)
    bound: int = 0


@dataclass
class CompiledRule:
    """``CompilationResult`` of one rule."""

    rule: dict
    compiled: Compiled | None = None
    error: str = ""
    uses_old_self: bool = False
    #: ``optionalOldSelf: true``: the rule also runs with no old value (oldSelf none)
    optional_old_self: bool = False
    message: Compiled | None = None
    message_error: str = ""
    #: the ``fieldPath`` as upstream normalises it, or ""
    field_path: str = ""


class Environment:
    """The CEL environments of one schema."""

    def __init__(self):
        from cel_expr_python import cel
        from cel_expr_python.ext import ext_optional

        self._cel = cel
        self._optional = ext_optional
        self.pool = types.new_pool(library.library_files())
        self.library = library.Runtime(self.pool)
        exclusions = "".join(f'    - name: "{op}"\n' for op in declarations.EXCLUDED_STDLIB)
        self._config_yaml = ("stdlib:\n  exclude_functions:\n" + exclusions
                             + format_library.checker_config_yaml())
        self.list_types = listtypes.TypeRegistry()
        self.runtime = cel.NewEnv(
            self.pool, variables={"self": cel.Type.DYN, "oldSelf": cel.Type.DYN,
                                  optional.HOLDER: cel.Type.DYN},
            functions=(declarations.runtime_declarations(self.library)
                       + self.list_types.runtime_declarations()),
            extensions=[ext_optional.ExtOptional()])
        self._checkers: dict = {}

    def declare(self, roots: list[types.DeclType]) -> None:
        """Add the message types of named declared types to the pool."""
        types.add_to_pool(self.pool, roots, f"{roots[0].name or 'schema'}.proto")

    def checker(self, decl: types.DeclType, optional_old_self: bool = False):
        """The checker environment of rules on ``decl`` (one per type and kind of rule)."""
        key = (decl, optional_old_self)
        env = self._checkers.get(key)
        if env is None:
            env = self._checkers[key] = self._new_checker(decl, optional_old_self)
        return env

    def _new_checker(self, decl: types.DeclType, optional_old_self: bool):
        cel = self._cel
        t = types.cel_type(decl)
        config = self._config_yaml
        variables = {"self": t, "oldSelf": t}
        if optional_old_self:
            # cel.Type.AbstractType("optional_type", [t]) reaches cel-cpp as an opaque type
            # named "optional_type<T>", unrelated to its optional_type(T); an environment
            # config declares the real one.
            del variables["oldSelf"]
            config += ("variables:\n  - name: oldSelf\n    type_name: optional_type\n"
                       "    params:\n" + types.type_info_yaml(decl, indent=6))
        return cel.NewEnv(self.pool, config=cel.NewEnvConfigFromYaml(config),
                          variables=variables, functions=declarations.checker_declarations(),
                          extensions=[self._optional.ExtOptional()])

    def compile(self, checker, decl: types.DeclType, source: str, result_kind: str,
                old_self_from_holder: bool = False):
        """(Compiled, None) or (None, issues); ``result_kind`` is "bool" or "string".
        ``old_self_from_holder``: the program reads an optional ``oldSelf`` from
        ``optional.HOLDER``."""
        cel = self._cel
        try:
            expr = checker.compile(source)
        except RuntimeError as err:
            return None, ("issues", compile_issues(err))
        wanted = cel.Type.BOOL if result_kind == "bool" else cel.Type.STRING
        if expr.return_type() != wanted:
            return None, ("type", "")
        serialized = expr.serialize()
        checked = read_checked(serialized)
        literal_error = _literal_errors(checked, source)
        if literal_error:
            return None, ("issues", literal_error)
        roots = {"self": decl, "oldSelf": decl}
        worst = costs.estimate(checked, costs.schema_sizes(roots))[1]
        bound = costs.estimate(checked, costs.schema_sizes(roots, rooted_only=True))[1]
        constant = worst if costs.is_constant(checked) else None
        if old_self_from_holder:
            serialized = optional.read_old_self_from_holder(serialized, checked)
        serialized = listtypes.rewrite(serialized, checked, roots, self.list_types)
        serialized = format_library.rewrite(serialized, checked)
        program = self.runtime.deserialize(serialized)
        return Compiled(source, program, checked, worst, constant, max(worst, bound)), None

    def compile_rule(self, decl: types.DeclType, rule: dict, schema: dict) -> CompiledRule:
        """``compileRule``: the rule, then its messageExpression."""
        result = CompiledRule(rule)
        source = rule.get("rule") or ""
        if not source.strip():
            return result
        # Only true counts (ptr.Deref(rule.OptionalOldSelf, false)).
        result.optional_old_self = rule.get("optionalOldSelf") is True
        checker = self.checker(decl, result.optional_old_self)
        compiled, problem = self.compile(checker, decl, source, "bool",
                                         old_self_from_holder=result.optional_old_self)
        if problem:
            kind, text = problem
            result.error = ("compilation failed: " + text if kind == "issues"
                            else "cel expression must evaluate to a bool")
            return result
        result.compiled = compiled
        result.uses_old_self = "oldSelf" in compiled.checked.referenced_names()
        field_path = rule.get("fieldPath") or ""
        if field_path:
            from ..schema.fieldpath import valid_field_path

            normalized, _, _ = valid_field_path(field_path, schema)
            result.field_path = str(normalized) if normalized is not None else ""
        message_source = rule.get("messageExpression") or ""
        if message_source:
            # Checked as the rule is (oldSelf optional), but upstream evaluates it with the
            # activation of the rules without optionalOldSelf (oldSelf the old value itself,
            # or undefined), so its program reads oldSelf as it is.
            message, problem = self.compile(checker, decl, message_source, "string")
            if problem:
                kind, text = problem
                result.message_error = ("messageExpression compilation failed: " + text
                                        if kind == "issues"
                                        else "messageExpression must evaluate to a string")
            else:
                result.message = message
        return result


def _literal_errors(checked: CheckedAST, source: str) -> str:
    """``cel.ValidateRegexLiterals``: a constant pattern that does not compile is a compile
    error at the pattern (``invalid matches argument``)."""
    from . import checked as ast
    from ..schema.validation import _compile

    problems = []

    def visit(e):
        if e.kind == ast.CALL and e.value in ("matches", "find", "findAll"):
            args = e.args
            pattern = args[-1] if e.value == "matches" else (args[0] if args else None)
            if e.value == "findAll" and len(args) > 1:
                pattern = args[0]
            if pattern is not None and pattern.kind == ast.CONST and \
                    isinstance(pattern.value, str) and _compile(pattern.value) is None:
                problems.append((checked.positions.get(pattern.id, 0),
                                 f"invalid {e.value} argument"))
        for child in e.children:
            visit(child)

    visit(checked.expr)
    return "\n".join(_issue(source, offset, text) for offset, text in sorted(problems))


def _issue(source: str, offset: int, text: str) -> str:
    """One error formatted as cel-go's ``Errors.ToDisplayString``."""
    line_start = source.rfind("\n", 0, offset) + 1
    line_no = source.count("\n", 0, offset) + 1
    column = offset - line_start
    line_end = source.find("\n", offset)
    snippet = source[line_start:line_end if line_end >= 0 else len(source)]
    return (f"ERROR: <input>:{line_no}:{column + 1}: {text}\n | {snippet}\n"
            f" | {'.' * column}^")


_RUNTIME_ERRORS = (
    (re.compile(r'^Key not found in map : "?(.*?)"?$'), lambda m: f"no such key: {m[1]}"),
    (re.compile(r"^Index error: index=(-?\d+) size=(\d+)$"),
     lambda m: f"index '{m[1]}' out of range in list size '{m[2]}'"),
    (re.compile(r"^divide by zero$"), lambda m: "division by zero"),
    (re.compile(r"^No matching overloads found.*"), lambda m: "no such overload"),
)


def runtime_error(text: str) -> str:
    """cel-cpp's evaluation error as cel-go words it."""
    text = _STATUS_SUFFIX.sub("", _STATUS_PREFIX.sub("", str(text).strip()))
    for pattern, wording in _RUNTIME_ERRORS:
        m = pattern.match(text)
        if m:
            return wording(m)
    return text


def is_iteration_limit(text: str) -> bool:
    """cel-cpp stops a comprehension after 10,000 iterations in one evaluation."""
    return "Iteration budget exceeded" in str(text)
