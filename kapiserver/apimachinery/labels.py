"""Label selectors, parsed and matched as upstream's ``k8s.io/apimachinery/pkg/labels``.

``parse`` ports upstream's lexer and recursive-descent parser (``labels.Parse``) token for
token, so that malformed selectors fail with the very message a kube-apiserver 1.32 gives
(``unable to parse requirement: found '', expected: ',', ')' or identifier``): kubectl and
client-go show that message to people. Keys and values are validated as upstream's
``NewRequirement`` does, with ``field.Error`` wording (``values[0][app]: Invalid value:
"-x": ...``). ``selector_from_label_selector`` is ``metav1.LabelSelectorAsSelector``.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from .field_errors import (FieldError, FieldPath, GoValue, aggregate_message, go_quote,
                           go_string_slice)
from .validation import is_qualified_name, is_valid_label_value


class SelectorError(ValueError):
    """A selector that does not parse or validate; ``str()`` is upstream's message.

    ``errors`` holds the ``FieldError``s behind the message when there are any (a bad key,
    a bad value), for callers that report them as causes.
    """

    def __init__(self, message: str, errors: Sequence[FieldError] = ()):
        super().__init__(message)
        self.errors = list(errors)


class Operator(str, enum.Enum):
    """upstream's ``selection.Operator``; the values are upstream's strings."""

    DOES_NOT_EXIST = "!"
    EQUALS = "="
    DOUBLE_EQUALS = "=="
    IN = "in"
    NOT_EQUALS = "!="
    NOT_IN = "notin"
    EXISTS = "exists"
    GREATER_THAN = "gt"
    LESS_THAN = "lt"


# Upstream's order: its error messages list the operators in it.
_BINARY_OPERATORS = (Operator.IN, Operator.NOT_IN, Operator.EQUALS, Operator.DOUBLE_EQUALS,
                     Operator.NOT_EQUALS, Operator.GREATER_THAN, Operator.LESS_THAN)
_VALID_OPERATORS = _BINARY_OPERATORS + (Operator.EXISTS, Operator.DOES_NOT_EXIST)
# strconv.ParseInt(s, 10, 64): an optional sign and ASCII digits, nothing else.
_INT_RE = re.compile(r"[+-]?[0-9]+")


def _go_parse_int(value: str) -> int | None:
    if not _INT_RE.fullmatch(value):
        return None
    number = int(value)
    return number if -(1 << 63) <= number < (1 << 63) else None


def _string_slice(values: list[str] | None) -> GoValue:
    # A []string bad value prints with %#v in 1.32's field.Error: []string{"a"}, or
    # []string(nil) for a nil slice.
    return GoValue("[]string(nil)" if values is None else go_string_slice(values))


# -- requirements and selectors -----------------------------------------------------------

@dataclass(frozen=True)
class Requirement:
    """One ``key operator values`` term; build it with ``new_requirement`` (it validates)."""

    key: str
    operator: Operator
    values: tuple[str, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "operator", Operator(self.operator))
        object.__setattr__(self, "values", tuple(self.values))

    def matches(self, labels: Mapping[str, str]) -> bool:
        """upstream's ``Requirement.Matches``: ``!=`` and ``notin`` match a missing key."""
        op, present = self.operator, self.key in labels
        if op in (Operator.IN, Operator.EQUALS, Operator.DOUBLE_EQUALS):
            return present and labels[self.key] in self.values
        if op in (Operator.NOT_IN, Operator.NOT_EQUALS):
            return not present or labels[self.key] not in self.values
        if op is Operator.EXISTS:
            return present
        if op is Operator.DOES_NOT_EXIST:
            return not present
        if op in (Operator.GREATER_THAN, Operator.LESS_THAN):
            if not present or len(self.values) != 1:
                return False
            have, want = _go_parse_int(labels[self.key]), _go_parse_int(self.values[0])
            if have is None or want is None:
                return False
            return have > want if op is Operator.GREATER_THAN else have < want
        return False

    def __str__(self) -> str:
        op = self.operator
        if op is Operator.EXISTS:
            return self.key
        if op is Operator.DOES_NOT_EXIST:
            return "!" + self.key
        # upstream sorts the values on output only (safeSort), never in memory.
        values = ",".join(self.values if len(self.values) == 1 else sorted(self.values))
        if op in (Operator.IN, Operator.NOT_IN):
            return f"{self.key} {op.value} ({values})"
        symbol = {Operator.GREATER_THAN: ">", Operator.LESS_THAN: "<"}.get(op, op.value)
        return f"{self.key}{symbol}{values}"


def _child(path: FieldPath | None, name: str) -> FieldPath:
    # Path.Child on a nil *Path starts a new path.
    return FieldPath(name) if path is None else path.child(name)


def _requirement_errors(key: str, op, values: Sequence[str] | None,
                        path: FieldPath | None) -> list[FieldError]:
    """The field errors of upstream's ``NewRequirement``, in its order."""
    errs = []
    if key_errs := is_qualified_name(key):
        errs.append(FieldError.invalid(_child(path, "key"), key, "; ".join(key_errs)))
    vals = list(values) if values is not None else None
    count = len(vals or ())
    value_path = _child(path, "values")
    try:
        op = Operator(op)
    except ValueError:
        errs.append(FieldError.not_supported(_child(path, "operator"), str(op),
                                             [o.value for o in _VALID_OPERATORS]))
    else:
        detail = None
        if op in (Operator.IN, Operator.NOT_IN) and count == 0:
            detail = "for 'in', 'notin' operators, values set can't be empty"
        elif op in (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.NOT_EQUALS) \
                and count != 1:
            detail = "exact-match compatibility requires one single value"
        elif op in (Operator.EXISTS, Operator.DOES_NOT_EXIST) and count != 0:
            detail = "values set must be empty for exists and does not exist"
        elif op in (Operator.GREATER_THAN, Operator.LESS_THAN) and count != 1:
            detail = "for 'Gt', 'Lt' operators, exactly one value is required"
        if detail:
            errs.append(FieldError.invalid(value_path, _string_slice(vals), detail))
        if op in (Operator.GREATER_THAN, Operator.LESS_THAN):
            for i, value in enumerate(vals or ()):
                if _go_parse_int(value) is None:
                    errs.append(FieldError.invalid(
                        value_path.index(i), value,
                        "for 'Gt', 'Lt' operators, the value must be an integer"))
    for i, value in enumerate(vals or ()):
        if value_errs := is_valid_label_value(value):
            errs.append(FieldError.invalid(value_path.index(i).key(key), value,
                                           "; ".join(value_errs)))
    return errs


def new_requirement(key: str, operator: Operator | str, values: Sequence[str] | None = None,
                    *, path: FieldPath | None = None) -> Requirement:
    """upstream's ``labels.NewRequirement``: validate, or raise ``SelectorError``.

    ``values=None`` stands for Go's nil slice (``[]string(nil)`` in messages); ``path``
    prefixes the fields the messages name (``key``, ``values[0]``, ``values[0][key]``).
    """
    errs = _requirement_errors(key, operator, values, path)
    if errs:
        raise SelectorError(aggregate_message(errs), errs)
    return Requirement(key, Operator(operator), tuple(values or ()))


class LabelSelector:
    """An AND of requirements, kept sorted by key as upstream's ``internalSelector``."""

    __slots__ = ("_requirements",)

    def __init__(self, requirements: Iterable[Requirement] = ()):
        # A stable sort: upstream's sort.Sort is stable for the few terms selectors have.
        self._requirements = tuple(sorted(requirements, key=lambda r: r.key))

    @property
    def requirements(self) -> tuple[Requirement, ...]:
        return self._requirements

    @property
    def empty(self) -> bool:
        """True when the selector does not restrict anything (``Everything``)."""
        return not self._requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        labels = labels or {}
        return all(r.matches(labels) for r in self._requirements)

    def requires_exact_match(self, key: str) -> str | None:
        """The one value ``key`` must have (``=``, ``==`` or a one-value ``in``), or None.

        As upstream, only the first requirement on ``key`` is looked at.
        """
        for r in self._requirements:
            if r.key == key:
                if r.operator in (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.IN) \
                        and len(r.values) == 1:
                    return r.values[0]
                return None
        return None

    def add(self, *requirements: Requirement) -> LabelSelector:
        """A new selector with ``requirements`` added (upstream's ``Add``)."""
        return LabelSelector(self._requirements + requirements)

    def __str__(self) -> str:
        return ",".join(str(r) for r in self._requirements)

    def __len__(self) -> int:
        return len(self._requirements)

    def __iter__(self) -> Iterator[Requirement]:
        return iter(self._requirements)

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other._requirements == self._requirements

    def __hash__(self) -> int:
        return hash(self._requirements)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r})"


class _NothingSelector(LabelSelector):
    """upstream's ``labels.Nothing()``: matches no labels and is not empty."""

    __slots__ = ()

    @property
    def empty(self) -> bool:
        return False

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        return False

    def requires_exact_match(self, key: str) -> str | None:
        return None

    def add(self, *requirements: Requirement) -> LabelSelector:
        return self

    def __bool__(self) -> bool:
        return True

    def __repr__(self) -> str:
        return "labels.nothing()"


def everything() -> LabelSelector:
    """A selector that matches every label set."""
    return LabelSelector()


def nothing() -> LabelSelector:
    """A selector that matches no label set (a nil ``metav1.LabelSelector``)."""
    return _NothingSelector()


def selector_from_set(labels: Mapping[str, str] | None) -> LabelSelector:
    """upstream's ``SelectorFromSet``: ``key=value`` for each pair, not validated."""
    return LabelSelector(Requirement(k, Operator.EQUALS, (v,)) for k, v in (labels or {}).items())


# -- the parser: a port of upstream's Lexer and Parser ------------------------------------

class _Token(enum.IntEnum):
    ERROR = 0
    END_OF_STRING = 1
    CLOSED_PAR = 2
    COMMA = 3
    DOES_NOT_EXIST = 4
    DOUBLE_EQUALS = 5
    EQUALS = 6
    GREATER_THAN = 7
    IDENTIFIER = 8
    IN = 9
    LESS_THAN = 10
    NOT_EQUALS = 11
    NOT_IN = 12
    OPEN_PAR = 13


_STRING_TO_TOKEN = {")": _Token.CLOSED_PAR, ",": _Token.COMMA, "!": _Token.DOES_NOT_EXIST,
                    "==": _Token.DOUBLE_EQUALS, "=": _Token.EQUALS, ">": _Token.GREATER_THAN,
                    "in": _Token.IN, "<": _Token.LESS_THAN, "!=": _Token.NOT_EQUALS,
                    "notin": _Token.NOT_IN, "(": _Token.OPEN_PAR}
_TOKEN_TO_OPERATOR = {_Token.IN: Operator.IN, _Token.EQUALS: Operator.EQUALS,
                      _Token.DOUBLE_EQUALS: Operator.DOUBLE_EQUALS,
                      _Token.GREATER_THAN: Operator.GREATER_THAN,
                      _Token.LESS_THAN: Operator.LESS_THAN, _Token.NOT_IN: Operator.NOT_IN,
                      _Token.NOT_EQUALS: Operator.NOT_EQUALS}
_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")
_END = "\0"  # upstream's lexer reads a 0 byte at the end, and so stops at a NUL too
_KEY_AND_OPERATOR, _VALUES = 0, 1


class _Lexer:
    """upstream's ``Lexer``, byte for byte: Go strings index bytes, the specials are ASCII."""

    def __init__(self, text: str):
        self.text, self.pos = text, 0

    def read(self) -> str:
        if self.pos < len(self.text):
            self.pos += 1
            return self.text[self.pos - 1]
        return _END

    def scan_id_or_keyword(self) -> tuple[_Token, str]:
        buffer = []
        while True:
            ch = self.read()
            if ch == _END:
                break
            if ch in _SPECIAL or ch in _WHITESPACE:
                self.pos -= 1
                break
            buffer.append(ch)
        literal = "".join(buffer)
        return _STRING_TO_TOKEN.get(literal, _Token.IDENTIFIER), literal

    def scan_special_symbol(self) -> tuple[_Token, str]:
        buffer, last = "", None
        while True:
            ch = self.read()
            if ch == _END:
                break
            if ch not in _SPECIAL:
                self.pos -= 1
                break
            buffer += ch
            if buffer in _STRING_TO_TOKEN:
                last = (_STRING_TO_TOKEN[buffer], buffer)
            elif last is not None:
                self.pos -= 1
                break
        if last is None:
            return _Token.ERROR, f"error expected: keyword found '{buffer}'"
        return last

    def lex(self) -> tuple[_Token, str]:
        ch = self.read()
        while ch in _WHITESPACE:
            ch = self.read()
        if ch == _END:
            return _Token.END_OF_STRING, ""
        self.pos -= 1
        if ch in _SPECIAL:
            return self.scan_special_symbol()
        return self.scan_id_or_keyword()


class _ParseError(Exception):
    def __init__(self, message: str, errors: Sequence[FieldError] = ()):
        super().__init__(message)
        self.errors = errors


class _Parser:
    """upstream's ``Parser``: scan every token first, then descend with one lookahead."""

    def __init__(self, text: str):
        lexer, self.items, self.position = _Lexer(text), [], 0
        while True:
            item = lexer.lex()
            self.items.append(item)
            if item[0] is _Token.END_OF_STRING:
                break

    def lookahead(self, context: int) -> tuple[_Token, str]:
        tok, lit = self.items[self.position]
        # 'in' and 'notin' are values where values are expected: "x in (in,notin)".
        if context == _VALUES and tok in (_Token.IN, _Token.NOT_IN):
            tok = _Token.IDENTIFIER
        return tok, lit

    def consume(self, context: int) -> tuple[_Token, str]:
        item = self.lookahead(context)
        self.position += 1
        return item

    def parse(self) -> list[Requirement]:
        requirements = []
        while True:
            tok, lit = self.lookahead(_VALUES)
            if tok in (_Token.IDENTIFIER, _Token.DOES_NOT_EXIST):
                try:
                    requirements.append(self.parse_requirement())
                except _ParseError as err:
                    raise SelectorError(f"unable to parse requirement: {err}",
                                        err.errors) from None
                tok, lit = self.consume(_VALUES)
                if tok is _Token.END_OF_STRING:
                    return requirements
                if tok is not _Token.COMMA:
                    raise SelectorError(f"found '{lit}', expected: ',' or 'end of string'")
                tok2, lit2 = self.lookahead(_VALUES)
                if tok2 not in (_Token.IDENTIFIER, _Token.DOES_NOT_EXIST):
                    raise SelectorError(f"found '{lit2}', expected: identifier after ','")
            elif tok is _Token.END_OF_STRING:
                return requirements
            else:
                raise SelectorError(
                    f"found '{lit}', expected: !, identifier, or 'end of string'")

    def parse_requirement(self) -> Requirement:
        key, operator = self.parse_key_and_infer_operator()
        if operator in (Operator.EXISTS, Operator.DOES_NOT_EXIST):
            return self.requirement(key, operator, [])
        operator = self.parse_operator()
        if operator in (Operator.IN, Operator.NOT_IN):
            values = self.parse_values()
        else:
            values = self.parse_exact_value()
        # upstream collects values in a sets.String and passes its sorted List().
        return self.requirement(key, operator, sorted(values))

    @staticmethod
    def requirement(key: str, operator: Operator, values: list[str]) -> Requirement:
        errs = _requirement_errors(key, operator, values, None)
        if errs:
            raise _ParseError(aggregate_message(errs), errs)
        return Requirement(key, operator, tuple(values))

    def parse_key_and_infer_operator(self) -> tuple[str, Operator | None]:
        operator = None
        tok, literal = self.consume(_VALUES)
        if tok is _Token.DOES_NOT_EXIST:
            operator = Operator.DOES_NOT_EXIST
            tok, literal = self.consume(_VALUES)
        if tok is not _Token.IDENTIFIER:
            raise _ParseError(f"found '{literal}', expected: identifier")
        if errs := is_qualified_name(literal):
            # upstream validates with the parser's path, nil here: "<nil>: Invalid value".
            error = FieldError.invalid(None, literal, "; ".join(errs))
            raise _ParseError(str(error), [error])
        if self.lookahead(_VALUES)[0] in (_Token.END_OF_STRING, _Token.COMMA) \
                and operator is not Operator.DOES_NOT_EXIST:
            operator = Operator.EXISTS
        return literal, operator

    def parse_operator(self) -> Operator:
        tok, lit = self.consume(_KEY_AND_OPERATOR)
        if tok not in _TOKEN_TO_OPERATOR:
            expected = ", ".join(o.value for o in _BINARY_OPERATORS)
            raise _ParseError(f"found '{lit}', expected: {expected}")
        return _TOKEN_TO_OPERATOR[tok]

    def parse_values(self) -> set[str]:
        tok, lit = self.consume(_VALUES)
        if tok is not _Token.OPEN_PAR:
            raise _ParseError(f"found '{lit}' expected: '('")
        tok, lit = self.lookahead(_VALUES)
        if tok in (_Token.IDENTIFIER, _Token.COMMA):
            values = self.parse_identifiers_list()
            if self.consume(_VALUES)[0] is not _Token.CLOSED_PAR:
                raise _ParseError(f"found '{lit}', expected: ')'")
            return values
        if tok is _Token.CLOSED_PAR:  # "()"
            self.consume(_VALUES)
            return {""}
        raise _ParseError(f"found '{lit}', expected: ',', ')' or identifier")

    def parse_identifiers_list(self) -> set[str]:
        values: set[str] = set()
        while True:
            tok, lit = self.consume(_VALUES)
            if tok is _Token.IDENTIFIER:
                values.add(lit)
                tok2, lit2 = self.lookahead(_VALUES)
                if tok2 is _Token.COMMA:
                    continue
                if tok2 is _Token.CLOSED_PAR:
                    return values
                raise _ParseError(f"found '{lit2}', expected: ',' or ')'")
            if tok is _Token.COMMA:  # empty values: "(,a" "a,)" "a,,b"
                if not values:
                    values.add("")
                tok2 = self.lookahead(_VALUES)[0]
                if tok2 is _Token.CLOSED_PAR:
                    values.add("")
                    return values
                if tok2 is _Token.COMMA:
                    self.consume(_VALUES)
                    values.add("")
                continue
            raise _ParseError(f"found '{lit}', expected: ',', or identifier")

    def parse_exact_value(self) -> set[str]:
        if self.lookahead(_VALUES)[0] in (_Token.END_OF_STRING, _Token.COMMA):
            return {""}
        tok, lit = self.consume(_VALUES)
        if tok is _Token.IDENTIFIER:
            return {lit}
        raise _ParseError(f"found '{lit}', expected: identifier")


def parse(selector: str) -> LabelSelector:
    """upstream's ``labels.Parse``; raise ``SelectorError`` with upstream's message.

    The grammar: comma-separated requirements, each ``[!]key`` or ``key op value`` with
    ``op`` one of ``= == != > <`` or ``key in|notin (v1,v2)``; blanks separate tokens.
    """
    return LabelSelector(_Parser(selector).parse())


# -- metav1.LabelSelector ---------------------------------------------------------------

_LABEL_SELECTOR_OPERATORS = {"In": Operator.IN, "NotIn": Operator.NOT_IN,
                             "Exists": Operator.EXISTS, "DoesNotExist": Operator.DOES_NOT_EXIST}


def selector_from_label_selector(label_selector: Mapping | None) -> LabelSelector:
    """upstream's ``metav1.LabelSelectorAsSelector`` for a ``metav1.LabelSelector`` dict.

    ``None`` selects nothing; ``{}`` (no ``matchLabels``, no ``matchExpressions``) selects
    everything. Raise ``SelectorError`` with upstream's message on the first bad term.
    """
    if label_selector is None:
        return nothing()
    match_labels = label_selector.get("matchLabels") or {}
    expressions = label_selector.get("matchExpressions") or []
    if not match_labels and not expressions:
        return everything()
    requirements = [new_requirement(key, Operator.EQUALS, [value])
                    for key, value in match_labels.items()]
    for expression in expressions:
        operator = expression.get("operator") or ""
        if operator not in _LABEL_SELECTOR_OPERATORS:
            # Upstream's wording, "pod" included, for every kind of object.
            raise SelectorError(f"{go_quote(str(operator))} is not a valid pod selector "
                                "operator")
        # Go copies the values with append([]string(nil), ...): no values is a nil slice.
        values = list(expression.get("values") or []) or None
        requirements.append(new_requirement(expression.get("key") or "",
                                            _LABEL_SELECTOR_OPERATORS[operator], values))
    return LabelSelector(requirements)
