"""Protobuf beside JSON: GET one object and LIST 1,000, ConfigMaps and pods.

Each figure pairs runs on the same server and path where only the ``Accept`` header
differs (``application/vnd.kubernetes.protobuf``, as client-go asks for built-in kinds),
in the order JSON, protobuf, protobuf, JSON: whatever drifts during the pair (the
machine's other load, a worker's heap) weighs on both encodings alike, and each figure is
the mean of its two runs (its rate and p50; the worse p99; the errors summed). Before the load runs, one answer of each is read and the
protobuf one decoded: both must hold the same objects, or the figures would compare
different work; then a few requests of each warm both workers' item caches, so that
both encodings are measured in their steady state.
"""

from __future__ import annotations

import http.client
import json

from kapiserver.runtime import protobuf

from . import objects, pods
from .client import Client, Credentials, create_namespace
from .report import ratio, table

GET_NAME = "bench-wire"
JSON = "application/json"


def fetch(credentials: Credentials, path: str, accept: str) -> bytes:
    connection = http.client.HTTPSConnection(credentials.host, credentials.port,
                                             context=credentials.context(), timeout=60)
    try:
        connection.request("GET", path, headers={"Accept": accept})
        response = connection.getresponse()
        body = response.read()
    finally:
        connection.close()
    if response.status != 200:
        raise RuntimeError(f"GET {path} as {accept}: {response.status} {body[:300]!r}")
    if not response.getheader("Content-Type", "").startswith(accept):
        raise RuntimeError(f"GET {path} as {accept}: answered "
                           f"{response.getheader('Content-Type')}")
    return body


def same_content(credentials: Credentials, path: str) -> tuple[int, int, bool]:
    """(JSON bytes, protobuf bytes, whether the protobuf answer decodes to the JSON one)."""
    as_json = fetch(credentials, path, JSON)
    as_protobuf = fetch(credentials, path, protobuf.CONTENT_TYPE)
    return len(as_json), len(as_protobuf), protobuf.decode(as_protobuf) == json.loads(as_json)


def ensure(credentials: Credentials) -> None:
    """The objects this scenario reads: one of each kind to GET, 1,000 of each to LIST
    (made by ``pods.beside`` when it ran; topped up otherwise)."""
    client = Client(credentials)
    for kind, obj in (("pods", objects.pod(GET_NAME)),
                      ("configmaps", objects.configmap(GET_NAME, seed=GET_NAME))):
        status, body = client.request("POST", pods.path(kind, "default"), obj)
        if status not in (201, 409):
            raise RuntimeError(f"creating the {kind} to GET: {status} {body}")
    client.close()
    pods.pod_namespace(credentials, pods.POD_NAMESPACE)
    create_namespace(credentials, pods.CONFIGMAP_NAMESPACE)
    for kind, namespace in (("pods", pods.POD_NAMESPACE),
                            ("configmaps", pods.CONFIGMAP_NAMESPACE)):
        have = pods.listed(credentials, kind, namespace)[0]
        if have < pods.ITEMS:
            pods.create_many(credentials, kind, namespace, pods.ITEMS - have)


def both(first: tuple, second: tuple) -> tuple:
    """Two runs' load figures as one: mean rate and p50, the worse p99, errors summed."""
    return ((first[0] + second[0]) / 2, (first[1] + second[1]) / 2, max(first[2], second[2]),
            first[3] + second[3])


def compare(bench) -> dict:
    """``{(verb, kind, connections): (protobuf figures, JSON figures)}``."""
    target = bench.kapiserver
    ensure(target)
    cases = []
    for kind, namespace in (("configmaps", pods.CONFIGMAP_NAMESPACE),
                            ("pods", pods.POD_NAMESPACE)):
        cases.append(("GET one", kind, pods.path(kind, "default") + f"/{GET_NAME}", (1, 16)))
        cases.append((f"LIST {pods.ITEMS:,}", kind, pods.path(kind, namespace), (1, 4)))
    figures, rows = {}, []
    for verb, kind, path, connection_counts in cases:
        json_size, protobuf_size, same = same_content(target, path)
        if not same:
            print(f"  !! {verb} {kind}: the protobuf answer does not decode to the JSON one")
        for accept in (JSON, protobuf.CONTENT_TYPE):  # both workers' item caches warm
            bench.load(target, path, 4, accept=accept, total=8)
        for connections in connection_counts:
            first_json = bench.load(target, path, connections, accept=JSON)
            as_protobuf = both(
                bench.load(target, path, connections, accept=protobuf.CONTENT_TYPE),
                bench.load(target, path, connections, accept=protobuf.CONTENT_TYPE))
            as_json = both(first_json, bench.load(target, path, connections, accept=JSON))
            figures[verb, kind, connections] = (as_protobuf, as_json)
            rows.append([f"{verb} {kind} x{connections}", *as_protobuf, protobuf_size,
                         *as_json, json_size, ratio(as_protobuf[0], as_json[0])])
    table(f"8. Protobuf beside JSON (same path, Accept differs), {bench.duration:g} s per run",
          ["scenario", "protobuf req/s", "p50 ms", "p99 ms", "errors", "bytes",
           "JSON req/s", "p50 ms", "p99 ms", "errors", "bytes", "protobuf / JSON"], rows)
    return figures
