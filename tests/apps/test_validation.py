"""apps/v1 validation (``pkg/apis/apps/validation``, 1.32) with upstream's exact texts."""

import copy
import json
import pathlib

import pytest

from .conftest import texts

KINDS = pathlib.Path("/work/shared/reference/wide/kinds")
TEMPLATE = {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "nginx"}]}}
PERCENT_MSG = ("a valid percent string must be a numeric string followed by an ending '%' "
               "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")


def body(kind: str, name: str = "x", **spec) -> dict:
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": "web"}},
                     "template": copy.deepcopy(TEMPLATE), **spec}}


def errors_of(kinds, resource, obj):
    return texts(kinds[resource].create(obj)[1])


def stored(kinds, resource, obj):
    created, errors = kinds[resource].create(obj)
    assert errors == []
    created["metadata"].update(uid="u", resourceVersion="1",
                               creationTimestamp="2026-01-01T00:00:00Z")
    return created


# -- Deployments --------------------------------------------------------------------------

@pytest.mark.skipif(not KINDS.is_dir(), reason="reference transcripts absent")
def test_deployment_invalid_transcript(kinds):
    exchange = json.loads((KINDS / "deployments-invalid.json").read_text())
    _, errors = kinds["deployments"].create(exchange["request"]["body"], "ref-069ea7")
    assert kinds["deployments"].message("d-bad", errors) == \
        exchange["response"]["body"]["message"]


def test_deployment_rolling_update_numbers(kinds):
    assert errors_of(kinds, "deployments", body("Deployment", strategy={
        "rollingUpdate": {"maxUnavailable": "x%", "maxSurge": -1}})) == [
        'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString'
        '{Type:1, IntVal:0, StrVal:"x%"}: ' + PERCENT_MSG,
        "spec.strategy.rollingUpdate.maxSurge: Invalid value: -1: must be greater than or "
        "equal to 0",
    ]
    assert errors_of(kinds, "deployments", body("Deployment", strategy={
        "rollingUpdate": {"maxUnavailable": 0, "maxSurge": "0%"}})) == [
        "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString"
        '{Type:0, IntVal:0, StrVal:""}: may not be 0 when `maxSurge` is 0']
    assert errors_of(kinds, "deployments", body("Deployment", strategy={
        "rollingUpdate": {"maxUnavailable": "120%"}})) == [
        "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString"
        '{Type:1, IntVal:0, StrVal:"120%"}: must not be greater than 100%']


def test_deployment_strategy_types(kinds):
    assert errors_of(kinds, "deployments", body("Deployment", strategy={"type": "Canary"})) == [
        'spec.strategy: Unsupported value: apps.DeploymentStrategy{Type:"Canary", '
        "RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}: supported values: "
        '"Recreate", "RollingUpdate"']
    assert errors_of(kinds, "deployments", body("Deployment", strategy={
        "type": "Recreate", "rollingUpdate": {"maxSurge": 1}})) == [
        "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` "
        "is 'Recreate'"]


def test_deployment_deadline_selector_and_template(kinds):
    obj = body("Deployment", progressDeadlineSeconds=10, minReadySeconds=10)
    obj["spec"]["template"]["spec"].update(restartPolicy="Never", activeDeadlineSeconds=5)
    assert errors_of(kinds, "deployments", obj) == [
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: '
        '"Always"',
        "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in "
        "ReplicaSet is not Supported",
        "spec.progressDeadlineSeconds: Invalid value: 10: must be greater than "
        "minReadySeconds",
    ]
    missing = body("Deployment")
    del missing["spec"]["selector"]
    assert errors_of(kinds, "deployments", missing) == [
        "spec.selector: Required value",
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: '
        "`selector` does not match template `labels`"]
    assert errors_of(kinds, "deployments", body("Deployment", selector={})) == [
        "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for "
        "deployment"]
    bad = body("Deployment", selector={"matchExpressions": [{"key": "app", "operator": "Is"}]})
    assert errors_of(kinds, "deployments", bad) == [
        'spec.selector.matchExpressions[0].operator: Invalid value: "Is": not a valid '
        "selector operator",
        "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
        "MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{"
        'Key:"app", Operator:"Is", Values:[]string(nil)}}}: invalid label selector']


@pytest.mark.skipif(not KINDS.is_dir(), reason="reference transcripts absent")
def test_deployment_selector_is_immutable(kinds):
    exchange = json.loads((KINDS / "deployments-selector-immutable.json").read_text())
    old = stored(kinds, "deployments", body("Deployment", name="d1"))
    new = copy.deepcopy(old)
    new["spec"]["selector"] = exchange["request"]["body"]["spec"]["selector"]
    new["spec"]["template"]["metadata"] = exchange["request"]["body"]["spec"]["template"][
        "metadata"]
    _, errors = kinds["deployments"].update(new, old)
    assert kinds["deployments"].message("d1", errors) == exchange["response"]["body"]["message"]


def test_deployment_generation_follows_spec_and_annotations(kinds):
    deployments = kinds["deployments"]
    old = stored(kinds, "deployments", body("Deployment"))
    same, errors = deployments.update(old, old)
    assert (errors, same["metadata"]["generation"]) == ([], 1)
    annotated = copy.deepcopy(old)
    annotated["metadata"]["annotations"] = {"a": "b"}
    assert deployments.update(annotated, old)[0]["metadata"]["generation"] == 2
    labelled = copy.deepcopy(old)
    labelled["metadata"]["labels"] = {"a": "b"}
    assert deployments.update(labelled, old)[0]["metadata"]["generation"] == 1
    scaled = copy.deepcopy(old)
    scaled["spec"]["replicas"] = 5
    assert deployments.update(scaled, old)[0]["metadata"]["generation"] == 2


def test_deployment_status_update_keeps_spec_and_labels(kinds):
    old = stored(kinds, "deployments", body("Deployment"))
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"changed": "yes"}
    new["spec"]["replicas"] = 9
    new["status"] = {"replicas": 2, "readyReplicas": 3, "availableReplicas": 4,
                     "observedGeneration": -1}
    updated, errors = kinds["deployments"].update_status(new, old)
    assert updated["spec"] == old["spec"] and "labels" not in updated["metadata"]
    assert texts(errors) == [
        "status.observedGeneration: Invalid value: -1: must be greater than or equal to 0",
        "status.readyReplicas: Invalid value: 3: cannot be greater than status.replicas",
        "status.availableReplicas: Invalid value: 4: cannot be greater than status.replicas",
        "status.availableReplicas: Invalid value: 4: cannot be greater than readyReplicas",
    ]
    counted = copy.deepcopy(old)
    counted["status"] = {"collisionCount": 2}
    old_counted, _ = kinds["deployments"].update_status(counted, old)
    lower = copy.deepcopy(old_counted)
    lower["status"] = {"collisionCount": 1}
    assert texts(kinds["deployments"].update_status(lower, old_counted)[1]) == [
        "status.collisionCount: Invalid value: 1: cannot be decremented"]


# -- ReplicaSets ----------------------------------------------------------------------------

def test_replicaset_validation_and_update(kinds):
    assert errors_of(kinds, "replicasets", body("ReplicaSet", replicas=-2, selector={})) == [
        "spec.replicas: Invalid value: -2: must be greater than or equal to 0",
        "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for "
        "deployment"]
    old = stored(kinds, "replicasets", body("ReplicaSet"))
    new = copy.deepcopy(old)
    new["spec"]["replicas"] = -1
    new["spec"]["selector"] = {"matchLabels": {"app": "web", "v": "2"}}
    new["spec"]["template"]["metadata"]["labels"]["v"] = "2"
    _, errors = kinds["replicasets"].update(new, old)
    # ValidateReplicaSet and ValidateReplicaSetUpdate both check the spec (as upstream).
    assert texts(errors) == [
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":'
        '"web", "v":"2"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is '
        "immutable"]


def test_replicaset_get_attrs_and_cells(kinds):
    rs = kinds["replicasets"].strategy
    obj = stored(kinds, "replicasets", body("ReplicaSet", replicas=3))
    obj["status"] = {"replicas": 2, "readyReplicas": 1}
    assert rs.selectable_fields(obj) == {"metadata.name": "x", "metadata.namespace": "ns",
                                         "status.replicas": "2"}
    assert rs.table_cells(obj)[1:4] == [3, 2, 1]


# -- StatefulSets ---------------------------------------------------------------------------

def test_statefulset_names_are_dns_labels(kinds):
    assert errors_of(kinds, "statefulsets", body("StatefulSet", name="a.b")) == [
        'metadata.name: Invalid value: "a.b": must not contain dots']
    assert errors_of(kinds, "deployments", body("Deployment", name="a.b")) == []


def test_deployment_and_replicaset_names_should_be_dns_labels(kinds):
    for resource, kind in (("deployments", "Deployment"), ("replicasets", "ReplicaSet")):
        strategy = kinds[resource].strategy
        assert strategy.warnings_on_create(body(kind, name="web")) == []
        assert strategy.warnings_on_create(body(kind, name="a.b")) == [
            "metadata.name: this is used in Pod names and hostnames, which can result in "
            "surprising behavior; a DNS label is recommended: [must not contain dots]"]


def test_statefulset_spec_errors(kinds):
    obj = body("StatefulSet", podManagementPolicy="Random",
               updateStrategy={"type": "OnDelete", "rollingUpdate": {"partition": 1}},
               persistentVolumeClaimRetentionPolicy={"whenDeleted": "Keep"},
               ordinals={"start": -1}, selector={"matchLabels": {"app": "db"}})
    obj["spec"]["template"]["spec"]["activeDeadlineSeconds"] = 3
    assert errors_of(kinds, "statefulsets", obj) == [
        'spec.podManagementPolicy: Invalid value: "Random": must be \'OrderedReady\' or '
        "'Parallel'",
        "spec.updateStrategy.rollingUpdate: Invalid value: apps.RollingUpdateStatefulSetStrategy"
        "{Partition:1, MaxUnavailable:(*intstr.IntOrString)(nil)}: only allowed for "
        "updateStrategy 'RollingUpdate'",
        'spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Keep": '
        'supported values: "Retain", "Delete"',
        "spec.ordinals.start: Invalid value: -1: must be greater than or equal to 0",
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: '
        "`selector` does not match template `labels`",
        "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in "
        "StatefulSet is not Supported",
    ]
    assert errors_of(kinds, "statefulsets", body("StatefulSet", updateStrategy={
        "type": "Blue"})) == [
        'spec.updateStrategy: Invalid value: apps.StatefulSetUpdateStrategy{Type:"Blue", '
        "RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)}: must be "
        "'RollingUpdate' or 'OnDelete'"]


def test_statefulset_update_may_change_only_some_fields(kinds):
    old = stored(kinds, "statefulsets", body("StatefulSet", serviceName="web"))
    allowed = copy.deepcopy(old)
    allowed["spec"].update(replicas=4, minReadySeconds=3, ordinals={"start": 2},
                           updateStrategy={"type": "OnDelete"},
                           persistentVolumeClaimRetentionPolicy={"whenDeleted": "Delete",
                                                                 "whenScaled": "Delete"})
    allowed["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    updated, errors = kinds["statefulsets"].update(allowed, old)
    assert (errors, updated["metadata"]["generation"]) == ([], 2)
    renamed = copy.deepcopy(old)
    renamed["spec"]["serviceName"] = "other"
    assert texts(kinds["statefulsets"].update(renamed, old)[1]) == [
        "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', "
        "'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and "
        "'minReadySeconds' are forbidden"]


def test_statefulset_status_errors_come_before_metadata(kinds):
    old = stored(kinds, "statefulsets", body("StatefulSet"))
    new = copy.deepcopy(old)
    new["status"] = {"replicas": 1, "readyReplicas": 1, "availableReplicas": 2}
    _, errors = kinds["statefulsets"].update_status(new, old)
    assert texts(errors) == [
        "status.availableReplicas: Invalid value: 2: cannot be greater than status.replicas",
        "status.availableReplicas: Invalid value: 2: cannot be greater than "
        "status.readyReplicas"]


# -- DaemonSets -----------------------------------------------------------------------------

def test_daemonset_spec_errors(kinds):
    no_selector = body("DaemonSet")
    del no_selector["spec"]["selector"]
    assert errors_of(kinds, "daemonsets", no_selector) == [
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: '
        "`selector` does not match template `labels`"]
    assert errors_of(kinds, "daemonsets", body("DaemonSet", updateStrategy={
        "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "10%"}})) == [
        'spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:1, '
        'IntVal:0, StrVal:"10%"}: may not be set when maxUnavailable is non-zero']
    assert errors_of(kinds, "daemonsets", body("DaemonSet", updateStrategy={
        "rollingUpdate": {"maxUnavailable": 0}})) == [
        "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when "
        "maxSurge is 0"]
    assert errors_of(kinds, "daemonsets", body("DaemonSet", updateStrategy={
        "type": "Surge"})) == [
        'spec.updateStrategy: Unsupported value: apps.DaemonSetUpdateStrategy{Type:"Surge", '
        "RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}: supported values: "
        '"RollingUpdate", "OnDelete"']


def test_daemonset_template_generation_follows_the_template(kinds):
    daemonsets = kinds["daemonsets"]
    annotation = "deprecated.daemonset.template.generation"
    old = stored(kinds, "daemonsets", body("DaemonSet"))
    forged = copy.deepcopy(old)
    forged["metadata"]["annotations"][annotation] = "40"
    same, errors = daemonsets.update(forged, old)
    assert errors == []
    assert (same["metadata"]["annotations"][annotation], same["metadata"]["generation"]) == \
        ("1", 1)
    changed = copy.deepcopy(old)
    del changed["metadata"]["annotations"]
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    bumped, _ = daemonsets.update(changed, old)
    assert (bumped["metadata"]["annotations"][annotation], bumped["metadata"]["generation"]) \
        == ("2", 2)
    status = copy.deepcopy(bumped)
    status["metadata"]["annotations"][annotation] = "9"
    status["status"] = {"numberReady": -1}
    written, errors = daemonsets.update_status(status, bumped)
    assert written["metadata"]["annotations"][annotation] == "2"
    assert texts(errors) == [
        "status.numberReady: Invalid value: -1: must be greater than or equal to 0"]


# -- ControllerRevisions --------------------------------------------------------------------

REVISION = {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "r"}}

def test_controllerrevision_data_is_required_and_immutable(kinds):
    revisions = kinds["controllerrevisions"]
    _, errors = revisions.create({**REVISION, "revision": -1})
    assert texts(errors) == [
        "data: Required value: data is mandatory",
        "revision: Invalid value: -1: must be greater than or equal to 0"]
    old = stored(kinds, "controllerrevisions", {**REVISION, "data": {"a": 1}, "revision": 1})
    relabelled = copy.deepcopy(old)
    relabelled["metadata"]["labels"] = {"x": "y"}
    relabelled["revision"] = 2
    assert revisions.update(relabelled, old)[1] == []
    changed = copy.deepcopy(old)
    changed["data"] = {"a": 2}
    assert texts(revisions.update(changed, old)[1]) == [
        'data: Invalid value: runtime.Unknown{TypeMeta:runtime.TypeMeta{APIVersion:"", '
        'Kind:""}, Raw:[]uint8{0x7b, 0x22, 0x61, 0x22, 0x3a, 0x32, 0x7d}, ContentEncoding:"", '
        'ContentType:"application/json"}: field is immutable']


def test_controllerrevision_controller_cell(kinds):
    strategy = kinds["controllerrevisions"].strategy
    obj = {"metadata": {"name": "web-1", "ownerReferences": [
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": "u",
         "controller": True}]}, "revision": 3}
    assert strategy.table_cells(obj) == ["web-1", "statefulset.apps/web", 3, "<unknown>"]
