"""TaintNodesByCondition admission: a new Node is tainted not-ready
(``plugin/pkg/admission/nodetaint``).

A node created with the ``node.kubernetes.io/not-ready:NoSchedule`` taint receives no pods
before the node lifecycle controller has seen it Ready (and removes the taint); without
it a new node could get pods in the moments before its first status. Enabled by default,
as in kube-apiserver 1.32; only the creation of the node itself is touched.
"""

from kapiserver.admission import CREATE, AdmissionPlugin

NOT_READY_TAINT = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}


class TaintNodesByCondition(AdmissionPlugin):
    """Add the not-ready taint to nodes being created, unless one with its key and effect
    is there already (``Taint.MatchTaint``)."""

    name = "TaintNodesByCondition"
    operations = frozenset({CREATE})

    def __init__(self, server=None):
        self.server = server

    def admit(self, attributes):
        spec = attributes.resource
        if spec.group != "" or spec.resource != "nodes" or attributes.subresource:
            return
        node = attributes.object
        node_spec = node.get("spec")
        if not isinstance(node_spec, dict):
            node_spec = node["spec"] = {}
        taints = node_spec.get("taints")
        if not isinstance(taints, list):
            taints = node_spec["taints"] = []
        for taint in taints:
            if isinstance(taint, dict) and taint.get("key") == NOT_READY_TAINT["key"] and \
                    taint.get("effect") == NOT_READY_TAINT["effect"]:
                return
        taints.append(dict(NOT_READY_TAINT))
