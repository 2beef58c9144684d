"""Kubernetes' CEL libraries (``apiserver/pkg/cel/library``) and cel-go's strings (version 2)
and sets extensions, declared for cel-cpp's checker and implemented in Python for its runtime.

cel-cpp's own strings extension cannot be used: its ``indexOf`` and ``lastIndexOf`` would
have to share their declarations with the lists library's, which cel-cpp refuses.

cel-expr-python registers one Python implementation per runtime signature and has no type
parameters, so each function is declared twice: with typed overloads where the checker
needs them (``min`` of ``list(int)`` is an ``int``), and once with ``dyn``/``list(dyn)``
parameters for the runtime. Opaque types (``kubernetes.URL``, ``kubernetes.Quantity``,
``net.IP``, ``net.CIDR``) are protobuf messages holding a canonical value, so equality is
semantic as upstream's.

The comparison operators are redeclared with cel-go's cross-type numeric overloads
(``cel.CrossTypeNumericComparisons``, on in Kubernetes since 1.28), which cel-cpp's checker
lacks; its runtime already compares across numeric types.
"""

from __future__ import annotations

import ipaddress
import re
from fractions import Fraction
from urllib.parse import parse_qs, urlsplit

from kapiserver.apimachinery.field_errors import go_quote

MESSAGES = {"kubernetes": ("URL", "Quantity", "NamedFormat"), "net": ("IP", "CIDR")}


class LibraryError(Exception):
    """An evaluation error of a library function; its text is the CEL error's."""


# -- descriptors of the opaque types -------------------------------------------------------------

def library_files():
    """FileDescriptorProtos of the opaque types' messages."""
    from google.protobuf import descriptor_pb2

    F = descriptor_pb2.FieldDescriptorProto
    files = []
    for package, names in MESSAGES.items():
        proto = descriptor_pb2.FileDescriptorProto(name=f"kapiserver_{package}.proto",
                                                   package=package, syntax="proto3")
        for name in names:
            msg = proto.message_type.add(name=name)
            msg.field.add(name="value", number=1, label=F.LABEL_OPTIONAL, type=F.TYPE_STRING,
                          json_name="value")
        files.append(proto)
    return files


class Runtime:
    """The message classes of one descriptor pool, and the runtime implementations."""

    def __init__(self, pool):
        from google.protobuf import message_factory

        self.classes = {f"{p}.{n}": message_factory.GetMessageClass(
            pool.FindMessageTypeByName(f"{p}.{n}")) for p, names in MESSAGES.items()
            for n in names}

    def new(self, type_name: str, value: str):
        return self.classes[type_name](value=value)

    # -- lists --

    @staticmethod
    def is_sorted(items):
        return all(a <= b for a, b in zip(items, items[1:]))

    @staticmethod
    def list_sum(items):
        from datetime import timedelta

        if items and isinstance(items[0], timedelta):
            return _duration_proto(sum(items, timedelta()))
        return sum(items) if items else 0

    @staticmethod
    def list_min(items):
        if not items:
            raise LibraryError("min called on empty list")
        return _back(min(items))

    @staticmethod
    def list_max(items):
        if not items:
            raise LibraryError("max called on empty list")
        return _back(max(items))

    @staticmethod
    def index_of(items, value):
        for i, item in enumerate(items):
            if _equal(item, value):
                return i
        return -1

    @staticmethod
    def last_index_of(items, value):
        for i in range(len(items) - 1, -1, -1):
            if _equal(items[i], value):
                return i
        return -1

    # -- strings (cel-go's strings extension, version 2) --

    @staticmethod
    def char_at(text, index):
        if index < 0 or index > len(text):
            raise LibraryError(f"index out of range: {index}")
        return text[index:index + 1]

    @staticmethod
    def str_index_of(text, sub, start=0):
        if start < 0 or start > len(text):
            raise LibraryError(f"index out of range: {start}")
        return text.find(sub, start)

    @staticmethod
    def str_last_index_of(text, sub, end=None):
        if end is None:
            return text.rfind(sub)
        if end < 0 or end > len(text):
            raise LibraryError(f"index out of range: {end}")
        return text.rfind(sub, 0, end + len(sub))

    @staticmethod
    def lower_ascii(text):
        return "".join(c.lower() if c.isascii() else c for c in text)

    @staticmethod
    def upper_ascii(text):
        return "".join(c.upper() if c.isascii() else c for c in text)

    @staticmethod
    def replace(text, old, new, limit=-1):
        return text.replace(old, new, limit if limit >= 0 else -1) if limit != 0 else text

    @staticmethod
    def split(text, sep, limit=-1):
        if limit == 0:
            return []
        if sep == "":
            chars = list(text)
            if 0 < limit < len(chars):
                return chars[:limit - 1] + ["".join(chars[limit - 1:])]
            return chars
        return text.split(sep, limit - 1 if limit > 0 else -1)

    @staticmethod
    def substring(text, start, end=None):
        end = len(text) if end is None else end
        if start < 0 or start > len(text):
            raise LibraryError(f"index out of range: {start}")
        if end < 0 or end > len(text):
            raise LibraryError(f"index out of range: {end}")
        if start > end:
            raise LibraryError(f"invalid substring range. start: {start}, end: {end}")
        return text[start:end]

    @staticmethod
    def trim(text):
        return text.strip(" \t\n\v\f\r\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004"
                          "\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f"
                          "\u205f\u3000")

    @staticmethod
    def join(items, sep=""):
        return sep.join(items)

    @staticmethod
    def quote(text):
        from kapiserver.apimachinery.field_errors import go_quote

        return go_quote(text)

    @staticmethod
    def format(text, args):
        return format_string(text, list(args))

    # -- sets --

    @staticmethod
    def sets_contains(a, b):
        return all(any(_equal(x, y) for y in a) for x in b)

    @staticmethod
    def sets_equivalent(a, b):
        return Runtime.sets_contains(a, b) and Runtime.sets_contains(b, a)

    @staticmethod
    def sets_intersects(a, b):
        return any(any(_equal(x, y) for y in a) for x in b)

    # -- regex --

    @staticmethod
    def find(text, pattern):
        m = _regex(pattern).search(text)
        return m.group(0) if m else ""

    @staticmethod
    def find_all(text, pattern, limit=-1):
        compiled = _regex(pattern)
        found = [m.group(0) for m in compiled.finditer(text)]
        return found if limit < 0 else found[:limit]

    # -- URLs --

    def url(self, text):
        _parse_url(text)
        return self.new("kubernetes.URL", text)

    @staticmethod
    def is_url(text):
        try:
            _parse_url(text)
        except LibraryError:
            return False
        return True

    @staticmethod
    def get_scheme(u):
        return _parse_url(u.value).scheme

    @staticmethod
    def get_host(u):
        return _parse_url(u.value).netloc.rpartition("@")[2]

    @staticmethod
    def get_hostname(u):
        host = _parse_url(u.value).netloc.rpartition("@")[2]
        if host.startswith("["):
            return host[1:host.find("]")]
        return host.rpartition(":")[0] if ":" in host else host

    @staticmethod
    def get_port(u):
        host = _parse_url(u.value).netloc.rpartition("@")[2]
        if host.startswith("["):
            rest = host[host.find("]") + 1:]
            return rest[1:] if rest.startswith(":") else ""
        return host.rpartition(":")[2] if ":" in host else ""

    @staticmethod
    def get_escaped_path(u):
        return _parse_url(u.value).path

    @staticmethod
    def get_query(u):
        return {k: v for k, v in parse_qs(_parse_url(u.value).query,
                                         keep_blank_values=True).items()}

    # -- quantities --

    def quantity(self, text):
        return self.new("kubernetes.Quantity", _fraction_text(parse_quantity(text)))

    @staticmethod
    def is_quantity(text):
        try:
            parse_quantity(text)
        except LibraryError:
            return False
        return True

    @staticmethod
    def q_sign(q):
        value = _q(q)
        return (value > 0) - (value < 0)

    @staticmethod
    def q_is_integer(q):
        value = _q(q)
        return value.denominator == 1 and -(1 << 63) <= value.numerator < (1 << 63)

    @staticmethod
    def q_as_integer(q):
        value = _q(q)
        if value.denominator != 1 or not -(1 << 63) <= value.numerator < (1 << 63):
            raise LibraryError("cannot convert value to integer")
        return value.numerator

    @staticmethod
    def q_as_float(q):
        return float(_q(q))

    def q_add(self, q, other):
        value = _q(q) + (_q(other) if not isinstance(other, int) else other)
        return self.new("kubernetes.Quantity", _fraction_text(value))

    def q_sub(self, q, other):
        value = _q(q) - (_q(other) if not isinstance(other, int) else other)
        return self.new("kubernetes.Quantity", _fraction_text(value))

    @staticmethod
    def q_greater(q, other):
        return _q(q) > _q(other)

    @staticmethod
    def q_less(q, other):
        return _q(q) < _q(other)

    @staticmethod
    def q_compare(q, other):
        a, b = _q(q), _q(other)
        return (a > b) - (a < b)

    # -- IPs and CIDRs --

    def ip(self, text):
        return self.new("net.IP", str(_parse_ip(text)))

    @staticmethod
    def is_ip(text):
        try:
            _parse_ip(text)
        except LibraryError:
            return False
        return True

    @staticmethod
    def ip_is_canonical(text):
        return str(_parse_ip(text)) == text

    @staticmethod
    def ip_family(ip):
        return ipaddress.ip_address(ip.value).version

    @staticmethod
    def ip_is_unspecified(ip):
        return ipaddress.ip_address(ip.value).is_unspecified

    @staticmethod
    def ip_is_loopback(ip):
        return ipaddress.ip_address(ip.value).is_loopback

    @staticmethod
    def ip_is_link_local_multicast(ip):
        addr = ipaddress.ip_address(ip.value)
        if addr.version == 4:
            return addr in ipaddress.ip_network("224.0.0.0/24")
        return addr in ipaddress.ip_network("ff02::/16")

    @staticmethod
    def ip_is_link_local_unicast(ip):
        return ipaddress.ip_address(ip.value).is_link_local

    @staticmethod
    def ip_is_global_unicast(ip):
        # Go's IsGlobalUnicast: not unspecified, loopback, link-local or multicast, and
        # not the IPv4 broadcast address (private addresses are global unicast in Go).
        addr = ipaddress.ip_address(ip.value)
        return not (addr.is_unspecified or addr.is_loopback or addr.is_link_local
                    or addr.is_multicast or str(addr) == "255.255.255.255")

    def cidr(self, text):
        return self.new("net.CIDR", str(_parse_cidr(text)[0]))

    @staticmethod
    def is_cidr(text):
        try:
            _parse_cidr(text)
        except LibraryError:
            return False
        return True

    @staticmethod
    def opaque_to_string(value):
        """``string(ip)`` and ``string(cidr)``: the canonical text the message holds."""
        return value.value

    def cidr_ip(self, c):
        return self.new("net.IP", c.value.split("/")[0])

    def cidr_masked(self, c):
        _, network = _parse_cidr(c.value)
        return self.new("net.CIDR", str(network))

    @staticmethod
    def cidr_prefix_length(c):
        return int(c.value.split("/")[1])

    @staticmethod
    def cidr_contains_ip(c, other):
        text = other if isinstance(other, str) else other.value
        addr = _parse_ip(text)
        _, network = _parse_cidr(c.value)
        return addr.version == network.version and addr in network

    @staticmethod
    def cidr_contains_cidr(c, other):
        text = other if isinstance(other, str) else other.value
        _, inner = _parse_cidr(text)
        _, network = _parse_cidr(c.value)
        return inner.version == network.version and inner.subnet_of(network)


_VERB = re.compile(r"%(?:\.(\d+))?([a-zA-Z%])")


def _format_value(value) -> str:
    """How ``%s`` (and ``string()``) shows a value."""
    from datetime import datetime, timedelta

    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float):
        from kapiserver.apimachinery.field_errors import go_float

        return go_float(value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, list):
        return "[" + ", ".join(_format_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_format_value(k)}: {_format_value(v)}"
                               for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))) + "}"
    if isinstance(value, timedelta):
        return f"{value.total_seconds():g}s"
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(value)


def format_string(text: str, args: list) -> str:
    """cel-go's ``string.format(list)`` for the verbs s, d, f, e, x, X, o, b."""
    out, pos, index = [], 0, 0
    for m in _VERB.finditer(text):
        out.append(text[pos:m.start()])
        pos = m.end()
        precision, verb = m.group(1), m.group(2)
        if verb == "%":
            out.append("%")
            continue
        if index >= len(args):
            raise LibraryError(f"index {index} out of range")
        value = args[index]
        index += 1
        if verb == "s":
            out.append(_format_value(value))
        elif verb == "d":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise LibraryError("error during formatting: decimal clause can only be used "
                                   "on integers, was given " + type(value).__name__)
            out.append(str(int(value)) if isinstance(value, int) else
                       ("NaN" if value != value else "Infinity" if value > 0 else "-Infinity"))
        elif verb in "fe":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise LibraryError(f"error during formatting: {'fixed-point' if verb == 'f' else 'scientific'} "
                                   "clause can only be used on doubles")
            digits = int(precision) if precision is not None else 6
            out.append(f"{float(value):.{digits}{verb}}")
        elif verb in "xXob":
            if isinstance(value, (str, bytes, bytearray)) and verb in "xX":
                data = value.encode() if isinstance(value, str) else bytes(value)
                hexed = data.hex()
                out.append(hexed.upper() if verb == "X" else hexed)
            elif isinstance(value, int) and not isinstance(value, bool):
                code = {"x": "x", "X": "X", "o": "o", "b": "b"}[verb]
                out.append(format(value, code))
            else:
                raise LibraryError("error during formatting: only integers, byte buffers, and "
                                   "strings can be formatted as hex")
        else:
            raise LibraryError(f"could not parse formatting clause: unrecognized formatting "
                               f"clause \"{verb}\"")
    out.append(text[pos:])
    return "".join(out)


def _back(value):
    """A Python value returned to cel-cpp (times travel as protobuf messages)."""
    from datetime import datetime, timedelta

    if isinstance(value, timedelta):
        return _duration_proto(value)
    if isinstance(value, datetime):
        from google.protobuf import timestamp_pb2

        stamp = timestamp_pb2.Timestamp()
        stamp.FromDatetime(value)
        return stamp
    return value


def _duration_proto(value):
    from google.protobuf import duration_pb2

    d = duration_pb2.Duration()
    d.FromTimedelta(value)
    return d


def _equal(a, b) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


def _regex(pattern: str):
    from ..schema.validation import _compile

    compiled = _compile(pattern)
    if compiled is None:
        raise LibraryError(f"error parsing regexp: {pattern}")
    return compiled


def _parse_url(text: str):
    """``url.ParseRequestURI``: an absolute URI or an absolute path."""
    error = LibraryError("URL parse error during conversion from string: parse "
                         f"{go_quote(text)}: invalid URI for request")
    if not text or any(c in text for c in " \t\r\n"):
        raise error
    try:
        parts = urlsplit(text)
    except ValueError:
        raise error from None
    if not parts.scheme and not text.startswith("/"):
        raise error
    if parts.scheme and not re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", parts.scheme):
        raise error
    return parts


def parse_quantity(text: str) -> Fraction:
    """The value of a ``resource.Quantity`` string (``resource.ParseQuantity``)."""
    from kapiserver.apimachinery.quantity import QuantityError, parse

    try:
        return parse(text or "").as_fraction()
    except QuantityError as err:
        raise LibraryError(str(err)) from None


def _fraction_text(value: Fraction) -> str:
    return f"{value.numerator}/{value.denominator}"


def _q(q) -> Fraction:
    return Fraction(q.value)


def _parse_ip(text: str):
    if "%" in text:
        raise LibraryError(f"IP address {text!r} with zone value is not allowed")
    try:
        addr = ipaddress.ip_address(text)
    except ValueError:
        raise LibraryError(f"IP Address {text!r} parse error during conversion from string: "
                           f"ParseAddr({text!r}): unable to parse IP") from None
    if addr.version == 6 and addr.ipv4_mapped is not None:
        raise LibraryError(f"IPv4-mapped IPv6 address {text!r} is not allowed")
    return addr


def _parse_cidr(text: str):
    """(the prefix as written, its network), as ``netip.ParsePrefix``."""
    addr_text, slash, bits = text.partition("/")
    if not slash or not bits.isdigit():
        raise LibraryError(f"network address parse error during conversion from string: "
                           f"netip.ParsePrefix({text!r}): no '/'")
    addr = _parse_ip(addr_text)
    try:
        interface = ipaddress.ip_interface(f"{addr}/{int(bits)}")
    except ValueError:
        raise LibraryError(f"network address parse error during conversion from string: "
                           f"netip.ParsePrefix({text!r}): bad bits") from None
    return interface, interface.network
