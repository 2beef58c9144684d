"""Tests for kapiserver.fieldmanager.managed: managedFields of creates and updates."""

import copy
import json
import logging

import pytest

from kapiserver.fieldmanager import (ListTypes, decode_managed_fields,
                                     encode_managed_fields, update_managed_fields)
from tests.fieldmanager.transcripts import reference, reference_body, reference_item

T0, T1, T2 = "2026-11-22T01:51:25Z", "2026-11-22T01:52:00Z", "2026-11-22T01:53:00Z"


def dumps(value) -> str:
    """JSON text keeping key order: entries and FieldsV1 must match upstream's order."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def created(body: dict, manager: str = "capture", now: str = T0, **extra) -> dict:
    """``body`` as the create handler holds it when the field manager runs."""
    obj = copy.deepcopy(body)
    update_managed_fields(None, obj, manager, obj.get("apiVersion", "v1"), now, **extra)
    stored = copy.deepcopy(obj)
    stored["metadata"].update(uid="c2fd2e45", resourceVersion="1", creationTimestamp=now)
    return stored


def updated(old: dict, change, manager: str, now: str = T1, **kwargs) -> dict:
    new = copy.deepcopy(old)
    change(new)
    update_managed_fields(old, new, manager, old.get("apiVersion", "v1"), now, **kwargs)
    return new


def fields(obj: dict) -> dict:
    """FieldsV1 by manager (and subresource, when set)."""
    return {(e["manager"] + ("/" + e["subresource"] if "subresource" in e else "")):
            e["fieldsV1"] for e in obj["metadata"].get("managedFields", [])}


def configmap(**data) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "cm1", "namespace": "ns", "labels": {"app": "ref"}},
            "data": data or {"a": "1"}}


# -- the reference transcripts ----------------------------------------------------------------

def test_create_matches_the_reference_byte_for_byte():
    exchange = reference("create-configmap.json")
    obj = copy.deepcopy(exchange["request"]["body"])
    obj["metadata"]["namespace"] = "ref-b5828b"
    update_managed_fields(None, obj, "capture", "v1", "2026-11-22T01:51:25Z")
    expected = exchange["response"]["body"]["metadata"]["managedFields"]
    assert dumps(obj["metadata"]["managedFields"]) == dumps(expected)
    assert reference_body("get-configmap.json")["metadata"]["managedFields"] == expected


def put_b_c_and_label_s(obj):
    obj["data"].update(b="2", c="3")
    obj["metadata"]["labels"]["s"] = "1"


def test_update_by_a_second_manager_matches_the_reference():
    stored = reference_body("create-configmap.json")
    new = updated(stored, put_b_c_and_label_s, "python-requests", now="2026-11-22T01:51:25Z")
    expected = reference_item("list-configmaps-limit.json", "cm1")["metadata"]["managedFields"]
    assert dumps(new["metadata"]["managedFields"]) == dumps(expected)


def test_a_client_that_drops_managed_fields_keeps_them():
    # a PUT built from scratch (no managedFields) keeps the live entries
    stored = reference_body("create-configmap.json")

    def rebuild(obj):
        put_b_c_and_label_s(obj)
        del obj["metadata"]["managedFields"]

    new = updated(stored, rebuild, "python-requests", now="2026-11-22T01:51:25Z")
    expected = reference_item("list-configmaps-limit.json", "cm1")["metadata"]["managedFields"]
    assert dumps(new["metadata"]["managedFields"]) == dumps(expected)


def test_namespace_create_matches_the_reference():
    # the label comes from defaulting (tracked); spec.finalizers and status.phase come
    # from PrepareForCreate, after the field manager, and status is a reset field anyway
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": "ref-b5828b", "labels": {"kubernetes.io/metadata.name": "ref-b5828b"}},
        "status": {"phase": "Active"}}
    obj = copy.deepcopy(body)
    update_managed_fields(None, obj, "python-requests", "v1", "2026-11-22T01:51:25Z",
                          status_subresource=True)
    expected = reference_body("namespace-delete.json")["metadata"]["managedFields"]
    assert dumps(obj["metadata"]["managedFields"]) == dumps(expected)


def test_patches_match_the_reference_step_by_step():
    # merge patch data.b, JSON patch data.c, strategic patch label s, all by python-requests
    obj = reference_body("create-configmap.json")
    steps = [("patch-merge.json", lambda o: o["data"].update(b="2")),
             ("patch-json.json", lambda o: o["data"].update(c="3")),
             ("patch-strategic.json", lambda o: o["metadata"]["labels"].update(s="1"))]
    for name, patch in steps:
        obj = updated(obj, patch, "python-requests", now="2026-11-22T01:51:25Z")
        expected = reference_body(name)["metadata"]["managedFields"]
        assert dumps(obj["metadata"]["managedFields"]) == dumps(expected), name


def test_the_kubernetes_service_matches_the_reference():
    # what the apiserver's own reconciler sends, once defaulted; clusterIPs and ipFamilies
    # are allocated after the field manager ran
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {
        "name": "kubernetes", "namespace": "default",
        "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {"ports": [{"name": "https", "protocol": "TCP", "port": 443,
                            "targetPort": 6443}],
                 "clusterIP": "10.0.0.1", "type": "ClusterIP", "sessionAffinity": "None",
                 "ipFamilyPolicy": "SingleStack", "internalTrafficPolicy": "Cluster"},
        "status": {"loadBalancer": {}}}
    update_managed_fields(None, service, "kube-apiserver", "v1", "2026-11-22T01:45:57Z",
                          status_subresource=True)
    row = reference_body("table-services.json")["rows"][0]["object"]
    assert dumps(service["metadata"]["managedFields"]) == \
        dumps(row["metadata"]["managedFields"])


def test_a_lease_renewal_matches_the_reference():
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {
        "name": "apiserver-wlv32tlttr4jl3gtroqexyxapa", "namespace": "kube-system",
        "labels": {"apiserver.kubernetes.io/identity": "kube-apiserver",
                   "kubernetes.io/hostname": "vm"}},
        "spec": {"holderIdentity": "apiserver-wlv32tlttr4jl3gtroqexyxapa_x",
                 "leaseDurationSeconds": 3600, "renewTime": "2026-11-22T01:45:55.000000Z"}}
    stored = created(lease, manager="kube-apiserver", now="2026-11-22T01:45:55Z")
    renewed = updated(stored, lambda o: o["spec"].update(
        renewTime="2026-11-22T01:51:22.000000Z"), "kube-apiserver", now="2026-11-22T01:51:22Z")
    row = reference_body("table-leases.json")["rows"][0]["object"]
    assert dumps(renewed["metadata"]["managedFields"]) == dumps(row["metadata"]["managedFields"])


def test_a_custom_resource_matches_the_reference():
    # custom resources are unstructured: spec is not in the zero object, so it is owned
    body = reference("cr-create.json")["request"]["body"]
    obj = copy.deepcopy(body)
    update_managed_fields(None, obj, "python-requests", "capture.example.com/v1",
                          "2026-11-22T01:51:30Z")
    expected = reference_body("cr-create.json")["metadata"]["managedFields"]
    # (upstream writes unstructured objects with sorted keys; the entry itself is equal)
    assert obj["metadata"]["managedFields"] == expected
    assert dumps(obj["metadata"]["managedFields"][0]["fieldsV1"]) == \
        dumps(expected[0]["fieldsV1"])


def test_apply_entries_decode_and_encode_unchanged():
    entries = reference_body("apply-create.json")["metadata"]["managedFields"]
    assert dumps(encode_managed_fields(decode_managed_fields(entries))) == dumps(entries)


# -- ownership ------------------------------------------------------------------------------

def test_modified_fields_move_to_the_writer():
    stored = created(configmap(a="1", b="2"))
    new = updated(stored, lambda o: o["data"].update(a="9"), "other")
    assert fields(new) == {
        "capture": {"f:data": {".": {}, "f:b": {}},
                    "f:metadata": {"f:labels": {".": {}, "f:app": {}}}},
        "other": {"f:data": {"f:a": {}}}}


def test_removed_fields_leave_every_entry_and_empty_entries_go():
    stored = created(configmap(a="1"))
    stored = updated(stored, lambda o: o["data"].update(b="2"), "other")
    new = updated(stored, lambda o: o["data"].pop("b"), "third", now=T2)
    assert set(fields(new)) == {"capture"}  # "other" owned only data.b
    new = updated(new, lambda o: o.pop("data"), "third", now=T2)
    assert fields(new) == {"capture": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}}
    new = updated(new, lambda o: o["metadata"].pop("labels"), "third", now=T2)
    assert "managedFields" not in new["metadata"]


def test_time_changes_only_when_the_writer_changed_something():
    stored = created(configmap(a="1"), now=T0)
    same = updated(stored, lambda o: None, "capture", now=T2)
    assert same["metadata"]["managedFields"] == stored["metadata"]["managedFields"]
    # losing a field to another manager does not touch the loser's time
    taken = updated(stored, lambda o: o["data"].update(a="2"), "other", now=T1)
    times = {e["manager"]: e["time"] for e in taken["metadata"]["managedFields"]}
    assert times == {"capture": T0, "other": T1}
    # a manager writing again merges into its entry and takes the new time
    again = updated(taken, lambda o: o["data"].update(z="1"), "other", now=T2)
    entry = again["metadata"]["managedFields"][1]
    assert (entry["manager"], entry["time"]) == ("other", T2)
    assert entry["fieldsV1"] == {"f:data": {"f:a": {}, "f:z": {}}}


def test_a_no_op_write_adds_no_entry():
    stored = created(configmap())
    new = updated(stored, lambda o: None, "someone-else")
    assert new["metadata"]["managedFields"] == stored["metadata"]["managedFields"]


def test_untracked_paths_are_never_owned():
    stored = created(configmap())
    new = updated(stored, lambda o: o["metadata"].update(
        resourceVersion="5", generation=3, selfLink="/x", uid="other", generateName="g-"),
        "other")
    # generateName is not in upstream's strip set
    assert fields(new)["other"] == {"f:metadata": {"f:generateName": {}}}


def test_entries_sort_by_operation_time_and_manager():
    stored = created(configmap(a="1"), manager="zed", now=T2)
    entries = stored["metadata"]["managedFields"] + [
        {"manager": "applier", "operation": "Apply", "apiVersion": "v1", "time": T2,
         "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:x": {}}}},
        {"manager": "alpha", "operation": "Update", "apiVersion": "v1", "time": T1,
         "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:y": {}}}},
        {"manager": "zed", "operation": "Update", "apiVersion": "v1", "time": T2,
         "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:q": {}}},
         "subresource": "status"}]
    stored["metadata"]["managedFields"] = entries
    stored["data"].update(x="1", y="2", q="3")
    new = updated(stored, lambda o: o["data"].update(b="b"), "beta", now=T2)
    order = [(e["operation"], e["manager"], e.get("subresource", ""))
             for e in new["metadata"]["managedFields"]]
    assert order == [("Apply", "applier", ""), ("Update", "alpha", ""),
                     ("Update", "beta", ""), ("Update", "zed", ""), ("Update", "zed", "status")]
    assert list(new["metadata"]["managedFields"][-1]) == [
        "manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1", "subresource"]


def test_keyed_and_set_lists():
    body = {"apiVersion": "v1", "kind": "Service", "metadata": {
        "name": "s", "finalizers": ["example.com/x"],
        "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u1"}]},
        "spec": {"ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080}],
                 "selector": {"app": "x"}, "type": "ClusterIP"}}
    stored = created(body, manager="kubectl-create", status_subresource=True)
    assert dumps(fields(stored)["kubectl-create"]) == dumps({
        "f:metadata": {"f:finalizers": {".": {}, 'v:"example.com/x"': {}},
                       "f:ownerReferences": {".": {}, 'k:{"uid":"u1"}': {}}},
        "f:spec": {"f:ports": {".": {}, 'k:{"port":80,"protocol":"TCP"}': {
            ".": {}, "f:name": {}, "f:port": {}, "f:protocol": {}, "f:targetPort": {}}},
            "f:selector": {}, "f:type": {}}})
    # reordering keyed items changes nothing; a new port is one more item
    new = updated(stored, lambda o: o["spec"]["ports"].insert(
        0, {"name": "dns", "port": 53, "protocol": "UDP"}), "other", status_subresource=True)
    assert fields(new)["other"] == {"f:spec": {"f:ports": {'k:{"port":53,"protocol":"UDP"}': {
        ".": {}, "f:name": {}, "f:port": {}, "f:protocol": {}}}}}


# -- status and subresources --------------------------------------------------------------

def service():
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
            "spec": {"type": "ClusterIP"}}


def test_status_is_not_owned_through_the_main_resource():
    stored = created(service(), status_subresource=True)
    new = updated(stored, lambda o: o.update(status={"loadBalancer": {"ingress": [
        {"ip": "1.2.3.4"}]}}), "other", status_subresource=True)
    assert "other" not in fields(new)


def test_status_subresource_writes_have_their_own_entry():
    stored = created(service(), status_subresource=True)

    def set_status(obj):
        obj["status"] = {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}
        obj["spec"]["type"] = "NodePort"  # reset: neither owned nor taken
        obj["metadata"]["managedFields"] = []  # ignored on a subresource

    new = updated(stored, set_status, "capture", subresource="status",
                  status_subresource=True)
    assert fields(new) == {"capture": {"f:spec": {"f:type": {}}},
                           "capture/status": {"f:status": {"f:loadBalancer": {
                               "f:ingress": {}}}}}
    assert new["metadata"]["managedFields"][1]["subresource"] == "status"


# -- what the request sends ----------------------------------------------------------------

def test_managed_fields_sent_by_the_client_are_taken():
    stored = created(configmap(a="1", b="2"))

    def rewrite(obj):
        obj["metadata"]["managedFields"] = [
            {"manager": "imported", "operation": "Update", "apiVersion": "v1", "time": T0,
             "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:b": {}}}}]

    new = updated(stored, rewrite, "other")
    assert fields(new) == {"imported": {"f:data": {"f:b": {}}}}


@pytest.mark.parametrize("bad", [
    [{"manager": "x", "operation": "Patch", "apiVersion": "v1", "fieldsType": "FieldsV1"}],
    [{"manager": "x", "operation": "Update", "fieldsType": "FieldsV1"}],
    [{"manager": "x", "operation": "Update", "apiVersion": "v1"}],
    [{"manager": "x", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV2"}],
    [{"manager": "x", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
      "fieldsV1": {"f:a": 1}}],
    ["nonsense"],
    "nonsense",
    None,
])
def test_bad_managed_fields_from_the_client_fall_back_to_the_live_ones(bad):
    stored = created(configmap())
    new = updated(stored, lambda o: o["metadata"].update(managedFields=bad), "other")
    assert new["metadata"]["managedFields"] == stored["metadata"]["managedFields"]


@pytest.mark.parametrize("reset", [[], [{}], [{"manager": "", "time": None}]])
def test_an_empty_list_resets_and_updates_never_start_tracking(reset):
    stored = created(configmap())
    new = updated(stored, lambda o: (o["metadata"].update(managedFields=reset),
                                     o["data"].update(z="1")), "other")
    assert "managedFields" not in new["metadata"]
    # an object without managed fields stays without them on update
    again = updated(new, lambda o: o["data"].update(y="1"), "other")
    assert "managedFields" not in again["metadata"]


def test_a_create_starts_tracking_even_with_a_reset():
    obj = configmap()
    obj["metadata"]["managedFields"] = []
    update_managed_fields(None, obj, "m", "v1", T0)
    assert set(fields(obj)) == {"m"}


def test_an_empty_manager_is_omitted():
    stored = created(configmap(), manager="")
    assert list(stored["metadata"]["managedFields"][0]) == [
        "operation", "apiVersion", "time", "fieldsType", "fieldsV1"]


def test_times_are_written_as_upstream_writes_them():
    stored = created(configmap())
    stored["metadata"]["managedFields"][0]["time"] = "2026-11-22T02:51:25.123+01:00"
    new = updated(stored, lambda o: None, "x")
    assert new["metadata"]["managedFields"][0]["time"] == "2026-11-22T01:51:25Z"


# -- caps and failures ---------------------------------------------------------------------

def test_more_than_ten_update_managers_merge_the_oldest():
    obj = created(configmap(a="0"), manager="m00", now="2026-01-01T00:00:00Z")
    for i in range(1, 12):
        obj = updated(obj, lambda o, i=i: o["data"].update({f"k{i:02}": str(i)}),
                      f"m{i:02}", now=f"2026-01-01T00:00:{i:02}Z")
    managers = [e["manager"] for e in obj["metadata"]["managedFields"]]
    assert len(managers) == 10
    ancient = obj["metadata"]["managedFields"][0]
    assert ancient["manager"] == "ancient-changes"
    # the two oldest (m00, m01) went into the bucket; then m02 merged, taking its time
    assert ancient["time"] == "2026-01-01T00:00:02Z"
    assert managers[1:] == [f"m{i:02}" for i in range(3, 12)]
    assert set(ancient["fieldsV1"]["f:data"]) == {".", "f:a", "f:k01", "f:k02"}


def test_lists_that_cannot_be_walked_leave_no_managed_fields(caplog):
    stored = created(service(), status_subresource=True)
    with caplog.at_level(logging.ERROR, "kapiserver.fieldmanager.managed"):
        new = updated(stored, lambda o: o["spec"].update(ports=[{"name": "x"}]), "other",
                      list_types=ListTypes({"spec.ports": ("map", ("name", "port"))}))
    assert "managedFields" not in new["metadata"]
    assert 'omits key field "port"' in caplog.text


def test_only_update_is_recorded_here():
    with pytest.raises(ValueError):
        update_managed_fields(None, configmap(), "m", "v1", T0, operation="Apply")
