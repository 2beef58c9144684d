"""A third-party plugin distribution, installed with pip, works with no change to kapiserver."""

import os
import subprocess
import sys

import pytest

from kapiserver.testing import KapiserverProcess, assert_status

HERE = os.path.dirname(os.path.abspath(__file__))
DISTRIBUTION = os.path.join(os.path.dirname(HERE), "thirdparty", "kapiserver-example-apikey")


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """A virtualenv seeing this environment's kapiserver plus the example plugin."""
    path = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    python = os.path.join(path, "bin", "python")
    # See this environment's packages (kapiserver and its dependencies) whether or not
    # it is itself a virtualenv (tox): a .pth file lists its site directories.
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             capture_output=True, text=True, check=True).stdout.strip()
    # addsitedir (not a bare path) so that the parent's own .pth files, such as an
    # editable install's finder, are processed too.
    with open(os.path.join(purelib, "parent-environment.pth"), "w") as f:
        for site_dir in (p for p in sys.path if p.endswith("-packages")):
            f.write(f"import site; site.addsitedir({site_dir!r})\n")
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                    "--no-index", DISTRIBUTION], check=True, timeout=300)
    return path


def test_kapiserver_plugins_lists_it_with_distribution_and_version(venv):
    result = subprocess.run([os.path.join(venv, "bin", "python"), "-m", "kapiserver", "plugins",
                             "--example-api-keys-file", "/dev/null"],
                            capture_output=True, text=True, check=True)
    line = next(l for l in result.stdout.splitlines() if l.startswith("example-apikey"))
    assert line.split() == ["example-apikey", "kapiserver-example-apikey", "1.2.3",
                            "kapiserver_example_apikey"]
    assert "provides: authenticator example-apikey" in result.stdout
    # The built-ins are listed the same way, from the kapiserver distribution.
    assert any(l.split()[:2] == ["authn", "kapiserver"] for l in result.stdout.splitlines())


def test_its_authenticator_is_loaded_and_used(venv, tmp_path):
    keys = tmp_path / "keys.txt"
    keys.write_text("k-123 zoe ops,devs\n")
    server = KapiserverProcess(str(tmp_path / "server"),
                               {"example-api-keys-file": str(keys), "anonymous-auth": False},
                               command=[os.path.join(venv, "bin", "python"), "-m",
                                        "kapiserver", "serve"])
    server.args = ["--config", server.config_file]
    server.start()
    try:
        assert "authenticators, in order: x509, serviceaccount, example-apikey" in server.log()
        assert server.get("/version", headers={"X-API-Key": "k-123"}).status_code == 200
        assert_status(server.get("/version", headers={"X-API-Key": "wrong"}), 401,
                      "Unauthorized", "Unauthorized")
        assert_status(server.get("/version"), 401, "Unauthorized")
    finally:
        server.stop()
