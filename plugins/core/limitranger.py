"""LimitRanger admission: the namespace's LimitRanges default and bound what pods and
claims ask for (``plugin/pkg/admission/limitranger``, 1.32).

Mutating: a new pod's containers and init containers get the ``default`` limits and
``defaultRequest`` requests of every ``Container`` limit they do not set, and the pod is
annotated ``kubernetes.io/limit-ranger`` with what was set. Validating: each container,
the pod as a whole (``Pod`` limits, on what it requests and limits as the scheduler adds it
up) and each claim's storage request (``PersistentVolumeClaim`` limits) must respect the
``min``, ``max`` and ``maxLimitRequestRatio``; what does not is refused with upstream's
messages (403). Pod updates are not checked (their containers' resources cannot change),
nor is anything that is being deleted. Enabled by default, as in kube-apiserver 1.32.

The LimitRanges are read from the server's informer (``kapiserver.admission.informers``),
in name order.
"""

from __future__ import annotations

from kapiserver.admission import CREATE, UPDATE, AdmissionPlugin
from kapiserver.admission.helpers import forbidden, set_field
from kapiserver.admission.informers import informers_for
from kapiserver.apimachinery import quantity
from kapiserver.apis.core.fieldorder import json_order
from kapiserver.apis.core.qos import pod_qos_class

ANNOTATION = "kubernetes.io/limit-ranger"
CONTAINER, POD, CLAIM = "Container", "Pod", "PersistentVolumeClaim"
_MAX_MILLI_VALUE = quantity.MAX_MILLI_VALUE


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value) -> list:
    return value if isinstance(value, list) else []


def _quantity(value) -> quantity.Quantity:
    """A stored quantity (validation accepted it) or one summed here; anything else counts
    as zero."""
    if isinstance(value, quantity.Quantity):
        return value
    try:
        return quantity.from_json(value)
    except (quantity.QuantityError, ValueError, TypeError):
        return quantity.Quantity()


def aggregate_message(messages: list[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one message as it is, several (duplicates
    once) as ``[a, b]``."""
    unique = list(dict.fromkeys(messages))
    if len(unique) == 1:
        return unique[0]
    return "[" + ", ".join(unique) + "]"


# -- defaults ------------------------------------------------------------------------------------

def default_requirements(limit_range: dict) -> tuple[dict, dict]:
    """``defaultContainerResourceRequirements``: (requests, limits) the ``Container``
    limits default (later limits of the same resource win)."""
    requests, limits = {}, {}
    for limit in _list(_dict(limit_range.get("spec")).get("limits")):
        if isinstance(limit, dict) and limit.get("type") == CONTAINER:
            requests.update(_dict(limit.get("defaultRequest")))
            limits.update(_dict(limit.get("default")))
    return requests, limits


def _merge_container(container: dict, requests: dict, limits: dict, kind: str,
                     annotations: list[str]) -> None:
    """``mergeContainerResources``: set the defaults a container lacks, noting them."""
    resources = container.get("resources")
    if not isinstance(resources, dict):
        resources = {}
        set_field(container, "resources", resources, json_order("Container"))
    name = container.get("name", "")
    set_limits, set_requests = [], []
    for field, defaults, noted in (("limits", limits, set_limits),
                                   ("requests", requests, set_requests)):
        current = _dict(resources.get(field))
        missing = [k for k in defaults if k not in current]
        if not missing:
            continue
        merged = dict(current)
        for key in missing:
            merged[key] = defaults[key]
            noted.append(key)
        # A ResourceList is a map: Go writes its keys sorted.
        set_field(resources, field, dict(sorted(merged.items())),
                  json_order("ResourceRequirements"))
    if set_requests:
        annotations.append(f"{', '.join(sorted(set_requests))} request for {kind} {name}")
    if set_limits:
        annotations.append(f"{', '.join(sorted(set_limits))} limit for {kind} {name}")


def mutate_pod(limit_range: dict, pod: dict) -> bool:
    """``PodMutateLimitFunc``: the defaults of ``limit_range`` into the pod's containers and
    init containers, and the annotation saying which; True when anything was set."""
    requests, limits = default_requirements(limit_range)
    spec = _dict(pod.get("spec"))
    annotations: list[str] = []
    for key, kind in (("containers", "container"), ("initContainers", "init container")):
        for container in _list(spec.get(key)):
            if isinstance(container, dict):
                _merge_container(container, requests, limits, kind, annotations)
    if not annotations:
        return False
    meta = pod.setdefault("metadata", {})
    current = _dict(meta.get("annotations"))
    current = dict(current, **{ANNOTATION: "LimitRanger plugin set: " + "; ".join(annotations)})
    meta["annotations"] = dict(sorted(current.items()))
    return True


# -- constraints ---------------------------------------------------------------------------------

def _enforced_values(request: quantity.Quantity, limit: quantity.Quantity,
                     enforced: quantity.Quantity) -> tuple[int, int, int]:
    """``requestLimitEnforcedValues``: the three at a common precision (milli-units when
    none overflows them)."""
    values = (request.value(), limit.value(), enforced.value())
    if all(v <= _MAX_MILLI_VALUE for v in values):
        return request.milli_value(), limit.milli_value(), enforced.milli_value()
    return values


def min_constraint(limit_type: str, name: str, enforced, requests: dict,
                   limits: dict) -> str:
    """``minConstraint``: why the request (or limit) is below ``enforced``, or ""."""
    enforced = _quantity(enforced)
    request, limit = _quantity(requests.get(name)), _quantity(limits.get(name))
    observed_request, observed_limit, value = _enforced_values(request, limit, enforced)
    if name not in requests:
        return (f"minimum {name} usage per {limit_type} is {enforced.canonical()}.  "
                "No request is specified")
    if observed_request < value:
        return (f"minimum {name} usage per {limit_type} is {enforced.canonical()}, but "
                f"request is {request.canonical()}")
    if name in limits and observed_limit < value:
        return (f"minimum {name} usage per {limit_type} is {enforced.canonical()}, but "
                f"limit is {limit.canonical()}")
    return ""


def max_request_constraint(limit_type: str, name: str, enforced, requests: dict) -> str:
    """``maxRequestConstraint``: for kinds that have no limits (claims)."""
    enforced = _quantity(enforced)
    request = _quantity(requests.get(name))
    observed_request, _, value = _enforced_values(request, quantity.Quantity(), enforced)
    if name not in requests:
        return (f"maximum {name} usage per {limit_type} is {enforced.canonical()}.  "
                "No request is specified")
    if observed_request > value:
        return (f"maximum {name} usage per {limit_type} is {enforced.canonical()}, but "
                f"request is {request.canonical()}")
    return ""


def max_constraint(limit_type: str, name: str, enforced, requests: dict,
                   limits: dict) -> str:
    """``maxConstraint``: why the limit (or request) is above ``enforced``, or ""."""
    enforced = _quantity(enforced)
    request, limit = _quantity(requests.get(name)), _quantity(limits.get(name))
    observed_request, observed_limit, value = _enforced_values(request, limit, enforced)
    if name not in limits:
        return (f"maximum {name} usage per {limit_type} is {enforced.canonical()}.  "
                "No limit is specified")
    if observed_limit > value:
        return (f"maximum {name} usage per {limit_type} is {enforced.canonical()}, but "
                f"limit is {limit.canonical()}")
    if name in requests and observed_request > value:
        return (f"maximum {name} usage per {limit_type} is {enforced.canonical()}, but "
                f"request is {request.canonical()}")
    return ""


def ratio_constraint(limit_type: str, name: str, enforced, requests: dict,
                     limits: dict) -> str:
    """``limitRequestRatioConstraint``: why limit/request exceeds ``enforced``, or ""."""
    enforced = _quantity(enforced)
    request, limit = _quantity(requests.get(name)), _quantity(limits.get(name))
    observed_request, observed_limit, _ = _enforced_values(request, limit, enforced)
    if name not in requests or observed_request == 0:
        return (f"{name} max limit to request ratio per {limit_type} is "
                f"{enforced.canonical()}, but no request is specified or request is 0")
    if name not in limits or observed_limit == 0:
        return (f"{name} max limit to request ratio per {limit_type} is "
                f"{enforced.canonical()}, but no limit is specified or limit is 0")
    ratio = observed_limit / observed_request
    shown = ratio
    maximum = float(enforced.value())
    if enforced.value() <= _MAX_MILLI_VALUE:
        ratio *= 1000
        maximum = float(enforced.milli_value())
    if ratio > maximum:
        return (f"{name} max limit to request ratio per {limit_type} is "
                f"{enforced.canonical()}, but provided ratio is {shown:f}")
    return ""


def _check(limit: dict, limit_type: str, requests: dict, limits: dict) -> list[str]:
    problems = []
    for field, check in (("min", min_constraint), ("max", max_constraint),
                         ("maxLimitRequestRatio", ratio_constraint)):
        for name, enforced in _dict(limit.get(field)).items():
            problem = check(limit_type, name, enforced, requests, limits)
            if problem:
                problems.append(problem)
    return problems


def _add(totals: dict, values: dict) -> None:
    """``addResourceList``."""
    for name, value in values.items():
        value = _quantity(value)
        totals[name] = totals[name].add(value) if name in totals else value


def _max(totals: dict, values: dict) -> None:
    """``maxResourceList``."""
    for name, value in values.items():
        value = _quantity(value)
        if name not in totals or value.cmp(totals[name]) > 0:
            totals[name] = value


def pod_totals(pod: dict, field: str) -> dict:
    """``podRequests``/``podLimits`` (``field`` is ``requests`` or ``limits``): the regular
    and sidecar containers' sum, or the most any init container needs with the sidecars
    started before it, whichever is more — as quantities, by resource name."""
    spec = _dict(pod.get("spec"))
    totals: dict = {}
    for container in _list(spec.get("containers")):
        _add(totals, _dict(_dict(_dict(container).get("resources")).get(field)))
    sidecars: dict = {}
    init: dict = {}
    for container in _list(spec.get("initContainers")):
        container = _dict(container)
        values = _dict(_dict(container.get("resources")).get(field))
        if container.get("restartPolicy") == "Always":
            _add(totals, values)
            _add(sidecars, values)
            needed = sidecars
        else:
            needed = {}
            _add(needed, values)
            _add(needed, sidecars)
        _max(init, needed)
    _max(totals, init)
    return totals


def validate_pod(limit_range: dict, pod: dict) -> str:
    """``PodValidateLimitFunc``: the aggregated problems of ``pod`` under ``limit_range``."""
    spec = _dict(pod.get("spec"))
    problems: list[str] = []
    for limit in _list(_dict(limit_range.get("spec")).get("limits")):
        if not isinstance(limit, dict):
            continue
        if limit.get("type") == CONTAINER:
            for key in ("containers", "initContainers"):
                for container in _list(spec.get(key)):
                    resources = _dict(_dict(container).get("resources"))
                    problems += _check(limit, CONTAINER, _dict(resources.get("requests")),
                                       _dict(resources.get("limits")))
        if limit.get("type") == POD:
            problems += _check(limit, POD, pod_totals(pod, "requests"),
                               pod_totals(pod, "limits"))
    return aggregate_message(problems) if problems else ""


def validate_claim(limit_range: dict, claim: dict) -> str:
    """``PersistentVolumeClaimValidateLimitFunc``: ``min`` and ``max`` of the claim's
    requests (its limits are not the user's to set)."""
    requests = _dict(_dict(_dict(claim.get("spec")).get("resources")).get("requests"))
    problems = []
    for limit in _list(_dict(limit_range.get("spec")).get("limits")):
        if not isinstance(limit, dict) or limit.get("type") != CLAIM:
            continue
        for name, enforced in _dict(limit.get("min")).items():
            problem = min_constraint(CLAIM, name, enforced, requests, {})
            if problem:
                problems.append(problem)
        for name, enforced in _dict(limit.get("max")).items():
            problem = max_request_constraint(CLAIM, name, enforced, requests)
            if problem:
                problems.append(problem)
    return aggregate_message(problems) if problems else ""


# -- the plugin ----------------------------------------------------------------------------------

class LimitRanger(AdmissionPlugin):
    """Default and bound pods and claims by their namespace's LimitRanges."""

    name = "LimitRanger"
    operations = frozenset({CREATE, UPDATE})

    def __init__(self, server):
        self.server = server

    def _limit_ranges(self, attributes) -> list[dict]:
        """The LimitRanges that apply, or none for what the plugin leaves alone
        (``SupportsAttributes`` and objects being deleted)."""
        spec = attributes.resource
        if spec.group != "" or attributes.subresource:
            return []
        if spec.resource == "pods":
            if attributes.operation == UPDATE:
                return []  # a pod's containers' resources cannot change
        elif spec.resource != "persistentvolumeclaims":
            return []
        old = attributes.old_object
        if isinstance(old, dict) and _dict(old.get("metadata")).get("deletionTimestamp"):
            return []
        informer = informers_for(self.server).informer("", "limitranges")
        return informer.list(attributes.namespace)

    def admit(self, attributes):
        if attributes.resource.resource != "pods":
            return
        pod = attributes.object
        changed = False
        for limit_range in self._limit_ranges(attributes):
            changed = mutate_pod(limit_range, pod) or changed
        status = pod.get("status")
        if changed and isinstance(status, dict) and status.get("qosClass"):
            # kapiserver's store prepares a new pod (its QoS class included) before
            # admission, upstream's after: the class must follow the requests set here.
            status["qosClass"] = pod_qos_class(pod)

    def validate(self, attributes):
        resource = attributes.resource.resource
        check = validate_pod if resource == "pods" else validate_claim
        for limit_range in self._limit_ranges(attributes):
            problem = check(limit_range, attributes.object)
            if problem:
                raise forbidden(attributes, problem)
