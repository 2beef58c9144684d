"""QoS classes of pods (kapiserver.apis.core.qos)."""

import pytest

from kapiserver.apis.core.qos import get_pod_qos, pod_qos_class


def _pod(*containers, init=()):
    def container(resources):
        return {"name": "c", "image": "i", "resources": resources}
    return {"spec": {"containers": [container(r) for r in containers],
                     "initContainers": [container(r) for r in init]}}


GUARANTEED = {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1",
                                                                      "memory": "1Gi"}}


@pytest.mark.parametrize("pod, qos", [
    (_pod({}), "BestEffort"),
    (_pod({"limits": {"nvidia.com/gpu": "1"}}), "BestEffort"),
    (_pod({"requests": {"cpu": "0"}}), "BestEffort"),
    (_pod({"requests": {"cpu": "100m"}}), "Burstable"),
    (_pod({"limits": {"memory": "1Gi"}, "requests": {"memory": "1Gi"}}), "Burstable"),
    (_pod(GUARANTEED), "Guaranteed"),
    # Before defaulting copies limits to requests, limits alone are Burstable.
    (_pod({"limits": {"cpu": "1", "memory": "1Gi"}}), "Burstable"),
    (_pod(GUARANTEED, {}), "Burstable"),
    (_pod(GUARANTEED, init=[GUARANTEED]), "Guaranteed"),
    (_pod(GUARANTEED, init=[{"requests": {"cpu": "1"}}]), "Burstable"),
    (_pod({"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m",
                                                                   "memory": "1Gi"}}),
     "Burstable"),
    (_pod({"limits": {"cpu": "1000m", "memory": "1024Mi"}, "requests": {
        "cpu": "1", "memory": "1Gi"}}), "Guaranteed"),
    (_pod({"limits": {"cpu": "2", "memory": "2Gi"}, "requests": {"cpu": "1",
                                                                   "memory": "1Gi"}},
          {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "2",
                                                                   "memory": "2Gi"}}),
     "Guaranteed"),  # compared summed over the containers, as upstream does
    ({"spec": {}}, "BestEffort"),
    ({}, "BestEffort"),
])
def test_pod_qos_class(pod, qos):
    assert pod_qos_class(pod) == qos


def test_ephemeral_containers_do_not_count():
    pod = _pod({})
    pod["spec"]["ephemeralContainers"] = [{"name": "e", "resources": GUARANTEED}]
    assert pod_qos_class(pod) == "BestEffort"


def test_get_pod_qos_prefers_the_recorded_class():
    pod = _pod(GUARANTEED)
    assert get_pod_qos(pod) == "Guaranteed"
    pod["status"] = {"qosClass": "Burstable"}
    assert get_pod_qos(pod) == "Burstable"
    assert pod_qos_class(pod) == "Guaranteed"
