"""``tox -e bench``: figures for kapiserver against the bare-Flask ceiling, from one run.

Start-to-ready on an empty data dir, idle RSS of all server processes, and GET
throughput/latency at 1 and 16 keep-alive connections — kapiserver (``/version``
through the whole filter chain) beside a bare Flask app under the same gunicorn
settings (gevent workers, TLS, 2 workers). Compare ratios within one run only.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

from kapiserver.testing import KapiserverProcess, free_port

from . import load


def memory_mib(pid: int) -> tuple[float, float]:
    """(RSS, PSS) of ``pid`` and its children, in MiB (PSS counts shared pages once)."""
    pids = [pid]
    try:
        children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True,
                                  text=True).stdout.split()
        pids += [int(c) for c in children]
    except OSError:
        pass
    rss = pss = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1])
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1])
        except OSError:
            pass
    return rss / 1024, pss / 1024


def start_to_ready(workdir: str, runs: int = 3) -> list[float]:
    times = []
    for i in range(runs):
        server = KapiserverProcess(os.path.join(workdir, f"ready-{i}"), workers=2)
        start = time.monotonic()
        server.start()
        times.append(time.monotonic() - start)
        server.stop()
    return times


def ceiling_server(workdir: str, pki_dir_server: KapiserverProcess):
    """Run the bare Flask app under kapiserver's gunicorn settings and TLS files."""
    port = free_port()
    pki = pki_dir_server.pki
    code = (
        "import sys, ssl\n"
        "from gunicorn.app.base import BaseApplication\n"
        "from kapiserver.server.serving import WORKER_CLASS, KEEPALIVE, ssl_context\n"
        "from tests.benchmarks.ceiling import create_app\n"
        "class App(BaseApplication):\n"
        "    def load_config(self):\n"
        f"        for k, v in dict(bind=['127.0.0.1:{port}'], workers=2, worker_class=WORKER_CLASS,\n"
        f"                         worker_connections=10000, certfile={pki.serving_cert_file!r},\n"
        f"                         keyfile={pki.serving_key_file!r}, ca_certs={pki.client_ca_bundle_file!r},\n"
        "                         cert_reqs=ssl.CERT_OPTIONAL, ssl_context=ssl_context,\n"
        "                         keepalive=KEEPALIVE, loglevel='warning',\n"
        "                         control_socket_disable=True).items():\n"
        "            self.cfg.set(k, v)\n"
        "    def load(self):\n"
        "        return create_app()\n"
        "App().run()\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    process = subprocess.Popen([sys.executable, "-c", code], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return process, port


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per load run")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as workdir:
        ready = start_to_ready(workdir)
        print(f"start to ready (empty data dir, 2 workers): "
              f"{', '.join(f'{t:.2f}s' for t in ready)}")

        server = KapiserverProcess(os.path.join(workdir, "main"), workers=2,
                                   config={"log-level": "warning"}).start()
        time.sleep(1.0)
        print("idle memory, all server processes: RSS %.1f MiB, PSS %.1f MiB"
              % memory_mib(server.process.pid))
        ceiling, port = ceiling_server(workdir, server)
        try:
            cert, key = server.client_cert("admin", ["system:masters"])
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                try:
                    load.run("127.0.0.1", port, "/", server.ca_file, cert, key, 1, 0.2)
                    break
                except Exception:
                    time.sleep(0.2)
            print(f"{'scenario':<34}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'errors':>8}")
            figures = {}
            for connections in (1, 16):
                for name, target_port, path in (("kapiserver GET /version", server.port, "/version"),
                                                ("ceiling GET (bare Flask)", port, "/")):
                    rate, p50, p99, errors = load.run("127.0.0.1", target_port, path,
                                                      server.ca_file, cert, key, connections,
                                                      args.duration)
                    figures[(name, connections)] = rate
                    print(f"{name + f' x{connections}':<34}{rate:>10.0f}{p50:>10.2f}"
                          f"{p99:>10.2f}{errors:>8}")
            print("loaded memory, all server processes: RSS %.1f MiB, PSS %.1f MiB"
                  % memory_mib(server.process.pid))
            for connections in (1, 16):
                ratio = (figures[("kapiserver GET /version", connections)]
                         / max(figures[("ceiling GET (bare Flask)", connections)], 1))
                print(f"kapiserver / ceiling at {connections} connection(s): {ratio:.0%}")
        finally:
            ceiling.terminate()
            ceiling.wait(30)
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
