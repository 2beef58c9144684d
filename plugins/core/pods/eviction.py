"""``pods/eviction``: delete a pod unless its PodDisruptionBudget forbids it
(``EvictionREST`` of ``pkg/registry/core/pod/storage/eviction.go``, kube-apiserver 1.32).

A pod that is finished, still Pending or already being deleted goes at once. Otherwise the
one PodDisruptionBudget selecting it decides: one that allows no disruption (or has not
observed its latest generation) answers 429 TooManyRequests; one that does allows it and
records it (``status.disruptionsAllowed`` decremented, the pod in
``status.disruptedPods``). An unready pod goes without spending the budget while the
budget is met (or with ``unhealthyPodEvictionPolicy: AlwaysAllow``). Before the delete, the
pod gets the ``DisruptionTarget`` condition. The body is a ``policy/v1`` Eviction or, as
upstream accepts, a ``policy/v1beta1`` one.
"""

from __future__ import annotations

import copy
import io
import random
import time

from kapiserver import errors
from kapiserver.admission import CREATE
from kapiserver.endpoints.handlers import MAX_BODY_BYTES, RESTHandler, _dry_run
from kapiserver.endpoints.virtual import CreateOnlyHandler
from kapiserver.registry.resource import ResourceSpec
from kapiserver.registry.store import RegistryStore, now_rfc3339

from .binding import success_status, update_pod_condition
from .registry import DeleteOptions

EVICTION = ResourceSpec(group="policy", version="v1", kind="Eviction", resource="pods",
                        singular="", namespaced=True, verbs=("create",))
EVICTION_V1BETA1 = ResourceSpec(group="policy", version="v1beta1", kind="Eviction",
                                resource="pods", singular="", namespaced=True,
                                verbs=("create",))
PDBS = ("policy", "poddisruptionbudgets")
#: ``MaxDisruptedPodSize``: evictions the PDB controller has not confirmed yet.
MAX_DISRUPTED_POD_SIZE = 2000
#: ``EvictionsRetry``: 20 tries, 0.5 s apart (10% jitter).
RETRY_STEPS = 20
RETRY_DELAY = 0.5
#: ``policyv1.DisruptionBudgetCause``.
DISRUPTION_BUDGET_CAUSE = "DisruptionBudget"
TOO_MANY_REQUESTS = "Cannot evict pod as it would violate the pod's disruption budget."


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _int(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _sleep() -> None:
    time.sleep(RETRY_DELAY * (1 + 0.1 * random.random()))


def too_many_requests(message: str, retry_after: int, cause: str) -> errors.TooManyRequests:
    """``apierrors.NewTooManyRequests`` with a ``DisruptionBudget`` cause."""
    details = {"causes": [{"reason": DISRUPTION_BUDGET_CAUSE, "message": cause}]}
    headers = {}
    if retry_after:
        details["retryAfterSeconds"] = retry_after
        headers["Retry-After"] = str(retry_after)
    return errors.TooManyRequests(message, details, headers)


def still_processing(pdb_name: str) -> errors.TooManyRequests:
    """``createTooManyRequestsError``: the budget has not caught up with its spec, or the
    pod changed while it was evicted; try again in 10 seconds."""
    return too_many_requests(TOO_MANY_REQUESTS, 10,
                             f"The disruption budget {pdb_name} is still being processed by "
                             "the server.")


def _forbidden(pdb_name: str, reason: str) -> errors.Forbidden:
    return errors.Forbidden.for_resource("policy", "poddisruptionbudget", pdb_name, reason)


def pod_ready(pod: dict) -> bool:
    """``podutil.IsPodReady``: the first ``Ready`` condition is ``True``."""
    for condition in _dict(pod.get("status")).get("conditions") or []:
        if isinstance(condition, dict) and condition.get("type") == "Ready":
            return condition.get("status") == "True"
    return False


def can_ignore_pdb(pod: dict) -> bool:
    """Finished, Pending or deleted pods are evicted without asking their budget."""
    phase = _dict(pod.get("status")).get("phase")
    return phase in ("Succeeded", "Failed", "Pending") or \
        bool(_dict(pod.get("metadata")).get("deletionTimestamp"))


def should_enforce_resource_version(pod: dict) -> bool:
    """A pod that could become ready meanwhile is deleted only as it was read."""
    phase = _dict(pod.get("status")).get("phase")
    return phase not in ("Succeeded", "Failed") and \
        not _dict(pod.get("metadata")).get("deletionTimestamp")


def set_status_condition(conditions: list, condition: dict) -> None:
    """``meta.SetStatusCondition`` for a ``metav1.Condition`` (the transition time moves
    only when the status changes)."""
    for existing in conditions:
        if isinstance(existing, dict) and existing.get("type") == condition["type"]:
            if existing.get("status") != condition["status"]:
                existing["status"] = condition["status"]
                existing["lastTransitionTime"] = now_rfc3339()
            existing["reason"] = condition["reason"]
            existing["message"] = condition["message"]
            existing["observedGeneration"] = condition["observedGeneration"]
            return
    conditions.append({**condition, "lastTransitionTime": now_rfc3339()})


def update_disruption_allowed_condition(status: dict) -> None:
    """``pdbhelper.UpdateDisruptionAllowedCondition``."""
    conditions = status.get("conditions")
    if not isinstance(conditions, list):
        conditions = status["conditions"] = []
    allowed = _int(status.get("disruptionsAllowed")) > 0
    set_status_condition(conditions, {
        "type": "DisruptionAllowed", "status": "True" if allowed else "False",
        "observedGeneration": _int(status.get("observedGeneration")),
        "reason": "SufficientPods" if allowed else "InsufficientPods", "message": ""})


class _Replayed:
    """A request (or its context) whose body is read again from ``body``."""

    def __init__(self, wrapped, **overrides):
        self._wrapped = wrapped
        self.__dict__.update(overrides)

    def __getattr__(self, name):
        return getattr(self._wrapped, name)


class Evictor:
    """Evicts pods: the pods' registry and status registry, the server's PDBs."""

    def __init__(self, server, pods, pod_status):
        self.server = server
        self.pods = pods
        self.pod_status = pod_status

    # -- PodDisruptionBudgets ---------------------------------------------------------------

    def _pdb_registry(self):
        return self.server.registries.get(PDBS)

    def _pdb_status_registry(self, registry):
        status = getattr(registry.strategy, "status_strategy", None)
        if status is None:
            return registry
        return RegistryStore(registry.spec, status(), registry.storage, registry.on_write)

    def budgets(self, pod: dict) -> list[dict]:
        """``getPodDisruptionBudgets``: the PDBs of the pod's namespace that select it (none
        while no PodDisruptionBudgets are served)."""
        from kapiserver.apimachinery.labels import SelectorError, selector_from_label_selector

        registry = self._pdb_registry()
        if registry is None:
            return []
        meta = _dict(pod.get("metadata"))
        labels = _dict(meta.get("labels"))
        found = []
        for pdb in registry.list(meta.get("namespace", ""))["items"]:
            selector = _dict(pdb.get("spec")).get("selector")
            try:
                selector = selector_from_label_selector(selector if isinstance(selector, dict)
                                                        else None)
            except SelectorError:
                continue  # an invalid selector matches no pod
            # A nil or empty selector matches nothing here, not everything.
            if selector.empty or not selector.matches(labels):
                continue
            found.append(pdb)
        return found

    def check_and_decrement(self, namespace: str, pod_name: str, pdb: dict,
                            dry_run: bool) -> None:
        """``checkAndDecrement``: refuse (429, 403) or spend one disruption of ``pdb``."""
        name = _dict(pdb.get("metadata")).get("name", "")
        status = copy.deepcopy(_dict(pdb.get("status")))
        if _int(status.get("observedGeneration")) < _int(_dict(pdb.get("metadata"))
                                                         .get("generation")):
            raise still_processing(name)
        allowed = _int(status.get("disruptionsAllowed"))
        if allowed < 0:
            raise _forbidden(name, "pdb disruptions allowed is negative")
        if len(_dict(status.get("disruptedPods"))) > MAX_DISRUPTED_POD_SIZE:
            raise _forbidden(name, "DisruptedPods map too big - too many evictions not "
                                   "confirmed by PDB controller")
        if allowed == 0:
            raise too_many_requests(
                TOO_MANY_REQUESTS, 0,
                f"The disruption budget {name} needs {_int(status.get('desiredHealthy'))} "
                f"healthy pods and has {_int(status.get('currentHealthy'))} currently")
        status["disruptionsAllowed"] = allowed - 1
        if allowed - 1 == 0:
            update_disruption_allowed_condition(status)
        if dry_run:
            return
        disrupted = status.get("disruptedPods")
        if not isinstance(disrupted, dict):
            disrupted = status["disruptedPods"] = {}
        disrupted[pod_name] = now_rfc3339()
        registry = self._pdb_registry()
        written = copy.deepcopy(pdb)
        written.update(kind=registry.spec.kind, apiVersion=registry.spec.api_version)
        written["status"] = status
        # UpdateStatus of the PDB as read: a Conflict if it changed meanwhile.
        self._pdb_status_registry(registry).update(namespace, name, written)

    def spend_budget(self, pod: dict, pdb: dict, dry_run: bool) -> None:
        """Verify and decrement ``pdb``, re-reading it after each conflict."""
        namespace = _dict(pod.get("metadata")).get("namespace", "")
        pod_name = _dict(pod.get("metadata")).get("name", "")
        name = _dict(pdb.get("metadata")).get("name", "")
        for attempt in range(RETRY_STEPS):
            if attempt:
                _sleep()
                pdb = self._pdb_registry().get(namespace, name)
            try:
                self.check_and_decrement(namespace, pod_name, pdb, dry_run)
                return
            except errors.Conflict:
                continue
        raise errors.Timeout(f"couldn't update PodDisruptionBudget {errors.go_quote(name)} "
                             "due to conflicts", {"retryAfterSeconds": 10})

    # -- the pod ----------------------------------------------------------------------------

    def add_condition_and_delete(self, namespace: str, name: str,
                                 options: DeleteOptions, dry_run: bool) -> None:
        """``addConditionAndDeletePod``: the pod gets ``DisruptionTarget`` (as its latest
        version, checked against the options' preconditions), then is deleted."""
        if not dry_run:
            def target(pod: dict) -> dict:
                meta = pod["metadata"]
                if options.uid and options.uid != meta.get("uid"):
                    raise errors.Conflict(
                        f"Operation cannot be fulfilled on Pod {errors.go_quote(name)}: the UID "
                        f"in the precondition ({options.uid}) does not match the UID in record "
                        f"({meta.get('uid', '')}). The object might have been deleted and then "
                        "recreated", errors.status_details(name, "", "Pod"))
                if options.resource_version and \
                        options.resource_version != meta.get("resourceVersion"):
                    raise errors.Conflict(
                        f"Operation cannot be fulfilled on Pod {errors.go_quote(name)}: the "
                        f"ResourceVersion in the precondition ({options.resource_version}) "
                        f"does not match the ResourceVersion in record "
                        f"({meta.get('resourceVersion', '')}). The object might have been "
                        "modified", errors.status_details(name, "", "Pod"))
                status = pod.get("status")
                if not isinstance(status, dict):
                    status = pod["status"] = {}
                update_pod_condition(status, {"type": "DisruptionTarget", "status": "True",
                                              "reason": "EvictionByEvictionAPI",
                                              "message": "Eviction API: evicting"})
                return pod

            updated = self.pod_status.guaranteed_update(namespace, name, target, attempts=1)
            if options.resource_version:
                # The condition was this request's own write: delete that version.
                options.resource_version = updated["metadata"]["resourceVersion"]
        self.pods.delete(namespace, name, None, dry_run, None, options=options)

    def evict_without_budget(self, namespace: str, name: str, options: DeleteOptions,
                             dry_run: bool) -> dict | None:
        """Delete the pod at once if it may go without asking its budget (retrying
        conflicts unless the request set a resourceVersion); the pod otherwise."""
        retry_conflicts = not options.resource_version
        for attempt in range(RETRY_STEPS):
            if attempt:
                _sleep()
            pod = self.pods.get(namespace, name)
            if not can_ignore_pdb(pod):
                return pod
            attempt_options = DeleteOptions(options.grace_period, options.uid,
                                            options.resource_version)
            if should_enforce_resource_version(pod) and not options.resource_version:
                # Not racing with anything that would make the pod count for its budget.
                attempt_options.resource_version = pod["metadata"]["resourceVersion"]
            try:
                self.add_condition_and_delete(namespace, name, attempt_options, dry_run)
            except errors.Conflict:
                if retry_conflicts and attempt + 1 < RETRY_STEPS:
                    continue
                raise
            return None
        return None

    def evict(self, namespace: str, name: str, options: DeleteOptions, dry_run: bool) -> dict:
        """Evict pod ``name``; returns the Status to answer with."""
        pod = self.evict_without_budget(namespace, name, options, dry_run)
        if pod is None:
            return success_status()
        budgets = self.budgets(pod)
        if len(budgets) > 1:
            # Upstream answers a failed Status as the create's result (HTTP 201).
            return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": "This pod has more than one PodDisruptionBudget, which the "
                               "eviction subresource does not support.", "code": 500}
        unready_exempt = False
        pdb_name = ""
        if budgets:
            pdb = budgets[0]
            pdb_name = _dict(pdb.get("metadata")).get("name", "")
            status = _dict(pdb.get("status"))
            if not pod_ready(pod) and (
                    _dict(pdb.get("spec")).get("unhealthyPodEvictionPolicy") == "AlwaysAllow"
                    or (_int(status.get("currentHealthy")) >= _int(status.get("desiredHealthy"))
                        and _int(status.get("desiredHealthy")) > 0)):
                # An unready pod does not count as healthy: deleting it leaves the budget
                # as it is, as long as the pod stays as read.
                unready_exempt = True
            else:
                self.spend_budget(pod, pdb, dry_run)
        delete_options = DeleteOptions(options.grace_period, options.uid,
                                       options.resource_version)
        if unready_exempt:
            delete_options.resource_version = pod["metadata"]["resourceVersion"]
        try:
            self.add_condition_and_delete(namespace, name, delete_options, dry_run)
        except errors.Conflict:
            if unready_exempt and not options.resource_version:
                raise still_processing(pdb_name) from None
            raise
        return success_status()


class EvictionHandler(CreateOnlyHandler):
    """``pods/eviction``: decodes a ``policy/v1`` or ``policy/v1beta1`` Eviction."""

    admits_in_create = True

    def __init__(self, server, evictor: Evictor):
        super().__init__(EVICTION, server, self.evict)
        self.v1beta1 = CreateOnlyHandler(EVICTION_V1BETA1, server, None)
        self.evictor = evictor

    def decode_body(self, ctx) -> dict:
        request = ctx.request
        if request.content_length is not None and request.content_length > MAX_BODY_BYTES:
            raise errors.RequestEntityTooLarge(
                f"Request entity too large: limit is {MAX_BODY_BYTES}")
        body = request.stream.read(MAX_BODY_BYTES + 1)

        def replay():
            return _Replayed(ctx, request=_Replayed(request, stream=io.BytesIO(body),
                                                    content_length=len(body)))

        warned = len(ctx.warnings)
        try:
            return RESTHandler.decode_body(self, replay())
        except errors.BadRequest as err:
            if not err.message.startswith("the API version in the data (policy/v1beta1)"):
                raise
        del ctx.warnings[warned:]
        return self.v1beta1.decode_body(replay())

    def evict(self, ctx, eviction: dict) -> dict:
        name = ctx.info.name
        if _dict(eviction.get("metadata")).get("name", "") != name:
            raise errors.BadRequest("name in URL does not match name in Eviction object")
        query_dry_run = ["All"] if _dry_run(ctx.request.args) else []
        body_options = eviction.get("deleteOptions")
        body_options = body_options if isinstance(body_options, dict) else None
        # propagateDryRun: the request's dryRun and the Eviction's must agree.
        body_dry_run = (body_options or {}).get("dryRun") or []
        if body_dry_run:
            _dry_run(ctx.request.args, "DeleteOptions", body_dry_run)
        if body_dry_run and query_dry_run and body_dry_run != query_dry_run:
            # Upstream's words; its plain error is a 500, but the mismatch is the client's.
            raise errors.BadRequest(f"Non-matching dry-run options in request and content: "
                                    f"[{' '.join(query_dry_run)}] and "
                                    f"[{' '.join(map(str, body_dry_run))}]")
        dry_run = bool(body_dry_run or query_dry_run)
        self._admitter(ctx, CREATE, name, dry_run)(copy.deepcopy(eviction))
        options = DeleteOptions.from_body(body_options or {})
        return self.evictor.evict(ctx.info.namespace, name, options, dry_run)
