"""The Pod Table row, as upstream's printPod words each state."""

import calendar
import time

import pytest

from kapiserver_plugins.core.pods.table import pod_cells, row_conditions

NOW = calendar.timegm(time.strptime("2026-01-01T12:00:00Z", "%Y-%m-%dT%H:%M:%SZ"))


def pod(status=None, spec=None, **meta):
    return {"metadata": {"name": "p", "creationTimestamp": "2026-01-01T11:58:00Z", **meta},
            "spec": {"containers": [{"name": "app", "image": "x"}], **(spec or {})},
            "status": {"phase": "Pending", **(status or {})}}


def cells(obj):
    return pod_cells(obj, now=NOW)


def test_a_new_pod_is_pending_with_every_wide_cell_empty():
    assert cells(pod()) == ["p", "0/1", "Pending", "0", "2m", "<none>", "<none>", "<none>",
                            "<none>"]


def test_waiting_and_terminated_containers_give_their_reason():
    waiting = pod({"containerStatuses": [{"name": "app", "ready": False, "restartCount": 0,
                                          "state": {"waiting": {"reason": "ContainerCreating"}}}]})
    assert cells(waiting)[2] == "ContainerCreating"
    done = pod({"phase": "Succeeded", "containerStatuses": [
        {"name": "app", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]})
    assert cells(done)[2] == "Completed"
    assert row_conditions(done) == [{"type": "Completed", "status": "True",
                                     "reason": "Succeeded",
                                     "message": "The pod has completed successfully."}]
    signal = pod({"containerStatuses": [{"name": "app",
                                         "state": {"terminated": {"exitCode": 137,
                                                                  "signal": 9}}}]})
    assert cells(signal)[2] == "Signal:9"
    code = pod({"containerStatuses": [{"name": "app", "state": {"terminated": {"exitCode": 2}}}]})
    assert cells(code)[2] == "ExitCode:2"
    assert row_conditions(pod({"phase": "Failed"}))[0]["message"] == "The pod failed."
    assert row_conditions(pod()) == []


def test_running_ready_containers_and_restarts_with_the_last_restart_age():
    running = pod({"phase": "Running", "containerStatuses": [
        {"name": "app", "ready": True, "restartCount": 3, "state": {"running": {}},
         "lastState": {"terminated": {"exitCode": 1,
                                      "finishedAt": "2026-01-01T11:55:00Z"}}}]})
    assert cells(running)[1:4] == ["1/1", "Running", "3 (5m ago)"]


def test_completed_with_a_container_still_running_is_running_or_not_ready():
    spec = {"containers": [{"name": "a"}, {"name": "b"}]}
    statuses = [{"name": "a", "ready": True, "state": {"running": {}}},
                {"name": "b", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]
    not_ready = pod({"phase": "Running", "containerStatuses": statuses}, spec)
    assert cells(not_ready)[1:3] == ["1/2", "NotReady"]
    ready = pod({"phase": "Running", "containerStatuses": statuses,
                 "conditions": [{"type": "Ready", "status": "True"}]}, spec)
    assert cells(ready)[2] == "Running"


def test_init_containers_progress():
    spec = {"initContainers": [{"name": "i1"}, {"name": "i2"}]}
    first = pod({"initContainerStatuses": [{"name": "i1", "state": {"running": {}}}]}, spec)
    assert cells(first)[2] == "Init:0/2"
    crash = pod({"initContainerStatuses": [
        {"name": "i1", "state": {"terminated": {"exitCode": 0}}},
        {"name": "i2", "restartCount": 2,
         "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}, spec)
    assert cells(crash)[2:4] == ["Init:CrashLoopBackOff", "2"]
    failed = pod({"initContainerStatuses": [
        {"name": "i1", "state": {"terminated": {"exitCode": 3}}}]}, spec)
    assert cells(failed)[2] == "Init:ExitCode:3"


def test_sidecars_count_among_the_containers():
    spec = {"initContainers": [{"name": "side", "restartPolicy": "Always"}]}
    obj = pod({"phase": "Running",
               "initContainerStatuses": [{"name": "side", "started": True, "ready": True,
                                          "restartCount": 1, "state": {"running": {}}}],
               "containerStatuses": [{"name": "app", "ready": True,
                                      "state": {"running": {}}}],
               "conditions": [{"type": "Initialized", "status": "True"}]}, spec)
    assert cells(obj)[1:4] == ["2/2", "Running", "1"]


def test_deleted_pods_are_terminating_unless_finished_or_lost():
    deleted = dict(deletionTimestamp="2026-01-01T12:00:30Z")
    assert cells(pod(**deleted))[2] == "Terminating"
    assert cells(pod({"phase": "Succeeded"}, **deleted))[2] == "Succeeded"
    assert cells(pod({"reason": "NodeLost"}, **deleted))[2] == "Unknown"


def test_status_reason_and_scheduling_gates():
    assert cells(pod({"reason": "Evicted", "phase": "Failed"}))[2] == "Evicted"
    gated = pod({"conditions": [{"type": "PodScheduled", "status": "False",
                                 "reason": "SchedulingGated"}]})
    assert cells(gated)[2] == "SchedulingGated"


def test_wide_cells():
    obj = pod({"podIPs": [{"ip": "10.1.2.3"}], "nominatedNodeName": "n2",
               "conditions": [{"type": "g1", "status": "True"}, {"type": "g2",
                                                                 "status": "False"}]},
              {"nodeName": "n1", "readinessGates": [{"conditionType": "g1"},
                                                    {"conditionType": "g2"},
                                                    {"conditionType": "g3"}]})
    assert cells(obj)[5:] == ["10.1.2.3", "n1", "n2", "1/3"]


@pytest.mark.parametrize("status", [None, {"containerStatuses": "bad"}, {"phase": 3}])
def test_malformed_status_never_breaks_the_row(status):
    obj = pod()
    obj["status"] = status
    assert cells(obj)[0] == "p"
