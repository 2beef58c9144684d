"""kube-apiserver's default admission plugins end to end, with kubectl and the Python client:
what they add to pods, claims, volumes and Ingresses, the 403s they answer word for word,
and ``--enable-admission-plugins``/``--disable-admission-plugins`` turning them on and off.

The server runs two workers, so a class or LimitRange written through one worker is read
by the other one's informer right after.
"""

import base64
import json
import time

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kapiserver.testing import assert_status

ADMIN = dict(user="admin", groups=["system:masters"])
NS = "admitted"
NOT_READY = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
             "tolerationSeconds": 300}
UNREACHABLE = {"key": "node.kubernetes.io/unreachable", "operator": "Exists",
               "effect": "NoExecute", "tolerationSeconds": 300}
CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"


def ensure_namespace(server, name):
    server.request("POST", "/api/v1/namespaces", json={
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}, **ADMIN)
    # Pods need their service account; the server's controller may not have made it yet.
    server.request("POST", f"/api/v1/namespaces/{name}/serviceaccounts", json={
        "apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}}, **ADMIN)


def pod(name, **spec):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}], **spec}}


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    server = KapiserverProcess(str(tmp_path_factory.mktemp("admission")), workers=2,
                               config={"authorization-mode": ["RBAC"]}).start()
    ensure_namespace(server, NS)
    yield server
    server.stop()


def test_pods_get_tolerations_and_priority(api):
    from kubernetes import client

    api_client = api.python_client()
    core = client.CoreV1Api(api_client)
    created = core.create_namespaced_pod(NS, pod("plain"))
    assert api_client.sanitize_for_serialization(created.spec.tolerations) == [NOT_READY,
                                                                               UNREACHABLE]
    assert (created.spec.priority, created.spec.preemption_policy) == (0, "PreemptLowerPriority")
    assert created.spec.priority_class_name is None
    # A class created through kubectl is there for the very next request (any worker).
    api.kubectl("create", "priorityclass", "high", "--value=1000", "--preemption-policy=Never",
                check=True)
    high = core.create_namespaced_pod(NS, pod("high", priorityClassName="high"))
    assert (high.spec.priority, high.spec.preemption_policy) == (1000, "Never")
    system = core.create_namespaced_pod(NS, pod("critical",
                                                priorityClassName="system-node-critical"))
    assert system.spec.priority == 2000001000


def test_priority_refusals_are_upstreams(api):
    response = api.request("POST", f"/api/v1/namespaces/{NS}/pods",
                           json=pod("lost", priorityClassName="nope"), **ADMIN)
    assert_status(response, 403, "Forbidden",
                  'pods "lost" is forbidden: no PriorityClass with name nope was found',
                  {"name": "lost", "kind": "pods"})
    response = api.request("POST", f"/api/v1/namespaces/{NS}/pods",
                           json=pod("preset", priority=5), **ADMIN)
    assert_status(response, 403, "Forbidden",
                  'pods "preset" is forbidden: the integer value of priority (5) must not be '
                  'provided in pod spec; priority admission controller computed 0 from the '
                  'given PriorityClass name')
    result = api.kubectl("create", "priorityclass", "default-one", "--value=10",
                         "--global-default=true", check=True)
    assert result.returncode == 0
    result = api.kubectl("create", "priorityclass", "default-two", "--value=20",
                         "--global-default=true")
    assert result.returncode != 0
    assert 'priorityclasses.scheduling.k8s.io "default-two" is forbidden: PriorityClass ' \
           'default-one is already marked as default. Only one default can exist' in result.stderr
    body = api.get(f"/api/v1/namespaces/{NS}/pods", **ADMIN).json()
    assert "lost" not in [item["metadata"]["name"] for item in body["items"]]
    created = api.request("POST", f"/api/v1/namespaces/{NS}/pods", json=pod("defaulted"),
                          **ADMIN).json()
    assert (created["spec"]["priorityClassName"], created["spec"]["priority"]) == \
        ("default-one", 10)
    api.kubectl("delete", "priorityclass", "default-one", check=True)


def test_claims_get_the_default_class_and_the_finalizer(api):
    from kubernetes import client

    core = client.CoreV1Api(api.python_client())
    api.kubectl("create", "-f", "-", check=True, input=json.dumps({
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": "standard", "annotations": {
            "storageclass.kubernetes.io/is-default-class": "true"}},
        "provisioner": "example.com/disk"}))
    claim = core.create_namespaced_persistent_volume_claim(NS, {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})
    assert claim.spec.storage_class_name == "standard"
    assert claim.metadata.finalizers == ["kubernetes.io/pvc-protection"]
    api.kubectl("create", "-f", "-", check=True, input=json.dumps({
        "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-admitted"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                 "hostPath": {"path": "/tmp/x"}}}))
    volume = json.loads(api.kubectl("get", "pv", "pv-admitted", "-o", "json",
                                    check=True).stdout)
    assert volume["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"]
    # Growing a claim that is not bound is validation's to refuse, as upstream's.
    result = api.kubectl("patch", "pvc", "data", "-n", NS, "-p",
                         '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}')
    assert 'PersistentVolumeClaim "data" is invalid: spec: Forbidden: spec is immutable after ' \
           'creation except resources.requests and volumeAttributesClassName for bound ' \
           'claims' in result.stderr, result.stderr
    # Bound, it may grow only if its class allows expansion; "standard" does not.
    api.kubectl("patch", "pvc", "data", "-n", NS, "--subresource=status", "--type=merge", "-p",
                '{"status":{"phase":"Bound"}}', check=True)
    result = api.kubectl("patch", "pvc", "data", "-n", NS, "-p",
                         '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}')
    assert 'persistentvolumeclaims "data" is forbidden: only dynamically provisioned pvc can ' \
           'be resized and the storageclass that provisions the pvc must support resize' \
           in result.stderr, result.stderr


def test_limit_range_defaults_show_in_the_created_pod(api):
    ensure_namespace(api, "limited")
    api.kubectl("create", "-n", "limited", "-f", "-", check=True, input=json.dumps({
        "apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "defaults"},
        "spec": {"limits": [{"type": "Container", "default": {"cpu": "200m", "memory": "128Mi"},
                             "defaultRequest": {"cpu": "100m"}, "max": {"cpu": "1"}}]}}))
    api.kubectl("run", "web", "-n", "limited", "--image=nginx:1.27", check=True)
    created = json.loads(api.kubectl("get", "pod", "web", "-n", "limited", "-o", "json",
                                     check=True).stdout)
    assert created["spec"]["containers"][0]["resources"] == {
        "limits": {"cpu": "200m", "memory": "128Mi"},
        "requests": {"cpu": "100m", "memory": "128Mi"}}
    assert created["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu, memory request for container web; cpu, memory limit for "
        "container web")
    assert created["status"]["qosClass"] == "Burstable"
    big = pod("big")
    big["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "2"}}
    response = api.request("POST", "/api/v1/namespaces/limited/pods", json=big, **ADMIN)
    assert_status(response, 403, "Forbidden", 'pods "big" is forbidden: maximum cpu usage per '
                                              'Container is 1, but limit is 2')


def test_ingresses_get_the_default_class(api):
    from kubernetes import client

    networking = client.NetworkingV1Api(api.python_client())
    networking.create_ingress_class({
        "apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
        "metadata": {"name": "nginx", "annotations": {
            "ingressclass.kubernetes.io/is-default-class": "true"}},
        "spec": {"controller": "example.com/ingress"}})
    ingress = networking.create_namespaced_ingress(NS, {
        "apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "web"},
        "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}}})
    assert ingress.spec.ingress_class_name == "nginx"


def pem_request(*organizations) -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.NameAttribute(NameOID.COMMON_NAME, "someone")] + [
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    request = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(names)).sign(
        key, hashes.SHA256())
    return base64.b64encode(request.public_bytes(serialization.Encoding.PEM)).decode()


def csr(name, signer="example.com/signer", *organizations):
    return {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"name": name},
            "spec": {"request": pem_request(*organizations), "signerName": signer,
                     "usages": ["client auth"]}}


def apply_rbac(api, name, rules):
    api.kubectl("apply", "-f", "-", check=True, input=json.dumps({"apiVersion": "v1",
                                                                  "kind": "List", "items": [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": {"name": name}, "rules": rules},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": {"name": name},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                     "name": name},
         "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                       "name": "bob"}]}]}))


def test_approving_needs_the_approve_verb_on_the_signer(api):
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    client.CertificatesV1Api(api.python_client()).create_certificate_signing_request(
        csr("bobs-request"))
    apply_rbac(api, "csr-approval", [
        {"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests"],
         "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["certificates.k8s.io"],
         "resources": ["certificatesigningrequests/approval"], "verbs": ["update"]}])
    message = ('certificatesigningrequests.certificates.k8s.io "bobs-request" is forbidden: '
               'user not permitted to approve requests with signerName "example.com/signer"')
    result = api.kubectl("certificate", "approve", "bobs-request", user="bob", groups=())
    assert result.returncode != 0 and message in result.stderr, result.stderr
    certificates = client.CertificatesV1Api(api.python_client(user="bob", groups=()))
    body = certificates.read_certificate_signing_request("bobs-request")
    body.status.conditions = [client.V1CertificateSigningRequestCondition(
        type="Approved", status="True", reason="ByHand")]
    with pytest.raises(ApiException) as caught:
        certificates.replace_certificate_signing_request_approval("bobs-request", body)
    assert caught.value.status == 403
    assert json.loads(caught.value.body)["message"] == message
    # The verb on the signer's domain is enough.
    apply_rbac(api, "csr-signers", [{"apiGroups": ["certificates.k8s.io"],
                                     "resources": ["signers"],
                                     "resourceNames": ["example.com/*"], "verbs": ["approve"]}])
    api.kubectl("certificate", "approve", "bobs-request", user="bob", groups=(), check=True)
    approved = api.get(f"{CSRS}/bobs-request", **ADMIN).json()
    assert approved["status"]["conditions"][0]["type"] == "Approved"


def test_no_system_masters_client_certificates(api):
    response = api.request("POST", CSRS, json=csr(
        "masters", "kubernetes.io/kube-apiserver-client", "system:masters"), **ADMIN)
    assert_status(response, 403, "Forbidden",
                  'certificatesigningrequests.certificates.k8s.io "masters" is forbidden: use of '
                  'kubernetes.io/kube-apiserver-client signer with system:masters group is not '
                  'allowed', {"name": "masters", "group": "certificates.k8s.io",
                              "kind": "certificatesigningrequests"})


def test_plugins_are_turned_on_and_off(kapiserver_factory):
    server = kapiserver_factory(config={
        "enable-admission-plugins": ["AlwaysPullImages", "DenyServiceExternalIPs"],
        "disable-admission-plugins": ["DefaultTolerationSeconds",
                                      "StorageObjectInUseProtection", "Priority"],
        "default-not-ready-toleration-seconds": 60})
    ensure_namespace(server, NS)
    created = server.request("POST", f"/api/v1/namespaces/{NS}/pods", json=pod("p"),
                             **ADMIN).json()
    assert "tolerations" not in created["spec"] and "priority" not in created["spec"]
    assert created["spec"]["containers"][0]["imagePullPolicy"] == "Always"
    claim = server.request("POST", f"/api/v1/namespaces/{NS}/persistentvolumeclaims", json={
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}},
        **ADMIN).json()
    assert "finalizers" not in claim["metadata"]
    result = server.kubectl("create", "service", "clusterip", "web", "-n", NS, "--tcp=80:80",
                            "--dry-run=client", "-o", "json", check=True)
    service = json.loads(result.stdout)
    service["spec"]["externalIPs"] = ["1.2.3.4"]
    response = server.request("POST", f"/api/v1/namespaces/{NS}/services", json=service, **ADMIN)
    assert_status(response, 403, "Forbidden", 'services "web" is forbidden: Use of external IPs '
                                              'is denied by admission control')


def test_the_toleration_seconds_options(kapiserver_factory):
    server = kapiserver_factory(config={"default-not-ready-toleration-seconds": 60},
                                args=["--default-unreachable-toleration-seconds", "0"])
    ensure_namespace(server, NS)
    created = server.request("POST", f"/api/v1/namespaces/{NS}/pods", json=pod("p"),
                             **ADMIN).json()
    assert created["spec"]["tolerations"] == [dict(NOT_READY, tolerationSeconds=60),
                                              dict(UNREACHABLE, tolerationSeconds=0)]


def test_protected_claims_go_once_unused_and_so_does_their_namespace(api):
    ensure_namespace(api, "short-lived")
    for name in ("idle", "mounted"):
        api.kubectl("create", "-n", "short-lived", "-f", "-", check=True, input=json.dumps({
            "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "1Gi"}}}}))
    runner = pod("runner", nodeName="node-1",
                 volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "mounted"}}])
    api.kubectl("create", "-n", "short-lived", "-f", "-", input=json.dumps(runner), check=True)
    # Nothing mounts "idle": kubectl's wait sees it go.
    api.kubectl("delete", "pvc", "idle", "-n", "short-lived", "--timeout=30s", check=True)
    api.kubectl("delete", "pvc", "mounted", "-n", "short-lived", "--wait=false", check=True)
    kept = json.loads(api.kubectl("get", "pvc", "mounted", "-n", "short-lived", "-o", "json",
                                  check=True).stdout)
    assert kept["metadata"]["deletionTimestamp"]
    assert kept["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    # The namespace controller deletes the pod gracefully: it is bound to a node, so it
    # waits for that node's kubelet, and the claim stays in use meanwhile.
    api.kubectl("delete", "namespace", "short-lived", "--wait=false", check=True)
    deadline = time.monotonic() + 30
    while not api.get("/api/v1/namespaces/short-lived/pods/runner",
                      **ADMIN).json()["metadata"].get("deletionTimestamp"):
        assert time.monotonic() < deadline, "the namespace controller left the pod alone"
        time.sleep(0.2)
    assert api.get("/api/v1/namespaces/short-lived/persistentvolumeclaims/mounted",
                   **ADMIN).status_code == 200
    # The kubelet would confirm the pod's end with a delete of grace period 0.
    api.kubectl("delete", "pod", "runner", "-n", "short-lived", "--grace-period=0", "--force",
                check=True)
    api.kubectl("wait", "--for=delete", "namespace/short-lived", "--timeout=60s", check=True)
    assert api.get("/api/v1/namespaces/short-lived", **ADMIN).status_code == 404


def test_event_rate_limit_from_the_admission_configuration(kapiserver_factory, tmp_path):
    config = tmp_path / "admission.yaml"
    config.write_text("""apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: EventRateLimit
  configuration:
    apiVersion: eventratelimit.admission.k8s.io/v1alpha1
    kind: Configuration
    limits:
    - {type: Namespace, qps: 1, burst: 2}
""")
    server = kapiserver_factory(config={"enable-admission-plugins": ["EventRateLimit"],
                                        "admission-control-config-file": str(config)})
    ensure_namespace(server, NS)

    def event(name):
        return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name},
                "involvedObject": {"kind": "Pod", "namespace": NS, "name": "p"},
                "reason": "Test", "message": "m"}

    responses = [server.request("POST", f"/api/v1/namespaces/{NS}/events", json=event(f"e{i}"),
                                **ADMIN) for i in range(4)]
    codes = [response.status_code for response in responses]
    # Two in a burst, perhaps one more a second later; never all four.
    assert codes[:2] == [201, 201] and 429 in codes, codes
    assert_status(responses[codes.index(429)], 429, "TooManyRequests",
                  f"Too many requests: Too many requests: limit reached on type Namespace for "
                  f"key {NS}")


def test_event_rate_limit_needs_its_configuration(tmp_path):
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-m", "kapiserver", "serve", "--data-dir",
                             str(tmp_path / "data"), "--enable-admission-plugins",
                             "EventRateLimit"], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "--admission-control-config-file: EventRateLimit: a configuration (kind: " \
           "Configuration, apiVersion: eventratelimit.admission.k8s.io/v1alpha1) with its " \
           "limits is required" in result.stderr
    assert not (tmp_path / "data").exists()
