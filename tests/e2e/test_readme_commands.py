"""The README's first command on a fresh environment: ``pip install . && kapiserver serve``.

A brand-new virtualenv (no test dependencies, nothing from this one) installs the checkout
and serves; ``kubectl get ns`` answers. This catches dependencies that only the test
environment happened to provide.
"""

import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

from kapiserver.testing import free_port

REPO = Path(__file__).resolve().parents[2]


def test_pip_install_then_serve_in_a_fresh_virtualenv(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    source = tmp_path / "src"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".git", ".tox", "build", "dist", "*.egg-info", "__pycache__", ".kapiserver"))
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--prefer-binary", str(source)],
                   check=True, timeout=600)
    workdir = tmp_path / "user"
    workdir.mkdir()
    port = free_port()
    log = open(workdir / "server.log", "wb")
    server = subprocess.Popen([str(venv / "bin" / "kapiserver"), "serve", "--secure-port",
                               str(port)], cwd=workdir, stdout=log, stderr=subprocess.STDOUT)
    try:
        kubeconfig = workdir / ".kapiserver" / "admin.kubeconfig"
        result = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if kubeconfig.exists():
                result = subprocess.run(["kubectl", "--kubeconfig", str(kubeconfig), "get",
                                         "ns"], capture_output=True, text=True)
                if result.returncode == 0 and "default" in result.stdout:
                    break
            time.sleep(0.2)
        assert result is not None and "default" in result.stdout, \
            (workdir / "server.log").read_text()
        assert yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]["server"] == \
            f"https://127.0.0.1:{port}"
    finally:
        server.terminate()
        try:
            code = server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
            code = None
        assert code == 0, (workdir / "server.log").read_text()
