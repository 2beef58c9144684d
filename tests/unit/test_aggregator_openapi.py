"""OpenAPIAggregation: what each worker fetches from its extension servers' OpenAPI and
hands to the OpenAPI builder, with a fake backend behind the proxy."""

import hashlib
import json
from types import SimpleNamespace

from kapiserver_plugins.aggregator import openapi
from kapiserver_plugins.aggregator.openapi import OpenAPIAggregation

FLUNDER_DOC = json.dumps({"openapi": "3.0.0", "paths": {"/apis/wardle.example.com/v1alpha1/":
                                                         {}}}).encode()
SWAGGER = {"swagger": "2.0",
           "paths": {"/api/v1/namespaces": {"get": {"responses": {"200": {"schema": {
               "$ref": "#/definitions/v1.NamespaceList"}}}}},
                     "/apis/wardle.example.com/v1alpha1/flunders": {"get": {"responses": {
                         "200": {"schema": {"$ref": "#/definitions/wardle.FlunderList"}}}}}},
           "definitions": {"v1.NamespaceList": {"type": "object"},
                           "wardle.FlunderList": {"type": "object"}}}


def digest(data):
    return hashlib.sha512(data).hexdigest().upper()


class Backend:
    """An extension server's /openapi answers; records what was asked."""

    def __init__(self):
        self.v3 = {"apis/wardle.example.com/v1alpha1": FLUNDER_DOC,
                   "apis/coordination.k8s.io/v1": b'{"local": "group"}',
                   "api/v1": b'{"core": true}', "version": b"{}"}
        self.v2 = json.dumps(SWAGGER).encode()
        self.status = None  # force every answer's status
        self.requests = []

    def request(self, method, path, headers=(), body=None, timeout=None):
        headers = dict(headers)
        self.requests.append((path, headers))
        assert headers["X-Remote-User"] == "system:aggregator"
        assert "X-Remote-Group" not in headers
        if self.status:
            return self.status, {}, b""
        if path == "/openapi/v3":
            return 200, {}, json.dumps({"paths": {key: {
                "serverRelativeURL": f"/openapi/v3/{key}?hash={digest(data)}"}
                for key, data in self.v3.items()}}).encode()
        if path.startswith("/openapi/v3/"):
            return 200, {}, self.v3[path[len("/openapi/v3/"):]]
        if path == "/openapi/v2":
            etag = '"' + digest(self.v2) + '"'
            if headers.get("If-None-Match") == etag:
                return 304, {"etag": etag}, b""
            return 200, {"etag": etag}, self.v2
        return 404, {}, b""


def apiservice(name, group, available=True, priority=1000):
    return {"metadata": {"name": name},
            "spec": {"group": group, "version": name.split(".")[0],
                     "groupPriorityMinimum": priority, "versionPriority": 15,
                     "service": {"namespace": "default", "name": "wardle", "port": 443}},
            "status": {"conditions": [{"type": "Available",
                                       "status": "True" if available else "False"}]}}


def aggregation(backend):
    published = []
    server = SimpleNamespace(
        discovery=SimpleNamespace(groups=[SimpleNamespace(name=""),
                                          SimpleNamespace(name="coordination.k8s.io")]),
        openapi=SimpleNamespace(set_aggregated=published.append))
    return OpenAPIAggregation(server, lambda apiservice: backend), published


WARDLE = {"v1alpha1.wardle.example.com": apiservice("v1alpha1.wardle.example.com",
                                                    "wardle.example.com")}


def test_an_available_backend_adds_its_own_groups_documents_and_swagger_paths():
    backend = Backend()
    agg, published = aggregation(backend)
    wait = agg.sync(WARDLE, changed=True)
    assert wait == openapi.REFRESH_INTERVAL
    [[spec]] = published
    assert spec.name == "v1alpha1.wardle.example.com"
    # Documents under apis/ of groups not served here, as the backend served them.
    assert spec.v3 == {"apis/wardle.example.com/v1alpha1": FLUNDER_DOC}
    # Swagger: only the /apis/ paths, with what they use.
    assert set(spec.v2["paths"]) == {"/apis/wardle.example.com/v1alpha1/flunders"}
    assert set(spec.v2["definitions"]) == {"wardle.FlunderList"}
    fetched = [path for path, _ in backend.requests]
    assert fetched == ["/openapi/v3", "/openapi/v3/apis/wardle.example.com/v1alpha1",
                       "/openapi/v2"]


def test_nothing_changed_nothing_refetched_or_republished(monkeypatch):
    backend = Backend()
    agg, published = aggregation(backend)
    agg.sync(WARDLE, changed=True)
    backend.requests.clear()
    # Not due yet, nothing changed: no request at all.
    agg.sync(WARDLE, changed=False)
    assert backend.requests == []
    # An APIService changed: the index again, the v2 document with its ETag (304).
    agg.sync(WARDLE, changed=True)
    assert [path for path, _ in backend.requests] == ["/openapi/v3", "/openapi/v2"]
    assert backend.requests[1][1]["If-None-Match"].startswith('"')
    # A minute later it is due again by itself.
    backend.requests.clear()
    later = openapi.time.monotonic() + openapi.REFRESH_INTERVAL + 1
    monkeypatch.setattr(openapi.time, "monotonic", lambda: later)
    agg.sync(WARDLE, changed=False)
    assert [path for path, _ in backend.requests] == ["/openapi/v3", "/openapi/v2"]
    assert len(published) == 1


def test_a_new_hash_in_the_index_fetches_that_document_again():
    backend = Backend()
    agg, published = aggregation(backend)
    agg.sync(WARDLE, changed=True)
    backend.v3["apis/wardle.example.com/v1alpha1"] = b'{"openapi": "3.0.0", "new": 1}'
    agg.sync(WARDLE, changed=True)
    assert published[-1][0].v3 == {"apis/wardle.example.com/v1alpha1":
                                   b'{"openapi": "3.0.0", "new": 1}'}
    assert len(published) == 2


def test_an_unavailable_or_removed_apiservice_drops_out():
    backend = Backend()
    agg, published = aggregation(backend)
    agg.sync(WARDLE, changed=True)
    down = {name: apiservice(name, "wardle.example.com", available=False) for name in WARDLE}
    agg.sync(down, changed=True)
    assert published[-1] == []
    agg.sync(WARDLE, changed=True)
    assert len(published[-1]) == 1
    agg.sync({}, changed=True)
    assert published[-1] == []


def test_a_failed_fetch_keeps_what_was_fetched_and_is_retried_sooner():
    backend = Backend()
    agg, published = aggregation(backend)
    agg.sync(WARDLE, changed=True)
    backend.status = 503
    assert agg.sync(WARDLE, changed=True) == openapi.RETRY_INTERVAL
    assert 1.9 < agg.sync(WARDLE, changed=True) <= 2.0  # doubled
    assert len(published) == 1  # the last good documents stay
    backend.status = None
    assert agg.sync(WARDLE, changed=True) == openapi.REFRESH_INTERVAL


def test_backends_are_merged_by_group_priority_then_name():
    backend = Backend()
    agg, published = aggregation(backend)
    services = {"v1.low.example.com": apiservice("v1.low.example.com", "low.example.com", 10),
                "v1.b.example.com": apiservice("v1.b.example.com", "b.example.com", 500),
                "v1.a.example.com": apiservice("v1.a.example.com", "a.example.com", 500)}
    agg.sync(services, changed=True)
    assert [spec.name for spec in published[-1]] == [
        "v1.a.example.com", "v1.b.example.com", "v1.low.example.com"]
