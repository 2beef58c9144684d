"""Shared fixtures: a real kapiserver (gunicorn, TLS, 2 workers) with the probe plugin."""

import hashlib
import os

import pytest

pytest.register_assert_rewrite("kapiserver.testing")

from kapiserver.testing import KapiserverProcess  # noqa: E402

pytest_plugins = ["kapiserver.testing"]

PROBE_PLUGIN = "tests.support.probe_plugin"
TOKENS = {"alice": "alice-token", "bob": "bob-token", "carol": "carol-token"}


def write_token_file(path):
    with open(path, "w") as f:
        f.write('alice-token,alice,uid-alice,"devs,qa"\n')
        f.write("bob-token,bob,uid-bob\n")
        f.write('carol-token,carol,uid-carol,"system:masters"\n')
    return str(path)


def pytest_generate_tests(metafunc):
    """A module that sets ``STORAGE_BACKENDS`` runs its server tests on each backend: its
    servers take their storage from ``kapiserver_storage`` (module-scoped, so a module's
    shared server is started once per backend)."""
    backends = getattr(metafunc.module, "STORAGE_BACKENDS", None)
    if backends and "kapiserver_storage" in metafunc.fixturenames:
        metafunc.parametrize("kapiserver_storage", backends, indirect=True, scope="module")


@pytest.fixture(autouse=True)
def kubectl_cache_dir(tmp_path_factory, monkeypatch, request):
    """A fresh kubectl discovery cache for each test that runs kubectl itself.

    kubectl keys its cache by host and port only; ports are reused across servers.
    """
    base = tmp_path_factory.getbasetemp() / "kubectl-cache"
    test = hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:16]
    monkeypatch.setenv("KUBECACHEDIR", str(base / test))


@pytest.fixture(scope="session")
def token_file(tmp_path_factory):
    return write_token_file(tmp_path_factory.mktemp("tokens") / "tokens.csv")


@pytest.fixture(scope="session")
def server(tmp_path_factory, token_file):
    """One shared server for tests that only read: 2 workers, tokens, probe plugin.

    Authorization: ``ProbeDenyBob`` (bob is refused) then ``AlwaysAllow``.
    """
    workdir = tmp_path_factory.mktemp("shared-server")
    audit_file = os.path.join(workdir, "audit.jsonl")
    process = KapiserverProcess(str(workdir), {
        "token-auth-file": token_file,
        "authorization-mode": "ProbeDenyBob,AlwaysAllow",
        "probe-audit-file": audit_file,
    }, plugins=[PROBE_PLUGIN], workers=2)
    process.audit_file = audit_file
    process.start()
    yield process
    process.stop()
