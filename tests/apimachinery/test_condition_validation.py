"""metav1.Condition validation (kapiserver.apimachinery.condition_validation)."""

from kapiserver.apimachinery.condition_validation import validate_condition, validate_conditions
from kapiserver.apimachinery.field_errors import FieldPath

PATH = FieldPath("status", "conditions")
GOOD = {"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z",
        "reason": "AllGood", "message": "fine", "observedGeneration": 3}


def texts(errors):
    return [error.error_text() for error in errors]


def test_a_valid_condition():
    assert validate_conditions([GOOD, {**GOOD, "type": "example.com/Synced"}], PATH) == []


def test_every_rule_of_one_condition():
    condition = {"type": "bad type", "status": "", "observedGeneration": -1,
                 "lastTransitionTime": "0001-01-01T00:00:00Z", "reason": "",
                 "message": "m" * (32 * 1024 + 1)}
    assert texts(validate_condition(condition, PATH.index(0))) == [
        'status.conditions[0].type: Invalid value: "bad type": name part must consist of '
        "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
        "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        'status.conditions[0].status: Unsupported value: "": supported values: "False", '
        '"True", "Unknown"',
        "status.conditions[0].observedGeneration: Invalid value: -1: must be greater than or "
        "equal to zero",
        "status.conditions[0].lastTransitionTime: Required value: must be set",
        "status.conditions[0].reason: Required value: must be set",
        "status.conditions[0].message: Too long: may not be more than 32768 bytes"]


def test_reasons():
    for reason, ok in (("A", True), ("A_b:c,D", True), ("a_", True), ("1a", False),
                       ("a-b", False), ("a,", False), ("A\n", False)):
        errors = validate_condition({**GOOD, "reason": reason}, PATH)
        assert (errors == []) is ok, reason
    assert texts(validate_condition({**GOOD, "reason": "R" * 1025}, PATH)) == [
        "status.conditions.reason: Too long: may not be more than 1024 bytes"]
