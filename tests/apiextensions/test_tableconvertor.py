"""Tests of custom-resource Tables (upstream's tableconvertor) against the captured
kube-apiserver Table of a custom resource (``cr-table.json``)."""

import time

import pytest

from kapiserver_plugins.apiextensions.tableconvertor import (TableConvertor,
                                                             cell_for_json_value, human_date,
                                                             parse_rfc3339)
from tests.support.reference import transcript


def rfc3339(seconds_ago: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - seconds_ago))


def captured():
    """The captured CRD's printer columns and the Table kube-apiserver answered."""
    crd = transcript("crd-create.json")["request"]["body"]
    table = transcript("cr-table.json")["response"]["body"]
    return crd["spec"]["versions"][0]["additionalPrinterColumns"], table


def test_columns_match_the_captured_table():
    columns, table = captured()
    assert TableConvertor(columns).columns() == table["columnDefinitions"]


def test_cells_match_the_captured_table():
    columns, table = captured()
    row = table["rows"][0]
    meta = row["object"]["metadata"]
    obj = {"apiVersion": "capture.example.com/v1", "kind": "Gadget",
           "metadata": dict(meta, creationTimestamp=rfc3339(0)),
           "spec": {"size": 3, "color": "red"}}
    assert TableConvertor(columns).cells(obj) == row["cells"]


def test_a_version_without_columns_gets_upstreams_age_column():
    convertor = TableConvertor([])
    names = [(c["name"], c["type"]) for c in convertor.columns()]
    assert names == [("Name", "string"), ("Age", "date")]
    assert convertor.columns()[1]["description"].startswith("CreationTimestamp is a timestamp")
    obj = {"metadata": {"name": "a", "creationTimestamp": rfc3339(300)}}
    assert convertor.cells(obj) == ["a", "5m"]


def test_description_format_and_priority_are_kept():
    convertor = TableConvertor([
        {"name": "Wide", "type": "string", "jsonPath": ".spec.w", "priority": 1,
         "format": "byte", "description": "Mine."}])
    assert convertor.columns()[1] == {"name": "Wide", "type": "string", "format": "byte",
                                      "description": "Mine.", "priority": 1}


def test_cells_are_typed_as_the_column_says():
    convertor = TableConvertor([
        {"name": "I", "type": "integer", "jsonPath": ".spec.i"},
        {"name": "N", "type": "number", "jsonPath": ".spec.n"},
        {"name": "B", "type": "boolean", "jsonPath": ".spec.b"},
        {"name": "S", "type": "string", "jsonPath": ".spec.s"},
        {"name": "Ready", "type": "string",
         "jsonPath": '.status.conditions[?(@.type=="Ready")].status'},
        {"name": "Missing", "type": "string", "jsonPath": ".spec.nope"}])
    obj = {"metadata": {"name": "x"},
           "spec": {"i": 2.9, "n": 3, "b": True, "s": {"k": [1, "v"]}},
           "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    assert convertor.cells(obj) == ["x", 2, 3, True, '{"k":[1,"v"]}', "True", None]
    # Values of the wrong type are empty cells; a string column prints any value.
    obj["spec"] = {"i": "2", "n": True, "b": "true", "s": 1.5}
    assert convertor.cells(obj)[1:5] == [None, None, None, "1.5"]
    obj["spec"] = {"s": None}
    assert convertor.cells(obj)[4] == "<no value>"


@pytest.mark.parametrize("kind,value,cell", [
    ("integer", 7, 7), ("integer", -2.5, -2), ("integer", False, None),
    ("number", 2.5, 2.5), ("number", 4.0, 4), ("number", "4", None),
    ("boolean", False, False), ("boolean", 0, None),
    ("string", "s", "s"), ("string", 1, None),
    ("date", 5, None), ("date", "yesterday", "<invalid>"), ("date", "", "<unknown>"),
    ("date", "0001-01-01T00:00:00Z", "<unknown>"),
    ("integer", None, None), ("unknown", 1, None),
])
def test_cell_for_json_value(kind, value, cell):
    assert cell_for_json_value(kind, value) == cell


def test_dates_are_ages():
    now = parse_rfc3339("2024-03-01T12:00:00Z")
    assert human_date("2024-03-01T11:00:00Z", now) == "60m"
    assert human_date("2024-03-01T13:00:00+02:00", now) == "60m"
    assert human_date("2024-02-27T11:59:59.5Z", now) == "3d"  # across February 29
    assert human_date("2024-03-01T12:00:30Z", now) == "<invalid>"  # the future: negative
    assert human_date("2023-02-29T00:00:00Z", now) == "<invalid>"
    assert human_date("2024-03-01 12:00:00Z", now) == "<invalid>"
    assert human_date("1000-01-01T00:00:00Z", now) == "292y"  # time.Since saturates


def test_a_bad_path_keeps_the_columns_before_it():
    convertor = TableConvertor([{"name": "A", "type": "string", "jsonPath": ".a"},
                                {"name": "B", "type": "string", "jsonPath": ".b["},
                                {"name": "C", "type": "string", "jsonPath": ".c"}])
    assert [c["name"] for c in convertor.columns()] == ["Name", "A"]
    assert convertor.cells({"metadata": {"name": "n"}, "a": "x", "c": "y"}) == ["n", "x"]
