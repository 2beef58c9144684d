"""Why a webhook call failed, worded as Go's ``net/http`` and client-go word it.

``request_error`` turns a ``requests`` exception (however deeply urllib3 and ``ssl``
nested the cause) into ``Post "URL": tls: failed to verify certificate: x509: certificate
signed by unknown authority``, ``... dial tcp 127.0.0.1:8443: connect: connection
refused`` and the like: what kube-apiserver logs and answers for the same failure.
``refusal`` words a non-2xx answer as client-go's REST client does (the answer's own
``Status`` message, else ``an error on the server ("...") has prevented the request from
succeeding``, ``the server could not find the requested resource``, …).
"""

from __future__ import annotations

import errno
import ipaddress
import json
import os
import socket
import ssl

from .apimachinery.field_errors import go_quote

#: OpenSSL verification results that Go reports as an unknown authority.
_UNKNOWN_AUTHORITY = frozenset((2, 18, 19, 20, 21))
_EXPIRED = frozenset((9, 10))
_HOSTNAME_MISMATCH = frozenset((62, 64))
#: client-go's cap on the text of an unstructured error answer.
_MAX_TEXT = 2048
_GENERIC = {
    400: "the server rejected our request for an unknown reason",
    401: "the server has asked for the client to provide credentials",
    404: "the server could not find the requested resource",
    405: "the server does not allow this method on the requested resource",
    409: "the server reported a conflict",
    422: "the server rejected our request due to an error in our request",
    429: "the server has received too many requests and has asked us to try again later",
    503: "the server is currently unable to handle the request",
    504: "the server was unable to return a response in the time allotted, but may still be "
         "processing the request",
}


def request_error(err: BaseException, method: str, url: str, address: tuple[str, int],
                  server_name: str, verify) -> str:
    """``<Method> "<url>": <cause>`` for a request that got no answer. ``address`` is
    where it connected, ``server_name`` the name TLS verified, ``verify`` the CA file
    (or True for the system's), used to name a certificate's hosts on a mismatch."""
    return f"{method.title()} {go_quote(url)}: {_cause(err, address, server_name, verify)}"


def _causes(err: BaseException):
    """``err`` and everything it wraps (``reason``, ``args``, causes, contexts)."""
    seen, pending = set(), [err]
    while pending:
        current = pending.pop(0)
        if not isinstance(current, BaseException) or id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        pending.append(getattr(current, "reason", None))
        pending.extend(current.args)
        pending.extend((current.__cause__, current.__context__))


def _host_port(address: tuple[str, int]) -> str:
    host, port = address
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _cause(err: BaseException, address, server_name: str, verify) -> str:
    import requests
    from urllib3.exceptions import ConnectTimeoutError, NewConnectionError

    causes = list(_causes(err))
    for cause in causes:
        if type(cause) is LookupError:  # a Service that does not resolve
            return str(cause)
        if isinstance(cause, ssl.SSLCertVerificationError):
            return "tls: failed to verify certificate: " + _verification(
                cause, address, server_name, verify)
    for cause in causes:
        if isinstance(cause, socket.gaierror):
            return f"dial tcp: lookup {address[0]}: no such host"
        if isinstance(cause, ssl.SSLEOFError) or \
                getattr(cause, "reason", "") == "UNEXPECTED_EOF_WHILE_READING":
            return "EOF"
        if isinstance(cause, ssl.SSLError):
            reason = (cause.reason or "").upper()
            if reason in ("WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE", "PACKET_LENGTH_TOO_LONG"):
                return "http: server gave HTTP response to HTTPS client"
            if reason.startswith("TLSV1_ALERT_") or reason.startswith("SSLV3_ALERT_"):
                alert = reason.split("_ALERT_", 1)[1].replace("_", " ").lower()
                return f"remote error: tls: {alert}"
            return f"tls: {(cause.reason or str(cause)).replace('_', ' ').lower()}"
    connecting = any(isinstance(c, (NewConnectionError, requests.exceptions.ConnectTimeout))
                     for c in causes)
    for cause in causes:
        if isinstance(cause, ConnectionResetError):
            return f"read tcp {_host_port(address)}: read: connection reset by peer"
        if isinstance(cause, OSError) and cause.errno and (
                connecting or cause.errno in (errno.ECONNREFUSED, errno.ENETUNREACH,
                                              errno.EHOSTUNREACH)):
            text = os.strerror(cause.errno)
            return f"dial tcp {_host_port(address)}: connect: {text[0].lower() + text[1:]}"
    for cause in causes:
        # urllib3's NewConnectionError is a ConnectTimeoutError too: not a timeout.
        if type(cause) is ConnectTimeoutError or \
                isinstance(cause, requests.exceptions.ConnectTimeout):
            return f"dial tcp {_host_port(address)}: i/o timeout"
        if isinstance(cause, requests.exceptions.ReadTimeout):
            return "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
    for cause in causes:
        if type(cause).__name__ in ("RemoteDisconnected", "IncompleteRead") or \
                isinstance(cause, ConnectionAbortedError):
            return "EOF"
    return str(err)


def _verification(err: ssl.SSLCertVerificationError, address, server_name: str,
                  verify) -> str:
    code = err.verify_code
    if code in _UNKNOWN_AUTHORITY:
        return "x509: certificate signed by unknown authority"
    if code in _EXPIRED:
        return "x509: certificate has expired or is not yet valid"
    if code in _HOSTNAME_MISMATCH:
        return _hostname_error(address, server_name, verify)
    return f"x509: {err.verify_message}"


def _hostname_error(address, server_name: str, verify) -> str:
    """Go's ``x509.HostnameError``, which names the hosts the certificate is valid for:
    they are read from a second handshake that checks the chain but not the name."""
    try:
        context = ssl.create_default_context(cafile=verify if isinstance(verify, str) else None)
        context.check_hostname = False
        with socket.create_connection(address, timeout=5) as sock, \
                context.wrap_socket(sock, server_hostname=server_name) as tls:
            cert = tls.getpeercert() or {}
    except (OSError, ValueError):
        return f"x509: certificate is not valid for {server_name}"
    names = cert.get("subjectAltName") or ()
    try:
        ipaddress.ip_address(server_name)
    except ValueError:
        valid = [value for kind, value in names if kind == "DNS"]
        if not names:
            common = [v for rdn in cert.get("subject") or () for k, v in rdn
                      if k == "commonName"]
            if server_name in common:
                return "x509: certificate relies on legacy Common Name field, use SANs instead"
    else:
        valid = [ipaddress.ip_address(value.strip()).compressed for kind, value in names
                 if kind == "IP Address"]
        if not valid:
            return (f"x509: cannot validate certificate for {server_name} because it doesn't "
                    "contain any IP SANs")
    if not valid:
        return f"x509: certificate is not valid for any names, but wanted to match {server_name}"
    return f"x509: certificate is valid for {', '.join(valid)}, not {server_name}"


def refusal(status_code: int, body: bytes, content_type: str) -> str:
    """client-go's error for a non-2xx answer (``transformResponse``, ``Result.Error``)."""
    media = (content_type or "").split(";")[0].strip().lower()
    if media in ("", "application/json"):
        try:
            status = json.loads(body)
        except ValueError:
            status = None
        if isinstance(status, dict) and status.get("kind") == "Status" and \
                status.get("status") == "Failure":
            return str(status.get("message") or "")
    text = "unknown"
    if not media or media.startswith("text/"):
        text = body[:_MAX_TEXT].decode("utf-8", "replace").strip()
    if status_code in _GENERIC:
        return _GENERIC[status_code]
    if status_code in (403, 415):
        return text
    if status_code == 406:
        return text if text not in ("", "unknown") else \
            "the server was unable to respond with a content type that the client supports"
    if status_code >= 500:
        return f"an error on the server ({go_quote(text)}) has prevented the request from " \
               "succeeding"
    return (f"the server responded with the status code {status_code} but did not return "
            "more information")
