"""valid_field_path: upstream's ValidFieldPath cases, error for error."""

import pytest

from kapiserver_plugins.apiextensions.schema.fieldpath import valid_field_path

SCHEMA = {"type": "object", "properties": {
    "a": {"type": "object", "properties": {"b.c": {"type": "object", "properties": {
        "c\a": {"type": "number"}}}}},
    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
    "list": {"type": "array", "items": {"type": "object", "properties": {
        "a": {"type": "number"}}}},
    "empty": {"type": "object", "properties": {}}}}


@pytest.mark.parametrize("path, text", [
    (".a", "a"), (".a['b.c']", "a.b.c"), (".a['b.c']['c\\a']", "a.b.c.c\a"),
    (".labels.app", "labels[app]"), (".labels['x.y']", "labels[x.y]")])
def test_valid_paths(path, text):
    found, schema, error = valid_field_path(path, SCHEMA)
    assert error == "" and str(found) == text and schema is not None


@pytest.mark.parametrize("path, error", [
    (".a.c", "does not refer to a valid field"),
    (".list[0]", "expected single quoted string but got 0"),
    ("   ", "expected [ or . but got:    "),
    (".", "unexpected end of JSON path"),
    ("..", "does not refer to a valid field"),
    (".a['b.c'", "unexpected end of JSON path"),
    (".a['b.c'}", "expected ] but got }"),
    (".a['\\q']", "invalid string literal: invalid escape char \\q"),
    (".empty.x", "does not refer to a valid field"),
    (".list.a", "does not refer to a valid field")])
def test_invalid_paths(path, error):
    assert valid_field_path(path, SCHEMA) == (None, None, error)


def test_array_notation_can_be_refused():
    assert valid_field_path(".a['b.c']", SCHEMA, allow_array_notation=False) == (
        None, None, "array notation is not allowed")
