"""EtcdProcess: a real etcd (v3) on free loopback ports, for tests and benchmarks.

Starts the ``etcd`` binary (Debian's ``etcd-server`` installs ``/usr/bin/etcd``) with its
data dir under a test's temporary directory, one member or a member of a cluster of
several, optionally serving TLS with client certificates. Nothing listens beyond
127.0.0.1; ``stop()`` ends the process it started (``kill()`` as ``kill -9`` would).
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import time

import requests

ETCD = shutil.which("etcd") or "/usr/bin/etcd"


def etcd_available() -> bool:
    """Whether an etcd binary is installed (``apt-get install etcd-server``)."""
    return os.access(ETCD, os.X_OK)


def _free_port() -> int:
    from .testing import free_port

    return free_port()


class EtcdProcess:
    """One etcd member. ``cluster`` (name -> peer URL) makes it a member of that cluster.

    ``tls`` is ``(ca_file, cert_file, key_file)``: etcd then serves clients over HTTPS and
    asks for a client certificate signed by ``ca_file``; ``client`` is ``(cert_file,
    key_file)`` of one, which the readiness probe presents. ``progress_notify`` is etcd's
    ``--experimental-watch-progress-notify-interval`` (seconds).
    """

    def __init__(self, workdir: str, name: str = "etcd0", client_port: int | None = None,
                 peer_port: int | None = None, cluster: dict | None = None,
                 tls: tuple[str, str, str] | None = None, progress_notify: float = 1.0,
                 extra_args=(), client: tuple[str, str] | None = None):
        self.workdir = os.path.abspath(workdir)
        os.makedirs(self.workdir, exist_ok=True)
        self.name = name
        self.client_port = client_port or _free_port()
        self.peer_port = peer_port or _free_port()
        self.tls = tls
        self.client = client
        scheme = "https" if tls else "http"
        self.url = f"{scheme}://127.0.0.1:{self.client_port}"
        self.peer_url = f"http://127.0.0.1:{self.peer_port}"
        self.cluster = cluster or {name: self.peer_url}
        self.data_dir = os.path.join(self.workdir, "data")
        self.log_file = os.path.join(self.workdir, "etcd.log")
        self.progress_notify = progress_notify
        self.extra_args = list(extra_args)
        self.process: subprocess.Popen | None = None

    def command(self) -> list[str]:
        command = [
            ETCD, "--name", self.name, "--data-dir", self.data_dir,
            "--listen-client-urls", self.url, "--advertise-client-urls", self.url,
            "--listen-peer-urls", self.peer_url, "--initial-advertise-peer-urls", self.peer_url,
            "--initial-cluster", ",".join(f"{n}={u}" for n, u in self.cluster.items()),
            "--initial-cluster-state", "new", "--initial-cluster-token", "kapiserver-test",
            "--experimental-watch-progress-notify-interval", f"{self.progress_notify}s",
            # Loopback: a short election timeout elects the first leader in a fraction of
            # a second (etcd's 1 s default makes every start wait for it).
            "--heartbeat-interval", "50", "--election-timeout", "500",
            "--logger", "zap", "--log-level", "warn",
        ]
        if self.tls:
            ca, cert, key = self.tls
            command += ["--trusted-ca-file", ca, "--cert-file", cert, "--key-file", key,
                        "--client-cert-auth"]
        return command + self.extra_args

    def start(self, wait: bool = True, timeout: float = 30) -> "EtcdProcess":
        self._log = open(self.log_file, "ab")
        self.process = subprocess.Popen(self.command(), stdout=self._log,
                                        stderr=subprocess.STDOUT, cwd=self.workdir)
        # A test process that ends without its teardown (a crash, a killed worker) must
        # not leave its member running.
        atexit.register(self.stop)
        if wait:
            self.wait_ready(timeout)
        return self

    def _session_kwargs(self) -> dict:
        if not self.tls:
            return {}
        return {"verify": self.tls[0], "cert": self.client}

    def healthy(self) -> bool:
        try:
            answer = requests.get(self.url + "/health", timeout=1, **self._session_kwargs())
            return answer.status_code == 200 and answer.json().get("health") == "true"
        except (requests.RequestException, ValueError):
            return False

    def wait_ready(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"etcd exited with {self.process.returncode}:\n{self.log()}")
            if self.healthy():
                return
            time.sleep(0.05)
        raise RuntimeError(f"etcd not healthy after {timeout}s:\n{self.log()}")

    def kill(self) -> None:
        """End the member at once (SIGKILL), as a crash would."""
        self.stop(signal.SIGKILL)

    def stop(self, sig=signal.SIGTERM, timeout: float = 20) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self._log.close()
        self.process = None
        atexit.unregister(self.stop)

    def restart(self, timeout: float = 30) -> "EtcdProcess":
        """Start the member again on the same ports and data dir (after ``stop``/``kill``)."""
        self.stop()
        command = self.command()
        # A member that has data rejoins its cluster: --initial-cluster-state is ignored.
        return self.start(timeout=timeout) if command else self

    def log(self) -> str:
        try:
            with open(self.log_file, errors="replace") as f:
                return f.read()
        except OSError:
            return ""


class EtcdCluster:
    """``size`` etcd members on loopback forming one cluster; ``urls`` for --etcd-servers."""

    def __init__(self, workdir: str, size: int = 3, **kwargs):
        peers = {f"etcd{i}": f"http://127.0.0.1:{_free_port()}" for i in range(size)}
        self.members = [
            EtcdProcess(os.path.join(workdir, name), name=name,
                        peer_port=int(url.rsplit(":", 1)[1]), cluster=peers, **kwargs)
            for name, url in peers.items()]

    @property
    def urls(self) -> list[str]:
        return [m.url for m in self.members]

    def start(self, timeout: float = 60) -> "EtcdCluster":
        for member in self.members:  # a member waits for a quorum of peers: start all first
            member.start(wait=False)
        for member in self.members:
            member.wait_ready(timeout)
        return self

    def stop(self) -> None:
        for member in self.members:
            member.stop()
