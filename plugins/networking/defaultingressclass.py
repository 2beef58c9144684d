"""DefaultIngressClass admission: an Ingress that names no class gets the default one
(``plugin/pkg/admission/network/defaultingressclass``, 1.32).

A new Ingress without ``spec.ingressClassName`` (nor the legacy ``kubernetes.io/ingress.class``
annotation) gets the name of the IngressClass annotated
``ingressclass.kubernetes.io/is-default-class: "true"``; of several defaults the newest
wins (then the first by name). Without a default the Ingress is left alone. Enabled by
default, as in kube-apiserver 1.32.
"""

from __future__ import annotations

from kapiserver.admission import CREATE, AdmissionPlugin
from kapiserver.admission.helpers import set_field
from kapiserver.admission.informers import informers_for

GROUP = "networking.k8s.io"
DEFAULT_ANNOTATION = "ingressclass.kubernetes.io/is-default-class"
LEGACY_CLASS_ANNOTATION = "kubernetes.io/ingress.class"
#: ``IngressSpec``'s fields in Go's order.
INGRESS_SPEC_ORDER = ("ingressClassName", "defaultBackend", "tls", "rules")


def _meta(obj: dict) -> dict:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def default_class(classes: list[dict]) -> dict | None:
    """``getDefaultClass``: the newest class marked default, by name among equally new
    ones (creationTimestamps are RFC 3339 UTC to the second: their text sorts as time)."""
    defaults = [c for c in classes
                if (_meta(c).get("annotations") or {}).get(DEFAULT_ANNOTATION) == "true"]
    if not defaults:
        return None
    defaults.sort(key=lambda c: _meta(c).get("name", ""))
    defaults.sort(key=lambda c: _meta(c).get("creationTimestamp") or "", reverse=True)
    return defaults[0]


class DefaultIngressClass(AdmissionPlugin):
    """Give new Ingresses without a class the default IngressClass's name."""

    name = "DefaultIngressClass"
    operations = frozenset({CREATE})

    def __init__(self, server):
        self.server = server

    def admit(self, attributes):
        spec = attributes.resource
        if spec.group != GROUP or spec.resource != "ingresses" or attributes.subresource:
            return
        ingress = attributes.object
        ingress_spec = ingress.get("spec") if isinstance(ingress.get("spec"), dict) else None
        if ingress_spec is not None and ingress_spec.get("ingressClassName") is not None:
            return
        if LEGACY_CLASS_ANNOTATION in (_meta(ingress).get("annotations") or {}):
            return
        found = default_class(informers_for(self.server).informer(GROUP, "ingressclasses")
                              .list())
        if found is None:
            return
        if ingress_spec is None:
            ingress_spec = {}
            set_field(ingress, "spec", ingress_spec,
                      ("kind", "apiVersion", "metadata", "spec", "status"))
        set_field(ingress_spec, "ingressClassName", _meta(found).get("name", ""),
                  INGRESS_SPEC_ORDER)
