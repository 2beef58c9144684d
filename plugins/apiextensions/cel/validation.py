"""Evaluating the ``x-kubernetes-validations`` rules of a schema on a custom resource, as
upstream's ``Validator`` (apiextensions-apiserver/pkg/apiserver/schema/cel/validation.go).

A :class:`RuleSet` mirrors the schema where rules are declared (properties, items,
additionalProperties), compiled once. :meth:`RuleSet.validate` walks the object, binds
``self`` (and, on update, ``oldSelf`` to the correlated old value) at every node with rules,
and turns false rules into field errors worded as upstream's.

A rule with ``optionalOldSelf: true`` (``CRDValidationRatcheting``) also runs on create and
where no old value correlates, ``oldSelf`` then ``optional.none()`` (otherwise
``optional.of(old)``).

Ratcheting (``CRDValidationRatcheting``, on by default since 1.30): on update every rule
still runs, but a rule that does not use ``oldSelf`` and fails at a node that is unchanged
(or, where the node does not correlate, whose nearest correlatable ancestor is unchanged)
is a warning, not an error, as upstream's ``ratchetingOptions.shouldRatchetError``.
Transition rules are never ratcheted. Failures to evaluate (runtime errors, the cost budget)
are errors either way.

Cost: cel-cpp counts no cost, so the runtime budget is enforced before a rule runs, with the
cost estimator fed the sizes of the values bound (an upper bound of cel-go's actual cost).
When the schema's own bounds already keep every rule under ``PerCallLimit`` and all of them
together under ``RuntimeCELCostBudget``, nothing is counted at all: no evaluation could
exceed the budget.
"""

from __future__ import annotations

from kapiserver.apimachinery.field_errors import ErrorType, FieldError, FieldPath

from ..schema.correlation import make_map_list, ratchets
from . import compiler, optional
from . import cost as costs
from . import types
from .compiler import PER_CALL_LIMIT, RUNTIME_COST_BUDGET


class _Node:
    """The rules of one schema node and the nodes below it that have rules."""

    __slots__ = ("schema", "decl", "rules", "properties", "items", "additional",
                 "convert", "map_keys", "correlatable", "kind", "uses_old_self",
                 "optional_old_self", "roots",
                 "activation")

    def __init__(self, schema: dict, decl: types.DeclType, activation):
        self.schema = schema
        self.decl = decl
        self.rules: list[compiler.CompiledRule] = []
        self.properties: dict[str, _Node] = {}
        self.items: _Node | None = None
        self.additional: _Node | None = None
        self.convert = decl.converter()
        self.map_keys = tuple(schema.get("x-kubernetes-list-map-keys") or ()) \
            if schema.get("x-kubernetes-list-type") == "map" else ()
        self.correlatable = schema.get("x-kubernetes-map-type") in (None, "granular", "atomic")
        # The value type upstream shows for this node's errors (sts.Type).
        self.kind = schema.get("type") or ""
        self.uses_old_self = False
        #: whether a rule has optionalOldSelf (its program reads oldSelf from the holder)
        self.optional_old_self = False
        self.roots = {"self": decl, "oldSelf": decl}
        #: the runtime environment's Activation constructor
        self.activation = activation


def has_rules(schema) -> bool:
    """``hasXValidations``."""
    if not isinstance(schema, dict):
        return False
    if schema.get("x-kubernetes-validations"):
        return True
    if has_rules(schema.get("items")):
        return True
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict) and has_rules(extra):
        return True
    return any(has_rules(p) for p in (schema.get("properties") or {}).values())


class RuleSet:
    """The compiled rules of one CRD version's ``openAPIV3Schema``."""

    def __init__(self, root: _Node | None, accounting: bool):
        self.root = root
        #: whether evaluation must count cost (see the module docstring)
        self.accounting = accounting

    @property
    def empty(self) -> bool:
        return self.root is None

    @classmethod
    def compile(cls, schema: dict, is_resource_root: bool = True) -> RuleSet:
        """Compile every rule of ``schema`` (a resource's root, or any schema node when
        ``is_resource_root`` is false); compile errors surface when validating, as
        upstream's (they are refused when the CRD is written)."""
        if not has_rules(schema):
            return cls(None, False)
        root_decl = types.decl_type(schema, is_resource_root)
        if root_decl is None:
            return cls(None, False)
        env = compiler.Environment()
        builder = _Builder(env, types.unique_type_name())
        builder.name_and_declare(root_decl)
        root = builder.build(schema, root_decl, cardinality=1)
        total, worst = builder.total_cost, builder.worst_rule
        return cls(root, worst > PER_CALL_LIMIT or total > RUNTIME_COST_BUDGET)

    def validate(self, obj, old=None, correlated=None, warnings: list[str] | None = None,
                 path: FieldPath | None = None) -> list[FieldError]:
        """Every failed rule of ``obj`` (``old`` on update) as a field error, below ``path``.

        ``correlated`` (the ``schema.correlation.Correlated`` of ``obj`` and ``old``) turns
        ratcheting on: the failures it excuses are appended to ``warnings`` (when given) as
        the text upstream puts in a Warning header."""
        if self.root is None:
            return []
        run = _Run(self.accounting, warnings)
        run.node(self.root, path, obj, old, correlated, None)
        return run.errors


class _Builder:
    def __init__(self, env: compiler.Environment, base_name: str):
        self.env = env
        self.base_name = base_name
        self.extra = 0
        self.total_cost = 0
        self.worst_rule = 0

    def name_and_declare(self, decl: types.DeclType) -> None:
        name = self.base_name if not self.extra else f"{self.base_name}x{self.extra}"
        self.extra += 1
        types.assign_names(decl, name)
        self.env.declare([decl])

    def build(self, schema: dict, decl: types.DeclType, cardinality: int | None) -> _Node | None:
        if not has_rules(schema):
            return None
        node = _Node(schema, decl, self.env.runtime.Activation)
        rules = schema.get("x-kubernetes-validations") or []
        if rules:
            for rule in rules:
                compiled = self.env.compile_rule(decl, rule if isinstance(rule, dict) else {},
                                                 schema)
                node.rules.append(compiled)
                node.uses_old_self |= compiled.uses_old_self
                node.optional_old_self |= compiled.optional_old_self
                count = cardinality if cardinality is not None else \
                    types.max_cardinality(decl.min_size)
                for expr in (compiled.compiled, compiled.message):
                    if expr is not None:
                        self.worst_rule = max(self.worst_rule, expr.bound)
                        self.total_cost = min(self.total_cost + expr.bound * count, costs.MAX)
        items = schema.get("items")
        if decl.kind == types.LIST and isinstance(items, dict):
            node.items = self.build(items, decl.elem, _times(cardinality, decl.schema,
                                                             "maxItems"))
        extra = schema.get("additionalProperties")
        if decl.kind == types.MAP and isinstance(extra, dict):
            node.additional = self.build(extra, decl.elem, _times(cardinality, decl.schema,
                                                                  "maxProperties"))
        if decl.kind == types.OBJECT:
            for prop, sub in sorted((schema.get("properties") or {}).items()):
                if not has_rules(sub):
                    continue
                escaped = types.escape(prop)
                if escaped is not None:
                    sub_decl = decl.field_type(escaped)
                else:
                    # An unescapable name hides the field from CEL, not its own rules.
                    sub_decl = types.decl_type(sub, bool(sub.get("x-kubernetes-embedded-resource")))
                    if sub_decl is not None:
                        self.name_and_declare(sub_decl)
                if sub_decl is None:
                    continue
                child = self.build(sub, sub_decl, cardinality)
                if child is not None:
                    node.properties[prop] = child
        return node


def _times(cardinality, schema: dict, bound: str):
    if cardinality is None or schema.get(bound) is None:
        return None
    return cardinality * max(int(schema[bound]), 0)


class _Stop(Exception):
    """The budget ran out: no further rules are evaluated."""


class _Run:
    """One validation: the errors so far and the remaining budget."""

    def __init__(self, accounting: bool, warnings: list[str] | None):
        self.errors: list[FieldError] = []
        self.warnings = warnings
        self.accounting = accounting
        self.remaining = RUNTIME_COST_BUDGET

    def node(self, node: _Node, path, obj, old, corr, parent) -> None:
        try:
            self._node(node, path, obj, old, corr, parent)
        except _Stop:
            pass

    def _node(self, node: _Node, path, obj, old, corr, parent) -> None:
        """Validate ``obj`` (``old``: its old value for ``oldSelf``) at ``node``. ``corr`` is
        its correlation for ratcheting, None where it has none; ``parent`` then its nearest
        correlatable ancestor (upstream's ``ratchetingOptions``)."""
        if obj is None:
            return
        if node.rules:
            self._rules(node, path, obj, old, corr, parent)
        if isinstance(obj, list) and node.items is not None:
            old_items = make_map_list(node.schema, old) if node.map_keys else None
            for i, item in enumerate(obj):
                old_item = old_items.get(item) if old_items is not None else None
                if corr is not None:
                    self._node(node.items, _index(path, i), item, old_item, corr.index(i),
                               corr)
                else:
                    self._node(node.items, _index(path, i), item, old_item, None, parent)
        elif isinstance(obj, dict):
            old_map = old if isinstance(old, dict) and node.correlatable else None
            if node.additional is not None:
                for key in sorted(obj):
                    self._node(node.additional, _key(path, key), obj[key],
                               old_map.get(key) if old_map is not None else None,
                               *_step(corr, parent, key))
            if node.properties:
                for key in sorted(obj):
                    sub = node.properties.get(key)
                    if sub is not None:
                        self._node(sub, _child(path, key), obj[key],
                                   old_map.get(key) if old_map is not None else None,
                                   *_step(corr, parent, key))

    def _fail(self, error: FieldError, ratcheted: bool) -> None:
        """Report a failed rule: an error, or a warning when ratcheting excuses it."""
        if not ratcheted:
            self.errors.append(error)
        elif self.warnings is not None:
            self.warnings.append(str(error))

    def _charge(self, node: _Node, compiled: compiler.Compiled, values: dict) -> int:
        if compiled.constant_cost is not None:
            return compiled.constant_cost
        size_of = costs.observed_sizes(node.roots, values, costs.schema_sizes(node.roots))
        literal = len(compiled.source)
        unknown = (0, costs.input_size(v for v in values.values() if v is not None) + literal)
        return costs.estimate(compiled.checked, size_of, unknown)[1]

    def _rules(self, node: _Node, path, obj, old, corr, parent) -> None:
        if self.accounting and self.remaining <= 0:
            self.errors.append(FieldError.invalid(path, node.kind, _OUT_OF_BUDGET))
            raise _Stop
        convert = node.convert
        value = convert(obj) if convert is not None else obj
        old_value = None
        if old is not None and node.uses_old_self:
            old_value = convert(old) if convert is not None else old
        activation = None
        for rule in node.rules:
            if rule.error:
                self.errors.append(FieldError.invalid(path, node.kind,
                                                      f"rule compile error: {rule.error}"))
                continue
            compiled = rule.compiled
            if compiled is None:
                continue
            if rule.uses_old_self and old is None and not rule.optional_old_self:
                continue  # transition rules need a correlatable old value, unless optional
            if self.accounting:
                charge = self._charge(node, compiled, {"self": obj, "oldSelf": old})
                if charge > PER_CALL_LIMIT:
                    self.errors.append(FieldError.invalid(path, node.kind, _call_limit(rule)))
                    raise _Stop
                if charge > self.remaining:
                    self.errors.append(FieldError.invalid(path, node.kind, _OUT_OF_BUDGET))
                    raise _Stop
                self.remaining -= charge
            if activation is None:
                data = {"self": value}
                if old_value is not None:
                    data["oldSelf"] = old_value
                if node.optional_old_self:
                    # optional.of(old), or optional.none() (see ``optional``)
                    data[optional.HOLDER] = [old_value] if old_value is not None else []
                activation = node.activation(data)
            result = _evaluate(compiled.program, activation)
            if result is True:
                continue
            if not isinstance(result, bool):
                self._runtime_error(node, path, rule, result)
                continue
            target = path
            if rule.field_path:
                target = _child(path, rule.field_path)
            # Only failures are ratcheted: the rule ran (and cost) whatever the answer.
            ratcheted = not rule.uses_old_self and ratchets(corr, parent)
            detail = None
            if rule.message is not None:
                detail = self._message(node, target, rule, activation, obj, old, ratcheted)
            if detail is None:
                detail = _default_message(rule.rule)
            self._fail(_error_for_reason(target, node.kind, detail, rule.rule.get("reason")),
                       ratcheted)

    def _runtime_error(self, node, path, rule, error: str) -> None:
        if compiler.is_iteration_limit(error):
            self.errors.append(FieldError.invalid(path, node.kind, _call_limit(rule)))
            raise _Stop
        text = compiler.runtime_error(error)
        if text.startswith("no such overload"):
            detail = (f"'{text}': call arguments did not match a supported operator, function "
                      f"or macro signature for rule: {_rule_text(rule.rule)}")
        else:
            detail = f"{text} evaluating rule: {_rule_text(rule.rule)}"
        self.errors.append(FieldError.invalid(path, node.kind, detail))

    def _message(self, node, path, rule, activation, obj, old, ratcheted) -> str | None:
        """``evalMessageExpression``: the message, or None to fall back to the static one."""
        compiled = rule.message
        if self.accounting:
            charge = self._charge(node, compiled, {"self": obj, "oldSelf": old})
            if charge > PER_CALL_LIMIT:
                self._fail(FieldError.invalid(
                    path, node.kind, "no further validation rules will be run due to call cost "
                    f"exceeds limit for messageExpression: {_go_q(compiled.source)}"),
                    ratcheted)
                raise _Stop
            if charge > self.remaining:
                self._fail(FieldError.invalid(
                    path, node.kind, "messageExpression evaluation failed due to running out "
                    "of cost budget, no further validation rules will be run"), ratcheted)
                raise _Stop
            self.remaining -= charge
        result = _evaluate(compiled.program, activation, want=str)
        if not isinstance(result, _Message):
            return None
        text = result.text.strip()
        if not text or "\n" in text or len(text.encode()) > compiler.MAX_MESSAGE_EXPRESSION_LENGTH:
            return None
        return text


class _Message:
    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


def _evaluate(program, activation, want=bool):
    """True/False (or a :class:`_Message`), or the evaluation error's text."""
    try:
        result = program.eval(activation)
        value = result.value()
    except RuntimeError as err:
        return str(err)
    if want is bool:
        return value if isinstance(value, bool) else str(value)
    if isinstance(value, str) and result.type() == _string_type():
        return _Message(value)
    return None


def _string_type():
    from cel_expr_python import cel

    return cel.Type.STRING


_OUT_OF_BUDGET = ("validation failed due to running out of cost budget, no further validation "
                  "rules will be run")


def _call_limit(rule) -> str:
    return ("'operation cancelled: actual cost limit exceeded': no further validation rules "
            f"will be run due to call cost exceeds limit for rule: {_rule_text(rule.rule)}")


def _rule_text(rule: dict) -> str:
    """``ruleErrorString``: the message if any, else the rule."""
    message = (rule.get("message") or "").strip()
    return message or (rule.get("rule") or "").strip()


def _default_message(rule: dict) -> str:
    """``ruleMessageOrDefault``."""
    message = rule.get("message") or ""
    if not message:
        return f"failed rule: {_rule_text(rule)}"
    return message.strip()


def _go_q(text: str) -> str:
    from kapiserver.apimachinery.field_errors import go_quote

    return go_quote(text)


def _error_for_reason(path, kind: str, detail: str, reason) -> FieldError:
    """``fieldErrorForReason``."""
    if reason == ErrorType.FORBIDDEN:
        return FieldError.forbidden(path, detail)
    if reason == ErrorType.REQUIRED:
        return FieldError.required(path, detail)
    if reason == ErrorType.DUPLICATE:
        return FieldError.duplicate(path, kind)
    return FieldError.invalid(path, kind, detail)


def _child(path, name: str) -> FieldPath:
    return path.child(name) if path is not None else FieldPath(name)


def _index(path, i: int) -> FieldPath:
    return path.index(i) if path is not None else FieldPath._node("", str(i), None)


def _key(path, key: str) -> FieldPath:
    return path.key(key) if path is not None else FieldPath._node("", key, None)


def _step(corr, parent, key: str) -> tuple:
    """``ratchetingOptions.key``: the correlation of child ``key`` and its nearest
    correlatable ancestor. Below a node that does not correlate, nothing does; at the root
    ``kind`` and ``apiVersion`` never ratchet (both objects were converted to one version)."""
    if corr is None:
        return None, parent
    if parent is None and (key == "apiVersion" or key == "kind"):
        return None, None
    return corr.key(key), corr
