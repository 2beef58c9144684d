"""Requests a client gets wrong, answered as kube-apiserver 1.32 answers them: the body's
namespace or name against the URL's, unknown dryRun values, preconditions on objects that
are gone, cluster-scoped resources under a namespace — and nothing stored changes."""

import pytest

from kapiserver.testing import assert_status

ADMIN = dict(user="admin", groups=["system:masters"])
CMS = "/api/v1/namespaces/default/configmaps"


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    server = KapiserverProcess(str(tmp_path_factory.mktemp("bad")), workers=1).start()
    yield server
    server.stop()


def cm(name, namespace=None, **extra):
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, **extra}


def test_create_in_another_namespace_than_the_url_is_refused(api):
    response = api.request("POST", CMS, json=cm("elsewhere", "kube-system"), **ADMIN)
    assert_status(response, 400, "BadRequest", "the namespace of the provided object does "
                  "not match the namespace sent on the request")
    assert api.get(f"/api/v1/namespaces/kube-system/configmaps/elsewhere",
                   **ADMIN).status_code == 404
    assert api.get(f"{CMS}/elsewhere", **ADMIN).status_code == 404


def test_update_naming_another_object_is_a_bad_request(api):
    created = api.request("POST", CMS, json=cm("named", data={"a": "1"}), **ADMIN).json()
    response = api.request("PUT", f"{CMS}/named", json=cm("other", data={"a": "2"}), **ADMIN)
    assert_status(response, 400, "BadRequest",
                  "the name of the object (other) does not match the name on the URL (named)")
    response = api.request("PUT", f"{CMS}/named", json=cm("named", "kube-system"), **ADMIN)
    assert_status(response, 400, "BadRequest", "the namespace of the object (kube-system) "
                  "does not match the namespace on the request (default)")
    assert api.get(f"{CMS}/named", **ADMIN).json() == created


@pytest.mark.parametrize("method,path,kind", [
    ("POST", CMS, "CreateOptions"), ("PUT", f"{CMS}/dry", "UpdateOptions"),
    ("PATCH", f"{CMS}/dry", "PatchOptions"), ("DELETE", f"{CMS}/dry", "DeleteOptions")])
def test_unknown_dry_run_value_is_invalid_options(api, method, path, kind):
    api.request("POST", CMS, json=cm("dry"), **ADMIN)
    headers = {"Content-Type": "application/merge-patch+json"} if method == "PATCH" else {}
    body = {} if method == "PATCH" else cm("dry")
    response = api.request(method, f"{path}?dryRun=Foo", json=body, headers=headers, **ADMIN)
    assert_status(response, 422, "Invalid", f'{kind}.meta.k8s.io "" is invalid: dryRun: '
                  'Unsupported value: []string{"Foo"}: supported values: "All"')
    assert response.json()["details"]["causes"] == [{
        "reason": "FieldValueNotSupported", "field": "dryRun",
        "message": 'Unsupported value: []string{"Foo"}: supported values: "All"'}]
    assert api.get(f"{CMS}/dry", **ADMIN).status_code == 200


def test_put_with_the_uid_of_a_deleted_object_conflicts(api):
    created = api.request("POST", CMS, json=cm("gone"), **ADMIN).json()
    api.request("DELETE", f"{CMS}/gone", **ADMIN)
    response = api.request("PUT", f"{CMS}/gone", json=created, **ADMIN)
    assert_status(response, 409, "Conflict")
    assert response.json()["message"] == (
        f'Operation cannot be fulfilled on configmaps "gone": StorageError: invalid object, '
        f'Code: 4, Key: /registry/configmaps/default/gone, ResourceVersion: 0, '
        f'AdditionalErrorMsg: Precondition failed: UID in precondition: '
        f'{created["metadata"]["uid"]}, UID in object meta: ')
    del created["metadata"]["uid"]
    assert_status(api.request("PUT", f"{CMS}/gone", json=created, **ADMIN), 404, "NotFound")


def test_delete_with_a_failing_uid_precondition_conflicts_as_upstream_words_it(api):
    created = api.request("POST", CMS, json=cm("guarded"), **ADMIN).json()
    response = api.request("DELETE", f"{CMS}/guarded", json={
        "preconditions": {"uid": "not-the-uid"}}, **ADMIN)
    assert_status(response, 409, "Conflict",
                  'Operation cannot be fulfilled on ConfigMap "guarded": the UID in the '
                  'precondition (not-the-uid) does not match the UID in record '
                  f'({created["metadata"]["uid"]}). The object might have been deleted and '
                  'then recreated')
    assert response.json()["details"] == {"name": "guarded", "kind": "ConfigMap"}
    response = api.request("DELETE", f"{CMS}/guarded", json={
        "preconditions": {"resourceVersion": "1"}}, **ADMIN)
    assert_status(response, 409, "Conflict",
                  'Operation cannot be fulfilled on ConfigMap "guarded": the ResourceVersion in '
                  'the precondition (1) does not match the ResourceVersion in record '
                  f'({created["metadata"]["resourceVersion"]}). The object might have been '
                  'modified')
    assert api.get(f"{CMS}/guarded", **ADMIN).status_code == 200


@pytest.mark.parametrize("path", ["/api/v1/namespaces/default/namespaces",
                                  "/api/v1/namespaces/default/namespaces/default",
                                  "/apis/rbac.authorization.k8s.io/v1/namespaces/default/clusterroles"])
def test_cluster_scoped_resources_under_a_namespace_are_not_found(api, path):
    assert api.get(path, **ADMIN).status_code == 404
    assert api.get("/api/v1/namespaces/default", **ADMIN).status_code == 200
    assert api.get("/api/v1/namespaces/default/status", **ADMIN).status_code == 200


@pytest.mark.parametrize("options,message", [
    ({"preconditions": 1}, "json: cannot unmarshal number into Go struct field "
                           "DeleteOptions.preconditions of type v1.Preconditions"),
    ({"dryRun": "All"}, "json: cannot unmarshal string into Go struct field "
                        "DeleteOptions.dryRun of type []string")])
def test_delete_options_of_the_wrong_type_are_a_bad_request(api, options, message):
    api.request("POST", CMS, json=cm("kept"), **ADMIN)
    response = api.request("DELETE", f"{CMS}/kept", json={
        "kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1", **options}, **ADMIN)
    assert_status(response, 400, "BadRequest", message)
    assert api.get(f"{CMS}/kept", **ADMIN).status_code == 200
