"""A kopf operator's admission webhooks against kapiserver: kopf registers its own managed
webhook configurations (``settings.admission.managed``) and serves the reviews from its
HTTPS webhook server on loopback; kapiserver calls them on every matching write."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from kapiserver.pki import PKI
from kapiserver.testing import free_port

pytest.importorskip("kopf")

ADMIN = {"user": "admin", "groups": ["system:masters"]}
MANAGED = "auto.kopf.dev"

OPERATOR = textwrap.dedent('''
    import os

    import kopf


    @kopf.on.startup()
    def configure(settings: kopf.OperatorSettings, **_):
        settings.admission.server = kopf.WebhookServer(
            addr="127.0.0.1", port=int(os.environ["WEBHOOK_PORT"]),
            certfile=os.environ["WEBHOOK_CERT"], pkeyfile=os.environ["WEBHOOK_KEY"],
            cafile=os.environ["WEBHOOK_CA"])
        settings.admission.managed = "auto.kopf.dev"


    @kopf.on.validate("configmaps", id="refuse")
    def refuse(body, **_):
        if "forbidden" in (body.get("data") or {}):
            raise kopf.AdmissionError("the key 'forbidden' is not allowed", code=422)


    @kopf.on.mutate("configmaps", id="stamp")
    def stamp(patch, **_):
        patch.metadata.labels["stamped-by"] = "kopf"
''')


def _wait_for_configurations(server, deadline: float, process) -> None:
    paths = [f"/apis/admissionregistration.k8s.io/v1/{kind}/{MANAGED}"
             for kind in ("validatingwebhookconfigurations", "mutatingwebhookconfigurations")]
    while True:
        answers = [server.request("GET", path, **ADMIN) for path in paths]
        if all(a.status_code == 200 and a.json().get("webhooks") for a in answers):
            return
        if process.poll() is not None or time.monotonic() > deadline:
            output = process.stdout.read() if process.poll() is not None else ""
            pytest.fail(f"kopf did not register its webhooks: {[a.text for a in answers]}"
                        f"\n{output}")
        time.sleep(0.2)


def test_kopf_admission_webhooks_register_and_take_effect(kapiserver_factory, tmp_path):
    server = kapiserver_factory()
    pki = PKI(str(tmp_path / "kopf-pki"))
    pki.ensure_serving_cert(["127.0.0.1"])
    (tmp_path / "operator.py").write_text(OPERATOR)
    env = dict(os.environ, KUBECONFIG=server.kubeconfig(), WEBHOOK_PORT=str(free_port()),
               WEBHOOK_CERT=pki.serving_cert_file, WEBHOOK_KEY=pki.serving_key_file,
               WEBHOOK_CA=pki.ca_cert_file)
    process = subprocess.Popen(
        [sys.executable, "-m", "kopf", "run", "--standalone", "--all-namespaces",
         str(tmp_path / "operator.py")], env=env, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    try:
        _wait_for_configurations(server, time.monotonic() + 60, process)
        hooks = server.request(
            "GET", f"/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/"
            f"{MANAGED}", **ADMIN).json()["webhooks"]
        assert [h["name"] for h in hooks] == [f"refuse.{MANAGED}"]
        assert hooks[0]["clientConfig"]["url"].startswith("https://127.0.0.1:")

        result = server.kubectl("create", "configmap", "fine", "--from-literal=a=b", "-o",
                                "jsonpath={.metadata.labels.stamped-by}")
        assert result.returncode == 0, result.stderr
        assert result.stdout == "kopf"

        result = server.kubectl("create", "configmap", "refused",
                                "--from-literal=forbidden=yes")
        assert result.returncode == 1
        assert result.stderr.strip() == (
            f'error: failed to create configmap: admission webhook "refuse.{MANAGED}" '
            "denied the request: the key 'forbidden' is not allowed")

        from kubernetes import client

        api = client.CoreV1Api(server.python_client())
        made = api.create_namespaced_config_map("default", client.V1ConfigMap(
            metadata=client.V1ObjectMeta(name="from-python"), data={"x": "y"}))
        assert made.metadata.labels == {"stamped-by": "kopf"}
        with pytest.raises(client.ApiException) as raised:
            api.create_namespaced_config_map("default", client.V1ConfigMap(
                metadata=client.V1ObjectMeta(name="nope"), data={"forbidden": "1"}))
        assert raised.value.status == 422
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
