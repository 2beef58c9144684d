"""PodTolerationRestriction: the namespace's default tolerations merged into pods, its
whitelist enforced."""

import json

import pytest

from kapiserver import errors
from kapiserver.admission import UPDATE
from kapiserver_plugins.core.namespaces import NAMESPACES, NamespaceStrategy
from kapiserver_plugins.core.pods import PODS
from kapiserver_plugins.core.podtolerationrestriction import PodTolerationRestriction
from tests.support.admission import AdmissionServer, Attributes, run

DEDICATED = {"key": "dedicated", "operator": "Equal", "value": "team", "effect": "NoSchedule"}
GPU = {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}
MEMORY_PRESSURE = {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists",
                   "effect": "NoSchedule"}
CONFIG = f"""apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodTolerationRestriction
  configuration:
    apiVersion: podtolerationrestriction.admission.k8s.io/v1alpha1
    kind: Configuration
    default: [{json.dumps(GPU)}]
"""


@pytest.fixture
def server(tmp_path):
    config = tmp_path / "admission.yaml"
    config.write_text(CONFIG)
    s = AdmissionServer(str(tmp_path / "db.sqlite"), kinds=((NAMESPACES, NamespaceStrategy),),
                        admission_control_config_file=str(config))
    for name, annotations in (
            ("plain", {}),
            ("team", {"scheduler.alpha.kubernetes.io/defaultTolerations": json.dumps([DEDICATED]),
                      "scheduler.alpha.kubernetes.io/tolerationsWhitelist":
                          json.dumps([DEDICATED, {"operator": "Exists", "effect": "NoExecute"}])}),
            ("broken", {"scheduler.alpha.kubernetes.io/defaultTolerations": "[{"})):
        s.create("", "namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                    "metadata": {"name": name, "annotations": annotations}})
    yield s
    s.close()


def pod(namespace, tolerations=None, requests=None):
    container = {"name": "app", "image": "nginx"}
    if requests:
        container["resources"] = {"requests": requests}
    spec = {"containers": [container]}
    if tolerations is not None:
        spec["tolerations"] = tolerations
    return {"metadata": {"name": "p", "namespace": namespace}, "spec": spec}


def admit(server, obj, **kwargs):
    run(PodTolerationRestriction(server),
        Attributes(PODS, obj, namespace=obj["metadata"]["namespace"], **kwargs))
    return obj["spec"].get("tolerations")


def test_namespace_defaults_then_configured_defaults(server):
    assert admit(server, pod("team")) == [DEDICATED]
    assert admit(server, pod("plain")) == [GPU]
    # A pod that is not BestEffort tolerates memory pressure.
    assert admit(server, pod("plain", requests={"cpu": "1"})) == [GPU, MEMORY_PRESSURE]


def test_covered_tolerations_are_merged_away(server):
    everything = {"operator": "Exists"}
    assert admit(server, pod("plain", [everything])) == [everything]
    # Updates get no defaults, but are held to the whitelist.
    evictable = {"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                 "effect": "NoExecute", "tolerationSeconds": 300}
    assert admit(server, pod("team", [DEDICATED, evictable]), operation=UPDATE,
                 old=pod("team", [DEDICATED]), name="p") == [DEDICATED, evictable]


def test_tolerations_outside_the_whitelist_are_refused(server):
    with pytest.raises(errors.Unknown) as caught:
        admit(server, pod("team", [GPU]))
    assert (caught.value.code, caught.value.message) == (500, (
        "pod tolerations (possibly merged with namespace default tolerations) conflict with "
        "its namespace whitelist"))


def test_a_broken_annotation_is_reported(server):
    with pytest.raises(errors.Unknown) as caught:
        admit(server, pod("broken"))
    assert caught.value.message == "unexpected end of JSON input"
    assert PodTolerationRestriction.default_enabled is False
