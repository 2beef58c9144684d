"""``python -m tests.benchmarks.customresources``: custom resources beside ConfigMaps.

One 2-worker TLS server; a CRD whose schema has 20 properties and two CEL rules; then
CREATE (1 and 16 connections), GET of one object (16 connections), merge PATCH changing
one field of an object each time (1 and 16 connections, an object per connection: updates
validate against the old object, CRD validation ratcheting) and LIST of 1,000 (4
connections), each for custom resources and for ConfigMaps of the same size, in the same
run. Target: custom resources
at >= 70 % of the ConfigMap rate. Prints figures, asserts nothing; every run is bounded in
time.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

from kapiserver.testing import KapiserverProcess

from . import load, objects
from .client import Client, Credentials, create_namespace, populate
from .report import ratio, table

GROUP = "bench.example.com"
NAMESPACE = "bench-cr"
LIST_NAMESPACE = "bench-cr-list"
PROPERTIES = 20
MERGE_PATCH = "application/merge-patch+json"
PATCHERS = 16
LIST_ITEMS = 1000


def crd() -> dict:
    """The benchmark CRD: 20 typed properties (about 1 KiB per object) and two CEL rules."""
    properties = {f"field{i:02d}": {"type": "string", "maxLength": 200}
                  for i in range(PROPERTIES - 2)}
    properties["replicas"] = {"type": "integer", "minimum": 0, "maximum": 1000}
    properties["maxReplicas"] = {"type": "integer", "default": 100}
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"benches.{GROUP}"},
        "spec": {"group": GROUP, "scope": "Namespaced",
                 "names": {"plural": "benches", "singular": "bench", "kind": "Bench"},
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": {
                                   "type": "object",
                                   "properties": {"spec": {
                                       "type": "object", "properties": properties,
                                       "x-kubernetes-validations": [
                                           {"rule": "self.replicas <= self.maxReplicas"},
                                           {"rule": "self.field00.startsWith('v')"}]}}}}}]}}


def custom_resource(name: str) -> dict:
    spec = {f"field{i:02d}": ("v-" + "x" * 32)[:32] for i in range(PROPERTIES - 2)}
    spec.update(replicas=3, maxReplicas=10)
    return {"apiVersion": f"{GROUP}/v1", "kind": "Bench", "metadata": {"name": name},
            "spec": spec}


def populate_custom(credentials: Credentials, namespace: str, count: int) -> None:
    client = Client(credentials)
    path = f"/apis/{GROUP}/v1/namespaces/{namespace}/benches"
    for index in range(count):
        status, body = client.request("POST", path, custom_resource(f"item-{index:04d}"))
        if status != 201:
            raise RuntimeError(f"creating a custom resource: {status} {body}")
    client.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.customresources")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per load run")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as workdir:
        server = KapiserverProcess(os.path.join(workdir, "cr"), workers=2,
                                   config={"log-level": "warning"}).start()
        try:
            cert, key = server.client_cert("admin", ["system:masters"])
            credentials = Credentials(server.port, server.ca_file, cert, key)
            client = Client(credentials)
            status, body = client.request(
                "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd())
            if status != 201:
                raise RuntimeError(f"creating the CRD: {status} {body}")
            server.wait_established(f"benches.{GROUP}", timeout=20)
            for namespace in (NAMESPACE, LIST_NAMESPACE, "bench-cm", "bench-cm-list"):
                create_namespace(credentials, namespace)
            cr_body = json.dumps(custom_resource(load.NAME.decode())).encode()
            cm_body = objects.body(objects.configmap(load.NAME.decode()))
            cr_path = f"/apis/{GROUP}/v1/namespaces/{{}}/benches"
            cm_path = "/api/v1/namespaces/{}/configmaps"
            rows, ratios = [], {}

            def compare(label, connections, cr, cm):
                mine = load.run("127.0.0.1", server.port, cr, server.ca_file, cert, key,
                                connections, args.duration)
                theirs = load.run("127.0.0.1", server.port, cm, server.ca_file, cert, key,
                                  connections, args.duration)
                rows.append([f"{label} x{connections}", *mine, *theirs,
                             ratio(mine[0], theirs[0])])
                ratios[(label, connections)] = mine[0] / theirs[0] if theirs[0] else 0.0

            for connections in (1, 16):
                mine = load.run("127.0.0.1", server.port, cr_path.format(NAMESPACE),
                                server.ca_file, cert, key, connections, args.duration,
                                method="POST", body=cr_body, expect=201)
                theirs = load.run("127.0.0.1", server.port, cm_path.format("bench-cm"),
                                  server.ca_file, cert, key, connections, args.duration,
                                  method="POST", body=cm_body, expect=201)
                rows.append([f"CREATE x{connections}", *mine, *theirs, ratio(mine[0], theirs[0])])
                ratios[("CREATE", connections)] = mine[0] / theirs[0] if theirs[0] else 0.0
            # The set-up connection sat idle through the load runs: the server has closed it.
            client.close()
            client = Client(credentials)
            client.request("POST", cr_path.format(NAMESPACE), custom_resource("one"))
            client.request("POST", cm_path.format("bench-cm"), objects.configmap("one"))
            for index in range(PATCHERS):
                client.request("POST", cr_path.format(NAMESPACE),
                               custom_resource(f"patch-{index}"))
                client.request("POST", cm_path.format("bench-cm"),
                               objects.configmap(f"patch-{index}"))
            compare("GET one", 16, cr_path.format(NAMESPACE) + "/one",
                    cm_path.format("bench-cm") + "/one")
            patched = f"/patch-{load.CONNECTION}"
            for connections in (1, PATCHERS):
                mine = load.run("127.0.0.1", server.port, cr_path.format(NAMESPACE) + patched,
                                server.ca_file, cert, key, connections, args.duration,
                                method="PATCH", body=b'{"spec":{"field01":"v-%s"}}' % load.NAME,
                                content_type=MERGE_PATCH)
                theirs = load.run("127.0.0.1", server.port, cm_path.format("bench-cm") + patched,
                                  server.ca_file, cert, key, connections, args.duration,
                                  method="PATCH", body=b'{"data":{"key-1":"%s"}}' % load.NAME,
                                  content_type=MERGE_PATCH)
                rows.append([f"PATCH x{connections}", *mine, *theirs, ratio(mine[0], theirs[0])])
                ratios[("PATCH", connections)] = mine[0] / theirs[0] if theirs[0] else 0.0
            started = time.monotonic()
            populate_custom(credentials, LIST_NAMESPACE, LIST_ITEMS)
            populate(credentials, "bench-cm-list", LIST_ITEMS)
            print(f"(set-up: {LIST_ITEMS} custom resources and ConfigMaps in "
                  f"{time.monotonic() - started:.1f} s)")
            compare(f"LIST {LIST_ITEMS}", 4, cr_path.format(LIST_NAMESPACE),
                    cm_path.format("bench-cm-list"))
            client.close()
        finally:
            server.stop()
    table(f"Custom resources ({PROPERTIES}-property schema, 2 CEL rules) vs ConfigMaps, "
          f"{args.duration:g} s per run",
          ["scenario", "CR req/s", "p50 ms", "p99 ms", "errors", "ConfigMap req/s", "p50 ms",
           "p99 ms", "errors", "CR / ConfigMap"], rows)
    table("Targets", ["figure", "measured", "target", "met"],
          [[f"{label} x{n}: CR / ConfigMap", f"{value:.0%}", ">= 70%",
            "yes" if value >= 0.7 else "NO"] for (label, n), value in ratios.items()])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
