"""The pod spec's defaults and validation as a real server answers them (the transcripts of
``wide/kinds/`` replayed end to end: the immutable update's go-cmp diff over HTTP, a
template's defaults through a workload, an invalid update through PUT)."""

import copy
import json
import pathlib

import pytest

KINDS = pathlib.Path("/work/shared/reference/wide/kinds")
ADMIN = dict(user="admin", groups=["system:masters"])
NAMESPACE = "ref-069ea7"

pytestmark = pytest.mark.skipif(not KINDS.is_dir(), reason="reference transcripts absent")


def _load(name):
    return json.loads((KINDS / name).read_text())


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    process = KapiserverProcess(str(tmp_path_factory.mktemp("pod-spec")), workers=1).start()
    process.request("POST", "/api/v1/namespaces", json={
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}, **ADMIN)
    process.request("POST", f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts", json={
        "apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}},
        **ADMIN)
    # The pod as kube-apiserver stored it (admission plugins' additions included: the diff
    # of the immutable update prints them), created again.
    create = _load("pods-create.json")
    stored = create["response"]["body"]
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": stored["metadata"]["name"]},
            "spec": stored["spec"]}
    response = process.request("POST", create["request"]["path"], json=body, **ADMIN)
    assert response.status_code == 201, response.text
    yield process
    process.stop()


def _patch(server, path, body, content_type="application/merge-patch+json"):
    return server.request("PATCH", path, data=json.dumps(body),
                          headers={"Content-Type": content_type}, **ADMIN)


def test_immutable_update_is_refused_word_for_word(server):
    exchange = _load("pods-update-immutable.json")
    request = exchange["request"]
    response = _patch(server, request["path"], request["body"], request["content_type"])
    assert response.status_code == exchange["response"]["status"]
    assert response.json() == exchange["response"]["body"]


def test_image_update_is_allowed(server):
    path = f"/api/v1/namespaces/{NAMESPACE}/pods/p1"
    pod = server.request("GET", path, **ADMIN).json()
    pod["spec"]["containers"][0]["image"] = "nginx:1.28"
    response = server.request("PUT", path, json=pod, **ADMIN)
    assert response.status_code == 200, response.text
    assert response.json()["spec"]["containers"][0]["image"] == "nginx:1.28"


def test_image_may_not_be_emptied(server):
    path = f"/api/v1/namespaces/{NAMESPACE}/pods/p1"
    pod = server.request("GET", path, **ADMIN).json()
    pod["spec"]["containers"][0]["image"] = ""
    response = server.request("PUT", path, json=pod, **ADMIN)
    assert response.status_code == 422
    body = response.json()
    assert body["message"].startswith('Pod "p1" is invalid: spec.containers[0].image: '
                                      "Required value")
    assert {"reason": "FieldValueRequired", "message": "Required value",
            "field": "spec.containers[0].image"} in body["details"]["causes"]


def test_tolerations_may_only_be_added(server):
    path = f"/api/v1/namespaces/{NAMESPACE}/pods/p1"
    pod = server.request("GET", path, **ADMIN).json()
    added = copy.deepcopy(pod)
    added["spec"]["tolerations"].append({"key": "k", "operator": "Exists",
                                         "effect": "NoSchedule"})
    response = server.request("PUT", path, json=added, **ADMIN)
    assert response.status_code == 200, response.text

    pod = response.json()
    # Remove the one added above (DefaultTolerationSeconds would put its own back).
    pod["spec"]["tolerations"] = [t for t in pod["spec"]["tolerations"] if t.get("key") != "k"]
    response = server.request("PUT", path, json=pod, **ADMIN)
    assert response.status_code == 422
    # the tolerations are munged before the spec comparison: only their own error
    assert response.json()["message"] == (
        'Pod "p1" is invalid: spec.tolerations: Forbidden: existing toleration can not be '
        "modified except its tolerationSeconds")


def test_active_deadline_seconds_may_be_set_but_not_raised(server):
    path = f"/api/v1/namespaces/{NAMESPACE}/pods/p1"
    response = _patch(server, path, {"spec": {"activeDeadlineSeconds": 100}})
    assert response.status_code == 200, response.text
    response = _patch(server, path, {"spec": {"activeDeadlineSeconds": 200}})
    assert response.status_code == 422
    assert response.json()["details"]["causes"] == [{
        "reason": "FieldValueInvalid",
        "message": "Invalid value: 200: must be less than or equal to previous value",
        "field": "spec.activeDeadlineSeconds"}]


@pytest.mark.parametrize("resource", [
    "deployments", "replicasets", "statefulsets", "daemonsets", "jobs", "cronjobs",
    "replicationcontrollers", "podtemplates"])
def test_a_template_gets_the_pod_spec_defaults(server, resource):
    exchange = _load(f"{resource}-create.json")
    request = exchange["request"]
    body = copy.deepcopy(request["body"])
    body["metadata"]["name"] += "-spec"
    response = server.request("POST", request["path"], json=body, **ADMIN)
    assert response.status_code == 201, response.text

    def template_spec(obj):
        if obj["kind"] == "PodTemplate":
            return obj["template"]["spec"]
        if obj["kind"] == "CronJob":
            return obj["spec"]["jobTemplate"]["spec"]["template"]["spec"]
        return obj["spec"]["template"]["spec"]

    assert template_spec(response.json()) == template_spec(exchange["response"]["body"])


def test_an_invalid_pod_is_refused_word_for_word(server):
    exchange = _load("pods-invalid.json")
    request = exchange["request"]
    response = server.request(request["method"], request["path"], json=request["body"],
                              **ADMIN)
    assert (response.status_code, response.json()) == \
        (exchange["response"]["status"], exchange["response"]["body"])
