"""Tests for kapiserver.fieldmanager.apply: server-side apply's merge and field ownership."""

import copy
import json

import pytest

from kapiserver import errors
from kapiserver.fieldmanager import (LAST_APPLIED, Applier, build_last_applied,
                                     update_managed_fields)
from tests.fieldmanager.transcripts import reference, reference_body

T0, T1, T2 = "2026-11-22T01:51:25Z", "2026-11-22T01:52:00Z", "2026-11-22T01:53:00Z"


def dumps(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def cm(**data) -> dict:
    """An applied ConfigMap configuration."""
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}
    if data:
        config["data"] = data
    return config


def apply(live, config, manager, now=T1, force=False, kind="ConfigMap", **kwargs):
    return Applier("v1", kind, manager, **kwargs).apply(live, config, now, force)


def stored(obj: dict, namespace="ns") -> dict:
    """``obj`` as the store keeps it after a create."""
    obj = copy.deepcopy(obj)
    obj["metadata"].update(namespace=namespace, uid="7c1b", resourceVersion="5",
                           creationTimestamp=T0)
    return obj


def created(config, manager="a", **kwargs) -> dict:
    return stored(apply(None, config, manager, now=T0, **kwargs))


def entries(obj: dict) -> dict:
    """FieldsV1 by ``manager/operation[/subresource]``."""
    return {"/".join(filter(None, (e["manager"], e["operation"], e.get("subresource")))):
            e["fieldsV1"] for e in obj["metadata"].get("managedFields", [])}


def times(obj: dict) -> dict:
    return {e["manager"]: e.get("time") for e in obj["metadata"].get("managedFields", [])}


def status_of(err: errors.StatusError) -> dict:
    return err.to_status()


# -- the reference transcripts ----------------------------------------------------------------

def test_create_on_apply_matches_the_reference():
    exchange = reference("apply-create.json")
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm-ssa"},
              "data": {"x": "1"}}
    obj = apply(None, config, "mgr-a", now="2026-11-22T01:51:25Z")
    expected = exchange["response"]["body"]
    assert dumps(obj["metadata"]["managedFields"]) == dumps(expected["metadata"]["managedFields"])
    assert list(obj) == ["kind", "apiVersion", "metadata", "data"]
    assert obj["data"] == expected["data"]


def test_a_conflict_matches_the_reference():
    live = created({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm-ssa"},
                    "data": {"x": "1"}}, "mgr-a")
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm-ssa"},
              "data": {"x": "2"}}
    with pytest.raises(errors.Conflict) as caught:
        apply(live, config, "mgr-b")
    assert status_of(caught.value) == reference_body("apply-conflict.json")


# -- ownership ------------------------------------------------------------------------------

def test_reapplying_the_same_config_changes_nothing():
    live = created(cm(x="1"))
    again = apply(live, cm(x="1"), "a", now=T2)
    assert again == live  # the entry keeps its time: nothing changed


def test_changing_a_value_by_its_owner_updates_the_entry_time():
    obj = apply(created(cm(x="1")), cm(x="2"), "a", now=T2)
    assert obj["data"] == {"x": "2"} and times(obj) == {"a": T2}


def test_applying_the_live_value_shares_ownership_without_a_time():
    # upstream only stamps an entry when the object changed
    obj = apply(created(cm(x="1")), cm(x="1"), "b")
    assert entries(obj) == {"b/Apply": {"f:data": {"f:x": {}}},
                            "a/Apply": {"f:data": {"f:x": {}}}}
    assert times(obj) == {"a": T0, "b": None}
    assert [e["manager"] for e in obj["metadata"]["managedFields"]] == ["b", "a"]


def test_force_takes_the_fields_and_drops_emptied_entries():
    obj = apply(created(cm(x="1")), cm(x="2"), "b", force=True)
    assert obj["data"] == {"x": "2"}
    assert entries(obj) == {"b/Apply": {"f:data": {"f:x": {}}}}


def test_force_leaves_other_fields_with_their_owner():
    obj = apply(created(cm(x="1", y="1")), cm(x="2"), "b", force=True)
    assert entries(obj) == {"a/Apply": {"f:data": {"f:y": {}}},
                            "b/Apply": {"f:data": {"f:x": {}}}}


def test_a_field_left_out_of_the_config_is_removed_when_nobody_else_owns_it():
    obj = apply(created(cm(x="1", y="2")), cm(x="1"), "a", now=T2)
    assert obj["data"] == {"x": "1"} and entries(obj) == {"a/Apply": {"f:data": {"f:x": {}}}}
    assert times(obj) == {"a": T2}


def test_removing_every_field_removes_the_map_and_the_entry():
    obj = apply(created(cm(x="1")), cm(), "a")
    assert "data" not in obj and "managedFields" not in obj["metadata"]


def test_a_field_another_applier_owns_stays_disowned():
    live = apply(created(cm(x="1")), cm(x="1"), "b")
    obj = apply(live, cm(y="2"), "a")
    assert obj["data"] == {"x": "1", "y": "2"}
    assert entries(obj) == {"b/Apply": {"f:data": {"f:x": {}}},
                            "a/Apply": {"f:data": {"f:y": {}}}}


def test_a_field_an_updater_owns_stays():
    live = created(cm(x="1"))
    updated = copy.deepcopy(live)
    updated["data"]["x"] = "9"
    update_managed_fields(live, updated, "kubectl-edit", "v1", T1)
    assert entries(updated) == {"kubectl-edit/Update": {"f:data": {"f:x": {}}}}
    obj = apply(updated, cm(y="2"), "a", now=T2)
    assert obj["data"] == {"x": "9", "y": "2"}
    assert entries(obj) == {"a/Apply": {"f:data": {"f:y": {}}},
                            "kubectl-edit/Update": {"f:data": {"f:x": {}}}}


def test_conflicts_with_updaters_name_their_api_version_and_are_listed_by_manager():
    live = created(cm(x="1", y="1"))
    edited = copy.deepcopy(live)
    edited["data"].update(x="2", z="2")
    update_managed_fields(live, edited, "kubectl-edit", "v1", T1)
    with pytest.raises(errors.Conflict) as caught:
        apply(edited, cm(x="3", y="3", z="3"), "c")
    status = status_of(caught.value)
    assert status["message"] == (
        'Apply failed with 3 conflicts: conflicts with "a":\n- .data.y\n'
        'conflicts with "kubectl-edit" using v1:\n- .data.x\n- .data.z')
    assert status["details"] == {"causes": [
        {"reason": "FieldManagerConflict", "message": 'conflict with "a"', "field": ".data.y"},
        {"reason": "FieldManagerConflict", "message": 'conflict with "kubectl-edit" using v1',
         "field": ".data.x"},
        {"reason": "FieldManagerConflict", "message": 'conflict with "kubectl-edit" using v1',
         "field": ".data.z"}]}


def test_a_removal_by_apply_is_no_conflict_and_leaves_every_owner():
    live = apply(created(cm(x="1", y="1")), cm(y="1"), "b")
    obj = apply(live, cm(x="1"), "a")
    assert obj["data"] == {"x": "1", "y": "1"}  # b still owns y
    obj = apply(obj, cm(), "b")
    assert obj["data"] == {"x": "1"}


def test_a_config_setting_only_stripped_fields_records_no_entry():
    obj = apply(None, cm(), "a")
    assert "managedFields" not in obj["metadata"]
    assert obj == {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "cm"}}


# -- structure: nested and atomic maps, sets, keyed and atomic lists ---------------------------

def test_labels_and_annotations_are_owned_key_by_key():
    config = cm()
    config["metadata"].update(labels={"app": "web"}, annotations={"note": "x"})
    obj = apply(None, config, "a")
    assert entries(obj) == {"a/Apply": {"f:metadata": {
        "f:annotations": {"f:note": {}}, "f:labels": {"f:app": {}}}}}


def svc(**spec) -> dict:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}, "spec": spec}


def apply_svc(live, config, manager, **kwargs):
    return apply(live, config, manager, kind="Service", status_subresource=True, **kwargs)


def test_atomic_maps_are_one_field():
    live = stored(apply_svc(None, svc(selector={"app": "web", "tier": "x"}), "a"))
    assert entries(live) == {"a/Apply": {"f:spec": {"f:selector": {}}}}
    with pytest.raises(errors.Conflict) as caught:
        apply_svc(live, svc(selector={"app": "web"}), "b")
    assert caught.value.message == 'Apply failed with 1 conflict: conflict with "a": .spec.selector'
    obj = apply_svc(live, svc(selector={"app": "other"}), "b", force=True)
    assert obj["spec"]["selector"] == {"app": "other"}  # replaced whole, not merged


def test_atomic_lists_are_one_field():
    live = stored(apply_svc(None, svc(externalIPs=["1.1.1.1"]), "a"))
    with pytest.raises(errors.Conflict) as caught:
        apply_svc(live, svc(externalIPs=["1.1.1.1", "2.2.2.2"]), "b")
    assert caught.value.details["causes"][0]["field"] == ".spec.externalIPs"


def test_keyed_lists_with_several_keys_are_owned_item_by_item():
    live = stored(apply_svc(None, svc(ports=[{"name": "http", "port": 80, "targetPort": 8080},
                                             {"name": "dns", "port": 53, "protocol": "UDP"}]),
                            "a"))
    obj = apply_svc(live, svc(ports=[{"port": 443, "name": "https"}]), "b")
    assert [p["port"] for p in obj["spec"]["ports"]] == [80, 53, 443]
    assert entries(obj)["b/Apply"] == {"f:spec": {"f:ports": {
        'k:{"port":443,"protocol":"TCP"}': {".": {}, "f:name": {}, "f:port": {}}}}}
    with pytest.raises(errors.Conflict) as caught:
        apply_svc(obj, svc(ports=[{"port": 80, "targetPort": 9090}]), "b")
    assert caught.value.details["causes"] == [{
        "reason": "FieldManagerConflict", "message": 'conflict with "a"',
        "field": '.spec.ports[port=80,protocol="TCP"].targetPort'}]
    # a drops the dns port: gone; b's port stays
    obj = apply_svc(stored(obj), svc(ports=[{"name": "http", "port": 80, "targetPort": 8080}]),
                    "a")
    assert [p["port"] for p in obj["spec"]["ports"]] == [80, 443]


def test_sets_are_owned_value_by_value():
    def fin(*values):
        config = cm()
        config["metadata"]["finalizers"] = list(values)
        return config

    live = created(fin("a.io/x", "a.io/y"))
    obj = apply(live, fin("b.io/z"), "b")
    assert obj["metadata"]["finalizers"] == ["a.io/x", "a.io/y", "b.io/z"]
    assert entries(obj)["b/Apply"] == {"f:metadata": {"f:finalizers": {'v:"b.io/z"': {}}}}
    obj = apply(stored(obj), fin("a.io/y"), "a")
    assert obj["metadata"]["finalizers"] == ["a.io/y", "b.io/z"]


def test_a_null_map_value_is_owned_and_becomes_the_zero_value():
    obj = apply(created(cm(x="1")), cm(x=None), "a", now=T2)
    assert obj["data"] == {"x": ""} and entries(obj) == {"a/Apply": {"f:data": {"f:x": {}}}}


# -- reset fields and subresources -----------------------------------------------------------

def test_status_is_not_applied_through_the_main_resource():
    live = stored(apply_svc(None, svc(type="ClusterIP"), "a"))
    live["status"] = {"loadBalancer": {}}
    config = svc(type="ClusterIP")
    config["status"] = {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}
    obj = apply_svc(live, config, "a", now=T2)
    assert obj == live  # nothing but status changed, and status is not this write's


def test_status_subresource_applies_status_and_records_the_subresource():
    live = stored({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"},
                   "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}, "")
    config = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"},
              "spec": {"finalizers": []},
              "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    obj = Applier("v1", "Namespace", "ctl", "status", status_subresource=True).apply(
        live, config, T1)
    # (a zero metav1.Time is written as null, as Go writes it)
    assert obj["status"]["conditions"] == [
        {"type": "Ready", "status": "True", "lastTransitionTime": None}]
    assert entries(obj) == {"ctl/Apply/status": {"f:status": {"f:conditions": {
        'k:{"type":"Ready"}': {".": {}, "f:status": {}, "f:type": {}}}}}}
    assert obj["metadata"]["managedFields"][0]["subresource"] == "status"


# -- refusals ---------------------------------------------------------------------------------

@pytest.mark.parametrize("api_version,kind,message", [
    ("apps/v1", "ConfigMap", "invalid object type: apps/v1, Kind=ConfigMap"),
    ("v1", "Secret", "invalid object type: /v1, Kind=Secret"),
    (None, "ConfigMap", "invalid object type: /, Kind=ConfigMap"),
])
def test_a_config_of_another_type_is_a_bad_request(api_version, kind, message):
    config = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "cm"}}
    with pytest.raises(errors.BadRequest) as caught:
        apply(None, config, "a")
    assert caught.value.message == message


def test_managed_fields_may_not_be_applied():
    config = cm(x="1")
    config["metadata"]["managedFields"] = []
    with pytest.raises(errors.BadRequest) as caught:
        apply(None, config, "a")
    assert caught.value.message == "metadata.managedFields must be nil"


def test_a_config_outside_the_schema_is_a_bad_request_in_upstreams_words():
    # Upstream answers a plain error, a 500 (kubernetes/kubernetes#122480): never a 5xx
    # for bad input here.
    config = cm(x=1)
    config["metadata"]["namespace"] = "ns"
    with pytest.raises(errors.BadRequest) as caught:
        apply(None, config, "a")
    assert status_of(caught.value) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "failed to create typed patch object (ns/cm; /v1, Kind=ConfigMap): "
                   ".data.x: expected string, got &value.valueUnstructured{Value:1}",
        "reason": "BadRequest", "code": 400}
    config = cm()
    config["metadata"]["bad"], config["spec"] = 1, {}
    with pytest.raises(errors.BadRequest) as caught:
        apply(None, config, "a")
    assert caught.value.message == (
        "failed to create typed patch object (/cm; /v1, Kind=ConfigMap): errors:\n"
        "  .metadata.bad: field not declared in schema\n"
        "  .spec: field not declared in schema")


# -- kubectl's client-side apply annotation -----------------------------------------------------

def csa_created(data: dict) -> dict:
    """A ConfigMap made by ``kubectl apply`` (client-side): annotation, Update entry."""
    config = cm(**data)
    annotated = copy.deepcopy(config)
    annotated["metadata"]["annotations"] = {LAST_APPLIED: build_last_applied(config)}
    update_managed_fields(None, annotated, "kubectl-client-side-apply", "v1", T0)
    return stored(annotated)


def test_kubectl_takes_over_fields_its_client_side_annotation_set():
    live = csa_created({"x": "1", "y": "1"})
    obj = apply(live, cm(x="2", y="1"), "kubectl")
    assert obj["data"] == {"x": "2", "y": "1"}
    assert entries(obj)["kubectl/Apply"] == {"f:data": {"f:x": {}, "f:y": {}}}
    # and the annotation follows the applied configuration
    assert obj["metadata"]["annotations"][LAST_APPLIED] == \
        '{"apiVersion":"v1","data":{"x":"2","y":"1"},"kind":"ConfigMap","metadata":{"name":"cm"}}\n'


def test_other_managers_get_no_such_allowance():
    with pytest.raises(errors.Conflict):
        apply(csa_created({"x": "1"}), cm(x="2"), "other")


def test_fields_changed_since_the_annotation_still_conflict():
    live = csa_created({"x": "1", "y": "1"})
    live["data"]["y"] = "changed-by-hand"
    with pytest.raises(errors.Conflict) as caught:
        apply(live, cm(x="2", y="3"), "kubectl")
    assert [c["field"] for c in caught.value.details["causes"]] == [".data.y"]


def test_build_last_applied_is_gos_sorted_json_without_the_annotation():
    config = {"metadata": {"annotations": {LAST_APPLIED: "old", "a": "<&>"}, "name": "x"},
              "apiVersion": "v1", "kind": "ConfigMap", "data": {"n": 1.5}}
    assert build_last_applied(config) == (
        '{"apiVersion":"v1","data":{"n":1.5},"kind":"ConfigMap","metadata":'
        '{"annotations":{"a":"\\u003c\\u0026\\u003e"},"name":"x"}}\n')
