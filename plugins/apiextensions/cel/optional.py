"""``optionalOldSelf`` at runtime: a checked expression whose ``oldSelf`` is read from a list.

A rule with ``optionalOldSelf: true`` is checked with ``oldSelf`` declared ``optional_type(T)``
(so its errors, types and cost are those of the user's text), but cel-expr-python cannot bind
an optional value to a variable. So the program that runs is the checked expression with each
reference to the variable ``oldSelf`` replaced by ``@oldSelf[?0]`` (cel-cpp's ``_[?_]``, the
optional index), the activation binding ``@oldSelf`` to ``[old]`` when there is a correlatable
old value and to ``[]`` when there is none: ``optional.of(old)`` or ``optional.none()``, as
upstream's activation (``types.OptionalOf`` / ``types.OptionalNone``). ``@`` cannot start a
CEL identifier, so no variable of the rule can shadow the holder.

The serialized ``CheckedExpr`` is rewritten at the protobuf wire level (see ``rewrite``).
"""

from __future__ import annotations

from .checked import CheckedAST, _one, fields
from .rewrite import (EXPR_IDENT, ExprRewriter, delimited, number_field, rewrite_checked)

#: the activation variable holding ``[old]`` or ``[]``
HOLDER = "@oldSelf"
_VARIABLE = "oldSelf"
_OPTIONAL_INDEX = "_[?_]"


class _HolderRewriter(ExprRewriter):
    """``oldSelf`` (where no comprehension variable shadows it) read from the holder."""

    def skip(self, buf: bytes) -> bool:
        return _VARIABLE.encode() not in buf

    def node(self, expr_id: int, fs: dict, buf: bytes, shadowed: frozenset) -> bytes | None:
        ident = _one(fs, EXPR_IDENT)
        if ident is None:
            return None
        if _VARIABLE in shadowed or _one(fields(ident), 1, b"").decode() != _VARIABLE:
            return buf
        return self._optional_index(expr_id)

    def _optional_index(self, expr_id: int) -> bytes:
        """``@oldSelf[?0]`` under the identifier's id (its type and position stay right)."""
        self.dropped.add(expr_id)
        holder = number_field(2, self.new_id()) + delimited(4, delimited(1, HOLDER.encode()))
        zero = number_field(2, self.new_id()) + delimited(3, number_field(3, 0))
        call = (delimited(2, _OPTIONAL_INDEX.encode()) + delimited(3, holder)
                + delimited(3, zero))
        return number_field(2, expr_id) + delimited(6, call)


def read_old_self_from_holder(serialized: bytes, checked: CheckedAST) -> bytes:
    """``serialized`` (``Expression.serialize()`` of ``checked``) with ``oldSelf`` read as
    ``@oldSelf[?0]``. The replaced identifiers' references are dropped: they name the
    variable, which the call is not."""
    return rewrite_checked(serialized, _HolderRewriter(checked))
