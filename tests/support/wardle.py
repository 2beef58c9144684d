"""Two kapiservers as an aggregated API server is deployed: the wardle extension behind a main
server's aggregator (for the end-to-end test and the aggregation benchmark).

The main server gets a front-proxy client certificate (``--proxy-client-*``) and the CA
that signed it (``--requestheader-client-ca-file``, allowed name ``front-proxy-client``);
the extension serves ``kapiserver_plugins.wardle`` with delegated authentication and
authorization through a kubeconfig of user ``wardle-server`` on the main server, which is
granted what upstream's sample-apiserver deployment grants (``system:auth-delegator``,
``extension-apiserver-authentication-reader``, reading namespaces). An ExternalName
Service and an APIService on the main server point at the extension.
"""

from __future__ import annotations

import base64
import os
import time

import yaml

from kapiserver.pki import PKI
from kapiserver.testing import KapiserverProcess

APISERVICE = "v1alpha1.wardle.example.com"
ADMIN = dict(user="admin", groups=["system:masters"])
#: The Service on the main server; the extension's certificate must name it.
SERVICE_NAMESPACE, SERVICE_NAME = "default", "wardle"


def _write(path: str, data: bytes) -> str:
    with open(path, "wb") as f:
        f.write(data)
    return path


def start_main(base: str, config: dict | None = None, workers: int = 2) -> KapiserverProcess:
    """The main server, with a front-proxy identity; ``main.front_proxy`` is its (cert, key)."""
    front = PKI(os.path.join(base, "front-proxy-pki"))
    front.ensure_ca()
    cert_pem, key_pem = front.issue_client_cert("front-proxy-client")
    proxy_cert = _write(os.path.join(base, "front-proxy-client.crt"), cert_pem)
    proxy_key = _write(os.path.join(base, "front-proxy-client.key"), key_pem)
    main = KapiserverProcess(os.path.join(base, "main"), {
        "proxy-client-cert-file": proxy_cert, "proxy-client-key-file": proxy_key,
        "requestheader-client-ca-file": front.ca_cert_file,
        "requestheader-allowed-names": ["front-proxy-client"], **(config or {})},
        workers=workers).start()
    main.front_proxy = (proxy_cert, proxy_key)
    return main


def start_extension(base: str, main: KapiserverProcess, config: dict | None = None,
                    plugins=(), workers: int = 2) -> KapiserverProcess:
    """The wardle server, delegating to ``main`` (which must be running)."""
    main.kubectl("create", "clusterrolebinding", "wardle:auth-delegator",
                 "--clusterrole=system:auth-delegator", "--user=wardle-server", check=True)
    main.kubectl("create", "rolebinding", "wardle:authentication-reader", "-n", "kube-system",
                 "--role=extension-apiserver-authentication-reader", "--user=wardle-server",
                 check=True)
    main.kubectl("create", "clusterrole", "wardle:namespace-reader", "--verb=get",
                 "--resource=namespaces", check=True)
    main.kubectl("create", "clusterrolebinding", "wardle:namespace-reader",
                 "--clusterrole=wardle:namespace-reader", "--user=wardle-server", check=True)
    kubeconfig = main.kubeconfig("wardle-server", groups=())
    return KapiserverProcess(os.path.join(base, "wardle"), {
        # The aggregator verifies the extension's certificate for the Service's name.
        "tls-sans": [f"{SERVICE_NAME}.{SERVICE_NAMESPACE}.svc"],
        "authentication-kubeconfig": kubeconfig, "authorization-kubeconfig": kubeconfig,
        "authorization-mode": ["Webhook"], "kubeconfig": kubeconfig, **(config or {})},
        plugins=["kapiserver_plugins.wardle", *plugins], workers=workers).start()


def register(main: KapiserverProcess, extension: KapiserverProcess) -> None:
    """The Service and APIService that route wardle.example.com/v1alpha1 to ``extension``."""
    with open(extension.ca_file, "rb") as f:
        ca_bundle = base64.b64encode(f.read()).decode()
    main.kubectl("apply", "-f", "-", check=True, input=yaml.safe_dump_all([
        # Endpoints may not name loopback addresses: an ExternalName reaches this host.
        {"apiVersion": "v1", "kind": "Service",
         "metadata": {"name": SERVICE_NAME, "namespace": SERVICE_NAMESPACE},
         "spec": {"type": "ExternalName", "externalName": "localhost"}},
        {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
         "metadata": {"name": APISERVICE},
         "spec": {"group": "wardle.example.com", "version": "v1alpha1",
                  "groupPriorityMinimum": 1000, "versionPriority": 15, "caBundle": ca_bundle,
                  "service": {"namespace": SERVICE_NAMESPACE, "name": SERVICE_NAME,
                              "port": extension.port}}}]))


def wait_available(main: KapiserverProcess, status: str, timeout: float = 20.0) -> dict:
    """Wait for the APIService's Available condition to have ``status``; return it."""
    deadline = time.monotonic() + timeout
    while True:
        obj = main.get(f"/apis/apiregistration.k8s.io/v1/apiservices/{APISERVICE}",
                       **ADMIN).json()
        conditions = {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}
        condition = conditions.get("Available", {})
        if condition.get("status") == status:
            return condition
        assert time.monotonic() < deadline, condition
        time.sleep(0.2)


def openapi_v3_keys(main: KapiserverProcess) -> set:
    """The documents the main server's ``/openapi/v3`` index lists."""
    response = main.get("/openapi/v3", **ADMIN)
    assert response.status_code == 200, response.text
    return set(response.json()["paths"])


def wait_openapi(main: KapiserverProcess, present: bool, timeout: float = 20.0) -> None:
    """Wait until the wardle group version is (or is not) in the main server's OpenAPI v3
    index: in a row of answers, so that every worker (each fetches on its own) agrees."""
    key = "apis/wardle.example.com/v1alpha1"
    deadline = time.monotonic() + timeout
    agreeing = 0
    while agreeing < 6:
        agreeing = agreeing + 1 if (key in openapi_v3_keys(main)) == present else 0
        assert time.monotonic() < deadline, f"{key} still {'absent' if present else 'listed'}"
        time.sleep(0.1)
