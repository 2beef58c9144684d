"""The shipped OpenAPI definitions: reproducible from the reference documents, complete,
and packaged."""

import json
import os

import pytest

from kapiserver.openapi import extract, schemas

REFERENCE = extract.DEFAULT_REFERENCE_DIR
DATA_DIR = os.path.join(os.path.dirname(schemas.__file__), "definitions")


def load(name):
    with open(os.path.join(DATA_DIR, name)) as f:
        return json.load(f)


@pytest.mark.skipif(not os.path.isdir(REFERENCE), reason="reference transcripts absent")
def test_generated_data_is_what_extract_derives_from_the_reference():
    assert load("generated.json") == extract.derive(REFERENCE)


@pytest.mark.skipif(not os.path.isdir(REFERENCE), reason="reference transcripts absent")
def test_extract_refuses_documents_that_lack_a_root(tmp_path, monkeypatch):
    monkeypatch.setattr(extract, "REQUIRED", extract.REQUIRED + ("io.k8s.api.apps.v1.Nope",))
    with pytest.raises(extract.ExtractError, match="io.k8s.api.apps.v1.Nope"):
        extract.derive(REFERENCE)


def test_every_reference_resolves_within_the_shipped_definitions():
    definitions = schemas.builtin()["definitions"]
    assert schemas.reachable(definitions, definitions) == set(definitions)


def test_every_built_in_kind_has_its_upstream_definition():
    models = schemas.models(schemas.builtin()["definitions"])
    kinds = [("", "v1", kind) for kind in ("ConfigMap", "Namespace", "Secret", "ServiceAccount",
                                          "Event", "Service", "Endpoints")]
    kinds += [("coordination.k8s.io", "v1", "Lease"), ("events.k8s.io", "v1", "Event")]
    for group, version, kind in kinds:
        assert models[(group, version, kind)].endswith("." + kind)
        assert models[(group, version, kind + "List")].endswith("." + kind + "List")
    assert models[("events.k8s.io", "v1", "Event")] == "io.k8s.api.events.v1.Event"
    assert models[("", "v1", "Event")] == "io.k8s.api.core.v1.Event"


def test_shipped_parameters_are_the_ones_routes_use():
    assert set(schemas.builtin()["parameters"]) == set(extract.PARAMETERS)


def test_data_files_are_declared_as_package_data():
    from setuptools.config.setupcfg import read_configuration

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    config = read_configuration(os.path.join(root, "setup.cfg"))
    assert "kapiserver.openapi" in config["options"]["packages"]
    patterns = config["options"]["package_data"]["kapiserver.openapi"]
    import fnmatch

    for name in schemas.DATA_FILES:
        assert any(fnmatch.fnmatch(f"definitions/{name}", p) for p in patterns), name
