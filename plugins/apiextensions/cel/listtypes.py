"""Equality, concatenation and ``in`` of schema-typed values, as upstream's CEL values.

Upstream binds custom resource data as ``UnstructuredToVal`` values
(apiserver/pkg/cel/common/values.go) whose operators follow the schema: a list with
``x-kubernetes-list-type: set`` or ``map`` is equal to another list with the same elements
(or the same entries by key) in any order; ``X + Y`` on a set list is a union and on a map list
a merge by key; objects and atomic lists compare field by field and element by element with
their own schemas, so a set or map list anywhere inside them keeps its semantics.

cel-cpp binds plain lists, whose equality is ordered. So each ``==``, ``!=``, ``+`` and ``in``
whose left operand (the right one for ``in``) is statically a schema value holding such a list
is rewritten (see ``rewrite``) into a call of a function below, with the operand's schema type
as a third argument. Which schema type a subexpression has is inferred as upstream's values
carry it: through ``self``/``oldSelf``, field selection, indexing, the iteration variable of a
macro over a typed list, and concatenation; a value a macro or literal builds is a plain list,
as upstream's.
"""

from __future__ import annotations

import json

from . import checked as ast
from . import types
from .checked import entries
from .library import LibraryError
from .rewrite import (CALL_ARGS, CALL_FUNCTION, EXPR_CALL, ExprRewriter, delimited,
                      rewrite_checked, string_constant)

EQUALS, NOT_EQUALS, ADD, IN = "@k8s.equals", "@k8s.notEquals", "@k8s.add", "@k8s.in"
_OPERATORS = {"_==_": EQUALS, "_!=_": NOT_EQUALS, "_+_": ADD, "@in": IN}


def _list_type(decl: types.DeclType) -> str:
    return decl.schema.get("x-kubernetes-list-type") or "atomic"


def _is_unordered_list(decl: types.DeclType | None) -> bool:
    return decl is not None and decl.kind == types.LIST and _list_type(decl) in ("set", "map")


def holds_unordered_list(decl: types.DeclType | None) -> bool:
    """Whether ``decl`` is, or holds anywhere inside, a set or map list."""
    if decl is None:
        return False
    cached = decl.__dict__.get("_holds_unordered")
    if cached is None:
        decl.__dict__["_holds_unordered"] = False  # a recursive schema cannot loop here
        if _is_unordered_list(decl):
            cached = True
        elif decl.kind in (types.LIST, types.MAP):
            cached = holds_unordered_list(decl.elem)
        elif decl.kind == types.OBJECT:
            cached = any(holds_unordered_list(sub) for _, sub in decl.fields.values())
        else:
            cached = False
        decl.__dict__["_holds_unordered"] = cached
    return cached


# -- the registry of schema types a program names -------------------------------------------

class TypeRegistry:
    """The schema types the rewritten programs of one environment pass by name."""

    def __init__(self):
        self._keys: dict[int, str] = {}
        self._decls: dict[str, types.DeclType] = {}

    def key(self, decl: types.DeclType) -> str:
        key = self._keys.get(id(decl))
        if key is None:
            key = self._keys[id(decl)] = str(len(self._decls))
            self._decls[key] = decl
        return key

    def decl(self, key: str) -> types.DeclType:
        return self._decls[key]

    def runtime_declarations(self) -> list:
        """The functions the rewritten calls name, for the runtime environment."""
        from cel_expr_python import cel

        from .declarations import _wrap

        T = cel.Type
        D, O = cel.FunctionDecl, cel.Overload
        # One overload per runtime signature: cel-expr-python does not dispatch on dyn.
        kinds = {"list": T.List(T.DYN), "map": T.Map(T.DYN, T.DYN), "null": T.NULL}
        containers = [(a, b) for a in kinds for b in kinds if "null" in (a, b) or a == b]

        def overloads(oid, result, pairs, impl):
            return [O(f"{oid}_{a}_{b}", result, [kinds[a], kinds[b], T.STRING], impl=_wrap(impl))
                    for a, b in pairs]

        return [
            D(EQUALS, overloads("k8s_equals", T.BOOL, containers,
                                lambda a, b, k: equal(self.decl(k), a, b))),
            D(NOT_EQUALS, overloads("k8s_not_equals", T.BOOL, containers,
                                    lambda a, b, k: not equal(self.decl(k), a, b))),
            D(ADD, overloads("k8s_add", T.List(T.DYN), [("list", "list")],
                             lambda a, b, k: add(self.decl(k), a, b))),
            D(IN, overloads("k8s_in", T.BOOL, [(kind, "list") for kind in kinds],
                            lambda v, lst, k: contains(self.decl(k), lst, v))),
        ]


# -- static inference: the schema type of a subexpression ------------------------------------

class _Planner:
    """Finds the calls to rewrite: expression id -> (function, schema type)."""

    def __init__(self, checked: ast.CheckedAST, roots: dict):
        self.checked = checked
        self.messages: dict[str, types.DeclType] = {}
        for decl in roots.values():
            self._index(decl, set())
        self.plan: dict[int, tuple[str, types.DeclType]] = {}

    def _index(self, decl: types.DeclType | None, seen: set) -> None:
        if decl is None or id(decl) in seen:
            return
        seen.add(id(decl))
        if decl.kind == types.OBJECT:
            if decl.name:
                self.messages[decl.name] = decl
            for _, sub in decl.fields.values():
                self._index(sub, seen)
        elif decl.kind in (types.LIST, types.MAP):
            self._index(decl.elem, seen)

    def decl(self, e: ast.Expr, scope: dict) -> types.DeclType | None:
        """The schema type of ``e``'s value, or None when it is not a schema value."""
        if e.kind == ast.IDENT:
            return scope.get(e.value)
        if e.kind == ast.SELECT and not e.flag:
            return self._member(self.decl(e.children[0], scope), e.value) \
                or self._by_message(e)
        if e.kind == ast.CALL:
            name, args = e.value, e.args
            if name in ("_[_]", "_[?_]") and len(args) == 2:
                container = self.decl(args[0], scope)
                if container is not None and container.kind in (types.LIST, types.MAP):
                    return container.elem
            elif name == "_?._" and len(args) == 2 and args[1].kind == ast.CONST:
                return self._member(self.decl(args[0], scope), str(args[1].value))
            elif name in ("value", "orValue") and e.target is not None:
                return self.decl(e.target, scope)
            elif name == "_+_" and len(args) == 2:
                left = self.decl(args[0], scope)
                if left is not None and left.kind == types.LIST:
                    return left
            elif name == "_?_:_" and len(args) == 3:
                then, other = self.decl(args[1], scope), self.decl(args[2], scope)
                if then is other:
                    return then
        return self._by_message(e)

    @staticmethod
    def _member(decl: types.DeclType | None, name: str) -> types.DeclType | None:
        if decl is None:
            return None
        if decl.kind == types.OBJECT:
            return decl.field_type(name)
        if decl.kind == types.MAP:
            return decl.elem
        return None

    def _by_message(self, e: ast.Expr) -> types.DeclType | None:
        """An object's message type names its schema type; a list's type does not (a
        literal of typed elements is a plain list)."""
        t = self.checked.type_of(e)
        return self.messages.get(t.name) if t.kind == ast.T_MESSAGE else None

    def walk(self, e: ast.Expr, scope: dict) -> None:
        if e.kind == ast.COMPREHENSION:
            iter_range, init, condition, step, result = e.children
            iter_var, accumulator, second = e.names
            self.walk(iter_range, scope)
            self.walk(init, scope)
            ranged = self.decl(iter_range, scope)
            element = ranged.elem if ranged is not None and ranged.kind == types.LIST \
                and not second else None
            inner = {**scope, iter_var: element, accumulator: None}
            if second:
                inner[second] = None
            self.walk(condition, inner)
            self.walk(step, inner)
            self.walk(result, {**scope, accumulator: None})
            return
        for child in e.children:
            self.walk(child, scope)
        if e.kind != ast.CALL or e.value not in _OPERATORS or len(e.args) != 2:
            return
        left, right = e.args
        if e.value == "@in":
            container = self.decl(right, scope)
            if container is not None and container.kind == types.LIST \
                    and holds_unordered_list(container.elem):
                self.plan[e.id] = (IN, container)
            return
        decl = self.decl(left, scope)
        if self.checked.type_of(left).kind == ast.T_ABSTRACT:
            return  # an optional: its equality is the optional's
        if e.value == "_+_":
            if _is_unordered_list(decl):
                self.plan[e.id] = (ADD, decl)
        elif holds_unordered_list(decl):
            self.plan[e.id] = (_OPERATORS[e.value], decl)


class _CallRewriter(ExprRewriter):
    """Each planned call renamed, with its schema type's key as a last argument."""

    def __init__(self, checked: ast.CheckedAST, plan: dict, registry: TypeRegistry):
        super().__init__(checked)
        self.plan = plan
        self.registry = registry

    def node(self, expr_id: int, fs: dict, buf: bytes, shadowed: frozenset) -> bytes | None:
        planned = self.plan.get(expr_id)
        if planned is None or EXPR_CALL not in fs:
            return None
        function, decl = planned
        self.dropped.add(expr_id)
        out = []
        for number, value, raw in entries(self.children(buf, shadowed)):
            if number != EXPR_CALL:
                out.append(raw)
                continue
            call = b"".join(delimited(CALL_FUNCTION, function.encode()) if n == CALL_FUNCTION
                            else r for n, _, r in entries(value))
            key = string_constant(self.new_id(), self.registry.key(decl))
            out.append(delimited(EXPR_CALL, call + delimited(CALL_ARGS, key)))
        return b"".join(out)


def rewrite(serialized: bytes, checked: ast.CheckedAST, roots: dict,
            registry: TypeRegistry) -> bytes:
    """``serialized`` with the operators on set and map lists rewritten, or as it is."""
    if not any(holds_unordered_list(decl) for decl in roots.values()):
        return serialized
    planner = _Planner(checked, roots)
    planner.walk(checked.expr, dict(roots))
    if not planner.plan:
        return serialized
    return rewrite_checked(serialized, _CallRewriter(checked, planner.plan, registry))


# -- the operators at runtime -----------------------------------------------------------------

def _no_such_overload():
    return LibraryError("no such overload")


def _hashable(value):
    """A key equal for values CEL finds equal (1 and 1.0; true is not 1)."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float, str, bytes)) or value is None:
        return value
    serialize = getattr(value, "SerializeToString", None)
    if serialize is not None:
        return (type(value).__name__, serialize(deterministic=True))
    try:
        hash(value)
        return value
    except TypeError:
        return ("json", json.dumps(value, sort_keys=True, default=str))


def _map_key(element, keys: tuple):
    if not isinstance(element, dict):
        raise LibraryError("unexpected data format for element of array with "
                           f"x-kubernetes-list-type=map: {type(element).__name__}")
    return tuple(_hashable(element.get(k)) for k in keys)


def _escaped_keys(decl: types.DeclType) -> tuple:
    return tuple(types.escape(k) or k for k in decl.schema.get("x-kubernetes-list-map-keys") or ())


def plain_equal(a, b) -> bool:
    """CEL's equality of values without schema: bool is not a number, lists in order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(
            plain_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(
            plain_equal(v, b[k]) for k, v in a.items())
    return a == b


def equal(decl: types.DeclType, a, b) -> bool:
    """``UnstructuredToVal(a, schema).Equal(b)``."""
    if a is None or b is None or decl is None:
        return plain_equal(a, b)
    if decl.kind == types.LIST:
        if not isinstance(a, list) or not isinstance(b, list):
            raise _no_such_overload()
        if len(a) != len(b):
            return False
        list_type = _list_type(decl)
        if list_type == "set":
            present = {_hashable(x) for x in a}
            return all(_hashable(y) in present for y in b)
        if list_type == "map":
            keys = _escaped_keys(decl)
            by_key = {_map_key(x, keys): x for x in a}
            for y in b:
                x = by_key.get(_map_key(y, keys), _MISSING)
                if x is _MISSING or not equal(decl.elem, x, y):
                    return False
            return True
        return all(equal(decl.elem, x, y) for x, y in zip(a, b))
    if decl.kind in (types.OBJECT, types.MAP):
        if not isinstance(a, dict) or not isinstance(b, dict):
            raise _no_such_overload()
        if len(a) != len(b):
            return False
        for key, value in a.items():
            sub = decl.elem if decl.kind == types.MAP else decl.field_type(key)
            if sub is None:
                if key in b and not plain_equal(value, b[key]):
                    return False
            elif key not in b or not equal(sub, value, b[key]):
                return False
        return True
    return plain_equal(a, b)


_MISSING = object()


def add(decl: types.DeclType, a, b) -> list:
    """``X + Y``: a set list's union, or a map list's merge by key (``Add``)."""
    if not isinstance(a, list) or not isinstance(b, list):
        raise _no_such_overload()
    if _list_type(decl) == "set":
        present = {_hashable(x) for x in a}
        out = list(a)
        for y in b:
            key = _hashable(y)
            if key not in present:
                present.add(key)
                out.append(y)
        return out
    keys = _escaped_keys(decl)
    out = list(a)
    positions = {_map_key(x, keys): i for i, x in enumerate(a)}
    for y in b:
        position = positions.get(_map_key(y, keys))
        if position is None:
            out.append(y)
        else:
            out[position] = y
    return out


def contains(decl: types.DeclType, container, value) -> bool:
    """``value in container`` for a list whose elements hold set or map lists."""
    if not isinstance(container, list):
        raise _no_such_overload()
    return any(equal(decl.elem, element, value) for element in container)
