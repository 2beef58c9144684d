"""Test helpers for plugin authors: start a real kapiserver, act as any user, check Status.

Opt in from a ``conftest.py`` (it is never auto-loaded)::

    pytest_plugins = ["kapiserver.testing"]

    def test_my_authenticator(kapiserver_factory):
        server = kapiserver_factory(plugins=["my_plugin"], config={"anonymous-auth": False})
        assert server.get("/version", user="alice").status_code == 200

``kapiserver_factory`` starts ``kapiserver serve`` (gunicorn, TLS) in a subprocess on a
free loopback port with its data dir under ``tmp_path`` and stops it after the test.

Storage: servers use the embedded SQLite store unless ``kapiserver_storage`` is
parametrized (indirectly) with ``"etcd3"``: each server then gets its own key prefix in
one etcd member shared by the session (``kapiserver_etcd``; Debian's ``etcd-server``)::

    @pytest.mark.parametrize("kapiserver_storage", ["sqlite", "etcd3"], indirect=True,
                             scope="module")
    def test_on_both(kapiserver_factory): ...
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid

import requests
import yaml

try:
    import pytest
except ImportError:  # KapiserverProcess works without pytest; only the fixture needs it
    pytest = None

from .pki import PKI, server_url, write_kubeconfig
from .server.apiserver import READY_LOG

KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class KapiserverProcess:
    """A kapiserver running in a subprocess, with helpers to talk to it as any user."""

    def __init__(self, workdir: str, config: dict | None = None, plugins=(), workers: int = 1,
                 args=(), env: dict | None = None, port: int | None = None,
                 command: list[str] | None = None):
        self.workdir = os.path.abspath(workdir)
        os.makedirs(self.workdir, exist_ok=True)
        self.port = port or free_port()
        self.config = {"data-dir": os.path.join(self.workdir, "data"),
                       "bind-address": "127.0.0.1", "secure-port": self.port,
                       "workers": workers, "shutdown-grace-period": 10, **(config or {})}
        if plugins:
            self.config["plugin"] = list(plugins)
        self.config_file = os.path.join(self.workdir, "kapiserver.yaml")
        with open(self.config_file, "w") as f:
            yaml.safe_dump(self.config, f)
        self.data_dir = self.config["data-dir"]
        # Another loopback address (127.0.0.2) lets instances share a port on one host.
        self.url = server_url(self.config["bind-address"], self.port)
        self.args = list(args)
        self.command = command
        self.env = dict(os.environ, **(env or {}))
        # Whatever the test can import (its plugins), the server can import too.
        self.env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        self.log_file = os.path.join(self.workdir, "server.log")
        self.process: subprocess.Popen | None = None
        self._users: dict = {}

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self, timeout: float = 60) -> "KapiserverProcess":
        """Start the server and wait until ``/readyz`` answers 200."""
        command = self.command or [sys.executable, "-m", "kapiserver", "serve",
                                   "--config", self.config_file]
        self._log = open(self.log_file, "ab")
        self._log_offset = self._log.tell()
        self.process = subprocess.Popen(command + self.args, stdout=self._log,
                                        stderr=subprocess.STDOUT, env=self.env,
                                        cwd=self.workdir)
        try:
            self.wait_ready(timeout)
        except BaseException:
            # Nobody will stop a server whose start failed: a fixture's teardown never runs.
            self.stop(timeout=10)
            raise
        return self

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"kapiserver exited with {self.process.returncode}:\n"
                                   f"{self.log()}")
            try:
                if os.path.exists(self.pki.ca_cert_file) and self._workers_ready():
                    if self.get("/readyz", user="admin", groups=["system:masters"],
                                timeout=2).status_code == 200:
                        return
            except requests.RequestException:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"kapiserver not ready after {timeout}s:\n{self.log()}")

    def _workers_ready(self) -> bool:
        # /readyz speaks for whichever worker took the connection; each worker also logs
        # when its post-start hooks are done (at info, the default level).
        if str(self.config.get("log-level", "info")).lower() not in ("info", "debug"):
            return True
        with open(self.log_file, "rb") as f:
            f.seek(getattr(self, "_log_offset", 0))
            logged = f.read().count(READY_LOG.encode())
        return logged >= int(self.config.get("workers", 1))

    def stop(self, sig=signal.SIGTERM, timeout: float = 30) -> int:
        """Signal the server (by its PID) and wait for it; return its exit code."""
        if self.process is None:
            return 0
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self._log.close()
        return self.process.returncode

    def log(self) -> str:
        with open(self.log_file, errors="replace") as f:
            return f.read()

    # -- acting as users -------------------------------------------------------------------

    @property
    def pki(self) -> PKI:
        return PKI(self.data_dir)

    @property
    def ca_file(self) -> str:
        return self.pki.ca_cert_file

    def client_cert(self, user: str, groups=()) -> tuple[str, str]:
        """Files of a client certificate for ``user`` in ``groups``, signed by the server's CA."""
        key = (user, tuple(groups))
        if key not in self._users:
            cert_pem, key_pem = self.pki.issue_client_cert(user, groups)
            stem = os.path.join(self.workdir, "users",
                                f"{user}-{abs(hash(key)):x}".replace(":", "_"))
            os.makedirs(os.path.dirname(stem), exist_ok=True)
            for suffix, data in ((".crt", cert_pem), (".key", key_pem)):
                with open(stem + suffix, "wb") as f:
                    f.write(data)
            self._users[key] = (stem + ".crt", stem + ".key")
        return self._users[key]

    def request(self, method: str, path: str, user: str | None = None, groups=(),
                token: str | None = None, **kwargs) -> requests.Response:
        """Send a request as ``user`` (client certificate), with ``token``, or anonymously."""
        headers = dict(kwargs.pop("headers", None) or {})
        if token:
            headers["Authorization"] = f"Bearer {token}"
        cert = self.client_cert(user, groups) if user else None
        # verify= on every call: REQUESTS_CA_BUNDLE would override a session's verify.
        return requests.request(method, self.url + path, headers=headers, cert=cert,
                                verify=self.ca_file, timeout=kwargs.pop("timeout", 30),
                                **kwargs)

    def get(self, path: str, **kwargs) -> requests.Response:
        return self.request("GET", path, **kwargs)

    def kubeconfig(self, user: str | None = "admin", groups=("system:masters",),
                   token: str | None = None) -> str:
        """Path of a kubeconfig for ``user`` (a client certificate) or for ``token``."""
        name = token and f"token-{abs(hash(token)):x}" or f"{user}-{abs(hash(tuple(groups))):x}"
        path = os.path.join(self.workdir, "kubeconfigs", f"{name}.kubeconfig".replace(":", "_"))
        if not os.path.exists(path):
            with open(self.ca_file, "rb") as f:
                ca_pem = f.read()
            cert_pem = key_pem = None
            if user and not token:
                cert_file, key_file = self.client_cert(user, groups)
                cert_pem, key_pem = open(cert_file, "rb").read(), open(key_file, "rb").read()
            os.makedirs(os.path.dirname(path), exist_ok=True)
            write_kubeconfig(path, self.url, ca_pem, cert_pem, key_pem, user=user or "token",
                             token=token)
        return path

    def kubectl(self, *args, user: str | None = "admin", groups=("system:masters",),
                token: str | None = None, input: str | None = None, check: bool = False,
                timeout: float = 60) -> subprocess.CompletedProcess:
        """Run the real kubectl against this server as ``user`` or with ``token``.

        kubectl's discovery cache is keyed by host and port only: a later server on a reused
        port would be answered from this one's cache, so each server gets its own.
        """
        command = [KUBECTL, "--kubeconfig", self.kubeconfig(user, groups, token),
                   "--cache-dir", os.path.join(self.workdir, "kubectl-cache"), *args]
        return subprocess.run(command, capture_output=True, text=True, input=input,
                              check=check, timeout=timeout)

    def wait_established(self, crd_name: str, timeout: float = 10) -> None:
        """Wait until the CustomResourceDefinition ``crd_name`` is ``Established``.

        A new CRD's ``status.conditions`` is null until the naming controller has run (on
        kube-apiserver too), and ``kubectl wait`` fails at once on a null conditions list:
        wait for the conditions, then let kubectl confirm the Established one.
        """
        path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd_name}"
        deadline = time.monotonic() + timeout
        while not ((self.get(path, user="admin", groups=["system:masters"]).json()
                    .get("status") or {}).get("conditions")):
            if time.monotonic() > deadline:
                raise TimeoutError(f"CRD {crd_name} got no conditions within {timeout}s")
            time.sleep(0.02)
        self.kubectl("wait", "--for=condition=established", f"crd/{crd_name}",
                     f"--timeout={max(1, int(deadline - time.monotonic()))}s", check=True)

    def python_client(self, user: str = "admin", groups=("system:masters",)):
        """An official ``kubernetes`` Python client ``ApiClient`` acting as ``user``."""
        from kubernetes import client

        configuration = client.Configuration()
        configuration.host = self.url
        configuration.ssl_ca_cert = self.ca_file
        configuration.cert_file, configuration.key_file = self.client_cert(user, groups)
        return client.ApiClient(configuration)


def assert_status(response, code: int, reason: str, message: str | None = None,
                  details: dict | None = None) -> dict:
    """Assert ``response`` is a ``Status`` failure with this code, reason (and message)."""
    assert response.status_code == code, (response.status_code, response.text)
    assert response.headers["Content-Type"] == "application/json", response.headers
    body = response.json()
    assert body["kind"] == "Status" and body["apiVersion"] == "v1", body
    assert body["status"] == "Failure", body
    assert body["code"] == code, body
    assert body["reason"] == reason, body
    if message is not None:
        assert body["message"] == message, body
    if details is not None:
        assert body.get("details") == details, body
    return body


STORAGE_BACKENDS = ("sqlite", "etcd3")


class StorageChoice:
    """The storage a test's servers use: ``config()`` is the options of one more server
    (nothing for SQLite; for etcd its servers and a prefix of its own)."""

    def __init__(self, name: str = "sqlite", etcd=None):
        if name not in STORAGE_BACKENDS:
            raise ValueError(f"storage backend {name!r}: one of {', '.join(STORAGE_BACKENDS)}")
        self.name = name
        self.etcd = etcd

    def config(self) -> dict:
        if self.name == "sqlite":
            return {}
        return {"storage-backend": "etcd3", "etcd-servers": [self.etcd.url],
                "etcd-prefix": f"/kapiserver-test-{uuid.uuid4().hex[:12]}"}

    def __repr__(self) -> str:
        return self.name


def kapiserver_etcd(tmp_path_factory):
    """One etcd member for the session (skipped where etcd is not installed)."""
    from .etcdtesting import EtcdProcess, etcd_available

    if not etcd_available():
        pytest.skip("etcd is not installed (apt-get install etcd-server)")
    etcd = EtcdProcess(str(tmp_path_factory.mktemp("etcd"))).start()
    yield etcd
    etcd.stop()


def kapiserver_storage(request):
    """``StorageChoice`` of the test's servers: SQLite, or etcd when parametrized so."""
    name = getattr(request, "param", "sqlite")
    etcd = request.getfixturevalue("kapiserver_etcd") if name == "etcd3" else None
    return StorageChoice(name, etcd)


def kapiserver_factory(tmp_path, kapiserver_storage):
    """Start kapiservers for one test: ``kapiserver_factory(config=, plugins=, workers=)``."""
    started = []

    def factory(config=None, plugins=(), workers: int = 1, args=(), env=None, start=True,
                name: str | None = None, **kwargs):
        workdir = tmp_path / (name or f"kapiserver-{len(started)}")
        config = {**kapiserver_storage.config(), **(config or {})}
        server = KapiserverProcess(str(workdir), config, plugins, workers, args, env, **kwargs)
        started.append(server)
        return server.start() if start else server

    yield factory
    for server in started:
        server.stop()


if pytest is not None:
    kapiserver_factory = pytest.fixture(kapiserver_factory)
    kapiserver_etcd = pytest.fixture(scope="session")(kapiserver_etcd)
    kapiserver_storage = pytest.fixture(scope="module")(kapiserver_storage)
