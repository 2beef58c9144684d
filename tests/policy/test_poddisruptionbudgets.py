"""PodDisruptionBudgets: ValidatePodDisruptionBudget, the v1beta1 selector label, status
rules and the table (kapiserver_plugins.policy.poddisruptionbudgets)."""

import copy
import json
import pathlib

import pytest

from kapiserver_plugins.policy.poddisruptionbudgets import (PDB_V1BETA1_LABEL, PDBS,
                                                            PodDisruptionBudgetStrategy)

KINDS = pathlib.Path("/work/shared/reference/wide/kinds")
STRATEGY = PodDisruptionBudgetStrategy(PDBS)


def pdb(name="pdb1", **spec):
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name}, "spec": spec}


def created(body):
    obj = copy.deepcopy(body)
    obj["metadata"]["namespace"] = "ns"
    STRATEGY.apply_defaults(obj)
    obj["metadata"].update(uid="u1", creationTimestamp="2026-01-01T00:00:00Z", generation=1)
    STRATEGY.prepare_for_create(obj)
    return obj


def texts(errors):
    return [error.error_text() for error in errors]


def transcript(name):
    path = KINDS / name
    if not path.exists():
        pytest.skip("reference transcripts not available")
    return json.loads(path.read_text())


def test_create_fills_what_upstream_fills():
    exchange = transcript("poddisruptionbudgets-create.json")
    obj = created(exchange["request"]["body"])
    answer = exchange["response"]["body"]
    assert (obj["spec"], obj["status"]) == (answer["spec"], answer["status"])


def test_the_transcripts_invalid_budget_up_to_go_pointer_addresses():
    exchange = transcript("poddisruptionbudgets-invalid.json")
    causes = [e.to_cause() for e in STRATEGY.validate(created(exchange["request"]["body"]))]
    expected = exchange["response"]["body"]["details"]["causes"]
    assert causes == json.loads(json.dumps(expected).replace("0xc81ffc6f100", "0xc000010000")
                                .replace("0xc81ffc6f120", "0xc000010000"))


@pytest.mark.parametrize("spec, messages", [
    ({"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}}, []),
    ({"maxUnavailable": 0}, []),
    ({"minAvailable": -1}, ["spec.minAvailable: Invalid value: -1: must be greater than or "
                            "equal to 0"]),
    ({"maxUnavailable": "120%"}, [
        'spec.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, '
        'StrVal:"120%"}: must not be greater than 100%']),
    ({"minAvailable": "half"}, [
        'spec.minAvailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"half"}: '
        "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',"
        "  or '93%', regex used for validation is '[0-9]+%')"]),
    ({"selector": {"matchExpressions": [{"key": "app", "operator": "In"}]}}, [
        "spec.selector.matchExpressions[0].values: Required value: must be specified when "
        "`operator` is 'In' or 'NotIn'"]),
    ({"unhealthyPodEvictionPolicy": "Sometimes"}, [
        'spec.unhealthyPodEvictionPolicy: Unsupported value: "Sometimes": supported values: '
        '"AlwaysAllow", "IfHealthyBudget"']),
])
def test_spec_validation(spec, messages):
    assert texts(STRATEGY.validate(created(pdb(**spec)))) == messages


def test_names_are_path_segments_checked_once_the_spec_is_valid():
    assert texts(STRATEGY.validate(created(pdb(name="Mixed_Case")))) == []
    assert texts(STRATEGY.validate(created(pdb(name="a%b")))) == [
        "metadata.name: Invalid value: \"a%b\": may not contain '%'"]
    assert texts(STRATEGY.validate(created(pdb(name="a%b", minAvailable=-1)))) == [
        "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"]


@pytest.mark.parametrize("selector, expected", [
    # The two selectors v1beta1 semantics are written with are kept as they are.
    ({"matchExpressions": [{"key": PDB_V1BETA1_LABEL, "operator": "Exists"}]},
     {"matchExpressions": [{"key": PDB_V1BETA1_LABEL, "operator": "Exists"}]}),
    ({}, {}),
    ({"matchLabels": {"app": "web"},
      "matchExpressions": [{"key": PDB_V1BETA1_LABEL, "operator": "DoesNotExist"},
                           {"key": "tier", "operator": "Exists"}]},
     {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "Exists"}]}),
])
def test_the_v1beta1_label_is_kept_only_in_the_special_selectors(selector, expected):
    assert created(pdb(selector=copy.deepcopy(selector)))["spec"]["selector"] == expected


def test_updates_bump_the_generation_and_keep_the_status():
    old = created(pdb(minAvailable=1))
    old["metadata"]["resourceVersion"] = "2"
    old["status"]["expectedPods"] = 3
    new = copy.deepcopy(old)
    new["spec"]["minAvailable"] = 2
    new["status"] = {}
    STRATEGY.prepare_for_update(new, old)
    assert new["status"] == old["status"]
    assert STRATEGY.spec_changed(new, old)
    assert texts(STRATEGY.validate_update(new, old)) == []


def test_status_rules():
    old = created(pdb(minAvailable=1))
    old["metadata"]["resourceVersion"] = "2"
    new = copy.deepcopy(old)
    new["spec"]["minAvailable"] = 5
    new["status"] = {"disruptionsAllowed": -1, "currentHealthy": 1, "desiredHealthy": 1,
                     "expectedPods": 1, "conditions": [
                         {"type": "DisruptionAllowed", "status": "Maybe", "reason": "bad reason",
                          "lastTransitionTime": None},
                         {"type": "DisruptionAllowed", "status": "True", "reason": "Ok",
                          "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    STRATEGY.prepare_status_update(new, old)
    assert new["spec"] == old["spec"]
    assert texts(STRATEGY.validate_status_update(new, old)) == [
        'status.conditions[0].status: Unsupported value: "Maybe": supported values: "False", '
        '"True", "Unknown"',
        "status.conditions[0].lastTransitionTime: Required value: must be set",
        'status.conditions[0].reason: Invalid value: "bad reason": a condition reason must '
        "start with alphabetic character, optionally followed by a string of alphanumeric "
        "characters or '_,:', and must end with an alphanumeric character or '_' (e.g. "
        "'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', "
        "regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')",
        'status.conditions[1].type: Duplicate value: "DisruptionAllowed"',
        "status.disruptionsAllowed: Invalid value: -1: must be greater than or equal to 0"]


def test_table_cells():
    obj = created(pdb(maxUnavailable="25%"))
    obj["status"]["disruptionsAllowed"] = 2
    assert STRATEGY.table_cells(obj)[:4] == ["pdb1", "N/A", "25%", 2]
