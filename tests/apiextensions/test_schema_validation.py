"""Tests of custom-resource schema validation, against upstream's messages."""


import pytest

from kapiserver.apimachinery.field_errors import FieldPath
from kapiserver_plugins.apiextensions.schema import validate, validate_list_types
from kapiserver_plugins.apiextensions.schema.validation import go_json


def causes(schema, obj, path=None):
    return [(c.get("reason"), c.get("field"), c.get("message"))
            for c in (e.to_cause() for e in validate(schema, obj, path))]


def spec(**props):
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": props}}}


def one(schema_of_x, value):
    """The causes for spec.x = value under the given schema of x."""
    return causes(spec(x=schema_of_x), {"spec": {"x": value}})


SIZE_COLOR = {
    "type": "object",
    "properties": {"spec": {
        "type": "object", "required": ["size"],
        "properties": {"size": {"type": "integer", "minimum": 1},
                       "color": {"type": "string", "enum": ["red", "green", "blue"]}}}},
}


def test_real_apiserver_example():
    assert [e.to_cause() for e in validate(SIZE_COLOR, {"spec": {"size": "big", "color": 7}})] == [
        {"reason": "FieldValueTypeInvalid", "field": "spec.color",
         "message": 'Invalid value: "integer": spec.color in body must be of type string: '
                    '"integer"'},
        {"reason": "FieldValueNotSupported", "field": "spec.color",
         "message": 'Unsupported value: 7: supported values: "red", "green", "blue"'},
        {"reason": "FieldValueTypeInvalid", "field": "spec.size",
         "message": 'Invalid value: "string": spec.size in body must be of type integer: '
                    '"string"'},
    ]


def test_valid_object_has_no_errors():
    assert validate(SIZE_COLOR, {"spec": {"size": 3, "color": "red"}}) == []


def test_required():
    assert causes(SIZE_COLOR, {"spec": {}}) == [
        ("FieldValueRequired", "spec.size", "Required value")]


def test_required_at_root():
    assert causes({"type": "object", "required": ["spec"]}, {}) == [
        ("FieldValueRequired", "spec", "Required value")]


def test_error_text_of_required():
    err, = validate(SIZE_COLOR, {"spec": {}})
    assert err.error_text() == "spec.size: Required value"


@pytest.mark.parametrize("schema,value,expected", [
    ({"type": "string"}, 5, ("FieldValueTypeInvalid", "spec.x",
                             'Invalid value: "integer": spec.x in body must be of type string: '
                             '"integer"')),
    ({"type": "integer"}, 1.5, ("FieldValueTypeInvalid", "spec.x",
                                'Invalid value: "number": spec.x in body must be of type '
                                'integer: "number"')),
    ({"type": "boolean"}, "yes", ("FieldValueTypeInvalid", "spec.x",
                                  'Invalid value: "string": spec.x in body must be of type '
                                  'boolean: "string"')),
    ({"type": "array"}, {}, ("FieldValueTypeInvalid", "spec.x",
                             'Invalid value: "object": spec.x in body must be of type array: '
                             '"object"')),
    ({"type": "object"}, [], ("FieldValueTypeInvalid", "spec.x",
                              'Invalid value: "array": spec.x in body must be of type object: '
                              '"array"')),
    ({"type": "number"}, True, ("FieldValueTypeInvalid", "spec.x",
                                'Invalid value: "boolean": spec.x in body must be of type '
                                'number: "boolean"')),
])
def test_type_mismatch(schema, value, expected):
    assert one(schema, value) == [expected]


@pytest.mark.parametrize("schema,value", [
    ({"type": "integer"}, 3),
    ({"type": "integer"}, 3.0),          # an integral float64 is an integer
    ({"type": "number"}, 3),
    ({"type": "number"}, 3.5),
    ({"x-kubernetes-int-or-string": True}, 3),
    ({"x-kubernetes-int-or-string": True}, "3"),
    ({"type": "string", "nullable": True}, None),
    ({}, None),
    ({"type": "integer", "format": "int32"}, 7),   # int32 is stripped, never checked
])
def test_type_accepts(schema, value):
    assert one(schema, value) == []


def test_int_or_string_rejects_other_types():
    assert one({"x-kubernetes-int-or-string": True}, True) == [
        ("FieldValueTypeInvalid", "spec.x",
         'Invalid value: "boolean": spec.x in body must be of type integer,string: "boolean"')]


def test_null_needs_nullable():
    assert one({"type": "string"}, None) == [
        ("FieldValueTypeInvalid", "spec.x",
         'Invalid value: "null": spec.x in body must be of type string: "null"')]


def test_null_with_enum_fails_both():
    assert one({"type": "string", "nullable": True, "enum": ["a"]}, None) == [
        ("FieldValueNotSupported", "spec.x", 'Unsupported value: "null": supported values: "a"')]


def test_enum_values_rendering():
    assert one({"enum": ["a", 1, 1.5, True, None, {"k": "v"}]}, "b") == [
        ("FieldValueNotSupported", "spec.x",
         'Unsupported value: "b": supported values: "a", "1", "1.5", "true", "null", '
         '"{\\"k\\":\\"v\\"}"')]


def test_enum_int_and_float_convert():
    assert one({"type": "number", "enum": [1.0]}, 1) == []
    assert one({"type": "integer", "enum": [1]}, 1.0) == []


def test_pattern():
    assert one({"type": "string", "pattern": "^a+$"}, "ab") == [
        ("FieldValueInvalid", "spec.x", 'Invalid value: "ab": spec.x in body should match '
                                        "'^a+$'")]
    assert one({"type": "string", "pattern": "^a+$"}, "aaa") == []


def test_pattern_dollar_does_not_match_before_newline():
    assert one({"type": "string", "pattern": "^a$"}, "a\n") != []


@pytest.mark.parametrize("pattern,good,bad", [
    # Go's \d, \w and \s are ASCII, Python's are Unicode
    (r"^\d+$", "123", "\u0661\u0662"),
    (r"^\w+$", "a_1", "h\u00e9"),
    # Unicode classes and POSIX classes, which Python's re cannot read
    (r"^\p{Lu}\pL*$", "\u00c9cole", "ecole"),
    (r"^[[:alpha:]]+$", "abc", "ab1"),
    (r"^[[:^digit:]]+$", "abc", "a1"),
    (r"(?i)^abc$", "ABC", "abd"),
    (r"^a\z", "a", "a\n"),
])
def test_pattern_means_what_go_regexp_means(pattern, good, bad):
    schema = {"type": "string", "pattern": pattern}
    assert one(schema, good) == []
    assert one(schema, bad) == [
        ("FieldValueInvalid", "spec.x",
         f"Invalid value: {go_json(bad)}: spec.x in body should match '{pattern}'")]


def test_pattern_posix_class():
    assert one({"type": "string", "pattern": "^[[:digit:]]+$"}, "123") == []
    assert one({"type": "string", "pattern": "^[[:digit:]]+$"}, "12a") != []


def test_max_length():
    assert one({"type": "string", "maxLength": 3}, "abcd") == [
        ("FieldValueTooLong", "spec.x", "Too long: may not be more than 3 bytes")]


def test_max_length_counts_characters():
    assert one({"type": "string", "maxLength": 3}, "äöü") == []


def test_min_length():
    assert one({"type": "string", "minLength": 3}, "ab") == [
        ("FieldValueInvalid", "spec.x",
         'Invalid value: "ab": spec.x in body should be at least 3 chars long')]


def test_string_reports_only_its_first_error():
    assert one({"type": "string", "maxLength": 1, "pattern": "^a$"}, "bb") == [
        ("FieldValueTooLong", "spec.x", "Too long: may not be more than 1 bytes")]


@pytest.mark.parametrize("schema,value,message", [
    ({"type": "integer", "minimum": 1}, 0,
     "Invalid value: 0: spec.x in body should be greater than or equal to 1"),
    ({"type": "integer", "minimum": 1, "exclusiveMinimum": True}, 1,
     "Invalid value: 1: spec.x in body should be greater than 1"),
    ({"type": "integer", "maximum": 10}, 11,
     "Invalid value: 11: spec.x in body should be less than or equal to 10"),
    ({"type": "integer", "maximum": 10, "exclusiveMaximum": True}, 10,
     "Invalid value: 10: spec.x in body should be less than 10"),
    ({"type": "number", "maximum": 1.5}, 2.25,
     "Invalid value: 2.25: spec.x in body should be less than or equal to 1.5"),
    ({"type": "integer", "multipleOf": 3}, 7,
     "Invalid value: 7: spec.x in body should be a multiple of 3"),
    ({"type": "number", "multipleOf": 0.5}, 0.7,
     "Invalid value: 0.7: spec.x in body should be a multiple of 0.5"),
])
def test_numbers(schema, value, message):
    assert one(schema, value) == [("FieldValueInvalid", "spec.x", message)]


def test_number_errors_order_multiple_minimum_maximum():
    got = one({"type": "integer", "multipleOf": 2, "minimum": 10, "maximum": 0}, 5)
    assert [m.split(" in body ")[1] for _, _, m in got] == [
        "should be a multiple of 2", "should be greater than or equal to 10",
        "should be less than or equal to 0"]


def test_int_value_against_fractional_bound_truncates_it():
    # upstream converts the bound to int64 for an integer value
    assert one({"type": "integer", "maximum": 10.5}, 11) == [
        ("FieldValueInvalid", "spec.x",
         "Invalid value: 11: spec.x in body should be less than or equal to 10")]


def test_max_items():
    assert one({"type": "array", "maxItems": 2, "items": {"type": "integer"}}, [1, 2, 3]) == [
        ("FieldValueTooMany", "spec.x", "Too many: 3: must have at most 2 items")]


def test_min_items():
    assert one({"type": "array", "minItems": 2, "items": {"type": "integer"}}, [1]) == [
        ("FieldValueInvalid", "spec.x", "Invalid value: 1: spec.x in body should have at least "
                                        "2 items")]


def test_unique_items():
    assert one({"type": "array", "uniqueItems": True}, [1, 2, 1]) == [
        ("FieldValueInvalid", "spec.x",
         'Invalid value: "": spec.x in body shouldn\'t contain duplicates')]
    assert one({"type": "array", "uniqueItems": True}, [1, 1.0]) == []


def test_items_errors_come_before_array_errors():
    got = one({"type": "array", "maxItems": 1, "items": {"type": "string"}}, [1, "a"])
    assert got == [
        ("FieldValueTypeInvalid", "spec.x[0]",
         'Invalid value: "integer": spec.x[0] in body must be of type string: "integer"'),
        ("FieldValueTooMany", "spec.x", "Too many: 2: must have at most 1 items")]


def test_max_properties():
    assert one({"type": "object", "maxProperties": 1}, {"a": 1, "b": 2}) == [
        ("FieldValueTooMany", "spec.x", "Too many: 2: must have at most 1 items")]


def test_min_properties():
    assert one({"type": "object", "minProperties": 2}, {"a": 1}) == [
        ("FieldValueInvalid", "spec.x",
         "Invalid value: 1: spec.x in body should have at least 2 properties")]


def test_properties_count_violation_comes_before_property_errors():
    schema = {"type": "object", "maxProperties": 1,
              "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}
    assert [f for _, f, _ in one(schema, {"a": 1, "b": 2})] == ["spec.x", "spec.x.a",
                                                                "spec.x.b"]


def test_additional_properties_schema():
    schema = {"type": "object", "additionalProperties": {"type": "integer"}}
    assert one(schema, {"k": "v"}) == [
        ("FieldValueTypeInvalid", "spec.x.k",
         'Invalid value: "string": spec.x.k in body must be of type integer: "string"')]


def test_additional_properties_false():
    schema = {"type": "object", "properties": {"a": {}}, "additionalProperties": False}
    assert one(schema, {"a": 1, "b": 2}) == [
        ("FieldValueInvalid", "spec.x",
         'Invalid value: "b": spec.x.b in body is a forbidden property')]


def test_root_additional_properties_name_keeps_its_dot_in_the_message():
    got = causes({"type": "object", "additionalProperties": {"type": "string"}}, {"k": 1})
    assert got == [("FieldValueTypeInvalid", "k",
                    'Invalid value: "integer": .k in body must be of type string: "integer"')]


@pytest.mark.parametrize("fmt,good,bad", [
    ("date-time", "2024-01-02T03:04:05Z", "2024-01-02"),
    ("date", "2024-02-29", "2023-02-29"),
    ("uuid", "123e4567-e89b-12d3-a456-426614174000", "123"),
    ("email", "a@example.com", "nope"),
    ("hostname", "example.com", "-bad-"),
    ("ipv4", "10.0.0.1", "10.0.0"),
    ("ipv6", "::1", "10.0.0.1"),
    ("cidr", "10.0.0.0/8", "10.0.0.0/33"),
    ("mac", "01:23:45:67:89:ab", "01:23:45"),
    ("uri", "https://example.com/x", "example"),
    ("byte", "aGVsbG8=", "!!"),
    ("duration", "5m", "forever"),
    ("hexcolor", "#fff", "#ffff"),
    ("password", "anything", None),
])
def test_formats(fmt, good, bad):
    assert one({"type": "string", "format": fmt}, good) == []
    if bad is not None:
        assert one({"type": "string", "format": fmt}, bad) == [
            ("FieldValueTypeInvalid", "spec.x",
             f'Invalid value: "{bad}": spec.x in body must be of type {fmt}: "{bad}"')]


def test_unknown_format_is_ignored():
    assert one({"type": "string", "format": "k8s-short-name"}, "ANY thing") == []


def test_format_on_non_string_value_names_the_format():
    assert one({"type": "string", "format": "date-time"}, 5) == [
        ("FieldValueTypeInvalid", "spec.x",
         'Invalid value: "int64": spec.x in body must be of type date-time: "int64"')]


def test_nested_paths_and_sorted_siblings():
    schema = spec(b={"type": "string"}, a={"type": "array", "items": {
        "type": "object", "properties": {"n": {"type": "integer"}}}})
    got = causes(schema, {"spec": {"b": 1, "a": [{"n": "x"}]}})
    assert [f for _, f, _ in got] == ["spec.a[0].n", "spec.b"]


def test_path_prefix():
    # The prefix names the field; kube-openapi's message names the value's own path, "".
    got = validate({"type": "integer"}, "x", FieldPath("spec", "replicas"))
    assert [(e.field, e.error_body()) for e in got] == [
        ("spec.replicas", 'Invalid value: "string":  in body must be of type integer: "string"')]
    got = validate({"type": "object", "properties": {"n": {"type": "integer"}}}, {"n": "x"},
                   FieldPath("spec"))
    assert [e.field for e in got] == ["spec.n"]


def test_root_type_error_has_nil_field():
    got = causes({"type": "object"}, "x")
    assert got == [("FieldValueTypeInvalid", "<nil>",
                    'Invalid value: "string":  in body must be of type object: "string"')]


def test_any_of_reports_the_best_branch():
    schema = {"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 5}]}
    got = one(schema, 3)
    assert got == [
        ("FieldValueInvalid", "<nil>",
         'Invalid value: "": "spec.x" must validate at least one schema (anyOf)'),
        ("FieldValueInvalid", "spec.x",
         "Invalid value: 3: spec.x in body should be greater than or equal to 5")]
    assert one(schema, "s") == []


def test_one_of():
    schema = {"oneOf": [{"type": "integer"}, {"type": "number"}]}
    assert one(schema, 3) == [
        ("FieldValueInvalid", "<nil>",
         'Invalid value: "": "spec.x" must validate one and only one schema (oneOf). '
         'Found 2 valid alternatives')]
    assert one(schema, 3.5) == []


def test_all_of_and_not():
    schema = {"allOf": [{"type": "integer"}, {"minimum": 2}]}
    assert one(schema, 1) == [
        ("FieldValueInvalid", "spec.x",
         "Invalid value: 1: spec.x in body should be greater than or equal to 2"),
        ("FieldValueInvalid", "<nil>",
         'Invalid value: "": "spec.x" must validate all the schemas (allOf)')]
    assert one({"not": {"type": "integer"}}, 1) == [
        ("FieldValueInvalid", "<nil>",
         'Invalid value: "": "spec.x" must not validate the schema (not)')]


def test_repeated_messages_are_dropped():
    schema = {"type": "string", "allOf": [{"type": "string"}]}
    got = one(schema, 1)
    assert got[0][2].endswith('must be of type string: "integer"')
    assert sum(1 for c in got if c[2].endswith('must be of type string: "integer"')) == 1


# -- embedded resources --------------------------------------------------------------------

EMBEDDED = spec(template={"type": "object", "x-kubernetes-embedded-resource": True,
                          "x-kubernetes-preserve-unknown-fields": True})


def test_embedded_resource_requires_type_meta():
    assert causes(EMBEDDED, {"spec": {"template": {}}}) == [
        ("FieldValueRequired", "spec.template.apiVersion", "Required value"),
        ("FieldValueRequired", "spec.template.kind", "Required value")]


def test_embedded_resource_type_meta_values():
    got = causes(EMBEDDED, {"spec": {"template": {"apiVersion": "a/b/c", "kind": "Bad_Kind"}}})
    assert got[0] == ("FieldValueInvalid", "spec.template.apiVersion",
                      'Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c')
    assert got[1][1] == "spec.template.kind"
    assert got[1][2].startswith('Invalid value: "Bad_Kind": may have mixed case, but should '
                                'otherwise match: ')


def test_embedded_resource_metadata():
    obj = {"spec": {"template": {"apiVersion": "v1", "kind": "Pod",
                                 "metadata": {"name": "a/b", "labels": {"x": "-"}}}}}
    got = causes(EMBEDDED, obj)
    assert [f for _, f, _ in got] == ["spec.template.metadata.name",
                                      "spec.template.metadata.labels"]
    assert validate(EMBEDDED, {"spec": {"template": {"apiVersion": "v1", "kind": "Pod",
                                                     "metadata": {}}}}) == []


def test_embedded_resource_metadata_of_wrong_type():
    got = causes(EMBEDDED, {"spec": {"template": {"apiVersion": "v1", "kind": "Pod",
                                                  "metadata": "x"}}})
    assert got == [("FieldValueInvalid", "spec.template.metadata",
                    'Invalid value: "x": json: cannot unmarshal string into Go value of type '
                    'v1.ObjectMeta')]


# -- list types ----------------------------------------------------------------------------

def test_list_set_duplicates():
    schema = spec(x={"type": "array", "x-kubernetes-list-type": "set",
                     "items": {"type": "string"}})
    obj = {"spec": {"x": ["a", "b", "a", "a", "b"]}}
    assert causes(schema, obj) == [
        ("FieldValueDuplicate", "spec.x[2]", 'Duplicate value: "a"'),
        ("FieldValueDuplicate", "spec.x[4]", 'Duplicate value: "b"')]
    assert validate_list_types(schema, obj) == validate(schema, obj)


def test_list_set_of_objects():
    schema = spec(x={"type": "array", "x-kubernetes-list-type": "set",
                     "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}})
    assert causes(schema, {"spec": {"x": [{"a": 1}, {"a": 1}]}}) == [
        ("FieldValueDuplicate", "spec.x[1]",
         'Duplicate value: map[string]interface {}{"a":1}')]


def test_list_map_duplicates_single_key():
    schema = spec(x={"type": "array", "x-kubernetes-list-type": "map",
                     "x-kubernetes-list-map-keys": ["name"],
                     "items": {"type": "object", "properties": {"name": {"type": "string"},
                                                                 "v": {"type": "integer"}}}})
    obj = {"spec": {"x": [{"name": "a", "v": 1}, {"name": "a", "v": 2}, {"v": 3}, {"v": 4}]}}
    assert causes(schema, obj) == [
        ("FieldValueDuplicate", "spec.x[1]",
         'Duplicate value: map[string]interface {}{"name":"a"}'),
        ("FieldValueDuplicate", "spec.x[3]", "Duplicate value: map[string]interface {}{}")]


def test_list_map_duplicates_two_keys():
    schema = spec(x={"type": "array", "x-kubernetes-list-type": "map",
                     "x-kubernetes-list-map-keys": ["port", "protocol"],
                     "items": {"type": "object", "properties": {
                         "port": {"type": "integer"}, "protocol": {"type": "string"}}}})
    obj = {"spec": {"x": [{"port": 80, "protocol": "TCP"}, {"port": 80, "protocol": "UDP"},
                          {"port": 80, "protocol": "TCP"}]}}
    assert causes(schema, obj) == [
        ("FieldValueDuplicate", "spec.x[2]",
         'Duplicate value: map[string]interface {}{"port":80, "protocol":"TCP"}')]


def test_list_map_items_must_be_objects():
    schema = spec(x={"type": "array", "x-kubernetes-list-type": "map",
                     "x-kubernetes-list-map-keys": ["name"],
                     "x-kubernetes-preserve-unknown-fields": True})
    assert validate_list_types(schema, {"spec": {"x": [{"name": "a"}, 5]}})[0].error_text() == (
        "spec.x[1]: Invalid value: 5: must be an object for an array of list-type map")


def test_go_json():
    assert go_json([1.0, 1e21, 1e-7, 0.5, 1e20, "<&>", {"b": 1, "a": None}]) == (
        '[1,1e+21,1e-7,0.5,100000000000000000000,"\\u003c\\u0026\\u003e",{"a":null,"b":1}]')


def test_twenty_properties_validate_each_value():
    """Every property's constraints apply, each on its own path (speed: ``tox -e bench``)."""
    props = {f"p{i}": {"type": "string", "maxLength": 50, "pattern": "^[a-z]+$"}
             for i in range(10)}
    props.update({f"n{i}": {"type": "integer", "minimum": 0, "maximum": 100} for i in range(10)})
    schema = {"type": "object", "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {"type": "object", "required": ["p0"], "properties": props}}}
    obj = {"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "a"},
           "spec": {**{f"p{i}": "abc" for i in range(10)}, **{f"n{i}": i for i in range(10)}}}
    assert validate(schema, obj) == []
    assert validate(schema, obj) == []  # the compiled schema is reused
    bad = {**obj, "spec": {**obj["spec"], "p9": "ABC", "n9": 101}}
    assert sorted(e.field for e in validate(schema, bad)) == ["spec.n9", "spec.p9"]


def test_embedded_resource_metadata_field_of_wrong_type():
    got = causes(EMBEDDED, {"spec": {"template": {"apiVersion": "v1", "kind": "Pod",
                                                  "metadata": {"name": 5}}}})
    assert got == [("FieldValueInvalid", "spec.template.metadata",
                    "Invalid value: map[string]interface {}{\"name\":5}: json: cannot unmarshal "
                    "number into Go struct field ObjectMeta.name of type string")]


def test_embedded_resources_in_lists_and_maps():
    schema = spec(l={"type": "array", "items": {
        "type": "object", "x-kubernetes-embedded-resource": True,
        "x-kubernetes-preserve-unknown-fields": True}},
        m={"type": "object", "additionalProperties": {
            "type": "object", "x-kubernetes-embedded-resource": True,
            "x-kubernetes-preserve-unknown-fields": True}})
    got = causes(schema, {"spec": {"l": [{"kind": "Pod"}], "m": {"k": {"apiVersion": "v1"}}}})
    assert [(r, f) for r, f, _ in got] == [("FieldValueRequired", "spec.l[0].apiVersion"),
                                           ("FieldValueRequired", "spec.m[k].kind")]


def test_list_types_below_additional_properties():
    schema = spec(m={"type": "object", "additionalProperties": {
        "type": "array", "x-kubernetes-list-type": "set", "items": {"type": "integer"}}})
    assert causes(schema, {"spec": {"m": {"a": [1, 1]}}}) == [
        ("FieldValueDuplicate", "spec.m[a][1]", "Duplicate value: 1")]


def test_list_set_tells_int_from_float_and_null():
    schema = spec(x={"type": "array", "x-kubernetes-list-type": "set",
                     "items": {"type": "number", "nullable": True}})
    assert validate_list_types(schema, {"spec": {"x": [1, 1.0, None]}}) == []
    assert [e.error_text() for e in validate_list_types(schema, {"spec": {"x": [None, None]}})] \
        == ['spec.x[1]: Duplicate value: "null"']


def test_hostname_follows_strfmt_pattern():
    assert one({"type": "string", "format": "hostname"}, "my-host.example.com") == []
    assert one({"type": "string", "format": "hostname"}, "example.c0m") != []


def test_enum_of_objects_compares_deeply():
    schema = {"type": "object", "enum": [{"a": [1, 2]}]}
    assert one(schema, {"a": [1, 2]}) == []
    assert one(schema, {"a": [1, 2.5]}) == [
        ("FieldValueNotSupported", "spec.x",
         'Unsupported value: map[string]interface {}{"a":[]interface {}{1, 2.5}}: '
         'supported values: "{\\"a\\":[1,2]}"')]


def test_to_cause_omits_empty_fields():
    err, = validate({"type": "object", "required": ["a"]}, {})
    assert err.to_cause() == {"reason": "FieldValueRequired", "message": "Required value",
                              "field": "a"}
