"""``kapiserver snapshot save|restore`` and ``kapiserver kubeconfig`` on real servers:
a snapshot taken while the server serves writes, restored once it is stopped; a restore
refused while it runs; etcd's own snapshot on the etcd3 backend."""

import os
import subprocess
import sys
import threading

import pytest

ADMIN = {"user": "admin", "groups": ["system:masters"]}


def kapiserver(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "kapiserver", *args], capture_output=True,
                          text=True, timeout=timeout)


def configmap(server, name, namespace="default"):
    response = server.request("POST", f"/api/v1/namespaces/{namespace}/configmaps", json={
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
        "data": {"name": name}}, **ADMIN)
    assert response.status_code == 201, response.text
    return int(response.json()["metadata"]["resourceVersion"])


def names(server, namespace="default"):
    items = server.get(f"/api/v1/namespaces/{namespace}/configmaps", **ADMIN).json()["items"]
    return {item["metadata"]["name"] for item in items}


def test_save_while_serving_then_restore_once_stopped(kapiserver_factory, tmp_path):
    server = kapiserver_factory(name="server")
    configmap(server, "before")
    # Writes keep coming while the snapshot is taken.
    stop, during = threading.Event(), []

    def write():
        while not stop.is_set() and len(during) < 500:
            during.append(configmap(server, f"during-{len(during)}"))

    writer = threading.Thread(target=write)
    writer.start()
    try:
        while len(during) < 3:
            threading.Event().wait(0.05)
        saved = kapiserver("snapshot", "save", str(tmp_path / "snap.db"), "--data-dir",
                           server.data_dir)
    finally:
        stop.set()
        writer.join(120)
    assert saved.returncode == 0, saved.stderr
    revision = int(saved.stdout.split("revision ")[1].split(",")[0])
    assert saved.stdout.startswith(f"Snapshot saved at {tmp_path / 'snap.db'}: revision "
                                   f"{revision}, ")
    configmap(server, "after")

    refused = kapiserver("snapshot", "restore", str(tmp_path / "snap.db"), "--data-dir",
                         server.data_dir)
    assert refused.returncode == 1
    assert refused.stderr == (
        f"kapiserver snapshot restore: {server.data_dir}/kapiserver.db is in use (is a "
        f"kapiserver serving {server.data_dir}?): stop it before restoring\n")
    assert "after" in names(server)  # the refusal changed nothing

    server.stop()
    restored = kapiserver("snapshot", "restore", str(tmp_path / "snap.db"), "--data-dir",
                          server.data_dir)
    assert restored.returncode == 0, restored.stderr
    assert restored.stdout.startswith(f"Restored {tmp_path / 'snap.db'}: revision "
                                      f"{revision}, ")
    assert f"into {server.data_dir}; it replaced a store at revision " in restored.stdout

    again = kapiserver_factory(name="server")  # the same data dir, served again
    # Exactly what was stored at the snapshot's revision: "before", the writes up to it.
    expected = {"before", "kube-root-ca.crt"} | {
        f"during-{i}" for i, rv in enumerate(during) if rv <= revision}
    assert names(again) == expected
    result = again.kubectl("get", "configmap", "before", "-o", "jsonpath={.data.name}")
    assert result.stdout == "before", result.stderr
    # And it goes on from there.
    assert configmap(again, "new") > revision


def test_kubeconfig_prints_the_admin_kubeconfig(kapiserver_factory, tmp_path):
    server = kapiserver_factory()
    result = kapiserver("kubeconfig", "--data-dir", server.data_dir)
    assert result.returncode == 0, result.stderr
    with open(os.path.join(server.data_dir, "admin.kubeconfig")) as f:
        assert result.stdout == f.read()
    (tmp_path / "printed").write_text(result.stdout)
    who = subprocess.run(["kubectl", "--kubeconfig", str(tmp_path / "printed"), "auth",
                          "whoami", "-o", "jsonpath={.status.userInfo.username}"],
                         capture_output=True, text=True, timeout=60)
    assert who.stdout == "admin", who.stderr

    missing = kapiserver("kubeconfig", "--data-dir", str(tmp_path / "nothing"))
    assert missing.returncode == 1
    assert missing.stderr == (f"kapiserver kubeconfig: no admin kubeconfig in "
                              f"{tmp_path / 'nothing'}: `kapiserver serve` writes it when it "
                              "starts\n")


def test_usage_and_bad_input(tmp_path):
    assert kapiserver("snapshot").returncode == 2
    help_ = kapiserver("snapshot", "--help")
    assert help_.returncode == 0 and help_.stdout.startswith("usage: kapiserver snapshot save")
    for args in (["snapshot", "load", "x"], ["snapshot", "save"],
                 ["snapshot", "save", "--data-dir", "d"]):
        result = kapiserver(*args)
        assert result.returncode == 2, args
        assert result.stderr.startswith("usage: kapiserver snapshot save FILE"), args
    result = kapiserver("snapshot", "save", str(tmp_path / "s.db"), "--data-dir",
                        str(tmp_path / "empty"))
    assert result.returncode == 1
    assert result.stderr == (f"kapiserver snapshot save: no store to save: "
                             f"{tmp_path / 'empty' / 'kapiserver.db'} does not exist\n")
    (tmp_path / "junk.db").write_bytes(b"junk" * 1000)
    result = kapiserver("snapshot", "restore", str(tmp_path / "junk.db"), "--data-dir",
                        str(tmp_path / "d"))
    assert result.returncode == 1
    assert result.stderr == (f"kapiserver snapshot restore: {tmp_path / 'junk.db'} is not a "
                             "kapiserver store: file is not a database\n")
    # An unknown option is the server's own start-up error.
    result = kapiserver("snapshot", "save", str(tmp_path / "s.db"), "--storage-backend", "x")
    assert result.returncode == 1
    assert "--storage-backend" in result.stderr


def test_etcd_snapshot_is_etcds_own(kapiserver_factory, kapiserver_etcd, tmp_path):
    prefix = "/kapiserver-snapshot-test"
    options = ["--storage-backend", "etcd3", "--etcd-servers", kapiserver_etcd.url,
               "--etcd-prefix", prefix]
    server = kapiserver_factory(config={"storage-backend": "etcd3",
                                        "etcd-servers": [kapiserver_etcd.url],
                                        "etcd-prefix": prefix})
    configmap(server, "in-etcd")
    saved = kapiserver("snapshot", "save", str(tmp_path / "etcd.db"), *options)
    assert saved.returncode == 0, saved.stderr
    size = os.path.getsize(tmp_path / "etcd.db")
    assert saved.stdout == (f"Snapshot saved at {tmp_path / 'etcd.db'} ({size} bytes, etcd's "
                            f"own snapshot of {kapiserver_etcd.url}: restore it with "
                            "`etcdutl snapshot restore`)\n")
    data = (tmp_path / "etcd.db").read_bytes()
    # A bbolt file (etcd's backend) holding the object under kapiserver's prefix.
    assert int.from_bytes(data[16:20], "little") == 0xED0CDAED
    assert f"{prefix}/configmaps/default/in-etcd".encode() in data

    refused = kapiserver("snapshot", "restore", str(tmp_path / "etcd.db"), *options)
    assert refused.returncode == 1
    assert refused.stderr == ("kapiserver snapshot restore: restore is for the SQLite store: "
                              "restore an etcd snapshot with `etcdutl snapshot restore`, "
                              "which makes a new etcd member's data dir\n")
