"""Field selectors: upstream's fields/selector_test.go cases, its messages, the reference."""

import json
import pathlib
import urllib.parse

import pytest

from kapiserver.apimachinery import fields, labels
from kapiserver.apimachinery.fields import FieldRequirement, FieldSelector, SelectorError, parse

REFERENCE = pathlib.Path("/work/shared/reference")


# -- TestSplitTerms / TestSplitTerm -----------------------------------------------------

@pytest.mark.parametrize("selector, terms", [
    ("a", ["a"]),
    ("a=avalue", ["a=avalue"]),
    ("a=avalue,b=bvalue", ["a=avalue", "b=bvalue"]),
    ("a=avalue,b==bvalue,c!=cvalue", ["a=avalue", "b==bvalue", "c!=cvalue"]),
    ("", []),
    ("a=a,", ["a=a", ""]),
    (",a=a", ["", "a=a"]),
    (r"k=\,,k2=v2", [r"k=\,", "k2=v2"]),
    (r"k=\\,k2=v2", [r"k=\\", "k2=v2"]),
    (r"k=\\\,,k2=v2", [r"k=\\\,", "k2=v2"]),
    (r"k=\a\b" + "\\", [r"k=\a\b" + "\\"]),
    ("k=\\", ["k=\\"]),
    ("함=수,목=록", ["함=수", "목=록"]),
])
def test_split_terms(selector, terms):
    assert fields._split_terms(selector) == terms


@pytest.mark.parametrize("term, expected", [
    ("a=value", ("a", "=", "value")),
    ("b==value", ("b", "==", "value")),
    ("c!=value", ("c", "!=", "value")),
    ("", None),
    ("a", None),
    (r"k=\,", ("k", "=", r"\,")),
    (r"k=\=", ("k", "=", r"\=")),
    (r"k=\\\a\b\=\," + "\\", ("k", "=", r"\\\a\b\=\," + "\\")),
    ("함=수", ("함", "=", "수")),
    ("a!==b", ("a", "!=", "=b")),
    ("=a", ("", "=", "a")),
])
def test_split_term(term, expected):
    assert fields._split_term(term) == expected


# -- TestEscapeValue --------------------------------------------------------------------

@pytest.mark.parametrize("value, escaped", [
    ("", ""), ("a", "a"), ("=", r"\="), (",", r"\,"), ("\\", "\\\\"),
    (r"\=\," + "\\", r"\\\=\\\,\\"),
])
def test_escape_value_round_trips(value, escaped):
    assert fields.escape_value(value) == escaped
    assert fields.unescape_value(escaped) == value


@pytest.mark.parametrize("value, message", [
    ("\\", "invalid field selector: invalid escape sequence: \\"),
    ("\\\\\\", "invalid field selector: invalid escape sequence: \\"),
    (r"\a", r"invalid field selector: invalid escape sequence: \a"),
    ("a=b", "invalid field selector: unescaped character in value: 61"),
    ("a,b", "invalid field selector: unescaped character in value: 44"),
])
def test_unescape_value_errors(value, message):
    with pytest.raises(SelectorError) as info:
        fields.unescape_value(value)
    assert str(info.value) == message


# -- TestSelectorParse / TestDeterministicParse -----------------------------------------

@pytest.mark.parametrize("text", ["x=a,y=b,z=c", "", "x!=a,y=b", r"x=a||y\=b", r"x=a\=\=b"])
def test_good_strings_restring(text):
    assert str(parse(text)) == text


@pytest.mark.parametrize("text, message", [
    ("x=a||y=b", "invalid field selector: unescaped character in value: 61"),
    ("x==a==b", "invalid field selector: unescaped character in value: 61"),
    ("x=a,b", "invalid selector: 'x=a,b'; can't understand 'b'"),
    ("x in (a)", "invalid selector: 'x in (a)'; can't understand 'x in (a)'"),
    ("x in (a,b,c)", "invalid selector: 'x in (a,b,c)'; can't understand 'b'"),
    ("x", "invalid selector: 'x'; can't understand 'x'"),
    ("x=\\", "invalid field selector: invalid escape sequence: \\"),
    (r"x=\n", r"invalid field selector: invalid escape sequence: \n"),
    # The terms are read sorted: 'a' fails before the z term is looked at.
    ("z=\\\\,a", "invalid selector: 'z=\\\\,a'; can't understand 'a'"),
])
def test_bad_strings(text, message):
    with pytest.raises(SelectorError) as info:
        parse(text)
    assert str(info.value) == message


def test_field_selector_error_is_the_label_selector_error():
    assert fields.SelectorError is labels.SelectorError
    assert issubclass(SelectorError, ValueError)


def test_deterministic_parse():
    assert str(parse("x=a,a=x")) == str(parse("a=x,x=a")) == "a=x,x=a"


@pytest.mark.parametrize("text, requirements", [
    ("x==a", [("x", "=", "a")]),
    ("x=a,y!=b", [("x", "=", "a"), ("y", "!=", "b")]),
    ("y!=b,x=a", [("x", "=", "a"), ("y", "!=", "b")]),
    (",,x=,", [("x", "=", "")]),
    ("x!=", [("x", "!=", "")]),
    (r"x=\,\=\\", [("x", "=", ",=\\")]),
    (r"z=\,a", [("z", "=", ",a")]),
    ("x=a b", [("x", "=", "a b")]),
    (" x = a ", [(" x ", "=", " a ")]),  # no blank is special in field selectors
    ("=a", [("", "=", "a")]),
])
def test_parse_requirements(text, requirements):
    assert parse(text).requirements == tuple(FieldRequirement(*r) for r in requirements)


def test_canonical_string_escapes_values_and_writes_equals_once():
    assert str(parse(r"b==x\,y,a!=\\")) == r"a!=\\,b=x\,y"


# -- TestSelectorMatches / TestSetIsEmpty / TestRequiresExactMatch ----------------------

FIELD_SET = {"foo": "bar", "baz": "blah", "complex": "=value\\,\\"}


@pytest.mark.parametrize("selector, field_set", [
    ("", {"x": "y"}),
    ("x=y", {"x": "y"}),
    ("x=y,z=w", {"x": "y", "z": "w"}),
    ("x!=y,z!=w", {"x": "z", "z": "a"}),
    ("notin=in", {"notin": "in"}),
    ("foo=bar", FIELD_SET),
    ("baz=blah", FIELD_SET),
    ("foo=bar,baz=blah", FIELD_SET),
    (r"foo=bar,baz=blah,complex=\=value\\\,\\", FIELD_SET),
    ("missing=", FIELD_SET),  # an absent field reads as ""
    ("missing!=x", FIELD_SET),
])
def test_selector_matches(selector, field_set):
    assert parse(selector).matches(field_set)


@pytest.mark.parametrize("selector, field_set", [
    ("x=y", {"x": "z"}),
    ("x=y,z=w", {"x": "w", "z": "w"}),
    ("x!=y,z!=w", {"x": "z", "z": "w"}),
    ("foo=blah", FIELD_SET),
    ("baz=bar", FIELD_SET),
    ("foo=bar,foobar=bar,baz=blah", FIELD_SET),
    ("missing!=", FIELD_SET),
    ("x=y", {}),
])
def test_selector_does_not_match(selector, field_set):
    assert not parse(selector).matches(field_set)


def test_empty():
    assert parse("").empty and parse(",,").empty and FieldSelector().empty
    assert not parse("a=b").empty and not parse("a!=").empty
    assert not parse(",") and parse("a=b")  # a selector is as true as it is restrictive


@pytest.mark.parametrize("selector, field, expected", [
    ("", "test", None),
    ("a=b", "test", None),
    ("test=b", "test", "b"),
    ("test=", "test", ""),
    ("test==b", "test", "b"),
    ("test!=b", "test", None),
    ("test!=", "test", None),
    ("a=,test=b", "test", "b"),
    ("test!=a,test=b", "test", "b"),
])
def test_requires_exact_match(selector, field, expected):
    assert parse(selector).requires_exact_match(field) == expected


# -- Transform ------------------------------------------------------------------------

def test_transform_renames_and_drops():
    def fn(field, value):
        if field == "spec.host":
            return "spec.nodeName", value
        if field == "drop":
            return "", ""
        return field, value.upper()

    selector = parse("spec.host=n1,drop=x,status.phase!=running")
    assert str(selector.transform(fn)) == "spec.nodeName=n1,status.phase!=RUNNING"


def test_transform_propagates_errors():
    def fn(field, value):
        raise SelectorError(f"field label not supported: {field}")

    with pytest.raises(SelectorError, match="^field label not supported: a$"):
        parse("b=1,a=2").transform(fn)


# -- check_supported ------------------------------------------------------------------

@pytest.mark.parametrize("selector, supported, kind, message", [
    ("data.a=1", {"metadata.name", "metadata.namespace"}, "ConfigMap",
     '"data.a" is not a known field selector: only "metadata.name", "metadata.namespace"'),
    ("spec.foo=1", {"metadata.name"}, "ClusterRole",
     '"spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace"'),
    ('sp"ec=1', {"metadata.name"}, "ClusterRole",
     '"sp\\"ec" is not a known field selector: only "metadata.name", "metadata.namespace"'),
    ("spec.foo=1", {"metadata.name", "status.phase"}, "Namespace",
     "field label not supported: spec.foo"),
    ("metadata.namespace=x", {"metadata.name", "status.phase"}, "Namespace",
     "field label not supported: metadata.namespace"),
    ("type=x,spec.foo=1", {"metadata.name", "metadata.namespace", "type"}, "Secret",
     "field label not supported: spec.foo"),
    ("spec.foo=1", {"metadata.name", "metadata.namespace"}, "Pod",
     "field label not supported: spec.foo"),
    ("spec.foo=1", {"metadata.name", "metadata.namespace", "spec.color"}, "Widget",
     "field label not supported: spec.foo"),
    # The first unsupported field in the selector's (sorted) order is the one reported.
    ("z=1,b=2,metadata.name=x", {"metadata.name"}, "Node",
     "field label not supported: b"),
])
def test_check_supported_messages(selector, supported, kind, message):
    with pytest.raises(SelectorError) as info:
        fields.check_supported(parse(selector), supported, kind)
    assert str(info.value) == message


@pytest.mark.parametrize("selector, supported, kind", [
    ("", set(), "ConfigMap"),
    ("metadata.name=a,metadata.namespace!=b", {"metadata.name", "metadata.namespace"},
     "ConfigMap"),
    # The default conversion accepts metadata.namespace even for cluster-scoped kinds.
    ("metadata.namespace=", {"metadata.name"}, "ClusterRole"),
    ("status.phase=Active", {"metadata.name", "status.phase"}, "Namespace"),
])
def test_check_supported_accepts(selector, supported, kind):
    fields.check_supported(parse(selector), supported, kind)


def test_check_supported_custom_resources_use_their_own_wording():
    selector = parse("spec.foo=1")
    with pytest.raises(SelectorError, match="^field label not supported: spec.foo$"):
        fields.check_supported(selector, {"metadata.name", "metadata.namespace"}, "Widget",
                               default_conversion=False)
    # A cluster-scoped custom resource cannot select on metadata.namespace.
    with pytest.raises(SelectorError,
                       match="^field label not supported: metadata.namespace$"):
        fields.check_supported(parse("metadata.namespace=a"), {"metadata.name"}, "Widget",
                               default_conversion=False)


# -- ObjectMetaFieldsSet ----------------------------------------------------------------

def test_object_meta_fields():
    obj = {"metadata": {"name": "cm1", "namespace": "ns", "labels": {"a": "b"}}}
    assert fields.object_meta_fields(obj, True) == {"metadata.name": "cm1",
                                                    "metadata.namespace": "ns"}
    assert fields.object_meta_fields(obj, False) == {"metadata.name": "cm1"}
    assert fields.object_meta_fields({}, True) == {"metadata.name": "",
                                                   "metadata.namespace": ""}


def test_object_meta_fields_with_a_selector():
    obj = {"metadata": {"name": "cm1", "namespace": "ns"}}
    meta = fields.object_meta_fields(obj, False)
    assert parse("metadata.name=cm1,metadata.namespace=").matches(meta)
    assert not parse("metadata.namespace=ns").matches(meta)
    assert parse("metadata.namespace=ns").matches(fields.object_meta_fields(obj, True))


# -- the reference transcript of a kube-apiserver 1.32 ------------------------------------

def test_reference_invalid_field_selector():
    path = REFERENCE / "error-invalid-field-selector.json"
    if not path.exists():
        pytest.skip(f"{path} is not available")
    transcript = json.loads(path.read_text())
    query = urllib.parse.urlsplit(transcript["request"]["path"]).query
    selector = parse(urllib.parse.parse_qs(query)["fieldSelector"][0])
    with pytest.raises(SelectorError) as info:
        # configmaps: namespaced, no selectable field of their own
        fields.check_supported(selector, {"metadata.name", "metadata.namespace"}, "ConfigMap")
    assert str(info.value) == transcript["response"]["body"]["message"]
