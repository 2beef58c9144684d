"""The JSONPath parser (upstream's ``parser.go``), position for position: its error
messages are upstream's, and so are the odd corners (a ``['a.b']`` key is two fields)."""

from __future__ import annotations

import re

from .nodes import (ArrayNode, FieldNode, FilterNode, IdentifierNode, JSONPathError,
                    ListNode, LiteralNode, RecursiveNode, TextNode, UnionNode, WildcardNode)

_INT64 = 2 ** 63
_DICT_KEY = re.compile(r"'([^']*)'")
_SLICE = re.compile(r"(-?[0-9]*)(:-?[0-9]*)?(:-?[0-9]*)?")
_FILTER = re.compile(r"([^!<>=]+)([!<>=]+)(.+?)")
_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)")
_EOF = ""
_TERMINATORS = frozenset(" \t\r\n.,[]$@{}")
_SIMPLE_ESCAPES = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92}


def _is_digit(r: str) -> bool:
    return r != _EOF and r.isdecimal()


def _is_alphanumeric(r: str) -> bool:
    return r == "_" or (r != _EOF and (r.isalpha() or r.isdecimal()))


def _is_terminator(r: str) -> bool:
    return r == _EOF or r in _TERMINATORS


def _go_rune(r: str) -> str:
    """Go's ``%#U``."""
    return f"U+{ord(r):04X} '{r}'" if r.isprintable() else f"U+{ord(r):04X}"


def _atoi(text: str):
    """Go's ``strconv.Atoi`` (64-bit), or None."""
    if not _INT.fullmatch(text):
        return None
    value = int(text)
    return value if -_INT64 <= value < _INT64 else None


class Parser:
    """Upstream's ``Parser``, position for position (its error texts depend on it)."""

    def __init__(self, text: str):
        self.input = text
        self.pos = self.start = self.width = 0

    def consume(self) -> str:
        value = self.input[self.start:self.pos]
        self.start = self.pos
        return value

    def next(self) -> str:
        if self.pos >= len(self.input):
            self.width = 0
            return _EOF
        self.width = 1
        self.pos += 1
        return self.input[self.pos - 1]

    def backup(self) -> None:
        self.pos -= self.width

    def peek(self) -> str:
        r = self.next()
        self.backup()
        return r

    def parse(self) -> list:
        root, text = [], self.input
        while True:
            brace = text.find("{", self.pos)
            self.pos = len(text) if brace < 0 else brace
            if self.pos > self.start:
                root.append(TextNode(self.consume()))
            if brace < 0:
                return root
            self.pos += 1
            self.consume()
            action = ListNode()
            root.append(action)
            self.parse_inside_action(action)

    def parse_inside_action(self, cur: ListNode) -> None:
        while True:
            if self.input.startswith("}", self.pos):
                self.pos += 1
                self.consume()
                return
            if self.input.startswith("[?(", self.pos):
                self.parse_filter(cur)
                continue
            if self.input.startswith("..", self.pos):
                self.parse_recursive(cur)
                continue
            r = self.next()
            if r == _EOF or r in "\r\n":
                raise JSONPathError("unclosed action")
            if r in " @$":
                self.consume()
            elif r == "[":
                self.parse_array(cur)
            elif r in "\"'":
                self.parse_quote(cur, r)
            elif r == ".":
                self.parse_field(cur)
            elif r in "+-" or _is_digit(r):
                self.backup()
                self.parse_number(cur)
            elif _is_alphanumeric(r):
                self.backup()
                self.parse_identifier(cur)
            else:
                raise JSONPathError(f"unrecognized character in action: {_go_rune(r)}")

    def parse_identifier(self, cur: ListNode) -> None:
        while not _is_terminator(self.next()):
            pass
        self.backup()
        value = self.consume()
        cur.nodes.append(LiteralNode(value == "true") if value in ("true", "false")
                         else IdentifierNode(value))

    def parse_recursive(self, cur: ListNode) -> None:
        if cur.nodes and isinstance(cur.nodes[-1], RecursiveNode):
            raise JSONPathError("invalid multiple recursive descent")
        self.pos += 2
        self.consume()
        cur.nodes.append(RecursiveNode())
        if _is_alphanumeric(self.peek()):
            self.parse_field(cur)

    def parse_number(self, cur: ListNode) -> None:
        if self.peek() in ("+", "-"):
            self.next()
        while True:
            r = self.next()
            if r != "." and not _is_digit(r):
                self.backup()
                break
        value = self.consume()
        number = _atoi(value)
        if number is None and _FLOAT.fullmatch(value):
            number = float(value)
        if number is None:
            raise JSONPathError(f"cannot parse number {value}")
        cur.nodes.append(LiteralNode(number))

    def parse_array(self, cur: ListNode) -> None:
        while True:
            r = self.next()
            if r == _EOF or r == "\n":
                raise JSONPathError("unterminated array")
            if r == "]":
                break
        text = self.consume()[1:-1]
        if text == "*":
            text = ":"
        parts = text.split(",")
        if len(parts) > 1:
            cur.nodes.append(UnionNode([parse_action(f"[{part.strip(' ')}]")
                                     for part in parts]))
            return
        key = _DICT_KEY.fullmatch(text)
        if key is not None:
            cur.nodes.extend(parse_action(f".{key.group(1)}").nodes)
            return
        match = _SLICE.fullmatch(text)
        if match is None:
            raise JSONPathError(f"invalid array index {text}")
        params = []
        for i, value in enumerate(match.groups()):
            value = value or ""
            if value:
                if i > 0:
                    value = value[1:]
                if i > 0 and not value:
                    params.append((0, False, False))
                    continue
                number = _atoi(value)
                if number is None:
                    raise JSONPathError(f"array index {value} is not a number")
                params.append((number, True, False))
            elif i == 1:
                params.append((params[0][0] + 1, True, True))
            else:
                params.append((0, False, False))
        cur.nodes.append(ArrayNode(tuple(params)))

    def parse_filter(self, cur: ListNode) -> None:
        self.pos += 3
        self.consume()
        begin = end = False
        pair = None
        while True:
            r = self.next()
            if r == _EOF or r == "\n":
                raise JSONPathError("unterminated filter")
            if r in "\"'":
                if not begin:
                    begin, pair = True, r
                    continue
                if self.input[self.pos - 2] != "\\" and r == pair:
                    end = True
            elif r == ")" and begin == end:
                break
        if self.next() != "]":
            raise JSONPathError("unclosed array expect ]")
        text = self.consume()[:-2]
        match = _FILTER.fullmatch(text)
        if match is None:
            cur.nodes.append(FilterNode(parse_action(text), ListNode(), "exists"))
        else:
            cur.nodes.append(FilterNode(parse_action(match.group(1)),
                                     parse_action(match.group(3)), match.group(2)))

    def parse_quote(self, cur: ListNode, end: str) -> None:
        while True:
            r = self.next()
            if r == _EOF or r == "\n":
                raise JSONPathError("unterminated quoted string")
            if r == end and self.input[self.pos - 2] != "\\":
                break
        value = self.consume()
        try:
            text = unquote(value)
        except ValueError:
            raise JSONPathError(f"unquote string {value} error invalid syntax") from None
        cur.nodes.append(TextNode(text))

    def parse_field(self, cur: ListNode) -> None:
        self.consume()
        while True:
            r = self.next()
            if r == "\\":
                self.next()
            elif _is_terminator(r):
                self.backup()
                break
        value = self.consume()
        cur.nodes.append(WildcardNode() if value == "*" else FieldNode(value.replace("\\", "")))


def parse_action(text: str) -> ListNode:
    """Upstream's ``parseAction``: ``text`` parsed inside braces, its first action."""
    return Parser("{" + text + "}").parse()[0]


def unquote(quoted: str) -> str:
    """Upstream's ``UnquoteExtend`` (``strconv.Unquote`` accepting single quotes);
    ``ValueError`` for Go's ``ErrSyntax``."""
    if len(quoted) < 2 or quoted[0] != quoted[-1] or quoted[0] not in "\"'":
        raise ValueError
    quote, text = quoted[0], quoted[1:-1]
    if "\\" not in text and quote not in text:
        return text
    out, i = bytearray(), 0
    while i < len(text):
        c = text[i]
        if c == quote:
            raise ValueError
        if c != "\\":
            out += c.encode("utf-8", "surrogatepass")
            i += 1
            continue
        if i + 1 >= len(text):
            raise ValueError
        c, i = text[i + 1], i + 2
        if c in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[c])
        elif c in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[c]
            digits = text[i:i + width]
            if len(digits) < width or not all(d in "0123456789abcdefABCDEF" for d in digits):
                raise ValueError
            i += width
            if c == "x":
                out.append(int(digits, 16))
            else:
                code = int(digits, 16)
                if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                    raise ValueError
                out += chr(code).encode()
        elif c in "01234567":
            digits = c + text[i:i + 2]
            if len(digits) < 3 or not all(d in "01234567" for d in digits):
                raise ValueError
            i += 2
            if int(digits, 8) > 255:
                raise ValueError
            out.append(int(digits, 8))
        elif c in "'\"":
            if c != quote:
                raise ValueError
            out.append(ord(c))
        else:
            raise ValueError
    return out.decode("utf-8", "surrogateescape")


