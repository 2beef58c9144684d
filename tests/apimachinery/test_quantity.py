"""Tests for kapiserver.apimachinery.quantity against k8s.io/apimachinery 0.32.

Tables marked "upstream" restate facts from ``pkg/api/resource/quantity_test.go`` (inputs
and the values, formats and strings Go produces); those marked "derived" were worked out
by reading ``quantity.go``, ``amount.go``, ``math.go`` and ``scale_int.go``, including
upstream's quirks, which the API server shows clients and so must be kept.
"""

import random
import time
from fractions import Fraction

import pytest

from kapiserver.apimachinery import quantity as q
from kapiserver.apimachinery.quantity import (BINARY_SI, DECIMAL_EXPONENT, DECIMAL_SI,
                                              ERR_FORMAT_WRONG, ERR_NUMERIC, ERR_SUFFIX,
                                              Quantity, QuantityError, canonical, from_json,
                                              new_decimal_quantity, new_milli_quantity,
                                              new_quantity, new_scaled_quantity, parse)

MAX = (1 << 63) - 1
MIN = -(1 << 63)
DSI, BSI, DEXP = DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT


def dec(unscaled, exponent, fmt=DSI):
    """upstream's decQuantity(i, exponent, format): i * 10**exponent as an inf.Dec."""
    return new_decimal_quantity(unscaled, -exponent, fmt)


def wrap64(x):
    return ((x + (1 << 63)) % (1 << 64)) - (1 << 63)


def reused(quantity):
    """Whether ParseQuantity kept the input as the quantity's string (Go's ``q.s``)."""
    return 's:""' not in quantity.go_syntax()


# -- parsing: values and formats ------------------------------------------------------------

# upstream: input -> the value (i * 10**exponent) and Format ParseQuantity gives.
PARSED = [
    ("0", 0, 0, DSI), ("0n", 0, 0, DSI), ("0u", 0, 0, DSI), ("0m", 0, 0, DSI),
    ("0Ki", 0, 0, BSI), ("0k", 0, 0, DSI), ("0Mi", 0, 0, BSI), ("0M", 0, 0, DSI),
    ("0Gi", 0, 0, BSI), ("0G", 0, 0, DSI), ("0Ti", 0, 0, BSI), ("0T", 0, 0, DSI),
    ("1", 1, 0, DSI),
    ("1Ki", 1024, 0, BSI), ("8Ki", 8 << 10, 0, BSI), ("7Mi", 7 << 20, 0, BSI),
    ("6Gi", 6 << 30, 0, BSI), ("5Ti", 5 << 40, 0, BSI), ("4Pi", 4 << 50, 0, BSI),
    ("3Ei", 3 << 60, 0, BSI), ("10Ti", 10 << 40, 0, BSI), ("100Ti", 100 << 40, 0, BSI),
    ("5n", 5, -9, DSI), ("4u", 4, -6, DSI), ("3m", 3, -3, DSI), ("9", 9, 0, DSI),
    ("8k", 8, 3, DSI), ("50k", 5, 4, DSI), ("7M", 7, 6, DSI), ("6G", 6, 9, DSI),
    ("5T", 5, 12, DSI), ("40T", 4, 13, DSI), ("300T", 3, 14, DSI), ("2P", 2, 15, DSI),
    ("1E", 1, 18, DSI),
    ("1E-3", 1, -3, DEXP), ("1e3", 1, 3, DEXP), ("1E6", 1, 6, DEXP), ("1e9", 1, 9, DEXP),
    ("1E12", 1, 12, DEXP), ("1e15", 1, 15, DEXP), ("1E18", 1, 18, DEXP),
    ("1e14", 1, 14, DEXP), ("1e13", 1, 13, DEXP), ("100.035k", 100035, 0, DSI),
    ("0.001", 1, -3, DSI), ("0.0005k", 5, -1, DSI), ("0.005", 5, -3, DSI),
    ("0.05", 5, -2, DSI), ("0.5", 5, -1, DSI), ("0.00050k", 5, -1, DSI),
    ("0.00500", 5, -3, DSI), ("0.05000", 5, -2, DSI), ("0.50000", 5, -1, DSI),
    ("0.5e0", 5, -1, DEXP), ("0.5e-1", 5, -2, DEXP), ("0.5e-2", 5, -3, DEXP),
    ("10.035M", 10035, 3, DSI),
    ("1.2e3", 12, 2, DEXP), ("1.3E+6", 13, 5, DEXP), ("1.40e9", 14, 8, DEXP),
    ("1.53E12", 153, 10, DEXP), ("1.6e15", 16, 14, DEXP), ("1.7E18", 17, 17, DEXP),
    ("9.01", 901, -2, DSI), ("8.1k", 81, 2, DSI), ("7.123456M", 7123456, 0, DSI),
    ("6.987654321G", 6987654321, 0, DSI), ("5.444T", 5444, 9, DSI), ("40.1T", 401, 11, DSI),
    ("300.2T", 3002, 11, DSI), ("2.5P", 25, 14, DSI), ("1.01E", 101, 16, DSI),
    # saturate or round up to nanos
    ("3.001n", 4, -9, DSI), ("1.1E-9", 2, -9, DEXP), ("0.0000000001", 1, -9, DSI),
    ("0.0000000005", 1, -9, DSI), ("0.00000000050", 1, -9, DSI), ("0.5e-9", 1, -9, DEXP),
    ("0.9n", 1, -9, DSI), ("0.00000012345", 124, -9, DSI), ("0.00000012354", 124, -9, DSI),
    ("9Ei", MAX, 0, BSI), ("9223372036854775807Ki", MAX, 0, BSI), ("12E", 12, 18, DSI),
    # fractional binary quantities
    ("100.035Ki", 10243584, -2, BSI), ("0.5Mi", 1 << 19, 0, BSI),
    ("0.05Gi", 536870912, -1, BSI), ("0.025Ti", 274877906944, -1, BSI),
    # "things written by trolls"
    ("0.000000000001Ki", 2, -9, DSI), (".001", 1, -3, DSI), (".0001k", 100, -3, DSI),
    ("1.", 1, 0, DSI), ("1.G", 1, 9, DSI),
]


@pytest.mark.parametrize("text, unscaled, exponent, fmt", PARSED)
def test_parse_value_and_format(text, unscaled, exponent, fmt):
    for sign, factor in (("", 1), ("+", 1), ("-", -1)):
        got = parse(sign + text)
        assert got.cmp(dec(factor * unscaled, exponent)) == 0, sign + text
        assert got.format == fmt, sign + text
        assert got.sign() == (factor if unscaled else 0)


# derived: what parseQuantityString's scanner accepts though the grammar does not
@pytest.mark.parametrize("text, fmt", [
    (".", DSI), ("-.", DSI), ("+", DSI), ("-", DSI), ("Ki", BSI), ("m", DSI), ("-0", DSI),
    ("000", DSI), ("0.0Ki", BSI), ("0e0", DEXP),
])
def test_degenerate_inputs_parse_as_zero(text, fmt):
    got = parse(text)
    assert got.is_zero() and got.format == fmt and got.canonical() == "0"


# upstream's invalid inputs, with the error derived from the scanner; then derived ones
@pytest.mark.parametrize("text, message", [
    ("", ERR_FORMAT_WRONG), ("1.1.M", ERR_FORMAT_WRONG), ("1+1.0M", ERR_FORMAT_WRONG),
    ("0.1mi", ERR_SUFFIX), ("0.1am", ERR_FORMAT_WRONG), ("aoeu", ERR_FORMAT_WRONG),
    (".5i", ERR_SUFFIX), ("1i", ERR_SUFFIX), ("-3.01i", ERR_SUFFIX), ("-3.01e-", ERR_SUFFIX),
    (" 1", ERR_FORMAT_WRONG), ("1 ", ERR_FORMAT_WRONG), ("Non-Numeric", ERR_FORMAT_WRONG),
    ("e-10", ERR_NUMERIC), ("-e-20", ERR_NUMERIC), ("1e", ERR_SUFFIX), ("1ki", ERR_SUFFIX),
    ("1Mi5", ERR_SUFFIX), ("--1", ERR_SUFFIX), ("1e3.5", ERR_FORMAT_WRONG),
    ("1e99999999999999999999", ERR_SUFFIX), ("0x10", ERR_FORMAT_WRONG),
    ("1_000", ERR_FORMAT_WRONG), ("\u0661", ERR_FORMAT_WRONG), ("1\n", ERR_FORMAT_WRONG),
    ("1e+", ERR_SUFFIX), ("true", ERR_FORMAT_WRONG),
])
def test_invalid_quantities(text, message):
    with pytest.raises(QuantityError) as err:
        parse(text)
    assert str(err.value) == message


def test_error_texts_are_upstreams():
    assert ERR_FORMAT_WRONG == ("quantities must match the regular expression "
                                "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    assert ERR_NUMERIC == "unable to parse numeric part of quantity"
    assert ERR_SUFFIX == "unable to parse quantity's suffix"
    assert isinstance(QuantityError("x"), ValueError)


# -- canonical strings ----------------------------------------------------------------------

# upstream (TestQuantityString): a value, its String(), and an input that parses to it
# without being kept as its string.
STRINGS = [
    (dec(1 << 30, 0, BSI), "1Gi", "1024Mi"), (dec(300 << 20, 0, BSI), "300Mi", "307200Ki"),
    (dec(6 << 10, 0, BSI), "6Ki", ""), (dec(1001 << 30, 0, BSI), "1001Gi", "1025024Mi"),
    (dec(1 << 40, 0, BSI), "1Ti", "1024Gi"), (dec(5, 0, BSI), "5", "5000m"),
    (dec(500, -3, BSI), "500m", "0.5"), (dec(1, 9), "1G", "1000M"),
    (dec(1000, 6), "1G", "0.001T"), (dec(1000000, 3), "1G", ""),
    (dec(1000000000, 0), "1G", ""), (dec(1, -3), "1m", "1000u"), (dec(80, -3), "80m", ""),
    (dec(1080, -3), "1080m", "1.08"), (dec(108, -2), "1080m", "1080000000n"),
    (dec(10800, -4), "1080m", ""), (dec(300, 6), "300M", ""), (dec(1, 12), "1T", ""),
    (dec(1234567, 6), "1234567M", ""), (dec(1234567, -3, BSI), "1234567m", ""),
    (dec(3, 3), "3k", ""), (dec(1025, 0, BSI), "1025", ""), (dec(0, 0), "0", ""),
    (dec(0, 0, BSI), "0", ""), (dec(1, 9, DEXP), "1e9", ".001e12"),
    (dec(1, -3, DEXP), "1e-3", "0.001e0"), (dec(1, -9, DEXP), "1e-9", "1000e-12"),
    (dec(80, -3, DEXP), "80e-3", ""), (dec(300, 6, DEXP), "300e6", ""),
    (dec(1, 12, DEXP), "1e12", ""), (dec(1, 3, DEXP), "1e3", ""), (dec(3, 3, DEXP), "3e3", ""),
    (dec(3, 3), "3k", ""), (dec(0, 0, DEXP), "0", "00"), (dec(1, -9), "1n", ""),
    (dec(80, -9), "80n", ""), (dec(1080, -9), "1080n", ""), (dec(108, -8), "1080n", ""),
    (dec(10800, -10), "1080n", ""), (dec(1, -6), "1u", ""), (dec(80, -6), "80u", ""),
    (dec(1080, -6), "1080u", ""),
]


@pytest.mark.parametrize("value, expect, alternate", STRINGS)
def test_string(value, expect, alternate):
    assert value.canonical() == expect
    assert str(value) == value.to_json() == expect
    kept = parse(expect)
    assert kept.canonical() == expect and reused(kept)
    if alternate:
        other = parse(alternate)
        assert not reused(other)
        assert other.canonical() == canonical(alternate) == expect
    if not value.is_zero():
        assert value.neg().canonical() == "-" + expect
        assert (-value).canonical() == "-" + expect


# upstream (TestQuantityParseEmit), and each negated
@pytest.mark.parametrize("text, expect", [
    ("1Ki", "1Ki"), ("1Mi", "1Mi"), ("1Gi", "1Gi"), ("1024Mi", "1Gi"), ("1000M", "1G"),
    (".001Ki", "1024m"), (".000001Ki", "1024u"), (".000000001Ki", "1024n"),
    (".000000000001Ki", "2n"),
])
def test_parse_emit(text, expect):
    assert canonical(text) == expect
    assert canonical("-" + text) == "-" + expect


# derived: what a client gets back for what it sent
CANONICAL = [
    # the brief's examples, checked against the code: exponent forms stay exponent forms
    ("1000m", "1"), ("1024Mi", "1Gi"), ("0.5", "500m"), ("1e3", "1e3"), ("12e-3", "12e-3"),
    ("1.5", "1500m"), ("0.1", "100m"), ("250m", "250m"), ("1.5Gi", "1536Mi"),
    ("1.1Gi", "1181116006400m"), ("2048Mi", "2Gi"), ("1536Mi", "1536Mi"), ("500Mi", "500Mi"),
    ("0.5Gi", "512Mi"), ("0.5Mi", "512Ki"), ("1.5Ti", "1536Gi"), ("1024Ki", "1Mi"),
    ("1000Ki", "1000Ki"), ("1023Ki", "1023Ki"), ("8Ki", "8Ki"), ("1.5Ki", "1536"),
    ("0.5Ki", "512"), ("1024", "1024"), ("1Pi", "1Pi"), ("1024Ti", "1Pi"), ("7Ei", "7Ei"),
    ("8Ei", "9223372036854775807"), ("100Ei", "9223372036854775807"),
    # the input is kept whenever upstream's canonical-form test passes, which it does for
    # a "+", for leading zeros, for any fraction of 3n digits (kubernetes#138165), for "E"
    ("+1", "+1"), ("01", "01"), ("+1Ki", "+1Ki"), ("007Mi", "007Mi"), ("1.001", "1.001"),
    ("1.000001", "1.000001"), ("1.000000001", "1.000000001"), ("100.035k", "100.035k"),
    ("1E3", "1E3"), ("1e+3", "1e+3"), ("1.", "1."), ("1.G", "1.G"), ("12E", "12E"),
    ("1e-9", "1e-9"),
    # ... and not otherwise
    ("+1000m", "1"), ("1.0010", "1001m"), ("1.44", "1440m"), ("1.0", "1"), ("0.0", "0"),
    ("-0", "0"), ("10e2", "1e3"), ("1000e0", "1e3"), ("10e20", "1e21"), ("0.0001m", "100n"),
    ("1e-10", "1e-9"), ("0.1n", "1n"), ("-1000m", "-1"), ("-0.5", "-500m"),
    ("-1.5Gi", "-1536Mi"), ("-1e-10", "-1e-9"),
    # DecimalSI has no suffix past E: upstream prints the digits alone
    ("1000E", "1"), ("1000000000000000000000", "1"), ("12000E", "12"),
    ("1" + "0" * 100000, "10"),
]


@pytest.mark.parametrize("text, expect", CANONICAL)
def test_canonical(text, expect):
    assert canonical(text) == expect
    assert parse(text).canonical() == expect


def test_canonical_is_stable():
    for text, _ in CANONICAL + [(s[1], None) for s in STRINGS]:
        once = canonical(text)
        assert canonical(once) == once


# upstream (TestNewSet, TestMilliNewSet, TestNewScaledSet): constructors and String()
@pytest.mark.parametrize("value, fmt, expect", [
    (1, DSI, "1"), (1000, DSI, "1k"), (1234000, DSI, "1234k"), (1024, BSI, "1Ki"),
    (1000000, "invalidFormatDefaultsToExponent", "1e6"), (1024 * 1024, BSI, "1Mi"),
])
def test_new_quantity(value, fmt, expect):
    assert new_quantity(value, fmt).canonical() == expect
    assert new_decimal_quantity(value, 0, fmt).canonical() == expect
    assert parse(expect).value() == value


@pytest.mark.parametrize("value, fmt, expect", [
    (1, DSI, "1m"), (1000, DSI, "1"), (1234000, DSI, "1234"), (1024, BSI, "1024m"),
    (1000000, "invalidFormatDefaultsToExponent", "1e3"), (1024 * 1024, BSI, "1048576m"),
])
def test_new_milli_quantity(value, fmt, expect):
    assert new_milli_quantity(value, fmt).canonical() == expect


@pytest.mark.parametrize("value, scale, expect", [
    (1, -9, "1n"), (1000, -9, "1u"), (1, -6, "1u"), (1000, -6, "1m"), (1, -3, "1m"),
    (1000, -3, "1"), (1, 0, "1"), (0, -9, "0"), (0, -6, "0"), (0, -3, "0"), (0, 0, "0"),
])
def test_new_scaled_quantity(value, scale, expect):
    got = new_scaled_quantity(value, scale)
    assert got.canonical() == expect
    assert parse(expect).scaled_value(scale) == value


def test_zero_value():
    zero = Quantity()
    assert zero.is_zero() and zero.format == "" and zero.canonical() == "0"
    assert zero.value() == zero.milli_value() == 0
    assert repr(parse("1.5")) == "Quantity('1500m')"


# -- numbers --------------------------------------------------------------------------------

@pytest.mark.parametrize("scale_from, scale_to, expect", [
    (-9, -9, 1), (-9, -6, 1), (-9, -3, 1), (-9, 0, 1), (-6, -9, 1000), (-6, -6, 1),
    (-6, -3, 1), (-6, 0, 1), (-3, -9, 1000000), (-3, -6, 1000), (-3, -3, 1), (-3, 0, 1),
    (0, -9, 1000000000), (0, -6, 1000000), (0, -3, 1000), (0, 0, 1), (2, -2, 10000),
])
def test_scaled_value(scale_from, scale_to, expect):  # upstream
    assert new_scaled_quantity(1, scale_from).scaled_value(scale_to) == expect
    assert dec(1, scale_from).scaled_value(scale_to) == expect


# derived: Value() and MilliValue() round up away from zero, and overflow as Go's int64s do;
# an inf.Dec (fractional binary, more than 18 digits, below nanos) rounds a negative
# fraction toward zero and then adds one.
@pytest.mark.parametrize("text, value, milli", [
    ("1.5", 2, 1500), ("-1.5", -2, -1500), ("1n", 1, 1), ("-1n", -1, -1), ("0.0001", 1, 1),
    ("100m", 1, 100), ("1Gi", 1 << 30, 1000 << 30), ("1.5Ki", 1536, 1536000),
    ("1E", 10 ** 18, 0), ("12E", 0, 0), ("9Ei", MAX, -1000), ("-1.1Ki", -1125, -1126400),
    ("-0.0000000001", 1, 1), (".001Ki", 2, 1024), ("10000000000000G", wrap64(10 ** 22), 0),
    ("10000000000000000000", wrap64(10 ** 19), wrap64(10 ** 22)),
    ("1" + "0" * 100000, wrap64(10 ** 100000), wrap64(10 ** 100003)),
])
def test_value_and_milli_value(text, value, milli):
    got = parse(text)
    assert got.value() == value
    assert got.milli_value() == milli


@pytest.mark.parametrize("value, expect", [
    (parse("1"), (1, True)), (parse("1k"), (1000, True)), (parse("-2Gi"), (-2 << 30, True)),
    (parse("1000m"), (0, False)), (parse("1.5Gi"), (0, False)), (parse("12E"), (0, False)),
    # a 19-digit integer takes the inf.Dec path; the same value built as an int64 does not
    (parse("9223372036854775807"), (0, False)), (new_quantity(MAX), (MAX, True)),
    (parse("10000000000000G"), (wrap64(10 ** 22), False)),
])
def test_as_int64(value, expect):  # derived
    assert value.as_int64() == expect


def test_max_milli_value():
    assert q.MAX_MILLI_VALUE == 9223372036854775


# upstream (TestQuantityCmp)
@pytest.mark.parametrize("x, y, expect", [
    ("0", "0", 0), ("100m", "50m", 1), ("50m", "100m", -1), ("10000T", "100Gi", 1),
])
def test_cmp(x, y, expect):
    assert parse(x).cmp(parse(y)) == expect
    assert parse(y).cmp(parse(x)) == -expect


# upstream (TestQuantityCmpInt64AndDec): int64Amount{value, scale} pairs, compared in every
# mix of Go's two representations
@pytest.mark.parametrize("a, b, expect", [
    ((901, -2), (901, -2), 0), ((90, -1), (901, -2), -1), ((901, -2), (900, -2), 1),
    ((0, 0), (0, 0), 0), ((0, 1), (0, -1), 0), ((0, -1), (0, 1), 0),
    ((800, -3), (1, 0), -1), ((800, -3), (79, -2), 1),
    ((MAX, 0), (1, -1), 1), ((MAX, 1), (1, 0), 1), ((MAX, 1), (1, 1), 1),
    ((MAX, 1), (0, 1), 1), ((MAX, -16), (1, 3), -1),
    ((MIN, 0), (0, 0), -1), ((MIN, -18), (-1, 0), -1), ((MIN, -19), (-1, 0), 1),
    ((10 ** 18, -17), (1, 1), 0), ((10 ** 18, -17), (-10, 0), 1),
    ((-10 ** 18, -17), (-10, 0), 0), ((10 ** 18, -17), (1, 0), 1),
    ((10 ** 18 + 1, -17), (1, 1), 1), ((10 ** 18 - 1, -17), (1, 1), -1),
])
def test_cmp_int64_and_dec(a, b, expect):
    for x in (new_scaled_quantity(*a), dec(*a)):
        for y in (new_scaled_quantity(*b), dec(*b)):
            assert x.cmp(y) == expect
            assert y.cmp(x) == -expect
            assert (x == y) == (expect == 0) and (x < y) == (expect < 0)
            assert (x >= y) == (expect >= 0) and (x > y) == (expect > 0)


def test_cmp_far_apart_does_not_build_huge_numbers():
    start = time.monotonic()
    assert parse("1e999999999").cmp(parse("1E")) == 1
    assert parse("-1e999999999").cmp(parse("1n")) == -1
    assert parse("1n").cmp(parse("1e-999999999")) == 0
    assert parse("1e2000000000").cmp(parse("2e1999999999")) == 1
    assert time.monotonic() - start < 5


def test_cmp_int64_equality_and_hash():
    assert parse("1").cmp_int64(1) == 0 and parse("1001m").cmp_int64(1) == 1
    assert parse("1") == parse("1000m") == parse("1e0") == dec(1000, -3)
    assert hash(parse("1")) == hash(parse("1000m")) == hash(dec(1, 0, BSI))
    assert parse("1") != parse("2") and parse("1") != "1"
    assert sorted([parse("1Gi"), parse("1G"), parse("100m")]) == [parse("100m"), parse("1G"),
                                                                    parse("1Gi")]


# -- arithmetic -----------------------------------------------------------------------------

# upstream (TestAdd, TestSub), with the resulting format derived from Add/Sub: the
# receiver's, unless the receiver is zero
@pytest.mark.parametrize("a, b, added, subtracted", [
    (dec(10, 0), dec(1, 1), (20, DSI), (0, DSI)),
    (dec(10, 0), dec(1, 0, BSI), (11, DSI), (9, DSI)),
    (dec(10, 0, BSI), dec(1, 0), (11, BSI), (9, BSI)),
    (new_quantity(0), dec(50, 0), (50, DSI), (-50, DSI)),
    (dec(50, 0), new_quantity(0), (50, DSI), (50, DSI)),
    (new_quantity(0), new_quantity(0), (0, DSI), (0, DSI)),
    (new_quantity(0, BSI), parse("1k"), (1000, DSI), (-1000, DSI)),
])
def test_add_and_sub(a, b, added, subtracted):
    total, difference = a.add(b), a.sub(b)
    assert total.cmp(new_quantity(added[0])) == 0 and total.format == added[1]
    assert difference.cmp(new_quantity(subtracted[0])) == 0
    assert difference.format == subtracted[1]
    assert a + b == total and a - b == difference


@pytest.mark.parametrize("text", ["100m", "1Gi"])
def test_adding_zero_preserves_suffix(text):  # upstream
    value, zero = parse(text), parse("0")
    assert value.add(zero).canonical() == text
    assert zero.add(value).canonical() == text
    assert value.sub(zero).canonical() == text
    assert zero.sub(value).canonical() == value.neg().canonical()


def test_add_sub_round_trip():  # upstream, seeded
    rng = random.Random(7)
    for k in range(-10, 11):
        total, order = new_quantity(0), []
        for _ in range(100):
            j = rng.getrandbits(63)
            order.append(j)
            total = total.add(new_scaled_quantity(j, k))
        for j in order:
            total = total.sub(new_scaled_quantity(j, k))
        assert total.is_zero()
    total, order = new_quantity(0), []
    for _ in range(100):
        j = rng.getrandbits(63)
        order.append(j)
        total = total.add(new_scaled_quantity(j, j % 20 - 10))
    for j in order:
        total = total.sub(new_scaled_quantity(j, j % 20 - 10))
    assert total.is_zero()


def test_arithmetic_overflow_moves_to_inf_dec():  # derived
    big = new_quantity(MAX).add(new_quantity(1))
    assert big.canonical() == "9223372036854775808"
    assert big.value() == MIN  # big.Int.Int64() of 2^63
    assert "(*inf.Dec)(0x" in big.go_syntax()
    # int64Amount.Sub adds -value, and -(-2^63) wraps to itself
    assert new_quantity(0).sub(new_quantity(MIN)).canonical() == "-9223372036854775808"
    assert new_quantity(MIN).neg().canonical() == "-9223372036854775808"
    assert dec(MIN, 0).neg().canonical() == "9223372036854775808"
    # quota sums of milli-cores and gigabytes stay exact
    used = parse("250m").add(parse("1.5")).add(parse("100m"))
    assert used.canonical() == "1850m" and used.milli_value() == 1850


def test_arithmetic_refuses_sums_too_long_to_compute():
    start = time.monotonic()
    with pytest.raises(QuantityError):
        parse("1e999999999").add(parse("1n"))
    assert time.monotonic() - start < 5


def test_neg():  # upstream (TestQuantityNeg, TestNeg)
    assert new_scaled_quantity(901, -2).neg().canonical() == "-9010m"
    assert dec(901, -2).neg().canonical() == "-9010m"
    assert new_quantity(10, BSI).neg().cmp(new_quantity(-10)) == 0
    assert dec(-10, 0, BSI).neg().cmp(new_quantity(10)) == 0
    assert Quantity().neg().is_zero() and new_quantity(0).neg().format == DSI


# -- JSON -----------------------------------------------------------------------------------

@pytest.mark.parametrize("value, expect", [
    # upstream (TestJSONWhitespace): strings are trimmed; numbers are their literal
    (" 1", "1"), ("1 ", "1"), (1, "1"), (10, "10"), (-1, "-1"), (" -1", "-1"),
    # derived
    ("\t500m\n", "500m"), ("\u00a01Gi\u3000", "1Gi"), (2, "2"), (0, "0"), (1.5, "1500m"),
    (0.1, "100m"), (1.0, "1"), (0.5, "500m"), (1e-7, "100e-9"), (1e21, "1e+21"),
    (123456789.0, "123456789"), (2 ** 70, "1180591620717411303424"), (-0.0, "0"),
])
def test_from_json(value, expect):
    assert from_json(value).canonical() == expect


def test_from_json_null_and_non_quantities():
    assert from_json(None).canonical() == "0" and from_json(None).format == ""
    for value in (True, False, {"a": 1}, [1], "", "  ", "1\x1c", float("inf")):
        with pytest.raises(QuantityError) as err:
            from_json(value)
        assert str(err.value) == ERR_FORMAT_WRONG


@pytest.mark.parametrize("value, text", [
    # what Go's encoding/json writes for a float64: how kubectl sends YAML numbers
    (0.1, "0.1"), (100.0, "100"), (0.000001, "0.000001"), (1e-7, "1e-7"),
    (1.5e-10, "1.5e-10"), (1e20, "100000000000000000000"), (1e21, "1e+21"),
    (1.2345e22, "1.2345e+22"), (1e100, "1e+100"), (-2.5, "-2.5"), (-0.0, "-0"),
    (123.456, "123.456"),
])
def test_json_float_text(value, text):
    assert q._json_float(value) == text


# -- how field errors show a Quantity -------------------------------------------------------

def test_go_syntax():
    assert parse("1.5").go_syntax() == (
        "resource.Quantity{i:resource.int64Amount{value:15, scale:-1}, "
        "d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:\"\", Format:\"DecimalSI\"}")
    assert parse("100m").go_syntax() == (
        "resource.Quantity{i:resource.int64Amount{value:100, scale:-3}, "
        "d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:\"100m\", Format:\"DecimalSI\"}")
    assert Quantity().go_syntax().endswith('s:"", Format:""}')
    text = parse("1.5Gi").go_syntax()
    assert text.startswith("resource.Quantity{i:resource.int64Amount{value:0, scale:0}, "
                           "d:resource.infDecAmount{Dec:(*inf.Dec)(0xc")
    assert text.endswith('s:"", Format:"BinarySI"}')
    # the canonical string computed later is not Go's stored s
    computed = parse("1000m")
    assert computed.canonical() == "1" and 's:""' in computed.go_syntax()


# -- size and speed -------------------------------------------------------------------------

def test_huge_inputs_stay_cheap():
    start = time.monotonic()
    assert canonical("1e-999999999") == "1e-9"
    assert canonical("0." + "0" * 20000 + "1") == "1n"
    assert canonical("9" * 10000) == "9" * 10000
    assert canonical("9" * 10000 + ".5") == "9" * 10000 + "500m"
    assert canonical("1" + "0" * 50000 + "Ki") == "9223372036854775807"
    assert canonical("1e2147483647") == "10e2147483646"  # int32 exponents wrap, as in Go
    assert parse("1e999999999").value() == 0
    zero = parse("0e2000000000")
    assert zero.value() == zero.milli_value() == 0 and zero.canonical() == "0"
    assert time.monotonic() - start < 10



# -- against an independent model ----------------------------------------------------------

_SUFFIX_VALUES = {"": 1, "n": Fraction(1, 10 ** 9), "u": Fraction(1, 10 ** 6),
                  "m": Fraction(1, 1000), "k": 10 ** 3, "M": 10 ** 6, "G": 10 ** 9,
                  "T": 10 ** 12, "P": 10 ** 15, "E": 10 ** 18}
_BINARY_VALUES = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40,
                  "Pi": 1 << 50, "Ei": 1 << 60}


def _model(text):
    """The value and Format ParseQuantity documents: exact, rounded up (away from zero) to
    nanos, binary quantities capped at 2^63-1 and below 1 shown as DecimalSI."""
    sign = -1 if text[0] == "-" else 1
    body = text.lstrip("+-")
    number = body.rstrip("eEinumkKMGTP+-0123456789")
    rest = body[len(number):]
    while rest and rest[0].isdigit():
        number, rest = number + rest[0], rest[1:]
    if rest in _BINARY_VALUES:
        value, fmt = Fraction(number) * _BINARY_VALUES[rest], BSI
    elif rest in _SUFFIX_VALUES:
        value, fmt = Fraction(number) * _SUFFIX_VALUES[rest], DSI
    else:
        value, fmt = Fraction(number) * Fraction(10) ** int(rest[1:]), DEXP
    nanos = -((-value * 10 ** 9) // 1)  # ceiling
    if fmt == BSI:
        nanos = min(nanos, MAX * 10 ** 9)
        if 0 < nanos < 10 ** 9:
            fmt = DSI
    return sign * nanos, fmt


def _random_quantity(rng):
    whole = "".join(rng.choice("0123456789") for _ in range(rng.choice([0, 1, 1, 2, 3, 5, 19])))
    fraction = "".join(rng.choice("0123456789") for _ in range(rng.choice([0, 1, 2, 3, 6, 12])))
    if not whole and not fraction:
        whole = "7"
    number = whole + ("." + fraction if fraction or rng.random() < 0.1 else "")
    suffix = rng.choice(list(_SUFFIX_VALUES) + list(_BINARY_VALUES) + ["e", "E"])
    if suffix in ("e", "E"):
        suffix += rng.choice(["", "+", "-"]) + str(rng.randint(0, 25))
    return rng.choice(["", "", "-", "+"]) + number + suffix


def test_against_model():
    rng = random.Random(1032)
    for _ in range(3000):
        text = _random_quantity(rng)
        got = parse(text)
        nanos, fmt = _model(text)
        assert got.cmp(new_decimal_quantity(nanos, 9, DSI)) == 0, text
        assert got.format == fmt, text
        out = got.canonical()
        assert canonical(out) == out, text
        if not reused(got):
            # both of Go's representations print the same
            assert out == new_decimal_quantity(nanos, 9, fmt).canonical(), text
        if abs(nanos) < 10 ** 30 or fmt != DSI:  # DecimalSI prints no suffix past E
            assert parse(out) == got, text
