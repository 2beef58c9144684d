"""apps/v1 end to end: Deployments, ReplicaSets, StatefulSets, DaemonSets and
ControllerRevisions through kubectl, the official Python client and raw requests; the
scale, strategic-merge and immutability transcripts of kube-apiserver 1.32."""

import json
import pathlib

import pytest

from kapiserver.testing import assert_status

ADMIN = dict(user="admin", groups=["system:masters"])
KINDS = pathlib.Path("/work/shared/reference/wide/kinds")
REF_NS = "ref-069ea7"
NS = "apps"
APPS = f"/apis/apps/v1/namespaces/{NS}"
TEMPLATE = {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "nginx"}]}}
VOLATILE = "<volatile>"
SMP = {"Content-Type": "application/strategic-merge-patch+json"}
MERGE = {"Content-Type": "application/merge-patch+json"}


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    server = KapiserverProcess(str(tmp_path_factory.mktemp("apps")), workers=1).start()
    for namespace in (REF_NS, NS):
        response = server.request("POST", "/api/v1/namespaces", json={
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}, **ADMIN)
        assert response.status_code == 201, response.text
    yield server
    server.stop()


def exchange(name: str) -> dict:
    return json.loads((KINDS / f"{name}.json").read_text())


def replay(api, name: str):
    request = exchange(name)["request"]
    headers = {"Content-Type": request["content_type"]} if request["content_type"] else {}
    return api.request(request["method"], request["path"],
                       data=None if request["body"] is None else json.dumps(request["body"]),
                       headers=headers, **ADMIN)


def scrub(value, path=()):
    """``value`` without what differs between two servers (uids, versions, times)."""
    if isinstance(value, dict):
        return {key: VOLATILE if (path == ("metadata",) and key in (
            "uid", "resourceVersion", "creationTimestamp")) or key == "time"
            else scrub(child, path + (key,)) for key, child in value.items()}
    if isinstance(value, list):
        return [scrub(item, path + ("*",)) for item in value]
    return value


def body(kind: str, name: str, **spec) -> dict:
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE, **spec}}


def create(api, resource: str, obj: dict) -> dict:
    response = api.request("POST", f"{APPS}/{resource}", json=obj, **ADMIN)
    assert response.status_code == 201, response.text
    return response.json()


def kubectl(api, *args, check=True):
    result = api.kubectl(*args, "-n", NS)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def get_json(api, *args) -> dict:
    return json.loads(kubectl(api, "get", *args, "-o", "json").stdout)


# -- kube-apiserver's own answers ------------------------------------------------------------

pytestmark = pytest.mark.skipif(not KINDS.is_dir(), reason="reference transcripts absent")


TRANSCRIPTS = ("deployments-create", "deployments-scale", "deployments-scale-put",
               "deployments-smp-containers", "deployments-selector-immutable")


@pytest.fixture(scope="module")
def transcripts(api):
    """The Deployment transcripts replayed once, in the order they were captured (each
    answer depends on the ones before): ``{name: (status, body)}``."""
    answers = {}
    for name in TRANSCRIPTS:
        response = replay(api, name)
        answers[name] = (response.status_code, response.json())
    return answers


def expected(name: str) -> tuple[int, dict]:
    response = exchange(name)["response"]
    return response["status"], response["body"]


def scrubbed(answer: tuple[int, dict]) -> tuple[int, dict]:
    return answer[0], scrub(answer[1])


def without_time(entries: list[dict]) -> list[dict]:
    return sorted((json.dumps({k: v for k, v in entry.items() if k != "time"}, sort_keys=True)
                   for entry in entries))


def test_deployment_create_transcript(transcripts):
    assert scrubbed(transcripts["deployments-create"]) == \
        scrubbed(expected("deployments-create"))


def test_deployment_scale_transcripts(transcripts):
    for name in ("deployments-scale", "deployments-scale-put"):
        assert scrubbed(transcripts[name]) == scrubbed(expected(name)), name


def test_deployment_strategic_merge_of_containers_transcript(transcripts):
    status, body = transcripts["deployments-smp-containers"]
    body = json.loads(json.dumps(body))  # the fixture's answers are shared: change a copy
    want_status, want = expected("deployments-smp-containers")
    entries, want_entries = body["metadata"].pop("managedFields"), \
        want["metadata"].pop("managedFields")
    assert (status, scrub(body)) == (want_status, scrub(want))
    # Who owns what: the creator, the scale write and the patch.
    assert without_time(entries) == without_time(want_entries)


def test_deployment_scale_entry_has_no_time_as_upstream(transcripts):
    _, body = transcripts["deployments-smp-containers"]
    _, want = expected("deployments-smp-containers")
    assert scrub(body["metadata"]["managedFields"]) == scrub(want["metadata"]["managedFields"])


def test_deployment_selector_immutable_transcript(transcripts):
    assert transcripts["deployments-selector-immutable"] == \
        expected("deployments-selector-immutable")


def test_invalid_deployment_transcript(api):
    expected = exchange("deployments-invalid")["response"]
    response = replay(api, "deployments-invalid")
    assert (response.status_code, response.json()) == (expected["status"], expected["body"])


# -- kubectl -------------------------------------------------------------------------------------

def test_kubectl_deployment_lifecycle(api):
    assert kubectl(api, "create", "deployment", "web", "--image=nginx").stdout == \
        "deployment.apps/web created\n"
    web = get_json(api, "deployment", "web")
    assert web["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    assert web["spec"]["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {
        "maxUnavailable": "25%", "maxSurge": "25%"}}
    assert web["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] == "Always"
    assert web["metadata"]["generation"] == 1 and web["status"] == {}

    assert kubectl(api, "set", "image", "deployment/web", "nginx=nginx:1.27").stdout == \
        "deployment.apps/web image updated\n"
    assert kubectl(api, "scale", "deployment", "web", "--replicas=3").stdout == \
        "deployment.apps/web scaled\n"
    web = get_json(api, "deployment", "web")
    assert web["spec"]["replicas"] == 3
    assert web["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
    assert web["metadata"]["generation"] == 3

    assert kubectl(api, "rollout", "pause", "deployment/web").stdout == \
        "deployment.apps/web paused\n"
    assert get_json(api, "deployment", "web")["spec"]["paused"] is True
    assert kubectl(api, "rollout", "resume", "deployment/web").stdout == \
        "deployment.apps/web resumed\n"
    assert "paused" not in get_json(api, "deployment", "web")["spec"]
    assert kubectl(api, "rollout", "restart", "deployment/web").stdout == \
        "deployment.apps/web restarted\n"
    web = get_json(api, "deployment", "web")
    assert "kubectl.kubernetes.io/restartedAt" in web["spec"]["template"]["metadata"][
        "annotations"]
    assert web["metadata"]["generation"] == 6

    assert kubectl(api, "expose", "deployment", "web", "--port=80").stdout == \
        "service/web exposed\n"
    service = get_json(api, "service", "web")
    assert service["spec"]["selector"] == {"app": "web"}
    assert service["spec"]["ports"][0]["port"] == 80


def test_kubectl_rollout_status_waits_on_the_status(api):
    kubectl(api, "create", "deployment", "rolling", "--image=nginx", "--replicas=2")
    waiting = kubectl(api, "rollout", "status", "deployment/rolling", "--timeout=1s",
                      check=False)
    assert waiting.returncode == 1
    assert "Waiting for deployment spec update to be observed..." in waiting.stdout
    assert "timed out waiting for the condition" in waiting.stderr
    # What the deployment controller would write once the pods are up.
    generation = get_json(api, "deployment", "rolling")["metadata"]["generation"]
    response = api.request("PATCH", f"{APPS}/deployments/rolling/status", headers=MERGE,
                           data=json.dumps({"status": {
                               "observedGeneration": generation, "replicas": 2,
                               "updatedReplicas": 2, "readyReplicas": 2,
                               "availableReplicas": 2}}), **ADMIN)
    assert response.status_code == 200, response.text
    done = kubectl(api, "rollout", "status", "deployment/rolling", "--timeout=5s")
    assert done.stdout == 'deployment "rolling" successfully rolled out\n'


def test_kubectl_get_tables(api):
    create(api, "replicasets", body("ReplicaSet", "front", replicas=2))
    create(api, "statefulsets", body("StatefulSet", "db", serviceName="db"))
    create(api, "daemonsets", body("DaemonSet", "agent"))
    output = kubectl(api, "get", "deploy,rs,sts,ds", "-o", "wide").stdout
    lines = [line.split() for line in output.splitlines() if line.strip()]
    by_name = {line[0]: line for line in lines}
    assert by_name["replicaset.apps/front"][1:4] == ["2", "0", "0"]
    assert by_name["replicaset.apps/front"][-3:] == ["app", "nginx", "app=web"]
    assert by_name["statefulset.apps/db"][1] == "0/1"
    assert by_name["daemonset.apps/agent"][1:7] == ["0", "0", "0", "0", "0", "<none>"]
    headers = [line for line in lines if line[0] == "NAME"]
    assert ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES",
            "SELECTOR"] in headers
    assert ["NAME", "DESIRED", "CURRENT", "READY", "AGE", "CONTAINERS", "IMAGES",
            "SELECTOR"] in headers


def test_kubectl_scale_statefulset_and_replicaset(api):
    create(api, "statefulsets", body("StatefulSet", "cache", serviceName="cache"))
    create(api, "replicasets", body("ReplicaSet", "back"))
    kubectl(api, "scale", "statefulset", "cache", "--replicas=4")
    kubectl(api, "scale", "replicaset", "back", "--replicas=0")
    assert get_json(api, "statefulset", "cache")["spec"]["replicas"] == 4
    assert get_json(api, "replicaset", "back")["spec"]["replicas"] == 0
    response = api.request("PATCH", f"{APPS}/replicasets/back/scale", headers=MERGE,
                           data=json.dumps({"spec": {"replicas": -1}}), **ADMIN)
    assert_status(response, 422, "Invalid", 'Scale.autoscaling "back" is invalid: '
                  "spec.replicas: Invalid value: -1: must be greater than or equal to 0")
    assert get_json(api, "replicaset", "back")["spec"]["replicas"] == 0


def test_statefulset_spec_is_mostly_immutable(api):
    create(api, "statefulsets", body("StatefulSet", "frozen", serviceName="frozen"))
    response = api.request("PATCH", f"{APPS}/statefulsets/frozen", headers=MERGE,
                           data=json.dumps({"spec": {"serviceName": "other"}}), **ADMIN)
    assert_status(response, 422, "Invalid",
                  'StatefulSet.apps "frozen" is invalid: spec: Forbidden: updates to '
                  "statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
                  "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and "
                  "'minReadySeconds' are forbidden")
    response = api.request("PATCH", f"{APPS}/statefulsets/frozen", headers=MERGE,
                           data=json.dumps({"spec": {"minReadySeconds": 5}}), **ADMIN)
    assert response.status_code == 200, response.text
    assert response.json()["metadata"]["generation"] == 2


def test_invalid_objects_name_their_fields(api):
    response = api.request("POST", f"{APPS}/daemonsets", json=body(
        "DaemonSet", "bad", updateStrategy={"type": "RollingUpdate", "rollingUpdate": {
            "maxUnavailable": 0, "maxSurge": 0}}), **ADMIN)
    assert_status(response, 422, "Invalid",
                  'DaemonSet.apps "bad" is invalid: spec.updateStrategy.rollingUpdate.'
                  "maxUnavailable: Required value: cannot be 0 when maxSurge is 0")
    response = api.request("POST", f"{APPS}/statefulsets", json=body(
        "StatefulSet", "dotted.name"), **ADMIN)
    assert_status(response, 422, "Invalid", 'StatefulSet.apps "dotted.name" is invalid: '
                  'metadata.name: Invalid value: "dotted.name": must not contain dots')
    response = api.request("GET", f"{APPS}/statefulsets/dotted.name", **ADMIN)
    assert response.status_code == 404


def test_daemonset_template_generation_and_status(api):
    create(api, "daemonsets", body("DaemonSet", "logs"))
    annotation = "deprecated.daemonset.template.generation"
    response = api.request("PATCH", f"{APPS}/daemonsets/logs", headers=SMP, data=json.dumps(
        {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "busybox"}]}}}}),
        **ADMIN)
    assert response.status_code == 200, response.text
    meta = response.json()["metadata"]
    assert (meta["annotations"][annotation], meta["generation"]) == ("2", 2)
    response = api.request("PATCH", f"{APPS}/daemonsets/logs/status", headers=MERGE,
                           data=json.dumps({"status": {"numberReady": -1}}), **ADMIN)
    assert_status(response, 422, "Invalid", 'DaemonSet.apps "logs" is invalid: '
                  "status.numberReady: Invalid value: -1: must be greater than or equal to 0")


# -- the official Python client ---------------------------------------------------------------

def test_python_client_apps_v1(api):
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    apps = client.AppsV1Api(api.python_client())
    template = client.V1PodTemplateSpec(
        metadata=client.V1ObjectMeta(labels={"app": "py"}),
        spec=client.V1PodSpec(containers=[client.V1Container(name="app", image="nginx")]))
    selector = client.V1LabelSelector(match_labels={"app": "py"})
    created = apps.create_namespaced_deployment(NS, client.V1Deployment(
        metadata=client.V1ObjectMeta(name="py"),
        spec=client.V1DeploymentSpec(selector=selector, template=template)))
    assert created.spec.replicas == 1 and created.spec.progress_deadline_seconds == 600

    scale = apps.patch_namespaced_deployment_scale("py", NS, {"spec": {"replicas": 5}})
    assert (scale.spec.replicas, scale.status.selector) == (5, "app=py")
    assert apps.read_namespaced_deployment_scale("py", NS).spec.replicas == 5

    current = apps.read_namespaced_deployment("py", NS)
    current.status = client.V1DeploymentStatus(replicas=5, ready_replicas=5,
                                               available_replicas=5, updated_replicas=5,
                                               observed_generation=2)
    current.metadata.labels = {"ignored": "by-status"}
    written = apps.replace_namespaced_deployment_status("py", NS, current)
    assert written.status.ready_replicas == 5 and written.metadata.labels is None

    stateful = apps.create_namespaced_stateful_set(NS, client.V1StatefulSet(
        metadata=client.V1ObjectMeta(name="py-db"),
        spec=client.V1StatefulSetSpec(service_name="py-db", selector=selector,
                                      template=template)))
    assert stateful.spec.pod_management_policy == "OrderedReady"
    assert stateful.spec.persistent_volume_claim_retention_policy.when_deleted == "Retain"

    replica_sets = apps.create_namespaced_replica_set(NS, client.V1ReplicaSet(
        metadata=client.V1ObjectMeta(name="py-rs"),
        spec=client.V1ReplicaSetSpec(replicas=2, selector=selector, template=template)))
    assert replica_sets.status.replicas == 0
    listed = apps.list_namespaced_replica_set(NS, field_selector="metadata.name=py-rs")
    assert "py-rs" in [item.metadata.name for item in listed.items]

    revision = apps.create_namespaced_controller_revision(NS, client.V1ControllerRevision(
        metadata=client.V1ObjectMeta(name="py-db-1"), data={"spec": {"a": 1}}, revision=1))
    assert revision.data == {"spec": {"a": 1}}
    with pytest.raises(ApiException) as caught:
        apps.patch_namespaced_controller_revision("py-db-1", NS, {"data": {"spec": {"a": 2}}})
    assert caught.value.status == 422
    assert "data: Invalid value: runtime.Unknown{" in json.loads(caught.value.body)["message"]


def test_field_selectors_are_name_and_namespace(api):
    # ReplicaSets' GetAttrs has status.replicas, but apps/v1 converts no field label: the
    # default conversion refuses it, as kube-apiserver 1.32 does.
    for resource in ("deployments", "replicasets", "statefulsets", "daemonsets",
                     "controllerrevisions"):
        response = api.get(f"{APPS}/{resource}?fieldSelector=status.replicas%3D0", **ADMIN)
        assert_status(response, 400, "BadRequest",
                      '"status.replicas" is not a known field selector: only "metadata.name", '
                      '"metadata.namespace"')
    create(api, "replicasets", body("ReplicaSet", "chosen"))
    response = api.get(f"{APPS}/replicasets?fieldSelector=metadata.name%3Dchosen", **ADMIN)
    assert [item["metadata"]["name"] for item in response.json()["items"]] == ["chosen"]
