"""The data built-in kinds are made of: reproducible from the reference, and equal to what
was written by hand for the first kinds."""

import json
import os

import pytest

from kapiserver.fieldmanager import derive, listtypes
from kapiserver.openapi import extensions, schemas
from kapiserver.registry import builtin, extract

REFERENCE = extract.DEFAULT_REFERENCE_DIR
needs_reference = pytest.mark.skipif(not os.path.isdir(REFERENCE),
                                     reason="reference transcripts absent")


@needs_reference
def test_shipped_resources_are_what_extract_derives_from_the_reference():
    with open(extract.OUTPUT) as f:
        assert json.load(f) == extract.derive(REFERENCE)


def test_every_served_group_version_has_its_kinds_in_the_data():
    kinds = {(g, v): builtin.resource_info(g, v, r)["kind"] for g, v, r in builtin.resources()}
    assert kinds[("apps", "v1")] and ("batch", "v1") in kinds and ("", "v1") in kinds
    assert len(builtin.resources()) == 57  # 59 served, less CRDs and APIServices


def test_spec_of_a_built_in_resource_is_upstreams():
    spec = builtin.builtin_spec("apps", "v1", "deployments")
    assert (spec.kind, spec.singular, spec.namespaced) == ("Deployment", "deployment", True)
    assert spec.short_names == ("deploy",) and spec.categories == ("all",)
    # A hash of the storage version's group/version/kind, as discovery.StorageVersionHash.
    assert builtin.builtin_spec("", "v1", "configmaps").storage_version_hash == "qFsyl6wFWjQ="
    assert builtin.builtin_spec("events.k8s.io", "v1", "events").storage_version_hash == \
        "r2yiGXH7wu8="  # stored as core/v1 Events
    assert builtin.subresource_info(spec, "scale") == {
        "group": "autoscaling", "version": "v1", "kind": "Scale",
        "verbs": ["get", "patch", "update"]}
    assert [c["name"] for c in builtin.table_columns(spec)] == [
        "Name", "Ready", "Up-to-date", "Available", "Age", "Containers", "Images", "Selector"]


def _derived(group, version, kind):
    definitions = schemas.builtin()["definitions"]
    return extensions.derive(definitions, schemas.models(definitions)[(group, version, kind)])


def test_merge_keys_come_from_the_patch_extensions():
    found = _derived("apps", "v1", "Deployment").merge_keys
    assert found["spec.template.spec.containers"] == "name"
    assert found["spec.template.spec.containers.ports"] == "containerPort"
    assert found["spec.template.spec.containers.env"] == "name"
    assert found["spec.template.spec.volumes"] == "name"
    assert found["metadata.finalizers"] == ""
    assert "spec.template.spec.tolerations" not in found  # atomic, replaced whole


def test_list_types_come_from_the_list_extensions():
    found = _derived("", "v1", "Pod")
    assert found.lists["spec.containers"] == ("map", ("name",), {"name": ""})
    assert found.lists["spec.containers.*.ports"] == (
        "map", ("containerPort", "protocol"), {"containerPort": 0, "protocol": "TCP"})
    assert found.lists["spec.tolerations"] == "atomic"
    assert "spec.nodeSelector" in found.atomic


@pytest.mark.parametrize("key", sorted(listtypes.BUILTIN))
def test_derived_tables_agree_with_the_hand_written_ones(key):
    api_version, kind = key
    group, _, version = api_version.rpartition("/")
    derived = derive.builtin_list_types(group, version, kind)
    if derived is None:
        pytest.skip("a plugin's kind: no shipped definition")
    hand = listtypes.BUILTIN[key]
    assert {p: t for p, t in derived.lists.items() if t.kind != "atomic"} == \
        {p: t for p, t in hand.lists.items() if t.kind != "atomic"}
    assert set(hand.atomic) <= set(derived.atomic)
    # What Go's zero value holds: the hand tables left out only what atomic lists hide.
    assert {p: v for p, v in hand.defaults.items()} == \
        {p: v for p, v in derived.defaults.items() if p in hand.defaults}
