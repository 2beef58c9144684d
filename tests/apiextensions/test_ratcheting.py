"""CRD validation ratcheting (``CRDValidationRatcheting``): updates of custom resources keep
the errors of what they change and forgive the rest, as kube-apiserver 1.32 does."""

import copy

import pytest

from kapiserver import warning
from kapiserver_plugins.apiextensions.conversion import converter_for
from kapiserver_plugins.apiextensions.customresource import (CustomResourceStatusStrategy,
                                                             CustomResourceStrategy,
                                                             ServedVersion)
from kapiserver_plugins.apiextensions.schema.correlation import Correlated, make_map_list
from kapiserver_plugins.apiextensions.schema.validation import validate_openapi_update

STRING, INT = {"type": "string"}, {"type": "integer"}
SHORT = {"type": "string", "maxLength": 5}


def crd(spec: dict, status: dict | None = None) -> dict:
    properties = {"spec": spec}
    if status is not None:
        properties["status"] = status
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "things.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "things", "kind": "Thing"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "subresources": {"status": {}},
                                   "schema": {"openAPIV3Schema": {
                                       "type": "object", "properties": properties}}}]}}


def strategies(spec: dict, status: dict | None = None):
    """The main and status strategies of a CRD whose ``spec`` has schema ``spec``."""
    definition = crd(spec, status)
    served = ServedVersion(definition, definition["spec"]["versions"][0])
    converter = converter_for(definition, None, "")
    return (CustomResourceStrategy(served, converter, "example.com/v1"),
            CustomResourceStatusStrategy(served, converter, "example.com/v1"))


def thing(spec: dict, status: dict | None = None, labels: dict | None = None) -> dict:
    obj = {"apiVersion": "example.com/v1", "kind": "Thing",
           "metadata": {"name": "a", "namespace": "ns", "uid": "u1", "resourceVersion": "7",
                        "generation": 1, "creationTimestamp": "2024-05-01T00:00:00Z"},
           "spec": spec}
    if labels:
        obj["metadata"]["labels"] = labels
    if status is not None:
        obj["status"] = status
    return obj


def update(strategy, new: dict, old: dict) -> tuple[list[str], list[str]]:
    """The errors and the warnings of updating ``old`` to ``new``."""
    with warning.recording([]) as warnings:
        errors = [str(e) for e in strategy.validate_update(new, old)]
    return errors, warnings


def relabelled(old: dict) -> dict:
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"team": "a"}
    return new


def with_spec(old: dict, **changes) -> dict:
    new = copy.deepcopy(old)
    new["spec"].update(changes)
    return new


# -- the schema validator -----------------------------------------------------------------------

def test_create_is_not_ratcheted():
    main, _ = strategies({"type": "object", "properties": {"name": SHORT}})
    assert [str(e) for e in main.validate(thing({"name": "too-long"}))] == [
        "spec.name: Too long: may not be more than 5 bytes"]


def test_an_unchanged_invalid_field_is_accepted_a_changed_one_refused():
    main, _ = strategies({"type": "object", "properties": {"name": SHORT, "size": INT}})
    old = thing({"name": "too-long", "size": 1})
    assert update(main, relabelled(old), old) == ([], [])
    assert update(main, with_spec(old, size=2), old) == ([], [])
    assert update(main, with_spec(old, name="still-too-long"), old)[0] == [
        "spec.name: Too long: may not be more than 5 bytes"]
    # Valid again, then invalid in a new way: the new error counts.
    assert update(main, with_spec(old, name="ok"), old) == ([], [])


@pytest.mark.parametrize("schema,value,changed,message", [
    ({"type": "string", "enum": ["a", "b"]}, "c", "d",
     'spec.x: Unsupported value: "d": supported values: "a", "b"'),
    ({"type": "string", "pattern": "^v"}, "x", "y",
     "spec.x: Invalid value: \"y\": spec.x in body should match '^v'"),
    ({"type": "integer", "maximum": 3}, 5, 6,
     "spec.x: Invalid value: 6: spec.x in body should be less than or equal to 3"),
    ({"type": "string", "format": "date-time"}, "today", "tomorrow",
     'spec.x: Invalid value: "tomorrow": spec.x in body must be of type date-time: '
     '"tomorrow"'),
    ({"type": "array", "maxItems": 1, "items": STRING}, ["a", "b"], ["a", "c"],
     "spec.x: Too many: 2: must have at most 1 items"),
])
def test_every_kube_openapi_check_ratchets(schema, value, changed, message):
    main, _ = strategies({"type": "object", "properties": {"x": schema, "y": INT}})
    old = thing({"x": value, "y": 1})
    assert update(main, with_spec(old, y=2), old)[0] == []
    errors = update(main, with_spec(old, x=changed), old)[0]
    assert errors[0] == message


def test_required_ratchets_with_the_object_that_lacks_the_field():
    # kube-openapi raises "required" at the object: it is forgiven while that object is
    # unchanged, not once anything else in it changes.
    main, _ = strategies({"type": "object", "required": ["owner"],
                          "properties": {"owner": STRING, "size": INT}})
    old = thing({"size": 1})
    assert update(main, relabelled(old), old) == ([], [])
    assert update(main, with_spec(old, size=2), old)[0] == ["spec.owner: Required value"]


def test_correlation_through_additional_properties_keys():
    main, _ = strategies({"type": "object", "properties": {
        "m": {"type": "object", "additionalProperties": SHORT}}})
    old = thing({"m": {"bad": "too-long", "good": "ok"}})
    assert update(main, relabelled(old), old) == ([], [])
    # Another key changed, one added: the unchanged invalid value still correlates.
    assert update(main, with_spec(old, m={"bad": "too-long", "good": "fine", "new": "x"}),
                  old) == ([], [])
    assert update(main, with_spec(old, m={"bad": "too-long!", "good": "ok"}), old)[0] == [
        "spec.m.bad: Too long: may not be more than 5 bytes"]
    # A new key with an invalid value has no old value to be forgiven by.
    assert update(main, with_spec(old, m={"bad": "too-long", "other": "too-long"}),
                  old)[0] == ["spec.m.other: Too long: may not be more than 5 bytes"]


def test_correlation_through_map_lists_by_their_keys():
    main, _ = strategies({"type": "object", "properties": {"ports": {
        "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
        "items": {"type": "object", "required": ["name"],
                  "properties": {"name": STRING, "protocol": SHORT}}}}})
    old = thing({"ports": [{"name": "http", "protocol": "TCP-LONG"}, {"name": "dns"}]})
    # Reordered, another item changed, an item added: the invalid item is found by its key.
    new = with_spec(old, ports=[{"name": "dns", "protocol": "UDP"},
                                {"name": "http", "protocol": "TCP-LONG"}, {"name": "ssh"}])
    assert update(main, new, old) == ([], [])
    new = with_spec(old, ports=[{"name": "http", "protocol": "TCP-LONGER"}, {"name": "dns"}])
    assert update(main, new, old)[0] == [
        "spec.ports[0].protocol: Too long: may not be more than 5 bytes"]
    # Renamed: a different item, nothing to correlate with.
    new = with_spec(old, ports=[{"name": "https", "protocol": "TCP-LONG"}, {"name": "dns"}])
    assert update(main, new, old)[0] == [
        "spec.ports[0].protocol: Too long: may not be more than 5 bytes"]


@pytest.mark.parametrize("list_type", ["set", "atomic", None])
def test_no_correlation_through_set_or_atomic_lists(list_type):
    items = {"type": "array", "items": SHORT}
    if list_type:
        items["x-kubernetes-list-type"] = list_type
    main, _ = strategies({"type": "object", "properties": {"tags": items, "size": INT}})
    old = thing({"tags": ["too-long", "a"], "size": 1})
    # The list unchanged as a whole: its items' errors are forgiven with it.
    assert update(main, with_spec(old, size=2), old) == ([], [])
    # Any item changed: items are not correlated by index, every error of the list counts.
    assert update(main, with_spec(old, tags=["too-long", "b"]), old)[0] == [
        "spec.tags[0]: Too long: may not be more than 5 bytes"]


def test_any_of_errors_belong_to_the_node_declaring_it():
    # anyOf branches validate without correlation (kube-openapi gives them no ratcheting
    # options): their errors, wherever they point, go with the node that has the anyOf.
    main, _ = strategies({"type": "object", "properties": {
        "s": {"type": "object", "properties": {"a": STRING, "b": STRING},
              "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}, "size": INT}})
    old = thing({"s": {}, "size": 1})
    assert update(main, with_spec(old, size=2), old) == ([], [])
    assert update(main, with_spec(old, s={"c": "x"}), old)[0] == [
        '<nil>: Invalid value: "": "spec.s" must validate at least one schema (anyOf)',
        "spec.s.a: Required value"]


def test_kind_and_api_version_never_correlate():
    # Both objects are converted to one version, so kind and apiVersion at the root never
    # correlate: their errors are the root's, forgiven only when nothing at all changed.
    schema = {"type": "object", "properties": {"kind": {"type": "string", "maxLength": 3},
                                               "spec": STRING}}
    old = {"kind": "Thing", "spec": "a"}
    assert [str(e) for e in validate_openapi_update(schema, {"kind": "Thing", "spec": "b"},
                                                    old)] == [
        "kind: Too long: may not be more than 3 bytes"]
    assert validate_openapi_update(schema, dict(old), old) == []
    # Below the root a property called kind is a property like any other.
    assert [str(e) for e in validate_openapi_update(
        {"type": "object", "properties": {"spec": {
            "type": "object", "properties": {"kind": {"type": "string", "maxLength": 3},
                                             "x": INT}}}},
        {"spec": {"kind": "Thing", "x": 2}}, {"spec": {"kind": "Thing", "x": 1}})] == []


def test_embedded_object_meta_is_not_ratcheted():
    # Upstream checks embedded resources on update as on create.
    main, _ = strategies({"type": "object", "properties": {
        "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                     "x-kubernetes-preserve-unknown-fields": True}, "size": INT}})
    old = thing({"template": {"apiVersion": "v1", "kind": "Pod",
                              "metadata": {"name": "p", "labels": {"app": "a b"}}}, "size": 1})
    errors = update(main, with_spec(old, size=2), old)[0]
    assert len(errors) == 1
    assert errors[0].startswith('spec.template.metadata.labels: Invalid value: "a b": ')


def test_list_types_ratchet_as_a_whole():
    main, _ = strategies({"type": "object", "properties": {
        "tags": {"type": "array", "items": STRING, "x-kubernetes-list-type": "set"},
        "size": INT}})
    old = thing({"tags": ["a", "a"], "size": 1})
    # The old object broke the set already: nothing the update does to sets is refused.
    assert update(main, with_spec(old, tags=["b", "b"]), old) == ([], [])
    fine = thing({"tags": ["a"], "size": 1})
    assert update(main, with_spec(fine, tags=["b", "b"]), fine)[0] == [
        'spec.tags[1]: Duplicate value: "b"']


# -- the CEL rules ------------------------------------------------------------------------------

NAME_RULE = {"type": "string", "x-kubernetes-validations": [
    {"rule": "self.startsWith('v')", "message": "must start with v"}]}
NAME_WARNING = 'spec.name: Invalid value: "string": must start with v'


def test_a_failing_rule_on_an_unchanged_node_is_a_warning():
    # Upstream runs every rule; a failure where nothing changed is a Warning header.
    main, _ = strategies({"type": "object", "properties": {"name": NAME_RULE, "size": INT}})
    old = thing({"name": "x", "size": 1})
    assert update(main, relabelled(old), old) == ([], [NAME_WARNING])
    assert update(main, with_spec(old, size=2), old) == ([], [NAME_WARNING])
    assert update(main, with_spec(old, name="y"), old) == ([NAME_WARNING], [])
    assert update(main, with_spec(old, name="v1"), old) == ([], [])


def test_a_rule_on_a_changed_node_is_an_error():
    main, _ = strategies({"type": "object", "properties": {"size": INT, "color": STRING},
                          "x-kubernetes-validations": [{"rule": "self.size <= 10"}]})
    old = thing({"size": 20, "color": "red"})
    assert update(main, relabelled(old), old) == (
        [], ['spec: Invalid value: "object": failed rule: self.size <= 10'])
    assert update(main, with_spec(old, color="blue"), old) == (
        ['spec: Invalid value: "object": failed rule: self.size <= 10'], [])


def test_rules_below_uncorrelated_nodes_ratchet_with_the_nearest_correlated_one():
    main, _ = strategies({"type": "object", "properties": {
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {
            "type": "string", "maxLength": 10,
            "x-kubernetes-validations": [{"rule": "self != 'bad'"}]}},
        "size": INT}})
    old = thing({"tags": ["bad", "ok"], "size": 1})
    warned = 'spec.tags[0]: Invalid value: "string": failed rule: self != \'bad\''
    assert update(main, with_spec(old, size=2), old) == ([], [warned])
    assert update(main, with_spec(old, tags=["bad", "fine"]), old) == ([warned], [])


def test_transition_rules_are_never_ratcheted():
    main, _ = strategies({"type": "object", "properties": {
        "size": {"type": "integer", "x-kubernetes-validations": [
            {"rule": "self > oldSelf", "message": "must grow"}]},
        "m": {"type": "object", "additionalProperties": {
            "type": "integer", "x-kubernetes-validations": [{"rule": "self >= oldSelf"}]}}}})
    old = thing({"size": 1, "m": {"a": 1}})
    assert update(main, relabelled(old), old) == (
        ['spec.size: Invalid value: "integer": must grow'], [])
    assert update(main, with_spec(old, size=2), old) == ([], [])
    # No old value to compare with (a new key): the transition rule does not run.
    assert update(main, with_spec(old, size=2, m={"a": 1, "b": 0}), old) == ([], [])
    assert update(main, with_spec(old, size=2, m={"a": 0}), old)[0] == [
        'spec.m[a]: Invalid value: "integer": failed rule: self >= oldSelf']


def test_message_expression_of_a_ratcheted_rule_is_in_the_warning():
    main, _ = strategies({"type": "object", "properties": {"name": {
        "type": "string", "maxLength": 20, "x-kubernetes-validations": [
            {"rule": "self.startsWith('v')", "messageExpression": "'bad name ' + self"}]},
        "size": INT}})
    old = thing({"name": "x", "size": 1})
    assert update(main, with_spec(old, size=2), old) == (
        [], ['spec.name: Invalid value: "string": bad name x'])


def test_rules_run_on_create_without_ratcheting():
    main, _ = strategies({"type": "object", "properties": {"name": NAME_RULE}})
    with warning.recording([]) as warnings:
        assert [str(e) for e in main.validate(thing({"name": "x"}))] == [NAME_WARNING]
    assert warnings == []


# -- the status subresource ---------------------------------------------------------------------

def test_status_update_of_an_object_whose_spec_became_invalid():
    main, status = strategies(
        {"type": "object", "required": ["owner"],
         "properties": {"name": {**NAME_RULE, "maxLength": 5}, "owner": STRING}},
        {"type": "object", "properties": {"phase": {"type": "string", "pattern": "^[A-Z]"}}})
    old = thing({"name": "too-long"}, {"phase": "Pending"})
    # Only the status is checked against the schema: the spec's errors are not even looked
    # at; its CEL rules run on the whole object, ratcheted.
    new = copy.deepcopy(old)
    new["status"]["phase"] = "Running"
    assert update(status, new, old) == ([], [NAME_WARNING])
    new["status"]["phase"] = "running"
    assert update(status, new, old) == (
        ["status.phase: Invalid value: \"running\": phase in body should match '^[A-Z]'"],
        [NAME_WARNING])
    # The main resource keeps the old status: a spec change is judged, status forgiven.
    changed = with_spec(old, owner="me")
    assert update(main, changed, old) == ([], [NAME_WARNING])


def test_status_errors_ratchet_too():
    _, status = strategies({"type": "object", "properties": {"size": INT}},
                           {"type": "object", "properties": {
                               "phase": {"type": "string", "enum": ["Ready"]}, "count": INT}})
    old = thing({"size": 1}, {"phase": "Old", "count": 1})
    new = copy.deepcopy(old)
    new["status"]["count"] = 2
    assert update(status, new, old) == ([], [])
    new["status"]["phase"] = "Older"
    assert update(status, new, old)[0] == [
        'status.phase: Unsupported value: "Older": supported values: "Ready"']


# -- correlation and deep equality --------------------------------------------------------------

MAP_LIST = {"type": "array", "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "properties": {"name": STRING, "v": INT}}}


def test_map_lists_are_equal_whatever_the_order():
    old = [{"name": "a", "v": 1}, {"name": "b", "v": 2}]
    assert Correlated([old[1], old[0]], old, MAP_LIST).equal()
    assert not Correlated([old[1], {"name": "c", "v": 1}], old, MAP_LIST).equal()
    atomic = dict(MAP_LIST, **{"x-kubernetes-list-type": "atomic"})
    assert not Correlated([old[1], old[0]], old, atomic).equal()
    assert Correlated(list(old), old, atomic).equal()


def test_keys_the_schema_does_not_describe_make_objects_differ():
    schema = {"type": "object", "properties": {"a": INT},
              "x-kubernetes-preserve-unknown-fields": True}
    assert Correlated({"a": 1}, {"a": 1}, schema).equal()
    assert not Correlated({"a": 1, "b": 2}, {"a": 1, "b": 2}, schema).equal()


def test_numbers_compare_as_go_decodes_them():
    assert not Correlated(1, 1.0, INT).equal()
    assert Correlated(None, None, INT).equal()
    assert not Correlated(None, 0, INT).equal()


def test_map_list_keys_are_typed_scalars():
    items = [{"name": 1}, {"name": "1"}, {"name": True}, {"v": 3}, {"name": {"x": 1}}]
    found = make_map_list(MAP_LIST, items)
    assert found.get({"name": "1"}) is items[1]
    assert found.get({"name": 1}) is items[0]
    assert found.get({"name": True}) is items[2]
    assert found.get({"name": 1.0}) is None
    assert found.get({"v": 3}) is None
    two_keys = dict(MAP_LIST, **{"x-kubernetes-list-map-keys": ["name", "port"]})
    items = [{"name": "a", "port": 80}, {"name": "a", "port": 443}]
    assert make_map_list(two_keys, items).get({"port": 443, "name": "a"}) is items[1]
    assert make_map_list(dict(MAP_LIST, type="object"), items).get(items[0]) is None


def test_equality_is_computed_once_per_node(monkeypatch):
    from kapiserver_plugins.apiextensions.schema import correlation

    calls = []
    real = correlation._deep_equal

    def counting(a, b):
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(correlation, "_deep_equal", counting)
    schema = {"type": "object", "properties": {"s": {
        "type": "object", "properties": {"a": STRING, "b": STRING}}}}
    root = Correlated({"s": {"a": "x", "b": "y"}}, {"s": {"a": "x", "b": "y"}}, schema)
    child = root.key("s").key("a")
    assert child.equal() and root.equal() and root.equal() and child.equal()
    # One comparison per leaf: "a" once (reused by its parents), "b" once.
    assert sorted(calls) == [("x", "x"), ("y", "y")]
