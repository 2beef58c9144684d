"""The workload commands a user runs against kube-apiserver, with the real kubectl and the
official Python client: create deployment, run, expose, create job/cronjob, scale, set
image, autoscale, create pdb, cordon/uncordon, drain, get all, explain, and apply of a
real multi-document manifest — applied twice (unchanged) and diffed (no difference)."""

import json
import textwrap
import time

import pytest

ADMIN = dict(user="admin", groups=["system:masters"])
NS = "shop"
MANIFEST = textwrap.dedent("""\
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: shop-config, namespace: shop}
    data: {MODE: production}
    ---
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: shop, namespace: shop, labels: {app: shop}}
    spec:
      replicas: 2
      selector: {matchLabels: {app: shop}}
      template:
        metadata: {labels: {app: shop}}
        spec:
          containers:
          - name: web
            image: nginx:1.27
            ports: [{containerPort: 80, name: http}]
            envFrom: [{configMapRef: {name: shop-config}}]
            resources:
              requests: {cpu: 100m, memory: 128Mi}
              limits: {cpu: 500m, memory: 256Mi}
            readinessProbe: {httpGet: {path: /, port: http}}
    ---
    apiVersion: v1
    kind: Service
    metadata: {name: shop, namespace: shop}
    spec:
      selector: {app: shop}
      ports: [{name: http, port: 80, targetPort: http}]
    ---
    apiVersion: networking.k8s.io/v1
    kind: Ingress
    metadata: {name: shop, namespace: shop}
    spec:
      rules:
      - host: shop.example.com
        http:
          paths:
          - path: /
            pathType: Prefix
            backend: {service: {name: shop, port: {name: http}}}
    ---
    apiVersion: autoscaling/v2
    kind: HorizontalPodAutoscaler
    metadata: {name: shop, namespace: shop}
    spec:
      scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: shop}
      minReplicas: 2
      maxReplicas: 6
      metrics:
      - type: Resource
        resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
    ---
    apiVersion: policy/v1
    kind: PodDisruptionBudget
    metadata: {name: shop, namespace: shop}
    spec:
      minAvailable: 1
      selector: {matchLabels: {app: shop}}
    """)


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    server = KapiserverProcess(str(tmp_path_factory.mktemp("kubectl-workloads")),
                               workers=2).start()
    server.kubectl("create", "namespace", NS, check=True)
    # The default ServiceAccount, as kube-controller-manager makes it.
    server.kubectl("-n", NS, "create", "serviceaccount", "default")
    yield server
    server.stop()


def kubectl(api, *args, check=True, **kwargs):
    result = api.kubectl("-n", NS, *args, **kwargs)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def test_imperative_workload_commands(api):
    assert kubectl(api, "create", "deployment", "web", "--image=nginx").stdout == \
        "deployment.apps/web created\n"
    assert kubectl(api, "run", "solo", "--image=nginx", "--labels=app=solo").stdout == \
        "pod/solo created\n"
    assert kubectl(api, "expose", "deployment", "web", "--port=80").stdout == \
        "service/web exposed\n"
    assert kubectl(api, "create", "job", "once", "--image=busybox").stdout == \
        "job.batch/once created\n"
    assert kubectl(api, "create", "cronjob", "nightly", "--image=busybox",
                   "--schedule=0 3 * * *").stdout == "cronjob.batch/nightly created\n"
    assert kubectl(api, "scale", "deployment", "web", "--replicas=3").stdout == \
        "deployment.apps/web scaled\n"
    assert kubectl(api, "set", "image", "deployment/web", "nginx=nginx:1.27").stdout == \
        "deployment.apps/web image updated\n"
    assert kubectl(api, "autoscale", "deployment", "web", "--max=5").stdout == \
        "horizontalpodautoscaler.autoscaling/web autoscaled\n"
    assert kubectl(api, "create", "pdb", "web", "--selector=app=web",
                   "--min-available=1").stdout == "poddisruptionbudget.policy/web created\n"

    deployment = json.loads(kubectl(api, "get", "deployment", "web", "-o", "json").stdout)
    assert deployment["spec"]["replicas"] == 3
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
    assert deployment["metadata"]["generation"] == 3
    service = json.loads(kubectl(api, "get", "service", "web", "-o", "json").stdout)
    assert service["spec"]["selector"] == {"app": "web"}
    assert service["spec"]["ports"][0]["targetPort"] == 80
    job = json.loads(kubectl(api, "get", "job", "once", "-o", "json").stdout)
    assert job["spec"]["template"]["metadata"]["labels"]["job-name"] == "once"
    hpa = json.loads(kubectl(api, "get", "hpa", "web", "-o", "json").stdout)
    assert hpa["spec"]["maxReplicas"] == 5 and hpa["spec"]["scaleTargetRef"]["name"] == "web"

    listed = kubectl(api, "get", "all").stdout
    for name in ("pod/solo", "service/web", "deployment.apps/web", "cronjob.batch/nightly",
                 "job.batch/once", "horizontalpodautoscaler.autoscaling/web"):
        assert name in listed, name


def test_explain_reads_every_kinds_schema(api):
    assert "maxSurge" in kubectl(api, "explain", "deployment.spec.strategy.rollingUpdate").stdout
    assert "backoffLimit" in kubectl(api, "explain", "job.spec").stdout
    assert "minAvailable" in kubectl(api, "explain", "pdb.spec").stdout
    assert "pathType" in kubectl(api, "explain", "ingress.spec.rules.http.paths").stdout


def test_apply_of_a_multi_document_manifest_is_then_unchanged_and_without_diff(api, tmp_path):
    manifest = tmp_path / "shop.yaml"
    manifest.write_text(MANIFEST)
    created = kubectl(api, "apply", "-f", str(manifest)).stdout.splitlines()
    assert created == ["configmap/shop-config created", "deployment.apps/shop created",
                       "service/shop created", "ingress.networking.k8s.io/shop created",
                       "horizontalpodautoscaler.autoscaling/shop created",
                       "poddisruptionbudget.policy/shop created"]
    again = kubectl(api, "apply", "-f", str(manifest)).stdout.splitlines()
    # A PodDisruptionBudget's selector has patch strategy "replace": kubectl's three-way
    # patch is never empty for it, so kubectl says "configured" against kube-apiserver too.
    assert again == [line.replace("created", "configured" if "poddisruptionbudget" in line
                                  else "unchanged") for line in created]
    diff = api.kubectl("-n", NS, "diff", "-f", str(manifest))
    assert (diff.returncode, diff.stdout) == (0, ""), diff.stdout + diff.stderr
    server_side = kubectl(api, "apply", "--server-side", "-f", str(manifest)).stdout
    assert server_side.count("serverside-applied") == 6
    changed = manifest.read_text().replace("replicas: 2", "replicas: 4")
    manifest.write_text(changed)
    assert "deployment.apps/shop configured" in kubectl(
        api, "apply", "-f", str(manifest), "--server-side=false").stdout


def test_the_python_client_reads_and_writes_the_workload_kinds(api):
    from kubernetes import client

    with api.python_client() as api_client:
        apps = client.AppsV1Api(api_client)
        batch = client.BatchV1Api(api_client)
        body = client.V1Deployment(
            metadata=client.V1ObjectMeta(name="pyweb"),
            spec=client.V1DeploymentSpec(
                selector=client.V1LabelSelector(match_labels={"app": "pyweb"}),
                template=client.V1PodTemplateSpec(
                    metadata=client.V1ObjectMeta(labels={"app": "pyweb"}),
                    spec=client.V1PodSpec(containers=[client.V1Container(
                        name="web", image="nginx")]))))
        created = apps.create_namespaced_deployment(NS, body)
        assert created.spec.strategy.type == "RollingUpdate"
        assert created.spec.template.spec.containers[0].image_pull_policy == "Always"
        scale = apps.patch_namespaced_deployment_scale("pyweb", NS, {"spec": {"replicas": 4}})
        assert scale.spec.replicas == 4 and scale.status.selector == "app=pyweb"
        assert "pyweb" in [d.metadata.name for d in apps.list_namespaced_deployment(NS).items]
        job = batch.create_namespaced_job(NS, client.V1Job(
            metadata=client.V1ObjectMeta(name="pyjob"),
            spec=client.V1JobSpec(template=client.V1PodTemplateSpec(spec=client.V1PodSpec(
                restart_policy="Never",
                containers=[client.V1Container(name="c", image="busybox")])))))
        assert job.spec.backoff_limit == 6 and job.spec.completion_mode == "NonIndexed"


def test_cordon_drain_and_uncordon_a_node(api):
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "worker-1", "labels": {"kubernetes.io/hostname": "worker-1"}}}
    assert api.request("POST", "/api/v1/nodes", json=node, **ADMIN).status_code == 201
    for name in ("drained-a", "drained-b"):
        kubectl(api, "run", name, "--image=nginx")
        binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
                   "target": {"apiVersion": "v1", "kind": "Node", "name": "worker-1"}}
        response = api.request("POST", f"/api/v1/namespaces/{NS}/pods/{name}/binding",
                               json=binding, **ADMIN)
        assert response.status_code == 201, response.text
    assert api.kubectl("cordon", "worker-1", check=True).stdout == "node/worker-1 cordoned\n"
    assert json.loads(api.kubectl("get", "node", "worker-1", "-o", "json").stdout)[
        "spec"]["unschedulable"] is True
    drained = api.kubectl("drain", "worker-1", "--force", "--grace-period=0",
                          "--timeout=30s", timeout=60)
    assert drained.returncode == 0, drained.stderr
    assert "evicting pod shop/drained-a" in drained.stderr + drained.stdout
    assert "node/worker-1 drained" in drained.stdout
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        names = kubectl(api, "get", "pods", "-o", "name").stdout.split()
        if "pod/drained-a" not in names and "pod/drained-b" not in names:
            break
        time.sleep(0.2)
    assert "pod/drained-a" not in names and "pod/drained-b" not in names
    assert api.kubectl("uncordon", "worker-1", check=True).stdout == \
        "node/worker-1 uncordoned\n"
