"""Writing responses: every ``Status`` and every plain-text answer is built here.

Mirrors ``endpoints/handlers/responsewriters``: Status bodies are negotiated (JSON unless
the client prefers YAML); upstream's few plain-text answers (``404 page not found``, the
in-flight limiter's 429, the panic 500 of non-API paths) keep their exact bytes.
"""

from __future__ import annotations

from flask import Response

from ..errors import StatusError
from ..serialization import dumps_json, dumps_json_indent, dumps_yaml

JSON = "application/json"
YAML = "application/yaml"
TEXT = "text/plain; charset=utf-8"


def prefers_yaml(accept: str) -> bool:
    """True when the Accept header ranks ``application/yaml`` above JSON."""
    if not accept or "yaml" not in accept:
        return False
    best, best_q = None, -1.0
    for item in accept.split(","):
        media, _, params = item.strip().partition(";")
        media = media.strip().lower()
        q = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if media in (JSON, YAML, "application/*", "*/*") and q > best_q:
            best, best_q = media, q
    return best == YAML


def status_response(error: StatusError, accept: str = "") -> Response:
    """Answer with ``error``'s ``Status`` body and HTTP code, in the serializer the client
    accepts (``ErrorNegotiated``: JSON, YAML or protobuf; JSON when none fits)."""
    from . import negotiation

    status = error.to_status()
    try:
        media = negotiation.negotiate(accept, table=False, partial=False)
    except StatusError:
        media = negotiation.DEFAULT
    if media.protobuf:
        from ..runtime import protobuf

        response = Response(protobuf.encode(status), error.code,
                            content_type=protobuf.CONTENT_TYPE)
    elif media.yaml:
        response = Response(dumps_yaml(status), error.code, content_type=YAML)
    else:
        response = Response(dumps_json(status), error.code, content_type=JSON)
    for name, value in error.headers.items():
        response.headers[name] = value
    return response


def text_response(body: str, code: int = 200, nosniff: bool = True) -> Response:
    """Answer with plain text, as Go's ``http.Error``/``fmt.Fprint`` handlers do."""
    response = Response(body.encode(), code, content_type=TEXT)
    if nosniff:
        response.headers["X-Content-Type-Options"] = "nosniff"
    return response


def http_error(message: str, code: int) -> Response:
    """Go's ``http.Error``: the message plus a newline, nosniff."""
    return text_response(message + "\n", code)


def raw_json_response(obj, code: int = 200) -> Response:
    """``responsewriters.WriteRawJSON``: indented JSON, no trailing newline."""
    return Response(dumps_json_indent(obj), code, content_type=JSON)


def not_found_text() -> Response:
    """Go's ``http.NotFound`` — what upstream answers for unknown non-API paths."""
    return http_error("404 page not found", 404)
