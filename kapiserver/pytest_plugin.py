"""kapiserver's pytest plugin: a real API server for the tests of operators, controllers
and admission plugins.

It comes with kapiserver (the ``pytest11`` entry point ``kapiserver``) and stays inert
until a test asks for one of its fixtures: it adds no command-line option, hook, marker or
output, imports nothing heavy and starts nothing (``-p no:kapiserver`` removes it).

Fixtures:

* ``kapiserver`` (session): a real kapiserver (gunicorn, TLS, SQLite under the session's
  temporary directory) on a free loopback port, started on first use and stopped at the
  end of the session — a ``kapiserver.testing.KapiserverProcess``, which acts as any user
  (``request``, ``get``, ``python_client(user=)``, ``kubeconfig(user=)``, ``kubectl``).
* ``kapiserver_kubeconfig`` (session): the path of an admin kubeconfig for it (user
  ``admin`` in ``system:masters``).
* ``kapiserver_kubeconfig_env`` (function): the same path, made the test's default
  cluster: ``KUBECONFIG`` and the ``kubernetes`` library's default kubeconfig location.
* ``kapiserver_client`` (session): an official ``kubernetes`` client ``ApiClient`` acting
  as that admin.
* ``kapiserver_namespace`` (function): a fresh namespace for the test, named after it,
  deleted after it.
* ``kapiserver_config`` (session): what the ``kapiserver`` fixture's server is started
  with. Override it in your ``conftest.py`` to give it plugins, options or CRDs::

      @pytest.fixture(scope="session")
      def kapiserver_config():
          return {"crds": [HERE / "deploy" / "crd.yaml"],
                  "config": {"authorization-mode": "RBAC"}}

  Keys: ``plugins`` (module names loaded with ``--plugin``; pip-installed plugins load by
  themselves), ``config`` (options as in the YAML config file), ``args`` (command-line
  flags), ``crds`` (YAML or JSON files, directories or glob patterns of
  CustomResourceDefinitions, relative to pytest's rootdir; they are created and
  ``Established`` before the fixture returns), ``workers``.

More servers, each with its own options, come from fixture factories — as
pytest-postgresql's ``factories`` — declared in a ``conftest.py`` or a test module::

    from kapiserver.pytest_plugin import namespace_fixture, server_fixture

    strict_server = server_fixture(config={"authorization-mode": "RBAC"})
    strict_namespace = namespace_fixture("strict_server")
"""

from __future__ import annotations

import glob
import os
import re
import time
import uuid
from pathlib import Path

import pytest

#: What ``kapiserver_config`` and ``server_fixture`` accept.
OPTION_KEYS = ("plugins", "config", "args", "crds", "workers")
CRD_API = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
ADMIN = {"user": "admin", "groups": ("system:masters",)}
#: Seconds a CRD may take to be Established.
ESTABLISH_TIMEOUT = 30.0


def _options(options: dict, what: str) -> dict:
    unknown = sorted(set(options) - set(OPTION_KEYS))
    if unknown:
        raise ValueError(f"{what}: unknown key(s) {', '.join(map(repr, unknown))}; "
                         f"valid keys: {', '.join(OPTION_KEYS)}")
    checked = {"plugins": list(options.get("plugins") or ()),
               "config": dict(options.get("config") or {}),
               "args": [str(a) for a in options.get("args") or ()],
               "crds": list(options.get("crds") or ()),
               "workers": int(options.get("workers") or 1)}
    for key in ("plugins", "args", "crds"):
        if isinstance(options.get(key), (str, bytes, os.PathLike)):
            raise ValueError(f"{what}: {key} must be a list, not {options[key]!r}")
    return checked


def crd_documents(paths, rootdir) -> list[tuple[str, dict]]:
    """``(file, CRD)`` of every document in ``paths`` (files, directories of ``*.yaml``,
    ``*.yml`` and ``*.json``, glob patterns; relative ones under ``rootdir``), in order.
    A ``v1`` ``List`` contributes its items; anything but a CRD is an error."""
    import yaml

    files = []
    for entry in paths:
        path = Path(rootdir, entry)
        if path.is_dir():
            files += sorted(p for p in path.iterdir()
                            if p.suffix in (".yaml", ".yml", ".json") and p.is_file())
        elif path.exists():
            files.append(path)
        else:
            matches = sorted(Path(p) for p in glob.glob(str(path), recursive=True))
            if not matches:
                raise FileNotFoundError(f"kapiserver crds: no file matches {str(entry)!r} "
                                        f"(relative paths are under {rootdir})")
            files += matches
    documents = []
    for path in files:
        with open(path, encoding="utf-8") as f:
            loaded = [d for d in yaml.safe_load_all(f) if d is not None]
        for document in loaded:
            items = document.get("items") if isinstance(document, dict) and \
                document.get("kind") == "List" else [document]
            for item in items or ():
                if not isinstance(item, dict) or item.get("kind") != \
                        "CustomResourceDefinition":
                    kind = item.get("kind") if isinstance(item, dict) else type(item).__name__
                    raise ValueError(f"kapiserver crds: {path}: a {kind}, not a "
                                     "CustomResourceDefinition")
                documents.append((str(path), item))
    return documents


def install_crds(server, paths, rootdir) -> list[str]:
    """Create the CRDs in ``paths`` on ``server`` and wait until each is Established;
    return their names. A CRD the server refuses is an error with its ``Status``."""
    names = []
    for path, crd in crd_documents(paths, rootdir):
        response = server.request("POST", CRD_API, json=crd, **ADMIN)
        if response.status_code != 201:
            try:
                message = response.json().get("message", response.text)
            except ValueError:
                message = response.text
            raise RuntimeError(f"kapiserver crds: {path}: CustomResourceDefinition "
                               f"{(crd.get('metadata') or {}).get('name')!r} refused "
                               f"({response.status_code}): {message}")
        names.append(response.json()["metadata"]["name"])
    deadline = time.monotonic() + ESTABLISH_TIMEOUT
    for name in names:
        while not _established(server, name):
            if time.monotonic() > deadline:
                raise TimeoutError(f"kapiserver crds: {name} not Established within "
                                   f"{ESTABLISH_TIMEOUT:g}s")
            time.sleep(0.02)
    return names


def _established(server, name: str) -> bool:
    crd = server.get(f"{CRD_API}/{name}", **ADMIN).json()
    return any(c.get("type") == "Established" and c.get("status") == "True"
               for c in (crd.get("status") or {}).get("conditions") or ())


def start_server(options: dict, workdir, rootdir):
    """A started ``KapiserverProcess`` with ``options`` (``OPTION_KEYS``), its CRDs
    Established."""
    from .testing import KapiserverProcess

    server = KapiserverProcess(str(workdir), options["config"], options["plugins"],
                               options["workers"], options["args"])
    server.start()
    try:
        install_crds(server, options["crds"], rootdir)
    except BaseException:
        server.stop()
        raise
    return server


def _server_generator(options: dict, tmp_path_factory, pytestconfig):
    server = start_server(options, tmp_path_factory.mktemp("kapiserver"),
                          pytestconfig.rootpath)
    try:
        yield server
    finally:
        server.stop()


def server_fixture(*, plugins=(), config=None, args=(), crds=(), workers: int = 1,
                   scope: str = "session"):
    """A fixture of a server with these options (see ``kapiserver_config``), started when
    a test first uses it and stopped at the end of its ``scope``. Assign it to a name in
    a ``conftest.py`` or test module: that name is the fixture's."""
    options = _options({"plugins": plugins, "config": config, "args": args, "crds": crds,
                        "workers": workers}, "server_fixture")

    @pytest.fixture(scope=scope)
    def server(tmp_path_factory, pytestconfig):
        yield from _server_generator(options, tmp_path_factory, pytestconfig)

    return server


def namespace_name(test_name: str) -> str:
    """A namespace name for a test: its name as a DNS label, and a random suffix."""
    base = re.sub(r"[^a-z0-9]+", "-", test_name.lower()).strip("-")[:50].strip("-")
    return f"{base or 'test'}-{uuid.uuid4().hex[:6]}"


def namespace_fixture(server: str = "kapiserver"):
    """A function-scoped fixture: a fresh namespace on the server of fixture ``server``,
    named after the test, deleted after it (the namespace controller then deletes what
    is in it)."""

    @pytest.fixture
    def namespace(request):
        process = request.getfixturevalue(server)
        name = namespace_name(request.node.name)
        response = process.request("POST", "/api/v1/namespaces", **ADMIN,
                                   json={"apiVersion": "v1", "kind": "Namespace",
                                         "metadata": {"name": name}})
        if response.status_code != 201:
            raise RuntimeError(f"kapiserver_namespace: creating {name} failed "
                               f"({response.status_code}): {response.text}")
        yield name
        response = process.request("DELETE", f"/api/v1/namespaces/{name}", **ADMIN)
        if response.status_code not in (200, 202, 404):
            raise RuntimeError(f"kapiserver_namespace: deleting {name} failed "
                               f"({response.status_code}): {response.text}")

    return namespace


@pytest.fixture(scope="session")
def kapiserver_config():
    """The options of the ``kapiserver`` fixture's server (none): override to change."""
    return {}


@pytest.fixture(scope="session")
def kapiserver(kapiserver_config, tmp_path_factory, pytestconfig):
    """A real kapiserver for the session (``kapiserver.testing.KapiserverProcess``)."""
    options = _options(kapiserver_config or {}, "kapiserver_config")
    yield from _server_generator(options, tmp_path_factory, pytestconfig)


@pytest.fixture(scope="session")
def kapiserver_kubeconfig(kapiserver):
    """The path of an admin kubeconfig (``system:masters``) for ``kapiserver``."""
    return kapiserver.kubeconfig()


@pytest.fixture
def kapiserver_kubeconfig_env(kapiserver_kubeconfig, monkeypatch):
    """Make ``kapiserver`` the test's default cluster; return its kubeconfig's path.

    ``KUBECONFIG`` names the kubeconfig for the test, and so does the default location
    of the ``kubernetes`` client's ``load_kube_config()``, which that library reads from
    the environment once, when it is first imported: kopf (``KopfRunner``), kubectl and
    code that loads the default kubeconfig all reach the server.
    """
    import sys

    monkeypatch.setenv("KUBECONFIG", kapiserver_kubeconfig)
    kube_config = sys.modules.get("kubernetes.config.kube_config")
    if kube_config is not None:
        monkeypatch.setattr(kube_config, "KUBE_CONFIG_DEFAULT_LOCATION", kapiserver_kubeconfig)
    return kapiserver_kubeconfig


@pytest.fixture(scope="session")
def kapiserver_client(kapiserver):
    """A ``kubernetes.client.ApiClient`` acting as ``kapiserver``'s admin."""
    client = kapiserver.python_client()
    yield client
    client.close()


kapiserver_namespace = namespace_fixture("kapiserver")
