"""PodTolerationRestriction admission: a namespace's default and allowed tolerations
(``plugin/pkg/admission/podtolerationrestriction``).

A namespace annotated ``scheduler.alpha.kubernetes.io/defaultTolerations`` (a JSON list
of tolerations; without it, the plugin configuration's ``default``) has those merged into
each new pod's tolerations, and a pod that is not BestEffort also tolerates
``node.kubernetes.io/memory-pressure:NoSchedule``. A pod whose tolerations are not all
covered by the namespace's ``scheduler.alpha.kubernetes.io/tolerationsWhitelist`` (or the
configuration's ``whitelist``) is refused, on create and on update. Configured by a
``podtolerationrestriction.admission.k8s.io/v1alpha1`` ``Configuration`` in
``--admission-control-config-file``. Off by default, as in kube-apiserver 1.32
(``--enable-admission-plugins=PodTolerationRestriction``).
"""

from __future__ import annotations

import json

from kapiserver import errors
from kapiserver.admission import CREATE, UPDATE, AdmissionPlugin
from kapiserver.admission.config import plugin_configuration
from kapiserver.admission.helpers import set_field
from kapiserver.admission.informers import informers_for
from kapiserver.apis.core import tolerations
from kapiserver.apis.core.fieldorder import json_order
from kapiserver.apis.core.qos import BEST_EFFORT, get_pod_qos

DEFAULT_TOLERATIONS = "scheduler.alpha.kubernetes.io/defaultTolerations"
TOLERATIONS_WHITELIST = "scheduler.alpha.kubernetes.io/tolerationsWhitelist"
MEMORY_PRESSURE = {"key": "node.kubernetes.io/memory-pressure",
                   "operator": tolerations.EXISTS, "effect": "NoSchedule"}
WHITELIST_CONFLICT = ("pod tolerations (possibly merged with namespace default tolerations) "
                      "conflict with its namespace whitelist")


def parse_tolerations(text: str) -> list[dict]:
    """A JSON list of tolerations as ``json.Unmarshal`` into ``[]v1.Toleration`` reads it;
    a ValueError carries encoding/json's complaint."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        if err.pos >= len(text):
            raise ValueError("unexpected end of JSON input") from None
        raise ValueError(f"invalid character {text[err.pos]!r} looking for beginning of "
                         "value") from None
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
        kind = "object" if isinstance(value, dict) else type(value).__name__
        raise ValueError(f"json: cannot unmarshal {kind} into Go value of type "
                         "[]v1.Toleration")
    return value


def namespace_tolerations(namespace: dict, key: str) -> list[dict] | None:
    """``extractNSTolerations``: None without the annotation, [] for an empty one."""
    annotations = (namespace.get("metadata") or {}).get("annotations") or {}
    if key not in annotations:
        return None
    if not annotations[key]:
        return []
    try:
        return parse_tolerations(annotations[key])
    except ValueError as err:
        raise errors.Unknown(str(err)) from None


class PodTolerationRestriction(AdmissionPlugin):
    """Merge the namespace's default tolerations into new pods and hold pods to its
    whitelist."""

    name = "PodTolerationRestriction"
    default_enabled = False
    operations = frozenset({CREATE, UPDATE})

    def __init__(self, server):
        self.server = server
        config = plugin_configuration(server.config, self.name) or {}
        self.default = [t for t in config.get("default") or [] if isinstance(t, dict)]
        self.whitelist = [t for t in config.get("whitelist") or [] if isinstance(t, dict)]

    @staticmethod
    def _pod(attributes):
        spec = attributes.resource
        if spec.group != "" or spec.resource != "pods" or attributes.subresource:
            return None
        return attributes.object

    def _namespace(self, name: str) -> dict:
        namespace = informers_for(self.server).informer("", "namespaces").get("", name)
        if namespace is None:
            raise errors.NotFound.for_object("", "namespaces", name)
        return namespace

    def admit(self, attributes):
        pod = self._pod(attributes)
        if pod is None:
            return
        extra: list[dict] = []
        if attributes.operation == CREATE:
            defaults = namespace_tolerations(self._namespace(attributes.namespace),
                                             DEFAULT_TOLERATIONS)
            extra = list(self.default if defaults is None else defaults)
        if get_pod_qos(pod) != BEST_EFFORT:
            extra.append(dict(MEMORY_PRESSURE))
        if extra:
            spec = pod.setdefault("spec", {})
            current = spec.get("tolerations") if isinstance(spec.get("tolerations"), list) \
                else []
            set_field(spec, "tolerations", tolerations.merge(current, extra),
                      json_order("PodSpec"))
        self.validate(attributes)

    def validate(self, attributes):
        pod = self._pod(attributes)
        if pod is None:
            return
        spec = pod.get("spec") if isinstance(pod.get("spec"), dict) else {}
        current = spec.get("tolerations") if isinstance(spec.get("tolerations"), list) else []
        if not current:
            return
        whitelist = namespace_tolerations(self._namespace(attributes.namespace),
                                          TOLERATIONS_WHITELIST)
        if whitelist is None:
            whitelist = self.whitelist
        if whitelist and not tolerations.verify_against_whitelist(current, whitelist):
            # A plain error upstream: the client sees a 500 with this message.
            raise errors.Unknown(WHITELIST_CONFLICT)
