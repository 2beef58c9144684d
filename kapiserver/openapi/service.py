"""OpenAPIService: HTTP semantics of ``/openapi/v2``, ``/openapi/v3`` and its documents.

Plain Python (the web layer turns an ``Answer`` into a response). Mirrors what a
kube-apiserver answers: kube-openapi's ``handler`` for v2 (content negotiation, gzip,
ETag), the aggregator's ``specProxier`` for the v3 index and unknown documents, and
kube-openapi's ``handler3`` for v3 documents (``hash`` redirects and immutable caching),
each finishing with Go's ``http.ServeContent`` (Last-Modified, conditional requests).
"""

from __future__ import annotations

import email.utils
import time
from dataclasses import dataclass, field

from .builder import server_relative_url

V2_PATH = "/openapi/v2"
V3_PATH = "/openapi/v3"
JSON = "application/json"
V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
#: What v2 clients may ask for (the ``@v1.0`` form is deprecated), in upstream's order.
V2_ACCEPTED = (("application", "json", JSON),
               ("application", "com.github.proto-openapi.spec.v2@v1.0+protobuf", V2_PROTOBUF),
               ("application", "com.github.proto-openapi.spec.v2.v1.0+protobuf", V2_PROTOBUF))
#: v3 documents are served as JSON only; a client that accepts nothing else gets 406.
V3_ACCEPTED = (("application", "json", JSON),)
#: Go's ``http.DetectContentType`` of a JSON document.
SNIFFED_TEXT = "text/plain; charset=utf-8"
#: gziphandler's ``DefaultMinSize``: smaller bodies go out uncompressed.
GZIP_MIN_SIZE = 1400
ONE_YEAR = 365 * 24 * 3600


@dataclass
class Answer:
    """An HTTP answer: status, headers (in order, repeatable) and body."""

    status: int
    headers: list = field(default_factory=list)
    body: bytes = b""

    def header(self, name: str) -> str | None:
        for key, value in self.headers:
            if key.lower() == name.lower():
                return value
        return None

    def set(self, name: str, value: str) -> None:
        self.headers = [(k, v) for k, v in self.headers if k.lower() != name.lower()]
        self.headers.append((name, value))

    def remove(self, name: str) -> None:
        self.headers = [(k, v) for k, v in self.headers if k.lower() != name.lower()]


def parse_accept(header: str) -> list[tuple[str, str]]:
    """goautoneg's ``ParseAccept``: ``(type, subtype)`` clauses, best first."""
    clauses = []
    for position, part in enumerate(header.split(",")):
        media, *params = part.split(";")
        media = media.strip()
        kind, slash, subtype = media.partition("/")
        kind, subtype = kind.strip(), subtype.strip()
        if not slash:
            if kind != "*":
                continue
            subtype = "*"
        q, extra = 1.0, 0
        for param in params:
            key, _, value = param.strip().partition("=")
            if key.strip() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
            else:
                extra += 1
        clauses.append((-q, kind == "*", subtype == "*", -extra, position, kind, subtype))
    return [(kind, subtype) for *_, kind, subtype in sorted(clauses)]


def negotiate(accept: str, accepted) -> str | None:
    """The content type to answer with, or ``None`` (upstream's 406)."""
    for kind, subtype in parse_accept(accept or "*/*"):
        for want_type, want_subtype, content_type in accepted:
            if kind in (want_type, "*") and subtype in (want_subtype, "*"):
                return content_type
    return None


def accepts_gzip(header: str) -> bool:
    """gziphandler's ``acceptsGzip``: ``gzip`` listed with a non-zero quality."""
    for part in (header or "").split(","):
        coding, *params = part.split(";")
        if coding.strip().lower() != "gzip":
            continue
        for param in params:
            key, _, value = param.strip().partition("=")
            if key == "q":
                try:
                    return float(value) > 0
                except ValueError:
                    return False
        return True
    return False


def _etag_matches(header: str, etag: str) -> bool:
    # Go's checkIfNoneMatch: weak comparison, "*" matches anything.
    for candidate in header.split(","):
        candidate = candidate.strip()
        if candidate == "*":
            return True
        if candidate.removeprefix("W/") == etag.removeprefix("W/"):
            return True
    return False


def _parse_date(value: str | None) -> float | None:
    try:
        return email.utils.parsedate_to_datetime(value).timestamp() if value else None
    except (TypeError, ValueError):
        return None  # Go ignores an unparsable If-Modified-Since


def serve_content(answer: Answer, method: str, headers, data: bytes, modified: float,
                  sniff: bool = False, strict_since: bool = False) -> Answer:
    """Go's ``http.ServeContent``: Last-Modified and conditional requests (304, 412).

    ``strict_since``: If-Modified-Since answers 304 only for content built in an earlier
    second. Last-Modified has a resolution of one second, so a document rebuilt in the
    second a client last fetched it would otherwise stay stale in that client's cache.
    """
    if modified:
        answer.set("Last-Modified", email.utils.formatdate(int(modified), usegmt=True))
    etag = answer.header("Etag")
    safe = method in ("GET", "HEAD")
    if_none_match = headers.get("If-None-Match")
    not_modified = False
    if if_none_match and etag:
        if _etag_matches(if_none_match, etag):
            if not safe:
                return Answer(412, answer.headers)
            not_modified = True
    elif not if_none_match and safe and modified:
        since = _parse_date(headers.get("If-Modified-Since"))
        if since is not None and (int(modified) < since if strict_since
                                  else int(modified) <= since):
            not_modified = True
    if not_modified:
        for name in ("Content-Type", "Content-Length", "Content-Encoding"):
            answer.remove(name)
        if etag:
            answer.remove("Last-Modified")
        answer.status = 304
        return answer
    if sniff and answer.header("Content-Type") is None:
        answer.set("Content-Type", SNIFFED_TEXT)
    answer.set("Accept-Ranges", "bytes")
    answer.status = 200
    answer.body = data  # for HEAD the WSGI layer sends the headers only, as Go's server does
    return answer


class OpenAPIService:
    """Serves the documents of an ``OpenAPIBuilder``: ``serve`` answers ``/openapi/*``.

    ``serve(method, path, args, headers)`` returns an ``Answer``, or ``None`` for a path
    it does not serve (the delegation chain then answers, as upstream's mux falls through).
    ``args`` is the query (a mapping of first values), ``headers`` a case-insensitive mapping.
    """

    def __init__(self, builder):
        self.builder = builder

    def serve(self, method: str, path: str, args, headers) -> Answer | None:
        if path == V2_PATH:
            return self._serve_v2(method, headers)
        if path == V3_PATH:
            # The aggregator's handleDiscovery: ServeContent named "/openapi/v3", no ETag,
            # the content type sniffed from the JSON. Upstream says "modified now", which
            # answers 304 to a client that cached the index earlier in the same second,
            # even if a CRD changed it since: here it is modified when it was built, and
            # a request from within that second gets it again.
            documents = self.builder.documents()
            return serve_content(Answer(200), method, headers, documents.index,
                                 documents.built_at, sniff=True, strict_since=True)
        if path.startswith(V3_PATH + "/"):
            return self._serve_v3(method, path[len(V3_PATH) + 1:], args, headers)
        return None

    def _serve_v2(self, method: str, headers) -> Answer:
        answer = Answer(200, [("Vary", "Accept-Encoding"), ("Vary", "Accept")])
        content_type = negotiate(headers.get("Accept", ""), V2_ACCEPTED)
        if content_type is None:
            answer.status = 406
            return answer
        documents = self.builder.documents()
        protobuf = content_type != JSON
        data = documents.v2_protobuf if protobuf else documents.v2_json
        answer.set("Content-Type", content_type)
        answer.headers.append(("Etag", f'"{documents.v2_etag}"'))
        answer = serve_content(answer, method, headers, data, documents.built_at)
        if (answer.status == 200 and len(data) >= GZIP_MIN_SIZE
                and accepts_gzip(headers.get("Accept-Encoding", ""))):
            answer.body = documents.v2_protobuf_gzip if protobuf else documents.v2_json_gzip
            answer.set("Content-Encoding", "gzip")
        return answer

    def _serve_v3(self, method: str, key: str, args, headers) -> Answer:
        documents = self.builder.documents()
        if key not in documents.v3:
            return Answer(404)  # the aggregator: no group version of that name
        data, digest = documents.v3[key]
        answer = Answer(200, [("Vary", "Accept")])
        content_type = negotiate(headers.get("Accept", ""), V3_ACCEPTED)
        if content_type is None:
            answer.status = 406
            return answer
        answer.set("Content-Type", content_type)
        answer.set("Etag", f'"{digest}"')
        wanted = args.get("hash", "")
        if wanted:
            if wanted != digest:
                # http.Redirect with a Content-Type already set: no HTML body.
                answer.status = 301
                answer.set("Location", server_relative_url(key, digest))
                return answer
            answer.set("Cache-Control", "public, immutable")
            answer.set("Expires", email.utils.formatdate(time.time() + ONE_YEAR,
                                                         usegmt=True).replace("GMT", "UTC"))
        return serve_content(answer, method, headers, data, documents.built_at)
