"""Cost estimation of checked CEL expressions, as cel-go's ``checker/cost.go`` with Kubernetes'
``library.CostEstimator`` (``apiserver/pkg/cel/library/cost.go``) and the apiextensions size
estimator (sizes from the schema's ``maxLength``/``maxItems``/``maxProperties``, or what fits
in a 3 MiB request).

cel-cpp tracks no cost, so the same estimator also bounds what an evaluation can cost: given
the sizes of the values actually bound (:func:`observed_sizes`) instead of the schema's
bounds, its maximum is an upper bound of cel-go's actual cost for that evaluation. Costs are
(min, max) pairs of unsigned 64-bit integers that saturate instead of overflowing.
"""

from __future__ import annotations

import math

from . import checked as ast

MAX = (1 << 64) - 1
UNKNOWN = (0, MAX)
STRING_TRAVERSAL = 0.1
REGEX_LENGTH = 0.25
#: ``cel.MaxNameFormatRegexSize``
MAX_NAME_FORMAT_REGEX_SIZE = 128
LIST_CREATE, MAP_CREATE, STRUCT_CREATE = 10, 30, 40
#: The authorization library's ``check`` (``library.CostEstimator``); its builders and
#: accessors cost 1, its selectors parse their string.
AUTHZ_CHECK = 350_000
_AUTHZ_CHECKS = frozenset(("pathcheck_check", "resourcecheck_check"))
_AUTHZ_SELECTORS = frozenset(("resourcecheck_fieldselector", "resourcecheck_labelselector"))
_ACCUMULATORS = ("@result", "__result__")


def _add(a: int, b: int) -> int:
    return min(a + b, MAX)


def _mul(a: int, b: int) -> int:
    return min(a * b, MAX)


def _factor(x: int, f: float) -> int:
    if x > 0 and f > 0 and x > MAX / f:
        return MAX
    value = math.ceil(x * f)
    return MAX if value >= 2 ** 64 else int(value)


def add(a, b):
    return (_add(a[0], b[0]), _add(a[1], b[1]))


def mul(a, b):
    return (_mul(a[0], b[0]), _mul(a[1], b[1]))


def factor(a, f: float):
    return (_factor(a[0], f), _factor(a[1], f))


def union(a, b):
    return (min(a[0], b[0]), max(a[1], b[1]))


def fixed(n: int):
    return (n, n)


class _Node:
    """cel-go's ``AstNode``: a path through the declared types, a type and a computed size."""

    __slots__ = ("path", "type", "expr", "size")

    def __init__(self, path, type_, expr, size):
        self.path, self.type, self.expr, self.size = path, type_, expr, size


class _Local:
    __slots__ = ("path", "size", "entry")

    def __init__(self, path, size, entry):
        self.path, self.size, self.entry = path, size, entry


class Coster:
    """Estimates one checked expression. ``size_of(path)`` gives the (min, max) size of the
    data a field path (``("self", "spec", "items", "@items")``) reaches, or None."""

    def __init__(self, checked: ast.CheckedAST, size_of, unknown=UNKNOWN):
        self.checked = checked
        self.size_of = size_of
        #: the size of what nothing bounds: everything, statically
        self.unknown = unknown
        self.paths: dict[int, tuple] = {}
        self.locals: dict[str, list[_Local]] = {}
        self.sizes: dict[int, tuple] = {}
        self.entries: dict[int, tuple] = {}

    def estimate(self):
        return self.cost(self.checked.expr)

    # -- locals and paths --

    def _push(self, name, path, size, entry=None):
        self.locals.setdefault(name, []).append(_Local(path, size, entry))

    def _pop(self, name):
        self.locals[name].pop()

    def _peek(self, name):
        stack = self.locals.get(name)
        return stack[-1] if stack else None

    def _path(self, e: ast.Expr):
        if e.kind == ast.IDENT:
            local = self._peek(e.value)
            if local is not None:
                return local.path
        return self.paths.get(e.id)

    def _type(self, e):
        return self.checked.type_of(e)

    # -- sizes --

    def _estimate_size(self, path):
        if not path or path[0] in _ACCUMULATORS:
            return None
        return self.size_of(tuple(path))

    def compute_size(self, e: ast.Expr):
        if e.id in self.sizes:
            return self.sizes[e.id]
        literal = _literal_size(e)
        if literal is not None:
            return literal
        size = self._estimate_size(self._path(e))
        if size is not None:
            self.sizes[e.id] = size
            return size
        if _is_scalar(self._type(e)):
            return (1, 1)
        if e.kind == ast.IDENT:
            local = self._peek(e.value)
            if local is not None and local.size is not None:
                return local.size
        return None

    def size_or_unknown(self, e):
        if isinstance(e, _Node):
            return e.size if e.size is not None else self.unknown
        size = self.compute_size(e)
        return size if size is not None else self.unknown

    def node_size(self, node: _Node):
        """``library.CostEstimator.sizeEstimate``: computed, else path-based, else unknown."""
        if node.size is not None:
            return node.size
        size = self._estimate_size(node.path)
        return size if size is not None else self.unknown

    def _entry(self, e):
        if e.id in self.entries:
            return self.entries[e.id]
        if e.kind == ast.IDENT:
            local = self._peek(e.value)
            if local is not None and local.entry is not None:
                return local.entry
        return None

    def _node(self, e) -> _Node:
        path = self._path(e)
        if path and path[0] in _ACCUMULATORS:
            path = None
        return _Node(path, self._type(e), e, self.compute_size(e))

    # -- costs --

    def cost(self, e: ast.Expr):
        kind = e.kind
        if kind == ast.CONST:
            return (0, 0)
        if kind == ast.IDENT:
            local = self._peek(e.value)
            self.paths[e.id] = local.path if local is not None else (e.value,)
            return (1, 1)
        if kind == ast.SELECT:
            operand = e.children[0]
            if e.flag:  # has(): presence tests cost nothing in Kubernetes' environment
                return self.cost(operand)
            total = self.cost(operand)
            if self._type(operand).kind in (ast.T_MAP, ast.T_MESSAGE, ast.T_TYPE_PARAM):
                total = add(total, (1, 1))
            # cel-go tracks the path whatever the operand's: oldSelf.value().name is "name".
            self.paths[e.id] = (self._path(operand) or ()) + (e.value,)
            return total
        if kind == ast.CALL:
            return self._call(e)
        if kind == ast.LIST:
            total, item = (0, 0), ((0 if not e.children else MAX), 0)
            for child in e.children:
                total = add(total, self.cost(child))
                item = union(item, self.size_or_unknown(child))
            self.entries[e.id] = ("list", (1, 1), item)
            return add(total, fixed(LIST_CREATE))
        if kind == ast.STRUCT:
            total = (0, 0)
            for child in e.children:
                total = add(total, self.cost(child))
            return add(total, fixed(STRUCT_CREATE if e.flag else MAP_CREATE))
        if kind == ast.COMPREHENSION:
            return self._comprehension(e)
        return (0, 0)

    def _comprehension(self, e):
        rng, init, cond, step, result = e.children
        iter_var, accu_var, iter_var2 = e.names
        if (rng.kind == ast.LIST and not rng.children and cond.kind == ast.CONST
                and cond.value is False and accu_var not in _ACCUMULATORS):
            # cel.bind(): lazily initialised, so the (empty) range costs what it costs.
            total = add(self.cost(rng), self.cost(init))
            self._push(accu_var, self._path(init), self.compute_size(init), self._entry(init))
            total = add(total, self.cost(result))
            self._pop(accu_var)
            self._copy_sizes(e, result)
            return total
        total = add(self.cost(rng), self.cost(init))
        self._push(accu_var, self._path(init), self.compute_size(init), self._entry(init))
        entry = self._entry(rng)
        container = entry[0] if entry else ("list" if self._type(rng).kind == ast.T_LIST
                                            else "map")
        base = self._path(rng) or ()
        if iter_var2:
            self._push(iter_var, base + ("@indices" if container == "list" else "@keys",),
                       entry[1] if entry else None)
            self._push(iter_var2, base + ("@items" if container == "list" else "@values",),
                       entry[2] if entry else None)
        elif container == "list":
            self._push(iter_var, base + ("@items",), entry[2] if entry else None)
        else:
            self._push(iter_var, base + ("@keys",), entry[1] if entry else None)
        loop = self.cost(cond)
        step_cost = self.cost(step)
        self._pop(iter_var)
        if iter_var2:
            self._pop(iter_var2)
        total = add(total, self.cost(result))
        self._pop(accu_var)
        count = self.size_or_unknown(rng)
        total = add(total, mul(count, add(step_cost, loop)))
        if init.kind == ast.CONST:
            size = self.compute_size(init)
            if size is not None:
                self.sizes[e.id] = size
        elif init.kind in (ast.LIST, ast.STRUCT):
            self.sizes[e.id] = count
            step_entry = self._entry(step)
            if step_entry is not None:
                self.entries[e.id] = step_entry
        return total

    def _copy_sizes(self, dst, src):
        size = self.compute_size(src)
        if size is not None:
            self.sizes[dst.id] = size
        entry = self._entry(src)
        if entry is not None:
            self.entries[dst.id] = entry

    def _call(self, e):
        fn = e.value
        if fn == "dyn" and e.args:
            arg = e.args[0]
            cost = self.cost(arg)
            self._copy_sizes(e, arg)
            return add((1, 1), cost)
        args = e.args
        arg_costs = [self.cost(a) for a in args]
        arg_nodes = [self._node(a) for a in args]
        overloads = self.checked.overloads(e)
        if not overloads:
            return (0, 0)
        total = (0, 0)
        target = None
        if e.target is not None:
            total = add(total, self.cost(e.target))
            target = self._node(e.target)
        fn_cost, result_size = (MAX, 0), None
        for overload in overloads:
            cost, size = self._function_cost(e, fn, overload, target, arg_nodes, arg_costs)
            fn_cost = union(fn_cost, cost)
            if size is not None:
                result_size = size if result_size is None else union(result_size, size)
            if overload in ("index_list", "index_map") and args:
                entry = self._entry(args[0])
                if entry is not None:
                    result_size = entry[2]
                self.paths[e.id] = (self._path(args[0]) or ()) + (
                    "@items" if overload == "index_list" else "@values",)
            if result_size is None:
                result_size = self.compute_size(e)
        if result_size is not None:
            self.sizes[e.id] = result_size
        return add(total, fn_cost)

    def _function_cost(self, e, fn, overload, target, args, arg_costs):
        arg_sum = (0, 0)
        for c in arg_costs:
            arg_sum = add(arg_sum, c)
        k8s = self._kubernetes_cost(fn, overload, target, args)
        if k8s is not None:
            cost, size = k8s
            return add(cost, arg_sum), size
        so = self.size_or_unknown
        if overload == "string_format" and target is not None and args:
            size = add(so(target), so(args[0]))
            return add(factor(so(target), STRING_TRAVERSAL), arg_sum), size
        if overload == "string_to_bytes" and len(args) == 1:
            sz = so(args[0])
            return add(factor(sz, STRING_TRAVERSAL), arg_sum), (sz[0], _mul(sz[1], 4))
        if overload == "bytes_to_string" and len(args) == 1:
            sz = so(args[0])
            return add(factor(sz, STRING_TRAVERSAL), arg_sum), (sz[0] // 4, sz[1])
        if overload in ("starts_with_string", "ends_with_string") and len(args) == 1:
            return add(factor(so(args[0]), STRING_TRAVERSAL), arg_sum), None
        if overload == "in_list" and len(args) == 2:
            return add(factor(so(args[1]), 1), arg_sum), None
        if overload == "matches_string" and target is not None and len(args) == 1:
            text = factor(add(so(target), (1, 1)), STRING_TRAVERSAL)
            regex = factor(so(args[0]), REGEX_LENGTH)
            return add(mul(text, regex), arg_sum), None
        if overload == "contains_string" and target is not None and len(args) == 1:
            return add(mul(factor(so(target), STRING_TRAVERSAL),
                           factor(so(args[0]), STRING_TRAVERSAL)), arg_sum), None
        if overload in ("logical_or", "logical_and"):
            lhs, rhs = arg_costs[0], arg_costs[1]
            return (lhs[0], add(lhs, rhs)[1]), None
        if overload == "conditional":
            size = union(so(args[1]), so(args[2]))
            a, b = self._entry(args[1].expr), self._entry(args[2].expr)
            if a is not None and b is not None:
                self.entries[e.id] = (a[0], union(a[1], b[1]), union(a[2], b[2]))
            return add(arg_costs[0], union(arg_costs[1], arg_costs[2])), size
        if overload in ("add_string", "add_bytes", "add_list") and len(args) == 2:
            size = add(so(args[0]), so(args[1]))
            a, b = self._entry(args[0].expr), self._entry(args[1].expr)
            if a is not None and b is not None:
                self.entries[e.id] = (a[0], union(a[1], b[1]), union(a[2], b[2]))
            if overload == "add_list":
                return add((1, 1), arg_sum), size
            return add(factor(size, STRING_TRAVERSAL), arg_sum), size
        if overload in _COMPARISONS and len(args) == 2:
            lhs, rhs = so(args[0]), so(args[1])
            smallest = min(lhs[1], rhs[1])
            return add(factor((1 if smallest > 0 else 0, smallest), STRING_TRAVERSAL),
                       arg_sum), None
        return add((1, 1), arg_sum), None

    # -- Kubernetes' library costs (library.CostEstimator.EstimateCallCost) --

    def _list_element(self, target: _Node):
        if target.type.kind != ast.T_LIST or not target.type.params:
            return None
        return _Node(target.path + ("@items",) if target.path else None,
                     target.type.params[0], None, None)

    def _kubernetes_cost(self, fn, overload, target, args):
        size = self.node_size
        if fn in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf"):
            if target is None:
                return None
            element = self._list_element(target)
            if element is not None:
                per_item = (1, 1)
                if element.type.kind in (ast.T_STRING, ast.T_BYTES):
                    per_item = add(per_item, factor(size(element), STRING_TRAVERSAL))
                return mul(size(target), per_item), None
            return factor(size(target), STRING_TRAVERSAL), None
        if fn == "url" and len(args) == 1:
            return factor(size(args[0]), STRING_TRAVERSAL), None
        if fn in ("lowerAscii", "upperAscii", "substring", "trim") and target is not None:
            sz = size(target)
            return factor(sz, STRING_TRAVERSAL), sz
        if fn == "replace" and target is not None and len(args) >= 2:
            return self._replace_cost(size(target), size(args[0]), size(args[1]))
        if fn == "split" and target is not None:
            sz = size(target)
            top = sz[1]
            if len(args) > 1 and args[1].expr is not None and args[1].expr.kind == ast.CONST \
                    and isinstance(args[1].expr.value, int):
                top = args[1].expr.value & MAX
            return factor(sz, 2 * STRING_TRAVERSAL), (0, top)
        if fn == "join" and target is not None:
            list_size = size(target)
            element = self._list_element(target)
            sz = mul(list_size, size(element)) if element is not None else (0, 0)
            if args:
                separators = (max(list_size[0] - 1, 0), max(list_size[1] - 1, 0))
                sz = add(sz, mul(size(args[0]), separators))
            return factor(sz, STRING_TRAVERSAL), sz
        if fn in ("find", "findAll") and target is not None and args:
            sz = size(target)
            text = factor(add(sz, (1, 1)), STRING_TRAVERSAL)
            regex = factor(size(args[0]), REGEX_LENGTH)
            return mul(text, regex), (0, sz[1])
        if fn in ("cidr", "isIP", "isCIDR", "quantity", "isQuantity") and target is not None:
            return factor(size(args[0]), STRING_TRAVERSAL), None
        if fn == "ip":
            if target is not None and args:
                if overload == "cidr_ip":
                    return (1, 1), None
                return factor(size(args[0]), STRING_TRAVERSAL), None
            if target is not None:
                return (1, 1), None
            return None
        if fn == "ip.isCanonical" and target is not None and args:
            return factor(size(args[0]), 2 * STRING_TRAVERSAL), None
        if fn == "validate" and target is not None and args:
            # A named format's regex is not known: upstream assumes the longest one.
            return factor(factor(size(args[0]), STRING_TRAVERSAL),
                          MAX_NAME_FORMAT_REGEX_SIZE * REGEX_LENGTH), None
        if fn == "format.named":
            return (1, 1), None
        if overload in _AUTHZ_CHECKS:
            # A fixed cost that allows two authorization checks per expression.
            return fixed(AUTHZ_CHECK), None
        if overload in _AUTHZ_SELECTORS and args:
            return factor(size(args[0]), STRING_TRAVERSAL), None
        if fn in ("masked", "prefixLength", "family", "isUnspecified", "isLoopback",
                  "isLinkLocalMulticast", "isLinkLocalUnicast", "sign", "asInteger",
                  "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan",
                  "compareTo", "add", "sub"):
            return (1, 1), None
        if fn in ("containsIP", "containsCIDR") and target is not None and args:
            ip_size = (4, 16)
            cost = factor(add(ip_size, ip_size), STRING_TRAVERSAL)
            if fn == "containsCIDR":
                cost = add(add(cost, factor(ip_size, STRING_TRAVERSAL)), (1, 1))
            if overload in ("cidr_contains_ip_string", "cidr_contains_cidr_string"):
                cost = add(cost, factor(size(args[0]), STRING_TRAVERSAL))
            return cost, None
        return None

    @staticmethod
    def _replace_cost(sz, old, new):
        count, kept = [0, 0], [0, 0]
        if old[0] == 0:
            count[1] = sz[1] + 1 if sz[1] < MAX else sz[1]
            kept[1] = sz[1]
        elif new[1] <= old[0]:
            kept[1] = sz[1]
        else:
            count[1] = math.ceil(sz[1] / old[0])
        if old[1] == 0:
            count[0] = sz[0] + 1 if sz[0] < MAX else sz[0]
            kept[0] = sz[0]
        elif old[1] <= new[0]:
            kept[0] = sz[0]
        else:
            count[0] = math.ceil(sz[0] / old[1])
        result = add(mul(tuple(count), new), tuple(kept))
        return factor(sz, 2 * STRING_TRAVERSAL), result


_COMPARISONS = frozenset((
    "less_string", "greater_string", "less_equals_string", "greater_equals_string",
    "less_bytes", "greater_bytes", "less_equals_bytes", "greater_equals_bytes",
    "equals", "not_equals"))


def _literal_size(e: ast.Expr):
    if e.kind == ast.CONST:
        v = e.value
        if isinstance(v, str):
            return fixed(len(v))
        if isinstance(v, bytes):
            return fixed(len(v))
        if v is None or isinstance(v, (bool, int, float)) or (
                isinstance(v, tuple) and v[0] == "uint"):
            return (1, 1)
        return None
    if e.kind == ast.LIST:
        return fixed(len(e.children))
    if e.kind == ast.STRUCT and not e.flag:
        return fixed(len(e.children) // 2)
    return None


def _is_scalar(t: ast.Type) -> bool:
    if t.kind in (ast.T_BOOL, ast.T_DOUBLE, ast.T_DURATION, ast.T_INT, ast.T_TIMESTAMP,
                  ast.T_UINT):
        return True
    if t.kind == ast.T_ABSTRACT and t.name == "optional_type" and t.params:
        return _is_scalar(t.params[0])
    return False


def estimate(checked: ast.CheckedAST, size_of, unknown=UNKNOWN):
    """The (min, max) cost of ``checked`` with sizes from ``size_of(path)``, and ``unknown``
    for values whose size nothing tells."""
    return Coster(checked, size_of, unknown).estimate()


def is_constant(checked: ast.CheckedAST) -> bool:
    """Whether the cost depends on no size at all (then the static estimate is exact)."""
    small = estimate(checked, lambda path: (0, 0), (0, 0))
    large = estimate(checked, lambda path: (0, 1 << 20), (0, 1 << 20))
    return small == large


def input_size(values) -> int:
    """A bound for the size of anything an evaluation derives from ``values``: every string,
    bytes, list and map in them, counted once (the runtime stand-in for "unknown")."""
    total, stack = 0, list(values)
    while stack:
        v = stack.pop()
        if isinstance(v, (str, bytes)):
            total += len(v)
        elif isinstance(v, list):
            total += len(v)
            stack.extend(v)
        elif isinstance(v, dict):
            total += len(v)
            stack.extend(v.keys())
            stack.extend(v.values())
    return total


def schema_sizes(roots: dict, rooted_only: bool = False):
    """``size_of`` from declared types: ``roots`` maps variable names to their DeclType
    (upstream's ``sizeEstimator``, which reads ``MaxElements`` along the path).

    Upstream cuts the first element off every path and walks the rest from the rule's type,
    whatever the path starts with: ``oldSelf.value().name`` (the path ``name``) is as large
    as the rule's type itself, 0 for an object. That is the static estimate CRDs are checked
    with; ``rooted_only`` gives paths that start at no variable no size, for a bound of what
    an evaluation can cost."""
    rule_type = roots.get("self")

    def size_of(path):
        node = roots.get(path[0])
        if node is None:
            if rooted_only:
                return None
            node = rule_type
        for name in path[1:]:
            if name in ("@items", "@values"):
                node = node.elem
            elif name == "@keys":
                # Map keys are plain strings, whose declared type has no MaxElements.
                return (0, 0) if node.elem is not None else None
            else:
                node = node.field_type(name) if node.is_object else None
            if node is None:
                return None
        return (0, node.max_elements)

    return size_of


def observed_sizes(roots: dict, values: dict, fallback):
    """``size_of`` from the values bound to the variables: the largest size found along a
    path (strings in characters, bytes, list items, map entries); paths reaching no sized
    value fall back to ``fallback`` (the declared bounds)."""
    cache = {}

    def size_of(path):
        if path in cache:
            return cache[path]
        node, current = roots.get(path[0]), [values.get(path[0])]
        if node is None:
            return None
        for name in path[1:]:
            nxt = []
            if name in ("@items", "@values"):
                for v in current:
                    if isinstance(v, list):
                        nxt.extend(v)
                    elif isinstance(v, dict):
                        nxt.extend(v.values())
                node = node.elem if node is not None else None
            elif name == "@keys":
                for v in current:
                    if isinstance(v, dict):
                        nxt.extend(v.keys())
                node = None
            else:
                entry = node.fields.get(name) if node is not None and node.is_object else None
                prop = entry[0] if entry else name
                for v in current:
                    if isinstance(v, dict) and prop in v:
                        nxt.append(v[prop])
                node = entry[1] if entry else None
            current = nxt
        sized = [len(v) for v in current if isinstance(v, (str, bytes, list, dict))]
        result = (0, max(sized)) if sized else fallback(path)
        if not current and node is not None:
            result = (0, 0)
        cache[path] = result
        return result

    return size_of
