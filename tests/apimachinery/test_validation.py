"""Tests for kapiserver.apimachinery.validation, with upstream's (1.32) exact messages.

The good/bad value tables are upstream's ``util/validation/validation_test.go`` and
``api/validation/objectmeta_test.go``; expected texts are what 1.32 prints.
"""

import base64

import pytest

from kapiserver.apimachinery.field_errors import FieldError, FieldPath, invalid_status
from kapiserver.apimachinery import validation as v

A = "a"
QUALIFIED_REGEX = ("must consist of alphanumeric characters, '-', '_' or '.', and must start "
                   "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
                   "'123-abc', regex used for validation is "
                   "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
NAME_PART_MSG = "name part " + QUALIFIED_REGEX
QUALIFIED_NAME_MSG = ("a qualified name " + QUALIFIED_REGEX + " with an optional DNS subdomain "
                      "prefix and '/' (e.g. 'example.com/MyName')")
SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                 "characters, '-' or '.', and must start and end with an alphanumeric character"
                 " (e.g. 'example.com', regex used for validation is "
                 "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
             "'-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
             "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
DNS1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
               "start with an alphabetic character, and end with an alphanumeric character "
               "(e.g. 'my-name',  or 'abc-123', regex used for validation is "
               "'[a-z]([-a-z0-9]*[a-z0-9])?')")
LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric "
                   "characters, '-', '_' or '.', and must start and end with an alphanumeric "
                   "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
                   "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
CONFIG_KEY_MSG = ("a valid config key must consist of alphanumeric characters, '-', '_' or '.' "
                  "(e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation "
                  "is '[-._a-zA-Z0-9]+')")
NOT_STANDARD = "name is neither a standard finalizer name nor is it fully qualified"
PREFER = ("prefer a domain-qualified finalizer name including a path (/) to avoid accidental "
          "conflicts with other finalizer writers")


def texts(errors):
    return [e.error_text() for e in errors]


# -- string formats: upstream's tables ------------------------------------------------------

DNS1123_LABEL_GOOD = ["a", "ab", "abc", "a1", "a-1", "a--1--2--b", "0", "01", "012", "1a", "1-a",
                      "1--a--b--2", A * 63]
DNS1123_LABEL_BAD = ["", "A", "ABC", "aBc", "A1", "A-1", "1-A", "-", "a-", "-a", "1-", "-1",
                     "_", "a_", "_a", "a_b", "1_", "_1", "1_2", ".", "a.", ".a", "a.b", "1.", ".1",
                     "1.2", " ", "a ", " a", "a b", "1 ", " 1", "1 2", A * 64, "a\n", "é"]


@pytest.mark.parametrize("value", DNS1123_LABEL_GOOD)
def test_dns1123_label_good(value):
    assert v.is_dns1123_label(value) == []


@pytest.mark.parametrize("value", DNS1123_LABEL_BAD)
def test_dns1123_label_bad(value):
    assert v.is_dns1123_label(value)


def test_dns1123_label_messages():
    assert v.is_dns1123_label("Foo") == [LABEL_MSG]
    assert v.is_dns1123_label("a.b") == ["must not contain dots"]
    assert v.is_dns1123_label(A * 64) == ["must be no more than 63 characters"]
    assert v.is_dns1123_label("A" * 64) == ["must be no more than 63 characters", LABEL_MSG]
    # lengths are bytes: 32 two-byte characters are 64 bytes
    assert v.is_dns1123_label("é" * 32)[0] == "must be no more than 63 characters"


DNS1123_SUBDOMAIN_GOOD = [
    "a", "ab", "abc", "a1", "a-1", "a--1--2--b", "0", "01", "012", "1a", "1-a", "1--a--b--2",
    "a.a", "ab.a", "abc.a", "a1.a", "a-1.a", "a--1--2--b.a", "a.1", "ab.1", "abc.1", "a1.1",
    "a-1.1", "a--1--2--b.1", "0.a", "01.a", "012.a", "1a.a", "1-a.a", "1--a--b--2", "0.1",
    "01.1", "012.1", "1a.1", "1-a.1", "1--a--b--2.1", "a.b.c.d.e", "aa.bb.cc.dd.ee",
    "1.2.3.4.5", "11.22.33.44.55", A * 253]
DNS1123_SUBDOMAIN_BAD = [
    "", "A", "ABC", "aBc", "A1", "A-1", "1-A", "-", "a-", "-a", "1-", "-1", "_", "a_", "_a",
    "a_b", "1_", "_1", "1_2", ".", "a.", ".a", "a..b", "1.", ".1", "1..2", " ", "a ", " a",
    "a b", "1 ", " 1", "1 2", "A.a", "aB.a", "ab.A", "A1.a", "a1.A", "A.1", "aB.1", "A1.1",
    "1A.1", "0.A", "01.A", "012.A", "1A.a", "1a.A", "A.B.C.D.E", "AA.BB.CC.DD.EE", "a.B.c.d.e",
    "aa.bB.cc.dd.ee", "a@b", "a,b", "a_b", "a;b", "a:b", "a%b", "a?b", "a$b", A * 254, "a\n"]


@pytest.mark.parametrize("value", DNS1123_SUBDOMAIN_GOOD)
def test_dns1123_subdomain_good(value):
    assert v.is_dns1123_subdomain(value) == []


@pytest.mark.parametrize("value", DNS1123_SUBDOMAIN_BAD)
def test_dns1123_subdomain_bad(value):
    assert v.is_dns1123_subdomain(value)


def test_dns1123_subdomain_messages():
    assert v.is_dns1123_subdomain("Bad_Name") == [SUBDOMAIN_MSG]
    assert v.is_dns1123_subdomain(A * 254) == ["must be no more than 253 characters"]


@pytest.mark.parametrize("value", ["a", "ab", "abc", "a1", "a-1", "a--1--2--b", A * 63])
def test_dns1035_label_good(value):
    assert v.is_dns1035_label(value) == []


@pytest.mark.parametrize("value", [
    "0", "01", "012", "1a", "1-a", "1--a--b--2", "", "A", "ABC", "aBc", "A1", "A-1", "1-A", "-",
    "a-", "-a", "1-", "-1", "_", "a_", "_a", "a_b", "1_", "_1", "1_2", ".", "a.", ".a", "a.b",
    "1.", ".1", "1.2", " ", "a ", " a", "a b", "1 ", " 1", "1 2", A * 64])
def test_dns1035_label_bad(value):
    assert v.is_dns1035_label(value)


def test_dns1035_label_message():
    assert v.is_dns1035_label("1abc") == [DNS1035_MSG]


QUALIFIED_GOOD = [
    "simple", "now-with-dashes", "1-starts-with-num", "1234", "simple/simple",
    "now-with-dashes/simple", "now-with-dashes/now-with-dashes", "now.with.dots/simple",
    "now-with.dashes-and.dots/simple", "1-num.2-num/3-num", "1234/5678", "1.2.3.4/5678",
    "Uppercase_Is_OK_123", "example.com/Uppercase_Is_OK_123", "requests.storage-foo", A * 63,
    A * 253 + "/" + "b" * 63]
QUALIFIED_BAD = [
    "nospecialchars%^=@", "cantendwithadash-", "-cantstartwithadash-", "only/one/slash",
    "Example.com/abc", "example_com/abc", "example.com/", "/simple", A * 64, A * 254 + "/abc"]


@pytest.mark.parametrize("value", QUALIFIED_GOOD)
def test_qualified_name_good(value):
    assert v.is_qualified_name(value) == []


@pytest.mark.parametrize("value", QUALIFIED_BAD)
def test_qualified_name_bad(value):
    assert v.is_qualified_name(value)


@pytest.mark.parametrize("value, messages", [
    ("-bad", [NAME_PART_MSG]),
    ("only/one/slash", [QUALIFIED_NAME_MSG]),
    ("/simple", ["prefix part must be non-empty"]),
    ("example.com/", ["name part must be non-empty", NAME_PART_MSG]),
    ("", ["name part must be non-empty", NAME_PART_MSG]),
    ("Example.com/abc", ["prefix part " + SUBDOMAIN_MSG]),
    (A * 64, ["name part must be no more than 63 characters"]),
    (A * 254 + "/abc", ["prefix part must be no more than 253 characters"]),
    ("A" * 254 + "/abc", ["prefix part must be no more than 253 characters",
                          "prefix part " + SUBDOMAIN_MSG]),
])
def test_qualified_name_messages(value, messages):
    assert v.is_qualified_name(value) == messages


@pytest.mark.parametrize("value", ["simple", "now-with-dashes", "1-starts-with-num",
                                   "end-with-num-1", "1234", A * 63, ""])
def test_label_value_good(value):
    assert v.is_valid_label_value(value) == []


@pytest.mark.parametrize("value", ["nospecialchars%^=@", "Tama-nui-te-rā.is.Māori.sun",
                                   "\\backslashes\\are\\bad", "-starts-with-dash",
                                   "ends-with-dash-", ".starts.with.dot", "ends.with.dot.",
                                   A * 64])
def test_label_value_bad(value):
    assert v.is_valid_label_value(value)


def test_label_value_messages():
    assert v.is_valid_label_value("-x") == [LABEL_VALUE_MSG]
    assert v.is_valid_label_value(A * 64) == ["must be no more than 63 characters"]


@pytest.mark.parametrize("value", ["a", "good", "good-good", "still.good", "this.is.also.good",
                                   ".so.is.this", "THIS_IS_GOOD", "so_is_this_17"])
def test_config_map_key_good(value):
    assert v.is_config_map_key(value) == []


@pytest.mark.parametrize("value, messages", [
    (".", ["must not be '.'"]),
    ("..", ["must not be '..'"]),
    ("..bad", ["must not start with '..'"]),
    ("b*d", [CONFIG_KEY_MSG]),
    ("bad!&bad", [CONFIG_KEY_MSG]),
    ("k!", [CONFIG_KEY_MSG]),
    ("", [CONFIG_KEY_MSG]),
    (A * 254, ["must be no more than 253 characters"]),
])
def test_config_map_key_bad(value, messages):
    assert v.is_config_map_key(value) == messages


@pytest.mark.parametrize("value", ["*.example.com", "*.bar.com", "*.foo.bar.com"])
def test_wildcard_good(value):
    assert v.is_wildcard_dns1123_subdomain(value) == []


@pytest.mark.parametrize("value", ["*.*.bar.com", "*.foo.*.com", "*bar.com", "f*.bar.com", "*"])
def test_wildcard_bad(value):
    assert v.is_wildcard_dns1123_subdomain(value)


def test_c_identifier():
    assert v.is_c_identifier("_my_name1") == []
    assert v.is_c_identifier("1abc") == [
        "a valid C identifier must start with alphabetic character or '_', followed by a string "
        "of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex "
        "used for validation is '[A-Za-z_][A-Za-z0-9_]*')"]


def test_port_num_and_range():
    for good in (1, 2, 1000, 16384, 32768, 65535):
        assert v.is_valid_port_num(good) == []
    for bad in (0, -1, 65536, 100000):
        assert v.is_valid_port_num(bad) == ["must be between 1 and 65535, inclusive"]
    for value, lo, hi in ((1, 0, 10), (5, 5, 20), (25, 10, 25)):
        assert v.is_in_range(value, lo, hi) == []
    assert v.is_in_range(1, 2, 10) == ["must be between 2 and 10, inclusive"]


@pytest.mark.parametrize("value", ["telnet", "re-mail-ck", "pop3", "a", "a-1", "1-a",
                                   "a-1-b-2-c", "1-a-2-b-3"])
def test_port_name_good(value):
    assert v.is_valid_port_name(value) == []


def test_port_name_bad():
    for bad in ("longerthan15characters", "", A * 16, "12345", "1-2-3-4", "-begin", "end-",
                "two--hyphens", "whois++"):
        assert v.is_valid_port_name(bad), bad
    assert v.is_valid_port_name("-TWO--") == [
        "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
        "must contain at least one letter (a-z)", "must not contain consecutive hyphens",
        "must not begin or end with a hyphen"]


def test_percent_header_env():
    for good in ("0%", "00000%", "1%", "01%", "99%", "100%", "101%"):
        assert v.is_valid_percent(good) == []
    for bad in ("", "0", "100", "0.0%", "99.9%", "hundred", " 1%", "1% ", "-0%", "-1%", "+1%"):
        assert v.is_valid_percent(bad) == [
            "a valid percent string must be a numeric string followed by an ending '%' "
            "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"]
    for good in ("Accept-Encoding", "Host", "X-Forwarded-For", "a", "-a", "--123-ABC"):
        assert v.is_http_header_name(good) == []
    for bad in ("Host:", "X-@Home", "", "_", "a.b", " ", "a b", "{"):
        assert v.is_http_header_name(bad)
    assert v.is_env_var_name("MY_ENV.NAME") == []
    assert v.is_env_var_name("..x") == ["must not start with '..'"]
    assert v.is_env_var_name("1abc") == [
        "a valid environment variable name must consist of alphabetic characters, digits, "
        "'_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or "
        "'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is "
        "'[-._a-zA-Z][-._a-zA-Z0-9]*')"]


FQDN_GOOD = ["a.com", "k8s.io", "dev.k8s.io", "dev.k8s.io.", "foo.example.com",
             "this.is.a.really.long.fqdn", "bbc.co.uk", "10.0.0.1", "hyphens-are-good.k8s.io",
             A * 63 + ".k8s.io",
             A * 63 + "." + "b" * 63 + "." + "c" * 63 + "." + "d" * 54 + ".k8s.io"]
FQDN_BAD = [".", "...", ".io", "com", ".com", "Dev.k8s.io", ".foo.example.com", "*.example.com",
            "*.bar.com", "*.foo.bar.com", "underscores_are_bad.k8s.io", "foo@bar.example.com",
            "http://foo.example.com", A * 64 + ".k8s.io",
            A * 63 + "." + "b" * 63 + "." + "c" * 63 + "." + "d" * 55 + ".k8s.io"]


def test_fully_qualified_domain_name():
    for good in FQDN_GOOD:
        assert v.is_fully_qualified_domain_name(FieldPath(""), good) == [], good
    for bad in FQDN_BAD:
        assert v.is_fully_qualified_domain_name(FieldPath(""), bad), bad
    assert texts(v.is_fully_qualified_domain_name(FieldPath("spec", "group"), "com")) == [
        'spec.group: Invalid value: "com": should be a domain with at least two segments '
        "separated by dots"]


def test_fully_qualified_name():
    for good in ("dev.k8s.io", "foo.example.com", "bbc.co.uk", "10.0.0.1", A * 246 + ".k8s.io"):
        assert v.is_fully_qualified_name(FieldPath(""), good) == [], good
    for bad in ("...", "dev.k8s.io.", ".io", "Dev.k8s.io", "k8s.io", "*.example.com",
                "http://foo.example.com", A * 247 + ".k8s.io"):
        assert v.is_fully_qualified_name(FieldPath(""), bad), bad
    assert texts(v.is_fully_qualified_name(FieldPath(""), "k8s.io")) == [
        '[]: Invalid value: "k8s.io": should be a domain with at least three segments '
        "separated by dots"]
    assert texts(v.is_fully_qualified_name(FieldPath(""), "")) == ["[]: Required value"]
    assert texts(v.is_fully_qualified_name(FieldPath("f"), "A.B.C")) == [
        'f: Invalid value: "A.B.C": ' + SUBDOMAIN_MSG]


# -- IP addresses and base64 ----------------------------------------------------------------

@pytest.mark.parametrize("value", ["1.2.3.4", "0.0.0.0", "255.255.255.255", "010.001.002.003",
                                   "::", "::1", "2001:db8::ffff", "::ffff:1.2.3.4",
                                   "1:2:3:4:5:6:7:8", "::1.2.3.4"])
def test_valid_ip(value):
    assert v.is_valid_ip(FieldPath("f"), value) == []


@pytest.mark.parametrize("value", ["", "1.2.3", "1.2.3.4.5", "256.0.0.1", "1.2.3.-4",
                                   "fe80::1%eth0", "1.2.3.4/32", " 1.2.3.4", "1:2:3:4:5:6:7:8:9",
                                   "::g", "x", "1..2.3"])
def test_invalid_ip(value):
    assert texts(v.is_valid_ip(FieldPath("spec", "ip"), value)) == [
        f"spec.ip: Invalid value: \"{value}\": must be a valid IP address, "
        "(e.g. 10.9.8.7 or 2001:db8::ffff)"]


def test_ip_families():
    assert v.is_valid_ipv4_address(FieldPath("f"), "1.2.3.4") == []
    # an IPv4-mapped IPv6 address is IPv4 for Go's To4()
    assert v.is_valid_ipv4_address(FieldPath("f"), "::ffff:1.2.3.4") == []
    assert texts(v.is_valid_ipv4_address(FieldPath("f"), "::1")) == [
        'f: Invalid value: "::1": must be a valid IPv4 address']
    assert v.is_valid_ipv6_address(FieldPath("f"), "::1") == []
    assert texts(v.is_valid_ipv6_address(FieldPath("f"), "::ffff:1.2.3.4")) == [
        'f: Invalid value: "::ffff:1.2.3.4": must be a valid IPv6 address']


def test_cidr():
    for good in ("10.0.0.0/8", "10.1.2.3/32", "::/0", "2001:db8::/64", "010.0.0.0/8"):
        assert v.is_valid_cidr(FieldPath("f"), good) == [], good
    for bad in ("10.0.0.0/33", "10.0.0.0", "10.0.0.0/+8", "::/129", "/8", "10.0.0.0/"):
        assert texts(v.is_valid_cidr(FieldPath("f"), bad)) == [
            f'f: Invalid value: "{bad}": must be a valid CIDR value, '
            "(e.g. 10.9.8.0/24 or 2001:db8::/64)"], bad


@pytest.mark.parametrize("data", ["", "YQ==", "YWI=", "YWJj", "aGVsbG8=", "aGVs\nbG8=",
                                  "aGVsbG8=\r\n", "AAECAwQFBgcICQ=="])
def test_decode_base64_good(data):
    assert v.decode_base64(data) == base64.b64decode(data.replace("\n", "").replace("\r", ""))
    assert v.is_base64(data)


@pytest.mark.parametrize("data, offset", [
    ("aGVsbG8", 4),      # an incomplete last quantum: padding is required
    ("YQ", 0),
    ("Y", 0),
    ("YQ=", 3),          # "==" expected, input ends
    ("YQ=x", 2),
    ("a===", 1),
    ("!!!!", 0),
    ("aGVsbG8=x", 8),    # trailing garbage after padding
    ("aGVsbG8=aGVs", 8),
    ("aGV$", 3),
    ("é", 0),
])
def test_decode_base64_bad(data, offset):
    with pytest.raises(ValueError, match=f"^illegal base64 data at input byte {offset}$"):
        v.decode_base64(data)
    assert not v.is_base64(data)


# -- names ----------------------------------------------------------------------------------

def test_name_functions_and_trailing_dash():
    assert v.name_is_dns_subdomain("foo-", True) == []
    assert v.name_is_dns_subdomain("foo-", False) == [SUBDOMAIN_MSG]
    assert v.name_is_dns_label("ns-", True) == []
    assert v.name_is_dns_label("a.b", False) == ["must not contain dots"]
    assert v.name_is_dns1035_label("svc-", True) == []
    assert v.name_is_dns1035_label("1svc", False) == [DNS1035_MSG]
    assert v.validate_namespace_name is v.name_is_dns_label
    # maskTrailingDash drops two bytes: the byte before a multi-byte last character is cut
    assert v.name_is_dns_subdomain("aé-", True) == [SUBDOMAIN_MSG]
    assert v.name_is_dns_subdomain("Foo-", True) == [SUBDOMAIN_MSG]


def test_path_segment_name():
    assert v.validate_path_segment_name(".") == ["may not be '.'"]
    assert v.validate_path_segment_name("..") == ["may not be '..'"]
    assert v.validate_path_segment_name("a/b%c") == ["may not contain '/'", "may not contain '%'"]
    assert v.validate_path_segment_name("..", True) == []
    assert v.validate_path_segment_name("ok") == []


# -- ValidateObjectMeta ---------------------------------------------------------------------

def test_object_meta_valid():
    meta = {"name": "test", "namespace": "default", "labels": {"app": "x", "a.io/b": ""},
            "annotations": {"Some.Domain/Key": "v"}, "finalizers": ["example.com/f"],
            "generation": 3}
    assert v.validate_object_meta(meta, True) == []


def test_object_meta_reference_errors():
    meta = {"name": "Bad_Name", "labels": {"-bad": "x"}, "namespace": "ref-b5828b"}
    assert texts(v.validate_object_meta(meta, True)) == [
        'metadata.name: Invalid value: "Bad_Name": ' + SUBDOMAIN_MSG,
        'metadata.labels: Invalid value: "-bad": ' + NAME_PART_MSG,
    ]


def test_object_meta_name_required():
    assert texts(v.validate_object_meta({"namespace": "ns"}, True)) == [
        "metadata.name: Required value: name or generateName is required"]


def test_object_meta_generate_name():
    assert v.validate_object_meta({"name": "test", "generateName": "foo-"}, False,
                                  v.name_is_dns_subdomain, FieldPath("field")) == []
    assert texts(v.validate_object_meta({"name": "foo-abcde", "generateName": "Foo-"}, False)) == [
        'metadata.generateName: Invalid value: "Foo-": ' + SUBDOMAIN_MSG]


@pytest.mark.parametrize("meta, count", [
    ({"name": "test", "generateName": ""}, 0),
    ({"name": "test", "generateName": "test"}, 0),
    ({"name": "invalid", "generateName": ""}, 1),
    ({"name": "invalid", "generateName": "test"}, 1),
    ({"name": "invalid", "generateName": "invalid"}, 2),
])
def test_object_meta_custom_name_function(meta, count):
    # upstream TestValidateObjectMetaCustomName
    calls = []

    def name_fn(name, prefix):
        calls.append((name, prefix))
        return [] if name == "test" else ["wrong value"]

    errs = v.validate_object_meta(meta, False, name_fn, FieldPath("field"))
    assert len(errs) == count
    assert all("wrong value" in e.error_text() for e in errs)
    if meta["generateName"]:
        assert (meta["generateName"], True) in calls


def test_object_meta_namespaces():
    assert texts(v.validate_object_meta({"name": "test"}, True)) == [
        "metadata.namespace: Required value"]
    assert texts(v.validate_object_meta({"name": "test", "namespace": "ns"}, False)) == [
        "metadata.namespace: Forbidden: not allowed on this type"]
    errs = v.validate_object_meta({"name": "test", "namespace": "foo.bar"}, True, None,
                                  FieldPath("field"))
    assert texts(errs) == ['field.namespace: Invalid value: "foo.bar": must not contain dots']
    errs = v.validate_object_meta({"name": "test", "namespace": "aB" * 32}, True)
    assert [e.detail for e in errs] == ["must be no more than 63 characters", LABEL_MSG]


def test_object_meta_generation():
    assert texts(v.validate_object_meta({"name": "t", "generation": -1}, False)) == [
        "metadata.generation: Invalid value: -1: must be greater than or equal to 0"]


def test_object_meta_labels():
    errs = v.validate_object_meta({"name": "t", "labels": {"a/b/c": "-x", "ok": A * 64}}, False)
    assert texts(errs) == [
        'metadata.labels: Invalid value: "a/b/c": ' + QUALIFIED_NAME_MSG,
        'metadata.labels: Invalid value: "-x": ' + LABEL_VALUE_MSG,
        f'metadata.labels: Invalid value: "{A * 64}": must be no more than 63 characters',
    ]


ANNOTATIONS_GOOD = [
    {"simple": "bar"}, {"now-with-dashes": "bar"}, {"1-starts-with-num": "bar"},
    {"1234": "bar"}, {"simple/simple": "bar"}, {"now-with-dashes/simple": "bar"},
    {"now-with-dashes/now-with-dashes": "bar"}, {"now.with.dots/simple": "bar"},
    {"now-with.dashes-and.dots/simple": "bar"}, {"1-num.2-num/3-num": "bar"},
    {"1234/5678": "bar"}, {"1.2.3.4/5678": "bar"}, {"UpperCase123": "bar"},
    {"Example.COM/Key": "bar"},
    {"\u0130": "bar"},  # Go lowers U+0130 to "i"
    {"a": "b" * (v.TOTAL_ANNOTATION_SIZE_LIMIT_B - 2)},
    {"a": "b" * (v.TOTAL_ANNOTATION_SIZE_LIMIT_B // 2 - 1),
     "c": "d" * (v.TOTAL_ANNOTATION_SIZE_LIMIT_B // 2 - 1)},
]


@pytest.mark.parametrize("annotations", ANNOTATIONS_GOOD)
def test_annotations_good(annotations):
    assert v.validate_annotations(annotations, FieldPath("field")) == []


@pytest.mark.parametrize("annotations, detail", [
    ({"nospecialchars^=@": "bar"}, NAME_PART_MSG),
    ({"cantendwithadash-": "bar"}, NAME_PART_MSG),
    ({"only/one/slash": "bar"}, QUALIFIED_NAME_MSG),
    ({A * 254: "bar"}, "name part must be no more than 63 characters"),
])
def test_annotations_bad_keys(annotations, detail):
    errs = v.validate_annotations(annotations, FieldPath("field"))
    assert len(errs) == 1 and errs[0].detail == detail


@pytest.mark.parametrize("annotations", [
    {"a": "b" * v.TOTAL_ANNOTATION_SIZE_LIMIT_B},
    {"a": "b" * (v.TOTAL_ANNOTATION_SIZE_LIMIT_B // 2),
     "c": "d" * (v.TOTAL_ANNOTATION_SIZE_LIMIT_B // 2)},
    {"a": "é" * (v.TOTAL_ANNOTATION_SIZE_LIMIT_B // 2)},  # bytes, not characters
])
def test_annotations_total_size(annotations):
    errs = v.validate_object_meta({"name": "t", "annotations": annotations}, False)
    assert texts(errs) == ["metadata.annotations: Too long: may not be more than 262144 bytes"]


def owner(**fields):
    ref = {"apiVersion": "customresourceVersion", "kind": "customresourceKind", "name": "name",
           "uid": "1"}
    ref.update(fields)
    return ref


@pytest.mark.parametrize("refs, expected", [
    ([owner()], []),
    ([owner(apiVersion="v1", kind="Pod")], []),
    ([owner(apiVersion="v1", kind="Event")],
     ['metadata.ownerReferences: Invalid value: v1.OwnerReference{APIVersion:"v1", '
      'Kind:"Event", Name:"name", UID:"1", Controller:(*bool)(nil), '
      "BlockOwnerDeletion:(*bool)(nil)}: /v1, Kind=Event is disallowed from being an owner"]),
    ([owner(apiVersion="a/b/c", kind="Pod")],
     ['metadata.ownerReferences.apiVersion: Invalid value: "a/b/c": version must not be empty']),
    ([owner(apiVersion="foo/", kind="Pod")],
     ['metadata.ownerReferences.apiVersion: Invalid value: "foo/": version must not be empty']),
    ([owner(apiVersion="", kind="", name="", uid="")],
     ['metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty',
      'metadata.ownerReferences.kind: Invalid value: "": kind must not be empty',
      'metadata.ownerReferences.name: Invalid value: "": name must not be empty',
      'metadata.ownerReferences.uid: Invalid value: "": uid must not be empty']),
    ([owner(uid="1", controller=False), owner(uid="2", controller=True),
      owner(uid="3", controller=False), owner(uid="4")], []),
])
def test_owner_references(refs, expected):
    assert texts(v.validate_object_meta({"name": "t", "ownerReferences": refs}, False)) == expected


def test_owner_references_two_controllers():
    refs = [owner(kind="customresourceKind1", uid="1", controller=False),
            owner(kind="customresourceKind2", uid="2", controller=True),
            owner(kind="customresourceKind3", uid="3", controller=True),
            owner(kind="customresourceKind4", uid="4")]
    errs = v.validate_object_meta({"name": "test", "namespace": "test",
                                   "ownerReferences": refs}, True)
    assert len(errs) == 1
    assert errs[0].field == "metadata.ownerReferences"
    assert errs[0].error_body().startswith("Invalid value: []v1.OwnerReference{v1.OwnerReference{")
    assert errs[0].detail == ('Only one reference can have Controller set to true. Found "true" '
                              "in references for customresourceKind2/name and "
                              "customresourceKind3/name")


def test_finalizers():
    errs = v.validate_object_meta({"name": "test", "finalizers": ["orphan", "foregroundDeletion"]},
                                  False)
    assert texts(errs) == [
        'metadata.finalizers: Invalid value: []string{"orphan", "foregroundDeletion"}: '
        "finalizer orphan and foregroundDeletion cannot be both set"]
    errs = v.validate_object_meta({"name": "test", "finalizers": ["a/b/c", "custom"]}, False)
    # the generic rules only want qualified names; "custom" is fine here
    assert texts(errs) == ['metadata.finalizers: Invalid value: "a/b/c": ' + QUALIFIED_NAME_MSG]


def test_managed_fields():
    entries = [
        {"manager": "kubectl", "operation": "Apply", "fieldsType": "FieldsV1"},
        {"manager": "m", "operation": "Foo", "fieldsType": "FieldsV2",
         "subresource": "s" * 257},
        {"manager": "a\x07b\u200bc", "operation": "Update"},
        {"manager": "x" * 129, "operation": "Update"},
    ]
    errs = v.validate_object_meta({"name": "t", "managedFields": entries}, False)
    assert texts(errs) == [
        'metadata.managedFields[1].operation: Invalid value: "Foo": must be `Apply` or `Update`',
        'metadata.managedFields[1].fieldsType: Invalid value: "FieldsV2": must be `FieldsV1`',
        "metadata.managedFields[1].subresource: Too long: may not be more than 256 bytes",
        'metadata.managedFields[2].manager: Invalid value: "a\\ab\\u200bc": invalid character '
        "U+0007 (at position 1)",
        'metadata.managedFields[2].manager: Invalid value: "a\\ab\\u200bc": invalid character '
        "U+200B (at position 3)",
        "metadata.managedFields[3].manager: Too long: may not be more than 128 bytes",
    ]
    assert texts(v.validate_managed_fields([{}], FieldPath("m"))) == [
        'm[0].operation: Invalid value: "": must be `Apply` or `Update`']


# -- ValidateObjectMetaUpdate ---------------------------------------------------------------

NOW = "1970-01-01T00:16:40Z"     # time.Unix(1000, 0)
LATER = "1970-01-01T00:33:20Z"   # time.Unix(2000, 0)


def meta(**fields):
    base = {"name": "test", "resourceVersion": "1"}
    base.update(fields)
    return base


@pytest.mark.parametrize("new, old, expected", [
    (meta(), meta(), []),
    (meta(deletionTimestamp=NOW, deletionGracePeriodSeconds=30),
     meta(deletionTimestamp=NOW, deletionGracePeriodSeconds=30), []),
    (meta(deletionTimestamp=NOW), meta(),
     ["field.deletionTimestamp: Invalid value: 1970-01-01 00:16:40 +0000 UTC: "
      "field is immutable"]),
    (meta(), meta(deletionTimestamp=NOW),
     ['field.deletionTimestamp: Invalid value: "null": field is immutable']),
    (meta(deletionTimestamp=LATER), meta(deletionTimestamp=NOW),
     ["field.deletionTimestamp: Invalid value: 1970-01-01 00:33:20 +0000 UTC: "
      "field is immutable"]),
    (meta(deletionGracePeriodSeconds=30), meta(),
     ["field.deletionGracePeriodSeconds: Invalid value: 30: field is immutable"]),
    (meta(), meta(deletionGracePeriodSeconds=30),
     ['field.deletionGracePeriodSeconds: Invalid value: "null": field is immutable']),
    (meta(deletionGracePeriodSeconds=40), meta(deletionGracePeriodSeconds=30),
     ["field.deletionGracePeriodSeconds: Invalid value: 40: field is immutable"]),
    (meta(generation=4), meta(generation=5),
     ["field.generation: Invalid value: 4: must not be decremented"]),
    (meta(generation=2), meta(generation=1), []),
    (meta(generation=5), meta(generation=5), []),
])
def test_update_deletion_fields_and_generation(new, old, expected):
    # upstream TestValidateObjectMetaUpdatePreventsDeletionFieldMutation (1.32 rendering)
    # and TestObjectMetaGenerationUpdate
    assert texts(v.validate_object_meta_update(new, old, FieldPath("field"))) == expected


@pytest.mark.parametrize("new, old, expected", [
    (meta(), meta(creationTimestamp="1970-01-01T00:00:10Z"),
     ["metadata.creationTimestamp: Invalid value: 0001-01-01 00:00:00 +0000 UTC: "
      "field is immutable"]),
    (meta(creationTimestamp="1970-01-01T00:00:10Z"), meta(),
     ["metadata.creationTimestamp: Invalid value: 1970-01-01 00:00:10 +0000 UTC: "
      "field is immutable"]),
    (meta(creationTimestamp="1970-01-01T00:00:10Z"), meta(creationTimestamp="1970-01-01T00:00:11Z"),
     ["metadata.creationTimestamp: Invalid value: 1970-01-01 00:00:10 +0000 UTC: "
      "field is immutable"]),
    # the same instant written differently is the same time
    (meta(creationTimestamp="2024-01-01T01:00:00+01:00"),
     meta(creationTimestamp="2024-01-01T00:00:00Z"), []),
    (meta(name="b"), meta(name="a"), ['metadata.name: Invalid value: "b": field is immutable']),
    (meta(namespace="new-ns"), meta(namespace="old-ns"),
     ['metadata.namespace: Invalid value: "new-ns": field is immutable']),
    (meta(uid="u2"), meta(uid="u1"), ['metadata.uid: Invalid value: "u2": field is immutable']),
    (meta(resourceVersion=""), meta(),
     ['metadata.resourceVersion: Invalid value: "": must be specified for an update']),
    (meta(labels={"-x": "y"}), meta(), ['metadata.labels: Invalid value: "-x": ' + NAME_PART_MSG]),
])
def test_update_identity(new, old, expected):
    assert texts(v.validate_object_meta_update(new, old)) == expected


@pytest.mark.parametrize("old_finalizers, new_finalizers, expected", [
    (["x/a"], ["x/a", "y/b"], ['metadata.finalizers: Forbidden: no new finalizers can be added '
                               'if the object is being deleted, found new finalizers '
                               '[]string{"y/b"}']),
    (["x/a"], ["x/b"], ['metadata.finalizers: Forbidden: no new finalizers can be added if the '
                        'object is being deleted, found new finalizers []string{"x/b"}']),
    (["x/a", "y/b"], ["x/a"], []),
])
def test_update_finalizers_while_deleting(old_finalizers, new_finalizers, expected):
    old = meta(deletionTimestamp=NOW, finalizers=old_finalizers)
    new = meta(deletionTimestamp=NOW, finalizers=new_finalizers)
    assert texts(v.validate_object_meta_update(new, old)) == expected


def test_update_adding_finalizers_when_not_deleting():
    assert v.validate_object_meta_update(meta(finalizers=["x/a", "y/b"]),
                                         meta(finalizers=["x/a"])) == []


# -- finalizer names: core error, custom resource warning -----------------------------------

def test_core_object_meta_rejects_unqualified_finalizers():
    m = {"name": "cm", "namespace": "ns",
         "finalizers": ["kubernetes", "custom", "example.com/x", "foo.example.com", "orphan"]}
    assert texts(v.validate_core_object_meta(m, True)) == [
        f'metadata.finalizers[1]: Invalid value: "custom": {NOT_STANDARD}',
        f'metadata.finalizers[3]: Invalid value: "foo.example.com": {NOT_STANDARD}',
    ]
    assert v.validate_object_meta(m, True) == []
    assert texts(v.validate_core_object_meta_update(meta(finalizers=["custom"]), meta())) == [
        f'metadata.finalizers[0]: Invalid value: "custom": {NOT_STANDARD}']


def test_kube_finalizer_name():
    assert v.validate_kube_finalizer_name("foregroundDeletion", FieldPath("f")) == []
    assert v.validate_kube_finalizer_name("a/b", FieldPath("f")) == []
    assert texts(v.validate_kube_finalizer_name("x", FieldPath("spec", "finalizers"))) == [
        f'spec.finalizers: Invalid value: "x": {NOT_STANDARD}']
    assert v.is_standard_finalizer_name("kubernetes")


def test_custom_resource_finalizer_warnings():
    assert v.finalizer_warnings(["zz.example.com", "example.com/x", "orphan", "aa"]) == [
        f'metadata.finalizers: "aa": {PREFER}',
        f'metadata.finalizers: "zz.example.com": {PREFER}',
    ]
    # only newly added finalizers warn
    assert v.finalizer_warnings(["zz.example.com", "aa"], ["aa"]) == [
        f'metadata.finalizers: "zz.example.com": {PREFER}']
    assert v.finalizer_warnings(["aa"], ["aa"]) == []
    assert v.finalizer_warnings(["-bad"]) == [
        'metadata.finalizers: "-bad": ' + NAME_PART_MSG, f'metadata.finalizers: "-bad": {PREFER}']


def test_go_time():
    assert v.go_time("2024-01-01T00:00:00Z").text == "2024-01-01 00:00:00 +0000 UTC"
    assert v.go_time("2024-01-01T02:30:00.500+02:00").text == "2024-01-01 00:30:00.5 +0000 UTC"
    assert v.go_time(None).text == "0001-01-01 00:00:00 +0000 UTC"


def test_whole_status_for_a_namespace():
    errs = v.validate_core_object_meta({"name": "Foo"}, False, v.name_is_dns_label)
    body = invalid_status("Namespace", "", "Foo", errs)
    assert body["message"] == 'Namespace "Foo" is invalid: metadata.name: Invalid value: "Foo": ' \
                              + LABEL_MSG
    assert body["details"]["causes"] == [{"reason": "FieldValueInvalid",
                                          "message": 'Invalid value: "Foo": ' + LABEL_MSG,
                                          "field": "metadata.name"}]


def test_field_error_types_are_returned():
    errs = v.validate_object_meta({}, True)
    assert all(isinstance(e, FieldError) for e in errs)
    assert [str(e.type) for e in errs] == ["FieldValueRequired", "FieldValueRequired"]
