"""OpenAPIService: what kube-apiserver answers on /openapi/v2, /openapi/v3 and its documents
(negotiation, hash redirects, caching headers, conditional requests), without a server."""

import email.utils
import gzip
import time

import pytest

from kapiserver.openapi.builder import Documents
from kapiserver.openapi.service import OpenAPIService, accepts_gzip, negotiate, parse_accept

V2 = {"swagger": "2.0", "info": {"title": "Kubernetes", "version": "1.32"},
      "paths": {}, "definitions": {"x": {"description": "y" * 2000, "type": "string"}}}
V3 = {"api/v1": {"openapi": "3.0.0", "paths": {"/api/v1/": {}}}, "version": {"openapi": "3.0.0"}}


class Headers(dict):
    """A case-insensitive header mapping, as werkzeug's."""

    def __init__(self, **values):
        super().__init__({k.replace("_", "-").lower(): v for k, v in values.items()})

    def get(self, key, default=None):
        return super().get(key.lower(), default)


class Builder:
    def __init__(self):
        self.built = Documents(V2, V3)

    def documents(self):
        return self.built


@pytest.fixture
def service():
    return OpenAPIService(Builder())


def get(service, path, args=None, method="GET", **headers):
    return service.serve(method, path, args or {}, Headers(**headers))


def test_index_is_served_as_the_aggregator_serves_it(service):
    answer = get(service, "/openapi/v3")
    assert answer.status == 200
    assert answer.body == service.builder.built.index
    # http.ServeContent sniffs the type and sends no ETag; it was modified "now".
    assert answer.header("Content-Type") == "text/plain; charset=utf-8"
    assert answer.header("Etag") is None
    modified = email.utils.parsedate_to_datetime(answer.header("Last-Modified")).timestamp()
    assert abs(modified - time.time()) < 5


def test_group_version_document_without_hash(service):
    data, digest = service.builder.built.v3["api/v1"]
    answer = get(service, "/openapi/v3/api/v1", Accept="application/json")
    assert (answer.status, answer.body) == (200, data)
    assert answer.header("Content-Type") == "application/json"
    assert answer.header("Etag") == f'"{digest}"'
    assert answer.header("Vary") == "Accept"
    assert answer.header("Cache-Control") is None  # the filter's "no-cache, private" applies


def test_right_hash_is_cached_for_good(service):
    _, digest = service.builder.built.v3["api/v1"]
    answer = get(service, "/openapi/v3/api/v1", {"hash": digest})
    assert answer.status == 200
    assert answer.header("Cache-Control") == "public, immutable"
    expires = email.utils.parsedate_to_datetime(answer.header("Expires"))
    assert 364 * 86400 < expires.timestamp() - time.time() <= 366 * 86400
    assert answer.header("Expires").endswith(" UTC")


def test_stale_hash_redirects_to_the_current_one(service):
    _, digest = service.builder.built.v3["api/v1"]
    answer = get(service, "/openapi/v3/api/v1", {"hash": "0123"})
    assert answer.status == 301
    assert answer.header("Location") == f"/openapi/v3/api/v1?hash={digest}"
    assert answer.body == b""  # http.Redirect writes no body once Content-Type is set
    assert answer.header("Content-Type") == "application/json"


def test_unknown_group_version_is_a_bare_404(service):
    answer = get(service, "/openapi/v3/apis/nope/v1")
    assert (answer.status, answer.body, answer.headers) == (404, b"", [])


def test_v3_protobuf_only_is_not_acceptable(service):
    answer = get(service, "/openapi/v3/api/v1",
                 Accept="application/com.github.proto-openapi.spec.v3.v1.0+protobuf")
    assert (answer.status, answer.body) == (406, b"")


def test_if_none_match_gives_304_without_body_or_type(service):
    _, digest = service.builder.built.v3["api/v1"]
    answer = get(service, "/openapi/v3/api/v1", If_None_Match=f'"{digest}"')
    assert (answer.status, answer.body) == (304, b"")
    assert answer.header("Content-Type") is None and answer.header("Last-Modified") is None
    assert answer.header("Etag") == f'"{digest}"'
    assert get(service, "/openapi/v3/api/v1", If_None_Match='"other"').status == 200
    assert get(service, "/openapi/v3/api/v1", If_None_Match="*").status == 304
    assert get(service, "/openapi/v3/api/v1", method="PUT",
               If_None_Match=f'"{digest}"').status == 412


def test_if_modified_since(service):
    later = email.utils.formatdate(time.time() + 60, usegmt=True)
    assert get(service, "/openapi/v2", If_Modified_Since=later).status == 304
    assert get(service, "/openapi/v2", If_Modified_Since="Mon, 01 Jan 2001 00:00:00 GMT"
               ).status == 200
    assert get(service, "/openapi/v2", If_Modified_Since="yesterday").status == 200
    # If-None-Match wins over If-Modified-Since, as in Go.
    assert get(service, "/openapi/v2", If_Modified_Since=later,
               If_None_Match='"other"').status == 200


def test_the_v3_index_is_not_modified_only_for_a_copy_from_a_later_second(service):
    built = service.builder.documents().built_at
    answer = get(service, "/openapi/v3")
    assert answer.header("Last-Modified") == email.utils.formatdate(int(built), usegmt=True)
    # Cached in the second the index was built: it may have changed since, within that
    # second, so the client gets it again.
    same_second = email.utils.formatdate(int(built), usegmt=True)
    assert get(service, "/openapi/v3", If_Modified_Since=same_second).status == 200
    next_second = email.utils.formatdate(int(built) + 1, usegmt=True)
    assert get(service, "/openapi/v3", If_Modified_Since=next_second).status == 304


def test_head_gets_the_answer_to_get(service):
    # The WSGI layer sends a HEAD answer's headers only (Content-Length from the body).
    head = get(service, "/openapi/v3/api/v1", method="HEAD")
    get_ = get(service, "/openapi/v3/api/v1")
    assert (head.status, head.body) == (get_.status, get_.body)


def test_v2_json_and_protobuf(service):
    documents = service.builder.built
    answer = get(service, "/openapi/v2", Accept="application/json")
    assert (answer.status, answer.body) == (200, documents.v2_json)
    assert answer.header("Content-Type") == "application/json"
    assert answer.header("Etag") == f'"{documents.v2_etag}"'
    assert [v for k, v in answer.headers if k == "Vary"] == ["Accept-Encoding", "Accept"]
    for accept in ("application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
                   "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"):
        answer = get(service, "/openapi/v2", Accept=accept)
        assert answer.status == 200
        assert answer.header("Content-Type") == \
            "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
        assert answer.body == documents.v2_protobuf
        assert answer.header("Etag") == f'"{documents.v2_etag}"'


def test_v2_is_gzipped_for_clients_that_accept_it(service):
    answer = get(service, "/openapi/v2", Accept_Encoding="gzip, deflate")
    assert answer.header("Content-Encoding") == "gzip"
    assert gzip.decompress(answer.body) == service.builder.built.v2_json
    assert get(service, "/openapi/v2", Accept_Encoding="gzip;q=0").header(
        "Content-Encoding") is None


def test_v2_unacceptable_media_type_is_a_bare_406(service):
    answer = get(service, "/openapi/v2", Accept="text/html")
    assert (answer.status, answer.body) == (406, b"")
    assert answer.header("Content-Type") is None


def test_other_paths_are_not_served(service):
    for path in ("/openapi", "/openapi/", "/openapi/v2/", "/openapi/v4"):
        assert get(service, path) is None


@pytest.mark.parametrize("accept,expected", [
    ("application/json, */*", [("application", "json"), ("*", "*")]),
    ("*/*;q=0.5, application/json", [("application", "json"), ("*", "*")]),
    ("text/*, text/html", [("text", "html"), ("text", "*")]),
    ("*", [("*", "*")]), ("bogus", [])])
def test_parse_accept_orders_by_quality_then_specificity(accept, expected):
    assert parse_accept(accept) == expected


def test_negotiate_and_gzip_helpers():
    accepted = (("application", "json", "application/json"),)
    assert negotiate("", accepted) == "application/json"  # no Accept means */*
    assert negotiate("application/*", accepted) == "application/json"
    assert negotiate("text/plain", accepted) is None
    assert accepts_gzip("deflate, gzip") and not accepts_gzip("identity")
