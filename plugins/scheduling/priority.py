"""Priority admission: pods get their priority from their PriorityClass
(``plugin/pkg/admission/priority``, 1.32).

A new pod naming a ``priorityClassName`` gets that class's ``value`` as ``priority`` and its
``preemptionPolicy``; one naming none gets the global default class (the one marked
``globalDefault``; of several, the lowest) — its name, value and policy — or priority 0 and
``PreemptLowerPriority`` when there is none. A class that does not exist, or a priority or
policy the pod sets otherwise than its class says, is refused (403). An update keeps the
priority and policy the pod had. PriorityClasses themselves: only one may be the global
default. Enabled by default, as in kube-apiserver 1.32.
"""

from __future__ import annotations

from kapiserver.admission import CREATE, DELETE, UPDATE, AdmissionPlugin
from kapiserver.admission.helpers import forbidden, set_field
from kapiserver.admission.informers import informers_for
from kapiserver.apis.core.fieldorder import json_order

from .priorityclasses import PREEMPT_LOWER_PRIORITY

GROUP = "scheduling.k8s.io"
#: ``scheduling.DefaultPriorityWhenNoDefaultClassExists``.
DEFAULT_PRIORITY = 0


class Priority(AdmissionPlugin):
    """Resolve pods' priorities; keep PriorityClasses to one global default."""

    name = "Priority"
    operations = frozenset({CREATE, UPDATE, DELETE})

    def __init__(self, server):
        self.server = server

    @property
    def _classes(self):
        return informers_for(self.server).informer(GROUP, "priorityclasses")

    def default_class(self) -> dict | None:
        """``getDefaultPriorityClass``: the global default (the lowest of several)."""
        found = None
        for candidate in self._classes.list():
            if candidate.get("globalDefault") is True and (
                    found is None or found.get("value", 0) > candidate.get("value", 0)):
                found = candidate
        return found

    # -- pods ----------------------------------------------------------------------------------

    def admit(self, attributes):
        spec = attributes.resource
        if spec.group != "" or spec.resource != "pods" or attributes.subresource or \
                attributes.operation not in (CREATE, UPDATE):
            return
        pod_spec = attributes.object.get("spec")
        if not isinstance(pod_spec, dict):
            return
        order = json_order("PodSpec")
        if attributes.operation == UPDATE:
            # API validation keeps both from changing; a write that drops them keeps them.
            old_spec = (attributes.old_object or {}).get("spec") or {}
            for field in ("priority", "preemptionPolicy"):
                if pod_spec.get(field) is None and old_spec.get(field) is not None:
                    set_field(pod_spec, field, old_spec[field], order)
            return
        class_name = pod_spec.get("priorityClassName") or ""
        if not class_name:
            found = self.default_class()
            if found is None:
                priority, policy = DEFAULT_PRIORITY, PREEMPT_LOWER_PRIORITY
            else:
                priority, policy = found.get("value", 0), found.get("preemptionPolicy")
                set_field(pod_spec, "priorityClassName",
                          (found.get("metadata") or {}).get("name", ""), order)
        else:
            found = self._classes.get("", class_name)
            if found is None:
                raise forbidden(attributes, f"no PriorityClass with name {class_name} was found")
            priority, policy = found.get("value", 0), found.get("preemptionPolicy")
        given = pod_spec.get("priority")
        if given is not None and given != priority:
            raise forbidden(attributes, f"the integer value of priority ({given}) must not be "
                                        "provided in pod spec; priority admission controller "
                                        f"computed {priority} from the given PriorityClass name")
        set_field(pod_spec, "priority", priority, order)
        if policy is not None:
            given = pod_spec.get("preemptionPolicy")
            if given is not None and given != policy:
                raise forbidden(attributes, f"the string value of PreemptionPolicy ({given}) must "
                                            "not be provided in pod spec; priority admission "
                                            f"controller computed {policy} from the given "
                                            "PriorityClass name")
            set_field(pod_spec, "preemptionPolicy", policy, order)

    # -- priority classes ----------------------------------------------------------------------

    def validate(self, attributes):
        spec = attributes.resource
        if spec.group != GROUP or spec.resource != "priorityclasses" or \
                attributes.subresource or attributes.operation not in (CREATE, UPDATE):
            return
        if attributes.object.get("globalDefault") is not True:
            return
        found = self.default_class()
        if found is None:
            return
        existing = (found.get("metadata") or {}).get("name", "")
        name = (attributes.object.get("metadata") or {}).get("name", "")
        if attributes.operation == CREATE or existing != name:
            raise forbidden(attributes, f"PriorityClass {existing} is already marked as default. "
                                        "Only one default can exist")
