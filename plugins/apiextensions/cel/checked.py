"""The checked AST of a compiled expression, read from cel-cpp's serialized ``CheckedExpr``.

cel-expr-python gives no AST object, only ``Expression.serialize()``: a ``google.protobuf.Any``
holding a ``cel.expr.CheckedExpr``. Cost estimation and the literal checks need the tree, its
types and the overloads the checker chose, so this module reads that message with a small
protobuf wire-format reader (field numbers from ``cel/expr/checked.proto`` and
``syntax.proto``) rather than generated classes for schemas cel-expr-python does not ship.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

# Expression kinds.
CONST, IDENT, SELECT, CALL, LIST, STRUCT, COMPREHENSION = (
    "const", "ident", "select", "call", "list", "struct", "comprehension")

# Type kinds (cel.expr.Type), as read from the type map.
T_DYN, T_NULL, T_BOOL, T_INT, T_UINT, T_DOUBLE, T_STRING, T_BYTES, T_TIMESTAMP, T_DURATION, \
    T_ANY, T_LIST, T_MAP, T_MESSAGE, T_TYPE_PARAM, T_TYPE, T_ERROR, T_ABSTRACT, T_FUNCTION, \
    T_WRAPPER = ("dyn", "null", "bool", "int", "uint", "double", "string", "bytes",
                 "timestamp", "duration", "any", "list", "map", "message", "type_param",
                 "type", "error", "abstract", "function", "wrapper")
_PRIMITIVES = {1: T_BOOL, 2: T_INT, 3: T_UINT, 4: T_DOUBLE, 5: T_STRING, 6: T_BYTES}
_WELL_KNOWN = {1: T_ANY, 2: T_TIMESTAMP, 3: T_DURATION}


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, i
        shift += 7


def entries(buf: bytes):
    """The fields of one message in wire order: (field number, value, raw bytes of the
    whole field); a value is an int, or bytes for length-delimited and fixed-width fields
    (a length-delimited value is its payload)."""
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


def fields(buf: bytes) -> dict[int, list]:
    """The fields of one message: number -> values (see ``entries``)."""
    out: dict[int, list] = {}
    for number, value, _ in entries(buf):
        out.setdefault(number, []).append(value)
    return out


def _one(fs: dict, number: int, default=None):
    values = fs.get(number)
    return values[-1] if values else default


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


@dataclass(frozen=True)
class Type:
    """A checked type: ``kind`` and its parameters (element types, message or param name)."""

    kind: str
    params: tuple = ()
    name: str = ""

    def __str__(self) -> str:
        if self.kind == T_LIST:
            return f"list({self.params[0]})"
        if self.kind == T_MAP:
            return f"map({self.params[0]}, {self.params[1]})"
        if self.kind in (T_MESSAGE, T_ABSTRACT, T_TYPE_PARAM):
            return self.name
        return self.kind


DYN = Type(T_DYN)


def read_type(buf: bytes) -> Type:
    fs = fields(buf)
    if 1 in fs:
        return DYN
    if 2 in fs:
        return Type(T_NULL)
    if 3 in fs:
        return Type(_PRIMITIVES.get(_one(fs, 3), T_DYN))
    if 4 in fs:
        return Type(T_WRAPPER, (Type(_PRIMITIVES.get(_one(fs, 4), T_DYN)),))
    if 5 in fs:
        return Type(_WELL_KNOWN.get(_one(fs, 5), T_DYN))
    if 6 in fs:
        elem = _one(fields(_one(fs, 6)), 1)
        return Type(T_LIST, (read_type(elem) if elem is not None else DYN,))
    if 7 in fs:
        m = fields(_one(fs, 7))
        key, value = _one(m, 1), _one(m, 2)
        return Type(T_MAP, (read_type(key) if key is not None else DYN,
                            read_type(value) if value is not None else DYN))
    if 9 in fs:
        return Type(T_MESSAGE, name=_one(fs, 9).decode())
    if 10 in fs:
        return Type(T_TYPE_PARAM, name=_one(fs, 10).decode())
    if 11 in fs:
        inner = _one(fs, 11)
        return Type(T_TYPE, (read_type(inner),) if inner else ())
    if 12 in fs:
        return Type(T_ERROR)
    if 14 in fs:
        a = fields(_one(fs, 14))
        return Type(T_ABSTRACT, tuple(read_type(p) for p in a.get(2, ())),
                    name=_one(a, 1, b"").decode())
    if 8 in fs:
        return Type(T_FUNCTION)
    return DYN


@dataclass(eq=False)
class Expr:
    """One node of the expression tree."""

    id: int
    kind: str
    #: CONST: the Python value; IDENT: the name; SELECT: the field; CALL: the function
    value: object = None
    #: SELECT: [operand]; CALL: [target?] + args; LIST: elements; STRUCT: entry values;
    #: COMPREHENSION: [range, init, condition, step, result]
    children: list = field(default_factory=list)
    #: CALL: whether the first child is the receiver; SELECT: whether it is has()
    flag: bool = False
    #: COMPREHENSION: (iter var, accumulator var, second iter var or "")
    names: tuple = ()

    @property
    def target(self):
        return self.children[0] if self.kind == CALL and self.flag else None

    @property
    def args(self) -> list:
        if self.kind != CALL:
            return []
        return self.children[1:] if self.flag else self.children


def _constant(buf: bytes):
    fs = fields(buf)
    if 1 in fs:
        return None
    if 2 in fs:
        return bool(_one(fs, 2))
    if 3 in fs:
        return _signed(_one(fs, 3))
    if 4 in fs:
        return ("uint", _one(fs, 4))
    if 5 in fs:
        return struct.unpack("<d", _one(fs, 5))[0]
    if 6 in fs:
        return _one(fs, 6).decode("utf-8", "replace")
    if 7 in fs:
        return bytes(_one(fs, 7))
    return ("other", None)


def read_expr(buf: bytes) -> Expr:
    fs = fields(buf)
    expr_id = _signed(_one(fs, 2, 0))
    if 3 in fs:
        return Expr(expr_id, CONST, _constant(_one(fs, 3)))
    if 4 in fs:
        return Expr(expr_id, IDENT, _one(fields(_one(fs, 4)), 1, b"").decode())
    if 5 in fs:
        s = fields(_one(fs, 5))
        operand = _one(s, 1)
        return Expr(expr_id, SELECT, _one(s, 2, b"").decode(),
                    [read_expr(operand)] if operand is not None else [], bool(_one(s, 3, 0)))
    if 6 in fs:
        c = fields(_one(fs, 6))
        target = _one(c, 1)
        children = ([read_expr(target)] if target is not None else []) + \
            [read_expr(a) for a in c.get(3, ())]
        return Expr(expr_id, CALL, _one(c, 2, b"").decode(), children, target is not None)
    if 7 in fs:
        lst = fields(_one(fs, 7))
        return Expr(expr_id, LIST, None, [read_expr(e) for e in lst.get(1, ())])
    if 8 in fs:
        st = fields(_one(fs, 8))
        values = []
        for entry in st.get(2, ()):
            e = fields(entry)
            key, value = _one(e, 3), _one(e, 4)
            if key is not None:
                values.append(read_expr(key))
            if value is not None:
                values.append(read_expr(value))
        return Expr(expr_id, STRUCT, _one(st, 1, b"").decode(), values,
                    flag=bool(_one(st, 1)))
    if 9 in fs:
        c = fields(_one(fs, 9))
        parts = [read_expr(_one(c, n)) if _one(c, n) is not None else Expr(0, CONST, None)
                 for n in (2, 4, 5, 6, 7)]
        return Expr(expr_id, COMPREHENSION, None, parts,
                    names=(_one(c, 1, b"").decode(), _one(c, 3, b"").decode(),
                           _one(c, 8, b"").decode()))
    return Expr(expr_id, CONST, None)


@dataclass
class CheckedAST:
    """The checked expression: the tree, each node's type and the overloads of each call."""

    expr: Expr
    types: dict
    #: node id -> (referenced name, overload ids)
    references: dict
    #: node id -> character offset in the source
    positions: dict

    def type_of(self, e: Expr) -> Type:
        return self.types.get(e.id, DYN)

    def overloads(self, e: Expr) -> tuple:
        return self.references.get(e.id, ("", ()))[1]

    def referenced_names(self) -> set:
        return {name for name, _ in self.references.values() if name}


def read_checked(serialized: bytes) -> CheckedAST:
    """Read ``Expression.serialize()`` (an ``Any`` holding a ``CheckedExpr``)."""
    outer = fields(serialized)
    body = _one(outer, 2) if 1 in outer else serialized
    fs = fields(body)
    references = {}
    for entry in fs.get(2, ()):
        e = fields(entry)
        key, ref = _signed(_one(e, 1, 0)), fields(_one(e, 2, b""))
        references[key] = (_one(ref, 1, b"").decode(),
                           tuple(v.decode() for v in ref.get(3, ())))
    types = {}
    for entry in fs.get(3, ()):
        e = fields(entry)
        value = _one(e, 2)
        types[_signed(_one(e, 1, 0))] = read_type(value) if value is not None else DYN
    positions = {}
    source = _one(fs, 5)
    if source is not None:
        for entry in fields(source).get(4, ()):
            e = fields(entry)
            positions[_signed(_one(e, 1, 0))] = _one(e, 2, 0)
    return CheckedAST(read_expr(_one(fs, 4, b"")), types, references, positions)
