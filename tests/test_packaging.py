"""Packaging: built-ins are entry points of the ``kapiserver`` group; no ``plugins`` package."""

import importlib.metadata
import importlib.util
import subprocess
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent


#: Plugins shipped but not loaded by default (``--plugin`` loads them).
OPT_IN = {"wardle"}


def test_built_in_plugins_are_entry_points_of_the_kapiserver_group():
    names = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="kapiserver")
             if ep.dist and ep.dist.metadata["Name"] == "kapiserver"}
    packages = sorted(p.name for p in (REPO / "plugins").iterdir()
                      if (p / "__init__.py").exists() and p.name not in OPT_IN)
    assert names == {package.replace("_", "-"): f"kapiserver_plugins.{package}"
                     for package in packages}
    assert {"aggregator", "kube", "apiextensions", "core"} <= set(names)


def test_nothing_named_plugins_is_importable_outside_the_checkout(tmp_path):
    # Run from an empty directory so the checkout itself is not on sys.path.
    code = "import importlib.util as u; print(u.find_spec('plugins'))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=tmp_path, env={"PATH": "/usr/bin:/bin"}, check=True)
    assert result.stdout.strip() == "None"


def test_the_wheel_maps_plugins_to_kapiserver_plugins(tmp_path):
    import zipfile

    import shutil

    # Build from a clean copy: setuptools would reuse a stale build/ in the checkout.
    source = tmp_path / "src"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".git", ".tox", "build", "dist", "*.egg-info", "__pycache__", ".kapiserver"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                    "--no-build-isolation", "-w", str(tmp_path), str(source)], check=True,
                   timeout=300)
    (wheel,) = tmp_path.glob("kapiserver-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "kapiserver_plugins/authn/__init__.py" in names
    assert "kapiserver/__init__.py" in names
    assert not [n for n in names if n.split("/")[0] in ("plugins", "tests", "conf")]
    # Every source module is in the wheel: a package missing from setup.cfg fails here.
    sources = {f"kapiserver/{p.relative_to(REPO / 'kapiserver')}"
               for p in (REPO / "kapiserver").rglob("*.py")}
    sources |= {f"kapiserver_plugins/{p.relative_to(REPO / 'plugins')}"
                for p in (REPO / "plugins").rglob("*.py")}
    assert sorted(sources - set(names)) == []


def test_console_script_is_declared():
    scripts = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="console_scripts")}
    assert scripts["kapiserver"] == "kapiserver.cli:main"


def test_core_never_imports_built_in_plugins():
    import pathlib

    import re

    core = pathlib.Path(importlib.util.find_spec("kapiserver").origin).parent
    imports = re.compile(r"^\s*(from|import)\s+kapiserver_plugins", re.M)
    offenders = [str(p) for p in core.rglob("*.py") if imports.search(p.read_text())]
    assert offenders == []


def test_only_the_web_layer_imports_flask():
    import pathlib

    core = pathlib.Path(importlib.util.find_spec("kapiserver").origin).parent
    web = {"server", "endpoints"}
    offenders = []
    for path in core.rglob("*.py"):
        relative = path.relative_to(core)
        if relative.parts[0] in web or relative.name == "testing.py":
            continue
        text = path.read_text()
        if "import flask" in text or "from flask" in text or "werkzeug" in text:
            offenders.append(str(relative))
    assert offenders == []
