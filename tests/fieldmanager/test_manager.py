"""Tests for kapiserver.fieldmanager.manager: naming the writer of a request."""

import pytest

from kapiserver import errors
from kapiserver.fieldmanager import (InvalidFieldManager, manager_name, prefix_from_user_agent,
                                     validate_field_manager)


@pytest.mark.parametrize("user_agent, manager", [
    ("kubectl/v1.32.4 (linux/amd64) kubernetes/59526cd", "kubectl"),
    ("python-requests/2.32.3", "python-requests"),
    ("OpenAPI-Generator/31.0.0/python", "OpenAPI-Generator"),
    ("kube-controller-manager/v1.32.4 (linux/amd64) kubernetes/59526cd/system:serviceaccount",
     "kube-controller-manager"),
    ("curl", "curl"),
    ("", ""),
    ("/v1", ""),
    ("tab\there\x7f/1", "tabhere"),  # unprintable characters are dropped
    ("a" * 200, "a" * 128),
    ("é" * 100, "é" * 64),  # cut at 128 bytes, never inside a character
])
def test_prefix_from_user_agent(user_agent, manager):
    assert prefix_from_user_agent(user_agent) == manager


def test_the_parameter_wins_over_the_user_agent():
    assert manager_name("capture", "python-requests/2.32.3") == "capture"
    assert manager_name("", "python-requests/2.32.3") == "python-requests"
    assert manager_name(None, None) == ""
    assert manager_name("a" * 128, "") == "a" * 128
    assert manager_name("with space/and:colon", "") == "with space/and:colon"


def test_too_long_parameter_is_a_422_naming_the_options_kind():
    with pytest.raises(InvalidFieldManager) as caught:
        manager_name("é" * 65, "kubectl/v1")
    err = caught.value
    assert isinstance(err, errors.Invalid) and err.code == 422
    assert [e.field for e in err.field_errors] == ["fieldManager"]
    assert err.to_status() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not '
                   "be more than 128 bytes",
        "reason": "Invalid",
        "details": {"group": "meta.k8s.io", "kind": "CreateOptions", "causes": [{
            "reason": "FieldValueTooLong", "message": "Too long: may not be more than 128 bytes",
            "field": "fieldManager"}]},
        "code": 422}


def test_unprintable_characters_are_named_by_byte_position():
    found = validate_field_manager("é\x01x\u00a0")
    assert [err.error_text() for err in found] == [
        'fieldManager: Invalid value: "é\\x01x\\u00a0": invalid character U+0001 '
        "(at position 2)",
        'fieldManager: Invalid value: "é\\x01x\\u00a0": invalid character U+00A0 '
        "(at position 4)"]
    with pytest.raises(InvalidFieldManager) as caught:
        manager_name("bad\nname", "", options_kind="UpdateOptions")
    assert caught.value.message == (
        'UpdateOptions.meta.k8s.io "" is invalid: fieldManager: Invalid value: '
        '"bad\\nname": invalid character U+000A (at position 3)')
    assert validate_field_manager("") == []
