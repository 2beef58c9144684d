"""The ~1 KiB ConfigMaps the scenarios write and the ceiling serves, built the same way."""

from __future__ import annotations

import json

#: Bytes of ``data`` values per ConfigMap: eight keys of 128 characters.
DATA_KEYS, VALUE_SIZE = 8, 128


def data(seed: str = "") -> dict:
    """A ``data`` map of about 1 KiB; ``seed`` varies the values."""
    return {f"key-{i}": (f"{seed}-{i}-" + "x" * VALUE_SIZE)[:VALUE_SIZE]
            for i in range(DATA_KEYS)}


def configmap(name: str, namespace: str | None = None, seed: str = "") -> dict:
    """A ConfigMap to POST (``namespace`` is taken from the URL when omitted)."""
    metadata = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data(seed)}


def stored_configmap(name: str, namespace: str, resource_version: int) -> dict:
    """A ConfigMap as the server answers it: with the metadata it fills in."""
    obj = configmap(name, namespace, seed=name)
    # The entry server-side field management records for a create, as upstream serves it.
    fields = {"f:data": {".": {}, **{f"f:{key}": {} for key in obj["data"]}}}
    obj["metadata"].update({"managedFields": [
                                {"manager": "python-requests", "operation": "Update",
                                 "apiVersion": "v1", "time": "2024-01-01T00:00:00Z",
                                 "fieldsType": "FieldsV1", "fieldsV1": fields}],
                            "creationTimestamp": "2024-01-01T00:00:00Z",
                            "uid": "0b6c7a0e-8f4e-4c55-9a07-3a1f1d7c%04x" % resource_version,
                            "resourceVersion": str(resource_version)})
    return obj


def configmap_list(count: int, namespace: str) -> dict:
    """A ``ConfigMapList`` of ``count`` stored ConfigMaps, as a LIST answers it."""
    return {"kind": "ConfigMapList", "apiVersion": "v1",
            "metadata": {"resourceVersion": str(count + 1)},
            "items": [stored_configmap(f"cm-{i:05d}", namespace, i + 1) for i in range(count)]}


def body(obj: dict) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()



def pod(name: str) -> dict:
    """A pod as ``kubectl run web --image=nginx:1.27`` sends it. The server makes it the
    2 KB object kube-apiserver stores: admission adds the service-account token volume and
    its mount, two tolerations and the priority; defaulting the pull policy, termination
    message, scheduler, security context; the status its phase and QoS class."""
    return {"kind": "Pod", "apiVersion": "v1",
            "metadata": {"name": name, "creationTimestamp": None, "labels": {"run": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx:1.27", "resources": {}}],
                     "restartPolicy": "Always", "dnsPolicy": "ClusterFirst"},
            "status": {}}
