"""ResourceQuota end to end: admission refusals with upstream's messages, usage kept by the
quota controller and charged atomically by admission, as kube-apiserver and
kube-controller-manager 1.32 do it."""

import json
import re
import threading
import time

import pytest

from kapiserver.testing import assert_status

ADMIN = dict(user="admin", groups=["system:masters"])


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    process = KapiserverProcess(str(tmp_path_factory.mktemp("quota")), workers=2).start(timeout=120)
    yield process
    process.stop()


def namespace(server, name):
    assert server.request("POST", "/api/v1/namespaces", json={
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
        **ADMIN).status_code == 201
    server.request("POST", f"/api/v1/namespaces/{name}/serviceaccounts", json={
        "apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}}, **ADMIN)


def quota(server, ns, name, hard, **spec):
    response = server.request("POST", f"/api/v1/namespaces/{ns}/resourcequotas", json={
        "apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name},
        "spec": {"hard": hard, **spec}}, **ADMIN)
    assert response.status_code == 201, response.text
    return wait_used(server, ns, name, lambda used: set(used) == set(hard))


def wait_used(server, ns, name, condition, timeout=15):
    deadline = time.monotonic() + timeout
    while True:
        status = server.get(f"/api/v1/namespaces/{ns}/resourcequotas/{name}",
                            **ADMIN).json().get("status") or {}
        if condition(status.get("used") or {}):
            return status
        assert time.monotonic() < deadline, status
        time.sleep(0.1)


def pod(name, resources=None, **spec):
    container = {"name": "c", "image": "nginx"}
    if resources:
        container["resources"] = resources
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [container], **spec}}


def create_pod(server, ns, body):
    return server.request("POST", f"/api/v1/namespaces/{ns}/pods", json=body, **ADMIN)


def test_controller_fills_status_and_kubectl_shows_usage(server):
    namespace(server, "counted")
    for name in ("one", "two"):
        server.kubectl("-n", "counted", "create", "configmap", name, check=True)
    status = quota(server, "counted", "objects", {"pods": "5", "configmaps": "10",
                                                  "count/secrets": "4", "services": "2"})
    # kube-root-ca.crt is a ConfigMap of every namespace too.
    assert status == {"hard": {"configmaps": "10", "count/secrets": "4", "pods": "5",
                               "services": "2"},
                      "used": {"configmaps": "3", "count/secrets": "0", "pods": "0",
                               "services": "0"}}
    assert create_pod(server, "counted", pod("p1")).status_code == 201
    assert create_pod(server, "counted", pod("p2")).status_code == 201
    described = server.kubectl("-n", "counted", "describe", "quota", "objects", check=True)
    lines = [line.split() for line in described.stdout.splitlines()]
    assert ["Name:", "objects"] in lines and ["Namespace:", "counted"] in lines
    assert ["Resource", "Used", "Hard"] in lines
    assert ["pods", "2", "5"] in lines and ["configmaps", "3", "10"] in lines
    # Deleting objects, or a pod finishing, gives their usage back (the controller recounts).
    server.kubectl("-n", "counted", "delete", "configmap", "one", check=True)
    finished = server.request("PATCH", "/api/v1/namespaces/counted/pods/p1/status",
                              json={"status": {"phase": "Succeeded"}}, headers={
                                  "Content-Type": "application/merge-patch+json"}, **ADMIN)
    assert finished.status_code == 200, finished.text
    wait_used(server, "counted", "objects",
              lambda used: used.get("configmaps") == "2" and used.get("pods") == "1")
    got = server.kubectl("-n", "counted", "get", "quota", "objects", "-o", "json", check=True)
    assert json.loads(got.stdout)["status"]["used"] == {
        "configmaps": "2", "count/secrets": "0", "pods": "1", "services": "0"}
    # Changing the hard limits is picked up at once.
    server.kubectl("-n", "counted", "patch", "quota", "objects", "--type=merge", "-p",
                   '{"spec":{"hard":{"count/deployments.apps":"1"}}}', check=True)
    wait_used(server, "counted", "objects", lambda used: "count/deployments.apps" in used)


def test_refusals_word_upstreams_messages(server):
    namespace(server, "limited")
    quota(server, "limited", "q", {"pods": "2"})
    assert create_pod(server, "limited", pod("a")).status_code == 201
    assert create_pod(server, "limited", pod("b")).status_code == 201
    assert_status(create_pod(server, "limited", pod("c")), 403, "Forbidden",
                  'pods "c" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, '
                  'limited: pods=2', {"name": "c", "kind": "pods"})
    result = server.kubectl("-n", "limited", "run", "d", "--image=nginx", "--restart=Never")
    assert result.returncode == 1
    assert 'pods "d" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, ' \
           'limited: pods=2' in result.stderr
    # Validating admission runs once the name is generated: the message names it.
    body = pod("")
    body["metadata"] = {"generateName": "gen-"}
    refused = assert_status(create_pod(server, "limited", body), 403, "Forbidden")
    assert re.fullmatch(r'pods "gen-[a-z0-9]{5}" is forbidden: exceeded quota: q, requested: '
                        r'pods=1, used: pods=2, limited: pods=2', refused["message"])

    namespace(server, "compute")
    quota(server, "compute", "cpu", {"requests.cpu": "1", "limits.memory": "1Gi"})
    assert_status(create_pod(server, "compute", pod("bare")), 403, "Forbidden",
                  'pods "bare" is forbidden: failed quota: cpu: must specify limits.memory '
                  'for: c; requests.cpu for: c')
    ok = {"requests": {"cpu": "600m"}, "limits": {"memory": "512Mi"}}
    assert create_pod(server, "compute", pod("first", ok)).status_code == 201
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    core = client.CoreV1Api(server.python_client())
    with pytest.raises(ApiException) as refused:
        core.create_namespaced_pod("compute", pod("second", ok))
    assert refused.value.status == 403
    assert json.loads(refused.value.body)["message"] == (
        'pods "second" is forbidden: exceeded quota: cpu, requested: requests.cpu=600m, used: '
        'requests.cpu=600m, limited: requests.cpu=1')
    used = core.read_namespaced_resource_quota("cpu", "compute").status.used
    assert used == {"limits.memory": "512Mi", "requests.cpu": "600m"}

    namespace(server, "nodeports")
    quota(server, "nodeports", "svc", {"services.nodeports": "1", "services.loadbalancers": "0"})
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "lb"},
               "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}}
    response = server.request("POST", "/api/v1/namespaces/nodeports/services", json=service,
                              **ADMIN)
    assert_status(response, 403, "Forbidden", 'services "lb" is forbidden: exceeded quota: svc, '
                  'requested: services.loadbalancers=1, used: services.loadbalancers=0, '
                  'limited: services.loadbalancers=0')


def test_scoped_quotas_count_only_their_pods(server):
    namespace(server, "scoped")
    quota(server, "scoped", "best-effort", {"pods": "1"}, scopes=["BestEffort"])
    assert create_pod(server, "scoped", pod("be")).status_code == 201
    burstable = pod("burst", {"requests": {"cpu": "100m"}})
    assert create_pod(server, "scoped", burstable).status_code == 201
    assert_status(create_pod(server, "scoped", pod("be2")), 403, "Forbidden",
                  'pods "be2" is forbidden: exceeded quota: best-effort, requested: pods=1, '
                  'used: pods=1, limited: pods=1')


def test_concurrent_creates_never_share_the_last_unit(server):
    namespace(server, "race")
    quota(server, "race", "q", {"count/configmaps": "6"})  # kube-root-ca.crt takes one
    wait_used(server, "race", "q", lambda used: used.get("count/configmaps") == "1")
    answers = []

    def create(index):
        answers.append(server.request("POST", "/api/v1/namespaces/race/configmaps", json={
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{index}"}},
            **ADMIN))

    threads = [threading.Thread(target=create, args=(i,)) for i in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    codes = sorted(r.status_code for r in answers)
    assert codes == [201] * 5 + [403] * 7, [r.text for r in answers]
    for refused in (r for r in answers if r.status_code == 403):
        assert "exceeded quota: q, requested: count/configmaps=1, used: count/configmaps=6, " \
               "limited: count/configmaps=6" in refused.json()["message"]
    listed = server.get("/api/v1/namespaces/race/configmaps", **ADMIN).json()["items"]
    assert len(listed) == 6
    assert server.get("/api/v1/namespaces/race/resourcequotas/q", **ADMIN).json()[
        "status"]["used"] == {"count/configmaps": "6"}


def test_without_the_controller_status_stays_empty(kapiserver_factory):
    server = kapiserver_factory(config={"controllers": ["*", "-resourcequota"]})
    response = server.request("POST", "/api/v1/namespaces/default/resourcequotas", json={
        "apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"},
        "spec": {"hard": {"pods": "1"}}}, **ADMIN)
    assert response.status_code == 201 and response.json()["status"] == {}
    time.sleep(1.5)
    assert server.get("/api/v1/namespaces/default/resourcequotas/q",
                      **ADMIN).json()["status"] == {}
