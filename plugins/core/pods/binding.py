"""``pods/binding`` and ``bindings``: a scheduler assigns a pod to a node
(``BindingREST`` and ``LegacyBindingREST`` of ``pkg/registry/core/pod/storage``).

A Binding sets ``spec.nodeName`` of a pod that has none, merges the Binding's annotations
into the pod's and marks it ``PodScheduled``. The pod is written as it is, outside its
strategy (no validation, no field ownership), as upstream does. Through ``pods/binding``
the Binding's ``uid`` and ``resourceVersion`` are preconditions on the pod; through
``bindings`` they are wiped, like every created object's.
"""

from __future__ import annotations

import copy

from kapiserver import errors
from kapiserver.admission import CREATE
from kapiserver.apimachinery.field_errors import new_invalid
from kapiserver.endpoints.handlers import _dry_run
from kapiserver.endpoints.virtual import CreateOnlyHandler
from kapiserver.registry.resource import ResourceSpec
from kapiserver.registry.store import Preconditions, now_rfc3339
from kapiserver.storage import Conflict, KeyNotFound

#: ``pods/binding``: a Binding created for a pod named in the URL.
POD_BINDING = ResourceSpec(group="", version="v1", kind="Binding", resource="pods",
                           singular="", namespaced=True, verbs=("create",))
#: ``bindings``: the older form, the pod named by the Binding.
BINDINGS = ResourceSpec(group="", version="v1", kind="Binding", resource="bindings",
                        singular="binding", namespaced=True, verbs=("create",))
_ATTEMPTS = 16


def success_status() -> dict:
    """``metav1.Status{Status: Success}`` as a create answers it (code 201)."""
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
            "code": 201}


def update_pod_condition(status: dict, condition: dict) -> bool:
    """``podutil.UpdatePodCondition``: set ``condition`` (its ``lastTransitionTime`` now,
    unless its status is unchanged) in place of the one of its type. True if changed."""
    condition = {"type": condition["type"], "status": condition["status"],
                 "lastProbeTime": None, "lastTransitionTime": now_rfc3339(),
                 **{k: v for k, v in condition.items() if k in ("reason", "message")}}
    conditions = status.get("conditions")
    if not isinstance(conditions, list):
        conditions = status["conditions"] = []
    for index, old in enumerate(conditions):
        if isinstance(old, dict) and old.get("type") == condition["type"]:
            if old.get("status") == condition["status"]:
                condition["lastTransitionTime"] = old.get("lastTransitionTime")
            changed = any(old.get(key) != condition.get(key)
                          for key in ("status", "reason", "message", "lastProbeTime",
                                      "lastTransitionTime"))
            conditions[index] = condition
            return changed
    conditions.append(condition)
    return True


def check_storage_preconditions(preconditions: Preconditions, key: str, name: str,
                                pod: dict) -> None:
    """The storage layer's precondition check, as a Conflict on pods that carries
    upstream's ``StorageError`` text."""
    meta = pod["metadata"]
    reason = ""
    if preconditions.uid and preconditions.uid != meta.get("uid"):
        reason = (f"Precondition failed: UID in precondition: {preconditions.uid}, UID in "
                  f"object meta: {meta.get('uid', '')}")
    elif preconditions.resource_version and \
            preconditions.resource_version != meta.get("resourceVersion"):
        reason = (f"Precondition failed: ResourceVersion in precondition: "
                  f"{preconditions.resource_version}, ResourceVersion in object meta: "
                  f"{meta.get('resourceVersion', '')}")
    if reason:
        raise errors.Conflict(f"Operation cannot be fulfilled on pods {errors.go_quote(name)}: "
                              f"StorageError: invalid object, Code: 4, Key: {key}, "
                              f"ResourceVersion: 0, AdditionalErrorMsg: {reason}",
                              errors.status_details(name, "", "pods"))


class Binder:
    """Assigns pods to nodes in the pods' storage (``assignPod``)."""

    def __init__(self, pods):
        self.pods = pods

    def assign(self, namespace: str, name: str, node: str, annotations: dict,
               preconditions: Preconditions | None, dry_run: bool) -> dict:
        spec = self.pods.spec
        if not name:
            raise errors.BadRequest("Name parameter required.")
        key = spec.key(namespace, name)
        for _ in range(_ATTEMPTS):
            try:
                current = self.pods.storage.get(key)
            except KeyNotFound:
                raise errors.NotFound.for_object("", "pods", name) from None
            pod = self.pods.decode(current.value, current.mod_revision)
            if preconditions is not None:
                check_storage_preconditions(preconditions, key, name, pod)
            self._bind(pod, name, node, annotations)
            self.pods.strategy.normalize(pod)
            if dry_run:
                return pod
            try:
                revision = self.pods.storage.update(key, self.pods.encode(pod),
                                                    current.mod_revision, self.pods.strategy.ttl)
            except Conflict:
                continue
            except KeyNotFound:
                raise errors.NotFound.for_object("", "pods", name) from None
            pod["metadata"]["resourceVersion"] = str(revision)
            self.pods.on_write()
            return pod
        raise errors.Conflict(f"Operation cannot be fulfilled on pods {errors.go_quote(name)}: "
                              "the object has been modified; please apply your changes to "
                              "the latest version and try again",
                              errors.status_details(name, "", "pods"))

    @staticmethod
    def _bind(pod: dict, name: str, node: str, annotations: dict) -> None:
        """``setPodHostAndAnnotations``' update of one read of the pod."""
        meta = pod["metadata"]
        spec = pod.setdefault("spec", {})

        def conflict(reason: str) -> errors.Conflict:
            # A plain error of the update becomes a Conflict on pods/binding.
            return errors.Conflict(f"Operation cannot be fulfilled on pods/binding "
                                   f"{errors.go_quote(name)}: {reason}",
                                   errors.status_details(name, "", "pods/binding"))

        if meta.get("deletionTimestamp"):
            raise conflict(f"pod {meta.get('name', '')} is being deleted, cannot be assigned "
                           "to a host")
        if spec.get("nodeName"):
            raise conflict(f"pod {meta.get('name', '')} is already assigned to node "
                           f"{errors.go_quote(spec['nodeName'])}")
        if spec.get("schedulingGates"):
            raise conflict(f"pod {meta.get('name', '')} has non-empty .spec.schedulingGates")
        spec["nodeName"] = node
        if annotations:
            if not isinstance(meta.get("annotations"), dict):
                meta["annotations"] = {}
            meta["annotations"].update(annotations)
        status = pod.get("status")
        if not isinstance(status, dict):
            status = pod["status"] = {}
        update_pod_condition(status, {"type": "PodScheduled", "status": "True"})


class BindingHandler(CreateOnlyHandler):
    """``pods/binding`` (``subresource``: the pod named in the URL, preconditions kept) or
    ``bindings`` (the pod named by the Binding)."""

    admits_in_create = True

    def __init__(self, spec, server, binder: Binder, subresource: bool):
        super().__init__(spec, server, self.bind)
        self.binder = binder
        self.subresource = subresource

    def bind(self, ctx, binding: dict) -> dict:
        from kapiserver.apis.core.validation import validate_pod_binding

        meta = binding["metadata"]
        name = ctx.info.name if self.subresource else meta.get("name") or ""
        if self.subresource and meta.get("name", "") != name:
            raise errors.BadRequest("name in URL does not match name in Binding object")
        problems = validate_pod_binding(binding)
        if problems:
            # Upstream returns the list as a plain error, a reasonless 500; an invalid
            # Binding is the client's mistake: a 422 naming the fields, as any kind's.
            raise new_invalid("Binding", "", name, problems)
        dry_run = _dry_run(ctx.request.args)
        self._admitter(ctx, CREATE, name, dry_run)(copy.deepcopy(binding))
        preconditions = None
        if self.subresource and (meta.get("uid") or meta.get("resourceVersion")):
            preconditions = Preconditions(meta.get("uid") or "", meta.get("resourceVersion") or "")
        target = binding.get("target") if isinstance(binding.get("target"), dict) else {}
        annotations = meta.get("annotations") if isinstance(meta.get("annotations"), dict) \
            else {}
        self.binder.assign(ctx.info.namespace, name, target.get("name") or "", annotations,
                           preconditions, dry_run)
        return success_status()
