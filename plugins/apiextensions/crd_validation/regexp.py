"""Go's ``regexp.Compile`` syntax errors (RE2 with Perl flags), as upstream words them.

A CRD schema's ``pattern`` must compile with Go's ``regexp``; the error upstream reports is
``error parsing regexp: <code>: `<expr>```. This walks a pattern the way
``regexp/syntax``'s parser does and returns the first such error, or "" when Go compiles
the pattern. Size limits (nesting depth 1000, program size, nested repeat products) are not
checked.
"""

from __future__ import annotations

__all__ = ["regexp_error"]

_MISSING_BRACKET = "missing closing ]"
_MISSING_PAREN = "missing closing )"
_UNEXPECTED_PAREN = "unexpected )"
_INVALID_ESCAPE = "invalid escape sequence"
_INVALID_RANGE = "invalid character class range"
_INVALID_PERL_OP = "invalid or unsupported Perl syntax"
_INVALID_NAMED_CAPTURE = "invalid named capture"
_DUPLICATE_NAME = "duplicate capture group name"
_INVALID_REPEAT_OP = "invalid nested repetition operator"
_INVALID_REPEAT_SIZE = "invalid repeat count"
_MISSING_REPEAT_ARGUMENT = "missing argument to repetition operator"
_TRAILING_BACKSLASH = "trailing backslash at end of expression"

_POSIX_NAMES = frozenset(("alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph",
                          "lower", "print", "punct", "space", "upper", "word", "xdigit"))
_CATEGORIES = frozenset((
    "C", "Cc", "Cf", "Co", "Cs", "L", "Ll", "Lm", "Lo", "Lt", "Lu", "M", "Mc", "Me", "Mn", "N",
    "Nd", "Nl", "No", "P", "Pc", "Pd", "Pe", "Pf", "Pi", "Po", "Ps", "S", "Sc", "Sk", "Sm",
    "So", "Z", "Zl", "Zp", "Zs", "Any"))


class _Error(Exception):
    def __init__(self, code: str, expr: str):
        super().__init__(f"error parsing regexp: {code}: `{expr}`")


def _unicode_name_known(name: str) -> bool:
    # Go knows the general categories and the Unicode scripts (Han, Latin, Greek, ...);
    # Python has no script table, so any capitalised name is taken for a script.
    if name in _CATEGORIES:
        return True
    return len(name) > 1 and name[0].isupper() and name.replace("_", "").isalpha() \
        and name.isascii()


def _is_alnum(c: str) -> bool:
    return c.isascii() and c.isalnum()


def _parse_escape(s: str) -> str:
    """``parseEscape``: consume one escape at the start of ``s``; return the rest."""
    t = s[1:]
    if not t:
        raise _Error(_TRAILING_BACKSLASH, "")
    c, t = t[0], t[1:]
    if c.isascii() and not _is_alnum(c):
        return t
    if c in "1234567" and t and "0" <= t[0] <= "7" or c == "0":
        for _ in range(2):
            if not t or not "0" <= t[0] <= "7":
                break
            t = t[1:]
        return t
    if c == "x" and t:
        c, t = t[0], t[1:]
        if c == "{":
            digits = 0
            value = 0
            while t:
                c, t = t[0], t[1:]
                if c == "}":
                    if digits:
                        return t
                    break
                if c not in "0123456789abcdefABCDEF":
                    break
                value = value * 16 + int(c, 16)
                if value > 0x10FFFF:
                    break
                digits += 1
        else:
            second, t = (t[0], t[1:]) if t else ("", "")
            if c in "0123456789abcdefABCDEF" and second and \
                    second in "0123456789abcdefABCDEF":
                return t
    elif c in "afnrtv":
        return t
    raise _Error(_INVALID_ESCAPE, s[:len(s) - len(t)])


def _parse_unicode_class(s: str) -> str | None:
    """``parseUnicodeClass``: ``\\pL``, ``\\p{Greek}``; None when ``s`` is not one."""
    if len(s) < 2 or s[0] != "\\" or s[1] not in "pP":
        return None
    t = s[2:]
    if t[:1] != "{":
        seq, t = s[:3], t[1:]
        name = seq[2:]
    else:
        end = s.find("}")
        if end < 0:
            raise _Error(_INVALID_RANGE, s)
        seq, t = s[:end + 1], s[end + 1:]
        name = s[3:end]
    if name.startswith("^"):
        name = name[1:]
    if not _unicode_name_known(name):
        raise _Error(_INVALID_RANGE, seq)
    return t


def _parse_class(s: str) -> str:
    """``parseClass``: consume ``[...]`` at the start of ``s``; return the rest."""
    t = s[1:]
    if t.startswith("^"):
        t = t[1:]
    first = True
    while not t or t[0] != "]" or first:
        first = False
        if len(t) > 2 and t.startswith("[:"):
            end = t.find(":]", 2)
            if end >= 0:
                name = t[2:end]
                if name.lstrip("^") not in _POSIX_NAMES or name.startswith("^^"):
                    raise _Error(_INVALID_RANGE, t[:end + 2])
                t = t[end + 2:]
                continue
        rest = _parse_unicode_class(t)
        if rest is not None:
            t = rest
            continue
        if len(t) >= 2 and t[0] == "\\" and t[1] in "dDsSwW":
            t = t[2:]
            continue
        start = t
        lo, t = _class_char(t, s)
        if len(t) >= 2 and t[0] == "-" and t[1] != "]":
            hi, t = _class_char(t[1:], s)
            if hi < lo:
                raise _Error(_INVALID_RANGE, start[:len(start) - len(t)])
    return t[1:]


def _class_char(t: str, whole_class: str) -> tuple[int, str]:
    if not t:
        raise _Error(_MISSING_BRACKET, whole_class)
    if t[0] == "\\":
        rest = _parse_escape(t)
        return _escape_value(t[:len(t) - len(rest)]), rest
    return ord(t[0]), t[1:]


def _escape_value(escape: str) -> int:
    body = escape[1:]
    if body[0] in "afnrtv":
        return ord({"a": "\a", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}[body[0]])
    if body[0] == "x":
        return int(body[1:].strip("{}"), 16)
    if body[0].isdigit():
        return int(body, 8)
    return ord(body[0])


def _parse_perl_flags(s: str, names: set) -> tuple[str, bool]:
    """``parsePerlFlags`` at ``(?``: return the rest and whether a group opened."""
    starts_with_p = len(s) > 4 and s[2] == "P" and s[3] == "<"
    starts_with_name = len(s) > 3 and s[2] == "<"
    if starts_with_p or starts_with_name:
        begin = 4 if starts_with_p else 3
        end = s.find(">")
        if end < 0:
            raise _Error(_INVALID_NAMED_CAPTURE, s)
        capture, name = s[:end + 1], s[begin:end]
        if not name or not all(c == "_" or _is_alnum(c) for c in name):
            raise _Error(_INVALID_NAMED_CAPTURE, capture)
        if name in names:
            raise _Error(_DUPLICATE_NAME, name)
        names.add(name)
        return s[end + 1:], True
    t = s[2:]
    negated = saw_flag = False
    while t:
        c, t = t[0], t[1:]
        if c in "imsU":
            saw_flag = True
        elif c == "-" and not negated:
            negated, saw_flag = True, False
        elif c in ":)" and (not negated or saw_flag):
            return t, c == ":"
        else:
            break
    raise _Error(_INVALID_PERL_OP, s[:len(s) - len(t)])


def _check(pattern: str) -> None:
    # The parse stack as the repetition checks see it: "(" and "|" are pseudo-operators
    # nothing may repeat; any other entry is an operand.
    stack: list[str] = []
    depth = 0
    names: set = set()
    last_repeat = ""
    t = pattern
    while t:
        repeat = ""
        c = t[0]
        if c == "(":
            if t.startswith("(?"):
                t, opened = _parse_perl_flags(t, names)
                if opened:
                    depth += 1
                    stack.append("(")
            else:
                depth += 1
                stack.append("(")
                t = t[1:]
        elif c == "|":
            stack.append("|")
            t = t[1:]
        elif c == ")":
            if depth == 0:
                raise _Error(_UNEXPECTED_PAREN, pattern)
            depth -= 1
            while stack and stack.pop() != "(":
                pass
            stack.append("x")
            t = t[1:]
        elif c == "[":
            t = _parse_class(t)
            stack.append("x")
        elif c in "*+?{":
            before = t
            if c == "{":
                parsed = _parse_repeat(t)
                if parsed is None:
                    stack.append("x")  # an unparsable repeat is a literal "{"
                    t = t[1:]
                    last_repeat = ""
                    continue
                low, high, after = parsed
                if low > 1000 or high > 1000 or 0 <= high < low:
                    raise _Error(_INVALID_REPEAT_SIZE, before[:len(before) - len(after)])
            else:
                after = t[1:]
            if after.startswith("?"):
                after = after[1:]
            if last_repeat:
                raise _Error(_INVALID_REPEAT_OP, last_repeat[:len(last_repeat) - len(after)])
            if not stack or stack[-1] in "(|":
                raise _Error(_MISSING_REPEAT_ARGUMENT, before[:len(before) - len(after)])
            repeat, t = before, after
        elif c == "\\":
            t = _escape_atom(t)
            stack.append("x")
        else:
            stack.append("x")
            t = t[1:]
        last_repeat = repeat
    if depth:
        raise _Error(_MISSING_PAREN, pattern)


def _escape_atom(t: str) -> str:
    """A backslash outside a class: assertions, ``\\Q...\\E``, classes, or an escape."""
    if len(t) >= 2:
        if t[1] in "AbBz":
            return t[2:]
        if t[1] == "C":
            raise _Error(_INVALID_ESCAPE, t[:2])
        if t[1] == "Q":
            end = t.find("\\E", 2)
            return "" if end < 0 else t[end + 2:]
        if t[1] in "dDsSwW":
            return t[2:]
    rest = _parse_unicode_class(t)
    return rest if rest is not None else _parse_escape(t)


def _parse_repeat(t: str):
    """``parseRepeat``: ``{n}``, ``{n,}``, ``{n,m}`` -> (n, m or -1), or None."""
    end = t.find("}")
    if end < 0:
        return None
    body = t[1:end]
    low, comma, high = body.partition(",")
    if not _is_number(low) or (high and not _is_number(high)):
        return None
    if not comma:
        high_value = _number(low)
    elif not high:
        high_value = -1
    else:
        high_value = _number(high)
    return _number(low), high_value, t[end + 1:]


def _is_number(digits: str) -> bool:
    # parseInt: ASCII digits without a leading zero (a "{01}" is a literal).
    return digits.isascii() and digits.isdigit() and not (len(digits) > 1
                                                          and digits[0] == "0")


def _number(digits: str) -> int:
    # parseInt gives up past 1e8; any such count is too large for a repeat.
    return int(digits) if len(digits) <= 8 else 10 ** 9


def regexp_error(pattern: str) -> str:
    """The ``regexp.Compile`` error text for ``pattern``, or "" when Go accepts it."""
    try:
        _check(pattern)
    except _Error as err:
        return str(err)
    return ""
