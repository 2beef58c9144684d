"""Tests for kapiserver.apimachinery.field_errors: paths, error text, the 422 Status."""

import json
import pathlib

import pytest

from kapiserver import errors
from kapiserver.apimachinery.field_errors import (
    OMIT, ErrorType, FieldError, FieldPath, GoValue, aggregate_message, filter_errors,
    format_value, go_float, go_quote, go_string_slice, go_syntax, group_kind,
    invalid_status, new_invalid, to_aggregate)
from kapiserver.apimachinery.validation import is_config_map_key, validate_object_meta

REFERENCE = pathlib.Path("/work/shared/reference")


def reference_body(name: str) -> dict:
    return json.loads((REFERENCE / name).read_text())["response"]["body"]


# -- FieldPath ------------------------------------------------------------------------------

@pytest.mark.parametrize("path, text", [
    (FieldPath("metadata"), "metadata"),
    (FieldPath("metadata").child("labels").key("app"), "metadata.labels[app]"),
    (FieldPath("spec").child("items").index(0), "spec.items[0]"),
    (FieldPath("metadata", "name"), "metadata.name"),
    (FieldPath("a").child("b", "c"), "a.b.c"),
    (FieldPath("a").index(0).index(1).child("b"), "a[0][1].b"),
    (FieldPath("data").key("k!"), "data[k!]"),
    (FieldPath("data").key(""), "data[]"),
    # upstream prints a nameless root as a subscript: NewPath("") is "[]"
    (FieldPath(""), "[]"),
    (FieldPath("").child("x"), "[].x"),
    (FieldPath("spec").child("containers").index(2).child("ports").index(0).child("name"),
     "spec.containers[2].ports[0].name"),
])
def test_path_string(path, text):
    assert str(path) == text


def test_path_root_equality_and_hash():
    path = FieldPath("metadata", "labels").key("app")
    assert path.root() == FieldPath("metadata")
    assert path == FieldPath("metadata").child("labels").key("app")
    assert path != FieldPath("metadata").child("labels").child("app")
    assert FieldPath("a").index(1) != FieldPath("a").key("x")
    assert hash(path) == hash(FieldPath("metadata").child("labels").key("app"))
    assert repr(path) == "FieldPath('metadata.labels[app]')"


def test_child_does_not_change_parent():
    base = FieldPath("metadata")
    base.child("name")
    assert str(base) == "metadata"


# -- Go formatting ----------------------------------------------------------------------------

@pytest.mark.parametrize("value, quoted", [
    ("Bad_Name", '"Bad_Name"'),
    ("", '""'),
    ('a"b\\c', '"a\\"b\\\\c"'),
    ("\n\t\r\a\b\f\v", '"\\n\\t\\r\\a\\b\\f\\v"'),
    ("\x00\x1f\x7f", '"\\x00\\x1f\\x7f"'),
    ("héllo wörld", '"héllo wörld"'),
    ("\u00a0\u00ad", '"\\u00a0\\u00ad"'),
    ("\u2028", '"\\u2028"'),
    ("\ue000", '"\\ue000"'),
    ("\U0010fffd", '"\\U0010fffd"'),
    ("😀 日本", '"😀 日本"'),
    ("\ud800", '"\ufffd"'),
])
def test_go_quote(value, quoted):
    assert go_quote(value) == quoted


@pytest.mark.parametrize("value, text", [
    (1.5, "1.5"), (3.0, "3"), (-2.0, "-2"), (0.0, "0"), (-0.0, "-0"),
    (123456.0, "123456"), (1234567.0, "1.234567e+06"), (1e21, "1e+21"),
    (100000000.0, "1e+08"), (0.0001, "0.0001"), (0.00001, "1e-05"),
    (1.5e-7, "1.5e-07"), (0.1 + 0.2, "0.30000000000000004"), (1e100, "1e+100"),
    (12.5, "12.5"), (float("inf"), "+Inf"), (float("-inf"), "-Inf"), (float("nan"), "NaN"),
])
def test_go_float(value, text):
    assert go_float(value) == text


@pytest.mark.parametrize("value, text", [
    ("x", '"x"'),
    (7, "7"),
    (-1, "-1"),
    (2**70, "1.1805916207174113e+21"),  # beyond int64 upstream decodes a float64
    (1.0, "1"),
    (True, "true"),
    (False, "false"),
    (None, '"null"'),  # 1.32 replaces nil by the string "null", then quotes it
    ({"b": [1, "x", None, True], "a": 1.5},
     'map[string]interface {}{"a":1.5, "b":[]interface {}{1, "x", interface {}(nil), true}}'),
    ([], "[]interface {}{}"),
    ({}, "map[string]interface {}{}"),
    (GoValue("2024-01-01 00:00:00 +0000 UTC"), "2024-01-01 00:00:00 +0000 UTC"),
])
def test_format_value(value, text):
    assert format_value(value) == text


def test_go_syntax_and_string_slice():
    assert go_syntax({"k": {"n": None}}) == (
        'map[string]interface {}{"k":map[string]interface {}{"n":interface {}(nil)}}')
    assert go_string_slice(["orphan", "foregroundDeletion"]) == (
        '[]string{"orphan", "foregroundDeletion"}')
    assert go_string_slice([]) == "[]string{}"


# -- FieldError -----------------------------------------------------------------------------

SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                 "characters, '-' or '.', and must start and end with an alphanumeric character"
                 " (e.g. 'example.com', regex used for validation is "
                 "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


@pytest.mark.parametrize("error, text", [
    (FieldError.invalid(FieldPath("metadata", "name"), "Bad_Name", SUBDOMAIN_MSG),
     'metadata.name: Invalid value: "Bad_Name": ' + SUBDOMAIN_MSG),
    (FieldError.required(FieldPath("metadata", "name"), "name or generateName is required"),
     "metadata.name: Required value: name or generateName is required"),
    (FieldError.required(FieldPath("metadata", "namespace")),
     "metadata.namespace: Required value"),
    (FieldError.forbidden(FieldPath("metadata", "namespace"), "not allowed on this type"),
     "metadata.namespace: Forbidden: not allowed on this type"),
    (FieldError.not_supported(FieldPath("x"), "x", ["a", "b"]),
     'x: Unsupported value: "x": supported values: "a", "b"'),
    (FieldError.not_supported(FieldPath("spec", "color"), 7, ["red", "green", "blue"]),
     'spec.color: Unsupported value: 7: supported values: "red", "green", "blue"'),
    (FieldError.not_supported(FieldPath("x"), "x", []), 'x: Unsupported value: "x"'),
    (FieldError.too_long(FieldPath("metadata", "annotations"), "", 262144),
     "metadata.annotations: Too long: may not be more than 262144 bytes"),
    (FieldError.too_long(FieldPath("metadata", "name"), "whatever", 63),
     "metadata.name: Too long: may not be more than 63 bytes"),
    (FieldError.too_long(FieldPath("f"), "", -1), "f: Too long: value is too long"),
    (FieldError.too_long_max_length(FieldPath("f"), "", 5),
     "f: Too long: may not be more than 5 bytes"),
    (FieldError.too_many(FieldPath("f"), 5, 3), "f: Too many: 5: must have at most 3 items"),
    (FieldError.too_many(FieldPath("f"), -1, 3), "f: Too many: must have at most 3 items"),
    (FieldError.too_many(FieldPath("f"), 5, -1), "f: Too many: 5: has too many items"),
    (FieldError.duplicate(FieldPath("spec", "ports").index(1), "http"),
     'spec.ports[1]: Duplicate value: "http"'),
    (FieldError.not_found(FieldPath("f"), "x"), 'f: Not found: "x"'),
    (FieldError.type_invalid(FieldPath("spec", "size"), "string",
                             'spec.size in body must be of type integer: "string"'),
     'spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"'),
    (FieldError.internal(FieldPath("f"), RuntimeError("boom")), "f: Internal error: boom"),
    (FieldError.invalid(None, None, ""), '<nil>: Invalid value: "null"'),
    (FieldError.invalid(FieldPath("metadata", "generation"), -1,
                        "must be greater than or equal to 0"),
     "metadata.generation: Invalid value: -1: must be greater than or equal to 0"),
    (FieldError.invalid(FieldPath("f"), True, "d"), "f: Invalid value: true: d"),
    (FieldError.invalid(FieldPath("f"), {"a": 1}, "d"),
     'f: Invalid value: map[string]interface {}{"a":1}: d'),
])
def test_error_text(error, text):
    assert error.error_text() == text
    assert str(error) == text
    assert error.error_body() == text.split(": ", 1)[1]


def test_upstream_make_funcs_types():
    # errors_test.go TestMakeFuncs
    path = FieldPath("f")
    assert FieldError.invalid(path, "v", "d").type == ErrorType.INVALID
    assert FieldError.not_supported(path, "v", []).type == ErrorType.NOT_SUPPORTED
    assert FieldError.duplicate(path, "v").type == ErrorType.DUPLICATE
    assert FieldError.not_found(path, "v").type == ErrorType.NOT_FOUND
    assert FieldError.required(path, "d").type == ErrorType.REQUIRED
    assert FieldError.internal(path, "e").type == ErrorType.INTERNAL
    assert FieldError.forbidden(path, "d").type == ErrorType.FORBIDDEN
    assert FieldError.too_long(path, "", 1).type == ErrorType.TOO_LONG
    assert FieldError.too_many(path, 2, 1).type == ErrorType.TOO_MANY
    assert FieldError.type_invalid(path, "v", "d").type == ErrorType.TYPE_INVALID


@pytest.mark.parametrize("error_type, reason, text", [
    (ErrorType.NOT_FOUND, "FieldValueNotFound", "Not found"),
    (ErrorType.REQUIRED, "FieldValueRequired", "Required value"),
    (ErrorType.DUPLICATE, "FieldValueDuplicate", "Duplicate value"),
    (ErrorType.INVALID, "FieldValueInvalid", "Invalid value"),
    (ErrorType.NOT_SUPPORTED, "FieldValueNotSupported", "Unsupported value"),
    (ErrorType.FORBIDDEN, "FieldValueForbidden", "Forbidden"),
    (ErrorType.TOO_LONG, "FieldValueTooLong", "Too long"),
    (ErrorType.TOO_MANY, "FieldValueTooMany", "Too many"),
    (ErrorType.INTERNAL, "InternalError", "Internal error"),
    (ErrorType.TYPE_INVALID, "FieldValueTypeInvalid", "Invalid value"),
])
def test_error_types(error_type, reason, text):
    assert str(error_type) == reason
    assert error_type.text == text


def test_constructor_accepts_reason_strings_and_paths():
    err = FieldError("FieldValueInvalid", FieldPath("a").index(0), "v", "d")
    assert err.type is ErrorType.INVALID
    assert err.field == "a[0]"
    assert err == FieldError.invalid(FieldPath("a").index(0), "v", "d")
    assert FieldError(ErrorType.REQUIRED, None, "", "").field == "<nil>"
    with pytest.raises(ValueError):
        FieldError("NoSuchReason", "f", "", "")


def test_valueless_types_never_show_the_value():
    err = FieldError(ErrorType.FORBIDDEN, "f", "secret", "d")
    assert err.error_text() == "f: Forbidden: d"
    err = FieldError(ErrorType.INVALID, "f", OMIT, "d")
    assert err.error_text() == "f: Invalid value: d"


def test_to_cause_key_order_and_omitempty():
    cause = FieldError.invalid(FieldPath("data").key("k"), "k", "bad").to_cause()
    assert list(cause) == ["reason", "message", "field"]
    assert cause == {"reason": "FieldValueInvalid", "message": 'Invalid value: "k": bad',
                     "field": "data[k]"}
    assert FieldError.required("", "").to_cause() == {"reason": "FieldValueRequired",
                                                      "message": "Required value"}


def test_aggregate():
    a = FieldError.required(FieldPath("a"), "")
    b = FieldError.required(FieldPath("b"), "")
    assert aggregate_message([]) == ""
    assert aggregate_message([a]) == "a: Required value"
    assert aggregate_message([a, a]) == "a: Required value"
    assert aggregate_message([a, b, a]) == "[a: Required value, b: Required value]"
    assert to_aggregate([a, b, a]) == [a, b]


def test_filter_errors():
    a = FieldError.required(FieldPath("a"), "")
    b = FieldError.invalid(FieldPath("b"), "x", "d")
    assert filter_errors([a, b, b], ErrorType.REQUIRED) == [b]


# -- invalid_status -------------------------------------------------------------------------

def test_invalid_status_matches_reference_configmap():
    """error-invalid-name.json: what kube-apiserver 1.32 answered, byte for byte."""
    expected = reference_body("error-invalid-name.json")
    meta = {"name": "Bad_Name", "labels": {"-bad": "x"}, "namespace": "ref-b5828b"}
    errs = validate_object_meta(meta, True)
    for key in {"k!": "v"}:
        errs += [FieldError.invalid(FieldPath("data").key(key), key, msg)
                 for msg in is_config_map_key(key)]
    body = invalid_status("ConfigMap", "", "Bad_Name", errs)
    assert body == expected
    # same keys in the same order, all the way down
    assert json.dumps(body) == json.dumps(expected)


def test_invalid_status_matches_reference_custom_resource():
    """cr-invalid.json: a group-qualified kind, NotSupported with an integer value."""
    expected = reference_body("cr-invalid.json")
    errs = [
        FieldError.type_invalid(FieldPath("spec", "color"), "integer",
                                'spec.color in body must be of type string: "integer"'),
        FieldError.not_supported(FieldPath("spec", "color"), 7, ["red", "green", "blue"]),
        FieldError.type_invalid(FieldPath("spec", "size"), "string",
                                'spec.size in body must be of type integer: "string"'),
    ]
    body = invalid_status("Gadget", "capture.example.com", "w2", errs)
    assert json.dumps(body) == json.dumps(expected)


def test_invalid_status_single_error_has_no_brackets():
    err = FieldError.required(FieldPath("metadata", "name"), "name or generateName is required")
    body = invalid_status("ConfigMap", "", "", [err])
    assert body["message"] == ('ConfigMap "" is invalid: metadata.name: Required value: '
                               "name or generateName is required")
    assert body["details"] == {"kind": "ConfigMap", "causes": [{
        "reason": "FieldValueRequired",
        "message": "Required value: name or generateName is required",
        "field": "metadata.name"}]}


def test_invalid_status_without_errors():
    body = invalid_status("Role", "rbac.authorization.k8s.io", "r", [])
    assert body["message"] == 'Role.rbac.authorization.k8s.io "r" is invalid'
    assert body["details"] == {"name": "r", "group": "rbac.authorization.k8s.io",
                               "kind": "Role"}
    assert list(body) == ["kind", "apiVersion", "metadata", "status", "message", "reason",
                          "details", "code"]
    assert body["code"] == 422 and body["reason"] == "Invalid"


def test_invalid_status_keeps_repeated_causes_but_not_repeated_messages():
    err = FieldError.invalid(FieldPath("f"), "x", "d")
    body = invalid_status("ConfigMap", "", "n", [err, err])
    assert body["message"] == 'ConfigMap "n" is invalid: f: Invalid value: "x": d'
    assert len(body["details"]["causes"]) == 2


def test_invalid_status_quotes_the_name_as_go():
    body = invalid_status("ConfigMap", "", 'a"b', [])
    assert body["message"] == 'ConfigMap "a\\"b" is invalid'
    assert body["details"]["name"] == 'a"b'


def test_group_kind():
    assert group_kind("ConfigMap", "") == "ConfigMap"
    assert group_kind("Gadget", "capture.example.com") == "Gadget.capture.example.com"


def test_new_invalid_is_the_status_error():
    err = FieldError.required(FieldPath("metadata", "name"), "")
    exc = new_invalid("ConfigMap", "", "x", [err])
    assert isinstance(exc, errors.Invalid)
    assert exc.to_status() == invalid_status("ConfigMap", "", "x", [err])
