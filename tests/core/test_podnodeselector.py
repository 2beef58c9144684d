"""PodNodeSelector: the namespace's node selector merged into pods, conflicts refused."""

import pytest

from kapiserver import errors
from kapiserver_plugins.core.namespaces import NAMESPACES, NamespaceStrategy
from kapiserver_plugins.core.podnodeselector import PodNodeSelector, selector_to_map
from kapiserver_plugins.core.pods import PODS
from tests.support.admission import AdmissionServer, Attributes, run

CONFIG = """apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodNodeSelector
  configuration:
    podNodeSelectorPluginConfig:
      clusterDefaultNodeSelector: "tier=general"
      restricted: "env=prod,zone=a"
"""


@pytest.fixture
def server(tmp_path):
    config = tmp_path / "admission.yaml"
    config.write_text(CONFIG)
    s = AdmissionServer(str(tmp_path / "db.sqlite"), kinds=((NAMESPACES, NamespaceStrategy),),
                        admission_control_config_file=str(config))
    for name, annotation in (("plain", None), ("prod", "env=prod"),
                             ("restricted", "env=prod"), ("broken", "a=b=c")):
        meta = {"name": name}
        if annotation is not None:
            meta["annotations"] = {"scheduler.alpha.kubernetes.io/node-selector": annotation}
        s.create("", "namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": meta})
    yield s
    s.close()


def pod(namespace, **selector):
    spec = {"containers": [{"name": "app", "image": "nginx"}], "restartPolicy": "Always"}
    if selector:
        spec["nodeSelector"] = selector
    return {"metadata": {"name": "p", "namespace": namespace}, "spec": spec}


def admit(server, obj):
    run(PodNodeSelector(server), Attributes(PODS, obj, namespace=obj["metadata"]["namespace"]))
    return obj["spec"].get("nodeSelector")


def test_the_namespace_selector_is_merged_in(server):
    assert admit(server, pod("prod", disk="ssd")) == {"disk": "ssd", "env": "prod"}
    obj = pod("prod")
    admit(server, obj)
    assert list(obj["spec"]) == ["containers", "restartPolicy", "nodeSelector"]
    # Without the annotation, the cluster default of the configuration.
    assert admit(server, pod("plain")) == {"tier": "general"}


def test_conflicts_and_the_whitelist_are_refused(server):
    with pytest.raises(errors.Forbidden) as caught:
        admit(server, pod("prod", env="dev"))
    assert caught.value.message == ('pods "p" is forbidden: pod node label selector conflicts '
                                    'with its namespace node label selector')
    with pytest.raises(errors.Forbidden) as caught:
        admit(server, pod("restricted", zone="b"))
    assert caught.value.message == ('pods "p" is forbidden: pod node label selector labels '
                                    'conflict with its namespace whitelist')
    assert admit(server, pod("restricted", zone="a")) == {"env": "prod", "zone": "a"}


def test_a_broken_annotation_is_reported(server):
    with pytest.raises(errors.Unknown) as caught:
        admit(server, pod("broken"))
    assert caught.value.message == "invalid selector: [a b c]"
    assert PodNodeSelector.default_enabled is False


def test_selectors_are_read_as_upstream():
    assert selector_to_map("") == {}
    assert selector_to_map(" a = b ,c=d") == {"a": "b", "c": "d"}
    with pytest.raises(ValueError, match="invalid selector: \\[a\\]"):
        selector_to_map("a")
