"""PodNodeSelector admission: a namespace decides which nodes its pods may run on
(``plugin/pkg/admission/podnodeselector``).

A namespace annotated ``scheduler.alpha.kubernetes.io/node-selector: "env=prod,zone=a"``
(without it, the plugin configuration's ``clusterDefaultNodeSelector``) has that selector
merged into each new pod's ``nodeSelector``; a pod whose selector contradicts it is
refused, and so is one whose selector leaves the whitelist the plugin configuration gives
its namespace. Configured by the ``podNodeSelectorPluginConfig`` map of the plugin's entry
in ``--admission-control-config-file``. Off by default, as in kube-apiserver 1.32
(``--enable-admission-plugins=PodNodeSelector``).
"""

from __future__ import annotations

from kapiserver import errors
from kapiserver.admission import CREATE, AdmissionPlugin
from kapiserver.admission.config import plugin_configuration
from kapiserver.admission.helpers import set_field
from kapiserver.admission.informers import informers_for
from kapiserver.apimachinery.validation import is_qualified_name, is_valid_label_value
from kapiserver.apis.core.fieldorder import json_order

ANNOTATION = "scheduler.alpha.kubernetes.io/node-selector"
CLUSTER_DEFAULT = "clusterDefaultNodeSelector"


def _go_string_slice(values: list[str]) -> str:
    return "[" + " ".join(values) + "]"


def selector_to_map(selector: str) -> dict[str, str]:
    """``labels.ConvertSelectorToLabelsMap``: ``a=b,c=d`` as a map; a ValueError says
    what is wrong, worded as upstream."""
    result: dict[str, str] = {}
    if not selector:
        return result
    for label in selector.split(","):
        parts = label.split("=")
        if len(parts) != 2:
            raise ValueError(f"invalid selector: {_go_string_slice(parts)}")
        key, value = parts[0].strip(), parts[1].strip()
        problems = is_qualified_name(key)
        if problems:
            raise ValueError(f': Invalid value: "{key}": {"; ".join(problems)}')
        problems = is_valid_label_value(value)
        if problems:
            raise ValueError(f': Invalid value: "{value}": {"; ".join(problems)}')
        result[key] = value
    return result


def conflicts(first: dict, second: dict) -> bool:
    """``labels.Conflicts``: a key both have, with different values."""
    return any(key in second and second[key] != value for key, value in first.items())


class PodNodeSelector(AdmissionPlugin):
    """Merge the namespace's node selector into new pods and hold them to it."""

    name = "PodNodeSelector"
    default_enabled = False
    operations = frozenset({CREATE})

    def __init__(self, server):
        self.server = server
        config = plugin_configuration(server.config, self.name) or {}
        selectors = next((value for key, value in config.items()
                          if key.lower() == "podnodeselectorpluginconfig"), None) or {}
        #: the cluster default (``clusterDefaultNodeSelector``) and each namespace's
        #: whitelist, as selector strings
        self.cluster_selectors = {k: v for k, v in selectors.items() if isinstance(v, str)}

    def _pod(self, attributes):
        spec = attributes.resource
        if spec.group != "" or spec.resource != "pods" or attributes.subresource:
            return None
        return attributes.object

    def _namespace_selector(self, namespace: str) -> dict:
        obj = informers_for(self.server).informer("", "namespaces").get("", namespace)
        if obj is None:
            raise errors.InternalError.wrap(f"namespace {namespace} does not exist")
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        try:
            if ANNOTATION in annotations:
                return selector_to_map(annotations[ANNOTATION])
            return selector_to_map(self.cluster_selectors.get(CLUSTER_DEFAULT, ""))
        except ValueError as err:
            raise errors.Unknown(str(err)) from None

    @staticmethod
    def _refuse(pod: dict, message: str) -> errors.Forbidden:
        name = (pod.get("metadata") or {}).get("name", "")
        return errors.Forbidden.for_resource("", "pods", name, message)

    def admit(self, attributes):
        pod = self._pod(attributes)
        if pod is None:
            return
        selector = self._namespace_selector(attributes.namespace)
        spec = pod.setdefault("spec", {})
        current = spec.get("nodeSelector") if isinstance(spec.get("nodeSelector"), dict) else {}
        if conflicts(selector, current):
            raise self._refuse(pod, "pod node label selector conflicts with its namespace node "
                                    "label selector")
        merged = dict(selector, **current)
        if merged != current:
            set_field(spec, "nodeSelector", dict(sorted(merged.items())),
                      json_order("PodSpec"))

    def validate(self, attributes):
        pod = self._pod(attributes)
        if pod is None:
            return
        selector = self._namespace_selector(attributes.namespace)
        spec = pod.get("spec") if isinstance(pod.get("spec"), dict) else {}
        current = spec.get("nodeSelector") if isinstance(spec.get("nodeSelector"), dict) else {}
        if conflicts(selector, current):
            raise self._refuse(pod, "pod node label selector conflicts with its namespace node "
                                    "label selector")
        try:
            whitelist = selector_to_map(self.cluster_selectors.get(attributes.namespace, ""))
        except ValueError as err:
            raise errors.Unknown(str(err)) from None
        if whitelist and any(whitelist.get(k) != v for k, v in current.items()):
            raise self._refuse(pod, "pod node label selector labels conflict with its "
                                    "namespace whitelist")
