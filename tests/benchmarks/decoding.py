"""What decoding into Go types costs a create, in process: ``python -m tests.benchmarks.decoding``.

For a ConfigMap and a Pod as kubectl sends them, and for the Pod as kube-apiserver
answered it (defaults, managedFields), each step the REST handler runs on a body, in
microseconds per call (the best of a few rounds): reading the JSON, the Go type check
(``runtime.decoding.type_error``), the unknown-field walk, the time fields, and
``Codec.normalize`` — which a ConfigMap gets once (in the handler) and a Pod's
``BuiltinStrategy`` three times (decoding, after defaults, after preparation).
"""

from __future__ import annotations

import copy
import json
import pathlib
import time

from kapiserver.runtime import decoding
from kapiserver.runtime.gotime import normalize_times
from kapiserver.runtime.protobuf import default_codec
from kapiserver.runtime.unknown_fields import unknown_fields

KINDS = pathlib.Path("/work/shared/reference/wide/kinds")
CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap",
             "metadata": {"name": "bench", "labels": {"app": "bench"}, "annotations": {}},
             "data": {f"key{i}": f"value {i}" for i in range(10)}}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bench", "labels": {"a": "b"}},
       "spec": {"containers": [{"name": "app", "image": "nginx:1.27",
                                "ports": [{"containerPort": 80}],
                                "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}},
                                "env": [{"name": "A", "value": "1"}]}]}}


def per_call(function, rounds: int = 5, calls: int = 400) -> float:
    """The best of ``rounds`` averages of ``calls`` calls, in microseconds."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            function()
        best = min(best, (time.perf_counter() - start) / calls * 1e6)
    return best


def steps(obj: dict) -> dict[str, float]:
    codec, body = default_codec(), json.dumps(obj).encode()
    api_version, kind = obj["apiVersion"], obj["kind"]
    return {
        "json.loads": per_call(lambda: json.loads(body)),
        "type check": per_call(lambda: decoding.type_error(obj, api_version, kind, body)),
        "unknown fields": per_call(
            lambda: unknown_fields(copy.copy(obj), api_version, kind)),
        "times": per_call(lambda: normalize_times(copy.deepcopy(obj), api_version, kind)),
        "deepcopy (baseline of times)": per_call(lambda: copy.deepcopy(obj)),
        "normalize": per_call(lambda: codec.normalize(obj)),
    }


def main() -> None:
    objects = {"ConfigMap (kubectl)": CONFIGMAP, "Pod (kubectl)": POD}
    created = KINDS / "pods-create.json"
    if created.exists():
        objects["Pod (as answered)"] = json.loads(created.read_text())["response"]["body"]
    for name, obj in objects.items():
        print(name)
        for step, micros in steps(obj).items():
            print(f"  {step:30} {micros:8.1f} us")


if __name__ == "__main__":
    main()
