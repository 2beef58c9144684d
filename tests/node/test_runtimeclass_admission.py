"""RuntimeClass admission: a pod takes its class's overhead and scheduling."""

import pytest

from kapiserver import errors
from kapiserver_plugins.core.pods import PODS
from kapiserver_plugins.node.runtimeclass import RuntimeClass
from kapiserver_plugins.node.runtimeclasses import RUNTIME_CLASSES, RuntimeClassStrategy
from tests.support.admission import AdmissionServer, Attributes, run

GPU = {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}


@pytest.fixture
def server(tmp_path):
    s = AdmissionServer(str(tmp_path / "db.sqlite"),
                        kinds=((RUNTIME_CLASSES, RuntimeClassStrategy),))
    for name, extra in (
            ("plain", {}),
            ("kata", {"overhead": {"podFixed": {"memory": "120Mi", "cpu": "250m"}},
                      "scheduling": {"nodeSelector": {"runtime": "kata"},
                                     "tolerations": [GPU]}})):
        s.create("node.k8s.io", "runtimeclasses", {
            "apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name},
            "handler": name, **extra})
    yield s
    s.close()


def pod(runtime=None, **spec):
    spec = {"containers": [{"name": "app", "image": "nginx"}], "schedulerName": "x", **spec}
    if runtime is not None:
        spec["runtimeClassName"] = runtime
    return {"metadata": {"name": "p", "namespace": "ns"}, "spec": spec}


def admit(server, obj):
    run(RuntimeClass(server), Attributes(PODS, obj, namespace="ns"))
    return obj["spec"]


def refused(server, obj) -> str:
    with pytest.raises(errors.Forbidden) as caught:
        admit(server, obj)
    return caught.value.message


def test_overhead_and_scheduling_come_from_the_class(server):
    spec = admit(server, pod("kata", nodeSelector={"disk": "ssd"}))
    assert spec["overhead"] == {"cpu": "250m", "memory": "120Mi"}
    assert spec["nodeSelector"] == {"disk": "ssd", "runtime": "kata"}
    assert spec["tolerations"] == [GPU]
    assert list(spec) == ["containers", "nodeSelector", "schedulerName", "tolerations",
                          "runtimeClassName", "overhead"]
    assert admit(server, pod("plain")) == pod("plain")["spec"]
    assert admit(server, pod()) == pod()["spec"]


def test_the_same_overhead_may_be_given(server):
    spec = admit(server, pod("kata", overhead={"cpu": "0.25", "memory": "120Mi"}))
    assert spec["overhead"] == {"cpu": "250m", "memory": "120Mi"}


def test_refusals_word_for_word(server):
    assert refused(server, pod("nope")) == \
        'pods "p" is forbidden: pod rejected: RuntimeClass "nope" not found'
    assert refused(server, pod("kata", overhead={"cpu": "1"})) == (
        'pods "p" is forbidden: pod rejected: Pod\'s Overhead doesn\'t match RuntimeClass\'s '
        'defined Overhead')
    assert refused(server, pod("plain", overhead={"cpu": "1"})) == (
        'pods "p" is forbidden: pod rejected: Pod Overhead set without corresponding '
        'RuntimeClass defined Overhead')
    assert refused(server, pod("kata", nodeSelector={"runtime": "runc"})) == (
        'pods "p" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[runtime] = kata; '
        'pod.spec.nodeSelector[runtime] = runc')
