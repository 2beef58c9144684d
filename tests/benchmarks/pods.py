"""Pods beside ConfigMaps: CREATE and LIST of 1,000 each, and memory after 10,000.

The pods are ``kubectl run``'s (one container with an image, ``objects.pod``), made
into what kube-apiserver stores by admission (service-account volume, tolerations,
priority) and defaulting; the ConfigMaps are the ~1 KiB ones of the other scenarios. Each pod figure is measured in the same run, against the same server, right
beside the ConfigMap one. Memory is measured on a fresh 2-worker server per kind, so
that neither kind's objects nor the other scenarios' leftovers count: RSS and PSS of all
server processes at idle, after the creates, and after both workers served LISTs of
everything (JSON and protobuf), as informers make them do.
"""

from __future__ import annotations

import os
import time

from kapiserver.testing import KapiserverProcess

from . import load, objects
from .client import Client, Credentials, create_namespace
from .report import ratio, table

POD_NAMESPACE = "bench-pods"
CONFIGMAP_NAMESPACE = "bench-pods-cm"
ITEMS = 1000
CREATE_CONNECTIONS = 16
#: No count-bounded run may take longer than this many seconds.
CREATE_TIME_LIMIT = 120.0
PROTOBUF = "application/vnd.kubernetes.protobuf"


def path(kind: str, namespace: str) -> str:
    return f"/api/v1/namespaces/{namespace}/{kind}"


def template(kind: str) -> bytes:
    """A create body whose name is unique per request (``load.NAME``)."""
    name = load.NAME.decode()
    return objects.body(objects.pod(name) if kind == "pods" else objects.configmap(name))


def create_many(credentials: Credentials, kind: str, namespace: str, count: int,
                connections: int = CREATE_CONNECTIONS, time_limit: float = CREATE_TIME_LIMIT):
    """POST ``count`` new objects of ``kind`` from ``connections`` keep-alive connections
    (bounded by ``time_limit``); return the load figures (rate, p50, p99, errors)."""
    return load.run(credentials.host, credentials.port, path(kind, namespace), credentials.ca,
                    credentials.cert, credentials.key, connections, time_limit,
                    method="POST", body=template(kind), expect=201, total=count)


def pod_namespace(credentials: Credentials, namespace: str, timeout: float = 15) -> None:
    """Create ``namespace`` and wait (``timeout`` at most) for its ``default`` service
    account, without which the ServiceAccount admission plugin refuses pods."""
    create_namespace(credentials, namespace)
    client = Client(credentials)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            status, _ = client.request(
                "GET", f"/api/v1/namespaces/{namespace}/serviceaccounts/default")
            if status == 200:
                return
            time.sleep(0.1)
    finally:
        client.close()


def listed(credentials: Credentials, kind: str, namespace: str) -> tuple[int, int]:
    """(items, JSON bytes) of one LIST of ``kind`` in ``namespace``."""
    client = Client(credentials)
    status, body = client.request("GET", path(kind, namespace))
    client.close()
    if status != 200:
        raise RuntimeError(f"listing {kind}: {status} {body}")
    return len(body["items"]), len(objects.body(body))


def beside(bench) -> dict:
    """CREATE 1,000 pods and 1,000 ConfigMaps (16 connections), then LIST each (1 and 4
    connections); ``{figure: (pods, configmaps)}`` of load figures."""
    target = bench.kapiserver
    pod_namespace(target, POD_NAMESPACE)
    create_namespace(target, CONFIGMAP_NAMESPACE)
    figures = {}
    figures["create", CREATE_CONNECTIONS] = (
        create_many(target, "pods", POD_NAMESPACE, ITEMS),
        create_many(target, "configmaps", CONFIGMAP_NAMESPACE, ITEMS))
    (pods, pod_bytes), (configmaps, cm_bytes) = (listed(target, "pods", POD_NAMESPACE),
                                                 listed(target, "configmaps",
                                                        CONFIGMAP_NAMESPACE))
    for connections in (1, 4):
        figures["list", connections] = tuple(
            bench.load(target, path(kind, namespace), connections)
            for kind, namespace in (("pods", POD_NAMESPACE),
                                    ("configmaps", CONFIGMAP_NAMESPACE)))
    rows = []
    for (what, connections), (mine, theirs) in figures.items():
        label = (f"CREATE {ITEMS:,} x{connections}" if what == "create"
                 else f"LIST {pods:,} / {configmaps:,} x{connections}")
        rows.append([label, *mine, *theirs, ratio(mine[0], theirs[0])])
    pod_size = len(template("pods")) - len(load.NAME) + len("c-0000-0-0")
    table(f"6. Pods beside ConfigMaps (pod: kubectl run's, {pod_size} B body, "
          f"{pod_bytes // max(pods, 1)} B stored; ConfigMap: {cm_bytes // max(configmaps, 1)} "
          f"B stored); creates bounded at {ITEMS:,} and {CREATE_TIME_LIMIT:g} s, lists at "
          f"{bench.duration:g} s",
          ["scenario", "pods/s", "p50 ms", "p99 ms", "errors", "ConfigMaps/s", "p50 ms",
           "p99 ms", "errors", "pods / ConfigMaps"], rows)
    return figures


def memory(workdir: str, count: int, memory_mib, duration: float) -> dict:
    """RSS/PSS of a fresh server's processes with ``count`` objects, per kind (see the
    module docstring); ``{kind: {"idle", "created", "listed": (rss, pss), ...}}``."""
    results, rows = {}, []
    for kind in ("configmaps", "pods"):
        server = KapiserverProcess(os.path.join(workdir, f"memory-{kind}"), workers=2,
                                   config={"log-level": "warning"}).start()
        try:
            cert, key = server.client_cert("admin", ["system:masters"])
            credentials = Credentials(server.port, server.ca_file, cert, key)
            time.sleep(1.0)
            idle = memory_mib(server.process.pid)
            pod_namespace(credentials, "bench-memory")
            started = time.monotonic()
            figures = create_many(credentials, kind, "bench-memory", count,
                                  time_limit=max(CREATE_TIME_LIMIT, count / 20))
            seconds = time.monotonic() - started
            created = memory_mib(server.process.pid)
            items, size = listed(credentials, kind, "bench-memory")
            # Four connections spread over both workers; each LISTs in JSON and protobuf.
            for accept in ("application/json", PROTOBUF):
                load.run(credentials.host, credentials.port, path(kind, "bench-memory"),
                         server.ca_file, cert, key, 4, CREATE_TIME_LIMIT, accept=accept,
                         total=8)
            lists = memory_mib(server.process.pid)
        finally:
            server.stop()
        results[kind] = {"idle": idle, "created": created, "listed": lists, "items": items,
                         "errors": figures[3]}
        per_object = (lists[0] - idle[0]) * 1024 / max(items, 1)
        rows.append([kind, items, f"{seconds:.0f} s", f"{size / 1e6:.1f} MB",
                     *(f"{rss:.1f} / {pss:.1f}" for rss, pss in (idle, created, lists)),
                     f"{per_object:.1f}"])
    table(f"7. Memory of all server processes (2 workers), fresh server per kind, "
          f"{count:,} objects created from {CREATE_CONNECTIONS} connections, then 8 JSON and "
          "8 protobuf LISTs of all", ["kind", "objects", "created in", "LIST size",
                                      "idle RSS / PSS MiB", "after creates", "after LISTs",
                                      "RSS KiB/object"], rows)
    return results
