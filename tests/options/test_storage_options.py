"""The storage options: --storage-backend and the --etcd-* family, checked together at start."""

import subprocess
import sys


def serve(*args, timeout=60):
    return subprocess.run([sys.executable, "-m", "kapiserver", "serve", *args],
                          capture_output=True, text=True, timeout=timeout)


def test_etcd3_needs_servers_and_valid_urls(tmp_path):
    data_dir = tmp_path / "data"
    result = serve("--data-dir", str(data_dir), "--storage-backend", "etcd3")
    assert result.returncode == 1
    assert "--etcd-servers: required with --storage-backend etcd3" in result.stderr
    result = serve("--data-dir", str(data_dir), "--storage-backend", "etcd3",
                   "--etcd-servers", "127.0.0.1:2379,ftp://h:1", "--etcd-prefix", "registry")
    assert "--etcd-servers: '127.0.0.1:2379' is not an etcd server URL " \
           "(http(s)://host:port)" in result.stderr
    assert "'ftp://h:1' is not an etcd server URL" in result.stderr
    assert "--etcd-prefix: 'registry' must start with /" in result.stderr
    assert not data_dir.exists()


def test_unknown_backend_and_etcd_options_without_etcd(tmp_path):
    result = serve("--data-dir", str(tmp_path / "d"), "--storage-backend", "etcd2")
    assert "--storage-backend: Must be one of: sqlite, etcd3." in result.stderr
    result = serve("--data-dir", str(tmp_path / "d"), "--etcd-servers", "http://127.0.0.1:2379")
    assert ("--etcd-servers: only applies with --storage-backend etcd3 (the storage backend "
            "is sqlite)") in result.stderr


def test_etcd_tls_files_come_in_pairs(tmp_path):
    from kapiserver.pki import PKI

    pki = PKI(str(tmp_path / "pki"))
    pki.ensure_serving_cert(["localhost"])
    result = serve("--data-dir", str(tmp_path / "d"), "--storage-backend", "etcd3",
                   "--etcd-servers", "https://127.0.0.1:2379",
                   "--etcd-cafile", pki.ca_cert_file, "--etcd-certfile", pki.serving_cert_file)
    assert "--etcd-keyfile: required when --etcd-certfile is set" in result.stderr
    result = serve("--data-dir", str(tmp_path / "d"), "--storage-backend", "etcd3",
                   "--etcd-servers", "http://127.0.0.1:2379,https://127.0.0.1:2380",
                   "--etcd-cafile", str(tmp_path / "missing.crt"))
    assert "--etcd-servers: mixes http and https servers" in result.stderr
    assert f"--etcd-cafile: {tmp_path / 'missing.crt'}: no such file" in result.stderr
