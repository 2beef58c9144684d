"""The string formats CRD schemas validate, as kube-openapi's ``strfmt.Default`` checks them.

Only the formats apiextensions keeps (``supportedVersionedFormats`` in
``pkg/apiserver/validation/formats.go``) are here; the converter strips every other format
(``int32``, ``double``, ...) before validation, so :func:`supported_format` returns ``""``
for them. Names are normalised as strfmt does: dashes removed, case kept.
"""

from __future__ import annotations

import re
from datetime import date

from kapiserver.apimachinery.validation import parse_ip_sloppy


def _matcher(pattern: str, flags: int = 0):
    compiled = re.compile(pattern, flags)
    return lambda value: compiled.fullmatch(value) is not None


# -- date and time: strfmt's IsDate / IsDateTime --------------------------------------------

_FULL_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})", re.ASCII)
# strfmt.DateTimePattern; its "." matches any character, as in Go.
_TIME = re.compile(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$",
                   re.ASCII)


def is_date(value: str) -> bool:
    """``time.Parse("2006-01-02", value)`` succeeds."""
    m = _FULL_DATE.fullmatch(value)
    if not m:
        return False
    try:
        date(int(m[1]) or 1, int(m[2]), int(m[3]))  # year 0000 parses in Go
    except ValueError:
        return False
    return True


def is_date_time(value: str) -> bool:
    """strfmt's ``IsDateTime``: a full date, "t", and a time checked by pattern."""
    if len(value) < 4:
        return False
    parts = value.lower().split("t")
    if len(parts) < 2 or not is_date(parts[0]):
        return False
    m = _TIME.search(parts[1])
    if not m:
        return False
    return m[1] <= "23" and m[2] <= "59" and m[3] <= "59"


# -- duration: strfmt.ParseDuration -----------------------------------------------------------

_GO_DURATION = re.compile(r"[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+|[-+]?0",
                          re.ASCII)
_LOOSE_DURATION = re.compile(r"(\d+)\s*([A-Za-zµ]+)")
_DURATION_UNITS = frozenset((
    "ns", "nanosecond", "nanoseconds", "us", "µs", "microsecond", "microseconds",
    "mcs", "ms", "millisecond", "milliseconds", "s", "sec", "second", "seconds",
    "m", "min", "minute", "minutes", "h", "hr", "hour", "hours",
    "d", "day", "days", "w", "wk", "week", "weeks"))


def is_duration(value: str) -> bool:
    """``time.ParseDuration`` or strfmt's looser ``"3 days"`` form (found anywhere)."""
    if _GO_DURATION.fullmatch(value):
        return True
    return any(unit.lower() in _DURATION_UNITS for _, unit in _LOOSE_DURATION.findall(value))


# -- network ---------------------------------------------------------------------------------

def is_ipv4(value: str) -> bool:
    return parse_ip_sloppy(value) is not None and "." in value


def is_ipv6(value: str) -> bool:
    return parse_ip_sloppy(value) is not None and ":" in value


def is_cidr(value: str) -> bool:
    """``net.ParseCIDR`` (sloppy about IPv4 leading zeros, as netutils is)."""
    addr, sep, bits = value.partition("/")
    if not sep or not bits.isascii() or not bits.isdigit() or len(bits) > 3:
        return False
    ip = parse_ip_sloppy(addr)
    if ip is None:
        return False
    width = 128 if ":" in addr else 32
    return int(bits) <= width


_MAC_COLON = re.compile(r"[0-9A-Fa-f]{2}(?:([:-])[0-9A-Fa-f]{2})+")
_MAC_DOT = re.compile(r"[0-9A-Fa-f]{4}(?:\.[0-9A-Fa-f]{4})+")


def is_mac(value: str) -> bool:
    """``net.ParseMAC``: EUI-48, EUI-64 or 20-octet InfiniBand, by ``:``, ``-`` or ``.``."""
    if _MAC_COLON.fullmatch(value):
        if len(set(re.findall(r"[:-]", value))) != 1:
            return False
        return (len(value) + 1) // 3 in (6, 8, 20)
    if _MAC_DOT.fullmatch(value):
        return (len(value) + 1) // 5 * 2 in (6, 8, 20)
    return False


# strfmt.HostnamePattern; \p{L} and \p{S} are read as any non-ASCII character here.
_HOSTNAME = re.compile(
    r"(?:[a-zA-Z0-9]|[^\x00-\x7f])(?:-?(?:[a-zA-Z0-9]|[^\x00-\x7f]){0,62})?"
    r"|(?:(?:[a-zA-Z0-9]|[^\x00-\x7f])(?:(?:[a-zA-Z0-9-]|[^\x00-\x7f]){0,61}"
    r"(?:[a-zA-Z0-9]|[^\x00-\x7f]))?\.)+(?:[a-zA-Z]|[^\x00-\x7f]){2,63}")


def is_hostname(value: str) -> bool:
    """strfmt's ``IsHostname``: its RFC 1034 pattern, at most 255 bytes, labels of at most
    63 bytes."""
    if _HOSTNAME.fullmatch(value) is None or len(value.encode("utf-8", "replace")) > 255:
        return False
    return all(len(p.encode("utf-8", "replace")) <= 63 for p in value.split("."))


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")


def is_uri(value: str) -> bool:
    """``url.ParseRequestURI``: an absolute URI or an absolute path, no control characters."""
    if not value or any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
        return False
    if value.startswith("/"):
        return True
    m = _SCHEME.match(value)
    if not m:
        return False
    rest = value[m.end():]
    if rest.startswith("//"):
        host = re.split(r"[/?#]", rest[2:], maxsplit=1)[0].rpartition("@")[2]
        return " " not in host
    return True


_EMAIL_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_EMAIL_ADDR = (rf"(?:{_EMAIL_ATOM}(?:\.{_EMAIL_ATOM})*|\"[^\"\\]*\")"
               rf"@{_EMAIL_ATOM}(?:\.{_EMAIL_ATOM})*")
_EMAIL = re.compile(rf"\s*(?:{_EMAIL_ADDR}|[^<>]*<{_EMAIL_ADDR}>)\s*")


def is_email(value: str) -> bool:
    """``mail.ParseAddress`` finds an address (a bare one or ``Name <addr>``)."""
    return _EMAIL.fullmatch(value) is not None


# -- identifiers and codes (govalidator) ------------------------------------------------------

_UUID = r"[0-9a-f]{8}-?[0-9a-f]{4}-?%s-?%s-?[0-9a-f]{12}"


def _isbn10(value: str) -> bool:
    if not re.fullmatch(r"[0-9]{9}[0-9X]", value):
        return False
    total = sum((i + 1) * (10 if c == "X" else int(c)) for i, c in enumerate(value))
    return total % 11 == 0


def _isbn13(value: str) -> bool:
    if not re.fullmatch(r"[0-9]{13}", value):
        return False
    total = sum(int(c) * (1 if i % 2 == 0 else 3) for i, c in enumerate(value))
    return total % 10 == 0


def _isbn_digits(value: str) -> str:
    return re.sub(r"[\s-]", "", value)


_CREDIT_CARD = re.compile(
    r"(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}"
    r"|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})")


def is_credit_card(value: str) -> bool:
    """govalidator's ``IsCreditCard``: non-digits dropped, then the pattern and Luhn's sum."""
    digits = re.sub(r"[^0-9]+", "", value)
    if not _CREDIT_CARD.fullmatch(digits):
        return False
    total, double = 0, False
    for c in reversed(digits):
        d = int(c)
        if double:
            d *= 2
            if d > 9:
                d -= 9
        total += d
        double = not double
    return total % 10 == 0


def is_ssn(value: str) -> bool:
    return len(value) == 11 and re.fullmatch(r"\d{3}[- ]?\d{2}[- ]?\d{4}", value) is not None


_RGB_PART = r"\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*"

#: format name (normalised) -> checker of a string value.
FORMAT_CHECKERS = {
    "bsonobjectid": _matcher(r"[0-9a-fA-F]{24}"),
    "uri": is_uri,
    "email": is_email,
    "hostname": is_hostname,
    "ipv4": is_ipv4,
    "ipv6": is_ipv6,
    "cidr": is_cidr,
    "mac": is_mac,
    "uuid": _matcher(_UUID % ("[0-9a-f]{4}", "[0-9a-f]{4}"), re.I),
    "uuid3": _matcher(_UUID % ("3[0-9a-f]{3}", "[0-9a-f]{4}"), re.I),
    "uuid4": _matcher(_UUID % ("4[0-9a-f]{3}", "[89ab][0-9a-f]{3}"), re.I),
    "uuid5": _matcher(_UUID % ("5[0-9a-f]{3}", "[89ab][0-9a-f]{3}"), re.I),
    "isbn": lambda v: _isbn10(_isbn_digits(v)) or _isbn13(_isbn_digits(v)),
    "isbn10": lambda v: _isbn10(_isbn_digits(v)),
    "isbn13": lambda v: _isbn13(_isbn_digits(v)),
    "creditcard": is_credit_card,
    "ssn": is_ssn,
    "hexcolor": _matcher(r"#?(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})"),
    "rgbcolor": _matcher(rf"rgb\({_RGB_PART},{_RGB_PART},{_RGB_PART}\)"),
    # govalidator's IsBase64 pattern: padded, at least one quantum, no line breaks.
    "byte": _matcher(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|"
                     r"[A-Za-z0-9+/]{4})"),
    "password": lambda v: True,
    "date": is_date,
    "duration": is_duration,
    "datetime": is_date_time,
}


def supported_format(fmt: str | None) -> str:
    """The format as validation sees it: ``fmt`` when supported, else ``""`` (stripped)."""
    if not fmt:
        return ""
    return fmt if fmt.replace("-", "") in FORMAT_CHECKERS else ""


def check_format(fmt: str, value: str) -> bool:
    """Whether ``value`` is valid in the (supported) format ``fmt``."""
    return FORMAT_CHECKERS[fmt.replace("-", "")](value)
