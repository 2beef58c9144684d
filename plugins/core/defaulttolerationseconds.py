"""DefaultTolerationSeconds admission: pods tolerate an unready or unreachable node for five
minutes (``plugin/pkg/admission/defaulttolerationseconds``).

Every pod that does not already tolerate the ``node.kubernetes.io/not-ready`` and
``node.kubernetes.io/unreachable`` NoExecute taints gets a toleration of each for
``--default-not-ready-toleration-seconds`` and ``--default-unreachable-toleration-seconds``
(300 by default), so that the node lifecycle controller evicts it only after that long.
Enabled by default, as in kube-apiserver 1.32.
"""

from kapiserver.admission import CREATE, UPDATE, AdmissionPlugin
from kapiserver.admission.helpers import set_field
from kapiserver.apis.core import tolerations
from kapiserver.apis.core.fieldorder import json_order

NOT_READY_TAINT = "node.kubernetes.io/not-ready"
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
DEFAULT_SECONDS = 300


def _tolerates(existing: list, key: str) -> bool:
    """A toleration of ``key`` (or of every key) for NoExecute (or every effect) is there."""
    for toleration in existing:
        if not isinstance(toleration, dict):
            continue
        if toleration.get("key", "") in (key, "") and \
                toleration.get("effect", "") in (tolerations.NO_EXECUTE, ""):
            return True
    return False


class DefaultTolerationSeconds(AdmissionPlugin):
    """Add the two NoExecute tolerations a pod lacks (create and update, as upstream)."""

    name = "DefaultTolerationSeconds"
    operations = frozenset({CREATE, UPDATE})

    def __init__(self, server):
        config = server.config
        self.not_ready_seconds = config.default_not_ready_toleration_seconds
        self.unreachable_seconds = config.default_unreachable_toleration_seconds

    def admit(self, attributes):
        spec = attributes.resource
        if spec.group != "" or spec.resource != "pods" or attributes.subresource:
            return
        pod_spec = attributes.object.get("spec")
        if not isinstance(pod_spec, dict):
            return
        existing = pod_spec.get("tolerations")
        existing = existing if isinstance(existing, list) else []
        result = existing
        for key, seconds in ((NOT_READY_TAINT, self.not_ready_seconds),
                             (UNREACHABLE_TAINT, self.unreachable_seconds)):
            if not _tolerates(existing, key):
                result = tolerations.add_or_update(result, {
                    "key": key, "operator": tolerations.EXISTS,
                    "effect": tolerations.NO_EXECUTE, "tolerationSeconds": seconds})
        if result is not existing:
            set_field(pod_spec, "tolerations", result, json_order("PodSpec"))
