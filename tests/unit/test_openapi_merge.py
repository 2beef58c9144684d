"""kapiserver.openapi.merge: Swagger documents merged as kube-openapi's aggregator merges
an extension server's into kube-apiserver's."""

import copy

from kapiserver.openapi.merge import (equal_modulo_gvks, filter_by_paths, merge, merged_gvks,
                                      sort_maps, used)

REF = "#/definitions/"


def ref(name):
    return {"$ref": REF + name}


def op(model, parameters=()):
    return {"get": {"parameters": list(parameters),
                    "responses": {"200": {"description": "OK", "schema": ref(model)}}}}


def gvk(group, kind, version="v1"):
    return {"group": group, "kind": kind, "version": version}


def extension_document():
    return {
        "swagger": "2.0",
        "paths": {
            "/api/v1/namespaces": op("v1.NamespaceList"),
            "/apis/": op("meta.APIGroupList"),
            "/apis/wardle.example.com/v1alpha1/flunders": op(
                "wardle.FlunderList", [{"$ref": "#/parameters/limit-1"}]),
        },
        "definitions": {
            "v1.NamespaceList": {"type": "object", "properties": {"items": {
                "type": "array", "items": ref("v1.Namespace")}}},
            "v1.Namespace": {"type": "object"},
            "meta.APIGroupList": {"type": "object"},
            "wardle.FlunderList": {"type": "object", "properties": {
                "items": {"type": "array", "items": ref("wardle.Flunder")},
                "metadata": ref("meta.ListMeta")}},
            "wardle.Flunder": {"type": "object", "properties": {"metadata": ref("meta.ObjectMeta")},
                               "x-kubernetes-group-version-kind": [
                                   gvk("wardle.example.com", "Flunder", "v1alpha1")]},
            "meta.ListMeta": {"type": "object"},
            "meta.ObjectMeta": {"type": "object", "description": "the extension's"},
            "never.Used": {"type": "string"},
        },
        "parameters": {"limit-1": {"in": "query", "name": "limit", "type": "integer"},
                       "unused-1": {"in": "query", "name": "unused", "type": "string"}},
    }


def main_document():
    return {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": "v1.32"},
        "paths": {"/api/v1/namespaces": op("v1.NamespaceList"),
                  "/apis/": op("meta.APIGroupList")},
        "definitions": {
            "v1.NamespaceList": {"type": "object", "properties": {"items": {
                "type": "array", "items": ref("v1.Namespace")}}},
            "v1.Namespace": {"type": "object"},
            "meta.APIGroupList": {"type": "object"},
            "meta.ListMeta": {"type": "object"},
            "meta.ObjectMeta": {"type": "object", "description": "the main server's"},
        },
        "parameters": {"limit-1": {"in": "query", "name": "limit", "type": "integer"}},
    }


def test_used_follows_references_through_definitions_and_parameters():
    document = extension_document()
    definitions, parameters = used(document)
    assert "wardle.Flunder" in definitions and "meta.ObjectMeta" in definitions
    assert "never.Used" not in definitions
    assert parameters == {"limit-1"}


def test_filter_keeps_prefixed_paths_and_what_they_use_without_changing_the_input():
    document = extension_document()
    before = copy.deepcopy(document)
    kept = filter_by_paths(document, ["/apis/"])
    assert document == before
    assert set(kept["paths"]) == {"/apis/", "/apis/wardle.example.com/v1alpha1/flunders"}
    # Used only by the dropped path: gone. Never used by any path: kept, as upstream.
    assert "v1.NamespaceList" not in kept["definitions"]
    assert "v1.Namespace" not in kept["definitions"]
    assert {"wardle.Flunder", "meta.ObjectMeta", "never.Used"} <= set(kept["definitions"])
    assert set(kept["parameters"]) == {"limit-1", "unused-1"}


def test_merge_adds_new_paths_and_renames_a_conflicting_definition():
    dest, source = main_document(), filter_by_paths(extension_document(), ["/apis/"])
    before = copy.deepcopy(source)
    merge(dest, source)
    assert source == before
    # The main server's /apis/ stays its own.
    assert dest["paths"]["/apis/"] == op("meta.APIGroupList")
    assert "/apis/wardle.example.com/v1alpha1/flunders" in dest["paths"]
    # Same name, other content: the extension's copy is renamed, references follow it.
    assert dest["definitions"]["meta.ObjectMeta"]["description"] == "the main server's"
    assert dest["definitions"]["meta.ObjectMeta_v2"]["description"] == "the extension's"
    assert dest["definitions"]["wardle.Flunder"]["properties"]["metadata"] == \
        ref("meta.ObjectMeta_v2")
    # Equal definitions are shared, not duplicated.
    assert "meta.ListMeta_v2" not in dest["definitions"]
    assert dest["parameters"] == {"limit-1": {"in": "query", "name": "limit",
                                              "type": "integer"},
                                  "unused-1": {"in": "query", "name": "unused",
                                               "type": "string"}}


def test_merge_reuses_an_equal_renamed_definition():
    dest = main_document()
    dest["definitions"]["meta.ObjectMeta_v2"] = {"type": "object",
                                                 "description": "the extension's"}
    merge(dest, filter_by_paths(extension_document(), ["/apis/"]))
    assert "meta.ObjectMeta_v3" not in dest["definitions"]
    assert dest["definitions"]["wardle.Flunder"]["properties"]["metadata"] == \
        ref("meta.ObjectMeta_v2")


def test_merge_renames_a_conflicting_parameter_with_its_references():
    dest = main_document()
    dest["parameters"]["limit-1"] = {"in": "query", "name": "limit", "type": "string"}
    merge(dest, filter_by_paths(extension_document(), ["/apis/"]))
    assert dest["parameters"]["limit-1_v2"]["type"] == "integer"
    flunders = dest["paths"]["/apis/wardle.example.com/v1alpha1/flunders"]["get"]
    assert flunders["parameters"] == [{"$ref": "#/parameters/limit-1_v2"}]


def test_definitions_equal_but_for_their_kinds_share_one_entry_listing_both():
    delete_options = {"type": "object", "x-kubernetes-group-version-kind": [
        gvk("", "DeleteOptions"), gvk("apps", "DeleteOptions")]}
    theirs = {"type": "object", "x-kubernetes-group-version-kind": [
        gvk("wardle.example.com", "DeleteOptions", "v1alpha1"), gvk("", "DeleteOptions")]}
    assert equal_modulo_gvks(delete_options, theirs)
    dest = {"paths": {}, "definitions": {"meta.DeleteOptions": delete_options}}
    source = {"paths": {"/apis/wardle.example.com/v1alpha1/flunders": op("meta.DeleteOptions")},
              "definitions": {"meta.DeleteOptions": theirs}}
    merge(dest, source)
    assert dest["definitions"]["meta.DeleteOptions"]["x-kubernetes-group-version-kind"] == [
        gvk("", "DeleteOptions"), gvk("apps", "DeleteOptions"),
        gvk("wardle.example.com", "DeleteOptions", "v1alpha1")]
    # The destination's own object was not changed in place (it may be cached).
    assert len(delete_options["x-kubernetes-group-version-kind"]) == 2
    assert merged_gvks(delete_options, delete_options) is None


def test_a_source_whose_paths_all_conflict_adds_nothing():
    dest = main_document()
    before = copy.deepcopy(dest)
    merge(dest, filter_by_paths(extension_document(), ["/api/"]))
    assert dest == before


def test_sort_maps_orders_paths_definitions_and_parameters():
    document = sort_maps({"paths": {"/b": {}, "/a": {}}, "definitions": {"z": {}, "a": {}},
                          "parameters": {"y": {}, "x": {}}, "swagger": "2.0"})
    assert list(document["paths"]) == ["/a", "/b"]
    assert list(document["definitions"]) == ["a", "z"]
    assert list(document["parameters"]) == ["x", "y"]
