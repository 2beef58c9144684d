"""The ``default/kubernetes`` Service: how workloads find the API server (``bootstrap-controller``).

Upstream's ``controlplane/controller/kubernetesservice`` creates it at start with the first
address of ``--service-cluster-ip-range`` and port 443 (``https``) targeting the secure
port, and puts the port back when a restart serves on another one.
"""

from __future__ import annotations

import time

from kapiserver import errors

from .service_allocation import IPRange

NAMESPACE, NAME = "default", "kubernetes"
PORT_NAME = "https"
SERVICE_PORT = 443
MANAGER = "kube-apiserver"


def desired_ports(secure_port: int) -> list[dict]:
    return [{"name": PORT_NAME, "protocol": "TCP", "port": SERVICE_PORT,
             "targetPort": secure_port}]


def kubernetes_service(cluster_ip: str, secure_port: int) -> dict:
    return {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": NAME, "namespace": NAMESPACE,
                     "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {"type": "ClusterIP", "clusterIP": cluster_ip, "sessionAffinity": "None",
                 "ports": desired_ports(secure_port)},
    }


def ensure_kubernetes_service(server, attempts: int = 50) -> None:
    """Create the service, or mend its ports (post-start hook; every worker runs it)."""
    services = server.registries[("", "services")]
    manage = services.field_manager(MANAGER)
    config = server.config
    cluster_ip = IPRange(config.service_cluster_ip_range).first
    for attempt in range(attempts):
        try:
            current = services.get(NAMESPACE, NAME)
        except errors.NotFound:
            try:
                services.create(kubernetes_service(cluster_ip, config.secure_port), NAMESPACE,
                                manage=manage)
                return
            except (errors.AlreadyExists, errors.Invalid):
                # Another worker is creating it: its address is reserved a moment before
                # the service is stored. Look again.
                if attempt == attempts - 1:
                    raise
                time.sleep(0.02)
                continue
        if not _ports_match(current, config.secure_port):
            services.guaranteed_update(NAMESPACE, NAME, _mend(config.secure_port), manage=manage)
        return


def _mend(secure_port: int):
    def mend(obj: dict) -> dict:
        obj.setdefault("spec", {})["ports"] = desired_ports(secure_port)
        return obj

    return mend


def _ports_match(service: dict, secure_port: int) -> bool:
    ports = (service.get("spec") or {}).get("ports") or []
    return len(ports) == 1 and all(ports[0].get(key) == value for key, value in
                                   desired_ports(secure_port)[0].items())
