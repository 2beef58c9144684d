"""Tests of the JSONPath subset CRDs use, against kubectl v1.32's own answers.

Every expectation below was read from ``kubectl annotate --local -o jsonpath=...`` (the
same ``client-go/util/jsonpath`` package), except where a comment says otherwise.
"""

import pytest

from kapiserver_plugins.apiextensions.jsonpath import (JSONPathError, find, find_results,
                                                       parse, to_text)

OBJ = {
    "metadata": {"name": "x", "labels": {"app": "web", "app.kubernetes.io/name": "n"}},
    "status": {"conditions": [{"type": "Ready", "status": "True", "n": 1},
                              {"type": "Synced", "status": "False", "n": 2},
                              {"type": "X", "n": 3.5}]},
    "spec": {"size": 3, "list": [{"name": "a", "v": 1}, {"name": "b"}, {"name": "c", "v": 3}],
             "nums": [0, 1, 2, 3, 4, 5], "q": "it's", "nothing": None},
}


def printed(path: str) -> str:
    """What kubectl prints for ``{path}``: the first result set, space separated."""
    return " ".join(to_text(value) for value in find_results(parse(path), OBJ)[0])


@pytest.mark.parametrize("path,want", [
    (".spec.size", "3"),
    ('.status.conditions[?(@.type=="Ready")].status', "True"),
    (".status.conditions[?(@.type=='Synced')].status", "False"),
    (".status.conditions[?(@.status)].type", "Ready Synced"),
    (".spec.list[*].v", "1 3"),
    (".spec.list[?(@.v!=1)].name", "c"),
    (".spec.list[?(@.v<=3)].name", "a c"),
    ('.spec.list[?(@.name>"a")].name', "b c"),
    (".spec.list[?(@.name=='a')]['name','v']", "a 1"),
    (".spec.list[?(@.name)].name", "a b c"),
    (".spec.nums[?(@.x=1)]", ""),
    (".spec.nums[1:5:2]", "1 3"),
    (".spec.nums[-2:]", "4 5"),
    (".spec.nums[0,2,4]", "0 2 4"),
    (".spec.nums[1:1]", ""),
    (".spec.nums[6:]", ""),
    (".spec.nums[]", "0"),
    (".spec.nums[:]", "0 1 2 3 4 5"),
    (".spec.nums[-1]", "5"),
    (".metadata.labels['app']", "web"),
    # A bracketed key is parsed as a path: its dots separate fields, unless escaped.
    (".metadata.labels['app.kubernetes.io/name']", ""),
    (r".metadata.labels.app\.kubernetes\.io/name", "n"),
    ("..name", "x a b c"),
    ("$.spec.q", "it's"),
    ("@.spec.q", "it's"),
    (".spec.list[0].name.x", ""),
    ('.status.conditions[?(@.type=="Ready")]', '{"n":1,"status":"True","type":"Ready"}'),
    (".spec.missing", ""),
])
def test_paths_find_what_kubectl_finds(path, want):
    assert printed(path) == want


@pytest.mark.parametrize("path,error", [
    (".status.conditions[?(@.n>1)].type", "incompatible types for comparison"),
    (".spec.nums[?(@==true)]", "incompatible types for comparison"),
    (".spec.nums[::-1]", "step must be > 0"),
    (".spec.nums[3:1]", "starting index 3 is greater than ending index 1"),
    (".spec.nums[-7]", "array index out of bounds: index -1, length 6"),
    (".spec.q[0]", "string is not array or slice"),
    ("foo", "unrecognized identifier foo"),
])
def test_evaluation_errors_are_upstreams_and_find_finds_nothing(path, error):
    with pytest.raises(JSONPathError, match=f"^{error}$".replace("[", r"\[")):
        find_results(parse(path), OBJ)
    assert find(parse(path), OBJ) == []


@pytest.mark.parametrize("path,error", [
    (".a[", "unterminated array"),
    (".a[?(@.x", "unterminated filter"),
    ("{", "unrecognized character in action: U+007B '{'"),
    ('.a[?(@.type=~"R")]', "unrecognized character in action: U+007E '~'"),
    ("\t", "unrecognized character in action: U+0009"),
    (".a[x]", "invalid array index x"),
    ('.data["a"]', 'invalid array index "a"'),
    (".a[1:2:3:4]", "invalid array index 1:2:3:4"),
    ("....a", "invalid multiple recursive descent"),
    (".a[?(@.b)", "unclosed array expect ]"),
    (".a[?(@.b)x]", "unclosed array expect ]"),
    (".a[99999999999999999999]", "array index 99999999999999999999 is not a number"),
    (".a[-]", "array index - is not a number"),
    ("+", "cannot parse number +"),
    ("1.2.3", "cannot parse number 1.2.3"),
    (".data.a{", "unrecognized character in action: U+007B '{'"),
    ("'abc", "unterminated quoted string"),
    ("'a\\q'", "unquote string 'a\\q' error invalid syntax"),
])
def test_parse_errors_are_upstreams(path, error):
    with pytest.raises(JSONPathError) as raised:
        parse(path)
    assert str(raised.value) == error


def test_accepted_forms():
    for path in ["", ".spec.size", ".a[01]", ".a['x\\q']", '.a[?(@.x=="y\\"z")]',
                 ".a[*].b", ".a.*", "..b", ".a[?(@.b == 'c d')].e", ".a[0,1]",
                 ".a[?(@.b>=1.5)]", ".a[?(@.b==true)]", ".a[-1:]"]:
        parse(path)


def test_quoted_literals_unescape_as_go_does():
    compiled = parse(r""".items[?(@.v=="a\"b\u00e9\x41")].k""")
    assert find(compiled, {"items": [{"v": 'a"b\u00e9A', "k": 1}, {"v": "x", "k": 2}]}) == [1]


def test_find_fast_path_and_nulls():
    compiled = parse(".spec.size")
    assert compiled.fields == ("spec", "size")
    assert find(compiled, OBJ) == [3]
    assert find(compiled, {"spec": None}) == []
    assert find(compiled, {"spec": "text"}) == []
    assert find(parse(".spec.nothing"), OBJ) == [None]
    assert find(parse(""), {"a": 1}) == [{"a": 1}]
    # Only the first result set counts: text after the action is another set.
    assert find(parse(".spec.size}x{.spec.q"), OBJ) == [3]


def test_missing_keys_are_errors_only_when_asked():
    with pytest.raises(JSONPathError, match="^nope is not found$"):
        find_results(parse(".spec.nope"), OBJ, allow_missing_keys=False)
    assert find_results(parse(".spec.nope"), OBJ) == [[]]


def test_range_templates_parse_but_find_nothing():
    compiled = parse("range .spec.list[*]}{.name}{end")
    assert find(compiled, OBJ) == []


@pytest.mark.parametrize("value,text", [
    (1.5, "1.5"), (1000000, "1000000"), (1e6, "1e+06"), (3.0, "3"), (1e-05, "1e-05"),
    (0.0001, "0.0001"), (123456.0, "123456"), (1234567.0, "1.234567e+06"), (True, "true"),
    ("<a&b>", "<a&b>"),
    # The table convertor prints reflect.ValueOf(nil), not kubectl's interface{}(nil): a
    # null is "<no value>" there (kubectl prints "null").
    (None, "<no value>"),
    ({"z": 1, "a": [1, "x", None]}, '{"a":[1,"x",null],"z":1}'), ([], "[]"), ({}, "{}"),
])
def test_values_print_as_upstream(value, text):
    assert to_text(value) == text
