"""Everyday kubectl flows end to end: replace, edit, wait, get -w, patch, dry runs."""

import os
import select
import subprocess
import sys
import threading
import time

import pytest
import yaml

ADMIN = dict(user="admin", groups=["system:masters"])
NS = "flows"


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    server = KapiserverProcess(str(tmp_path_factory.mktemp("flows")), workers=2).start()
    server.kubectl("create", "namespace", NS, check=True)
    yield server
    server.stop()


def cm(name: str, **data) -> str:
    return yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": name, "namespace": NS}, "data": data})


def test_create_apply_twice_and_replace(api):
    assert api.kubectl("create", "-f", "-", input=cm("r", a="1"), check=True).stdout == \
        "configmap/r created\n"
    assert api.kubectl("apply", "-f", "-", input=cm("app", a="1"), check=True).stdout == \
        "configmap/app created\n"
    assert api.kubectl("apply", "-f", "-", input=cm("app", a="1"), check=True).stdout == \
        "configmap/app unchanged\n"
    assert api.kubectl("replace", "-f", "-", input=cm("r", a="2"), check=True).stdout == \
        "configmap/r replaced\n"
    got = api.kubectl("-n", NS, "get", "cm", "r", "-o", "jsonpath={.data.a}", check=True)
    assert got.stdout == "2"
    # replace is a PUT without a resourceVersion: unconditional, as upstream allows for
    # ConfigMaps; a stale one is a conflict.
    stale = yaml.safe_load(cm("r", a="3"))
    stale["metadata"]["resourceVersion"] = "1"
    result = api.kubectl("replace", "-f", "-", input=yaml.safe_dump(stale))
    assert result.returncode != 0
    assert 'Operation cannot be fulfilled on configmaps "r": the object has been modified' \
        in result.stderr


def test_edit_with_a_scripted_editor(api, tmp_path, monkeypatch):
    api.kubectl("create", "-f", "-", input=cm("edited", color="blue"), check=True)
    editor = tmp_path / "editor.py"
    editor.write_text("import sys\n"
                      "path = sys.argv[-1]\n"
                      "text = open(path).read().replace('color: blue', 'color: green')\n"
                      "open(path, 'w').write(text)\n")
    monkeypatch.setenv("KUBE_EDITOR", f"{sys.executable} {editor}")
    result = api.kubectl("-n", NS, "edit", "cm", "edited", check=True)
    assert result.stdout == "configmap/edited edited\n"
    got = api.kubectl("-n", NS, "get", "cm", "edited", "-o", "jsonpath={.data.color}",
                      check=True)
    assert got.stdout == "green"


def test_wait_for_jsonpath_and_for_delete(api):
    api.kubectl("create", "-f", "-", input=cm("waited", state="pending"), check=True)

    def later(*args):
        time.sleep(1.0)
        api.kubectl(*args, check=True)

    flip = threading.Thread(target=later, args=(
        "-n", NS, "patch", "cm", "waited", "--type=merge", "-p", '{"data":{"state":"ready"}}'))
    flip.start()
    result = api.kubectl("-n", NS, "wait", "cm/waited", "--for=jsonpath={.data.state}=ready",
                         "--timeout=20s")
    flip.join()
    assert result.returncode == 0, result.stderr
    assert result.stdout == "configmap/waited condition met\n"

    gone = threading.Thread(target=later, args=("-n", NS, "delete", "cm", "waited"))
    gone.start()
    result = api.kubectl("-n", NS, "wait", "cm/waited", "--for=delete", "--timeout=20s")
    gone.join()
    assert result.returncode == 0, result.stderr
    assert result.stdout == "configmap/waited condition met\n"


def test_get_watch_prints_each_change_within_a_second(api):
    # (not "n": a YAML 1.1 reader, as kubectl's, takes that key for false)
    api.kubectl("create", "-f", "-", input=cm("watched", count="0"), check=True)
    process = subprocess.Popen(
        ["kubectl", "--kubeconfig", api.kubeconfig(), "-n", NS, "get", "cm", "watched", "-w",
         "-o", "jsonpath={.data.count}{\"\\n\"}", "--request-timeout=30s"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        output = _read_until(process, "0\n", 10)
        assert output.endswith("0\n")
        for n in range(1, 4):
            api.kubectl("-n", NS, "patch", "cm", "watched", "--type=merge", "-p",
                        f'{{"data":{{"count":"{n}"}}}}', check=True)
            started = time.monotonic()
            output = _read_until(process, f"{n}\n", 5)
            assert output.endswith(f"{n}\n")
            assert time.monotonic() - started < 1.0
    finally:
        process.terminate()
        process.wait(10)


def _read_until(process, suffix: str, timeout: float) -> str:
    output, deadline = "", time.monotonic() + timeout
    while time.monotonic() < deadline and not output.endswith(suffix):
        ready, _, _ = select.select([process.stdout], [], [], 0.1)
        if ready:
            output += os.read(process.stdout.fileno(), 4096).decode()
    return output


def test_patch_types_and_server_dry_run(api):
    api.kubectl("create", "-f", "-", input=cm("patched", a="1"), check=True)
    for patch_type, body in (("json", '[{"op":"add","path":"/data/b","value":"2"}]'),
                             ("merge", '{"data":{"c":"3"}}'),
                             ("strategic", '{"metadata":{"labels":{"tier":"web"}}}')):
        result = api.kubectl("-n", NS, "patch", "cm", "patched", f"--type={patch_type}",
                             "-p", body, check=True)
        assert result.stdout == "configmap/patched patched\n"
    got = api.kubectl("-n", NS, "get", "cm", "patched", "-o", "yaml", check=True).stdout
    obj = yaml.safe_load(got)
    assert obj["data"] == {"a": "1", "b": "2", "c": "3"}
    assert obj["metadata"]["labels"] == {"tier": "web"}
    # A failing JSON patch test operation is upstream's 422.
    failed = api.kubectl("-n", NS, "patch", "cm", "patched", "--type=json", "-p",
                         '[{"op":"test","path":"/data/a","value":"nope"}]')
    assert failed.returncode != 0
    assert "the server rejected our request due to an error in our request" in failed.stderr
    dry = api.kubectl("-n", NS, "create", "configmap", "ghost", "--from-literal=x=y",
                      "--dry-run=server", check=True)
    assert dry.stdout == "configmap/ghost created (server dry run)\n"
    assert api.kubectl("-n", NS, "get", "cm", "ghost").returncode != 0
    dry = api.kubectl("-n", NS, "delete", "cm", "patched", "--dry-run=server", check=True)
    assert dry.stdout == 'configmap "patched" deleted (server dry run)\n'
    assert api.kubectl("-n", NS, "get", "cm", "patched").returncode == 0


def test_create_validate_strict_names_the_unknown_field(api):
    body = yaml.safe_load(cm("strict", a="1"))
    body["bogus"] = True
    result = api.kubectl("create", "--validate=strict", "-f", "-", input=yaml.safe_dump(body))
    assert result.returncode != 0
    assert 'unknown field "bogus"' in result.stderr
    assert api.kubectl("-n", NS, "get", "cm", "strict").returncode != 0
