"""kapiserver.pytest_plugin's helpers without a server: options, CRD files, namespace
names; and that the plugin is registered for pytest by kapiserver's distribution."""

import importlib.metadata
import re

import pytest

from kapiserver.pytest_plugin import _options, crd_documents, namespace_name

CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %s.example.com}
"""


def test_it_is_a_pytest11_entry_point_of_kapiserver():
    (entry,) = [e for e in importlib.metadata.entry_points(group="pytest11")
                if e.name == "kapiserver"]
    assert entry.value == "kapiserver.pytest_plugin"
    assert entry.dist.metadata["Name"] == "kapiserver"


def test_options_are_checked():
    assert _options({}, "x") == {"plugins": [], "config": {}, "args": [], "crds": [],
                                 "workers": 1}
    with pytest.raises(ValueError, match=r"^kapiserver_config: unknown key\(s\) 'crd', "
                                         r"'flags'; valid keys: plugins, config, args, "
                                         r"crds, workers$"):
        _options({"crd": [], "flags": []}, "kapiserver_config")
    with pytest.raises(ValueError, match="crds must be a list, not 'a.yaml'"):
        _options({"crds": "a.yaml"}, "kapiserver_config")


def test_crd_files_directories_globs_and_lists(tmp_path):
    (tmp_path / "crds").mkdir()
    (tmp_path / "crds" / "b.yaml").write_text(CRD % "bs" + "---\n" + CRD % "cs")
    (tmp_path / "crds" / "a.json").write_text(
        '{"apiVersion": "v1", "kind": "List", "items": [%s]}' %
        '{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", '
        '"metadata": {"name": "as.example.com"}}')
    (tmp_path / "crds" / "notes.txt").write_text("not a manifest")
    (tmp_path / "d.yml").write_text(CRD % "ds")
    found = crd_documents(["crds", str(tmp_path / "*.yml")], tmp_path)
    assert [(path.rsplit("/", 1)[1], crd["metadata"]["name"]) for path, crd in found] == [
        ("a.json", "as.example.com"), ("b.yaml", "bs.example.com"),
        ("b.yaml", "cs.example.com"), ("d.yml", "ds.example.com")]


def test_what_is_not_a_crd_is_refused(tmp_path):
    (tmp_path / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\n")
    with pytest.raises(ValueError, match=f"^kapiserver crds: {tmp_path}/cm.yaml: a "
                                         "ConfigMap, not a CustomResourceDefinition$"):
        crd_documents(["cm.yaml"], tmp_path)
    with pytest.raises(FileNotFoundError, match="no file matches 'missing/\\*.yaml'"):
        crd_documents(["missing/*.yaml"], tmp_path)


def test_namespace_names_are_dns_labels_named_after_the_test():
    name = namespace_name("test_it[Param-1/x]")
    assert re.fullmatch(r"test-it-param-1-x-[0-9a-f]{6}", name)
    assert namespace_name("test_it") != namespace_name("test_it")
    long = namespace_name("test_" + "x" * 100)
    assert len(long) <= 63 and re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", long)
    assert re.fullmatch(r"test-[0-9a-f]{6}", namespace_name("[]"))
