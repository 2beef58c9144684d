"""Label selectors: upstream's selector_test.go cases, its messages and the reference answers."""

import json
import pathlib
import urllib.parse

import pytest

from kapiserver.apimachinery import labels
from kapiserver.apimachinery.field_errors import FieldPath
from kapiserver.apimachinery.labels import Operator, Requirement, SelectorError, parse

REFERENCE = pathlib.Path("/work/shared/reference")

NAME_PART_REGEX = ("name part must consist of alphanumeric characters, '-', '_' or '.', and "
                   "must start and end with an alphanumeric character (e.g. 'MyName',  or "
                   "'my.name',  or '123-abc', regex used for validation is "
                   "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
VALUE_REGEX = ("a valid label must be an empty string or consist of alphanumeric characters, "
               "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
               "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
               "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
PREFIX_REGEX = ("prefix part a lowercase RFC 1123 subdomain must consist of lower case "
                "alphanumeric characters, '-' or '.', and must start and end with an "
                "alphanumeric character (e.g. 'example.com', regex used for validation is "
                r"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


def req(key, op, *values):
    return labels.new_requirement(key, op, list(values))


# -- TestSelectorParse / TestDeterministicParse --------------------------------------------

@pytest.mark.parametrize("text", ["x=a,y=b,z=c", "", "x!=a,y=b", "x=", "x= ", "x=,z= ",
                                  "x= ,z= ", "!x", "x>1", "x>1,z<5"])
def test_good_strings_restring_without_blanks(text):
    assert str(parse(text)) == text.replace(" ", "")


@pytest.mark.parametrize("text", ["x=a||y=b", "x==a==b", "!x=a", "x<a"])
def test_bad_strings(text):
    with pytest.raises(SelectorError):
        parse(text)


def test_deterministic_parse():
    assert str(parse("x=a,a=x")) == str(parse("a=x,x=a")) == "a=x,x=a"


# -- TestEverything / TestSelectorMatches / TestSetMatches --------------------------------

def test_everything():
    assert labels.everything().matches({"x": "y"})
    assert labels.everything().empty
    assert parse("").empty and not parse("x").empty


@pytest.mark.parametrize("selector, label_set", [
    ("", {"x": "y"}),
    ("x=y", {"x": "y"}),
    ("x=y,z=w", {"x": "y", "z": "w"}),
    ("x!=y,z!=w", {"x": "z", "z": "a"}),
    ("notin=in", {"notin": "in"}),  # in and notin in exactMatch
    ("x", {"x": "z"}),
    ("!x", {"y": "z"}),
    ("x>1", {"x": "2"}),
    ("x<1", {"x": "0"}),
    ("foo=bar", {"foo": "bar", "baz": "blah"}),
    ("baz=blah", {"foo": "bar", "baz": "blah"}),
    ("foo=bar,baz=blah", {"foo": "bar", "baz": "blah"}),
])
def test_selector_matches(selector, label_set):
    assert parse(selector).matches(label_set)


@pytest.mark.parametrize("selector, label_set", [
    ("x=z", {}),
    ("x=y", {"x": "z"}),
    ("x=y,z=w", {"x": "w", "z": "w"}),
    ("x!=y,z!=w", {"x": "z", "z": "w"}),
    ("x", {"y": "z"}),
    ("!x", {"x": "z"}),
    ("x>1", {"x": "0"}),
    ("x<1", {"x": "2"}),
    ("foo=blah", {"foo": "bar", "baz": "blah"}),
    ("baz=bar", {"foo": "bar", "baz": "blah"}),
    ("foo=bar,foobar=bar,baz=blah", {"foo": "bar", "baz": "blah"}),
])
def test_selector_does_not_match(selector, label_set):
    assert not parse(selector).matches(label_set)


@pytest.mark.parametrize("label_set", [{}, {"foo": "bar"}, {"baz": "blah"},
                                       {"foo": "bar", "baz": "blah"}])
def test_set_matches(label_set):
    assert labels.selector_from_set(label_set).matches({"foo": "bar", "baz": "blah"})


def test_nil_and_empty_sets_are_empty():
    assert labels.selector_from_set(None).empty
    assert labels.selector_from_set({}).empty
    assert str(labels.selector_from_set({"b": "2", "a": "1"})) == "a=1,b=2"


# -- matching truth table: every operator, present and missing keys ------------------------

@pytest.mark.parametrize("selector, present_match, other_match, missing_match", [
    # selector against {"k": "v"}, {"k": "other"} and {} (no k)
    ("k=v", True, False, False),
    ("k==v", True, False, False),
    ("k!=v", False, True, True),
    ("k in (v,w)", True, False, False),
    ("k notin (v,w)", False, True, True),
    ("k", True, True, False),
    ("!k", False, False, True),
    ("k=", False, False, False),
    ("k!=", True, True, True),
    ("k in ()", False, False, False),
    ("k notin ()", True, True, True),
])
def test_truth_table(selector, present_match, other_match, missing_match):
    selector = parse(selector)
    assert selector.matches({"k": "v", "x": "1"}) is present_match
    assert selector.matches({"k": "other"}) is other_match
    assert selector.matches({}) is missing_match
    assert selector.matches(None) is missing_match


def test_empty_value_matches_empty_label_only():
    assert parse("k=").matches({"k": ""})
    assert parse("k in (,a)").matches({"k": ""})
    assert not parse("k!=").matches({"k": ""})


@pytest.mark.parametrize("selector, value, expected", [
    ("k>1", "2", True), ("k>1", "1", False), ("k>1", "-5", False), ("k>1", "+7", True),
    ("k<1", "0", True), ("k<1", "1", False), ("k<1", "-5", True), ("k<10", "9", True),
    ("k>1", "v2", False), ("k>1", "1.5", False), ("k>1", "", False), ("k>1", " 2", False),
    ("k>1", "1_0", False), ("k>1", "9223372036854775807", True),
    ("k>1", "9223372036854775808", False),  # not an int64: upstream's ParseInt fails
    ("k<0", "-9223372036854775808", True), ("k<0", "-9223372036854775809", False),
    ("k>01", "2", True),
])
def test_gt_lt(selector, value, expected):
    assert parse(selector).matches({"k": value}) is expected


def test_gt_lt_need_the_key():
    assert not parse("k>1").matches({})
    assert not parse("k<1").matches({"j": "0"})


# -- TestLexer / TestLexerSequence / TestParserLookahead ----------------------------------

T = labels._Token


@pytest.mark.parametrize("text, token", [
    ("", T.END_OF_STRING), (",", T.COMMA), ("notin", T.NOT_IN), ("in", T.IN),
    ("=", T.EQUALS), ("==", T.DOUBLE_EQUALS), (">", T.GREATER_THAN), ("<", T.LESS_THAN),
    ("!", T.DOES_NOT_EXIST), ("!=", T.NOT_EQUALS), ("(", T.OPEN_PAR), (")", T.CLOSED_PAR),
    ("~", T.IDENTIFIER), ("||", T.IDENTIFIER),
])
def test_lexer(text, token):
    assert labels._Lexer(text).lex() == (token, text)


@pytest.mark.parametrize("text, tokens", [
    ("key in ( value )", [T.IDENTIFIER, T.IN, T.OPEN_PAR, T.IDENTIFIER, T.CLOSED_PAR]),
    ("key notin ( value )", [T.IDENTIFIER, T.NOT_IN, T.OPEN_PAR, T.IDENTIFIER, T.CLOSED_PAR]),
    ("key in ( value1, value2 )", [T.IDENTIFIER, T.IN, T.OPEN_PAR, T.IDENTIFIER, T.COMMA,
                                   T.IDENTIFIER, T.CLOSED_PAR]),
    ("key", [T.IDENTIFIER]),
    ("!key", [T.DOES_NOT_EXIST, T.IDENTIFIER]),
    ("()", [T.OPEN_PAR, T.CLOSED_PAR]),
    ("x in (),y", [T.IDENTIFIER, T.IN, T.OPEN_PAR, T.CLOSED_PAR, T.COMMA, T.IDENTIFIER]),
    ("== != (), = notin", [T.DOUBLE_EQUALS, T.NOT_EQUALS, T.OPEN_PAR, T.CLOSED_PAR, T.COMMA,
                           T.EQUALS, T.NOT_IN]),
    ("key>2", [T.IDENTIFIER, T.GREATER_THAN, T.IDENTIFIER]),
    ("key<1", [T.IDENTIFIER, T.LESS_THAN, T.IDENTIFIER]),
    ("a>=1", [T.IDENTIFIER, T.GREATER_THAN, T.EQUALS, T.IDENTIFIER]),
    ("!!a", [T.DOES_NOT_EXIST, T.DOES_NOT_EXIST, T.IDENTIFIER]),
    ("a=!b", [T.IDENTIFIER, T.EQUALS, T.DOES_NOT_EXIST, T.IDENTIFIER]),
])
def test_lexer_sequence_and_parser_lookahead(text, tokens):
    parser = labels._Parser(text)
    assert [tok for tok, _ in parser.items] == tokens + [T.END_OF_STRING]


def test_lexer_stops_at_nul_as_upstream():
    # upstream's lexer reads a 0 byte as the end of input: where a token starts it ends the
    # selector; inside an identifier or operator it ends the token and is skipped.
    with pytest.raises(SelectorError, match="^found '', expected: identifier after ','$"):
        parse("a, \x00b")
    assert str(parse("a,\x00b")) == "a,b"
    assert str(parse("a\x00")) == "a"
    with pytest.raises(SelectorError, match="^unable to parse requirement: found 'b', "):
        parse("a\x00b")


# -- TestRequirementConstructor ---------------------------------------------------------

@pytest.mark.parametrize("key, op, values", [
    ("x", Operator.IN, ["foo"]), ("x", Operator.NOT_IN, ["foo"]), ("x", Operator.EXISTS, []),
    ("x", Operator.DOES_NOT_EXIST, None), ("1foo", Operator.IN, ["bar"]),
    ("1234", Operator.IN, ["bar"]), ("y", Operator.GREATER_THAN, ["1"]),
    ("z", Operator.LESS_THAN, ["6"]), ("z", "lt", ["007"]),
    ("example.com/x", "=", [""]), ("a" * 63, "==", ["b" * 63]),
    ("k" * 253 + "/" + "n" * 63, "exists", None),
])
def test_requirement_constructor_accepts(key, op, values):
    requirement = labels.new_requirement(key, op, values)
    assert requirement.key == key and requirement.operator is Operator(op)


@pytest.mark.parametrize("key, op, values, message", [
    ("x1", "in", [], "values: Invalid value: []string{}: "
                     "for 'in', 'notin' operators, values set can't be empty"),
    ("x2", "notin", None, "values: Invalid value: []string(nil): "
                          "for 'in', 'notin' operators, values set can't be empty"),
    ("x5", "=", ["bar", "foo"], 'values: Invalid value: []string{"bar", "foo"}: '
                                "exact-match compatibility requires one single value"),
    ("x8", "exists", ["foo"], 'values: Invalid value: []string{"foo"}: '
                              "values set must be empty for exists and does not exist"),
    ("x13", "gt", [], "values: Invalid value: []string{}: "
                      "for 'Gt', 'Lt' operators, exactly one value is required"),
    ("x14", "gt", ["bar"], 'values[0]: Invalid value: "bar": '
                           "for 'Gt', 'Lt' operators, the value must be an integer"),
    ("x15", "lt", ["bar"], 'values[0]: Invalid value: "bar": '
                           "for 'Gt', 'Lt' operators, the value must be an integer"),
    ("x16", "=", ["a" * 254], f'values[0][x16]: Invalid value: "{"a" * 254}": '
                              f"must be no more than 63 characters"),
    ("x17", "=", ["a b"], f'values[0][x17]: Invalid value: "a b": {VALUE_REGEX}'),
    ("x18", "unsupportedOp", None,
     'operator: Unsupported value: "unsupportedOp": supported values: "in", "notin", "=", '
     '"==", "!=", "gt", "lt", "exists", "!"'),
    ("a" * 254, "exists", None,
     f'key: Invalid value: "{"a" * 254}": name part must be no more than 63 characters'),
    ("-x", "exists", None, f'key: Invalid value: "-x": {NAME_PART_REGEX}'),
    ("x", "gt", ["1", "2"], 'values: Invalid value: []string{"1", "2"}: '
                            "for 'Gt', 'Lt' operators, exactly one value is required"),
    ("x", "in", ["<a>", "&"], f'[values[0][x]: Invalid value: "<a>": {VALUE_REGEX}, '
                              f'values[1][x]: Invalid value: "&": {VALUE_REGEX}]'),
])
def test_requirement_constructor_messages(key, op, values, message):
    with pytest.raises(SelectorError) as info:
        labels.new_requirement(key, op, values)
    assert str(info.value) == message


def test_requirement_constructor_path_prefixes_fields():
    with pytest.raises(SelectorError) as info:
        labels.new_requirement("-k", "=", ["-v"], path=FieldPath("spec", "selector"))
    assert str(info.value) == (f'[spec.selector.key: Invalid value: "-k": {NAME_PART_REGEX}, '
                               f'spec.selector.values[0][-k]: Invalid value: "-v": '
                               f"{VALUE_REGEX}]")


def test_requirement_too_long_value_reports_both_errors():
    value = "-" * 64
    with pytest.raises(SelectorError) as info:
        labels.new_requirement("x", "=", [value])
    assert str(info.value) == (f'values[0][x]: Invalid value: "{value}": must be no more '
                               f"than 63 characters; {VALUE_REGEX}")


# -- TestToString / TestSafeSort --------------------------------------------------------

@pytest.mark.parametrize("requirements, text", [
    ([req("x", "in", "abc", "def"), req("y", "notin", "jkl"), req("z", "exists")],
     "x in (abc,def),y notin (jkl),z"),
    ([req("x", "notin", "abc", "def"), req("y", "!=", "jkl"), req("z", "!")],
     "x notin (abc,def),y!=jkl,!z"),
    ([req("x", "notin", "abc"), req("y", "in", "jkl", "mno"), req("z", "notin", "")],
     "x notin (abc),y in (jkl,mno),z notin ()"),
    ([req("x", "=", "abc"), req("y", "==", "jkl"), req("z", "!=", "a"), req("z", "exists")],
     "x=abc,y==jkl,z!=a,z"),
    ([req("x", "gt", "2"), req("y", "lt", "8"), req("z", "exists")], "x>2,y<8,z"),
    ([req("z", "in", "foo", "bar", "foo", "bar")], "z in (bar,bar,foo,foo)"),
])
def test_to_string(requirements, text):
    assert str(labels.LabelSelector(requirements)) == text


def test_string_sorts_values_without_changing_them():
    requirement = req("x", "in", "foo", "bar")
    assert str(requirement) == "x in (bar,foo)"
    assert requirement.values == ("foo", "bar")


# -- TestRequirementSelectorMatching ----------------------------------------------------

@pytest.mark.parametrize("label_set, requirements, expected", [
    ({"x": "foo", "y": "baz"}, [req("x", "in", "foo"), req("y", "notin", "alpha")], True),
    ({"x": "foo", "y": "baz"}, [req("x", "in", "foo"), req("y", "in", "alpha")], False),
    ({"y": ""}, [req("x", "notin", ""), req("y", "exists")], True),
    ({"y": ""}, [req("x", "!"), req("y", "exists")], True),
    ({"y": ""}, [req("x", "notin", ""), req("y", "!")], False),
    ({"y": "baz"}, [req("x", "in", "")], False),
    ({"z": "2"}, [req("z", "gt", "1")], True),
    ({"z": "v2"}, [req("z", "gt", "1")], False),
])
def test_requirement_selector_matching(label_set, requirements, expected):
    assert labels.LabelSelector(requirements).matches(label_set) is expected


# -- TestSetSelectorParser --------------------------------------------------------------

def reqs(*specs):
    return tuple(Requirement(key, Operator(op), tuple(values)) for key, op, *values in specs)


@pytest.mark.parametrize("text, expected", [
    ("", ()),
    ("\rx", reqs(("x", "exists"))),
    ("this-is-a-dns.domain.com/key-with-dash",
     reqs(("this-is-a-dns.domain.com/key-with-dash", "exists"))),
    ("this-is-another-dns.domain.com/key-with-dash in (so,what)",
     reqs(("this-is-another-dns.domain.com/key-with-dash", "in", "so", "what"))),
    ("0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
     reqs(("0.1.2.domain/99", "notin", "10.10.100.1", "tick.tack.clock"))),
    ("foo  in\t (abc)", reqs(("foo", "in", "abc"))),
    ("x notin\n (abc)", reqs(("x", "notin", "abc"))),
    ("x  notin\t\t\t(abc,def)", reqs(("x", "notin", "abc", "def"))),
    ("x in (abc,def)", reqs(("x", "in", "abc", "def"))),
    ("x in (abc,)", reqs(("x", "in", "", "abc"))),
    ("x in ()", reqs(("x", "in", ""))),
    ("x notin (abc,,def),bar,z in (),w",
     reqs(("bar", "exists"), ("w", "exists"), ("x", "notin", "", "abc", "def"),
          ("z", "in", ""))),
    ("x,y in (a)", reqs(("x", "exists"), ("y", "in", "a"))),
    ("x=a", reqs(("x", "=", "a"))),
    ("x>1", reqs(("x", "gt", "1"))),
    ("x<7", reqs(("x", "lt", "7"))),
    ("x=a,y!=b", reqs(("x", "=", "a"), ("y", "!=", "b"))),
    ("x=a,y!=b,z in (h,i,j)", reqs(("x", "=", "a"), ("y", "!=", "b"), ("z", "in", "h", "i", "j"))),
    ("x notin ( )", reqs(("x", "notin", ""))),
    ("x notin (, a)", reqs(("x", "notin", "", "a"))),
    ("a ", reqs(("a", "exists"))),
    ("a in (x,y,notin, z,in)", reqs(("a", "in", "in", "notin", "x", "y", "z"))),
    ("x in (a,a,b)", reqs(("x", "in", "a", "b"))),
    ("in in (in),notin notin (notin)",
     reqs(("in", "in", "in"), ("notin", "notin", "notin"))),
    ("x==a", reqs(("x", "==", "a"))),
    (" \t\r\nx\t!=\ny ", reqs(("x", "!=", "y"))),
    ("a=b, c=d ,e", reqs(("a", "=", "b"), ("c", "=", "d"), ("e", "exists"))),
])
def test_set_selector_parser_accepts(text, expected):
    assert parse(text).requirements == expected


@pytest.mark.parametrize("text, message", [
    # The reference answer of a kube-apiserver 1.32 (error-invalid-label-selector.json).
    ("a in (", "unable to parse requirement: found '', expected: ',', ')' or identifier"),
    ("x=a||y=b", f'unable to parse requirement: values[0][x]: Invalid value: "a||y": '
                 f"{VALUE_REGEX}"),
    ("x,,y", "found ',', expected: identifier after ','"),
    (",x,y", "found ',', expected: !, identifier, or 'end of string'"),
    ("x nott in (y)",
     "unable to parse requirement: found 'nott', expected: in, notin, =, ==, !=, gt, lt"),
    ("a in (xyz),", "found '', expected: identifier after ','"),
    ("a in (xyz)b notin ()", "found 'b', expected: ',' or 'end of string'"),
    ("a in (xyz abc)", "unable to parse requirement: found 'abc', expected: ',' or ')'"),
    ("a notin(", "unable to parse requirement: found '', expected: ',', ')' or identifier"),
    ("a (", "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt"),
    ("(", "found '(', expected: !, identifier, or 'end of string'"),
    ("x==a==b", "found '==', expected: ',' or 'end of string'"),
    ("!x=a", "found '=', expected: ',' or 'end of string'"),
    ("x<a", "unable to parse requirement: values[0]: Invalid value: \"a\": "
            "for 'Gt', 'Lt' operators, the value must be an integer"),
    ("env IN (a)",
     "unable to parse requirement: found 'IN', expected: in, notin, =, ==, !=, gt, lt"),
    ("x in a", "unable to parse requirement: found 'a' expected: '('"),
    ("x in (a", "unable to parse requirement: found '', expected: ',' or ')'"),
    ("x in (a,=)", "unable to parse requirement: found '=', expected: ',', or identifier"),
    ("x in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier"),
    ("x>=1", "unable to parse requirement: found '=', expected: identifier"),
    ("x=(", "unable to parse requirement: found '(', expected: identifier"),
    ("!", "unable to parse requirement: found '', expected: identifier"),
    ("!=a", "found '!=', expected: !, identifier, or 'end of string'"),
    ("!!a", "unable to parse requirement: found '!', expected: identifier"),
    (")", "found ')', expected: !, identifier, or 'end of string'"),
    ("a=b c", "found 'c', expected: ',' or 'end of string'"),
    ("a,", "found '', expected: identifier after ','"),
    ("-x", f'unable to parse requirement: <nil>: Invalid value: "-x": {NAME_PART_REGEX}'),
    ("a/b/c", 'unable to parse requirement: <nil>: Invalid value: "a/b/c": a qualified name '
              + NAME_PART_REGEX.removeprefix("name part ")
              + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"),
    ("/a", 'unable to parse requirement: <nil>: Invalid value: "/a": '
           "prefix part must be non-empty"),
    ("a/", 'unable to parse requirement: <nil>: Invalid value: "a/": '
           f"name part must be non-empty; {NAME_PART_REGEX}"),
    ("app.kubernetes_io/name=x",
     f'unable to parse requirement: <nil>: Invalid value: "app.kubernetes_io/name": '
     f"{PREFIX_REGEX}"),
    ("x=-x", f'unable to parse requirement: values[0][x]: Invalid value: "-x": {VALUE_REGEX}'),
    ("x in (-b,-a)", f'unable to parse requirement: [values[0][x]: Invalid value: "-a": '
                     f'{VALUE_REGEX}, values[1][x]: Invalid value: "-b": {VALUE_REGEX}]'),
    ("x>-1", "unable to parse requirement: values[0][x]: Invalid value: \"-1\": "
             f"{VALUE_REGEX}"),
    ("x>-a", "unable to parse requirement: [values[0]: Invalid value: \"-a\": for 'Gt', 'Lt' "
             f'operators, the value must be an integer, values[0][x]: Invalid value: "-a": '
             f"{VALUE_REGEX}]"),
    ('a"b', f'unable to parse requirement: <nil>: Invalid value: "a\\"b": {NAME_PART_REGEX}'),
    ("é\x7f", 'unable to parse requirement: <nil>: Invalid value: "é\\x7f": '
              f"{NAME_PART_REGEX}"),
])
def test_set_selector_parser_rejects(text, message):
    with pytest.raises(SelectorError) as info:
        parse(text)
    assert str(info.value) == message


def test_selector_error_is_a_value_error():
    assert issubclass(SelectorError, ValueError)


def test_selector_error_carries_the_field_errors():
    with pytest.raises(SelectorError) as info:
        parse("x in (-b,ok)")
    [error] = info.value.errors
    assert (error.field, error.bad_value) == ("values[0][x]", "-b")
    assert error.error_body() == f'Invalid value: "-b": {VALUE_REGEX}'
    with pytest.raises(SelectorError) as info:
        parse("-k")
    assert [e.field for e in info.value.errors] == ["<nil>"]
    with pytest.raises(SelectorError) as info:
        parse("x in (")
    assert info.value.errors == []


def test_requirement_coerces_operator_and_values():
    requirement = Requirement("k", "in", ["a"])
    assert requirement.operator is Operator.IN and requirement.values == ("a",)
    assert requirement.matches({"k": "a"}) and str(requirement) == "k in (a)"


def test_long_key_prefix_and_name():
    key = "a" * 254 + "/" + "b" * 64
    with pytest.raises(SelectorError) as info:
        parse(key)
    assert str(info.value) == (
        f'unable to parse requirement: <nil>: Invalid value: "{key}": prefix part must be no '
        f"more than 253 characters; name part must be no more than 63 characters")


# -- TestAdd / RequiresExactMatch -------------------------------------------------------

def test_add_keeps_requirements_sorted_by_key():
    selector = labels.LabelSelector().add(req("key", "in", "value"))
    assert selector.requirements == reqs(("key", "in", "value"))
    selector = selector.add(req("a", "=", "b"))
    assert str(selector) == "a=b,key in (value)"


@pytest.mark.parametrize("selector, key, expected", [
    ("x=a", "x", "a"), ("x==a", "x", "a"), ("x in (a)", "x", "a"), ("x=", "x", ""),
    ("x in (a,b)", "x", None), ("x!=a", "x", None), ("x", "x", None), ("x>1", "x", None),
    ("y=a", "x", None), ("", "x", None),
    ("x!=b,x=a", "x", None),  # upstream looks at the first requirement on the key only
])
def test_requires_exact_match(selector, key, expected):
    assert parse(selector).requires_exact_match(key) == expected


# -- metav1.LabelSelectorAsSelector -----------------------------------------------------

def test_label_selector_nil_selects_nothing():
    nothing = labels.selector_from_label_selector(None)
    assert not nothing.matches({}) and not nothing.matches({"a": "b"})
    assert not nothing.empty and str(nothing) == "" and nothing


@pytest.mark.parametrize("label_selector", [{}, {"matchLabels": {}, "matchExpressions": []},
                                            {"matchLabels": None}])
def test_label_selector_empty_selects_everything(label_selector):
    selector = labels.selector_from_label_selector(label_selector)
    assert selector.empty and selector.matches({"a": "b"})


def test_label_selector_as_selector():
    selector = labels.selector_from_label_selector({
        "matchLabels": {"app": "web", "tier": "front"},
        "matchExpressions": [
            {"key": "env", "operator": "In", "values": ["prod", "dev"]},
            {"key": "canary", "operator": "DoesNotExist"},
            {"key": "zone", "operator": "NotIn", "values": ["b"]},
            {"key": "team", "operator": "Exists", "values": []},
        ]})
    assert str(selector) == ("app=web,!canary,env in (dev,prod),team,tier=front,"
                             "zone notin (b)")
    assert selector.matches({"app": "web", "tier": "front", "env": "dev", "team": "x"})
    assert not selector.matches({"app": "web", "tier": "front", "env": "dev", "team": "x",
                                 "canary": "1"})
    assert not selector.matches({"app": "web", "tier": "front", "env": "qa", "team": "x"})
    assert selector.requires_exact_match("app") == "web"


@pytest.mark.parametrize("label_selector, message", [
    ({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]},
     '"Gt" is not a valid pod selector operator'),
    ({"matchExpressions": [{"key": "a", "operator": "in", "values": ["1"]}]},
     '"in" is not a valid pod selector operator'),
    ({"matchExpressions": [{"key": "a"}]}, '"" is not a valid pod selector operator'),
    ({"matchExpressions": [{"key": "a", "operator": "In"}]},
     "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't "
     "be empty"),
    ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": []}]},
     "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't "
     "be empty"),
    ({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
     'values: Invalid value: []string{"x"}: values set must be empty for exists and does not '
     "exist"),
    ({"matchLabels": {"-a": "b"}}, f'key: Invalid value: "-a": {NAME_PART_REGEX}'),
    ({"matchLabels": {"a": "b c"}}, f'values[0][a]: Invalid value: "b c": {VALUE_REGEX}'),
    ({"matchExpressions": [{"key": "", "operator": "Exists"}]},
     'key: Invalid value: "": name part must be non-empty; ' + NAME_PART_REGEX),
])
def test_label_selector_errors(label_selector, message):
    with pytest.raises(SelectorError) as info:
        labels.selector_from_label_selector(label_selector)
    assert str(info.value) == message


# -- the reference transcripts of a kube-apiserver 1.32 ------------------------------------

def _reference(name):
    path = REFERENCE / name
    if not path.exists():
        pytest.skip(f"{path} is not available")
    return json.loads(path.read_text())


def _query(transcript, parameter):
    query = urllib.parse.urlsplit(transcript["request"]["path"]).query
    return urllib.parse.parse_qs(query)[parameter][0]


def test_reference_invalid_label_selector():
    transcript = _reference("error-invalid-label-selector.json")
    with pytest.raises(SelectorError) as info:
        parse(_query(transcript, "labelSelector"))
    assert str(info.value) == transcript["response"]["body"]["message"]


def test_reference_list_with_label_selector():
    transcript = _reference("list-configmaps-labelselector.json")
    selector = parse(_query(transcript, "labelSelector"))
    items = transcript["response"]["body"]["items"]
    assert items and all(selector.matches(item["metadata"].get("labels")) for item in items)
    assert not selector.matches({"app": "other", "s": "1"})
