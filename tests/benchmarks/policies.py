"""``python -m tests.benchmarks.policies``: ConfigMap creates with 0, 1 and 3
ValidatingAdmissionPolicies that apply to them.

One 2-worker TLS server; CREATE with 1 and 16 connections, first with no policy, then with
one typical policy (a variable and two validations, one with a messageExpression), then
with two more (one reading its limit from a ConfigMap param, one with a match condition
and an audit annotation), each bound to every ConfigMap and admitting it. Target: one
policy costs < 15 % of the create throughput (16 connections). Prints figures, asserts
nothing; every run is bounded in time.
"""

from __future__ import annotations

import argparse
import os
import tempfile

from kapiserver.testing import KapiserverProcess

from . import load, objects
from .client import Client, Credentials, create_namespace
from .report import table

TARGET = 0.15
API = "/apis/admissionregistration.k8s.io/v1"
_RULES = {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                             "operations": ["CREATE", "UPDATE"], "resources": ["configmaps"]}]}

#: The typical policy, and two more (policy, binding's paramRef or None).
POLICIES = [
    ({"matchConstraints": _RULES,
      "variables": [{"name": "keys", "expression": "has(object.data) ? size(object.data) : 0"}],
      "validations": [
          {"expression": "variables.keys <= 64",
           "messageExpression": "'at most 64 keys, not ' + string(variables.keys)"},
          {"expression": "object.metadata.name.size() <= 63 && "
                         "!object.metadata.name.startsWith('forbidden-')",
           "message": "that name is not allowed", "reason": "Forbidden"}]}, None),
    ({"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"}, "matchConstraints": _RULES,
      "validations": [{"expression": "!has(object.data) || "
                                     "object.data.all(k, size(object.data[k]) <= "
                                     "int(params.data.maxValue))"}]},
     {"name": "bench-limits", "namespace": "bench-params", "parameterNotFoundAction": "Deny"}),
    ({"matchConstraints": _RULES,
      "matchConditions": [{"name": "not-system",
                           "expression": "!request.userInfo.username.startsWith('system:')"}],
      "validations": [{"expression": "request.operation != 'DELETE'"}],
      "auditAnnotations": [{"key": "writer",
                            "valueExpression": "request.userInfo.username"}]}, None),
]


def add_policy(client: Client, index: int) -> None:
    spec, param_ref = POLICIES[index]
    name = f"bench-{index}"
    status, answer = client.request("POST", f"{API}/validatingadmissionpolicies", {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name}, "spec": spec})
    if status != 201:
        raise RuntimeError(f"creating policy {name}: {status} {answer}")
    binding = {"policyName": name, "validationActions": ["Deny"]}
    if param_ref:
        binding["paramRef"] = param_ref
    status, answer = client.request("POST", f"{API}/validatingadmissionpolicybindings", {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": name},
        "spec": binding})
    if status != 201:
        raise RuntimeError(f"creating binding {name}: {status} {answer}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.policies")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per load run")
    args = parser.parse_args(argv)
    rows, figures = [], {}
    with tempfile.TemporaryDirectory() as workdir:
        server = KapiserverProcess(os.path.join(workdir, "server"), workers=2,
                                   config={"log-level": "warning"}).start()
        try:
            cert, key = server.client_cert("admin", ["system:masters"])
            credentials = Credentials(server.port, server.ca_file, cert, key)
            create_namespace(credentials, "bench-params")
            client = Client(credentials)
            status, answer = client.request(
                "POST", "/api/v1/namespaces/bench-params/configmaps",
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bench-limits"},
                 "data": {"maxValue": "4096"}})
            if status != 201:
                raise RuntimeError(f"creating the params: {status} {answer}")
            body = objects.body(objects.configmap(load.NAME.decode()))
            for count in (0, 1, 3):
                for index in range(len(POLICIES)):
                    if index < count and not figures.get(("added", index)):
                        add_policy(client, index)
                        figures[("added", index)] = True
                namespace = f"bench-{count}-policies"
                create_namespace(credentials, namespace)
                path = f"/api/v1/namespaces/{namespace}/configmaps"
                for connections in (1, 16):
                    measured = load.run("127.0.0.1", server.port, path, server.ca_file, cert,
                                        key, connections, args.duration, method="POST",
                                        body=body, expect=201)
                    label = "policy" if count == 1 else "policies"
                    rows.append([f"CREATE x{connections}, {count} {label}", *measured])
                    figures[(count, connections)] = measured
            client.close()
        finally:
            server.stop()
    table(f"ConfigMap creates with 0, 1 and 3 validating admission policies, "
          f"{args.duration:g} s per run", ["scenario", "req/s", "p50 ms", "p99 ms", "errors"],
          rows)
    base, one = figures[(0, 16)][0], figures[(1, 16)][0]
    cost = 1 - one / base if base else 0.0
    added = figures[(1, 1)][1] - figures[(0, 1)][1]
    table("Targets", ["figure", "measured", "target", "met"],
          [["throughput lost to one policy (x16)", f"{cost:.1%}", f"< {TARGET:.0%}",
            "yes" if cost < TARGET else "NO"],
           ["p50 added by one policy (x1)", f"{added:.2f} ms", "-", "-"]])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
