"""apps/v1 defaults (``pkg/apis/apps/v1/defaults.go`` and the pod template's), against
kube-apiserver 1.32's answers in the reference transcripts."""

import json
import pathlib

import pytest

KINDS = pathlib.Path("/work/shared/reference/wide/kinds")
RESOURCES = ("deployments", "replicasets", "statefulsets", "daemonsets", "controllerrevisions")
TEMPLATE = {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "nginx"}]}}


def body(kind: str, **spec) -> dict:
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "x"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE, **spec}}


@pytest.mark.skipif(not KINDS.is_dir(), reason="reference transcripts absent")
@pytest.mark.parametrize("resource", RESOURCES)
def test_minimal_objects_get_upstreams_defaults(kinds, resource):
    exchange = json.loads((KINDS / f"{resource}-create.json").read_text())
    obj, errors = kinds[resource].create(exchange["request"]["body"], "ref-069ea7")
    expected = exchange["response"]["body"]
    assert errors == []
    assert {k: v for k, v in obj.items() if k != "metadata"} == \
        {k: v for k, v in expected.items() if k != "metadata"}
    assert obj["metadata"].get("annotations") == expected["metadata"].get("annotations")
    assert obj["metadata"].get("generation") == expected["metadata"].get("generation")


def test_deployment_recreate_gets_no_rolling_update(kinds):
    obj, errors = kinds["deployments"].create(body("Deployment", strategy={"type": "Recreate"}))
    assert errors == []
    assert obj["spec"]["strategy"] == {"type": "Recreate"}


def test_deployment_keeps_what_is_set(kinds):
    obj, _ = kinds["deployments"].create(body(
        "Deployment", replicas=0, revisionHistoryLimit=0, progressDeadlineSeconds=30,
        strategy={"rollingUpdate": {"maxSurge": 2}}))
    spec = obj["spec"]
    assert (spec["replicas"], spec["revisionHistoryLimit"], spec["progressDeadlineSeconds"]) \
        == (0, 0, 30)
    assert spec["strategy"] == {"type": "RollingUpdate",
                                "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 2}}


def test_daemonset_on_delete_gets_no_rolling_update(kinds):
    obj, errors = kinds["daemonsets"].create(body("DaemonSet",
                                                  updateStrategy={"type": "OnDelete"}))
    assert errors == []
    assert obj["spec"]["updateStrategy"] == {"type": "OnDelete"}


def test_daemonset_template_generation_starts_at_one_or_what_was_given(kinds):
    obj = body("DaemonSet")
    obj["metadata"]["annotations"] = {"deprecated.daemonset.template.generation": "7"}
    created, _ = kinds["daemonsets"].create(obj)
    assert created["metadata"]["annotations"] == {"deprecated.daemonset.template.generation": "7"}


def test_daemonset_template_generation_must_be_an_integer(kinds):
    from kapiserver import errors

    obj = body("DaemonSet")
    obj["metadata"]["annotations"] = {"deprecated.daemonset.template.generation": "seven"}
    with pytest.raises(errors.BadRequest) as caught:
        kinds["daemonsets"].create(obj)
    assert caught.value.message == 'strconv.ParseInt: parsing "seven": invalid syntax'


def test_statefulset_claim_templates_and_strategies(kinds):
    obj, errors = kinds["statefulsets"].create(body(
        "StatefulSet", serviceName="web", podManagementPolicy="Parallel",
        updateStrategy={"type": "OnDelete"},
        persistentVolumeClaimRetentionPolicy={"whenDeleted": "Delete"},
        volumeClaimTemplates=[{"metadata": {"name": "data"}, "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}}}}]))
    assert errors == []
    spec = obj["spec"]
    assert spec["podManagementPolicy"] == "Parallel"
    assert spec["updateStrategy"] == {"type": "OnDelete"}
    assert spec["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Delete",
                                                           "whenScaled": "Retain"}
    assert spec["volumeClaimTemplates"] == [{
        "metadata": {"name": "data", "creationTimestamp": None},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                 "volumeMode": "Filesystem"},
        "status": {"phase": "Pending"}}]


def test_statefulset_rolling_update_partition_and_alpha_max_unavailable(kinds):
    obj, errors = kinds["statefulsets"].create(body(
        "StatefulSet", updateStrategy={"type": "RollingUpdate",
                                       "rollingUpdate": {"maxUnavailable": 2}}))
    assert errors == []
    # MaxUnavailableStatefulSet is alpha in 1.32: the field is dropped on create.
    assert obj["spec"]["updateStrategy"] == {"type": "RollingUpdate",
                                             "rollingUpdate": {"partition": 0}}
