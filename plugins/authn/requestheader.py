"""The front proxy's identity headers (upstream's ``requestheader`` authenticator).

An authenticating proxy — the aggregator of a main API server in front of an extension
server — states the user it authenticated in ``X-Remote-User``, ``X-Remote-Group`` and
``X-Remote-Extra-<key>`` headers (``--requestheader-*-headers``). Those headers are
believed only from a client whose TLS certificate is signed by
``--requestheader-client-ca-file`` for client authentication and, when
``--requestheader-allowed-names`` is not empty, whose CN is one of them
(``headerrequest.NewDynamicVerifyOptionsSecure``). Otherwise the certificate is an error
and the headers are ignored (the union goes on to the other authenticators).

As upstream: the user is the first username header with a value; the groups are every
non-empty value of every group header; an extra key is the rest of a header's name after
a prefix, lower-cased and percent-unescaped, with all that header's values. The headers
are removed from the request once read.
"""

from __future__ import annotations

import datetime
import json
import re
from collections import OrderedDict
from dataclasses import dataclass

from kapiserver.authentication import AuthenticationError, Authenticator, UserInfo

from .x509 import CACHE_SIZE, load_store, verify_client_certificate

DEFAULT_USERNAME_HEADERS = ("X-Remote-User",)
DEFAULT_GROUP_HEADERS = ("X-Remote-Group",)
DEFAULT_EXTRA_PREFIXES = ("X-Remote-Extra-",)
_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


@dataclass(frozen=True)
class RequestHeaderSettings:
    """Whom to believe and which headers to read (``RequestHeaderConfig``)."""

    ca_file: str
    allowed_names: tuple[str, ...] = ()
    username_headers: tuple[str, ...] = DEFAULT_USERNAME_HEADERS
    group_headers: tuple[str, ...] = DEFAULT_GROUP_HEADERS
    extra_prefixes: tuple[str, ...] = DEFAULT_EXTRA_PREFIXES

    @classmethod
    def from_options(cls, config) -> "RequestHeaderSettings":
        return cls(config.requestheader_client_ca_file,
                   tuple(config.requestheader_allowed_names),
                   tuple(config.requestheader_username_headers),
                   tuple(config.requestheader_group_headers),
                   tuple(config.requestheader_extra_headers_prefix))

    def to_json(self) -> str:
        return json.dumps({"ca_file": self.ca_file, "allowed_names": self.allowed_names,
                           "username_headers": self.username_headers,
                           "group_headers": self.group_headers,
                           "extra_prefixes": self.extra_prefixes})

    @classmethod
    def from_json(cls, text: str) -> "RequestHeaderSettings":
        data = json.loads(text)
        return cls(data["ca_file"], *(tuple(data[key]) for key in (
            "allowed_names", "username_headers", "group_headers", "extra_prefixes")))


def header_values(headers, name: str) -> list[str]:
    """Every value of header ``name`` (case-insensitive), each one a client sent."""
    getlist = getattr(headers, "getlist", None)
    if getlist is not None:
        return list(getlist(name))
    value = headers.get(name)
    return [] if value is None else [value]


def unescape_extra_key(key: str) -> str:
    """Percent-decode as Go's ``url.PathUnescape``; a malformed key is kept as sent."""
    if _ESCAPE.search(key):
        return key
    from urllib.parse import unquote

    return unquote(key, errors="replace")


def user_from_headers(headers, settings: RequestHeaderSettings):
    """``(UserInfo or None, names of the headers read)`` (``AuthenticateRequest``)."""
    name = ""
    for header in settings.username_headers:
        values = header_values(headers, header)
        if values and values[0]:
            name = values[0]
            break
    if not name:
        return None, []
    groups = [value for header in settings.group_headers
              for value in header_values(headers, header) if value]
    extra: dict[str, list[str]] = {}
    present = _names(headers)
    identity = {n.lower() for n in settings.username_headers + settings.group_headers}
    read = [h for h in present if h.lower() in identity]
    # Prefixes first, so that each key's values keep the order of the prefixes.
    for prefix in settings.extra_prefixes:
        for header in present:
            if len(header) >= len(prefix) and header[:len(prefix)].lower() == prefix.lower():
                key = unescape_extra_key(header[len(prefix):].lower())
                extra.setdefault(key, []).extend(header_values(headers, header))
                read.append(header)
    user = UserInfo(name, "", tuple(groups), {k: tuple(v) for k, v in extra.items()})
    return user, read


def _names(headers) -> list[str]:
    """The distinct names of the headers sent, in order."""
    seen, names = set(), []
    for header, _ in headers.items():
        if header.lower() not in seen:
            seen.add(header.lower())
            names.append(header)
    return names


class RequestHeaderAuthenticator(Authenticator):
    """Believe a verified front proxy's identity headers (module docstring)."""

    name = "requestheader"

    def __init__(self, settings: RequestHeaderSettings, store=None):
        self.settings = settings
        self.allowed = frozenset(settings.allowed_names)
        self._store = store
        #: certificate DER -> (its CN, when to check it again); only verified ones.
        self._cache: OrderedDict[bytes, tuple[str, datetime.datetime]] = OrderedDict()

    @property
    def store(self):
        # pyOpenSSL (and cryptography) load with the first client certificate.
        if self._store is None:
            self._store = load_store([self.settings.ca_file])
        return self._store

    def authenticate(self, request):
        der = request.peer_certificate
        if not der:
            return None
        common_name = self._verified_common_name(der)
        if self.allowed and common_name not in self.allowed:
            raise AuthenticationError(
                f"x509: subject with cn={common_name} is not in the allowed list")
        user, read = user_from_headers(request.headers, self.settings)
        if user is not None:
            request.remove_headers = list(request.remove_headers or ()) + read
        return user

    def _verified_common_name(self, der: bytes) -> str:
        now = datetime.datetime.now(datetime.timezone.utc)
        cached = self._cache.get(der)
        if cached is not None and cached[1] > now:
            self._cache.move_to_end(der)
            return cached[0]
        from cryptography.x509.oid import NameOID

        parsed = verify_client_certificate(self.store, der)
        names = parsed.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
        common_name = str(names[0].value) if names else ""
        self._cache[der] = (common_name, min(parsed.not_valid_after_utc,
                                             now + datetime.timedelta(minutes=10)))
        if len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
        return common_name
