"""Upstream's validators and object-metadata validation, with upstream's exact messages.

Ports Kubernetes 1.32's ``k8s.io/apimachinery/pkg/util/validation`` (``IsQualifiedName``,
``IsDNS1123Label`` & co., each returning a list of message strings),
``pkg/api/validation`` (``ValidateObjectMeta``, ``ValidateObjectMetaUpdate``, name
functions), ``pkg/apis/meta/v1/validation`` (labels, managed fields) and the finalizer
rules of ``pkg/apis/core/validation`` (an error for core types) and of the custom resource
strategy (a warning for custom resources).

Lengths are counted in UTF-8 bytes and patterns anchored at both ends, as Go's ``len`` and
``regexp`` ``^...$`` do. Metadata arrives as the decoded JSON ``dict``.
"""

from __future__ import annotations

import ipaddress
import re
from datetime import datetime, timezone
from typing import Any, Callable

from .field_errors import FieldError, FieldPath, GoValue, go_quote, go_string_slice

NameFunc = Callable[[str, bool], list]


def _byte_len(value: str) -> int:
    try:
        return len(value.encode("utf-8", "surrogateescape"))
    except UnicodeEncodeError:
        return len(value.encode("utf-8", "surrogatepass"))


def _matches(pattern: re.Pattern, value: str) -> bool:
    # fullmatch, not "$": Python's "$" also matches before a trailing newline.
    return pattern.fullmatch(value) is not None


# -- message helpers ------------------------------------------------------------------------

def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """``RegexError``: ``msg (e.g. 'a',  or 'b', regex used for validation is 'fmt')``."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    msg += " (e.g. "
    for i, example in enumerate(examples):
        if i > 0:
            msg += " or "
        msg += f"'{example}', "
    return msg + f"regex used for validation is '{fmt}')"


def max_len_error(length: int) -> str:
    """``MaxLenError``."""
    return f"must be no more than {length} characters"


def empty_error() -> str:
    """``EmptyError``."""
    return "must be non-empty"


def inclusive_range_error(lo: int, hi: int) -> str:
    """``InclusiveRangeError``."""
    return f"must be between {lo} and {hi}, inclusive"


def _prefix_each(msgs: list[str], prefix: str) -> list[str]:
    return [prefix + m for m in msgs]


def _has_chdir_prefix(value: str) -> list[str]:
    if value == ".":
        return ["must not be '.'"]
    if value == "..":
        return ["must not be '..'"]
    if value.startswith(".."):
        return ["must not start with '..'"]
    return []


# -- string formats (util/validation) -------------------------------------------------------

QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
QUALIFIED_NAME_ERR_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must "
                          "start and end with an alphanumeric character")
QUALIFIED_NAME_MAX_LENGTH = 63
LABEL_VALUE_FMT = f"({QUALIFIED_NAME_FMT})?"
LABEL_VALUE_ERR_MSG = ("a valid label must be an empty string or consist of alphanumeric "
                       "characters, '-', '_' or '.', and must start and end with an "
                       "alphanumeric character")
LABEL_VALUE_MAX_LENGTH = 63
DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_LABEL_ERR_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric "
                         "characters or '-', and must start and end with an alphanumeric "
                         "character")
DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + "(\\." + DNS1123_LABEL_FMT + ")*"
DNS1123_SUBDOMAIN_ERR_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case "
                             "alphanumeric characters, '-' or '.', and must start and end with "
                             "an alphanumeric character")
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
DNS1035_LABEL_ERR_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters "
                         "or '-', start with an alphabetic character, and end with an "
                         "alphanumeric character")
DNS1035_LABEL_MAX_LENGTH = 63
WILDCARD_DNS1123_SUBDOMAIN_FMT = "\\*\\." + DNS1123_SUBDOMAIN_FMT
WILDCARD_DNS1123_SUBDOMAIN_ERR_MSG = (
    "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, "
    "which must consist of lower case alphanumeric characters, '-' or '.' and end with an "
    "alphanumeric character")
C_IDENTIFIER_FMT = "[A-Za-z_][A-Za-z0-9_]*"
C_IDENTIFIER_ERR_MSG = ("a valid C identifier must start with alphabetic character or '_', "
                        "followed by a string of alphanumeric characters or '_'")
PERCENT_FMT = "[0-9]+%"
PERCENT_ERR_MSG = "a valid percent string must be a numeric string followed by an ending '%'"
HTTP_HEADER_NAME_FMT = "[-A-Za-z0-9]+"
HTTP_HEADER_NAME_ERR_MSG = "a valid HTTP header must consist of alphanumeric characters or '-'"
ENV_VAR_NAME_FMT = "[-._a-zA-Z][-._a-zA-Z0-9]*"
ENV_VAR_NAME_ERR_MSG = ("a valid environment variable name must consist of alphabetic "
                        "characters, digits, '_', '-', or '.', and must not start with a digit")
CONFIG_MAP_KEY_FMT = "[-._a-zA-Z0-9]+"
CONFIG_MAP_KEY_ERR_MSG = ("a valid config key must consist of alphanumeric characters, '-', '_' "
                          "or '.'")

_QUALIFIED_NAME = re.compile(QUALIFIED_NAME_FMT)
_LABEL_VALUE = re.compile(LABEL_VALUE_FMT)
_DNS1123_LABEL = re.compile(DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN = re.compile(DNS1123_SUBDOMAIN_FMT)
_DNS1035_LABEL = re.compile(DNS1035_LABEL_FMT)
_WILDCARD_DNS1123_SUBDOMAIN = re.compile(WILDCARD_DNS1123_SUBDOMAIN_FMT)
_C_IDENTIFIER = re.compile(C_IDENTIFIER_FMT)
_PERCENT = re.compile(PERCENT_FMT)
_HTTP_HEADER_NAME = re.compile(HTTP_HEADER_NAME_FMT)
_ENV_VAR_NAME = re.compile(ENV_VAR_NAME_FMT)
_CONFIG_MAP_KEY = re.compile(CONFIG_MAP_KEY_FMT)
_PORT_NAME_CHARSET = re.compile("[-a-z0-9]+")


def is_qualified_name(value: str) -> list[str]:
    """``IsQualifiedName``: an optional DNS subdomain prefix and '/', then a name part."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part " + empty_error())
        else:
            errs.extend(_prefix_each(is_dns1123_subdomain(prefix), "prefix part "))
    else:
        return ["a qualified name " + regex_error(QUALIFIED_NAME_ERR_MSG, QUALIFIED_NAME_FMT,
                                                  "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part " + empty_error())
    elif _byte_len(name) > QUALIFIED_NAME_MAX_LENGTH:
        errs.append("name part " + max_len_error(QUALIFIED_NAME_MAX_LENGTH))
    if not _matches(_QUALIFIED_NAME, name):
        errs.append("name part " + regex_error(QUALIFIED_NAME_ERR_MSG, QUALIFIED_NAME_FMT,
                                               "MyName", "my.name", "123-abc"))
    return errs


def is_valid_label_value(value: str) -> list[str]:
    """``IsValidLabelValue``."""
    errs = []
    if _byte_len(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(max_len_error(LABEL_VALUE_MAX_LENGTH))
    if not _matches(_LABEL_VALUE, value):
        errs.append(regex_error(LABEL_VALUE_ERR_MSG, LABEL_VALUE_FMT,
                                "MyValue", "my_value", "12345"))
    return errs


def is_dns1123_label(value: str) -> list[str]:
    """``IsDNS1123Label``."""
    errs = []
    if _byte_len(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _matches(_DNS1123_LABEL, value):
        if _matches(_DNS1123_SUBDOMAIN, value):
            # A valid subdomain but not a label: with the length checked, it must be dots.
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(DNS1123_LABEL_ERR_MSG, DNS1123_LABEL_FMT,
                                    "my-name", "123-abc"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    """``IsDNS1123Subdomain``."""
    errs = []
    if _byte_len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _matches(_DNS1123_SUBDOMAIN, value):
        errs.append(regex_error(DNS1123_SUBDOMAIN_ERR_MSG, DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_dns1035_label(value: str) -> list[str]:
    """``IsDNS1035Label``."""
    errs = []
    if _byte_len(value) > DNS1035_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1035_LABEL_MAX_LENGTH))
    if not _matches(_DNS1035_LABEL, value):
        errs.append(regex_error(DNS1035_LABEL_ERR_MSG, DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


def is_wildcard_dns1123_subdomain(value: str) -> list[str]:
    """``IsWildcardDNS1123Subdomain``: ``*.example.com``."""
    errs = []
    if _byte_len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _matches(_WILDCARD_DNS1123_SUBDOMAIN, value):
        errs.append(regex_error(WILDCARD_DNS1123_SUBDOMAIN_ERR_MSG,
                                WILDCARD_DNS1123_SUBDOMAIN_FMT, "*.example.com"))
    return errs


def is_c_identifier(value: str) -> list[str]:
    """``IsCIdentifier`` (format only, not length)."""
    if not _matches(_C_IDENTIFIER, value):
        return [regex_error(C_IDENTIFIER_ERR_MSG, C_IDENTIFIER_FMT,
                            "my_name", "MY_NAME", "MyName")]
    return []


def is_valid_port_num(port: int) -> list[str]:
    """``IsValidPortNum``: 1 to 65535."""
    return [] if 1 <= port <= 65535 else [inclusive_range_error(1, 65535)]


def is_in_range(value: int, lo: int, hi: int) -> list[str]:
    """``IsInRange`` (inclusive)."""
    return [] if lo <= value <= hi else [inclusive_range_error(lo, hi)]


def is_valid_port_name(port: str) -> list[str]:
    """``IsValidPortName`` (IANA_SVC_NAME)."""
    errs = []
    if _byte_len(port) > 15:
        errs.append(max_len_error(15))
    if not _matches(_PORT_NAME_CHARSET, port):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search("[a-z]", port):
        errs.append("must contain at least one letter (a-z)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def is_valid_percent(percent: str) -> list[str]:
    """``IsValidPercent``: ``93%``."""
    if not _matches(_PERCENT, percent):
        return [regex_error(PERCENT_ERR_MSG, PERCENT_FMT, "1%", "93%")]
    return []


def is_http_header_name(value: str) -> list[str]:
    """``IsHTTPHeaderName``."""
    if not _matches(_HTTP_HEADER_NAME, value):
        return [regex_error(HTTP_HEADER_NAME_ERR_MSG, HTTP_HEADER_NAME_FMT, "X-Header-Name")]
    return []


def is_env_var_name(value: str) -> list[str]:
    """``IsEnvVarName``."""
    errs = []
    if not _matches(_ENV_VAR_NAME, value):
        errs.append(regex_error(ENV_VAR_NAME_ERR_MSG, ENV_VAR_NAME_FMT,
                                "my.env-name", "MY_ENV.NAME", "MyEnvName1"))
    return errs + _has_chdir_prefix(value)


def is_config_map_key(value: str) -> list[str]:
    """``IsConfigMapKey``: a key of a ConfigMap's or Secret's data."""
    errs = []
    if _byte_len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _matches(_CONFIG_MAP_KEY, value):
        errs.append(regex_error(CONFIG_MAP_KEY_ERR_MSG, CONFIG_MAP_KEY_FMT,
                                "key.name", "KEY_NAME", "key-name"))
    return errs + _has_chdir_prefix(value)


def is_fully_qualified_name(path: FieldPath | None, name: str) -> list[FieldError]:
    """``IsFullyQualifiedName``: a DNS subdomain of at least three segments."""
    if not name:
        return [FieldError.required(path, "")]
    if errs := is_dns1123_subdomain(name):
        return [FieldError.invalid(path, name, ",".join(errs))]
    if len(name.split(".")) < 3:
        return [FieldError.invalid(path, name, "should be a domain with at least three "
                                               "segments separated by dots")]
    return []


def is_fully_qualified_domain_name(path: FieldPath | None, name: str) -> list[FieldError]:
    """``IsFullyQualifiedDomainName``: two segments or more; one trailing '.' allowed."""
    if not name:
        return [FieldError.required(path, "")]
    name = name[:-1] if name.endswith(".") else name
    if errs := is_dns1123_subdomain(name):
        return [FieldError.invalid(path, name, ",".join(errs))]
    if len(name.split(".")) < 2:
        return [FieldError.invalid(path, name, "should be a domain with at least two "
                                               "segments separated by dots")]
    for label in name.split("."):
        if errs := is_dns1123_label(label):
            return [FieldError.invalid(path, label, ",".join(errs))]
    return []


# -- IP addresses (k8s.io/utils/net's "sloppy" parsers) -----------------------------------

def _parse_ipv4_sloppy(value: str) -> ipaddress.IPv4Address | None:
    # Go 1.16's parser, kept by ParseIPSloppy: octets may carry leading zeros ("010" is 10).
    parts = value.split(".")
    if len(parts) != 4 or not all(p.isascii() and p.isdigit() for p in parts):
        return None
    octets = [int(p) for p in parts]
    if any(o > 255 for o in octets):
        return None
    return ipaddress.IPv4Address(bytes(octets))


def parse_ip_sloppy(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """``netutils.ParseIPSloppy``; an IPv4-mapped IPv6 address comes back as IPv4."""
    if "%" in value or not value.isascii():
        return None  # zones are not part of an IP address here
    if ":" not in value:
        return _parse_ipv4_sloppy(value) if "." in value else None
    head, sep, tail = value.rpartition(":")
    if "." in tail:
        v4 = _parse_ipv4_sloppy(tail)
        if v4 is None:
            return None
        value = head + sep + str(v4)
    try:
        addr = ipaddress.IPv6Address(value)
    except ValueError:
        return None
    return addr.ipv4_mapped or addr


def is_valid_ip(path: FieldPath | None, value: str) -> list[FieldError]:
    """``IsValidIP`` (1.32 returns field errors)."""
    if parse_ip_sloppy(value) is None:
        return [FieldError.invalid(path, value, "must be a valid IP address, "
                                                "(e.g. 10.9.8.7 or 2001:db8::ffff)")]
    return []


def is_valid_ipv4_address(path: FieldPath | None, value: str) -> list[FieldError]:
    """``IsValidIPv4Address``."""
    if not isinstance(parse_ip_sloppy(value), ipaddress.IPv4Address):
        return [FieldError.invalid(path, value, "must be a valid IPv4 address")]
    return []


def is_valid_ipv6_address(path: FieldPath | None, value: str) -> list[FieldError]:
    """``IsValidIPv6Address``."""
    if not isinstance(parse_ip_sloppy(value), ipaddress.IPv6Address):
        return [FieldError.invalid(path, value, "must be a valid IPv6 address")]
    return []


def is_valid_cidr(path: FieldPath | None, value: str) -> list[FieldError]:
    """``IsValidCIDR`` (``netutils.ParseCIDRSloppy``)."""
    addr, sep, bits = value.partition("/")
    ip = parse_ip_sloppy(addr) if sep else None
    size = 32 if ":" not in addr else 128
    if ip is None or not (bits.isascii() and bits.isdigit()) or int(bits) > size:
        return [FieldError.invalid(path, value, "must be a valid CIDR value, "
                                                "(e.g. 10.9.8.0/24 or 2001:db8::/64)")]
    return []


# -- base64, as Go's encoding/json decodes []byte (Secret data) ---------------------------

_B64 = {c: i for i, c in enumerate(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")}
_NEWLINES = (0x0A, 0x0D)


def _corrupt(offset: int) -> ValueError:
    return ValueError(f"illegal base64 data at input byte {offset}")


def decode_base64(data: str | bytes) -> bytes:
    """Decode as Go's ``base64.StdEncoding.Decode``; errors read as Go's
    ``illegal base64 data at input byte N`` (padding required, CR/LF ignored)."""
    src = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else bytes(data)
    out, si, n = bytearray(), 0, len(src)
    while si < n:
        quantum, length, garbage = [0, 0, 0, 0], 4, None
        j = 0
        while j < 4:
            if si == n:
                if j == 0:
                    return bytes(out)
                raise _corrupt(si - j)  # an incomplete quantum: padding is required
            c = src[si]
            si += 1
            if c in _B64:
                quantum[j] = _B64[c]
                j += 1
                continue
            if c in _NEWLINES:
                continue
            if c != ord("=") or j < 2:
                raise _corrupt(si - 1)
            if j == 2:  # "==" expected; the first "=" is consumed
                while si < n and src[si] in _NEWLINES:
                    si += 1
                if si == n:
                    raise _corrupt(n)
                if src[si] != ord("="):
                    raise _corrupt(si - 1)
                si += 1
            while si < n and src[si] in _NEWLINES:
                si += 1
            if si < n:
                garbage = si
            length = j
            break
        val = quantum[0] << 18 | quantum[1] << 12 | quantum[2] << 6 | quantum[3]
        out.extend(bytes([(val >> 16) & 0xFF, (val >> 8) & 0xFF, val & 0xFF])[:length - 1])
        if garbage is not None:
            raise _corrupt(garbage)
    return bytes(out)


def is_base64(data: str | bytes) -> bool:
    """True when ``data`` decodes as a ``[]byte`` JSON field would."""
    try:
        decode_base64(data)
    except ValueError:
        return False
    return True


# -- names (api/validation generic.go, api/validation/path) --------------------------------

def _to_bytes(value: str) -> bytes:
    try:
        return value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return value.encode("utf-8", "surrogatepass")


def _mask_trailing_dash(name: str) -> str:
    # Upstream's maskTrailingDash drops the last *two* bytes before appending "a"; kept
    # as is, since changing it would change which generateName prefixes validate.
    if not name.endswith("-"):
        return name
    raw = _to_bytes(name)
    return (raw[:max(len(raw) - 2, 0)] + b"a").decode("utf-8", "surrogateescape")


def name_is_dns_subdomain(name: str, prefix: bool = False) -> list[str]:
    """``NameIsDNSSubdomain``: the default name rule; ``prefix`` allows a trailing '-'."""
    return is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool = False) -> list[str]:
    """``NameIsDNSLabel``: names that must be DNS-1123 labels (namespaces)."""
    return is_dns1123_label(_mask_trailing_dash(name) if prefix else name)


def name_is_dns1035_label(name: str, prefix: bool = False) -> list[str]:
    """``NameIsDNS1035Label``: names that must be DNS-1035 labels (services)."""
    return is_dns1035_label(_mask_trailing_dash(name) if prefix else name)


validate_namespace_name = name_is_dns_label
validate_service_account_name = name_is_dns_subdomain


def validate_path_segment_name(name: str, prefix: bool = False) -> list[str]:
    """``path.ValidatePathSegmentName``: a name usable as a URL path segment."""
    if not prefix:
        for illegal in (".", ".."):
            if name == illegal:
                return [f"may not be '{illegal}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]


# -- object metadata (api/validation objectmeta.go, apis/meta/v1/validation) ---------------

FIELD_IMMUTABLE_ERROR_MSG = "field is immutable"
IS_NEGATIVE_ERROR_MSG = "must be greater than or equal to 0"
TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * (1 << 10)
FIELD_MANAGER_MAX_LENGTH = 128
MAX_SUBRESOURCE_NAME_LENGTH = 256
FINALIZER_ORPHAN_DEPENDENTS = "orphan"
FINALIZER_DELETE_DEPENDENTS = "foregroundDeletion"
FINALIZER_KUBERNETES = "kubernetes"
STANDARD_FINALIZERS = frozenset({FINALIZER_KUBERNETES, FINALIZER_ORPHAN_DEPENDENTS,
                                 FINALIZER_DELETE_DEPENDENTS})
#: ``BannedOwners``: (group, version, kind) that may not own objects.
BANNED_OWNERS = frozenset({("", "v1", "Event")})
_ZERO_TIME = "0001-01-01 00:00:00 +0000 UTC"
# %#v prints a non-nil pointer as its address, which no client can rely on.
_SOME_POINTER = "0xc000000000"


def _str(meta: dict, key: str) -> str:
    value = meta.get(key)
    return "" if value is None else value if isinstance(value, str) else str(value)


def _int(meta: dict, key: str) -> int:
    value = meta.get(key)
    if value is None or isinstance(value, bool):
        return 0
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _map(meta: dict, key: str) -> dict:
    value = meta.get(key)
    return value if isinstance(value, dict) else {}


def _list(meta: dict, key: str) -> list:
    value = meta.get(key)
    return value if isinstance(value, list) else []


def _text(value: Any) -> str:
    return "" if value is None else value if isinstance(value, str) else str(value)


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.astimezone(timezone.utc)


def go_time(value: Any) -> GoValue:
    """A ``metav1.Time`` as its ``String()`` prints it: ``2024-01-01 00:00:00 +0000 UTC``.

    metav1.Time decodes into the server's local zone; like a kube-apiserver in its
    container, kapiserver reports UTC. A missing time is Go's zero time.
    """
    if not value:
        return GoValue(_ZERO_TIME)
    parsed = _parse_time(value)
    if parsed is None:
        return GoValue(str(value))
    fraction = f".{parsed.microsecond:06d}".rstrip("0") if parsed.microsecond else ""
    return GoValue(f"{parsed.year:04d}-{parsed.month:02d}-{parsed.day:02d} "
                   f"{parsed.hour:02d}:{parsed.minute:02d}:{parsed.second:02d}{fraction}"
                   " +0000 UTC")


def _go_bool_pointer(value: Any) -> str:
    return "(*bool)(nil)" if value is None else f"(*bool)({_SOME_POINTER})"


def _go_owner_reference(ref: dict) -> str:
    return ("v1.OwnerReference{"
            f"APIVersion:{go_quote(_str(ref, 'apiVersion'))}, Kind:{go_quote(_str(ref, 'kind'))}, "
            f"Name:{go_quote(_str(ref, 'name'))}, UID:{go_quote(_str(ref, 'uid'))}, "
            f"Controller:{_go_bool_pointer(ref.get('controller'))}, "
            f"BlockOwnerDeletion:{_go_bool_pointer(ref.get('blockOwnerDeletion'))}}}")


def _parse_group_version(api_version: str) -> tuple[str, str] | None:
    # schema.ParseGroupVersion: "" and "/" are the empty GroupVersion.
    if api_version in ("", "/"):
        return "", ""
    count = api_version.count("/")
    if count == 0:
        return "", api_version
    if count == 1:
        group, _, version = api_version.partition("/")
        return group, version
    return None


def validate_nonnegative_field(value: int, path: FieldPath) -> list[FieldError]:
    """``ValidateNonnegativeField``."""
    return [FieldError.invalid(path, value, IS_NEGATIVE_ERROR_MSG)] if value < 0 else []


def validate_immutable_field(new: Any, old: Any, path: FieldPath) -> list[FieldError]:
    """``ValidateImmutableField``: ``Invalid value: <new>: field is immutable``."""
    return [] if new == old else [FieldError.invalid(path, new, FIELD_IMMUTABLE_ERROR_MSG)]


def validate_label_name(name: str, path: FieldPath) -> list[FieldError]:
    """``ValidateLabelName``: a label key must be a qualified name."""
    return [FieldError.invalid(path, name, msg) for msg in is_qualified_name(name)]


def validate_labels(labels: dict, path: FieldPath) -> list[FieldError]:
    """``ValidateLabels``: keys and values, both reported at ``path`` itself."""
    errs = []
    for key, value in labels.items():
        errs += validate_label_name(key, path)
        value = _text(value)
        errs += [FieldError.invalid(path, value, msg) for msg in is_valid_label_value(value)]
    return errs


def annotations_size(annotations: dict) -> int:
    """The bytes annotations count against the 256 KiB limit: keys plus values."""
    return sum(_byte_len(k) + _byte_len(_text(v)) for k, v in annotations.items())


def validate_annotations(annotations: dict, path: FieldPath) -> list[FieldError]:
    """``ValidateAnnotations``: keys are qualified names, case ignored; 256 KiB in all."""
    errs = []
    for key in annotations:
        # Go's strings.ToLower maps U+0130 to a plain "i"; Python's lower() adds a dot.
        lowered = key.replace("\u0130", "i").lower()
        errs += [FieldError.invalid(path, key, msg) for msg in is_qualified_name(lowered)]
    if annotations_size(annotations) > TOTAL_ANNOTATION_SIZE_LIMIT_B:
        errs.append(FieldError.too_long(path, "", TOTAL_ANNOTATION_SIZE_LIMIT_B))
    return errs


def _validate_owner_reference(ref: dict, path: FieldPath) -> list[FieldError]:
    api_version, kind = _str(ref, "apiVersion"), _str(ref, "kind")
    group, version = _parse_group_version(api_version) or ("", "")
    errs = []
    if not version:
        errs.append(FieldError.invalid(path.child("apiVersion"), api_version,
                                       "version must not be empty"))
    if not kind:
        errs.append(FieldError.invalid(path.child("kind"), kind, "kind must not be empty"))
    if not _str(ref, "name"):
        errs.append(FieldError.invalid(path.child("name"), "", "name must not be empty"))
    if not _str(ref, "uid"):
        errs.append(FieldError.invalid(path.child("uid"), "", "uid must not be empty"))
    if (group, version, kind) in BANNED_OWNERS:
        errs.append(FieldError.invalid(path, GoValue(_go_owner_reference(ref)),
                                       f"{group}/{version}, Kind={kind} is disallowed "
                                       "from being an owner"))
    return errs


def validate_owner_references(refs: list, path: FieldPath) -> list[FieldError]:
    """``ValidateOwnerReferences``: reported at ``path`` itself, not per index, as upstream."""
    errs, first_controller = [], ""
    refs = [r if isinstance(r, dict) else {} for r in refs]
    for ref in refs:
        errs += _validate_owner_reference(ref, path)
        if ref.get("controller") is True:
            current = f"{_str(ref, 'kind')}/{_str(ref, 'name')}"
            if first_controller:
                value = GoValue("[]v1.OwnerReference{"
                                + ", ".join(_go_owner_reference(r) for r in refs) + "}")
                errs.append(FieldError.invalid(
                    path, value, "Only one reference can have Controller set to true. "
                    f'Found "true" in references for {first_controller} and {current}'))
            else:
                first_controller = current
    return errs


def validate_finalizer_name(name: str, path: FieldPath) -> list[FieldError]:
    """``ValidateFinalizerName``: a qualified name."""
    return [FieldError.invalid(path, name, msg) for msg in is_qualified_name(name)]


def validate_finalizers(finalizers: list, path: FieldPath) -> list[FieldError]:
    """``ValidateFinalizers``: names, and ``orphan`` with ``foregroundDeletion`` refused."""
    finalizers = [_text(f) for f in finalizers]
    errs = []
    for finalizer in finalizers:
        errs += validate_finalizer_name(finalizer, path)
    if FINALIZER_ORPHAN_DEPENDENTS in finalizers and FINALIZER_DELETE_DEPENDENTS in finalizers:
        errs.append(FieldError.invalid(
            path, GoValue(go_string_slice(finalizers)),
            f"finalizer {FINALIZER_ORPHAN_DEPENDENTS} and {FINALIZER_DELETE_DEPENDENTS} "
            "cannot be both set"))
    return errs


def validate_no_new_finalizers(new: list, old: list, path: FieldPath) -> list[FieldError]:
    """``ValidateNoNewFinalizers``: none may be added once deletion has begun."""
    extra = sorted({_text(f) for f in new} - {_text(f) for f in old})
    if not extra:
        return []
    return [FieldError.forbidden(path, "no new finalizers can be added if the object is being "
                                       f"deleted, found new finalizers {go_string_slice(extra)}")]


def validate_field_manager(manager: str, path: FieldPath) -> list[FieldError]:
    """``ValidateFieldManager``: at most 128 bytes, printable characters only."""
    errs = []
    if _byte_len(manager) > FIELD_MANAGER_MAX_LENGTH:
        errs.append(FieldError.too_long(path, "", FIELD_MANAGER_MAX_LENGTH))
    position = 0
    for ch in manager:
        if not ch.isprintable():
            errs.append(FieldError.invalid(
                path, manager, f"invalid character U+{ord(ch):04X} (at position {position})"))
        position += _byte_len(ch)
    return errs


def validate_managed_fields(entries: list, path: FieldPath) -> list[FieldError]:
    """``ValidateManagedFields``."""
    errs = []
    for i, entry in enumerate(entries):
        entry = entry if isinstance(entry, dict) else {}
        item = path.index(i)
        operation = _str(entry, "operation")
        if operation not in ("Apply", "Update"):
            errs.append(FieldError.invalid(item.child("operation"), operation,
                                           "must be `Apply` or `Update`"))
        fields_type = _str(entry, "fieldsType")
        if fields_type and fields_type != "FieldsV1":
            errs.append(FieldError.invalid(item.child("fieldsType"), fields_type,
                                           "must be `FieldsV1`"))
        errs += validate_field_manager(_str(entry, "manager"), item.child("manager"))
        if _byte_len(_str(entry, "subresource")) > MAX_SUBRESOURCE_NAME_LENGTH:
            errs.append(FieldError.too_long(item.child("subresource"), "",
                                            MAX_SUBRESOURCE_NAME_LENGTH))
    return errs


def validate_object_meta(meta: dict, namespaced: bool, name_fn: NameFunc | None = None,
                         path: FieldPath | None = None) -> list[FieldError]:
    """``ValidateObjectMetaAccessor`` on create; ``name_fn(name, prefix)`` validates names.

    Expects name generation to have happened. ``namespaced`` requires a namespace; a
    cluster-scoped object may not carry one.
    """
    name_fn = name_fn or name_is_dns_subdomain
    path = path or FieldPath("metadata")
    errs = []
    generate_name = _str(meta, "generateName")
    if generate_name:
        errs += [FieldError.invalid(path.child("generateName"), generate_name, msg)
                 for msg in name_fn(generate_name, True)]
    name = _str(meta, "name")
    if not name:
        errs.append(FieldError.required(path.child("name"), "name or generateName is required"))
    else:
        errs += [FieldError.invalid(path.child("name"), name, msg) for msg in name_fn(name, False)]
    namespace = _str(meta, "namespace")
    if namespaced:
        if not namespace:
            errs.append(FieldError.required(path.child("namespace"), ""))
        else:
            errs += [FieldError.invalid(path.child("namespace"), namespace, msg)
                     for msg in validate_namespace_name(namespace, False)]
    elif namespace:
        errs.append(FieldError.forbidden(path.child("namespace"), "not allowed on this type"))
    errs += validate_nonnegative_field(_int(meta, "generation"), path.child("generation"))
    errs += validate_labels(_map(meta, "labels"), path.child("labels"))
    errs += validate_annotations(_map(meta, "annotations"), path.child("annotations"))
    errs += validate_owner_references(_list(meta, "ownerReferences"),
                                      path.child("ownerReferences"))
    errs += validate_finalizers(_list(meta, "finalizers"), path.child("finalizers"))
    errs += validate_managed_fields(_list(meta, "managedFields"), path.child("managedFields"))
    return errs


def _same_time(a: Any, b: Any) -> bool:
    parsed_a, parsed_b = _parse_time(a), _parse_time(b)
    if parsed_a is not None and parsed_b is not None:
        return parsed_a == parsed_b
    return parsed_a is None and parsed_b is None and _text(a) == _text(b)


def _optional_int(meta: dict, key: str) -> int | None:
    return None if meta.get(key) is None else _int(meta, key)


def validate_object_meta_update(new: dict, old: dict,
                                path: FieldPath | None = None) -> list[FieldError]:
    """``ValidateObjectMetaAccessorUpdate``: identity and deletion fields are immutable."""
    path = path or FieldPath("metadata")
    errs = []
    if old.get("deletionTimestamp"):
        errs += validate_no_new_finalizers(_list(new, "finalizers"), _list(old, "finalizers"),
                                           path.child("finalizers"))
    if not _str(new, "resourceVersion"):
        errs.append(FieldError.invalid(path.child("resourceVersion"), "",
                                       "must be specified for an update"))
    if _int(new, "generation") < _int(old, "generation"):
        errs.append(FieldError.invalid(path.child("generation"), _int(new, "generation"),
                                       "must not be decremented"))
    for key in ("name", "namespace", "uid"):
        errs += validate_immutable_field(_str(new, key), _str(old, key), path.child(key))
    # metav1.Time compares as an instant. A missing creationTimestamp prints as the zero
    # time; a missing deletionTimestamp is a nil pointer, printed "null".
    for key in ("creationTimestamp", "deletionTimestamp"):
        if not _same_time(new.get(key), old.get(key)):
            value = new.get(key)
            shown = go_time(value) if value or key == "creationTimestamp" else None
            errs.append(FieldError.invalid(path.child(key), shown, FIELD_IMMUTABLE_ERROR_MSG))
    errs += validate_immutable_field(_optional_int(new, "deletionGracePeriodSeconds"),
                                     _optional_int(old, "deletionGracePeriodSeconds"),
                                     path.child("deletionGracePeriodSeconds"))
    errs += validate_labels(_map(new, "labels"), path.child("labels"))
    errs += validate_annotations(_map(new, "annotations"), path.child("annotations"))
    errs += validate_owner_references(_list(new, "ownerReferences"),
                                      path.child("ownerReferences"))
    errs += validate_managed_fields(_list(new, "managedFields"), path.child("managedFields"))
    return errs


# -- finalizer names: an error for core types, a warning for custom resources --------------

def is_standard_finalizer_name(name: str) -> bool:
    """``helper.IsStandardFinalizerName``: ``kubernetes``, ``orphan``, ``foregroundDeletion``."""
    return name in STANDARD_FINALIZERS


def validate_kube_finalizer_name(name: str, path: FieldPath) -> list[FieldError]:
    """core's ``validateKubeFinalizerName``: a name without '/' must be a standard one."""
    if "/" not in name and not is_standard_finalizer_name(name):
        return [FieldError.invalid(path, name, "name is neither a standard finalizer name nor "
                                               "is it fully qualified")]
    return []


def validate_core_object_meta(meta: dict, namespaced: bool, name_fn: NameFunc | None = None,
                              path: FieldPath | None = None) -> list[FieldError]:
    """core's ``ValidateObjectMeta`` (core/v1 kinds): the generic rules, then every
    finalizer checked by ``validate_kube_finalizer_name`` at ``finalizers[i]``."""
    path = path or FieldPath("metadata")
    errs = validate_object_meta(meta, namespaced, name_fn, path)
    for i, finalizer in enumerate(_list(meta, "finalizers")):
        errs += validate_kube_finalizer_name(_text(finalizer), path.child("finalizers").index(i))
    return errs


def validate_core_object_meta_update(new: dict, old: dict,
                                     path: FieldPath | None = None) -> list[FieldError]:
    """core's ``ValidateObjectMetaUpdate``: the generic rules plus the finalizer check."""
    path = path or FieldPath("metadata")
    errs = validate_object_meta_update(new, old, path)
    for i, finalizer in enumerate(_list(new, "finalizers")):
        errs += validate_kube_finalizer_name(_text(finalizer), path.child("finalizers").index(i))
    return errs


def finalizer_warnings(new: list, old: list | None = None,
                       path: FieldPath | None = None) -> list[str]:
    """The custom resource strategy's warnings for newly added finalizers (sorted).

    ``metadata.finalizers: "x": prefer a domain-qualified finalizer name including a path
    (/) to avoid accidental conflicts with other finalizer writers`` (1.32 wording).
    """
    path = path or FieldPath("metadata", "finalizers")
    added = sorted({_text(f) for f in new} - {_text(f) for f in old or []})
    warnings = []
    for finalizer in added:
        prefix = f"{path}: {go_quote(finalizer)}: "
        warnings += [prefix + msg for msg in is_qualified_name(finalizer)]
        if "/" not in finalizer and not is_standard_finalizer_name(finalizer):
            warnings.append(prefix + "prefer a domain-qualified finalizer name including a "
                                     "path (/) to avoid accidental conflicts with other "
                                     "finalizer writers")
    return warnings
