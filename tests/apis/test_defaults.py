"""Defaults of pod specs and pod templates (kapiserver.apis.core.defaults)."""

import copy
import json
import pathlib

import pytest

from kapiserver.apis.core import defaults
from kapiserver.apis.core.imageref import default_pull_policy, parse_image_name

KINDS = pathlib.Path("/work/shared/reference/wide/kinds")
# Fields admission plugins add to a created Pod (ServiceAccount, DefaultTolerationSeconds,
# Priority); they are no defaults.
ADMISSION_FIELDS = ("volumes", "serviceAccountName", "serviceAccount", "tolerations",
                    "priority", "preemptionPolicy")


def _transcript(resource):
    path = KINDS / f"{resource}-create.json"
    if not path.exists():
        pytest.skip("reference transcripts not available")
    return json.loads(path.read_text())


def _template(resource, obj):
    if resource == "podtemplates":
        return obj["template"]
    if resource == "cronjobs":
        return obj["spec"]["jobTemplate"]["spec"]["template"]
    return obj["spec"]["template"]


def _same_json(left, right):
    """Equal as Go's JSON sees them: empty objects aside, key order ignored."""
    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if v != {} or k == "securityContext"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value
    return strip(left) == strip(right)


@pytest.mark.parametrize("resource", ["podtemplates", "replicationcontrollers", "deployments",
                                      "replicasets", "statefulsets", "daemonsets", "jobs",
                                      "cronjobs"])
def test_template_defaults_match_kube_apiserver(resource):
    transcript = _transcript(resource)
    template = copy.deepcopy(_template(resource, transcript["request"]["body"]))
    defaults.set_pod_template_spec_defaults(template)
    want = _template(resource, transcript["response"]["body"])["spec"]
    assert _same_json(template["spec"], want)
    assert "enableServiceLinks" not in template["spec"]


def test_pod_defaults_match_kube_apiserver():
    transcript = _transcript("pods")
    pod = copy.deepcopy(transcript["request"]["body"])
    defaults.set_pod_defaults(pod)
    want = dict(transcript["response"]["body"]["spec"])
    for key in ADMISSION_FIELDS:
        want.pop(key)
    want["containers"] = [{k: v for k, v in c.items() if k != "volumeMounts"}
                          for c in want["containers"]]
    assert _same_json(pod["spec"], want)


@pytest.mark.parametrize("image, policy", [
    ("nginx", "Always"),
    ("nginx:latest", "Always"),
    ("nginx:1.27", "IfNotPresent"),
    ("registry.example.com:5000/team/app", "Always"),
    ("registry.example.com:5000/team/app:v2", "IfNotPresent"),
    ("nginx@sha256:" + "a" * 64, "IfNotPresent"),
    ("nginx:latest@sha256:" + "a" * 64, "Always"),
    ("Nginx", "IfNotPresent"),  # unparseable: no tag
    ("", "IfNotPresent"),
    ("a" * 64, "IfNotPresent"),  # an image ID, not a name
])
def test_image_pull_policy_by_tag(image, policy):
    assert default_pull_policy(image) == policy
    container = {"name": "c", "image": image}
    defaults.set_container_defaults(container)
    assert container["imagePullPolicy"] == policy


def test_image_names_normalize_as_docker_does():
    assert parse_image_name("nginx").repository == "docker.io/library/nginx"
    assert parse_image_name("index.docker.io/x/y:1").repository == "docker.io/x/y"
    assert parse_image_name("localhost/app").repository == "localhost/app"


def test_explicit_container_fields_are_kept():
    container = {"name": "c", "image": "nginx", "imagePullPolicy": "Never",
                 "terminationMessagePath": "/tmp/x",
                 "terminationMessagePolicy": "FallbackToLogsOnError"}
    before = dict(container)
    defaults.set_container_defaults(container)
    assert container == before


def test_container_ports_env_probes_and_lifecycle():
    container = {
        "name": "c", "image": "x:1",
        "ports": [{"containerPort": 80}, {"containerPort": 53, "protocol": "UDP"}],
        "env": [{"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                {"name": "V", "value": "v"}],
        "livenessProbe": {"httpGet": {"port": 80}},
        "readinessProbe": {"tcpSocket": {"port": 80}, "periodSeconds": 5},
        "startupProbe": {"grpc": {"port": 9000}},
        "lifecycle": {"preStop": {"httpGet": {"port": 80, "path": "/stop"}},
                      "postStart": {"exec": {"command": ["true"]}}},
    }
    defaults.set_container_defaults(container)
    assert [p["protocol"] for p in container["ports"]] == ["TCP", "UDP"]
    assert container["env"][0]["valueFrom"]["fieldRef"]["apiVersion"] == "v1"
    assert container["livenessProbe"] == {
        "httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1,
        "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
    assert container["readinessProbe"]["periodSeconds"] == 5
    assert container["startupProbe"]["grpc"] == {"port": 9000, "service": ""}
    assert container["lifecycle"]["preStop"]["httpGet"] == {"port": 80, "path": "/stop",
                                                            "scheme": "HTTP"}
    assert container["lifecycle"]["postStart"] == {"exec": {"command": ["true"]}}


def test_volume_sources_defaults():
    spec = {"containers": [], "volumes": [
        {"name": "none"},
        {"name": "hp", "hostPath": {"path": "/x"}},
        {"name": "s", "secret": {"secretName": "s"}},
        {"name": "cm", "configMap": {"name": "c", "defaultMode": 0o400}},
        {"name": "d", "downwardAPI": {"items": [{"path": "n", "fieldRef": {
            "fieldPath": "metadata.name"}}]}},
        {"name": "p", "projected": {"sources": [
            {"serviceAccountToken": {"path": "token"}},
            {"downwardAPI": {"items": [{"path": "ns", "fieldRef": {
                "fieldPath": "metadata.namespace"}}]}}]}},
        {"name": "i", "iscsi": {"targetPortal": "t", "iqn": "iqn.2001-04.com.x:y", "lun": 0}},
        {"name": "r", "rbd": {"monitors": ["m"], "image": "i"}},
        {"name": "a", "azureDisk": {"diskName": "d", "diskURI": "u"}},
        {"name": "sc", "scaleIO": {"gateway": "g", "system": "s", "secretRef": {}}},
        {"name": "e", "ephemeral": {"volumeClaimTemplate": {"spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "0.0001"}}}}}},
    ]}
    defaults.set_pod_spec_defaults(spec)
    volumes = {v["name"]: v for v in spec["volumes"]}
    assert volumes["none"]["emptyDir"] == {}
    assert volumes["hp"]["hostPath"]["type"] == ""
    assert volumes["s"]["secret"]["defaultMode"] == 420
    assert volumes["cm"]["configMap"]["defaultMode"] == 0o400
    assert volumes["d"]["downwardAPI"]["defaultMode"] == 420
    assert volumes["d"]["downwardAPI"]["items"][0]["fieldRef"]["apiVersion"] == "v1"
    projected = volumes["p"]["projected"]
    assert projected["defaultMode"] == 420
    assert projected["sources"][0]["serviceAccountToken"]["expirationSeconds"] == 3600
    assert projected["sources"][1]["downwardAPI"]["items"][0]["fieldRef"]["apiVersion"] == "v1"
    assert volumes["i"]["iscsi"]["iscsiInterface"] == "default"
    assert volumes["r"]["rbd"] == {"monitors": ["m"], "image": "i", "pool": "rbd",
                                   "user": "admin", "keyring": "/etc/ceph/keyring"}
    assert volumes["a"]["azureDisk"] == {"diskName": "d", "diskURI": "u",
                                         "cachingMode": "ReadWrite", "fsType": "ext4",
                                         "readOnly": False, "kind": "Shared"}
    assert volumes["sc"]["scaleIO"]["storageMode"] == "ThinProvisioned"
    assert volumes["sc"]["scaleIO"]["fsType"] == "xfs"
    claim = volumes["e"]["ephemeral"]["volumeClaimTemplate"]["spec"]
    assert claim["volumeMode"] == "Filesystem"
    assert claim["resources"]["requests"]["storage"] == "1m"


def test_pod_spec_defaults_keep_given_values():
    spec = {"containers": [{"name": "c", "image": "i"}], "dnsPolicy": "Default",
            "restartPolicy": "Never", "securityContext": {"runAsUser": 1},
            "terminationGracePeriodSeconds": 0, "schedulerName": "mine"}
    defaults.set_pod_spec_defaults(spec)
    assert (spec["dnsPolicy"], spec["restartPolicy"], spec["securityContext"],
            spec["terminationGracePeriodSeconds"], spec["schedulerName"]) == (
        "Default", "Never", {"runAsUser": 1}, 0, "mine")


def test_pod_requests_default_to_limits_only_for_pods():
    def spec():
        return {"containers": [{"name": "c", "image": "i", "resources": {
            "limits": {"cpu": "500m", "memory": "1Gi"}, "requests": {"cpu": "100m"}}}],
            "initContainers": [{"name": "i", "image": "i", "resources": {
                "limits": {"memory": "64Mi"}}}]}
    pod = {"spec": spec()}
    defaults.set_pod_defaults(pod)
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "100m",
                                                                     "memory": "1Gi"}
    assert pod["spec"]["initContainers"][0]["resources"]["requests"] == {"memory": "64Mi"}
    assert pod["spec"]["enableServiceLinks"] is True
    template = {"metadata": {}, "spec": spec()}
    defaults.set_pod_template_spec_defaults(template)
    assert template["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "100m"}
    assert "requests" not in template["spec"]["initContainers"][0]["resources"]


def test_host_network_ports_only_for_pods():
    def spec():
        return {"hostNetwork": True, "containers": [{"name": "c", "image": "i", "ports": [
            {"containerPort": 8080}, {"containerPort": 9090, "hostPort": 9090}]}]}
    pod = {"spec": spec()}
    defaults.set_pod_defaults(pod)
    assert [p["hostPort"] for p in pod["spec"]["containers"][0]["ports"]] == [8080, 9090]
    template = {"spec": spec()}
    defaults.set_pod_template_spec_defaults(template)
    assert "hostPort" not in template["spec"]["containers"][0]["ports"][0]


def test_enable_service_links_kept_when_false():
    pod = {"spec": {"containers": [], "enableServiceLinks": False}}
    defaults.set_pod_defaults(pod)
    assert pod["spec"]["enableServiceLinks"] is False


@pytest.mark.parametrize("given, stored", [
    ("100m", "100m"), ("0.5", "500m"), ("1000m", "1"), ("1024Mi", "1Gi"), ("0.0001", "1m"),
    ("100u", "1m"), ("1.5Gi", "1536Mi"), (2, "2"), ("1e3", "1e3"), ("-0.0001", "-1m"),
])
def test_resource_lists_round_up_and_canonicalize(given, stored):
    container = {"name": "c", "image": "i", "resources": {"limits": {"cpu": given}}}
    defaults.set_container_defaults(container)
    assert container["resources"]["limits"]["cpu"] == stored


def test_unparseable_quantities_are_left_for_validation():
    resources = {"cpu": "lots", "memory": "1Gi"}
    defaults.set_resource_list_defaults(resources)
    assert resources == {"cpu": "lots", "memory": "1Gi"}


def test_overhead_and_ephemeral_containers():
    spec = {"containers": [], "overhead": {"cpu": "0.25"},
            "ephemeralContainers": [{"name": "debug", "image": "busybox"}]}
    defaults.set_pod_spec_defaults(spec)
    assert spec["overhead"] == {"cpu": "250m"}
    assert spec["ephemeralContainers"][0]["imagePullPolicy"] == "Always"
    assert spec["ephemeralContainers"][0]["terminationMessagePolicy"] == "File"


def test_malformed_members_do_not_raise():
    pod = {"spec": {"containers": ["x", {"name": "c", "ports": ["p"], "env": [None],
                                         "livenessProbe": "no"}],
                    "volumes": [None, {"name": "v", "projected": {"sources": [1]}}]}}
    defaults.set_pod_defaults(pod)
    defaults.set_pod_template_spec_defaults({"spec": "nope"})
    defaults.set_pod_template_spec_defaults(None)


@pytest.mark.parametrize("given, stored", [
    ("123456789012345678901234567.0001", "123456789012345678901234567001m"),
    ("-123456789012345678901234567.0001", "-123456789012345678901234567001m"),
    ("123456789012345678901.5", "123456789012345678901500m"),
    ("1e30", "1e30"),
])
def test_large_quantities_round_up_exactly(given, stored):
    resources = {"memory": given}
    defaults.set_resource_list_defaults(resources)
    assert resources["memory"] == stored
