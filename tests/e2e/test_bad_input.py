"""What the API fuzzer (``tests/fuzz``) found, pinned: bad input is a 4xx ``Status``,
never a 500, a hang or a stream."""

import pytest

from kapiserver.testing import assert_status

ADMIN = dict(user="admin", groups=["system:masters"])


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    server = KapiserverProcess(str(tmp_path_factory.mktemp("bad-input")), workers=1).start()
    yield server
    server.stop()


@pytest.mark.parametrize("method", ["PUT", "POST", "PATCH", "DELETE"])
@pytest.mark.parametrize("path", ["/api/v1/watch/configmaps",
                                  "/api/v1/watch/namespaces/default/configmaps",
                                  "/apis/apps/v1/watch/namespaces/default/deployments/x"])
def test_only_get_watches(api, method, path):
    """Watch routes are GET routes: another method is a 405, not a watch that streams
    until its client gives up."""
    response = api.request(method, path, data=b"{}", timeout=10,
                           headers={"Content-Type": "application/merge-patch+json"}, **ADMIN)
    assert_status(response, 405, "MethodNotAllowed",
                  "the server does not allow this method on the requested resource")


def nested(depth: int, container: str) -> str:
    return "[" * depth + "]" * depth if container == "[" else '{"a":' * depth + "{}" + "}" * depth


CM = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"x":%s}'
DEEP_REQUESTS = {
    "create": ("POST", "/api/v1/namespaces/default/configmaps", "application/json", CM),
    "yaml": ("POST", "/api/v1/namespaces/default/configmaps", "application/yaml", CM),
    "merge patch": ("PATCH", "/api/v1/namespaces/default/configmaps/kube-root-ca.crt",
                    "application/merge-patch+json", '{"x":%s}'),
    "apply": ("PATCH", "/api/v1/namespaces/default/configmaps/deep?fieldManager=f",
              "application/apply-patch+yaml", CM),
    "delete options": ("DELETE", "/api/v1/namespaces/default/configmaps/kube-root-ca.crt",
                       "application/json", '{"kind":"DeleteOptions","x":%s}'),
}


@pytest.mark.parametrize("depth", [500, 1000, 10001])
@pytest.mark.parametrize("container", ["[", "{"])
@pytest.mark.parametrize("request_", DEEP_REQUESTS)
def test_bodies_nested_too_deep_are_a_bad_request(api, request_, container, depth):
    """Python's parsers and walkers recurse: a body nested past patch.MAX_DEPTH is a 400
    (Go's decoders refuse 10000 levels the same way), never a RecursionError's 500."""
    method, path, media, body = DEEP_REQUESTS[request_]
    response = api.request(method, path + ("&" if "?" in path else "?") + "dryRun=All",
                           data=(body % nested(depth, container)).encode(),
                           headers={"Content-Type": media}, timeout=30, **ADMIN)
    status = assert_status(response, 400, "BadRequest")
    assert "exceeded max depth" in status["message"], status
    assert api.get("/api/v1/namespaces/default/configmaps/kube-root-ca.crt",
                   **ADMIN).status_code == 200


@pytest.mark.parametrize("request_", DEEP_REQUESTS)
def test_bodies_nested_within_the_limit_are_read(api, request_):
    method, path, media, body = DEEP_REQUESTS[request_]
    response = api.request(method, path + ("&" if "?" in path else "?") + "dryRun=All",
                           data=(body % nested(150, "{")).encode(),
                           headers={"Content-Type": media}, timeout=30, **ADMIN)
    assert response.status_code < 500, response.text
    assert "exceeded max depth" not in response.text


@pytest.mark.parametrize("method", ["POST", "DELETE"])
@pytest.mark.parametrize("path", ["/api/v1/configmaps", "/apis/apps/v1/deployments"])
def test_no_writes_across_all_namespaces(api, method, path):
    """A namespaced resource's all-namespaces path only lists and watches: a DELETE there
    was a deletecollection in every namespace."""
    namespace = api.request("POST", "/api/v1/namespaces", json={
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"generateName": "all-ns-"}}, **ADMIN).json()["metadata"]["name"]
    kept = f"/api/v1/namespaces/{namespace}/configmaps/kept"
    created = api.request("POST", f"/api/v1/namespaces/{namespace}/configmaps", json={
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kept"}}, **ADMIN)
    assert created.status_code == 201, created.text
    response = api.request(method, path, json={"apiVersion": "v1", "kind": "ConfigMap",
                                               "metadata": {"name": "x"}}, **ADMIN)
    assert_status(response, 405, "MethodNotAllowed",
                  "the server does not allow this method on the requested resource")
    assert api.get(kept, **ADMIN).json() == created.json()


@pytest.mark.parametrize("limit", ["99999999999999999999", "9223372036854775808",
                                   "-9223372036854775809"])
def test_a_limit_past_int64_is_a_bad_request(api, limit):
    """ListOptions.Limit is an int64: past it the store's SQLite INTEGER overflowed."""
    response = api.get(f"/api/v1/configmaps?limit={limit}", **ADMIN)
    assert_status(response, 400, "BadRequest", f"invalid limit: {limit}")
    assert api.get("/api/v1/configmaps?limit=9223372036854775807", **ADMIN).status_code == 200


PRIORITY_CLASSES = "/apis/scheduling.k8s.io/v1/priorityclasses"


@pytest.mark.parametrize("path,kind,api_version", [
    (PRIORITY_CLASSES, "PriorityClass", "scheduling.k8s.io/v1"),
    ("/apis/apps/v1/namespaces/default/deployments", "Deployment", "apps/v1"),
    ("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
     "ValidatingWebhookConfiguration", "admissionregistration.k8s.io/v1"),
    ("/api/v1/namespaces/default/configmaps", "ConfigMap", "v1")])
def test_null_metadata_is_an_empty_one(api, path, kind, api_version):
    """Go decodes "metadata": null into an empty ObjectMeta: a create without a name is
    a 422, never the store's AttributeError."""
    response = api.request("POST", path + "?dryRun=All", json={
        "apiVersion": api_version, "kind": kind, "metadata": None}, **ADMIN)
    status = assert_status(response, 422, "Invalid")
    assert "metadata.name: Required value" in status["message"], status


def test_a_json_patch_nulling_metadata_is_refused(api):
    api.request("POST", PRIORITY_CLASSES, json={
        "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
        "metadata": {"name": "null-meta"}, "value": 7}, **ADMIN)
    before = api.get(f"{PRIORITY_CLASSES}/null-meta", **ADMIN).json()
    response = api.request("PATCH", f"{PRIORITY_CLASSES}/null-meta", json=[
        {"op": "replace", "path": "/metadata", "value": None}],
        headers={"Content-Type": "application/json-patch+json"}, **ADMIN)
    assert 400 <= response.status_code < 500, response.text
    assert_status(response, response.status_code, response.json()["reason"])
    assert api.get(f"{PRIORITY_CLASSES}/null-meta", **ADMIN).json() == before


@pytest.mark.parametrize("version", ["18446744073709551616", "-1"])
def test_a_resource_version_past_uint64_is_a_bad_request(api, version):
    """Upstream parses resourceVersion as a uint64: outside it is a 400 at once, not a
    3 s wait for a revision that never comes and a 504."""
    for path in ("/api/v1/configmaps", "/api/v1/namespaces/default/configmaps/kube-root-ca.crt"):
        response = api.get(f"{path}?resourceVersion={version}", timeout=10, **ADMIN)
        assert_status(response, 400, "BadRequest", f"invalid resource version: {version}")
