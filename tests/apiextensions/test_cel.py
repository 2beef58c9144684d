"""CEL validation rules: RuleSet (custom resources) and validate_schema_rules (CRDs)."""

import re

import pytest

from kapiserver.apimachinery.field_errors import FieldPath
from kapiserver_plugins.apiextensions.cel import RuleSet, validate_schema_rules
from kapiserver_plugins.apiextensions.cel.schema_rules import cost_error_message

SCHEMA_PATH = FieldPath("spec", "versions").index(0).child("schema", "openAPIV3Schema")
PREFIX = "spec.versions[0].schema.openAPIV3Schema"


def obj(properties, rules=None, **extra):
    schema = {"type": "object", "properties": properties, **extra}
    if rules:
        schema["x-kubernetes-validations"] = rules
    return schema


def with_spec(spec):
    return {"type": "object", "properties": {"spec": spec}}


def causes(schema, spec, old_spec=None):
    """The causes of validating ``{"spec": spec}`` against ``schema`` as the spec's schema."""
    rules = RuleSet.compile(with_spec(schema))
    old = {"spec": old_spec} if old_spec is not None else None
    return [e.to_cause() for e in rules.validate({"spec": spec}, old)]


def texts(schema):
    return [str(e) for e in validate_schema_rules(schema, SCHEMA_PATH)]


INT, STRING = {"type": "integer"}, {"type": "string"}
WIDGET = obj({"size": INT, "maxSize": INT}, [
    {"rule": "self.size <= self.maxSize", "message": "size must not exceed maxSize"},
    {"rule": "self.size >= oldSelf.size", "message": "size may not shrink",
     "reason": "FieldValueForbidden"}])


# -- rules on custom resources ----------------------------------------------------------------

def test_no_rules_is_empty():
    assert RuleSet.compile(with_spec(obj({"a": INT}))).empty
    assert not RuleSet.compile(with_spec(WIDGET)).empty


def test_true_and_false_rules_with_message():
    assert causes(WIDGET, {"size": 3, "maxSize": 5}) == []
    assert causes(WIDGET, {"size": 9, "maxSize": 5}) == [{
        "reason": "FieldValueInvalid",
        "message": 'Invalid value: "object": size must not exceed maxSize', "field": "spec"}]


def test_transition_rules_run_on_update_only():
    assert causes(WIDGET, {"size": 3, "maxSize": 5}) == []
    assert causes(WIDGET, {"size": 3, "maxSize": 5}, {"size": 4, "maxSize": 5}) == [{
        "reason": "FieldValueForbidden", "message": "Forbidden: size may not shrink",
        "field": "spec"}]
    assert causes(WIDGET, {"size": 4, "maxSize": 5}, {"size": 3, "maxSize": 5}) == []


def test_rules_at_several_depths_and_the_root():
    leaf = {"type": "integer", "x-kubernetes-validations": [{"rule": "self < 3"}]}
    schema = {"type": "object",
              "x-kubernetes-validations": [{"rule": "self.metadata.name.startsWith('ok')"}],
              "properties": {"spec": obj({"a": obj({"b": obj({"c": leaf})})})}}
    errors = RuleSet.compile(schema).validate(
        {"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "no", "labels": {"a": "b"}},
         "spec": {"a": {"b": {"c": 5}}}})
    assert [str(e) for e in errors] == [
        "<nil>: Invalid value: \"object\": failed rule: self.metadata.name.startsWith('ok')",
        'spec.a.b.c: Invalid value: "integer": failed rule: self < 3']


def test_items_and_additional_properties_have_their_paths():
    item = obj({"v": INT}, [{"rule": "self.v > 0"}])
    value = {"type": "string", "x-kubernetes-validations": [{"rule": "self != ''"}]}
    schema = obj({"list": {"type": "array", "items": item},
                  "map": {"type": "object", "additionalProperties": value}})
    assert [c["field"] for c in causes(schema, {"list": [{"v": 1}, {"v": 0}],
                                                "map": {"a": "x", "b": ""}})] == \
        ["spec.list[1]", "spec.map[b]"]


def test_message_expression_replaces_the_message_and_falls_back():
    schema = obj({"a": INT, "b": STRING}, [
        {"rule": "self.a < 5", "messageExpression": "'a is ' + string(self.a)"},
        {"rule": "self.a < 5", "messageExpression": "self.b", "message": "static"},
        {"rule": "self.a < 5", "messageExpression": "'  '"}])
    assert [c["message"] for c in causes(schema, {"a": 7})] == [
        'Invalid value: "object": a is 7', 'Invalid value: "object": static',
        'Invalid value: "object": failed rule: self.a < 5']


def test_reason_and_field_path():
    schema = obj({"a": INT, "m": {"type": "object", "additionalProperties": INT}}, [
        {"rule": "self.a < 5", "fieldPath": ".a", "reason": "FieldValueRequired"},
        {"rule": "self.a < 5", "reason": "FieldValueDuplicate"},
        {"rule": "self.a < 5", "fieldPath": ".m['x.y']", "reason": "FieldValueInvalid"}])
    assert causes(schema, {"a": 7, "m": {}}) == [
        {"reason": "FieldValueRequired", "message": "Required value: failed rule: self.a < 5",
         "field": "spec.a"},
        {"reason": "FieldValueDuplicate", "message": 'Duplicate value: "object"',
         "field": "spec"},
        {"reason": "FieldValueInvalid", "message": 'Invalid value: "object": failed rule: '
         "self.a < 5", "field": "spec.m[x.y]"}]


def test_map_lists_correlate_by_key_other_lists_do_not():
    item = obj({"name": STRING, "v": INT},
               [{"rule": "self.v >= oldSelf.v", "message": "v may not decrease"}])
    keyed = obj({"items": {"type": "array", "x-kubernetes-list-type": "map",
                           "x-kubernetes-list-map-keys": ["name"], "items": item}})
    new = {"items": [{"name": "a", "v": 1}, {"name": "b", "v": 5}]}
    old = {"items": [{"name": "b", "v": 6}, {"name": "a", "v": 0}]}
    assert [c["field"] for c in causes(keyed, new, old)] == ["spec.items[1]"]
    atomic = obj({"items": {"type": "array", "items": item}})
    assert causes(atomic, new, old) == []


def test_absent_fields_are_runtime_errors_as_upstream():
    schema = obj({"o": obj({"x": STRING}), "l": {"type": "array", "items": INT}, "a": INT,
                  "ios": {"x-kubernetes-int-or-string": True}}, [
        {"rule": "self.o.x == 'a'"}, {"rule": "!has(self.o.x)"}, {"rule": "self.l[5] == 1"},
        {"rule": "self.a / 0 == 1"}, {"rule": "self.ios + 1 == 2"}])
    assert [c["message"] for c in causes(schema, {"o": {}, "l": [], "a": 1, "ios": "x"})] == [
        "Invalid value: \"object\": no such key: x evaluating rule: self.o.x == 'a'",
        "Invalid value: \"object\": index '5' out of range in list size '0' evaluating rule: "
        "self.l[5] == 1",
        'Invalid value: "object": division by zero evaluating rule: self.a / 0 == 1',
        "Invalid value: \"object\": 'no such overload': call arguments did not match a "
        "supported operator, function or macro signature for rule: self.ios + 1 == 2"]


def test_types_from_the_schema():
    schema = obj({
        "x-y": STRING, "namespace": STRING, "n": {"type": "number"},
        "when": {"type": "string", "format": "date-time"},
        "d": {"type": "string", "format": "duration"},
        "raw": {"type": "string", "format": "byte"},
        "ios": {"x-kubernetes-int-or-string": True}}, [
        {"rule": "self.x__dash__y == 'a' && self.__namespace__ == 'ns'"},
        {"rule": "self.when < timestamp('2030-01-01T00:00:00Z')"},
        {"rule": "self.d > duration('1m') && self.n + 0.5 == 2.5 && self.raw == b'hi'"},
        {"rule": "type(self.ios) == string && self.ios.endsWith('%')"}])
    assert causes(schema, {"x-y": "a", "namespace": "ns", "n": 2, "raw": "aGk=",
                           "when": "2024-05-01T10:00:00Z", "d": "1h30m", "ios": "50%"}) == []


@pytest.mark.parametrize("rule", [
    "self.l.isSorted() && self.l.sum() == 6 && self.l.min() == 1 && self.l.max() == 3",
    "self.l.indexOf(2) == 1 && self.l.lastIndexOf(3) == 2 && [1, 1].lastIndexOf(1) == 1",
    "self.s.lowerAscii() == 'abc-1' && self.s.upperAscii() == 'ABC-1'",
    "self.s.split('-') == ['Abc', '1'] && ['a', 'b'].join('/') == 'a/b'",
    "self.s.replace('-', '+') == 'Abc+1' && self.s.substring(1, 3) == 'bc'",
    "self.s.charAt(0) == 'A' && ' x '.trim() == 'x' && self.s.indexOf('c') == 2",
    "'%s=%d %.1f'.format(['a', 1, 2.25]) == 'a=1 2.2' || '%s=%d %.1f'.format(['a', 1, 2.25]) "
    "== 'a=1 2.3'",
    "self.s.find('[0-9]+') == '1' && 'a1b22'.findAll('[0-9]+') == ['1', '22']",
    "isURL('https://x.io/p') && url('https://x.io:8443/p?q=1').getPort() == '8443'",
    "url('https://x.io/p').getHost() == 'x.io' && url('https://x.io/p').getScheme() == 'https'",
    "quantity('1Gi').isGreaterThan(quantity('1G')) && quantity('1Gi') == quantity('1024Mi')",
    "quantity('500m').asApproximateFloat() == 0.5 && isQuantity('10Mi') && !isQuantity('x')",
    "ip('10.0.0.1').family() == 4 && cidr('10.0.0.0/8').containsIP(ip('10.1.1.1'))",
    "isCIDR('::1/128') && ip.isCanonical('::1') && cidr('10.0.0.1/8').masked() == "
    "cidr('10.0.0.0/8')",
    "sets.contains([1, 2, 3], [1]) && sets.intersects([1], [1, 2]) && sets.equivalent([1, 2], "
    "[2, 1])",
    "string(ip('2001:DB8::0:1')) == '2001:db8::1' && string(cidr('10.0.0.1/8')) == '10.0.0.1/8'",
    "string(cidr('10.0.0.0/8').ip()) == '10.0.0.0' && string(1) == '1' && string(true) == 'true'",
    "string(2u) == '2' && string(b'a') == 'a' && string(duration('90s')) == '90s'",
    "!format.dns1123Label().validate('abc-1').hasValue() && "
    "format.dns1123Label().validate(self.s).hasValue()",
    "format.named('labelValue').hasValue() && !format.named('nope').hasValue() && "
    "format.named('uuid').value().validate('x').value() == ['does not match the UUID format']",
    "format.uri().validate('foo').value() == ['parse \"foo\": invalid URI for request'] && "
    "!format.datetime().validate('2024-01-01T00:00:00Z').hasValue()",
    "format.dns1123LabelPrefix().validate('abc-').orValue([]).size() == 0 && "
    "format.qualifiedName().validate('a/b/c').value().size() == 1",
    "self.l[?5].orValue(7) == 7 && self.?missing.orValue('d') == 'd'",
    "self.l.size() < 4.5 && 1 < 1.5",
])
def test_kubernetes_libraries(rule):
    schema = obj({"l": {"type": "array", "items": INT}, "s": STRING, "missing": STRING},
                 [{"rule": rule}])
    assert causes(schema, {"l": [1, 2, 3], "s": "Abc-1"}) == []


def test_library_errors_are_evaluation_errors():
    schema = obj({"l": {"type": "array", "items": INT}}, [{"rule": "self.l.min() == 1"}])
    assert causes(schema, {"l": []}) == [{
        "reason": "FieldValueInvalid", "field": "spec",
        "message": 'Invalid value: "object": min called on empty list evaluating rule: '
                   "self.l.min() == 1"}]


def test_rules_within_the_static_budget_run_without_cost_accounting():
    """Their cost is bounded at compile time, so evaluation counts nothing (the speed of
    evaluation is measured in ``tox -e bench``, not asserted here)."""
    rules = RuleSet.compile(with_spec(obj({"replicas": INT, "maxReplicas": INT, "field00": STRING}, [
        {"rule": "self.replicas <= self.maxReplicas"}, {"rule": "self.field00.startsWith('v')"}])))
    assert not rules.accounting
    spec = {"replicas": 3, "maxReplicas": 10, "field00": "v-1",
            **{f"field{i:02d}": "x" * 32 for i in range(1, 18)}}
    for _ in range(3):
        assert rules.validate({"spec": spec}) == []
    assert [e.to_cause()["message"] for e in rules.validate({"spec": dict(spec, replicas=11)})] \
        == ['Invalid value: "object": failed rule: self.replicas <= self.maxReplicas']


# -- the cost budget ---------------------------------------------------------------------------

CUBIC = obj({"list": {"type": "array", "items": INT}},
            [{"rule": "self.list.all(x, self.list.all(y, self.list.all(z, true)))"}])


def test_an_expensive_rule_over_a_big_list_stops_quickly():
    rules = RuleSet.compile(with_spec(CUBIC))
    assert rules.accounting
    errors = rules.validate({"spec": {"list": list(range(2000))}})
    assert [e.to_cause() for e in errors] == [{
        "reason": "FieldValueInvalid", "field": "spec",
        "message": "Invalid value: \"object\": 'operation cancelled: actual cost limit "
                   "exceeded': no further validation rules will be run due to call cost "
                   "exceeds limit for rule: self.list.all(x, self.list.all(y, "
                   "self.list.all(z, true)))"}]
    # The same rule over a small list costs little and runs.
    assert rules.validate({"spec": {"list": list(range(5))}}) == []


def test_the_total_budget_stops_further_rules():
    schema = obj({"l": {"type": "array", "items": {
        "type": "string", "x-kubernetes-validations": [
            {"rule": "self.lowerAscii().contains(self.upperAscii())"}]}}})
    rules = RuleSet.compile(with_spec(schema))
    assert rules.accounting
    # each item costs about (n/10)^2: 300 items of 2000 characters exceed 10,000,000 in total
    errors = rules.validate({"spec": {"l": ["a" * 2000] * 300}})
    assert errors[-1].to_cause() == {
        "reason": "FieldValueInvalid", "field": errors[-1].field,
        "message": 'Invalid value: "string": validation failed due to running out of cost '
                   "budget, no further validation rules will be run"}
    assert len(errors) < 300


# -- optionalOldSelf --------------------------------------------------------------------------

GROWING = obj({"size": INT, "name": STRING}, [
    {"rule": "!oldSelf.hasValue() || self.size >= oldSelf.value().size",
     "message": "size may not shrink", "optionalOldSelf": True},
    {"rule": "oldSelf.hasValue() || self.size == 1", "message": "size starts at 1",
     "optionalOldSelf": True}])


def messages(schema, spec, old_spec=None):
    return [c["message"] for c in causes(schema, spec, old_spec)]


def test_optional_old_self_rules_run_on_create_with_old_self_none():
    assert messages(GROWING, {"size": 1}) == []
    assert messages(GROWING, {"size": 2}) == ['Invalid value: "object": size starts at 1']


def test_optional_old_self_rules_on_update_see_the_old_value():
    assert messages(GROWING, {"size": 3}, {"size": 2}) == []
    assert messages(GROWING, {"size": 2}, {"size": 3}) == [
        'Invalid value: "object": size may not shrink']


def test_optional_old_self_is_none_where_no_old_value_correlates():
    entry = obj({"k": STRING, "v": INT}, [
        {"rule": "oldSelf.hasValue() || self.v == 0", "message": "new entries start at 0",
         "optionalOldSelf": True},
        {"rule": "self.v >= oldSelf.v", "message": "v may not decrease"}], required=["k"])
    schema = obj({"entries": {"type": "array", "x-kubernetes-list-type": "map",
                              "x-kubernetes-list-map-keys": ["k"], "items": entry},
                  "limit": {"type": "integer", "x-kubernetes-validations": [
                      {"rule": "oldSelf.orValue(0) <= 10 || self == oldSelf.value()",
                       "message": "limit is frozen above 10", "optionalOldSelf": True},
                      {"rule": "oldSelf.hasValue() || self <= 10",
                       "message": "limit starts at most 10", "optionalOldSelf": True}]}})
    old = {"entries": [{"k": "a", "v": 1}]}
    assert causes(schema, {"entries": [{"k": "a", "v": 2}, {"k": "b", "v": 5}], "limit": 20},
                  old) == [
        {"reason": "FieldValueInvalid", "message": 'Invalid value: "object": new entries '
         "start at 0", "field": "spec.entries[1]"},
        {"reason": "FieldValueInvalid", "message": 'Invalid value: "integer": limit starts at '
         "most 10", "field": "spec.limit"}]
    assert messages(schema, {"limit": 20}, {"limit": 20}) == []
    assert messages(schema, {"limit": 21}, {"limit": 20}) == [
        'Invalid value: "integer": limit is frozen above 10']


@pytest.mark.parametrize("rule,on_create,on_update", [
    ("oldSelf.orValue(self).size <= self.size", True, False),
    ("oldSelf.?size.orValue(0) <= self.size", True, False),
    ("oldSelf.?size == optional.none()", True, False),
    ("!oldSelf.?name.hasValue()", True, True),
    ("oldSelf.?size.hasValue()", False, True),
    ("oldSelf.size == optional.of(5)", False, True),
    ("oldSelf == optional.none()", True, False),
    ("oldSelf.optMap(o, o.size).orValue(4) == 4", True, False),
    ("!oldSelf.hasValue() || self.size == oldSelf.value().size", True, False),
    # A comprehension variable named oldSelf hides the optional one.
    ("[1].all(oldSelf, oldSelf == 1) && oldSelf.hasValue()", False, True),
])
def test_optional_old_self_functions(rule, on_create, on_update):
    schema = obj({"size": INT, "name": STRING}, [{"rule": rule, "optionalOldSelf": True}])
    assert texts(with_spec(schema)) == []
    assert (messages(schema, {"size": 4}) == []) is on_create
    assert (messages(schema, {"size": 4}, {"size": 5}) == []) is on_update


def test_optional_old_self_value_of_none_is_an_evaluation_error():
    schema = obj({"size": INT}, [{"rule": "oldSelf.value().size <= self.size",
                                  "optionalOldSelf": True}])
    assert messages(schema, {"size": 4}) == [
        'Invalid value: "object": optional.none() dereference evaluating rule: '
        "oldSelf.value().size <= self.size"]


def test_optional_old_self_message_expression_sees_old_self_as_upstream():
    # Upstream evaluates messageExpression with the activation of the rules without
    # optionalOldSelf: oldSelf is the old value itself there, or undefined on create.
    def message(expression, old_spec=None):
        schema = obj({"size": INT}, [{"rule": "oldSelf.hasValue() && self.size == 0",
                                      "message": "static", "messageExpression": expression,
                                      "optionalOldSelf": True}])
        return messages(schema, {"size": 1}, old_spec)

    assert message("'size ' + string(self.size)") == ['Invalid value: "object": size 1']
    assert message("'was ' + string(oldSelf.value().size)", {"size": 2}) == [
        'Invalid value: "object": static']
    assert message("'was ' + string(oldSelf.?size.orValue(0))", {"size": 2}) == [
        'Invalid value: "object": was 2']
    assert message("'was ' + string(oldSelf.?size.orValue(0))") == [
        'Invalid value: "object": static']


def test_optional_old_self_compile_errors_point_into_the_rule():
    rule = {"rule": "!oldSelf.hasValue() || self.size >= oldSelf.value().nope",
            "optionalOldSelf": True}
    from kapiserver_plugins.apiextensions.cel.schema_rules import _rule_value

    at = f"{PREFIX}.properties[spec].x-kubernetes-validations[0]"
    assert texts(with_spec(obj({"size": INT}, [rule]))) == [
        f"{at}.rule: Invalid value: {_rule_value(rule).text}: compilation failed: ERROR: "
        "<input>:1:52: undefined field 'nope'\n"
        " | !oldSelf.hasValue() || self.size >= oldSelf.value().nope\n"
        " | ...................................................^",
        # As upstream: a rule that does not compile uses no oldSelf.
        f"{at}.optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used "
        "in rule"]
    overload = texts(with_spec(obj({"size": INT}, [
        {"rule": "self.size == 1 &&\n  oldSelf + 1 == 2", "message": "m",
         "optionalOldSelf": True}])))
    assert len(overload) == 2
    assert re.search(r"compilation failed: ERROR: <input>:2:11: found no matching overload "
                     r"for '_\+_' applied to '\(optional_type\(selfType\d+\.spec\), int\)'\n"
                     r" \|   oldSelf \+ 1 == 2\n \| \.{10}\^$", overload[0])


def test_optional_old_self_costs_are_upstreams_estimates():
    # Upstream sizes what oldSelf.value() selects as the rule's type (0 for an object), so
    # this is cheap; evaluation still counts what it costs.
    rule = {"rule": "!oldSelf.hasValue() || oldSelf.value().name.contains('x')",
            "optionalOldSelf": True}
    schema = obj({"name": STRING}, [rule])
    assert texts(with_spec(schema)) == []
    rules = RuleSet.compile(with_spec(schema))
    assert rules.accounting
    assert messages(schema, {"name": "a"}, {"name": "b"}) == [
        "Invalid value: \"object\": failed rule: !oldSelf.hasValue() || "
        "oldSelf.value().name.contains('x')"]
    too_expensive = obj({"name": STRING}, [{"rule": "oldSelf.?name.orValue('').contains('x')",
                                            "optionalOldSelf": True}])
    assert "estimated rule cost exceeds budget" in texts(with_spec(too_expensive))[0]


# -- checking the rules of a CRD ---------------------------------------------------------------

def test_valid_rules_have_no_errors():
    assert texts(with_spec(WIDGET)) == []


def test_compile_errors_with_upstream_message_and_value():
    assert texts(with_spec(obj({"size": INT}, [{"rule": "self.nope == 1"}]))) == [
        f"{PREFIX}.properties[spec].x-kubernetes-validations[0].rule: Invalid value: "
        'apiextensions.ValidationRule{Rule:"self.nope == 1", Message:"", MessageExpression:"", '
        "Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", "
        "OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:5: undefined "
        "field 'nope'\n | self.nope == 1\n | ....^"]


@pytest.mark.parametrize("rule,suffix", [
    ({"rule": "self.size"}, "rule: Invalid value: {value}: cel expression must evaluate to a "
                            "bool"),
    ({"rule": "true", "messageExpression": "1"},
     "messageExpression: Invalid value: {value}: messageExpression must evaluate to a string"),
    ({"rule": "true", "messageExpression": "self.nope"},
     "messageExpression: Invalid value: {value}: messageExpression compilation failed: ERROR: "
     "<input>:1:5: undefined field 'nope'\n | self.nope\n | ....^"),
    ({"rule": "self.name.matches('[')"},
     "rule: Invalid value: {value}: compilation failed: ERROR: <input>:1:19: invalid matches "
     "argument\n | self.name.matches('[')\n | ..................^"),
    ({"rule": "self.size == 'a'"},
     "rule: Invalid value: {value}: compilation failed: ERROR: <input>:1:11: found no matching "
     "overload for '_==_' applied to '(int, string)'\n | self.size == 'a'\n | ..........^"),
    ({"rule": "self.size > 1", "optionalOldSelf": True},
     "optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule"),
])
def test_rule_errors(rule, suffix):
    from kapiserver_plugins.apiextensions.cel.schema_rules import _rule_value

    schema = with_spec(obj({"size": INT, "name": {"type": "string", "maxLength": 10}}, [rule]))
    value = _rule_value(rule).text
    assert texts(schema) == [f"{PREFIX}.properties[spec].x-kubernetes-validations[0]."
                             + suffix.format(value=value)]


def test_reason_and_field_path_are_checked():
    schema = with_spec(obj({"size": INT}, [{"rule": "true", "reason": "Bogus"},
                                           {"rule": "true", "fieldPath": ".nope"}]))
    assert texts(schema) == [
        f"{PREFIX}.properties[spec].x-kubernetes-validations[0].reason: Unsupported value: "
        '"Bogus": supported values: "FieldValueDuplicate", "FieldValueForbidden", '
        '"FieldValueInvalid", "FieldValueRequired"',
        f"{PREFIX}.properties[spec].x-kubernetes-validations[1].fieldPath: Invalid value: "
        '".nope": fieldPath must be a valid path']


def test_transition_rules_need_a_correlatable_old_value():
    item = {"type": "string", "maxLength": 5,
            "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}
    schema = with_spec(obj({"l": {"type": "array", "maxItems": 5, "items": item}}))
    assert texts(schema) == [
        f"{PREFIX}.properties[spec].properties[l].items.x-kubernetes-validations[0].rule: "
        'Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion '
        f"of the schema within {PREFIX}.properties[spec].properties[l]"]
    keyed = with_spec(obj({"l": {"type": "array", "maxItems": 5, "x-kubernetes-list-type": "map",
                                 "x-kubernetes-list-map-keys": ["k"],
                                 "items": obj({"k": {"type": "string", "maxLength": 5}},
                                              [{"rule": "self.k == oldSelf.k"}],
                                              required=["k"])}}))
    assert texts(keyed) == []


def test_estimated_cost_over_the_limits():
    at = f"{PREFIX}.properties[spec].x-kubernetes-validations[0].rule"
    assert texts(with_spec(CUBIC)) == [
        f"{at}: Forbidden: " + cost_error_message("estimated rule cost", 2 ** 64, 10 ** 7),
        f"{at}: Forbidden: contributed to estimated rule cost total exceeding cost limit for "
        "entire OpenAPIv3 schema",
        f"{PREFIX}: Forbidden: " + cost_error_message(
            "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
            2 ** 64, 10 ** 8)]
    bounded = obj({"list": {"type": "array", "maxItems": 10, "items": INT}},
                  [{"rule": "self.list.all(x, self.list.all(y, self.list.all(z, true)))"}])
    assert texts(with_spec(bounded)) == []


def test_static_costs_size_what_no_variable_reaches_as_upstream():
    # cel-go's path of dyn(self).name is "name", which upstream's size estimator walks from
    # the rule's type (an object: size 0), so the rule is cheap; evaluation counts its cost.
    schema = obj({"name": STRING}, [{"rule": "dyn(self).name.contains('x')"}])
    assert texts(with_spec(schema)) == []
    rules = RuleSet.compile(with_spec(schema))
    assert rules.accounting
    assert [str(e) for e in rules.validate({"spec": {"name": "ab"}})] == [
        "spec: Invalid value: \"object\": failed rule: dyn(self).name.contains('x')"]


def test_cost_error_factors():
    assert "factor of more than 100x" in cost_error_message("c", 2 * 10 ** 9, 10 ** 7)
    assert "factor of 1.200000x" in cost_error_message("c", 12, 10)
    assert "factor of 2.5x" in cost_error_message("c", 25, 10)


# -- set and map lists (upstream's unstructuredSetList / unstructuredMapList) ------------------

SET = {"type": "array", "items": STRING, "x-kubernetes-list-type": "set"}
ATOMIC = {"type": "array", "items": STRING}
PORTS = {"type": "array", "x-kubernetes-list-type": "map",
         "x-kubernetes-list-map-keys": ["name", "proto-col"],
         "items": obj({"name": STRING, "proto-col": STRING, "port": INT, "tags": SET},
                      required=["name"])}
LISTS = obj({"set": SET, "atomic": ATOMIC, "ports": PORTS,
             "byName": {"type": "object", "additionalProperties": SET},
             "inner": {"type": "object", "nullable": True, "properties": {"set": SET}}})
NEW = {"set": ["a", "b"], "atomic": ["a", "b"], "byName": {"x": ["1", "2"]},
       "inner": {"set": ["p", "q"]},
       "ports": [{"name": "http", "proto-col": "tcp", "port": 80, "tags": ["x", "y"]},
                 {"name": "http", "proto-col": "udp", "port": 81}]}
REORDERED = {"set": ["b", "a"], "atomic": ["a", "b"], "byName": {"x": ["2", "1"]},
             "inner": {"set": ["q", "p"]},
             "ports": [{"name": "http", "proto-col": "udp", "port": 81},
                       {"name": "http", "proto-col": "tcp", "port": 80, "tags": ["y", "x"]}]}


def rule_holds(rule, spec, old_spec=None):
    errors = causes(obj(LISTS["properties"], [{"rule": rule}]), spec, old_spec)
    assert all("failed rule" in e["message"] for e in errors), errors
    return not errors


@pytest.mark.parametrize("rule", [
    "self == oldSelf", "self.set == oldSelf.set", "self.ports == oldSelf.ports",
    "self.byName == oldSelf.byName", "self.inner == oldSelf.inner",
    "self.ports[0] == oldSelf.ports[1]", "!(self.set != oldSelf.set)",
    "self.ports.all(p, p in oldSelf.ports)", "self.set == ['b', 'a']",
    "self.ports.exists(p, p.tags == ['y', 'x'])",
])
def test_set_and_map_lists_are_equal_in_any_order(rule):
    assert rule_holds(rule, NEW, REORDERED)


@pytest.mark.parametrize("rule", [
    # a literal list on the left is a plain list: ordered, as upstream's
    "['b', 'a'] == self.set",
    # an atomic list is ordered
    "self.atomic == ['b', 'a']",
    # what a macro builds is a plain list
    "self.set.map(s, s) == ['b', 'a']",
])
def test_plain_lists_stay_ordered(rule):
    assert not rule_holds(rule, NEW, REORDERED)


def test_a_changed_entry_is_not_equal():
    changed = {**REORDERED, "ports": [dict(REORDERED["ports"][0], port=82),
                                      REORDERED["ports"][1]]}
    assert not rule_holds("self.ports == oldSelf.ports", NEW, changed)
    assert not rule_holds("self == oldSelf", NEW, {**REORDERED, "set": ["a", "c"]})
    assert not rule_holds("self.set == oldSelf.set", NEW, {**REORDERED, "set": ["a"]})
    assert rule_holds("self.inner == oldSelf.inner", {**NEW, "inner": None},
                      {**REORDERED, "inner": None})


def test_concatenation_is_a_union_or_a_merge():
    assert rule_holds("self.set + ['c', 'a', 'c'] == ['a', 'b', 'c'] && "
                      "(self.set + ['c', 'a']).map(s, s) == ['a', 'b', 'c']", NEW)
    # a map list merges by key: positions of the left, values of the right
    assert rule_holds("(self.ports + oldSelf.ports).map(p, p.port) == [80, 81]",
                      NEW, REORDERED)
    assert rule_holds("size(self.ports + [self.ports[0]]) == 2", NEW)
    assert rule_holds("(self.atomic + ['a']).size() == 3", NEW)


def test_transition_rule_on_a_map_list_allows_reordering():
    immutable = {**PORTS, "x-kubernetes-validations": [
        {"rule": "self == oldSelf", "message": "ports are immutable"}]}
    schema = obj({"ports": immutable})
    assert causes(schema, {"ports": REORDERED["ports"]}, {"ports": NEW["ports"]}) == []
    assert causes(schema, {"ports": NEW["ports"][:1]}, {"ports": NEW["ports"]}) == [{
        "reason": "FieldValueInvalid", "field": "spec.ports",
        "message": 'Invalid value: "array": ports are immutable'}]


def test_format_library_errors_in_message_expressions():
    schema = obj({"name": STRING}, [{
        "rule": "!format.dns1123Label().validate(self.name).hasValue()",
        "messageExpression": "format.dns1123Label().validate(self.name).value().join(', ')"}])
    assert causes(schema, {"name": "ok-name"}) == []
    assert causes(schema, {"name": "Bad_Name"}) == [{
        "reason": "FieldValueInvalid", "field": "spec",
        "message": 'Invalid value: "object": a lowercase RFC 1123 label must consist of lower '
                   "case alphanumeric characters or '-', and must start and end with an "
                   "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
                   "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"}]


def test_format_validate_cost_assumes_the_longest_regex():
    # size * 0.1 * (128 * 0.25): an unbounded string is over any budget
    unbounded = obj({"name": STRING}, [{"rule": "!format.uuid().validate(self.name).hasValue()"}])
    assert any("exceeds budget" in t for t in texts(with_spec(unbounded)))
    bounded = obj({"name": {"type": "string", "maxLength": 64}},
                  [{"rule": "!format.uuid().validate(self.name).hasValue()"}])
    assert texts(with_spec(bounded)) == []

