"""Tests for kapiserver.fieldmanager.typed: comparing two versions of an object."""

import pytest

from kapiserver.fieldmanager import CompareError, ListTypes, PathElement, Set, compare, make_path
from kapiserver.fieldmanager.typed import go_equal

V = PathElement.value


def paths(*dotted):
    return Set(make_path(*p.split(".")) for p in dotted)


def test_scalars_and_maps():
    old = {"data": {"a": "1", "b": "2"}, "x": 1}
    new = {"data": {"a": "9", "c": "3"}, "y": {"z": True}}
    result = compare(old, new)
    assert result.added == paths("data.c", "y", "y.z")
    assert result.modified == paths("data.a")
    assert result.removed == paths("data.b", "x")


def test_container_appearing_and_disappearing_is_itself_a_change():
    result = compare({"a": {"b": 1}}, {"c": {"d": {"e": 1}}})
    assert result.added == paths("c", "c.d", "c.d.e")
    assert result.removed == paths("a", "a.b")
    assert compare({"a": 1}, {"a": 1}).is_same()


def test_empty_containers_are_leaves():
    # both sides empty or absent: the container is one leaf (upstream keeps null/{} apart)
    result = compare({}, {"a": {}, "b": []}, normalize=False)
    assert result.added == paths("a", "b")
    # with Go's omitempty, empty maps and lists and nulls vanish before comparing
    types = ListTypes(omit_empty=True)
    assert compare({}, {"a": {}, "b": [], "c": None, "d": {"e": {}}}, types).is_same()


def test_atomic_lists_and_maps_are_one_leaf():
    types = ListTypes({"l": "atomic"}, atomic=("m",))
    result = compare({"l": [1, 2], "m": {"a": 1}}, {"l": [2, 1], "m": {"a": 1, "b": 2}}, types)
    assert result.modified == paths("l", "m")
    assert result.added.empty() and result.removed.empty()
    # lists default to atomic
    assert compare({"x": [1]}, {"x": [1, 2]}).modified == paths("x")


def test_sets_ignore_order_and_track_items():
    types = ListTypes({"f": "set"})
    assert compare({"f": ["a", "b"]}, {"f": ["b", "a"]}, types).is_same()
    result = compare({"f": ["a", "b"]}, {"f": ["b", "c"]}, types)
    assert result.added == Set([make_path("f", V("c"))])
    assert result.removed == Set([make_path("f", V("a"))])


def test_keyed_lists_walk_items_by_key():
    types = ListTypes({"ports": ("map", ("port", "protocol"), {"protocol": "TCP"})},
                      atomic=("refs.*",))
    old = {"ports": [{"port": 80, "name": "a"}, {"port": 53, "protocol": "UDP"}]}
    new = {"ports": [{"port": 53, "protocol": "UDP"}, {"port": 80, "protocol": "TCP",
                                                       "name": "b"}]}
    result = compare(old, new, types)
    tcp = {"port": 80, "protocol": "TCP"}
    assert result.modified == Set([make_path("ports", tcp, "name")])
    assert result.added == Set([make_path("ports", tcp, "protocol")])
    assert result.removed.empty()


def test_repeated_items_count_once():
    types = ListTypes({"f": "set"})
    assert compare({"f": ["a"]}, {"f": ["a", "a"]}, types).is_same()


@pytest.mark.parametrize("lists, value", [
    ({"l": ("map", ("name",))}, [{"other": 1}]),
    ({"l": ("map", ("name",))}, ["scalar"]),
    ({"l": ("map", ("name",))}, [None]),
    ({"l": "set"}, [{"a": 1}]),
    ({"l": "set"}, [[1]]),
    ({"l": "set"}, [None]),
])
def test_items_that_cannot_be_named_are_errors(lists, value):
    with pytest.raises(CompareError):
        compare(None, {"l": value}, ListTypes(lists))


def test_numbers_compare_as_go_values_do():
    assert go_equal(1, 1.0) and not go_equal(1, True) and not go_equal(0, False)
    assert not go_equal("1", 1) and go_equal({"a": [1, None]}, {"a": [1.0, None]})
    assert compare({"a": 1}, {"a": 1.0}).is_same()
    assert compare({"a": 1}, {"a": True}).modified == paths("a")


def test_exclude_removes_paths_and_everything_beneath():
    result = compare({"status": {"a": 1}}, {"status": {"a": 2, "b": 1}, "spec": {"c": 1}})
    kept = result.exclude(paths("status"))
    assert kept.added == paths("spec", "spec.c") and kept.modified.empty()
