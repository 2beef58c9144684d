"""Tests for kapiserver.apimachinery.selector_validation and gosyntax: upstream's (1.32)
``ValidateLabelSelector`` messages and the ``%#v`` texts of typed Go values."""

from kapiserver.apimachinery.field_errors import FieldError, FieldPath
from kapiserver.apimachinery.gosyntax import (go_pointer, go_slice, go_string_map,
                                               go_string_slice, go_struct)
from kapiserver.apimachinery.selector_validation import (
    LabelSelectorValidationOptions, go_label_selector, label_selector_has_invalid_label_value,
    validate_label_selector)

OPTS = LabelSelectorValidationOptions()
PATH = FieldPath("spec", "selector")


def texts(errors):
    return [err.error_text() for err in errors]


def test_go_label_selector_renders_as_upstreams_immutable_error():
    selector = {"matchLabels": {"x": "y", "app": "web"}}
    error = FieldError.invalid(PATH, go_label_selector(selector), "field is immutable")
    assert error.error_text() == (
        'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string'
        '{"app":"web", "x":"y"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: '
        'field is immutable')


def test_go_label_selector_with_expressions():
    selector = {"matchExpressions": [{"key": "a", "operator": "In", "values": ["b"]},
                                     {"key": "c", "operator": "Exists"}]}
    assert go_label_selector(selector).text == (
        'v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:'
        '[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:"a", Operator:"In", '
        'Values:[]string{"b"}}, v1.LabelSelectorRequirement{Key:"c", Operator:"Exists", '
        'Values:[]string(nil)}}}')
    assert go_label_selector(None) is None


def test_gosyntax_pieces():
    assert go_string_map({}) == "map[string]string{}"
    assert go_string_slice(["a", 'b"']) == '[]string{"a", "b\\""}'
    assert go_slice("int32", None) == "[]int32(nil)"
    assert go_pointer("apps.X", False) == "(*apps.X)(nil)"
    assert go_pointer("apps.X", True).startswith("(*apps.X)(0xc")
    assert go_struct("t.T", [("A", "1"), ("B", '"x"')]) == 't.T{A:1, B:"x"}'


def test_valid_selectors_have_no_errors():
    assert validate_label_selector(None, OPTS, PATH) == []
    assert validate_label_selector({"matchLabels": {"app": "web"}, "matchExpressions": [
        {"key": "tier", "operator": "NotIn", "values": ["db"]},
        {"key": "x", "operator": "DoesNotExist"}]}, OPTS, PATH) == []


def test_requirement_errors_are_worded_as_upstream():
    selector = {"matchExpressions": [
        {"key": "a", "operator": "In"},
        {"key": "b", "operator": "Exists", "values": ["x"]},
        {"key": "c", "operator": "Near", "values": ["x"]},
        {"key": "-bad", "operator": "In", "values": ["ok", "not ok"]},
    ]}
    assert texts(validate_label_selector(selector, OPTS, PATH)) == [
        "spec.selector.matchExpressions[0].values: Required value: must be specified when "
        "`operator` is 'In' or 'NotIn'",
        "spec.selector.matchExpressions[1].values: Forbidden: may not be specified when "
        "`operator` is 'Exists' or 'DoesNotExist'",
        'spec.selector.matchExpressions[2].operator: Invalid value: "Near": not a valid '
        "selector operator",
        'spec.selector.matchExpressions[3].key: Invalid value: "-bad": name part must '
        "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
        "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        'spec.selector.matchExpressions[3].values[1]: Invalid value: "not ok": a valid label '
        "must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
        "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  "
        "or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?"
        "[A-Za-z0-9])?')",
    ]


def test_options_relax_values_and_operators():
    selector = {"matchExpressions": [{"key": "c", "operator": "Near", "values": ["not ok"]}]}
    relaxed = LabelSelectorValidationOptions(allow_invalid_label_value=True,
                                             allow_unknown_operator=True)
    assert validate_label_selector(selector, relaxed, PATH) == []
    assert label_selector_has_invalid_label_value(selector)
    assert not label_selector_has_invalid_label_value({"matchLabels": {"a": "b"}})


def test_match_labels_are_validated_at_match_labels():
    errors = validate_label_selector({"matchLabels": {"app": "a b"}}, OPTS, PATH)
    assert [e.field for e in errors] == ["spec.selector.matchLabels"]
