"""AlwaysPullImages: every container pulls, and a pod changed back is refused."""

import pytest

from kapiserver import errors
from kapiserver.admission import UPDATE
from kapiserver_plugins.core.alwayspullimages import AlwaysPullImages
from kapiserver_plugins.core.pods import PODS
from tests.support.admission import Attributes, run


def pod(*images, policy="IfNotPresent"):
    return {"metadata": {"name": "p", "namespace": "ns"}, "spec": {
        "initContainers": [{"name": "init", "image": "busybox", "imagePullPolicy": policy}],
        "containers": [{"name": f"c{i}", "image": image, "imagePullPolicy": policy}
                       for i, image in enumerate(images)]}}


def policies(obj):
    spec = obj["spec"]
    return [c["imagePullPolicy"] for c in spec["initContainers"] + spec["containers"]]


def test_new_pods_pull_always():
    obj = pod("nginx", "redis")
    run(AlwaysPullImages(), Attributes(PODS, obj, namespace="ns"))
    assert policies(obj) == ["Always"] * 3
    assert AlwaysPullImages.default_enabled is False


def test_updates_without_new_images_are_left_alone():
    old = pod("nginx")
    same = pod("nginx")
    run(AlwaysPullImages(), Attributes(PODS, same, UPDATE, old=old, namespace="ns", name="p"))
    assert policies(same) == ["IfNotPresent"] * 2
    changed = pod("nginx:2")
    run(AlwaysPullImages(), Attributes(PODS, changed, UPDATE, old=old, namespace="ns", name="p"))
    assert policies(changed) == ["Always"] * 2


def test_a_pod_not_pulling_always_is_refused_as_upstream():
    plugin = AlwaysPullImages()
    with pytest.raises(errors.Unknown) as caught:
        plugin.validate(Attributes(PODS, pod("nginx"), namespace="ns"))
    assert caught.value.code == 500
    assert caught.value.message == (
        '[pods "p" is forbidden: spec.initContainers[0].imagePullPolicy: Unsupported value: '
        '"IfNotPresent": supported values: "Always", pods "p" is forbidden: '
        'spec.containers[0].imagePullPolicy: Unsupported value: "IfNotPresent": supported '
        'values: "Always"]')
