"""flowcontrol.apiserver.k8s.io/v1 FlowSchemas and PriorityLevelConfigurations: defaults,
validation, status writes and Table cells."""

import json
import pathlib

import pytest

from kapiserver_plugins.flowcontrol.flowschemas import (FLOW_SCHEMAS, FlowSchemaStrategy,
                                                        matching_order)
from kapiserver_plugins.flowcontrol.prioritylevels import (PRIORITY_LEVELS,
                                                           PriorityLevelStrategy)
from tests.support.kinds import create, stored, texts, update

REFERENCE = pathlib.Path("/work/shared/reference/wide")
SCHEMAS = FlowSchemaStrategy(FLOW_SCHEMAS)
LEVELS = PriorityLevelStrategy(PRIORITY_LEVELS)
EVERYTHING = {"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                                 "clusterScope": True}]}


def flow_schema(name="fs", **spec) -> dict:
    spec.setdefault("priorityLevelConfiguration", {"name": "global-default"})
    return {"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
            "metadata": {"name": name}, "spec": spec}


def level(name="pl", **spec) -> dict:
    return {"apiVersion": "flowcontrol.apiserver.k8s.io/v1",
            "kind": "PriorityLevelConfiguration", "metadata": {"name": name}, "spec": spec}


@pytest.mark.skipif(not REFERENCE.is_dir(), reason="reference transcripts absent")
@pytest.mark.parametrize("resource, strategy, kind", [
    ("flowschemas", SCHEMAS, "FlowSchema"),
    ("prioritylevelconfigurations", LEVELS, "PriorityLevelConfiguration")])
def test_the_bootstrap_objects_are_valid_and_defaulted(resource, strategy, kind):
    """Every object kube-apiserver made at start passes, unchanged by defaulting."""
    path = REFERENCE / f"at-start_apis_flowcontrol.apiserver.k8s.io_v1_{resource}.json"
    for item in json.loads(path.read_text())["response"]["body"]["items"]:
        body = {"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": kind,
                "metadata": {"name": item["metadata"]["name"]}, "spec": item["spec"]}
        obj, errors = create(strategy, body)
        assert errors == [], item["metadata"]["name"]
        assert obj["spec"] == item["spec"]


def test_flow_schema_defaults_and_precedence():
    obj, errors = create(SCHEMAS, flow_schema(rules=[{
        "subjects": [{"kind": "User", "user": {"name": "alice"}}], **EVERYTHING}]))
    assert errors == [] and obj["spec"]["matchingPrecedence"] == 1000
    assert obj["metadata"]["generation"] == 1
    assert texts(create(SCHEMAS, flow_schema(matchingPrecedence=1))[1]) == [
        "spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have "
        "matchingPrecedence 1"]
    assert texts(create(SCHEMAS, flow_schema(matchingPrecedence=10001,
                                             priorityLevelConfiguration={}))[1]) == [
        "spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000",
        "spec.priorityLevelConfiguration.name: Required value: must reference a priority level"]


def test_flow_schema_rules():
    _, errors = create(SCHEMAS, flow_schema(
        distinguisherMethod={"type": "ByGroup"},
        rules=[{"subjects": [{"kind": "ServiceAccount", "user": {"name": "a"},
                              "serviceAccount": {"name": "*"}},
                             {"kind": "Robot"}],
                "resourceRules": [{"verbs": ["get", "fly"], "apiGroups": ["*", "apps"],
                                   "resources": [], "namespaces": ["Bad"]}],
                "nonResourceRules": [{"verbs": ["*", "get"], "nonResourceURLs": ["x", "/a*"]}]},
               {"subjects": []}]))
    assert texts(errors) == [
        'spec.distinguisherMethod.type: Unsupported value: flowcontrol.FlowDistinguisherMethod'
        '{Type:"ByGroup"}: supported values: "ByNamespace", "ByUser"',
        "spec.rules[0].subjects[0].serviceAccount.namespace: Required value: must specify "
        "namespace for service account",
        "spec.rules[0].subjects[0].user: Forbidden: user is forbidden when subject kind is not "
        "'User'",
        'spec.rules[0].subjects[1].kind: Unsupported value: "Robot": supported values: "Group", '
        '"ServiceAccount", "User"',
        'spec.rules[0].resourceRules[0].verbs: Unsupported value: []string{"get", "fly"}: '
        'supported values: "create", "delete", "deletecollection", "get", "list", "patch", '
        '"proxy", "update", "watch"',
        'spec.rules[0].resourceRules[0].apiGroups: Invalid value: []string{"*", "apps"}: if '
        "'*' is present, must not specify other api groups",
        "spec.rules[0].resourceRules[0].resources: Required value: resource rules must supply "
        "at least one resource",
        texts(errors)[7],
        'spec.rules[0].nonResourceRules[0].verbs: Invalid value: []string{"*", "get"}: if \'*\' '
        "is present, must not specify other verbs",
        'spec.rules[0].nonResourceRules[0].nonResourceURLs[0]: Invalid value: "x": must start '
        "with slash",
        'spec.rules[0].nonResourceRules[0].nonResourceURLs[1]: Invalid value: "/a*": wildcard '
        "can only do suffix matching",
        "spec.rules[1].subjects: Required value: subjects must contain at least one value",
        "spec.rules[1]: Required value: at least one of resourceRules and nonResourceRules has "
        "to be non-empty"]
    assert texts(errors)[7].startswith('spec.rules[0].resourceRules[0].namespaces[0]: Invalid '
                                       "value: \"Bad\": each member of this list must be '*' or "
                                       "a DNS-1123 label; a lowercase RFC 1123 label")


def test_mandatory_flow_schemas_keep_their_spec():
    _, errors = create(SCHEMAS, flow_schema("catch-all", matchingPrecedence=9000,
                                            priorityLevelConfiguration={"name": "catch-all"}))
    assert texts(errors) == [
        "spec: Invalid value: flowcontrol.FlowSchemaSpec{PriorityLevelConfiguration:flowcontrol."
        'PriorityLevelConfigurationReference{Name:"catch-all"}, MatchingPrecedence:9000, '
        "DistinguisherMethod:(*flowcontrol.FlowDistinguisherMethod)(nil), "
        "Rules:[]flowcontrol.PolicyRulesWithSubjects(nil)}: spec of 'catch-all' must equal the "
        "fixed value"]


def test_flow_schema_status_writes_keep_metadata_and_spec():
    old = stored(SCHEMAS, flow_schema(rules=[{
        "subjects": [{"kind": "Group", "group": {"name": "g"}}], **EVERYTHING}]))
    new = {**old, "metadata": {**old["metadata"], "labels": {"a": "b"},
                               "managedFields": [{"manager": "m"}]},
           "spec": {**old["spec"], "matchingPrecedence": 5},
           "status": {"conditions": [{"type": "Dangling", "status": "True"},
                                     {"type": "Dangling"}, {}]}}
    SCHEMAS.prepare_status_update(new, old)
    assert "labels" not in new["metadata"] and new["metadata"]["managedFields"]
    assert new["spec"] == old["spec"]
    assert texts(SCHEMAS.validate_status(new, old)) == [
        'status.conditions[1].type: Duplicate value: "Dangling"',
        "status.conditions[2].type: Required value: must not be empty"]
    assert SCHEMAS.table_cells(new)[:4] == ["fs", "global-default", 1000, "<none>"]
    assert SCHEMAS.table_cells(new)[5] == "True"
    assert SCHEMAS.table_cells(old)[5] == "?"


def test_flow_schemas_sort_by_precedence_then_name():
    items = [flow_schema("b", matchingPrecedence=5), flow_schema("a", matchingPrecedence=5),
             flow_schema("c", matchingPrecedence=1)]
    assert [i["metadata"]["name"] for i in sorted(items, key=matching_order)] == ["c", "a", "b"]


def test_priority_level_defaults():
    obj, errors = create(LEVELS, level(type="Limited", limited={
        "limitResponse": {"type": "Queue", "queuing": {}}}))
    assert errors == []
    assert obj["spec"]["limited"] == {"nominalConcurrencyShares": 30, "limitResponse": {
        "type": "Queue", "queuing": {"queues": 64, "handSize": 8, "queueLengthLimit": 50}},
        "lendablePercent": 0}
    assert LEVELS.table_cells(obj)[:6] == ["pl", "Limited", 30, 64, 8, 50]


def test_priority_level_validation():
    _, errors = create(LEVELS, level(type="Limited", limited={
        "nominalConcurrencyShares": 0, "lendablePercent": 101, "borrowingLimitPercent": -1,
        "limitResponse": {"type": "Queue", "queuing": {"queues": 4, "handSize": 5}}}))
    assert texts(errors) == [
        "spec.limited.nominalConcurrencyShares: Invalid value: 0: must be positive",
        "spec.limited.limitResponse.queuing.handSize: Invalid value: 5: should not be greater "
        "than queues (4)",
        "spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive",
        "spec.limited.borrowingLimitPercent: Invalid value: -1: if specified, must be a "
        "non-negative integer"]
    assert texts(create(LEVELS, level(type="Exempt"))[1]) == [
        "spec.type: Invalid value: \"Exempt\": type must be 'Exempt' if and only if name is "
        "'exempt'"]
    assert texts(create(LEVELS, level(type="Limited"))[1]) == [
        "spec.limited: Required value: must not be empty when type is Limited"]
    _, errors = create(LEVELS, level(type="Limited", limited={"limitResponse": {
        "type": "Queue", "queuing": {"queues": 1 << 20, "handSize": 5}}}))
    assert texts(errors) == [
        "spec.limited.limitResponse.queuing.handSize: Invalid value: 5: required entropy bits "
        "of deckSize 1048576 and handSize 5 should not be greater than 60"]


def test_mandatory_priority_levels():
    assert create(LEVELS, level("exempt", type="Exempt", exempt={
        "nominalConcurrencyShares": 5}))[1] == []
    assert texts(create(LEVELS, level("catch-all", type="Limited", limited={
        "nominalConcurrencyShares": 6, "limitResponse": {"type": "Reject"}}))[1]) == [
        'spec: Invalid value: flowcontrol.PriorityLevelConfigurationSpec{Type:"Limited", '
        "Limited:(*flowcontrol.LimitedPriorityLevelConfiguration)(0xc000010000), "
        "Exempt:(*flowcontrol.ExemptPriorityLevelConfiguration)(nil)}: spec of 'catch-all' must "
        "equal the fixed value"]


def test_priority_level_update_bumps_generation():
    old = stored(LEVELS, level(type="Limited", limited={"limitResponse": {"type": "Reject"}}))
    new = level(type="Limited", limited={"nominalConcurrencyShares": 5,
                                         "limitResponse": {"type": "Reject"}})
    new["metadata"] = dict(old["metadata"])
    updated, errors = update(LEVELS, new, old)
    assert errors == [] and updated["metadata"]["generation"] == 2
