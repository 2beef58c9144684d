"""Rewriting a serialized ``CheckedExpr`` at the protobuf wire level.

cel-expr-python compiles and checks the user's text, but some of upstream's semantics cannot
be bound into its runtime (an optional variable, a list type's own equality). Those programs
run a rewritten copy of the checked expression: only the messages on the way to a rewritten
node are re-encoded, everything else (types, positions, the other references) is copied, so
errors and costs stay those of the user's text.
"""

from __future__ import annotations

from .checked import CheckedAST, _one, entries, fields

#: ``Expr`` field -> the fields of that kind (cel/expr/syntax.proto) holding expressions:
#: a select's operand, a call's target and arguments, a list's elements, a struct's entries
_SUBEXPRESSIONS = {5: (1,), 6: (1, 3), 7: (1,), 8: (2,)}
_COMPREHENSION = 9
#: ``Expr`` fields: id, constant, identifier, call
EXPR_ID, EXPR_CONST, EXPR_IDENT, EXPR_CALL = 2, 3, 4, 6
#: ``Expr.Call`` fields: target, function, args
CALL_TARGET, CALL_FUNCTION, CALL_ARGS = 1, 2, 3


def encode_varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def delimited(number: int, payload: bytes) -> bytes:
    return encode_varint(number << 3 | 2) + encode_varint(len(payload)) + payload


def number_field(number: int, value: int) -> bytes:
    return encode_varint(number << 3) + encode_varint(value)


def string_constant(expr_id: int, text: str) -> bytes:
    """An ``Expr`` holding the string constant ``text``."""
    return number_field(EXPR_ID, expr_id) + delimited(EXPR_CONST, delimited(6, text.encode()))


class ExprRewriter:
    """Walks an ``Expr`` with the comprehension variables in scope; subclasses replace nodes.

    :meth:`node` returns a node's replacement (or None to keep it and walk its children);
    :meth:`skip` may say a subtree holds nothing to rewrite. Replaced nodes whose reference
    map entry no longer applies are listed in ``dropped``.
    """

    def __init__(self, checked: CheckedAST):
        self.next_id = max_id(checked)
        self.dropped: set[int] = set()

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def skip(self, buf: bytes) -> bool:
        return False

    def node(self, expr_id: int, fs: dict, buf: bytes, shadowed: frozenset) -> bytes | None:
        return None

    def expr(self, buf: bytes, shadowed: frozenset) -> bytes:
        if self.skip(buf):
            return buf
        fs = fields(buf)
        replacement = self.node(_one(fs, EXPR_ID, 0), fs, buf, shadowed)
        if replacement is not None:
            return replacement
        return self.children(buf, shadowed)

    def children(self, buf: bytes, shadowed: frozenset) -> bytes:
        """``buf`` with its subexpressions rewritten."""
        return b"".join(delimited(number, self._kind(number, value, shadowed))
                        if number in _SUBEXPRESSIONS or number == _COMPREHENSION else raw
                        for number, value, raw in entries(buf))

    def _kind(self, number: int, buf: bytes, shadowed: frozenset) -> bytes:
        """One of the ``Expr`` kinds that hold expressions, rewritten."""
        if number == _COMPREHENSION:
            return self._comprehension(buf, shadowed)
        out = []
        for inner, value, raw in entries(buf):
            if inner not in _SUBEXPRESSIONS[number]:
                out.append(raw)
            elif number == 8:  # a struct's entries hold its key and value expressions
                out.append(delimited(inner, self._struct_entry(value, shadowed)))
            else:
                out.append(delimited(inner, self.expr(value, shadowed)))
        return b"".join(out)

    def _struct_entry(self, buf: bytes, shadowed: frozenset) -> bytes:
        return b"".join(delimited(n, self.expr(v, shadowed)) if n in (3, 4) else raw
                        for n, v, raw in entries(buf))

    def _comprehension(self, buf: bytes, shadowed: frozenset) -> bytes:
        """The range and the accumulator's initial value see the outer scope; the loop sees
        the iteration variables and the accumulator; the result sees the accumulator."""
        fs = fields(buf)
        names = [_one(fs, n, b"").decode() for n in (1, 8)]
        accumulator = _one(fs, 3, b"").decode()
        scopes = {2: shadowed, 4: shadowed,
                  5: shadowed | {accumulator, *names}, 6: shadowed | {accumulator, *names},
                  7: shadowed | {accumulator}}
        return b"".join(delimited(n, self.expr(v, scopes[n])) if n in scopes else raw
                        for n, v, raw in entries(buf))


def rewrite_checked(serialized: bytes, rewriter: ExprRewriter) -> bytes:
    """``serialized`` (``Expression.serialize()``: an ``Any`` holding a ``CheckedExpr``, or
    the bare message) with its expression rewritten by ``rewriter`` and the reference map
    entries of the nodes it dropped removed."""
    outer = list(entries(serialized))
    wrapped = any(number == 1 for number, _, _ in outer)  # an Any: type URL, value
    body = next(v for n, v, _ in outer if n == 2) if wrapped else serialized
    parts = []
    for number, value, raw in entries(body):
        if number == 4:
            parts.append(delimited(4, rewriter.expr(value, frozenset())))
        else:
            parts.append((number, value, raw))
    checked_expr = b"".join(
        part if isinstance(part, bytes) else part[2] for part in parts
        if isinstance(part, bytes) or part[0] != 2 or _map_key(part[1]) not in rewriter.dropped)
    if not wrapped:
        return checked_expr
    return b"".join(delimited(2, checked_expr) if number == 2 else raw
                    for number, _, raw in outer)


def max_id(checked: CheckedAST) -> int:
    """The largest expression id in use, so new nodes get fresh ones."""
    ids = [*checked.positions, *checked.types, *checked.references, 0]
    stack = [checked.expr]
    while stack:
        e = stack.pop()
        ids.append(e.id)
        stack.extend(e.children)
    return max(ids)


def _map_key(entry: bytes) -> int | None:
    """The key of a reference map entry (an int64)."""
    key = _one(fields(entry), 1)
    if key is None:
        return None
    return key - (1 << 64) if key >= 1 << 63 else key
