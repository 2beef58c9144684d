"""Tests for kapiserver.fieldmanager.listtypes: the tracking tables of kinds."""

import pytest

from kapiserver.fieldmanager import BUILTIN, DEFAULT, ListType, ListTypes, for_kind, reset_fields
from tests.fieldmanager.transcripts import reference_body

OPENAPI_KINDS = {
    ("v1", "ConfigMap"): "io.k8s.api.core.v1.ConfigMap",
    ("v1", "Secret"): "io.k8s.api.core.v1.Secret",
    ("v1", "Namespace"): "io.k8s.api.core.v1.Namespace",
    ("v1", "ServiceAccount"): "io.k8s.api.core.v1.ServiceAccount",
    ("v1", "Service"): "io.k8s.api.core.v1.Service",
    ("v1", "Endpoints"): "io.k8s.api.core.v1.Endpoints",
    ("v1", "Event"): "io.k8s.api.core.v1.Event",
    ("coordination.k8s.io/v1", "Lease"): "io.k8s.api.coordination.v1.Lease",
}


def openapi_schemas() -> dict:
    schemas = {}
    for name in ("openapi-v3-api-v1.json", "openapi-v3-coordination.json"):
        schemas.update(reference_body(name)["components"]["schemas"])
    return schemas


def facts(schemas, schema, path, out):
    """What the field manager learns from a schema: lists, atomic maps, struct defaults."""
    ref = schema.get("$ref") or (schema.get("allOf") or [{}])[0].get("$ref")
    resolved = schemas[ref.rsplit("/", 1)[-1]] if ref else schema
    if resolved.get("x-kubernetes-map-type") == "atomic":
        out.append(("atomic", path, True))
        return
    if resolved.get("type") == "array":
        kind = resolved.get("x-kubernetes-list-type", "atomic")
        keys = tuple(resolved.get("x-kubernetes-list-map-keys", ()))
        item = resolved["items"]
        item_ref = (item.get("allOf") or [{}])[0].get("$ref") or item.get("$ref")
        item_props = schemas[item_ref.rsplit("/", 1)[-1]]["properties"] if item_ref else {}
        key_defaults = {k: item_props[k]["default"] for k in keys if "default" in item_props[k]}
        out.append(("list", path, (kind, keys, key_defaults)))
        if kind != "atomic":
            facts(schemas, item, path + ".*", out)
        return
    for name, prop in (resolved.get("properties") or {}).items():
        child = f"{path}.{name}" if path else name
        if prop.get("default") == {}:
            out.append(("struct", child, {}))
        facts(schemas, prop, child, out)


@pytest.mark.parametrize("kind", sorted(OPENAPI_KINDS))
def test_builtin_tables_agree_with_the_served_openapi(kind):
    schemas = openapi_schemas()
    table = for_kind(*kind)
    found = []
    facts(schemas, schemas[OPENAPI_KINDS[kind]], "", found)
    assert found
    for what, path, expected in found:
        if what == "list":
            got = table.list_type(path)
            assert (got.kind, got.keys, dict(got.key_defaults)) == expected, path
        elif what == "atomic":
            assert table.is_atomic(path), path
        else:
            assert table.defaults.get(path) == {}, path


def test_object_meta_lists():
    for table in [*BUILTIN.values(), DEFAULT]:
        assert table.list_type("metadata.finalizers") == ListType("set")
        assert table.list_type("metadata.ownerReferences").keys == ("uid",)
        assert table.is_atomic("metadata.ownerReferences.*")
    assert not DEFAULT.omit_empty and all(t.omit_empty for t in BUILTIN.values())


def test_unknown_lists_are_atomic_and_unknown_kinds_get_the_default():
    assert for_kind("v1", "ConfigMap").list_type("data.x") == ListType("atomic")
    assert for_kind("example.com/v1", "Widget") is DEFAULT


def test_patterns_match_any_key_or_item():
    types = ListTypes({"a.*.b": ("map", "name")}, atomic=("x.*",))
    assert types.list_type("a.k.b").keys == ("name",)
    assert types.list_type("a.*.b").kind == "map"
    assert types.is_atomic("x.anything") and not types.is_atomic("x")


def test_list_type_entries_are_checked():
    assert ListType.of(("map", "uid")) == ListType("map", ("uid",))
    with pytest.raises(ValueError):
        ListType.of("bag")
    with pytest.raises(ValueError):
        ListType.of(("set", ("a",)))


def test_composition_later_wins():
    merged = ListTypes({"a": "set"}) | ListTypes({"a": "atomic", "b": "set"}, omit_empty=True)
    assert merged.list_type("a").kind == "atomic" and merged.list_type("b").kind == "set"
    assert merged.omit_empty


def test_normalize_prunes_then_fills_go_zero_values():
    table = for_kind("v1", "Service")
    obj = {"metadata": {"name": "s", "labels": {}}, "spec": {"selector": {},
                                                             "ports": [{"name": "x"}]},
           "status": None}
    assert table.normalize(obj) == {
        "metadata": {"name": "s"}, "spec": {"ports": [{"name": "x", "port": 0}]},
        "status": {"loadBalancer": {}}}
    assert obj["metadata"]["labels"] == {}  # the input is not changed
    assert for_kind("v1", "Event").normalize({})["reportingComponent"] == ""


def test_reset_fields_follow_upstream_strategies():
    assert reset_fields() == ()
    assert reset_fields("", status_subresource=True) == ("status",)
    assert reset_fields("status", status_subresource=True) == ("spec",)
    assert reset_fields("finalize") == ("status",)
