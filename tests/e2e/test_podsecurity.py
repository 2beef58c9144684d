"""PodSecurity end to end: namespace labels enforce, warn and audit, as kube-apiserver 1.32.

Driven by kubectl and the official Python client against a real server whose
``--admission-control-config-file`` exempts one namespace and one user.
"""

import json
import time

import pytest
import yaml

from kapiserver.testing import assert_status

ADMIN = dict(user="admin", groups=["system:masters"])
PROBE = "tests.support.probe_plugin"
RESTRICTED_DETAIL = (
    'allowPrivilegeEscalation != false (container "c" must set '
    'securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" '
    'must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or '
    'container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or '
    'container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or '
    '"Localhost")')


def pod(name, **spec):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}


HARDENED = {"securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [{"name": "c", "image": "nginx", "securityContext": {
                "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}}]}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    workdir = tmp_path_factory.mktemp("podsecurity")
    config_file = workdir / "admission.yaml"
    config_file.write_text(yaml.safe_dump({
        "apiVersion": "apiserver.config.k8s.io/v1", "kind": "AdmissionConfiguration",
        "plugins": [{"name": "PodSecurity", "configuration": {
            "apiVersion": "pod-security.admission.config.k8s.io/v1",
            "kind": "PodSecurityConfiguration",
            "defaults": {"enforce": "privileged", "audit": "baseline"},
            "exemptions": {"namespaces": ["exempt"], "usernames": ["ci-bot"]}}}]}))
    audit_file = workdir / "audit.jsonl"
    process = KapiserverProcess(str(workdir / "server"), {
        "admission-control-config-file": str(config_file),
        "probe-audit-file": str(audit_file)}, plugins=[PROBE], workers=2).start(timeout=120)
    process.audit_file = audit_file
    yield process
    process.stop()


def namespace(server, name, **labels):
    labels = {f"pod-security.kubernetes.io/{k.replace('_', '-')}": v for k, v in labels.items()}
    response = server.request("POST", "/api/v1/namespaces", json={
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}},
        **ADMIN)
    assert response.status_code == 201, response.text
    # Pods need their service account (the controller makes it soon; do not wait for it).
    server.request("POST", f"/api/v1/namespaces/{name}/serviceaccounts", json={
        "apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}}, **ADMIN)


def warnings(response) -> list[str]:
    return [w[len('299 - "'):-1].replace('\\"', '"')
            for w in response.headers.get_all("Warning")] \
        if hasattr(response.headers, "get_all") else \
        [w.strip()[len('299 - "'):-1].replace('\\"', '"')
         for w in response.raw.headers.getlist("Warning")]


def pod_security(event: dict) -> dict:
    """The event's PodSecurity annotations (authorization adds its own beside them)."""
    return {key: value for key, value in event["annotations"].items()
            if key.startswith("pod-security.kubernetes.io/")}


def audit_events(server, uri_part: str) -> list[dict]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if server.audit_file.exists():
            events = [json.loads(line) for line in server.audit_file.read_text().splitlines()]
            found = [e for e in events if uri_part in e["requestURI"] and e["verb"] == "create"]
            if found:
                return found
        time.sleep(0.1)
    return []


def test_enforce_refuses_with_upstreams_message(server):
    namespace(server, "enforced", enforce="restricted")
    response = server.request("POST", "/api/v1/namespaces/enforced/pods", json=pod("plain"),
                              **ADMIN)
    assert_status(response, 403, "Forbidden",
                  f'pods "plain" is forbidden: violates PodSecurity "restricted:latest": '
                  f"{RESTRICTED_DETAIL}",
                  {"name": "plain", "kind": "pods"})
    # kubectl shows the same message; a hardened pod is admitted.
    result = server.kubectl("-n", "enforced", "run", "web", "--image=nginx",
                            "--restart=Never")
    assert result.returncode == 1
    assert 'pods "web" is forbidden: violates PodSecurity "restricted:latest": ' \
           'allowPrivilegeEscalation != false (container "web" must set ' in result.stderr
    hardened = pod("hardened", **HARDENED)
    created = server.kubectl("-n", "enforced", "create", "-f", "-", input=json.dumps(hardened))
    assert created.returncode == 0, created.stderr
    assert "Warning" not in created.stderr
    # The Python client raises the 403 with the Status.
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    core = client.CoreV1Api(server.python_client())
    with pytest.raises(ApiException) as refused:
        core.create_namespaced_pod("enforced", pod("py"))
    assert refused.value.status == 403
    assert json.loads(refused.value.body)["message"].startswith(
        'pods "py" is forbidden: violates PodSecurity "restricted:latest": ')


def test_baseline_enforce_lets_restricted_violations_through_but_not_host_access(server):
    namespace(server, "base", enforce="baseline", enforce_version="v1.31")
    assert server.request("POST", "/api/v1/namespaces/base/pods", json=pod("plain"),
                          **ADMIN).status_code == 201
    response = server.request("POST", "/api/v1/namespaces/base/pods",
                              json=pod("host", hostNetwork=True), **ADMIN)
    assert_status(response, 403, "Forbidden", 'pods "host" is forbidden: violates PodSecurity '
                  '"baseline:v1.31": host namespaces (hostNetwork=true)')


def test_warn_sends_warning_headers_and_admits(server):
    namespace(server, "warned", warn="restricted")
    response = server.request("POST", "/api/v1/namespaces/warned/pods", json=pod("p"), **ADMIN)
    assert response.status_code == 201, response.text
    assert warnings(response) == [f'would violate PodSecurity "restricted:latest": '
                                  f"{RESTRICTED_DETAIL}"]
    result = server.kubectl("-n", "warned", "run", "k", "--image=nginx", "--restart=Never")
    assert result.returncode == 0, result.stderr
    assert 'Warning: would violate PodSecurity "restricted:latest": allowPrivilegeEscalation ' \
           '!= false (container "k" must set' in result.stderr


def test_workloads_are_warned_never_refused(server):
    namespace(server, "workloads", enforce="restricted")
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                  "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {
                      "metadata": {"labels": {"app": "web"}},
                      "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    response = server.request("POST", "/apis/apps/v1/namespaces/workloads/deployments",
                              json=deployment, **ADMIN)
    assert response.status_code == 201, response.text
    # Warn follows a stricter enforce label when it has none of its own.
    assert warnings(response) == [f'would violate PodSecurity "restricted:latest": '
                                  f"{RESTRICTED_DETAIL}"]
    cronjob = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "tick"},
               "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {
                   "spec": {"restartPolicy": "Never", "hostPID": True,
                            "containers": [{"name": "c", "image": "busybox"}]}}}}}}
    result = server.kubectl("-n", "workloads", "create", "-f", "-", input=json.dumps(cronjob))
    assert result.returncode == 0, result.stderr
    assert 'Warning: would violate PodSecurity "restricted:latest": host namespaces ' \
           '(hostPID=true), allowPrivilegeEscalation != false' in result.stderr


def test_audit_annotates_the_request(server):
    namespace(server, "audited", audit="restricted")
    response = server.request("POST", "/api/v1/namespaces/audited/pods", json=pod("a"), **ADMIN)
    assert response.status_code == 201 and not warnings(response)
    (event,) = audit_events(server, "/namespaces/audited/pods")
    assert event["annotations"]["authorization.k8s.io/decision"] == "allow"
    assert pod_security(event) == {
        "pod-security.kubernetes.io/enforce-policy": "privileged:latest",
        "pod-security.kubernetes.io/audit-violations":
            f'would violate PodSecurity "restricted:latest": {RESTRICTED_DETAIL}'}
    # The configured default audit level is baseline: an unlabelled namespace audits too.
    namespace(server, "plain")
    server.request("POST", "/api/v1/namespaces/plain/pods", json=pod("h", hostIPC=True),
                   **ADMIN)
    (event,) = audit_events(server, "/namespaces/plain/pods")
    assert event["annotations"]["pod-security.kubernetes.io/audit-violations"] == \
        'would violate PodSecurity "baseline:latest": host namespaces (hostIPC=true)'


def test_label_changes_warn_of_existing_pods_and_bad_labels_are_invalid(server):
    namespace(server, "relabel")
    for name in ("a", "b", "c"):
        assert server.request("POST", "/api/v1/namespaces/relabel/pods", json=pod(name),
                              **ADMIN).status_code == 201
    server.request("POST", "/api/v1/namespaces/relabel/pods",
                   json=pod("host", hostNetwork=True), **ADMIN)
    result = server.kubectl("label", "ns", "relabel",
                            "pod-security.kubernetes.io/enforce=baseline")
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        'Warning: existing pods in namespace "relabel" violate the new PodSecurity enforce '
        'level "baseline:latest"',
        "Warning: host: host namespaces"]
    result = server.kubectl("label", "--overwrite", "ns", "relabel",
                            "pod-security.kubernetes.io/enforce=restricted")
    assert "Warning: a (and 2 other pods): allowPrivilegeEscalation != false, unrestricted " \
           "capabilities, runAsNonRoot != true, seccompProfile" in result.stderr
    result = server.kubectl("label", "--overwrite", "ns", "relabel",
                            "pod-security.kubernetes.io/enforce=strict")
    assert result.returncode == 1
    assert 'The Namespace "relabel" is invalid: metadata.labels[pod-security.kubernetes.io/' \
           'enforce]: Invalid value: "strict": must be one of privileged, baseline, ' \
           'restricted' in result.stderr


def test_exempt_namespaces_and_users(server):
    namespace(server, "exempt")
    response = server.request("PATCH", "/api/v1/namespaces/exempt", json={"metadata": {
        "labels": {"pod-security.kubernetes.io/enforce": "restricted"}}},
        headers={"Content-Type": "application/merge-patch+json"}, **ADMIN)
    assert warnings(response) == ['namespace "exempt" is exempt from Pod Security, and the '
                                  'policy (enforce=restricted:latest) will be ignored']
    assert server.request("POST", "/api/v1/namespaces/exempt/pods", json=pod("p"),
                          **ADMIN).status_code == 201
    namespace(server, "strict", enforce="restricted")
    response = server.request("POST", "/api/v1/namespaces/strict/pods", json=pod("bot"),
                              user="ci-bot", groups=["system:masters"])
    assert response.status_code == 201, response.text
    (event,) = audit_events(server, "/namespaces/strict/pods")
    assert pod_security(event) == {"pod-security.kubernetes.io/exempt": "user"}
