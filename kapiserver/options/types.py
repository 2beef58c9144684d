"""marshmallow fields and validators for kapiserver's options (files, certificates, lists)."""

from __future__ import annotations

import ipaddress
import os

from marshmallow import ValidationError, fields


class CommaList(fields.List):
    """A list given as a YAML list, a comma-separated string, or repeated flags."""

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        elif isinstance(value, (list, tuple)):
            flat = []
            for item in value:
                if isinstance(item, str):
                    flat.extend(v.strip() for v in item.split(",") if v.strip())
                else:
                    flat.append(item)
            value = flat
        return super()._deserialize(value, attr, data, **kwargs)


class Path(fields.String):
    """A filesystem path; ``~`` is expanded and it is made absolute. Empty means unset.

    Absolute, so that the gunicorn master and its workers agree whatever their cwd.
    """

    def _deserialize(self, value, attr, data, **kwargs):
        value = super()._deserialize(value, attr, data, **kwargs)
        return os.path.abspath(os.path.expanduser(value)) if value else ""


class Duration(fields.Field):
    """A Go duration (``5m``, ``1h30m``, ``250ms``, ``0``) or a number of seconds."""

    _UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001, "us": 1e-6, "µs": 1e-6,
              "ns": 1e-9}

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if value < 0:
                raise ValidationError("must not be negative")
            return float(value)
        import re

        text = str(value).strip()
        if text == "0":
            return 0.0
        parts = re.findall(r"(\d+(?:\.\d+)?)(h|ms|us|µs|ns|m|s)", text)
        if not parts or "".join(n + u for n, u in parts) != text:
            raise ValidationError(f"invalid duration {text!r} (examples: 5m, 30s, 1h30m)")
        return sum(float(n) * self._UNITS[u] for n, u in parts)


def readable_file(path: str) -> None:
    """Fail unless ``path`` is empty or names a readable regular file."""
    if not path:
        return
    if not os.path.exists(path):
        raise ValidationError(f"{path}: no such file")
    if not os.path.isfile(path):
        raise ValidationError(f"{path}: not a regular file")
    if not os.access(path, os.R_OK):
        raise ValidationError(f"{path}: permission denied")


def pem_certificates(path: str) -> None:
    """Fail unless ``path`` is empty or holds at least one parsable PEM certificate."""
    if not path:
        return
    readable_file(path)
    load_pem_certificates(path)


def load_pem_certificates(path: str) -> list:
    """Load every PEM certificate in ``path``; raise ``ValidationError`` when there is none."""
    # pyOpenSSL only when a certificate is read: the gunicorn master usually reads none.
    from OpenSSL import crypto

    with open(path, "rb") as f:
        data = f.read()
    certs = []
    marker = b"-----BEGIN CERTIFICATE-----"
    for chunk in data.split(marker)[1:]:
        try:
            certs.append(crypto.load_certificate(crypto.FILETYPE_PEM, marker + chunk))
        except crypto.Error as err:
            raise ValidationError(f"{path}: invalid PEM certificate: {err}") from None
    if not certs:
        raise ValidationError(f"{path}: no PEM certificate found")
    return certs


def pem_private_key(path: str) -> None:
    """Fail unless ``path`` is empty or holds a parsable, unencrypted PEM private key."""
    if not path:
        return
    from OpenSSL import crypto

    readable_file(path)
    with open(path, "rb") as f:
        data = f.read()
    try:
        crypto.load_privatekey(crypto.FILETYPE_PEM, data, passphrase=b"")
    except crypto.Error as err:
        raise ValidationError(f"{path}: invalid or encrypted PEM private key: {err}") from None


def ip_address(value: str) -> None:
    """Fail unless ``value`` is an IPv4 or IPv6 address."""
    try:
        ipaddress.ip_address(value)
    except ValueError:
        raise ValidationError(f"{value!r} is not a valid IP address") from None


def kubeconfig_file(path: str) -> None:
    """Fail unless ``path`` is empty or a readable kubeconfig naming a server URL."""
    if not path:
        return
    from ..errors import ConfigError
    from ..webhookclient import read_kubeconfig

    readable_file(path)
    try:
        read_kubeconfig(path, "")
    except ConfigError as err:
        raise ValidationError(err.errors[0].split(": ", 1)[1]) from None


def http_header_names(names) -> None:
    """Fail unless every entry is an HTTP header field name (or a prefix of one)."""
    import re

    for name in names:
        # RFC 9110 token characters.
        if not re.fullmatch(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+", name):
            raise ValidationError(f"{name!r} is not a valid HTTP header name")
