"""AggregatedContent: the extension servers' namespaced resources as the namespace
controller sees them, and the requests it sends through the proxy."""

import json
from types import SimpleNamespace

import pytest

from kapiserver.controllers.namespace_content import ContentError, ContentResource
from kapiserver_plugins.aggregator.namespaces import AggregatedContent


def apiservice(version, group="wardle.example.com", priority=15, available=True, local=False):
    spec = {"group": group, "version": version, "groupPriorityMinimum": 1000,
            "versionPriority": priority}
    if not local:
        spec["service"] = {"namespace": "default", "name": "wardle", "port": 443}
    return {"metadata": {"name": f"{version}.{group}"}, "spec": spec,
            "status": {"conditions": [{"type": "Available",
                                       "status": "True" if available else "False"}]}}


def entry(resource, scope="Namespaced", verbs=("delete", "deletecollection", "get", "list")):
    return {"resource": resource, "scope": scope, "verbs": list(verbs)}


class Handler:
    def __init__(self, answers):
        self.answers = answers  # (method, path) -> (status, body)
        self.requests = []

    def request(self, method, path, headers=(), body=None, timeout=None):
        self.requests.append((method, path, dict(headers), body))
        status, answer = self.answers.get((method, path), (404, {}))
        return status, {}, json.dumps(answer).encode()


def content(apiservices, resources, handler=None):
    registry = SimpleNamespace(
        apiservices={a["metadata"]["name"]: a for a in apiservices},
        remote_resources=resources, proxy=lambda apiservice: handler)
    return AggregatedContent(registry)


def test_discovery_takes_each_namespaced_resource_from_its_preferred_version():
    provider = content(
        [apiservice("v1alpha1", priority=15), apiservice("v1beta1", priority=20),
         apiservice("v1", group="local.example.com", local=True)],
        {"v1alpha1.wardle.example.com": [entry("flunders"), entry("fischers", "Cluster"),
                                         entry("old")],
         "v1beta1.wardle.example.com": [dict(entry("flunders"), subresources=[
             {"subresource": "status", "verbs": ["get", "patch", "update"]}])]})
    resources, failures = provider.discover()
    assert failures == {}
    assert [(r.version, r.resource) for r in resources] == [
        ("v1beta1", "flunders"), ("v1alpha1", "old")]
    assert resources[0].verbs == {"delete", "deletecollection", "get", "list"}


def test_an_unavailable_or_undiscovered_group_version_is_stale():
    provider = content([apiservice("v1alpha1", available=False), apiservice("v1beta1")],
                       {"v1alpha1.wardle.example.com": [entry("flunders")]})
    resources, failures = provider.discover()
    assert resources == []
    assert failures == {
        "wardle.example.com/v1alpha1":
            "stale GroupVersion discovery: wardle.example.com/v1alpha1",
        "wardle.example.com/v1beta1":
            "stale GroupVersion discovery: wardle.example.com/v1beta1"}


FLUNDERS = ContentResource("wardle.example.com", "v1alpha1", "flunders",
                           frozenset({"delete", "deletecollection", "list"}))
COLLECTION = "/apis/wardle.example.com/v1alpha1/namespaces/doomed/flunders"


def test_requests_go_through_the_proxy_as_the_namespace_controller():
    handler = Handler({("DELETE", COLLECTION): (200, {"kind": "FlunderList", "items": []}),
                       ("GET", COLLECTION): (200, {"items": [{"metadata": {"name": "f1"}}]}),
                       ("DELETE", COLLECTION + "/f1"): (404, {"kind": "Status"})})
    provider = content([apiservice("v1alpha1")], {}, handler)
    assert provider.delete_collection(FLUNDERS, "doomed") is True
    assert provider.list(FLUNDERS, "doomed") == [{"metadata": {"name": "f1"}}]
    provider.delete(FLUNDERS, "doomed", "f1")  # gone already: fine
    method, path, headers, body = handler.requests[0]
    assert headers["X-Remote-User"] == "system:serviceaccount:kube-system:namespace-controller"
    assert json.loads(body) == {"kind": "DeleteOptions", "apiVersion": "v1",
                                "propagationPolicy": "Background"}
    assert [(m, p) for m, p, _, _ in handler.requests] == [
        ("DELETE", COLLECTION), ("GET", COLLECTION), ("DELETE", COLLECTION + "/f1")]


def test_unsupported_collections_and_refusals():
    forbidden = {"kind": "Status", "message": 'flunders.wardle.example.com is forbidden: no'}
    handler = Handler({("DELETE", COLLECTION): (405, {"kind": "Status"}),
                       ("GET", COLLECTION): (403, forbidden)})
    provider = content([apiservice("v1alpha1")], {}, handler)
    assert provider.delete_collection(FLUNDERS, "doomed") is False
    with pytest.raises(ContentError, match="^flunders.wardle.example.com is forbidden: no$"):
        provider.list(FLUNDERS, "doomed")
    unavailable = content([apiservice("v1alpha1", available=False)], {}, handler)
    with pytest.raises(ContentError,
                       match="^the server is currently unable to handle the request$"):
        unavailable.delete(FLUNDERS, "doomed", "f1")
