"""A pod's quality-of-service class, as ``pkg/apis/core/helper/qos`` computes it (1.32).

``BestEffort`` when no regular or init container requests or limits cpu or memory;
``Guaranteed`` when every one of them has cpu and memory limits and the summed requests
equal the summed limits; ``Burstable`` otherwise. Ephemeral containers cannot have
resources and do not count.
"""

from __future__ import annotations

from ...apimachinery import quantity

BEST_EFFORT = "BestEffort"
BURSTABLE = "Burstable"
GUARANTEED = "Guaranteed"

_QOS_RESOURCES = ("cpu", "memory")


def _positive(value) -> quantity.Quantity | None:
    try:
        parsed = quantity.from_json(value)
    except (quantity.QuantityError, ValueError, TypeError):
        return None
    return parsed if parsed.sign() > 0 else None


def _resource_list(container, key) -> dict:
    resources = container.get("resources") if isinstance(container, dict) else None
    values = resources.get(key) if isinstance(resources, dict) else None
    return values if isinstance(values, dict) else {}


def _add(totals: dict, name: str, value: quantity.Quantity) -> None:
    totals[name] = value if name not in totals else value.add(totals[name])


def pod_qos_class(pod: dict) -> str:
    """``ComputePodQOS``: the class the pod's containers give it (its status ignored)."""
    spec = pod.get("spec") if isinstance(pod, dict) else None
    spec = spec if isinstance(spec, dict) else {}
    containers = []
    for key in ("containers", "initContainers"):
        if isinstance(spec.get(key), list):
            containers += spec[key]
    requests: dict = {}
    limits: dict = {}
    guaranteed = True
    for container in containers:
        for name, value in _resource_list(container, "requests").items():
            if name in _QOS_RESOURCES and (positive := _positive(value)) is not None:
                _add(requests, name, positive)
        found = set()
        for name, value in _resource_list(container, "limits").items():
            if name in _QOS_RESOURCES and (positive := _positive(value)) is not None:
                found.add(name)
                _add(limits, name, positive)
        if not found.issuperset(_QOS_RESOURCES):
            guaranteed = False
    if not requests and not limits:
        return BEST_EFFORT
    if guaranteed:
        for name, request in requests.items():
            limit = limits.get(name)
            if limit is None or limit.cmp(request) != 0:
                guaranteed = False
                break
    if guaranteed and len(requests) == len(limits):
        return GUARANTEED
    return BURSTABLE


def get_pod_qos(pod: dict) -> str:
    """``GetPodQOS``: the class recorded in ``status.qosClass``, else the computed one."""
    status = pod.get("status") if isinstance(pod, dict) else None
    recorded = status.get("qosClass") if isinstance(status, dict) else None
    return recorded if isinstance(recorded, str) and recorded else pod_qos_class(pod)
