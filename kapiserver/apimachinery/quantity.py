"""``resource.Quantity`` as k8s.io/apimachinery 0.32 parses, prints, compares and adds it.

Clients see how kube-apiserver treats quantities: ``1000m`` comes back as ``"1"``,
``1024Mi`` as ``"1Gi"``, ``0.5`` as ``"500m"``, and a value written in a form the parser
takes for canonical comes back as written (``"1e3"``, ``"+1"``, and, through upstream's
kubernetes/kubernetes#138165, ``"1.001"``). A :class:`Quantity` therefore keeps what Go's
keeps: the number, its ``Format``, the string ``ParseQuantity`` chose to reuse, and which
of Go's two representations holds the number (an ``int64Amount`` or an ``inf.Dec``), since
``Value()`` and ``MilliValue()`` round and overflow differently in each.

Numbers are exact Python integers scaled by a power of ten. Powers are never materialised
where upstream's answer follows from magnitudes alone, so ``1e-999999999`` parses (to
``1n``) without the gigabyte-sized intermediate Go would build; only additions that need an
exact sum of more than ``_MAX_DIGITS`` digits are refused (Go would grind through them).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from .field_errors import go_quote

DECIMAL_EXPONENT = "DecimalExponent"  #: e.g. ``12e6``
BINARY_SI = "BinarySI"                #: e.g. ``12Mi`` (12 * 2^20)
DECIMAL_SI = "DecimalSI"              #: e.g. ``12M`` (12 * 10^6)

SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
#: upstream's ``ErrFormatWrong``, ``ErrNumeric`` and ``ErrSuffix`` texts.
ERR_FORMAT_WRONG = f"quantities must match the regular expression '{SPLIT_RE}'"
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"

_INT64_MAX = (1 << 63) - 1
_INT64_MIN = -(1 << 63)
_MASK64 = (1 << 64) - 1
#: ``resource.MaxMilliValue``: the largest ``Value()`` whose ``MilliValue()`` fits an int64.
MAX_MILLI_VALUE = _INT64_MAX // 1000
_MAX_DIGITS = 100_000
# CPython refuses str()/int() conversions past 4300 digits; stay well under that limit.
_STR_CHUNK = 4000


class QuantityError(ValueError):
    """A value ``ParseQuantity`` refuses; ``str()`` is upstream's error text."""


# -- Go integer semantics -------------------------------------------------------------------

def _wrap64(x: int) -> int:
    """``x`` as an int64 after Go's two's-complement wrap-around."""
    return ((x + (1 << 63)) & _MASK64) - (1 << 63)


def _wrap32(x: int) -> int:
    return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def _fits64(x: int) -> bool:
    return _INT64_MIN <= x <= _INT64_MAX


def _go_quo(a: int, b: int) -> int:
    """Go's ``/`` on integers: truncated toward zero."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _go_rem(a: int, b: int) -> int:
    """Go's ``%`` on integers: the remainder takes the dividend's sign."""
    return a - b * _go_quo(a, b)


def _int_of(digits: str) -> int:
    if len(digits) <= _STR_CHUNK:
        return int(digits)
    low = len(digits) // 2
    return _int_of(digits[:-low]) * 10 ** low + _int_of(digits[-low:])


def _digits(n: int) -> str:
    """``str(n)`` for integers of any size."""
    if n.bit_length() < 3 * _STR_CHUNK:
        return str(n)
    if n < 0:
        return "-" + _digits(-n)
    low = int(n.bit_length() * 0.30103) // 2
    high, rest = divmod(n, 10 ** low)
    return _digits(high) + _digits(rest).zfill(low)


def _strip10(c: int) -> tuple[int, int]:
    """``c`` (not zero) without its trailing decimal zeros, and how many there were."""
    times = 0
    while c % 100_000_000 == 0:
        c //= 100_000_000
        times += 8
    while c % 10 == 0:
        c //= 10
        times += 1
    return c, times


def _smaller_than_pow10(c: int, k: int) -> bool:
    """``|c| < 10**k`` for k >= 0, without building 10**k when |c| is far below it."""
    if c.bit_length() <= 3 * k:  # |c| < 2**(3k) < 10**k
        return True
    return abs(c) < 10 ** k


def _pow10(k: int) -> int:
    if k > _MAX_DIGITS:
        raise QuantityError(f"quantity needs more than {_MAX_DIGITS} digits to compute exactly")
    return 10 ** k


def _cmp(c1: int, e1: int, c2: int, e2: int) -> int:
    """Compare c1 * 10**e1 with c2 * 10**e2 exactly."""
    if e1 == e2 or not c1 or not c2:
        if e1 != e2:
            c1, c2 = (c1 > 0) - (c1 < 0), (c2 > 0) - (c2 < 0)
        return (c1 > c2) - (c1 < c2)
    if (c1 > 0) != (c2 > 0):
        return 1 if c1 > 0 else -1
    sign = 1 if c1 > 0 else -1
    if e1 > e2:
        if not _smaller_than_pow10(c2, e1 - e2):
            c1 *= 10 ** (e1 - e2)
            return (c1 > c2) - (c1 < c2)
        return sign  # |c1| * 10**gap >= 10**gap > |c2|
    if not _smaller_than_pow10(c1, e2 - e1):
        c2 *= 10 ** (e2 - e1)
        return (c1 > c2) - (c1 < c2)
    return -sign


def _round_away(c: int, e: int) -> tuple[int, bool]:
    """c * 10**e rounded to an integer away from zero (``inf.RoundUp``), and whether exact."""
    if not c:
        return 0, True
    if e >= 0:
        return c * _pow10(e), True
    if _smaller_than_pow10(c, -e):
        return (1 if c > 0 else -1), False
    q, r = divmod(abs(c), 10 ** -e)
    if r:
        q += 1
    return (q if c > 0 else -q), r == 0


def _positive_scale_int64(base: int, scale: int) -> tuple[int, bool]:
    """upstream's ``positiveScaleInt64``: base * 10**scale, and whether it fit an int64.

    Its special cases return the wrapped product (scales 1, 2, 3, 6, 9) or 0 (the loop
    for every other scale) on overflow; ``Value()`` returns either without looking.
    """
    if scale == 0 or base == 0:
        return base, True
    if scale in (1, 2, 3, 6, 9):
        if base == 1:
            return base * 10 ** scale, True
        if base == _INT64_MIN:
            return 0, False
        product = base * 10 ** scale
        return _wrap64(product), _fits64(product)
    if scale > 19:
        return 0, False
    product = base * 10 ** scale
    return (product, True) if _fits64(product) else (0, False)


def _negative_scale_int64(base: int, scale: int) -> int:
    """upstream's ``negativeScaleInt64``: base / 10**scale rounded away from zero."""
    if not base:
        return 0
    if scale > 19:
        q, r = 0, 1
    else:
        q, r = divmod(abs(base), 10 ** scale)
    if r:
        q += 1
    return q if base > 0 else -q


def _int64_add(av: int, ascale: int, bv: int, bscale: int) -> tuple[int, int] | None:
    """``int64Amount.Add``: the sum at the smaller scale, or None where Go overflows."""
    if bv == 0:
        return av, ascale
    if av == 0:
        return bv, bscale
    if ascale > bscale:
        av, ok = _positive_scale_int64(av, ascale - bscale)
        ascale = bscale
    elif bscale > ascale:
        bv, ok = _positive_scale_int64(bv, bscale - ascale)
    else:
        ok = True
    total = av + bv
    return (total, ascale) if ok and _fits64(total) else None


# -- parsing --------------------------------------------------------------------------------

# upstream's parseQuantityString, as a regular expression: possessive, so it takes exactly
# the greedy runs Go's hand-written scanner takes. Groups: the sign, the integer digits after
# leading zeros, the fraction digits (None without a point), the suffix.
_SCAN = re.compile(r"([+-]?+)0*+([0-9]*+)(?:\.([0-9]*+))?+([eEinumkKMGTP]*+[-+]?+[0-9]*+)")
_EXPONENT = re.compile(r"[+-]?[0-9]+")

# suffix -> (base, exponent, format), upstream's suffixer (decimal before binary lookups).
_SUFFIXES = {
    "": (10, 0, DECIMAL_SI), "n": (10, -9, DECIMAL_SI), "u": (10, -6, DECIMAL_SI),
    "m": (10, -3, DECIMAL_SI), "k": (10, 3, DECIMAL_SI), "M": (10, 6, DECIMAL_SI),
    "G": (10, 9, DECIMAL_SI), "T": (10, 12, DECIMAL_SI), "P": (10, 15, DECIMAL_SI),
    "E": (10, 18, DECIMAL_SI),
    "Ki": (2, 10, BINARY_SI), "Mi": (2, 20, BINARY_SI), "Gi": (2, 30, BINARY_SI),
    "Ti": (2, 40, BINARY_SI), "Pi": (2, 50, BINARY_SI), "Ei": (2, 60, BINARY_SI),
}
_DECIMAL_SUFFIX = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T",
                   15: "P", 18: "E"}
_BINARY_SUFFIX = {1: "Ki", 2: "Mi", 3: "Gi", 4: "Ti", 5: "Pi", 6: "Ei"}


def _interpret_exponent(suffix: str) -> tuple[int, int, str] | None:
    if len(suffix) > 1 and suffix[0] in "eE" and _EXPONENT.fullmatch(suffix, 1):
        # strconv.ParseInt(suffix[1:], 10, 64), then int32() of it: wraps, as Go does.
        sign = suffix[1] if suffix[1] in "+-" else ""
        digits = suffix[1 + len(sign):].lstrip("0") or "0"
        if len(digits) <= 19:
            parsed = int(sign + digits)
            if _fits64(parsed):
                return 10, _wrap32(parsed), DECIMAL_EXPONENT
    return None


# A Quantity's fields: number, exponent, inf.Dec scale (None: an int64Amount), format and
# the string ParseQuantity kept (None: none).
_Parts = tuple[int, int, "int | None", str, "str | None"]


def _parse(text: str) -> _Parts:
    if not text:
        raise QuantityError(ERR_FORMAT_WRONG)
    if text == "0":
        return 0, 0, None, DECIMAL_SI, "0"
    m = _SCAN.fullmatch(text)
    if m is None:
        raise QuantityError(ERR_FORMAT_WRONG)
    sign, num, denom, suffix = m.groups()
    meaning = _SUFFIXES.get(suffix) or _interpret_exponent(suffix)
    if meaning is None:
        raise QuantityError(ERR_SUFFIX)
    base, exponent, fmt = meaning
    if not num:
        num = "0"
    if denom is None:
        denom = ""
    if base == 10:
        scale = exponent - len(denom)
        precision = 18 - len(num) - len(denom)
        mantissa = 1
    elif not denom:
        scale = 0
        mantissa = 1 << exponent
        # 1Mi (2^20) has ~6 digits of decimal precision: upstream's estimate, kept.
        precision = 15 - len(num) - exponent * 3 // 10 - 1
    else:
        precision = -1
    if precision >= 0:
        if scale < -2147483648:
            scale = _wrap32(scale)
        if scale >= -9:
            shifted = num + denom
            value = int(shifted)
            result = value * mantissa
            if result <= _INT64_MAX:
                # Upstream reuses the input as the canonical string when it thinks it is
                # one; the test ignores a fraction's point, so "1.001" comes back as written
                # (kubernetes/kubernetes#138165), and a "+" or leading zeros stay too.
                if base == 2:
                    reuse = value & 7
                else:
                    reuse = (scale % 3 == 0 and shifted[0] != "0"
                             and not shifted.endswith("000"))
                return (-result if sign == "-" else result, scale, None, fmt,
                        text if reuse else None)
    # The number as written, for inf.Dec.SetString: every digit, the point dropped.
    digits = text[len(sign):m.start(4)].replace(".", "")
    return _parse_dec(sign == "-", digits, len(denom), base, exponent, fmt)


def _parse_dec(negative: bool, digits: str, fraction_digits: int, base: int, exponent: int,
               fmt: str) -> _Parts:
    """ParseQuantity's inf.Dec path: exact, rounded up to nanos, BinarySI capped at 2^63-1."""
    if not digits:
        raise QuantityError(ERR_NUMERIC)  # inf.Dec.SetString needs a digit
    # The number is digits * 10**-dec_scale (* 2**exponent for binary suffixes).
    dec_scale = fraction_digits
    if base == 10:
        dec_scale = _wrap32(dec_scale - exponent)
    stripped = digits.rstrip("0")
    if not stripped:
        return 0, 0, dec_scale, fmt, None
    c = _int_of(stripped)
    e = len(digits) - len(stripped) - dec_scale
    if base == 2:
        c <<= exponent
    # Round up to nano precision: if you ask for some resource, you get some.
    if e < -9:
        c, e = _round_away(c, e + 9)[0], -9
    dec = 9
    if fmt == BINARY_SI:
        if _cmp(c, e, _INT64_MAX, 0) > 0:
            c, e, dec = _INT64_MAX, 0, 0
        elif _cmp(c, e, 1, 0) < 0:
            fmt = DECIMAL_SI  # a non-zero value below 1 would only round confusingly
    return -c if negative else c, e, dec, fmt, None


def parse(text: str) -> Quantity:
    """``resource.ParseQuantity``: the Quantity ``text`` denotes, or :class:`QuantityError`
    with upstream's message. No surrounding whitespace is allowed (see :func:`from_json`)."""
    return Quantity(*_parse(text))


def canonical(text: str) -> str:
    """``ParseQuantity(text).String()``: how the API server returns a quantity it was sent."""
    c, e, dec, fmt, s = _parse(text)
    return s if s is not None else _canonicalize(c, e, dec, fmt)


# -- printing -------------------------------------------------------------------------------

def _canonicalize(c: int, e: int, dec: int | None, fmt: str) -> str:
    """CanonicalizeBytes."""
    if not c:
        return "0"
    if fmt == BINARY_SI:
        if -1024 < c < 1024 and e <= 0 or _cmp(c, e, -1024, 0) > 0 and _cmp(c, e, 1024, 0) < 0:
            fmt = DECIMAL_SI  # avoids rounding, and confusion
        else:
            rounded, exact = _round_away(c, e)
            if exact:
                # AsCanonicalBase1024Bytes
                times = 0
                while rounded % 1024 == 0:
                    rounded //= 1024
                    times += 1
                return _digits(rounded) + _BINARY_SUFFIX.get(times, "")
            fmt = DECIMAL_SI  # don't lose precision
    elif fmt != DECIMAL_SI and fmt != DECIMAL_EXPONENT:
        fmt = DECIMAL_EXPONENT
    number, exponent = _canonical_decimal(c, e, dec)
    if fmt == DECIMAL_SI:
        # An exponent without an SI suffix (past E) gets none: "1000E" prints as "1".
        return number + _DECIMAL_SUFFIX.get(exponent, "")
    return number if exponent == 0 else f"{number}e{exponent}"


def _canonical_decimal(c: int, e: int, dec: int | None) -> tuple[str, int]:
    """AsCanonicalBytes: digits and an exponent that is a multiple of 3 (int32 in Go)."""
    amount, times = _strip10(c)
    if dec is None:
        exponent = e + times
        if not -2147483648 <= exponent <= 2147483647:
            exponent = _wrap32(exponent)
        step = exponent % 3  # 1 or 2 below a multiple of 3, whatever the sign
        widened = amount * 10 ** step
        if -9223372036854775808 <= widened <= 9223372036854775807:
            return str(widened), _wrap32(exponent - step)
        dec = -e  # overflow: upstream redoes it on AsDec()
    # inf.Dec: the unscaled integer's trailing zeros move into the exponent, then it
    # widens one digit at a time to a multiple of 3.
    exponent = _wrap32(-dec + _wrap32(e + dec + times))
    while _go_rem(exponent, 3):
        amount *= 10
        exponent = _wrap32(exponent - 1)
    return _digits(amount), exponent


# -- the value ------------------------------------------------------------------------------

class Quantity:
    """An immutable ``resource.Quantity``; build one with :func:`parse`, :func:`from_json` or
    the ``new_*`` functions. ``Quantity()`` is Go's zero value (``Format`` empty)."""

    # _c * 10**_e is the number. _dec is None when Go holds it as int64Amount{_c, _e};
    # otherwise Go holds an inf.Dec of scale _dec (value = unscaled * 10**-_dec) and
    # _e >= -_dec. _s is the string ParseQuantity stored; _str caches canonical().
    __slots__ = ("_c", "_e", "_dec", "_format", "_s", "_str")

    def __init__(self, _c: int = 0, _e: int = 0, _dec: int | None = None, _format: str = "",
                 _s: str | None = None):
        # The arguments are the parser's; callers use the module's functions.
        self._c, self._e, self._dec, self._format = _c, _e, _dec, _format
        self._s = self._str = _s

    @property
    def format(self) -> str:
        """``DecimalSI``, ``BinarySI``, ``DecimalExponent``, or "" for the zero value."""
        return self._format

    # -- printing --

    def canonical(self) -> str:
        """``Quantity.String()``: what the API server serialises (``MarshalJSON``)."""
        text = self._str
        if text is None:
            text = self._str = _canonicalize(self._c, self._e, self._dec, self._format)
        return text

    __str__ = canonical
    to_json = canonical

    def __repr__(self) -> str:
        return f"Quantity({self.canonical()!r})"

    def go_syntax(self) -> str:
        """The Quantity as Go's ``%#v`` prints it, which is how ``field.Invalid`` shows a
        Quantity passed by value. An ``inf.Dec`` pointer prints as an address upstream; a
        fixed one stands in for it here."""
        if self._dec is None:
            i, d = f"resource.int64Amount{{value:{self._c}, scale:{self._e}}}", "nil"
        else:
            i, d = "resource.int64Amount{value:0, scale:0}", "0xc000a1c000"
        return (f"resource.Quantity{{i:{i}, d:resource.infDecAmount{{Dec:(*inf.Dec)({d})}}, "
                f"s:{go_quote(self._s or '')}, Format:{go_quote(self._format)}}}")

    # -- numbers --

    def is_zero(self) -> bool:
        """``IsZero``."""
        return not self._c

    def sign(self) -> int:
        """``Sign``: -1, 0 or 1."""
        return (self._c > 0) - (self._c < 0)

    def as_fraction(self) -> Fraction:
        """The exact number (``AsDec``'s value), for arithmetic without Go's rounding."""
        return Fraction(self._c) * Fraction(10) ** self._e

    def cmp(self, other: Quantity) -> int:
        """``Cmp``: -1, 0 or 1 as this quantity is below, equal to or above ``other``."""
        return _cmp(self._c, self._e, other._c, other._e)

    def cmp_int64(self, value: int) -> int:
        """``CmpInt64``."""
        return _cmp(self._c, self._e, value, 0)

    def as_int64(self) -> tuple[int, bool]:
        """``AsInt64()``: (value, True) only when Go holds a whole int64Amount that fits;
        an inf.Dec or a negative scale answers (0, False) even for whole values
        (``1000m``, ``1.5Gi``, a 19-digit integer)."""
        if self._dec is not None or self._e < 0:
            return 0, False
        return _positive_scale_int64(self._c, self._e)

    def value(self) -> int:
        """``Value()``: the int64 value rounded up, away from zero, as Go computes it."""
        return self.scaled_value(0)

    def milli_value(self) -> int:
        """``MilliValue()``: ceil(q * 1000) as an int64; may overflow as upstream's does."""
        return self.scaled_value(-3)

    def scaled_value(self, scale: int) -> int:
        """``ScaledValue(scale)``: ceil(q / 10**scale) as an int64, with Go's overflows."""
        if self._dec is None:
            # int64Amount.AsScaledInt64, whose ok Value() ignores.
            if self._e < scale:
                return _negative_scale_int64(self._c, scale - self._e)
            return _positive_scale_int64(self._c, self._e - scale)[0]
        return self._dec_scaled_value(-scale)

    def _dec_scaled_value(self, new_scale: int) -> int:
        # upstream's scaledValue(unscaled, scale, newScale) over the inf.Dec, which rounds
        # negative fractions toward zero plus one and wraps where its int64s overflow.
        c, k, dif = self._c, self._e + self._dec, self._dec - new_scale  # unscaled = c*10**k
        if not c:
            return 0
        low64 = _wrap64(c * pow(10, k, 1 << 64))  # big.Int.Int64()
        if dif == 0:
            return low64
        if dif < 0:
            factor = 10 ** -dif if -dif <= 18 else _INT64_MIN  # int64(math.Pow10(-dif))
            return _wrap64(low64 * factor)
        if dif < 19 and (c <= 0 or (k < 19 and c * 10 ** k < _INT64_MAX)):
            divide = 10 ** dif
            result = _go_quo(low64, divide)
            return result + 1 if low64 - result * divide else result
        # big.Int DivMod: Euclidean, so the quotient is a floor here.
        j = k - dif
        if j >= 0:
            return _wrap64(c * pow(10, j, 1 << 64))
        if _smaller_than_pow10(c, -j):
            quotient, remainder = (0 if c > 0 else -1), 1
        else:
            quotient, remainder = divmod(c, 10 ** -j)
        return _wrap64(_wrap64(quotient) + 1) if remainder else _wrap64(quotient)

    # -- arithmetic (new values; Go mutates in place) --

    def add(self, other: Quantity) -> Quantity:
        """``q.Add(y)`` on a copy: the sum, in this quantity's format unless it is zero."""
        return self._plus(other, other._c)

    def sub(self, other: Quantity) -> Quantity:
        """``q.Sub(y)`` on a copy: the difference, formatted as :meth:`add` formats."""
        return self._plus(other, -other._c)

    __add__ = add
    __sub__ = sub

    def _plus(self, other: Quantity, addend: int) -> Quantity:
        fmt = other._format if not self._c else self._format
        if self._dec is None and other._dec is None:
            # int64Amount.Sub adds -value, which wraps for the most negative int64.
            summed = _int64_add(self._c, self._e, _wrap64(addend), other._e)
            if summed is not None:
                return Quantity(summed[0], summed[1], None, fmt, None)
        # inf.Dec: exact, at the larger of the two scales.
        dec = max(-self._e if self._dec is None else self._dec,
                  -other._e if other._dec is None else other._dec)
        (c1, e1), (c2, e2) = (self._c, self._e), (addend, other._e)
        if not c1 or not c2:
            c, e = (c1, e1) if c1 else (c2, e2)
        elif e1 >= e2:
            c, e = c1 * _pow10(e1 - e2) + c2, e2
        else:
            c, e = c1 + c2 * _pow10(e2 - e1), e1
        if not c:
            e = -dec
        return Quantity(c, e, dec, fmt, None)

    def neg(self) -> Quantity:
        """``Neg`` on a copy (an int64 ``-2^63`` stays itself, as in Go)."""
        c = _wrap64(-self._c) if self._dec is None else -self._c
        return Quantity(c, self._e, self._dec, self._format, None)

    __neg__ = neg

    # -- Python protocol --

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.cmp(other) == 0

    def __lt__(self, other: Quantity) -> bool:
        return self.cmp(other) < 0

    def __le__(self, other: Quantity) -> bool:
        return self.cmp(other) <= 0

    def __gt__(self, other: Quantity) -> bool:
        return self.cmp(other) > 0

    def __ge__(self, other: Quantity) -> bool:
        return self.cmp(other) >= 0

    def __hash__(self) -> int:
        if not self._c:
            return 0
        c, times = _strip10(self._c)
        return hash((c, self._e + times))

    def __copy__(self) -> Quantity:
        return self

    def __deepcopy__(self, memo: dict) -> Quantity:
        return self


# -- module API -----------------------------------------------------------------------------

def new_quantity(value: int, fmt: str = DECIMAL_SI) -> Quantity:
    """``NewQuantity(value, format)`` for an int64 value."""
    return Quantity(_wrap64(value), 0, None, fmt, None)


def new_milli_quantity(value: int, fmt: str = DECIMAL_SI) -> Quantity:
    """``NewMilliQuantity(value, format)``: value thousandths."""
    return Quantity(_wrap64(value), -3, None, fmt, None)


def new_decimal_quantity(unscaled: int, scale: int, fmt: str) -> Quantity:
    """``NewDecimalQuantity(inf.Dec, format)``: unscaled * 10**-scale, held as an inf.Dec."""
    return Quantity(unscaled, -scale if unscaled else 0, scale, fmt)


def new_scaled_quantity(value: int, scale: int) -> Quantity:
    """``NewScaledQuantity(value, scale)``: value * 10**scale, DecimalSI."""
    return Quantity(_wrap64(value), _wrap32(scale), None, DECIMAL_SI, None)


# unicode.IsSpace, which strings.TrimSpace trims.
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007" \
            "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def from_json(value: object) -> Quantity:
    """``UnmarshalJSON`` of a decoded JSON value: a string (trimmed of whitespace), a
    number, or null (the zero Quantity). Go reads a number's literal text; a float is
    taken as written the way Go's encoder (so kubectl) writes it: ``0.1`` is ``100m``."""
    if value is None:
        return Quantity()
    if isinstance(value, str):
        return parse(value.strip(_GO_SPACE))
    if isinstance(value, bool):
        return parse("true" if value else "false")
    if isinstance(value, int):
        return parse(_digits(value))
    if isinstance(value, float):
        return parse(_json_float(value))
    raise QuantityError(ERR_FORMAT_WRONG)


def _json_float(value: float) -> str:
    """A float64 as encoding/json writes it: shortest digits, exponent form only below
    1e-6 or from 1e21, exponents of at least two digits but ``e-7`` not ``e-07``."""
    if not math.isfinite(value):
        raise QuantityError(ERR_FORMAT_WRONG)
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0"
    mantissa, _, exp = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    point = len(whole) + int(exp or 0) - (len(whole + fraction) - len(digits))
    digits = digits.rstrip("0")
    if 1e-6 <= abs(value) < 1e21:
        if point <= 0:
            return f"{sign}0.{'0' * -point}{digits}"
        if point >= len(digits):
            return sign + digits + "0" * (point - len(digits))
        return f"{sign}{digits[:point]}.{digits[point:]}"
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    power = point - 1
    if power < 0:
        return f"{sign}{mantissa}e-{-power}"
    return f"{sign}{mantissa}e+{power:02d}"
