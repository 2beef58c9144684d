"""``python -m tests.benchmarks.controllers``: how fast the controllers inside the server
finish what a DELETE starts.

One 2-worker TLS server (the defaults of ``kapiserver serve``). Two figures, each the time
from the DELETE's answer until a watch opened before it has seen every deletion:

* **garbage collector**: 1,000 ConfigMaps owned by one ConfigMap; the owner is deleted in
  the background (until a LIST by label finds no dependent) and, with a fresh set, in the
  foreground (until the owner itself is gone, which waits for every blocking dependent);
* **namespace deletion**: a namespace holding 1,000 objects of 10 kinds (ConfigMaps,
  Secrets, ServiceAccounts, Services, Endpoints, unscheduled Pods owned by ReplicaSets,
  ReplicaSets, PersistentVolumeClaims, Roles, Leases; 100 each) is deleted (until the
  namespace itself is gone).

The targets (issue 15) are under 5 s each. Prints figures, asserts nothing; every wait is
bounded (the watches' reads time out).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time

from kapiserver.testing import KapiserverProcess

from .client import Client, Credentials, create_namespace, send_all
from .report import table

TARGET = 5.0
TIMEOUT = 120.0
POLL = 0.02
LABEL = "bench.kapiserver.dev/owner"


def run_parallel(credentials: Credentials, requests) -> None:
    """Send the requests on 8 connections; every answer must be a 2xx (set-up only)."""
    failures = send_all(credentials, requests)
    if failures:
        raise RuntimeError(f"{len(failures)} requests failed, e.g. {failures[0]}")


class Watch:
    """A watch opened before the deletion, so that waiting for it costs the server no
    more than sending the events (polling a LIST would compete with the controllers)."""

    def __init__(self, credentials: Credentials, path: str):
        self.client = Client(credentials, timeout=TIMEOUT)
        separator = "&" if "?" in path else "?"
        status, body = self.client.request("GET", path)
        if status != 200:
            raise RuntimeError(f"listing {path}: {status} {body}")
        self.connection = self.client.connection
        self.connection.request("GET", f"{path}{separator}watch=true&resourceVersion="
                                f"{body['metadata']['resourceVersion']}")
        self.response = self.connection.getresponse()

    def deleted(self, count: int) -> float:
        """Seconds until ``count`` DELETED events arrived."""
        start, seen = time.monotonic(), 0
        while seen < count:
            line = self.response.readline()
            if not line:
                raise RuntimeError(f"the watch ended after {seen} deletions")
            if json.loads(line).get("type") == "DELETED":
                seen += 1
        return time.monotonic() - start

    def close(self) -> None:
        self.client.close()


def wait_until(check, timeout: float = TIMEOUT) -> float:
    """Seconds until ``check()`` is true (polled every 20 ms); raises after ``timeout``."""
    start = time.monotonic()
    while not check():
        if time.monotonic() - start > timeout:
            raise TimeoutError(f"not done after {timeout:.0f} s")
        time.sleep(POLL)
    return time.monotonic() - start


def owner_with_dependents(credentials: Credentials, namespace: str, name: str,
                          count: int) -> None:
    client = Client(credentials)
    status, owner = client.request("POST", f"/api/v1/namespaces/{namespace}/configmaps",
                                   {"metadata": {"name": name}})
    client.close()
    if status != 201:
        raise RuntimeError(f"creating the owner: {status} {owner}")
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": name,
           "uid": owner["metadata"]["uid"], "blockOwnerDeletion": True}
    run_parallel(credentials, [
        ("POST", f"/api/v1/namespaces/{namespace}/configmaps",
         {"metadata": {"name": f"{name}-{i:04d}", "labels": {LABEL: name},
                       "ownerReferences": [ref]}, "data": {"index": str(i)}})
        for i in range(count)])


def count_dependents(client: Client, namespace: str, owner: str) -> int:
    status, listed = client.request(
        "GET", f"/api/v1/namespaces/{namespace}/configmaps?labelSelector={LABEL}%3D{owner}")
    if status != 200:
        raise RuntimeError(f"listing dependents: {status} {listed}")
    return len(listed["items"])


def garbage_collection(credentials: Credentials, count: int) -> list[list]:
    namespace = "bench-gc"
    create_namespace(credentials, namespace)
    rows = []
    for policy in ("Background", "Foreground"):
        owner = f"owner-{policy.lower()}"
        owner_with_dependents(credentials, namespace, owner, count)
        time.sleep(1.0)  # the collector has seen them all: the figure is the deletion's
        if policy == "Background":
            watch = Watch(credentials, f"/api/v1/namespaces/{namespace}/configmaps?"
                                       f"labelSelector={LABEL}%3D{owner}")
            expected = count
            what = f"{count:,} dependents of a deleted owner gone (background)"
        else:
            watch = Watch(credentials, f"/api/v1/namespaces/{namespace}/configmaps?"
                                       f"fieldSelector=metadata.name%3D{owner}")
            expected = 1
            what = f"owner with {count:,} blocking dependents gone (foreground)"
        client = Client(credentials)
        status, body = client.request("DELETE", f"/api/v1/namespaces/{namespace}/configmaps/"
                                      f"{owner}", {"propagationPolicy": policy})
        if status != 200:
            raise RuntimeError(f"deleting the owner: {status} {body}")
        seconds = watch.deleted(expected)
        watch.close()
        left = count_dependents(client, namespace, owner)
        client.close()
        rows.append([f"{what}; {left} left", seconds, "yes" if seconds < TARGET else "NO"])
    return rows


#: The namespace's content: (resource path, object) for index i.
def namespace_content(namespace: str, per_kind: int):
    base = f"/api/v1/namespaces/{namespace}"
    rs_base = f"/apis/apps/v1/namespaces/{namespace}/replicasets"
    for i in range(per_kind):
        yield ("POST", f"{base}/configmaps", {"metadata": {"name": f"cm-{i}"},
                                              "data": {"i": str(i)}})
        yield ("POST", f"{base}/secrets", {"metadata": {"name": f"secret-{i}"},
                                           "stringData": {"i": str(i)}})
        yield ("POST", f"{base}/serviceaccounts", {"metadata": {"name": f"sa-{i}"}})
        yield ("POST", f"{base}/services", {"metadata": {"name": f"svc-{i}"}, "spec": {
            "ports": [{"port": 80}], "selector": {"app": f"a{i}"}}})
        yield ("POST", f"{base}/endpoints", {"metadata": {"name": f"ep-{i}"}})
        yield ("POST", f"{base}/persistentvolumeclaims", {"metadata": {"name": f"pvc-{i}"},
                                                          "spec": {
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})
        yield ("POST", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/roles",
               {"metadata": {"name": f"role-{i}"}, "rules": [
                   {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]})
        yield ("POST", f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases",
               {"metadata": {"name": f"lease-{i}"}, "spec": {"holderIdentity": "bench"}})
        yield ("POST", rs_base, {"metadata": {"name": f"rs-{i}"}, "spec": {
            "replicas": 0, "selector": {"matchLabels": {"rs": str(i)}},
            "template": {"metadata": {"labels": {"rs": str(i)}},
                         "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}})


def pods(credentials: Credentials, namespace: str, per_kind: int):
    """One unscheduled pod per ReplicaSet, owned by it (as its controller would make)."""
    client = Client(credentials)
    status, listed = client.request("GET", f"/apis/apps/v1/namespaces/{namespace}/replicasets")
    client.close()
    if status != 200:
        raise RuntimeError(f"listing replicasets: {status} {listed}")
    for rs in listed["items"]:
        name = rs["metadata"]["name"]
        yield ("POST", f"/api/v1/namespaces/{namespace}/pods", {
            "metadata": {"name": f"{name}-pod", "labels": rs["spec"]["selector"]["matchLabels"],
                         "ownerReferences": [{
                             "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": name,
                             "uid": rs["metadata"]["uid"], "controller": True,
                             "blockOwnerDeletion": True}]},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}})


def namespace_deletion(credentials: Credentials, per_kind: int) -> list[list]:
    namespace = "bench-ns"
    create_namespace(credentials, namespace)
    client = Client(credentials)
    # Pods are refused until the namespace has its default ServiceAccount.
    wait_until(lambda: client.request(
        "GET", f"/api/v1/namespaces/{namespace}/serviceaccounts/default")[0] == 200, 30)
    client.close()
    run_parallel(credentials, namespace_content(namespace, per_kind))
    run_parallel(credentials, pods(credentials, namespace, per_kind))
    time.sleep(1.0)
    watch = Watch(credentials, f"/api/v1/namespaces?fieldSelector=metadata.name%3D{namespace}")
    client = Client(credentials)
    status, body = client.request("DELETE", f"/api/v1/namespaces/{namespace}")
    if status != 200:
        raise RuntimeError(f"deleting the namespace: {status} {body}")
    seconds = watch.deleted(1)
    watch.close()
    client.close()
    return [[f"namespace holding {per_kind * 10:,} objects of 10 kinds gone", seconds,
             "yes" if seconds < TARGET else "NO"]]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.controllers")
    parser.add_argument("--dependents", type=int, default=1000)
    parser.add_argument("--per-kind", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as workdir:
        server = KapiserverProcess(workdir, {"log-level": "warning"},
                                   workers=args.workers).start()
        try:
            cert, key = server.client_cert("admin", ["system:masters"])
            credentials = Credentials(server.port, server.ca_file, cert, key)
            rows = garbage_collection(credentials, args.dependents)
            rows += namespace_deletion(credentials, args.per_kind)
        finally:
            server.stop()
    table(f"Controllers inside the server ({args.workers} workers): from the DELETE's "
          f"answer until done, target < {TARGET:g} s",
          ["what", "seconds", "under target"], rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
