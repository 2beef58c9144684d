"""Unit tests of events: the two API views of one stored event, validation, the table."""

import time

from kapiserver.apimachinery.field_errors import aggregate_message
from kapiserver_plugins.core import events as core
from kapiserver_plugins.events.events import EVENTS, EventStrategy, from_v1, to_v1

V1_STRATEGY = EventStrategy(EVENTS)
NEW = {"kind": "Event", "apiVersion": "events.k8s.io/v1",
       "metadata": {"name": "e", "namespace": "default"},
       "eventTime": "2024-01-01T00:00:00.000001Z",
       "series": {"count": 2, "lastObservedTime": "2024-01-01T00:01:00.000000Z"},
       "reportingController": "example.com/ctl", "reportingInstance": "ctl-0",
       "action": "Sync", "reason": "Synced",
       "regarding": {"kind": "Deployment", "namespace": "default", "name": "web"},
       "related": {"kind": "Pod", "name": "web-1"}, "note": "synced", "type": "Normal",
       "deprecatedSource": {}, "deprecatedFirstTimestamp": None,
       "deprecatedLastTimestamp": None}


def test_views_convert_both_ways():
    stored = to_v1(NEW)
    assert list(stored) == ["kind", "apiVersion", "metadata", "involvedObject", "reason",
                            "message", "source", "firstTimestamp", "lastTimestamp", "type",
                            "eventTime", "series", "action", "related", "reportingComponent",
                            "reportingInstance"]
    assert stored["involvedObject"] == NEW["regarding"] and stored["message"] == "synced"
    assert stored["reportingComponent"] == "example.com/ctl"
    assert from_v1(stored) == NEW
    legacy = core.normalize({"metadata": {"name": "old"}, "involvedObject": {"kind": "Node"},
                             "source": {"component": "kubelet"}, "count": 3,
                             "firstTimestamp": "2024-01-01T00:00:00Z", "unknown": 1})
    seen = from_v1(legacy)
    assert seen["deprecatedSource"] == {"component": "kubelet"}
    assert seen["deprecatedCount"] == 3 and seen["eventTime"] is None
    assert to_v1(seen) == dict(legacy, kind="Event", apiVersion="v1")


def test_strategy_hooks_convert_storage():
    obj = dict(NEW, unknownField=True)
    V1_STRATEGY.prepare_for_create(obj)
    assert obj == NEW
    assert V1_STRATEGY.from_storage(V1_STRATEGY.to_storage(obj)) == NEW
    assert V1_STRATEGY.validate(obj) == []
    fields = V1_STRATEGY.selectable_fields(obj)
    assert fields["regarding.name"] == "web" and fields["reportingController"] == \
        "example.com/ctl"
    assert "source" not in fields


def test_strict_validation_and_immutability():
    old = dict(NEW, metadata=dict(NEW["metadata"], resourceVersion="3"))
    new = dict(old, note="changed", regarding={"kind": "Pod", "name": "x",
                                               "namespace": "default"})
    assert aggregate_message(V1_STRATEGY.validate_update(new, old)) == (
        '[involvedObject: Invalid value: core.ObjectReference{Kind:"Pod", Namespace:"default", '
        'Name:"x", UID:"", APIVersion:"", ResourceVersion:"", FieldPath:""}: field is '
        'immutable, message: Invalid value: "changed": field is immutable]')
    bad_series = dict(NEW, series={"count": 1})
    assert aggregate_message(V1_STRATEGY.validate(bad_series)) == (
        '[series.count: Invalid value: "": should be at least 2, series.lastObservedTime: '
        "Required value]")
    # The same changes are allowed through v1, where only the legacy rules apply.
    core_strategy = core.EventStrategy(core.EVENTS)
    assert core_strategy.validate_update(to_v1(new), to_v1(old)) == []


def test_legacy_namespace_rules():
    cluster_scoped = {"metadata": {"name": "n", "namespace": "default"},
                      "involvedObject": {"kind": "Node", "name": "n1"}}
    assert core.validate_event(cluster_scoped, strict=False) == []
    elsewhere = dict(cluster_scoped, metadata={"name": "n", "namespace": "apps"})
    assert aggregate_message(core.validate_event(elsewhere, strict=False)) == (
        'involvedObject.namespace: Invalid value: "": does not match event.namespace')
    new_style = dict(elsewhere, eventTime="2024-01-01T00:00:00Z", reportingComponent="c",
                     reportingInstance="i", action="a", reason="r")
    assert core.validate_event(dict(new_style, metadata={"name": "n",
                                                         "namespace": "kube-system"}),
                               strict=False) == []
    assert aggregate_message(core.validate_event(new_style, strict=False)) == (
        'involvedObject.namespace: Invalid value: "": does not match event.namespace')


def test_table_cells():
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 30))
    cells = core.table_cells({"metadata": {"name": "e"},
                              "involvedObject": {"kind": "Pod", "name": "p", "fieldPath": "x"},
                              "type": "Warning", "reason": "BackOff", "message": "  msg \n",
                              "firstTimestamp": now, "source": {"component": "kubelet"}})
    assert cells[1:] == ["Warning", "BackOff", "pod/p", "x", "kubelet", "msg", cells[7], 1, "e"]
    assert cells[0] == cells[7] and cells[0].endswith("s")
    series = core.table_cells(to_v1(NEW))
    assert series[3] == "deployment/web" and series[5] == "example.com/ctl, ctl-0"
    assert series[8] == 2
    assert core.table_cells({"metadata": {}})[:4] == ["<unknown>", "", "", ""]
