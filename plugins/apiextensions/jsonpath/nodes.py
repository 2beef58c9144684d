"""JSONPath nodes and their evaluation (upstream's ``node.go`` and ``jsonpath.go``).

Values are decoded JSON (dict, list, str, int, float, bool, None); each node maps the
current values to the next ones as upstream's ``walk`` does, with the same errors.
"""

from __future__ import annotations

from kapiserver.apimachinery.field_errors import go_value
from kapiserver.runtime.gotypes import go_type_name


class JSONPathError(ValueError):
    """A path upstream refuses to parse, or (from ``find_results``) fails to evaluate.

    ``partial`` is what upstream's evaluator hands back with the error (filters that
    only test existence read it).
    """

    def __init__(self, message: str, partial=()):
        super().__init__(message)
        self.partial = list(partial)


class ListNode:
    __slots__ = ("nodes",)

    def __init__(self):
        self.nodes = []

    def eval(self, values, allow):
        for node in self.nodes:
            values = node.eval(values, allow)
        return values


class TextNode:
    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text

    def eval(self, values, allow):
        return [self.text]


class LiteralNode:
    """An int, float or bool literal: one copy per current value."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def eval(self, values, allow):
        return [self.value] * len(values)


class FieldNode:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def eval(self, values, allow):
        found = []
        name = self.name
        for value in values:
            if isinstance(value, dict) and name in value:
                found.append(value[name])
        if not found and values and not allow:
            raise JSONPathError(f"{name} is not found")
        return found


class ArrayNode:
    __slots__ = ("params",)

    def __init__(self, params):
        self.params = params  # three (value, known, derived)

    def eval(self, values, allow):
        found = []
        (start, start_known, _), (end, end_known, derived), (step, step_known, _) = self.params
        for value in values:
            if value is None:
                continue
            if not isinstance(value, list):
                raise JSONPathError(f"{go_type_name(value)} is not array or slice", values)
            length = len(value)
            first = start if start_known else 0
            if first < 0:
                first += length
            last = end if end_known else length
            if last < 0 or (last == 0 and derived):
                last += length
            if last == first:
                # Upstream returns at once when no element is asked for.
                return found
            if first >= length or first < 0:
                raise JSONPathError(f"array index out of bounds: index {first}, length "
                                    f"{length}", values)
            if last > length or last < 0:
                raise JSONPathError(f"array index out of bounds: index {last - 1}, length "
                                    f"{length}", values)
            if first > last:
                raise JSONPathError(f"starting index {first} is greater than ending index "
                                    f"{last}", values)
            if step_known and step <= 0:
                raise JSONPathError("step must be > 0", values)
            found.extend(value[first:last:step if step_known else 1])
        return found


def _children(value):
    if isinstance(value, dict):
        return list(value.values())
    if isinstance(value, list):
        return value
    if isinstance(value, str):
        # Go indexes a string by byte.
        return list(value.encode())
    return []


class WildcardNode:
    __slots__ = ()

    def eval(self, values, allow):
        found = []
        for value in values:
            found.extend(_children(value))
        return found


class RecursiveNode:
    __slots__ = ()

    def eval(self, values, allow):
        found = []
        for value in values:
            children = _children(value)
            if children:
                found.append(value)
                found.extend(self.eval(children, allow))
        return found


class UnionNode:
    __slots__ = ("lists",)

    def __init__(self, lists):
        self.lists = lists

    def eval(self, values, allow):
        found = []
        for branch in self.lists:
            try:
                found.extend(branch.eval(values, allow))
            except JSONPathError as err:
                raise JSONPathError(str(err), values) from None
        return found


class IdentifierNode:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def eval(self, values, allow):
        if self.name in ("range", "end"):
            raise JSONPathError(f"{self.name} is not supported in a single path", values)
        raise JSONPathError(f"unrecognized identifier {self.name}", values)


class FilterNode:
    __slots__ = ("left", "right", "operator")

    def __init__(self, left, right, operator):
        self.left, self.right, self.operator = left, right, operator

    def eval(self, values, allow):
        found = []
        for value in values:
            if not isinstance(value, list):
                shown = "<invalid reflect.Value>" if value is None else go_value(value)
                raise JSONPathError(f"{shown} is not array or slice and cannot be filtered",
                                    values)
            for item in value:
                try:
                    lefts = self.left.eval([item], allow)
                    failure = None
                except JSONPathError as err:
                    lefts, failure = err.partial, err
                if self.operator == "exists":
                    if lefts:
                        found.append(item)
                    continue
                if failure is not None:
                    raise JSONPathError(str(failure), values)
                if not lefts:
                    continue
                if len(lefts) > 1:
                    raise JSONPathError("can only compare one element at a time", values)
                try:
                    rights = self.right.eval([item], allow)
                except JSONPathError as err:
                    raise JSONPathError(str(err), values) from None
                if not rights:
                    continue
                if len(rights) > 1:
                    raise JSONPathError("can only compare one element at a time", values)
                if _compare(self.operator, lefts[0], rights[0], found):
                    found.append(item)
        return found


def _kind(value) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    raise JSONPathError("invalid type for comparison")


def _compare(operator: str, left, right, found) -> bool:
    """Upstream's forked ``text/template`` comparisons (``eq``, ``lt``, …)."""
    try:
        if operator not in ("<", ">", "==", "!=", "<=", ">="):
            raise JSONPathError(f"unrecognized filter operator {operator}")
        kind = _kind(left)
        if kind != _kind(right):
            raise JSONPathError("incompatible types for comparison")
        if operator in ("==", "!="):
            return (left == right) == (operator == "==")
        if kind == "bool":
            raise JSONPathError("invalid type for comparison")
        if operator == "<":
            return left < right
        if operator == ">":
            return not left <= right
        if operator == "<=":
            return left <= right
        return not left < right
    except JSONPathError as err:
        raise JSONPathError(str(err), found) from None


