"""LimitRanger: defaults from the namespace's LimitRanges, and upstream's refusals, read
through the server's informer."""

import pytest

from kapiserver import errors
from kapiserver.admission import UPDATE
from kapiserver_plugins.core.limitranger import LimitRanger, aggregate_message
from kapiserver_plugins.core.limitranges import LIMIT_RANGES, LimitRangeStrategy
from kapiserver_plugins.core.persistentvolumeclaims import PERSISTENT_VOLUME_CLAIMS
from kapiserver_plugins.core.pods import PODS
from tests.support.admission import AdmissionServer, Attributes, run

NS = "team"


@pytest.fixture
def server(tmp_path):
    s = AdmissionServer(str(tmp_path / "db.sqlite"), kinds=((LIMIT_RANGES, LimitRangeStrategy),))
    yield s
    s.close()


def limits(server, *items, name="lr", namespace=NS):
    server.create("", "limitranges", {"apiVersion": "v1", "kind": "LimitRange",
                                      "metadata": {"name": name},
                                      "spec": {"limits": list(items)}}, namespace)


def container(name="app", **resources):
    return {"name": name, "image": "nginx", "resources": resources}


def pod(*containers, init=(), status=None):
    obj = {"metadata": {"name": "p", "namespace": NS},
           "spec": {"containers": list(containers) or [container()]}}
    if init:
        obj["spec"]["initContainers"] = list(init)
    if status is not None:
        obj["status"] = status
    return obj


def refused(server, obj, spec=PODS, **kwargs) -> str:
    with pytest.raises(errors.Forbidden) as caught:
        run(LimitRanger(server), Attributes(spec, obj, namespace=NS, **kwargs))
    return caught.value.message


def test_containers_get_the_defaults_and_the_pod_says_so(server):
    limits(server, {"type": "Container", "default": {"cpu": "200m", "memory": "1Gi"},
                    "defaultRequest": {"cpu": "100m", "memory": "256Mi"}})
    obj = pod(container(limits={"memory": "512Mi"}), init=[container("setup")],
              status={"phase": "Pending", "qosClass": "BestEffort"})
    run(LimitRanger(server), Attributes(PODS, obj, namespace=NS))
    app, setup = obj["spec"]["containers"][0], obj["spec"]["initContainers"][0]
    assert app["resources"] == {"limits": {"cpu": "200m", "memory": "512Mi"},
                                "requests": {"cpu": "100m", "memory": "256Mi"}}
    assert list(app["resources"]) == ["limits", "requests"]
    assert setup["resources"] == {"limits": {"cpu": "200m", "memory": "1Gi"},
                                  "requests": {"cpu": "100m", "memory": "256Mi"}}
    assert obj["metadata"]["annotations"] == {"kubernetes.io/limit-ranger": (
        "LimitRanger plugin set: cpu, memory request for container app; cpu limit for "
        "container app; cpu, memory request for init container setup; cpu, memory limit for "
        "init container setup")}
    # The QoS class follows the requests and limits set here.
    assert obj["status"]["qosClass"] == "Burstable"


def test_a_max_is_the_default_limit_and_request(server):
    # SetDefaults_LimitRangeItem: default from max, defaultRequest from default.
    limits(server, {"type": "Container", "max": {"cpu": "2"}})
    obj = pod()
    run(LimitRanger(server), Attributes(PODS, obj, namespace=NS))
    assert obj["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "2"},
                                                         "requests": {"cpu": "2"}}


def test_nothing_to_default_leaves_the_pod_alone(server):
    limits(server, {"type": "Pod", "max": {"cpu": "2"}})
    obj = pod(container(limits={"cpu": "1"}))
    run(LimitRanger(server), Attributes(PODS, obj, namespace=NS))
    assert "annotations" not in obj["metadata"]
    assert obj["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "1"}}
    other = pod()
    other["metadata"]["namespace"] = "elsewhere"
    run(LimitRanger(server), Attributes(PODS, other, namespace="elsewhere"))
    assert other["spec"]["containers"][0]["resources"] == {}


def test_container_bounds_refuse_with_upstream_messages(server):
    limits(server, {"type": "Container", "min": {"cpu": "100m"}, "max": {"cpu": "1"},
                    "default": {"cpu": "500m"}, "defaultRequest": {"cpu": "500m"}}, name="a")
    limits(server, {"type": "Pod", "min": {"memory": "64Mi"}}, name="b")
    assert refused(server, pod(container(requests={"cpu": "50m", "memory": "64Mi"},
                                         limits={"cpu": "500m"}))) == \
        'pods "p" is forbidden: minimum cpu usage per Container is 100m, but request is 50m'
    assert refused(server, pod(container(requests={"memory": "64Mi"},
                                         limits={"cpu": "2"}))) == (
        'pods "p" is forbidden: maximum cpu usage per Container is 1, but limit is 2')
    # One LimitRange's problems together, the first LimitRange (by name) refusing first.
    assert refused(server, pod(container(requests={"cpu": "50m"}, limits={"cpu": "2"}))) == (
        'pods "p" is forbidden: [minimum cpu usage per Container is 100m, but request is 50m, '
        'maximum cpu usage per Container is 1, but limit is 2]')
    assert refused(server, pod(container(requests={"cpu": "200m"}, limits={"cpu": "1"}))) == (
        'pods "p" is forbidden: minimum memory usage per Pod is 64Mi.  No request is specified')


def test_limit_to_request_ratio(server):
    limits(server, {"type": "Container", "maxLimitRequestRatio": {"memory": "2"}})
    assert refused(server, pod(container(requests={"memory": "1Gi"},
                                         limits={"memory": "4Gi"}))) == (
        'pods "p" is forbidden: memory max limit to request ratio per Container is 2, but '
        'provided ratio is 4.000000')
    assert refused(server, pod(container(limits={"memory": "1Gi"}))) == (
        'pods "p" is forbidden: memory max limit to request ratio per Container is 2, but no '
        'request is specified or request is 0')
    run(LimitRanger(server), Attributes(PODS, pod(container(
        requests={"memory": "1Gi"}, limits={"memory": "1536Mi"})), namespace=NS))


def test_pod_bounds_add_up_containers_and_init_containers(server):
    limits(server, {"type": "Pod", "max": {"cpu": "1", "memory": "1Gi"}})
    assert refused(server, pod(
        container("a", requests={"cpu": "600m", "memory": "100Mi"},
                  limits={"cpu": "600m", "memory": "100Mi"}),
        container("b", requests={"cpu": "600m", "memory": "100Mi"},
                  limits={"cpu": "600m", "memory": "100Mi"}))) == (
        'pods "p" is forbidden: maximum cpu usage per Pod is 1, but limit is 1200m')
    # An init container needs its resources alone, before the others start.
    init = container("setup", requests={"cpu": "2", "memory": "10Mi"},
                     limits={"cpu": "2", "memory": "10Mi"})
    assert refused(server, pod(container(limits={"cpu": "100m", "memory": "10Mi"}),
                               init=[init])) == (
        'pods "p" is forbidden: maximum cpu usage per Pod is 1, but limit is 2')


def test_claims_storage_bounds(server):
    limits(server, {"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"},
                    "max": {"storage": "5Gi"}})

    def claim(size):
        return {"metadata": {"name": "data", "namespace": NS},
                "spec": {"accessModes": ["ReadWriteOnce"],
                         "resources": {"requests": {"storage": size}}}}

    run(LimitRanger(server), Attributes(PERSISTENT_VOLUME_CLAIMS, claim("2Gi"), namespace=NS))
    assert refused(server, claim("10Gi"), PERSISTENT_VOLUME_CLAIMS) == (
        'persistentvolumeclaims "data" is forbidden: maximum storage usage per '
        'PersistentVolumeClaim is 5Gi, but request is 10Gi')
    assert refused(server, claim("500Mi"), PERSISTENT_VOLUME_CLAIMS) == (
        'persistentvolumeclaims "data" is forbidden: minimum storage usage per '
        'PersistentVolumeClaim is 1Gi, but request is 500Mi')
    # A resize is checked too, unless the claim is being deleted.
    assert refused(server, claim("10Gi"), PERSISTENT_VOLUME_CLAIMS, operation=UPDATE,
                   old=claim("2Gi"), name="data")
    deleting = claim("2Gi")
    deleting["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    run(LimitRanger(server), Attributes(PERSISTENT_VOLUME_CLAIMS, claim("10Gi"), UPDATE,
                                        old=deleting, namespace=NS, name="data"))


def test_every_limit_range_of_the_namespace_applies(server):
    limits(server, {"type": "Container", "defaultRequest": {"cpu": "100m"}}, name="a")
    limits(server, {"type": "Container", "defaultRequest": {"cpu": "300m", "memory": "64Mi"},
                    "min": {"cpu": "200m"}}, name="b")
    with pytest.raises(errors.Forbidden) as caught:
        run(LimitRanger(server), Attributes(PODS, pod(), namespace=NS))
    # a's request came first; b's memory request was added after it.
    assert caught.value.message == ('pods "p" is forbidden: minimum cpu usage per Container is '
                                    '200m, but request is 100m')


def test_pod_updates_and_subresources_are_not_checked(server):
    limits(server, {"type": "Container", "min": {"cpu": "1"}, "defaultRequest": {"cpu": "1"}})
    updated = pod()
    run(LimitRanger(server), Attributes(PODS, updated, UPDATE, old=pod(), namespace=NS,
                                        name="p"))
    run(LimitRanger(server), Attributes(PODS, pod(), namespace=NS, subresource="binding"))
    assert updated["spec"]["containers"][0]["resources"] == {}


def test_aggregated_messages_drop_duplicates():
    assert aggregate_message(["a"]) == "a"
    assert aggregate_message(["a", "b", "a"]) == "[a, b]"
    assert aggregate_message(["a", "a"]) == "a"
