"""The Table row of a Pod, as upstream's ``printPod`` (``pkg/printers/internalversion``).

NAME READY STATUS RESTARTS AGE, then (``-o wide``) IP NODE NOMINATED NODE READINESS GATES.
STATUS is the phase unless a reason says more: the status's reason, scheduling gates, the
init containers' progress (``Init:1/2``, ``Init:CrashLoopBackOff``), the containers'
waiting or terminated reasons (``ContainerCreating``, ``Completed``, ``ExitCode:1``),
``Terminating`` once deleted, ``Unknown`` for a pod deleted on an unreachable node.
"""

from __future__ import annotations

from kapiserver.registry.printers import age

#: ``node.NodeUnreachablePodReason``.
NODE_UNREACHABLE_POD_REASON = "NodeLost"
#: The row conditions of finished pods (``podSuccessConditions``, ``podFailedConditions``).
ROW_CONDITIONS = {
    "Succeeded": [{"type": "Completed", "status": "True", "reason": "Succeeded",
                   "message": "The pod has completed successfully."}],
    "Failed": [{"type": "Completed", "status": "True", "reason": "Failed",
                "message": "The pod failed."}],
}


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _dicts(value) -> list[dict]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _int(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _restartable(container: dict | None) -> bool:
    """``isRestartableInitContainer``: a sidecar (``restartPolicy: Always``)."""
    return container is not None and container.get("restartPolicy") == "Always"


def _condition_true(conditions: list[dict], kind: str) -> bool:
    """``hasPodReadyCondition``-style: some condition of ``kind`` is ``True``."""
    return any(c.get("type") == kind and c.get("status") == "True" for c in conditions)


def _initialized(conditions: list[dict]) -> bool:
    """``isPodInitializedConditionTrue``: the first ``Initialized`` condition decides."""
    for condition in conditions:
        if condition.get("type") == "Initialized":
            return condition.get("status") == "True"
    return False


def _finished_at(container_status: dict) -> str:
    """When the container last terminated (``lastState.terminated.finishedAt``), or ""."""
    terminated = _dict(_dict(container_status.get("lastState")).get("terminated"))
    finished = terminated.get("finishedAt") if terminated else None
    return finished if isinstance(finished, str) else ""


def _later(current: str, candidate: str) -> str:
    # RFC 3339 times of one format (Go's, to the second, UTC) order as text.
    return candidate if candidate and (not current or candidate > current) else current


def _terminated_reason(terminated: dict, prefix: str = "") -> str:
    if terminated.get("reason"):
        return prefix + str(terminated["reason"])
    if _int(terminated.get("signal")):
        return f"{prefix}Signal:{_int(terminated['signal'])}"
    return f"{prefix}ExitCode:{_int(terminated.get('exitCode'))}"


def _init_progress(pod: dict, spec: dict, status: dict, reason: str):
    """The init containers' part: ``(reason, initializing, restarts, last restart,
    sidecar restarts, sidecar last restart, ready sidecars)``."""
    init_specs = {c.get("name"): c for c in _dicts(spec.get("initContainers"))}
    restarts = sidecar_restarts = ready = 0
    last = sidecar_last = ""
    initializing = False
    count = len(_dicts(spec.get("initContainers")))
    for index, container in enumerate(_dicts(status.get("initContainerStatuses"))):
        restarts += _int(container.get("restartCount"))
        finished = _finished_at(container)
        last = _later(last, finished)
        sidecar = _restartable(init_specs.get(container.get("name")))
        if sidecar:
            sidecar_restarts += _int(container.get("restartCount"))
            sidecar_last = _later(sidecar_last, finished)
        state = _dict(container.get("state"))
        terminated = state.get("terminated")
        waiting = state.get("waiting")
        if isinstance(terminated, dict) and _int(terminated.get("exitCode")) == 0:
            continue
        if sidecar and container.get("started") is True:
            if container.get("ready") is True:
                ready += 1
            continue
        if isinstance(terminated, dict):
            reason = _terminated_reason(terminated, "Init:")
        elif isinstance(waiting, dict) and waiting.get("reason") and \
                waiting.get("reason") != "PodInitializing":
            reason = f"Init:{waiting['reason']}"
        else:
            reason = f"Init:{index}/{count}"
        initializing = True
        break
    return reason, initializing, restarts, last, sidecar_restarts, sidecar_last, ready


def pod_cells(pod: dict, now: float | None = None) -> list:
    """The row's nine cells (the wide ones included: kubectl hides them by priority)."""
    meta = _dict(pod.get("metadata"))
    spec = _dict(pod.get("spec"))
    status = _dict(pod.get("status"))
    conditions = _dicts(status.get("conditions"))
    init_specs = _dicts(spec.get("initContainers"))
    total = len(_dicts(spec.get("containers"))) + sum(1 for c in init_specs if _restartable(c))
    phase = status.get("phase") if isinstance(status.get("phase"), str) else ""
    reason = status.get("reason") if isinstance(status.get("reason"), str) and \
        status.get("reason") else phase
    if any(c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated"
           for c in conditions):
        reason = "SchedulingGated"

    reason, initializing, restarts, last, sidecar_restarts, sidecar_last, ready = \
        _init_progress(pod, spec, status, reason)
    if not initializing or _initialized(conditions):
        restarts, last = sidecar_restarts, sidecar_last
        running = False
        for container in reversed(_dicts(status.get("containerStatuses"))):
            restarts += _int(container.get("restartCount"))
            last = _later(last, _finished_at(container))
            state = _dict(container.get("state"))
            waiting, terminated = state.get("waiting"), state.get("terminated")
            if isinstance(waiting, dict) and waiting.get("reason"):
                reason = str(waiting["reason"])
            elif isinstance(terminated, dict):
                reason = _terminated_reason(terminated)
            elif container.get("ready") is True and isinstance(state.get("running"), dict):
                running = True
                ready += 1
        if reason == "Completed" and running:
            reason = "Running" if _condition_true(conditions, "Ready") else "NotReady"

    if meta.get("deletionTimestamp") and status.get("reason") == NODE_UNREACHABLE_POD_REASON:
        reason = "Unknown"
    elif meta.get("deletionTimestamp") and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"

    restarts_cell = str(restarts)
    if restarts and last:
        restarts_cell = f"{restarts} ({_since(last, now)} ago)"

    ips = _dicts(status.get("podIPs"))
    pod_ip = ips[0].get("ip") if ips and isinstance(ips[0].get("ip"), str) else ""
    gates = _dicts(spec.get("readinessGates"))
    gates_cell = "<none>"
    if gates:
        true = 0
        for gate in gates:
            for condition in conditions:
                if condition.get("type") == gate.get("conditionType"):
                    true += condition.get("status") == "True"
                    break
        gates_cell = f"{true}/{len(gates)}"
    return [meta.get("name", ""), f"{ready}/{total}", reason, restarts_cell,
            age(meta.get("creationTimestamp"), now),
            pod_ip or "<none>", spec.get("nodeName") or "<none>",
            status.get("nominatedNodeName") or "<none>", gates_cell]


def _since(timestamp: str, now: float | None) -> str:
    try:
        return age(timestamp, now)
    except ValueError:
        return "<unknown>"


def row_conditions(pod: dict) -> list[dict]:
    """The row's ``conditions``: a finished pod's row says it has completed."""
    phase = _dict(pod.get("status")).get("phase")
    return [dict(c) for c in ROW_CONDITIONS.get(phase, [])] if isinstance(phase, str) else []
