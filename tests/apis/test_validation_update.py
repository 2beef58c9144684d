"""Pod updates, status writes, ephemeral containers and bindings."""

import copy
import json
import pathlib

import pytest

from kapiserver.apis.core.validation import (validate_pod_binding,
                                             validate_pod_ephemeral_containers_update,
                                             validate_pod_status_update, validate_pod_update)

from .conftest import make_pod, texts

KINDS = pathlib.Path("/work/shared/reference/wide/kinds")
FORBIDDEN = ("spec: Forbidden: pod updates may not change fields other than "
             "`spec.containers[*].image`,`spec.initContainers[*].image`,"
             "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing "
             "tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it "
             "was previously negative)\n")
NB = "\u00a0"


@pytest.fixture
def created():
    path = KINDS / "pods-create.json"
    if path.exists():
        return json.loads(path.read_text())["response"]["body"]
    pod = make_pod(tolerations=[{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                                 "effect": "NoExecute", "tolerationSeconds": 300}])
    pod["metadata"]["resourceVersion"] = "1"
    return pod


def update(old, mutate):
    new = copy.deepcopy(old)
    mutate(new)
    return texts(validate_pod_update(new, old))


def lines(*body):
    """A go-cmp report from its lines (each without the two leading columns)."""
    return "".join(f"{line[0]}{NB}{line[1:]}\n" if line[0] in "-+" else f"{NB}{NB}{line}\n"
                   for line in body)


def test_images_may_change(created):
    assert update(created, lambda p: p["spec"]["containers"][0].update(image="nginx:1.28")) == []


def test_images_may_not_be_emptied(created):
    assert update(created, lambda p: p["spec"]["containers"][0].update(image="")) == [
        "spec.containers[0].image: Required value",
        "spec.containers[0].image: Required value"]


def test_containers_may_not_be_added(created):
    def add(pod):
        pod["spec"]["containers"].append({"name": "x", "image": "y", "imagePullPolicy": "Always",
                                          "terminationMessagePolicy": "File"})
    assert update(created, add) == [
        "spec.containers: Forbidden: pod updates may not add or remove containers"]


def test_active_deadline_may_only_decrease(created):
    assert update(created, lambda p: p["spec"].update(activeDeadlineSeconds=10)) == []
    old = copy.deepcopy(created)
    old["spec"]["activeDeadlineSeconds"] = 5
    assert update(old, lambda p: p["spec"].update(activeDeadlineSeconds=3)) == []
    assert update(old, lambda p: p["spec"].update(activeDeadlineSeconds=10)) == [
        "spec.activeDeadlineSeconds: Invalid value: 10: must be less than or equal to previous "
        "value"]
    assert update(old, lambda p: p["spec"].pop("activeDeadlineSeconds")) == [
        'spec.activeDeadlineSeconds: Invalid value: "null": must not update from a positive '
        "integer to nil value"]
    assert update(old, lambda p: p["spec"].update(activeDeadlineSeconds=-1)) == [
        "spec.activeDeadlineSeconds: Invalid value: -1: must be between 1 and 2147483647, "
        "inclusive",
        "spec.activeDeadlineSeconds: Invalid value: -1: must be between 0 and 2147483647, "
        "inclusive"]


def test_tolerations_may_only_be_added(created):
    assert update(created, lambda p: p["spec"]["tolerations"].append(
        {"key": "a", "operator": "Exists"})) == []
    assert update(created, lambda p: p["spec"]["tolerations"][0].update(
        tolerationSeconds=10)) == []
    assert update(created, lambda p: p["spec"]["tolerations"].pop()) == [
        "spec.tolerations: Forbidden: existing toleration can not be modified except its "
        "tolerationSeconds"]


def test_negative_grace_period_may_become_one(created):
    old = copy.deepcopy(created)
    old["spec"]["terminationGracePeriodSeconds"] = -1
    assert update(old, lambda p: p["spec"].update(terminationGracePeriodSeconds=1)) == []


def test_metadata_changes_alone_pass(created):
    assert update(created, lambda p: p["metadata"].update(labels={"a": "b"})) == []


def test_forbidden_change_shows_the_go_cmp_diff(created):
    errors = update(created, lambda p: p["spec"].update(nodeSelector={"a": "b"}))
    assert errors == [FORBIDDEN + lines(
        "core.PodSpec{",
        "\t... // 6 identical fields",
        "\tActiveDeadlineSeconds:        nil,",
        '\tDNSPolicy:                    "ClusterFirst",',
        "-\tNodeSelector:                 nil,",
        '+\tNodeSelector:                 map[string]string{"a": "b"},',
        '\tServiceAccountName:           "default",',
        "\tAutomountServiceAccountToken: nil,",
        "\t... // 23 identical fields",
        "}")]


def test_diff_inside_containers(created):
    errors = update(created, lambda p: p["spec"]["containers"][0].update(
        env=[{"name": "A", "value": "B"}]))
    diff = errors[0][len(FORBIDDEN):]
    assert "\tContainers: []core.Container{\n" in diff
    assert '+' + NB + '\t\t\tEnv:          []core.EnvVar{{Name: "A", Value: "B"}},\n' in diff
    assert "\t\t\t... // 14 identical fields\n" in diff


def test_scheduling_gated_pods_may_gain_node_selectors(created):
    old = copy.deepcopy(created)
    old["spec"]["schedulingGates"] = [{"name": "g"}]
    old["spec"]["nodeSelector"] = {"x": "y"}
    assert update(old, lambda p: p["spec"].update(nodeSelector={"x": "y", "a": "b"})) == []
    assert update(old, lambda p: p["spec"].update(schedulingGates=[])) == []
    assert update(old, lambda p: p["spec"].update(nodeSelector={"x": "z"})) == [
        'spec.nodeSelector: Invalid value: map[string]string{"x":"z"}: only additions to '
        "spec.nodeSelector are allowed (no mutations or deletions)"]
    assert update(old, lambda p: p["spec"].update(schedulingGates=[{"name": "h"}])) == [
        "spec.schedulingGates[0].name: Forbidden: only deletion is allowed, but found new "
        "scheduling gate 'h'"]


def test_scheduling_gated_pods_may_gain_node_affinity(created):
    old = copy.deepcopy(created)
    old["spec"]["schedulingGates"] = [{"name": "g"}]
    term = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [term]}}}
    assert update(old, lambda p: p["spec"].update(affinity=affinity)) == []
    old["spec"]["affinity"] = copy.deepcopy(affinity)
    wider = copy.deepcopy(affinity)
    terms = wider["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"]
    terms[0]["matchExpressions"].append({"key": "rack", "operator": "Exists"})
    assert update(old, lambda p: p["spec"].update(affinity=wider)) == []
    terms.append({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n"]}]})
    errors = update(old, lambda p: p["spec"].update(affinity=wider))
    assert errors[0].startswith(
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
        "nodeSelectorTerms: Invalid value: []core.NodeSelectorTerm{")
    assert errors[0].endswith("no additions/deletions to non-empty NodeSelectorTerms list are "
                              "allowed")


def test_annotations_of_mirror_pods_and_apparmor_are_fixed(created):
    old = copy.deepcopy(created)
    old["metadata"]["annotations"] = {"container.apparmor.security.beta.kubernetes.io/app":
                                      "runtime/default"}
    assert update(old, lambda p: p["metadata"].update(annotations={
        "kubernetes.io/config.mirror": "x"})) == [
        # validatePodMetadataAndSpec checks the annotations once, the update rules again
        'metadata.annotations[kubernetes.io/config.mirror]: Invalid value: "x": must set '
        "spec.nodeName if mirror pod annotation is set",
        "metadata.annotations[container.apparmor.security.beta.kubernetes.io/app]: Forbidden: "
        "may not remove or update AppArmor annotations",
        "metadata.annotations[kubernetes.io/config.mirror]: Forbidden: may not add mirror pod "
        "annotation",
        'metadata.annotations[kubernetes.io/config.mirror]: Invalid value: "x": must set '
        "spec.nodeName if mirror pod annotation is set"]


def status_update(old, mutate):
    new = copy.deepcopy(old)
    mutate(new)
    return texts(validate_pod_status_update(new, old))


def test_status_updates(created):
    assert status_update(created, lambda p: p["status"].update(
        phase="Running", podIP="10.0.0.1", podIPs=[{"ip": "10.0.0.1"}, {"ip": "fd00::1"}],
        hostIP="1.2.3.4", hostIPs=[{"ip": "1.2.3.4"}],
        conditions=[{"type": "Ready", "status": "True"},
                    {"type": "example.com/ready", "status": "True"}])) == []
    assert status_update(created, lambda p: p["status"].update(qosClass="Guaranteed")) == [
        'status.qosClass: Invalid value: "Guaranteed": field is immutable']
    assert status_update(created, lambda p: p["spec"].update(nodeName="n")) == [
        "status.nodeName: Forbidden: may not be changed directly"]
    assert status_update(created, lambda p: p["status"].update(
        conditions=[{"type": "bad type"}], podIPs=[{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}],
        hostIP="1.2.3.4", hostIPs=[{"ip": "1.2.3.5"}], nominatedNodeName="Bad")) == [
        'metadata.conditions[0].Type: Invalid value: "bad type": name part must consist of '
        "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
        "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        'status.nominatedNodeName: Invalid value: "Bad": a lowercase RFC 1123 subdomain must '
        "consist of lower case alphanumeric characters, '-' or '.', and must start and end with "
        "an alphanumeric character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        'status.podIPs: Invalid value: []core.PodIP{core.PodIP{IP:"10.0.0.1"}, '
        'core.PodIP{IP:"10.0.0.2"}}: may specify no more than one IP for each IP family',
        'status.hostIPs[0].ip: Invalid value: "1.2.3.5": must be equal to `hostIP`']


def test_terminated_containers_stay_terminated(created):
    old = copy.deepcopy(created)
    old["spec"]["restartPolicy"] = "Never"
    old["status"]["containerStatuses"] = [{"name": "app", "state": {"terminated": {
        "exitCode": 1}}}]
    assert status_update(old, lambda p: p["status"].update(containerStatuses=[
        {"name": "app", "state": {"running": {}}}])) == [
        "status.containerStatuses[0].state: Forbidden: may not be transitioned to "
        "non-terminated state"]
    old["spec"]["restartPolicy"] = "OnFailure"
    assert status_update(old, lambda p: p["status"].update(containerStatuses=[
        {"name": "app", "state": {"running": {}}}])) == []


def test_ephemeral_containers_may_be_added_not_changed(created):
    debug = {"name": "debug", "image": "busybox", "imagePullPolicy": "Always",
             "terminationMessagePolicy": "File",
             "terminationMessagePath": "/dev/termination-log", "targetContainerName": "app"}
    with_debug = copy.deepcopy(created)
    with_debug["spec"]["ephemeralContainers"] = [debug]
    assert validate_pod_ephemeral_containers_update(with_debug, created) == []
    changed = copy.deepcopy(with_debug)
    changed["spec"]["ephemeralContainers"][0]["image"] = "busybox:2"
    assert texts(validate_pod_ephemeral_containers_update(changed, with_debug)) == [
        'spec.ephemeralContainers: Forbidden: existing ephemeral containers "debug" may not be '
        "changed\n" + lines(
            "core.EphemeralContainer{",
            "\tEphemeralContainerCommon: core.EphemeralContainerCommon{",
            '\t\tName:    "debug",',
            '-\t\tImage:   "busybox",',
            '+\t\tImage:   "busybox:2",',
            "\t\tCommand: nil,",
            "\t\tArgs:    nil,",
            "\t\t... // 20 identical fields",
            "\t},",
            '\tTargetContainerName: "app",',
            "}")]
    removed = copy.deepcopy(with_debug)
    removed["spec"]["ephemeralContainers"] = []
    assert texts(validate_pod_ephemeral_containers_update(removed, with_debug)) == [
        'spec.ephemeralContainers: Forbidden: existing ephemeral containers "debug" may not be '
        "removed\n"]
    bad = copy.deepcopy(created)
    bad["spec"]["ephemeralContainers"] = [dict(debug, targetContainerName="nope",
                                               ports=[{"containerPort": 1, "protocol": "TCP"}])]
    assert texts(validate_pod_ephemeral_containers_update(bad, created)) == [
        "spec.ephemeralContainers[0].targetContainerName: Not found: \"nope\"",
        "spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral "
        "Container"]
    static = copy.deepcopy(created)
    static["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "x"}
    static["spec"]["nodeName"] = "n"
    added = copy.deepcopy(static)
    added["spec"]["ephemeralContainers"] = [debug]
    assert texts(validate_pod_ephemeral_containers_update(added, static)) == [
        # field.NewPath("") prints as "[]"
        "[]: Forbidden: static pods do not support ephemeral containers"]


@pytest.mark.parametrize("binding, expected", [
    ({"target": {"kind": "Node", "name": "n"}}, []),
    ({"target": {"name": "n"}}, []),
    ({"target": {"kind": "Pod"}},
     ['target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>"',
      "target.name: Required value"]),
    ({}, ["target.name: Required value"]),
])
def test_bindings(binding, expected):
    assert texts(validate_pod_binding(binding)) == expected
