"""``optionalOldSelf`` at runtime: a checked expression whose ``oldSelf`` is read from a list.

A rule with ``optionalOldSelf: true`` is checked with ``oldSelf`` declared ``optional_type(T)``
(so its errors, types and cost are those of the user's text), but cel-expr-python cannot bind
an optional value to a variable. So the program that runs is the checked expression with each
reference to the variable ``oldSelf`` replaced by ``@oldSelf[?0]`` (cel-cpp's ``_[?_]``, the
optional index), the activation binding ``@oldSelf`` to ``[old]`` when there is a correlatable
old value and to ``[]`` when there is none: ``optional.of(old)`` or ``optional.none()``, as
upstream's activation (``types.OptionalOf`` / ``types.OptionalNone``). ``@`` cannot start a
CEL identifier, so no variable of the rule can shadow the holder.

The serialized ``CheckedExpr`` (see ``checked``) is rewritten at the protobuf wire level: only
the messages on the way to a replaced identifier are re-encoded, everything else is copied.
"""

from __future__ import annotations

from .checked import CheckedAST, _one, _varint, fields

#: the activation variable holding ``[old]`` or ``[]``
HOLDER = "@oldSelf"
_VARIABLE = "oldSelf"
_OPTIONAL_INDEX = "_[?_]"
#: ``Expr`` field -> the fields of that kind (cel/expr/syntax.proto) holding expressions:
#: a select's operand, a call's target and arguments, a list's elements, a struct's entries
_SUBEXPRESSIONS = {5: (1,), 6: (1, 3), 7: (1,), 8: (2,)}
_COMPREHENSION = 9


def _encode_varint(value: int) -> bytes:
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


def _delimited(number: int, payload: bytes) -> bytes:
    return _encode_varint(number << 3 | 2) + _encode_varint(len(payload)) + payload


def _number(number: int, value: int) -> bytes:
    return _encode_varint(number << 3) + _encode_varint(value)


def _entries(buf: bytes):
    """(field number, value, raw bytes of the whole field) in wire order; a length-delimited
    value is its payload."""
    i, n = 0, len(buf)
    while i < n:
        start = i
        key, i = _varint(buf, i)
        wire = key & 7
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire == 1:
            value, i = buf[i:i + 8], i + 8
        elif wire == 2:
            length, i = _varint(buf, i)
            value, i = buf[i:i + length], i + length
        elif wire == 5:
            value, i = buf[i:i + 4], i + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        yield key >> 3, value, buf[start:i]


class _Rewriter:
    def __init__(self, max_id: int):
        self.next_id = max_id
        self.replaced: set[int] = set()

    def _new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def expr(self, buf: bytes, shadowed: frozenset) -> bytes:
        """An ``Expr`` with ``oldSelf`` (where no comprehension variable shadows it) read
        from the holder."""
        if _VARIABLE.encode() not in buf:
            return buf
        fs = fields(buf)
        ident = _one(fs, 4)
        if ident is not None:
            if _VARIABLE in shadowed or _one(fields(ident), 1, b"").decode() != _VARIABLE:
                return buf
            return self._optional_index(_one(fs, 2, 0))
        return b"".join(_delimited(number, self._kind(number, value, shadowed))
                        if number in _SUBEXPRESSIONS or number == _COMPREHENSION else raw
                        for number, value, raw in _entries(buf))

    def _optional_index(self, expr_id: int) -> bytes:
        """``@oldSelf[?0]`` under the identifier's id (its type and position stay right)."""
        self.replaced.add(expr_id)
        holder = _number(2, self._new_id()) + _delimited(4, _delimited(1, HOLDER.encode()))
        zero = _number(2, self._new_id()) + _delimited(3, _number(3, 0))
        call = (_delimited(2, _OPTIONAL_INDEX.encode()) + _delimited(3, holder)
                + _delimited(3, zero))
        return _number(2, expr_id) + _delimited(6, call)

    def _kind(self, number: int, buf: bytes, shadowed: frozenset) -> bytes:
        """One of the ``Expr`` kinds that hold expressions, rewritten."""
        if number == _COMPREHENSION:
            return self._comprehension(buf, shadowed)
        out = []
        for inner, value, raw in _entries(buf):
            if inner not in _SUBEXPRESSIONS[number]:
                out.append(raw)
            elif number == 8:  # a struct's entries hold its key and value expressions
                out.append(_delimited(inner, self._struct_entry(value, shadowed)))
            else:
                out.append(_delimited(inner, self.expr(value, shadowed)))
        return b"".join(out)

    def _struct_entry(self, buf: bytes, shadowed: frozenset) -> bytes:
        return b"".join(_delimited(n, self.expr(v, shadowed)) if n in (3, 4) else raw
                        for n, v, raw in _entries(buf))

    def _comprehension(self, buf: bytes, shadowed: frozenset) -> bytes:
        """The range and the accumulator's initial value see the outer scope; the loop sees
        the iteration variables and the accumulator; the result sees the accumulator."""
        fs = fields(buf)
        names = [_one(fs, n, b"").decode() for n in (1, 8)]
        accumulator = _one(fs, 3, b"").decode()
        scopes = {2: shadowed, 4: shadowed,
                  5: shadowed | {accumulator, *names}, 6: shadowed | {accumulator, *names},
                  7: shadowed | {accumulator}}
        return b"".join(_delimited(n, self.expr(v, scopes[n])) if n in scopes else raw
                        for n, v, raw in _entries(buf))


def read_old_self_from_holder(serialized: bytes, checked: CheckedAST) -> bytes:
    """``serialized`` (``Expression.serialize()`` of ``checked``) with ``oldSelf`` read as
    ``@oldSelf[?0]``. The replaced identifiers' references are dropped: they name the
    variable, which the call is not."""
    outer = list(_entries(serialized))
    wrapped = any(number == 1 for number, _, _ in outer)  # an Any: type URL, value
    body = next(v for n, v, _ in outer if n == 2) if wrapped else serialized
    entries = list(_entries(body))
    rewriter = _Rewriter(_max_id(checked))
    parts = []
    for number, value, raw in entries:
        parts.append(_delimited(4, rewriter.expr(value, frozenset())) if number == 4 else raw)
    parts = [part for (number, value, _), part in zip(entries, parts)
             if number != 2 or _map_key(value) not in rewriter.replaced]
    checked_expr = b"".join(parts)
    if not wrapped:
        return checked_expr
    return b"".join(_delimited(2, checked_expr) if number == 2 else raw
                    for number, _, raw in outer)


def _max_id(checked: CheckedAST) -> int:
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
