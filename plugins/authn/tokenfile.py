"""Static bearer tokens from ``--token-auth-file`` (upstream's ``tokenfile.NewCSV`` format)."""

from __future__ import annotations

import csv
import logging

from marshmallow import ValidationError

from kapiserver.authentication import AuthenticationError, Authenticator, UserInfo
from kapiserver.options.types import readable_file

log = logging.getLogger(__name__)


def parse_token_file(path: str) -> dict[str, UserInfo]:
    """Read ``token,user,uid[,"group1,group2"]`` records; raise ``ValueError`` on bad ones."""
    tokens: dict[str, UserInfo] = {}
    with open(path, newline="", encoding="utf-8-sig") as f:
        for number, record in enumerate(csv.reader(f), start=1):
            if not record:
                continue
            if len(record) < 3:
                raise ValueError(f"token file '{path}' must have at least 3 columns "
                                 f"(token, user name, user uid), found {len(record)}")
            token, name, uid = record[0], record[1], record[2]
            if not token:
                log.warning("empty token has been found in token file '%s', record number %d",
                            path, number)
                continue
            if token in tokens:
                log.warning("duplicate token has been found in token file '%s', "
                            "record number %d", path, number)
            groups = tuple(record[3].split(",")) if len(record) >= 4 else ()
            tokens[token] = UserInfo(name, uid, groups)
    return tokens


def validate_token_file(path: str) -> None:
    """marshmallow validator for ``--token-auth-file``."""
    if not path:
        return
    readable_file(path)
    try:
        parse_token_file(path)
    except (ValueError, csv.Error, UnicodeDecodeError) as err:
        raise ValidationError(str(err)) from None


class TokenFileAuthenticator(Authenticator):
    """Authenticate ``Authorization: Bearer TOKEN`` against the token file's records.

    As upstream's ``bearertoken`` authenticator: a missing or non-Bearer header is "no
    credentials"; a Bearer token that is not in the file is an error (401).
    """

    name = "tokenfile"

    def __init__(self, tokens: dict[str, UserInfo]):
        self.tokens = tokens

    @classmethod
    def from_file(cls, path: str) -> "TokenFileAuthenticator":
        return cls(parse_token_file(path))

    def authenticate(self, request):
        token = bearer_token(request.headers)
        if token is None:
            return None
        user = self.tokens.get(token)
        if user is None:
            raise AuthenticationError("invalid bearer token")
        return user


def bearer_token(headers) -> str | None:
    """The token of an ``Authorization: Bearer`` header, or ``None``."""
    auth = (headers.get("Authorization") or "").strip()
    if not auth:
        return None
    parts = auth.split(" ", 2)
    if len(parts) < 2 or parts[0].lower() != "bearer" or not parts[1]:
        return None
    return parts[1]
