"""Sending the fuzzer's requests, every one bounded in time, and judging the answers.

An answer is wrong when it is a 5xx, a 1xx or 3xx, carries a Python traceback, is an
error that is no ``Status`` (``kind: Status``, ``apiVersion: v1``, ``status: Failure``,
``code`` the HTTP code) in the media type it claims, or never ends (a request that is no
watch still streaming after ``READ_SECONDS``). The one plain-text error is upstream's
own: ``404 page not found`` for a path outside ``/api`` and ``/apis``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

import requests
import yaml

from .cases import PROTOBUF, WATCH_READ_SECONDS, Case

CONNECT_SECONDS = 5
#: How long any request other than a watch may take, first byte to last.
READ_SECONDS = 20


@dataclass
class Answer:
    status: int
    headers: dict
    body: bytes
    cut: bool = False  # still streaming when we stopped reading

    @property
    def media(self) -> str:
        return (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()


class Client:
    """A keep-alive session acting as a cluster admin against ``server``."""

    def __init__(self, server):
        self.server = server
        self.session = requests.Session()
        self.session.cert = server.client_cert("admin", ["system:masters"])
        # verify= on every call: REQUESTS_CA_BUNDLE would override a session's verify.
        self.verify = server.ca_file

    def close(self) -> None:
        self.session.close()

    def json(self, method: str, path: str, body=None, **params) -> requests.Response:
        """A plain request for the fixtures (not fuzzed)."""
        return self.session.request(method, self.server.url + path, json=body, params=params,
                                    verify=self.verify, timeout=(CONNECT_SECONDS, READ_SECONDS))

    def send(self, case: Case) -> Answer:
        limit = WATCH_READ_SECONDS if case.streams else READ_SECONDS
        response = self.session.request(
            case.method, self.server.url + case.path, params=case.params or None,
            headers=case.headers, data=case.body, stream=True, verify=self.verify,
            timeout=(CONNECT_SECONDS, READ_SECONDS), allow_redirects=False)
        try:
            chunks, cut = [], False
            deadline = time.monotonic() + limit
            if case.streams:
                # A watch: whatever it sends within WATCH_READ_SECONDS, then hang up.
                sock = getattr(getattr(response.raw, "connection", None), "sock", None)
                if sock is not None:
                    sock.settimeout(limit)
            try:
                for chunk in response.iter_content(64 * 1024):
                    chunks.append(chunk)
                    if time.monotonic() > deadline:
                        cut = True
                        break
            except requests.exceptions.ConnectionError:
                if not case.streams:
                    raise
                cut = True
            return Answer(response.status_code, dict(response.headers), b"".join(chunks),
                          cut)
        finally:
            response.close()


def status_of(answer: Answer):
    """The answer's body decoded by its media type (``None`` when it cannot be)."""
    try:
        if answer.media == "application/json":
            return json.loads(answer.body)
        if answer.media == "application/yaml":
            return yaml.safe_load(answer.body)
        if answer.media == PROTOBUF:
            from kapiserver.runtime import protobuf

            return protobuf.decode(answer.body)
    except Exception:  # judged by the caller: it is no Status
        return None
    return None


def problems(case: Case, answer: Answer) -> list[str]:
    """What is wrong with ``answer`` to ``case`` (nothing: ``[]``)."""
    found = []
    code = answer.status
    if code >= 500:
        found.append(f"answered {code}")
    elif code < 200 or 300 <= code < 400:
        found.append(f"answered {code}, neither a success nor a client error")
    if b"Traceback (most recent call last)" in answer.body:
        found.append("the answer carries a traceback")
    if answer.cut and not case.streams:
        found.append(f"no answer within {READ_SECONDS}s")
    if code == 404 and answer.body == b"404 page not found\n" and not (
            case.path.startswith(("/api/", "/apis/"))):
        return found  # kube-apiserver's own plain answer for paths outside the API
    if code >= 400 and case.method != "HEAD":
        status = status_of(answer)
        if not isinstance(status, dict):
            found.append(f"an error that is no Status ({answer.media or 'no media type'})")
        else:
            for key, want in (("kind", "Status"), ("apiVersion", "v1"),
                              ("status", "Failure"), ("code", code)):
                if status.get(key) != want:
                    found.append(f"its Status has {key}={status.get(key)!r}, not {want!r}")
    return found


def describe(case: Case, answer: Answer | None, found: list[str]) -> str:
    body = b"" if answer is None else answer.body[:800]
    code = "-" if answer is None else answer.status
    return f"{'; '.join(found)}\n  request: {case!r}\n  answer: {code} {body!r}"
