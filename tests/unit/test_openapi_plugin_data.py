"""The OpenAPI definitions the apiextensions and aggregator plugins ship for their own kinds:
complete, named and shaped as kube-apiserver v1.32 serves them, packaged, and handed to
the server through ``ResourceSpec.openapi_definitions``."""

import dataclasses
import fnmatch
import json
import os

import pytest

from kapiserver.openapi import schemas
from kapiserver_plugins.aggregator.apiservices import (APISERVICES, OPENAPI_DEFINITIONS_FILE,
                                                       openapi_definitions)
from kapiserver_plugins.apiextensions.crds import CRDS
from kapiserver_plugins.apiextensions.openapi import CRD_DEFINITIONS_FILE, crd_definitions

CRD = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1."
APISERVICE = "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1."
PLUGINS = [
    pytest.param(crd_definitions, CRDS, CRD, 24, "kapiserver_plugins.apiextensions",
                 CRD_DEFINITIONS_FILE, id="apiextensions"),
    pytest.param(openapi_definitions, APISERVICES, APISERVICE, 6,
                 "kapiserver_plugins.aggregator", OPENAPI_DEFINITIONS_FILE, id="aggregator"),
]


def _schemas(schema):
    """Every schema nested in ``schema`` (itself included)."""
    yield schema
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            yield from _schemas(schema[key])
    for child in schema.get("properties", {}).values():
        yield from _schemas(child)
    for child in schema.get("allOf", ()):
        yield from _schemas(child)


@pytest.mark.parametrize("load,spec,prefix,count,package,path", PLUGINS)
def test_definitions_are_complete_and_named_as_upstream(load, spec, prefix, count, package, path):
    own = load()
    assert len(own) == count and all(name.startswith(prefix) for name in own)
    shipped = schemas.builtin()["definitions"]
    assert not set(own) & set(shipped)
    pool = {**shipped, **own}
    assert schemas.reachable(own, pool) - set(own) <= set(shipped)
    models = schemas.models(own)
    assert models[(spec.group, spec.version, spec.kind)] == prefix + spec.kind
    assert models[(spec.group, spec.version, spec.list_kind)] == prefix + spec.list_kind
    # The whole tree under the kind: nothing is defined that the kind does not reach.
    assert schemas.reachable([prefix + spec.kind, prefix + spec.list_kind], pool) - set(
        shipped) == set(own)


@pytest.mark.parametrize("load,spec,prefix,count,package,path", PLUGINS)
def test_definitions_are_in_the_v3_form_and_derive_v2(load, spec, prefix, count, package, path):
    for name, definition in load().items():
        for schema in _schemas(definition):
            # builder3 wraps a reference that has siblings in allOf.
            assert "$ref" not in schema or set(schema) == {"$ref"}, name
            assert isinstance(schema.get("type", ""), str), name
        v2 = schemas.to_v2(name, definition)
        for schema in _schemas(v2):  # JSONSchemaProps has properties named so: keys only
            assert not {"default", "allOf"} & set(schema), name
        assert "#/components/" not in json.dumps(v2)


def test_upstream_specifics_survive():
    crd = crd_definitions()
    version = crd[CRD + "CustomResourceDefinitionVersion"]
    assert version["required"] == ["name", "served", "storage"]
    assert version["properties"]["served"] == {
        "description": "served is a flag enabling/disabling this version from being served "
                       "via REST APIs", "type": "boolean", "default": False}
    # Types with a custom OpenAPI type (Time, JSON) get no zero-value default.
    condition = crd[CRD + "CustomResourceDefinitionCondition"]["properties"]
    assert "default" not in condition["lastTransitionTime"]
    assert crd[CRD + "JSONSchemaProps"]["properties"]["enum"]["items"] == {
        "$ref": "#/components/schemas/" + CRD + "JSON"}
    aggregator = openapi_definitions()
    spec = aggregator[APISERVICE + "APIServiceSpec"]["properties"]
    assert spec["versionPriority"]["default"] == 0 and "default" not in spec["group"]
    assert "required" not in aggregator[APISERVICE + "APIService"]


@pytest.mark.parametrize("load,spec,prefix,count,package,path", PLUGINS)
def test_kind_definitions_reach_the_shipped_meta_types(load, spec, prefix, count, package, path):
    described = schemas.kind_definitions(dataclasses.replace(spec, openapi_definitions=load()))
    assert described is not None
    definitions, name = described
    assert name == prefix + spec.kind
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in definitions
    assert prefix + spec.list_kind not in definitions  # only what the kind itself reaches
    assert schemas.kind_definitions(spec) is None  # the module constant brings none


@pytest.mark.parametrize("load,spec,prefix,count,package,path", PLUGINS)
def test_data_files_are_declared_as_package_data(load, spec, prefix, count, package, path):
    from setuptools.config.setupcfg import read_configuration

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    config = read_configuration(os.path.join(root, "setup.cfg"))
    assert package in config["options"]["packages"]
    patterns = config["options"]["package_data"][package]
    assert any(fnmatch.fnmatch(os.path.basename(path), p) for p in patterns)
