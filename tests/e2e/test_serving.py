"""Serving end to end: kubectl and the Python client against a real gunicorn/TLS server."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import requests
import yaml

from kapiserver.testing import KapiserverProcess, assert_status, free_port

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_kubectl_version_reports_api_level_and_kapiserver(server):
    result = server.kubectl("version", "-o", "json", check=True)
    version = json.loads(result.stdout)["serverVersion"]
    assert version["major"] == "1" and version["minor"] == "32"
    assert version["gitVersion"].startswith("v1.32.0+kapiserver.")
    assert "WARNING" not in result.stderr  # no version skew warning from kubectl 1.32


def test_version_matches_upstream_shape(server):
    response = server.get("/version", user="admin", groups=["system:masters"])
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    assert list(response.json()) == ["major", "minor", "gitVersion", "gitCommit", "gitTreeState",
                                     "buildDate", "goVersion", "compiler", "platform"]
    # Upstream writes /version with json.MarshalIndent: two-space indent, no newline.
    assert response.text.startswith('{\n  "major": "1",') and not response.text.endswith("\n")


def test_readyz_verbose_through_kubectl(server):
    """The checks kapiserver shares with kube-apiserver come in upstream's order
    (``readyz-verbose.json``), its own after them, ``shutdown`` last."""
    result = server.kubectl("get", "--raw", "/readyz?verbose", check=True)
    assert result.stdout == ("[+]ping ok\n[+]log ok\n"
                             "[+]poststarthook/priority-and-fairness-config-consumer ok\n"
                             "[+]poststarthook/priority-and-fairness-filter ok\n"
                             "[+]poststarthook/storage-object-count-tracker-hook ok\n"
                             "[+]poststarthook/crd-informer-synced ok\n"
                             "[+]poststarthook/start-system-namespaces-controller ok\n"
                             "[+]poststarthook/start-cluster-authentication-info-controller ok\n"
                             "[+]poststarthook/rbac/bootstrap-roles ok\n"
                             "[+]poststarthook/scheduling/bootstrap-system-priority-classes ok\n"
                             "[+]poststarthook/priority-and-fairness-config-producer ok\n"
                             "[+]poststarthook/bootstrap-controller ok\n"
                             "[+]poststarthook/start-kube-aggregator-informers ok\n"
                             "[+]poststarthook/bootstrap-controller-endpoints ok\n"
                             "[+]poststarthook/probe-slow ok\n"
                             "[+]shutdown ok\nreadyz check passed\n")
    with open("/work/shared/reference/readyz-verbose.json") as f:
        upstream = json.load(f)["response"]["body"].splitlines()
    ours = result.stdout.splitlines()
    shared = [line for line in ours if line in upstream]
    assert shared == [line for line in upstream if line in ours]


def test_health_endpoints_text_format(server):
    for kind in ("healthz", "livez", "readyz"):
        response = server.get(f"/{kind}", user="admin")
        assert (response.status_code, response.text) == (200, "ok")
        assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        verbose = server.get(f"/{kind}?verbose", user="admin").text
        assert verbose.endswith(f"{kind} check passed\n")
    assert "[+]shutdown ok" not in server.get("/livez?verbose", user="admin").text
    excluded = server.get("/readyz?verbose&exclude=ping&exclude=nope", user="admin").text
    assert "[+]ping excluded: ok\n" in excluded
    assert 'warn: some health checks cannot be excluded: no matches for "nope"\n' in excluded
    assert server.get("/readyz/ping", user="admin").text == "ok"
    assert server.get("/livez/poststarthook/probe-slow", user="admin").text == "ok"
    missing = server.get("/readyz/nope", user="admin")
    assert (missing.status_code, missing.text) == (404, "404 page not found\n")


def test_every_response_has_audit_id_and_cache_control(server):
    for path in ("/version", "/readyz", "/no/such/path", "/apis/nope/v1/things"):
        response = server.get(path, user="admin")
        assert len(response.headers["Audit-Id"]) == 36
        assert response.headers["Cache-Control"] == "no-cache, private"
    echoed = server.get("/version", user="admin", headers={"Audit-ID": "my-audit-id"})
    assert echoed.headers["Audit-Id"] == "my-audit-id"


def test_no_server_header_as_go_sends_none(server):
    for path in ("/version", "/api/v1/namespaces", "/healthz", "/nope"):
        response = server.get(path, user="admin", groups=["system:masters"])
        assert "Server" not in response.headers, path


def test_python_client_reads_version(server):
    from kubernetes import client

    with server.python_client() as api_client:
        info = client.VersionApi(api_client).get_code()
    assert (info.major, info.minor) == ("1", "32")


def test_second_start_reuses_state_and_certificates(kapiserver_factory):
    first = kapiserver_factory(name="restart")
    pki = first.pki
    before = {path: open(path, "rb").read() for path in
              (pki.ca_cert_file, pki.serving_cert_file, pki.admin_kubeconfig_file)}
    assert first.stop() == 0
    second = KapiserverProcess(first.workdir, port=first.port).start()
    try:
        after = {path: open(path, "rb").read() for path in before}
        assert after == before
        result = subprocess.run(["kubectl", "--kubeconfig", pki.admin_kubeconfig_file,
                                 "get", "--raw", "/readyz"], capture_output=True, text=True)
        assert result.stdout == "ok", result.stderr
    finally:
        assert second.stop() == 0


def test_serving_certificate_is_reissued_for_new_sans(kapiserver_factory):
    first = kapiserver_factory(name="sans")
    ca_before = open(first.pki.ca_cert_file, "rb").read()
    serving_before = open(first.pki.serving_cert_file, "rb").read()
    first.stop()
    second = KapiserverProcess(first.workdir, port=first.port,
                               config={"tls-sans": ["kapiserver.example", "127.0.0.2"]}).start()
    try:
        from cryptography import x509

        cert = x509.load_pem_x509_certificate(open(second.pki.serving_cert_file, "rb").read())
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        assert "kapiserver.example" in sans.get_values_for_type(x509.DNSName)
        assert open(second.pki.ca_cert_file, "rb").read() == ca_before
        assert open(second.pki.serving_cert_file, "rb").read() != serving_before
    finally:
        second.stop()


def test_default_data_dir_is_dot_kapiserver_in_cwd(tmp_path):
    port = free_port()
    # No PYTHONPATH: this runs the installed package exactly as a user would.
    log = open(tmp_path / "server.log", "wb")
    process = subprocess.Popen([sys.executable, "-m", "kapiserver", "serve", "--secure-port",
                                str(port), "--workers", "1"], cwd=tmp_path,
                               stdout=log, stderr=subprocess.STDOUT)
    try:
        kubeconfig = tmp_path / ".kapiserver" / "admin.kubeconfig"
        deadline = time.monotonic() + 20
        result = None
        while time.monotonic() < deadline:
            if kubeconfig.exists():
                result = subprocess.run(["kubectl", "--kubeconfig", str(kubeconfig), "get",
                                         "--raw", "/readyz"], capture_output=True, text=True)
                if result.stdout == "ok":
                    break
            time.sleep(0.1)
        assert result is not None and result.stdout == "ok", (tmp_path / "server.log").read_text()
        config = yaml.safe_load(kubeconfig.read_text())
        assert config["clusters"][0]["cluster"]["server"] == f"https://127.0.0.1:{port}"
        assert (tmp_path / ".kapiserver" / "pki" / "ca.crt").exists()
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0


def test_gunicorn_conf_file_runs_the_same_app(tmp_path):
    port = free_port()
    config_file = tmp_path / "kapiserver.yaml"
    config_file.write_text(yaml.safe_dump({"data-dir": str(tmp_path / "data"),
                                           "secure-port": port, "workers": 1}))
    process = KapiserverProcess(str(tmp_path / "gunicorn"), port=port, command=[
        sys.executable, "-m", "gunicorn", "-c", os.path.join(REPO, "conf", "gunicorn.conf.py")],
        env={"KAPISERVER_CONFIG": str(config_file)})
    process.data_dir = str(tmp_path / "data")
    process.start()
    try:
        response = process.get("/version", user="admin", groups=["system:masters"])
        assert response.json()["gitVersion"].startswith("v1.32.0+kapiserver.")
        assert response.headers["Audit-Id"]
        assert "KapiserverWorker" in process.log()
        result = process.kubectl("get", "--raw", "/readyz?verbose", check=True)
        assert result.stdout.endswith("readyz check passed\n")
    finally:
        assert process.stop() == 0


def test_plain_http_is_answered_as_gos_server_answers_it(server):
    response = requests.get(server.url.replace("https://", "http://") + "/version", timeout=5)
    assert response.status_code == 400
    assert response.text == "Client sent an HTTP request to an HTTPS server.\n"


def test_a_failed_handshake_is_one_log_line(server):
    import socket
    import ssl

    host, port = server.url.split("//")[1].rsplit(":", 1)
    untrusting = ssl.create_default_context()  # the server's CA is not among its roots
    before = len(server.log())
    with pytest.raises(ssl.SSLError):
        with socket.create_connection((host, int(port)), timeout=5) as raw:
            untrusting.wrap_socket(raw, server_hostname=host)
    deadline = time.monotonic() + 5
    while "TLS handshake error" not in server.log()[before:] and time.monotonic() < deadline:
        time.sleep(0.05)
    written = server.log()[before:]
    lines = [line for line in written.splitlines() if "TLS handshake error" in line]
    assert len(lines) == 1 and "TLSV1_ALERT_UNKNOWN_CA" in lines[0], written
    assert "Traceback" not in written


def test_sigterm_before_a_worker_installs_its_handlers_is_not_lost(tmp_path):
    # post_fork runs in the new worker before it installs its signal handlers; holding it
    # there makes the master's SIGTERM land in that window every time. gunicorn alone
    # loses it and waits the whole graceful timeout (10 s here) before killing the worker.
    port = free_port()
    config_file = tmp_path / "kapiserver.yaml"
    config_file.write_text(yaml.safe_dump({"data-dir": str(tmp_path / "data"),
                                           "secure-port": port, "workers": 1,
                                           "shutdown-grace-period": 10}))
    gunicorn_conf = tmp_path / "gunicorn.conf.py"
    gunicorn_conf.write_text(
        f"exec(open({os.path.join(REPO, 'conf', 'gunicorn.conf.py')!r}).read())\n"
        "import time\n"
        "def post_fork(server, worker):\n"
        "    time.sleep(1.5)\n")
    log_file = tmp_path / "server.log"
    with open(log_file, "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", str(gunicorn_conf)], cwd=tmp_path,
            env={**os.environ, "KAPISERVER_CONFIG": str(config_file),
                 "PYTHONPATH": os.pathsep.join(sys.path)},
            stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 20
            while "Booting worker" not in log_file.read_text() and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.3)  # inside post_fork's 1.5 s
            started = time.monotonic()
            process.send_signal(signal.SIGTERM)
            assert process.wait(30) == 0
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert time.monotonic() - started < 8, log_file.read_text()
    assert "graceful timeout" not in log_file.read_text().lower()


def test_workers_serving_certificates_do_not_load_cryptography(kapiserver_factory):
    # Memory: cryptography's native library is ~8 MiB in every worker that maps it. The
    # handshake verifies client certificates, so serving them needs no second check.
    server = kapiserver_factory(workers=2)
    for _ in range(8):
        assert server.get("/api/v1/namespaces", user="admin",
                          groups=["system:masters"]).status_code == 200
    workers = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            if parent == server.process.pid:
                workers.append(entry)
    assert len(workers) == 2
    for pid in workers:
        with open(f"/proc/{pid}/maps") as f:
            assert "cryptography" not in f.read()


def test_connections_during_shutdown_leave_no_traceback(kapiserver_factory):
    """Clients connecting while the server stops are served or turned away, quietly."""
    import socket
    import ssl
    import threading

    server = kapiserver_factory(workers=2)
    cert, key = server.client_cert("admin", ["system:masters"])
    context = ssl.create_default_context(cafile=server.ca_file)
    context.load_cert_chain(cert, key)
    stop_at = time.monotonic() + 4
    answers = []

    def client():
        for _ in range(2000):
            if time.monotonic() > stop_at:
                return
            try:
                with context.wrap_socket(socket.create_connection(("127.0.0.1", server.port),
                                                                  timeout=2),
                                         server_hostname="127.0.0.1") as tls:
                    tls.sendall(b"GET /version HTTP/1.1\r\nHost: x\r\nConnection: close"
                                b"\r\n\r\n")
                    answers.append(tls.recv(12))
            except OSError:
                answers.append(b"")

    threads = [threading.Thread(target=client) for _ in range(3)]
    for thread in threads:
        thread.start()
    time.sleep(1)
    assert server.stop() == 0
    for thread in threads:
        thread.join()
    assert b"HTTP/1.1 200" in answers
    assert "Traceback" not in server.log()



PROBE = "/apis/probe.kapiserver.test/v1/namespaces/default"


@pytest.mark.parametrize("value,message", [
    ("abc", 'time: invalid duration "abc"'), ("5", 'time: missing unit in duration "5"'),
    ("5x", 'time: unknown unit "x" in duration "5x"')])
def test_unparsable_timeout_parameter_is_a_bad_request(server, value, message):
    response = server.get(f"/api/v1/namespaces?timeout={value}", user="admin",
                          groups=["system:masters"])
    assert_status(response, 400, "BadRequest",
                  f"invalid timeout specified in the request URL - {message}")


def test_request_out_of_time_gets_upstreams_504(server):
    started = time.monotonic()
    response = server.get(f"{PROBE}/blocks/t?seconds=5&timeout=500ms", user="admin",
                          groups=["system:masters"])
    assert time.monotonic() - started < 4
    assert_status(response, 504, "Timeout", "Timeout: request did not complete within "
                  "requested timeout - context deadline exceeded")
    assert response.json()["details"] == {}


def test_timeout_of_zero_or_above_the_maximum_means_the_default(server):
    for value in ("0s", "10m"):
        response = server.get(f"{PROBE}/blocks/u?seconds=1&timeout={value}", user="admin",
                              groups=["system:masters"])
        assert response.status_code == 200, value
