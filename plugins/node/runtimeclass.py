"""RuntimeClass admission: a pod takes its RuntimeClass's overhead and scheduling
(``plugin/pkg/admission/runtimeclass``).

A new pod naming a ``runtimeClassName`` gets the class's ``overhead.podFixed`` as
``spec.overhead``, its ``scheduling.nodeSelector`` merged into the pod's and its
``scheduling.tolerations`` merged into the pod's tolerations. A class that does not exist,
an overhead the pod sets otherwise than its class (or without a class that defines one)
and a node selector that contradicts the class's are refused (403). Enabled by default,
as in kube-apiserver 1.32.
"""

from __future__ import annotations

import copy

from kapiserver.admission import CREATE, AdmissionPlugin
from kapiserver.admission.helpers import forbidden, set_field
from kapiserver.admission.informers import informers_for
from kapiserver.apimachinery import quantity
from kapiserver.apimachinery.field_errors import go_quote
from kapiserver.apis.core import tolerations
from kapiserver.apis.core.fieldorder import json_order

GROUP = "node.k8s.io"
OVERHEAD_MISMATCH = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"
OVERHEAD_WITHOUT_CLASS = ("pod rejected: Pod Overhead set without corresponding RuntimeClass "
                          "defined Overhead")


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _same_resources(first: dict, second: dict) -> bool:
    """``Semantic.DeepEqual`` of two ResourceLists: the same names, equal quantities."""
    if set(first) != set(second):
        return False
    try:
        return all(quantity.from_json(first[k]).cmp(quantity.from_json(second[k])) == 0
                   for k in first)
    except (quantity.QuantityError, ValueError, TypeError):
        return first == second


class RuntimeClass(AdmissionPlugin):
    """Apply, then check, the pod's RuntimeClass."""

    name = "RuntimeClass"
    operations = frozenset({CREATE})

    def __init__(self, server):
        self.server = server

    def _pod_and_class(self, attributes) -> tuple[dict | None, dict | None]:
        """``prepareObjects``: (pod, its RuntimeClass or None); (None, None) when the
        request is not the plugin's."""
        spec = attributes.resource
        if spec.group != "" or spec.resource != "pods" or attributes.subresource:
            return None, None
        pod = attributes.object
        name = _dict(pod.get("spec")).get("runtimeClassName")
        if name is None:
            return pod, None
        found = informers_for(self.server).informer(GROUP, "runtimeclasses").get("", name)
        if found is None:
            raise forbidden(attributes, f"pod rejected: RuntimeClass {go_quote(name)} not found")
        return pod, found

    def admit(self, attributes):
        pod, runtime_class = self._pod_and_class(attributes)
        if pod is None or runtime_class is None:
            return
        spec = pod.setdefault("spec", {})
        order = json_order("PodSpec")
        overhead = runtime_class.get("overhead")
        if isinstance(overhead, dict):
            fixed = _dict(overhead.get("podFixed"))
            current = _dict(spec.get("overhead"))
            if current and not _same_resources(fixed, current):
                raise forbidden(attributes, OVERHEAD_MISMATCH)
            if fixed:
                set_field(spec, "overhead", dict(sorted(fixed.items())), order)
            else:
                spec.pop("overhead", None)
        scheduling = runtime_class.get("scheduling")
        if isinstance(scheduling, dict):
            wanted = _dict(scheduling.get("nodeSelector"))
            selector = spec.get("nodeSelector")
            if not isinstance(selector, dict):
                merged = dict(wanted)
            else:
                for key, value in wanted.items():
                    if key in selector and selector[key] != value:
                        raise forbidden(attributes, f"conflict: runtimeClass.scheduling."
                                                    f"nodeSelector[{key}] = {value}; pod.spec."
                                                    f"nodeSelector[{key}] = {selector[key]}")
                merged = dict(selector, **wanted)
            if merged:
                set_field(spec, "nodeSelector", dict(sorted(merged.items())), order)
            else:
                spec.pop("nodeSelector", None)  # an empty map is not written
            current = spec.get("tolerations") if isinstance(spec.get("tolerations"), list) \
                else []
            merged_tolerations = tolerations.merge(
                current, copy.deepcopy(scheduling.get("tolerations") or []))
            if merged_tolerations:
                set_field(spec, "tolerations", merged_tolerations, order)
            else:
                spec.pop("tolerations", None)

    def validate(self, attributes):
        pod, runtime_class = self._pod_and_class(attributes)
        if pod is None:
            return
        current = _dict(_dict(pod.get("spec")).get("overhead"))
        if not current:
            return
        overhead = runtime_class.get("overhead") if runtime_class is not None else None
        if not isinstance(overhead, dict):
            raise forbidden(attributes, OVERHEAD_WITHOUT_CLASS)
        if not _same_resources(_dict(overhead.get("podFixed")), current):
            raise forbidden(attributes, OVERHEAD_MISMATCH)
