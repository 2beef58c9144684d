"""DefaultIngressClass: Ingresses without a class get the default IngressClass's name."""

import pytest

from kapiserver_plugins.networking.defaultingressclass import DefaultIngressClass, default_class
from kapiserver_plugins.networking.ingressclasses import INGRESS_CLASSES, IngressClassStrategy
from kapiserver_plugins.networking.ingresses import INGRESSES
from tests.support.admission import AdmissionServer, Attributes, run

GROUP = "networking.k8s.io"
DEFAULT = {"ingressclass.kubernetes.io/is-default-class": "true"}


@pytest.fixture
def server(tmp_path):
    s = AdmissionServer(str(tmp_path / "db.sqlite"),
                        kinds=((INGRESS_CLASSES, IngressClassStrategy),))
    yield s
    s.close()


def ingress_class(name, annotations=None, created=None):
    meta = {"name": name, "annotations": annotations or {}}
    if created:
        meta["creationTimestamp"] = created
    return {"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": meta,
            "spec": {"controller": "example.com/ingress"}}


def ingress(class_name=None, annotations=None):
    spec = {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}}
    if class_name is not None:
        spec["ingressClassName"] = class_name
    return {"metadata": {"name": "i", "namespace": "ns", "annotations": annotations or {}},
            "spec": spec}


def admit(server, obj):
    run(DefaultIngressClass(server), Attributes(INGRESSES, obj, namespace="ns"))
    return obj["spec"]


def test_ingresses_without_a_class_get_the_default(server):
    assert "ingressClassName" not in admit(server, ingress())
    server.create(GROUP, "ingressclasses", ingress_class("nginx", DEFAULT))
    server.create(GROUP, "ingressclasses", ingress_class("other"))
    spec = admit(server, ingress())
    assert spec["ingressClassName"] == "nginx"
    assert list(spec) == ["ingressClassName", "defaultBackend"]
    assert admit(server, ingress("other"))["ingressClassName"] == "other"
    legacy = ingress(annotations={"kubernetes.io/ingress.class": "other"})
    assert "ingressClassName" not in admit(server, legacy)


def test_of_several_defaults_the_newest_wins():
    classes = [ingress_class("b", DEFAULT, "2024-06-01T00:00:00Z"),
               ingress_class("a", DEFAULT, "2024-06-01T00:00:00Z"),
               ingress_class("old", DEFAULT, "2024-01-01T00:00:00Z")]
    assert default_class(classes)["metadata"]["name"] == "a"
    assert default_class([ingress_class("x", {"ingressclass.kubernetes.io/is-default-class":
                                               "True"})]) is None
