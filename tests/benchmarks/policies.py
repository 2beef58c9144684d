"""``python -m tests.benchmarks.policies``: ConfigMap creates with 0, 1 and 3
ValidatingAdmissionPolicies that apply to them.

One 2-worker TLS server; CREATE with 1 and 16 connections, first with no policy, then with
one typical policy (a variable and two validations, one with a messageExpression), then
with two more (one reading its limit from a ConfigMap param, one with a match condition
and an audit annotation), each bound to every ConfigMap and admitting it. Target: one
policy costs < 15 % of the create throughput, judged by the server's CPU time per create
(creates are CPU-bound; requests per second on a shared machine move with its other
load, so they are printed beside). Prints figures, asserts nothing; every run is bounded
in time.
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


def add_policy(credentials: Credentials, index: int) -> None:
    client = Client(credentials)  # a fresh connection: the server closes idle ones
    try:
        _add_policy(client, index)
    finally:
        client.close()


def _add_policy(client: Client, index: int) -> None:
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


def server_cpu_seconds(pid: int) -> float:
    """User and system CPU time of ``pid`` and its children (the workers) so far."""
    import subprocess

    pids = [pid]
    try:
        pids += [int(c) for c in subprocess.run(["pgrep", "-P", str(pid)], capture_output=True,
                                                text=True).stdout.split()]
    except OSError:
        pass
    ticks = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])  # utime, stime
        except (OSError, IndexError, ValueError):
            pass
    return ticks / os.sysconf("SC_CLK_TCK")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.policies")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per load run")
    parser.add_argument("--creates", type=int, default=2000,
                        help="creates whose server CPU time is measured, per phase")
    args = parser.parse_args(argv)
    rows, figures, cpu = [], {}, {}
    with tempfile.TemporaryDirectory() as workdir:
        server = KapiserverProcess(os.path.join(workdir, "server"), workers=2,
                                   config={"log-level": "warning"}).start(timeout=120)
        try:
            cert, key = server.client_cert("admin", ["system:masters"])
            credentials = Credentials(server.port, server.ca_file, cert, key)
            create_namespace(credentials, "bench-params")
            client = Client(credentials)
            status, answer = client.request(
                "POST", "/api/v1/namespaces/bench-params/configmaps",
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bench-limits"},
                 "data": {"maxValue": "4096"}})
            client.close()
            if status != 201:
                raise RuntimeError(f"creating the params: {status} {answer}")
            body = objects.body(objects.configmap(load.NAME.decode()))
            for count in (0, 1, 3):
                for index in range(len(POLICIES)):
                    if index < count and not figures.get(("added", index)):
                        add_policy(credentials, index)
                        figures[("added", index)] = True
                namespace = f"bench-{count}-policies"
                create_namespace(credentials, namespace)
                path = f"/api/v1/namespaces/{namespace}/configmaps"
                # Warm up: each worker compiles the policies and loads its informers on
                # the first requests after a change.
                load.run("127.0.0.1", server.port, path, server.ca_file, cert, key, 4,
                         min(args.duration, 1.0), method="POST", body=body, expect=201)
                # The server's CPU per create: what one more policy costs, whatever else
                # the machine runs (throughput on a shared machine is noisier).
                before = server_cpu_seconds(server.process.pid)
                load.run("127.0.0.1", server.port, path, server.ca_file, cert, key, 16,
                         60.0, method="POST", body=body, expect=201, total=args.creates)
                cpu[count] = (server_cpu_seconds(server.process.pid) - before) / args.creates
                for connections in (1, 16):
                    measured = load.run("127.0.0.1", server.port, path, server.ca_file, cert,
                                        key, connections, args.duration, method="POST",
                                        body=body, expect=201)
                    label = "policy" if count == 1 else "policies"
                    rows.append([f"CREATE x{connections}, {count} {label}", *measured])
                    figures[(count, connections)] = measured
        finally:
            server.stop()
    table(f"ConfigMap creates with 0, 1 and 3 validating admission policies, "
          f"{args.duration:g} s per run", ["scenario", "req/s", "p50 ms", "p99 ms", "errors"],
          rows)
    table(f"Server CPU per create ({args.creates} creates, 16 connections)",
          ["policies", "CPU ms/create", "vs none"],
          [[str(n), f"{cpu[n] * 1000:.2f}", f"{cpu[n] / cpu[0] - 1:+.1%}" if cpu[0] else "-"]
           for n in (0, 1, 3)])
    base, one = figures[(0, 16)][0], figures[(1, 16)][0]
    # CPU-bound creates: the throughput lost is the CPU added, as a share of the new cost.
    cost = 1 - cpu[0] / cpu[1] if cpu[1] else 0.0
    wall = 1 - one / base if base else 0.0
    added = figures[(1, 1)][1] - figures[(0, 1)][1]
    table("Targets", ["figure", "measured", "target", "met"],
          [["throughput lost to one policy (server CPU)", f"{cost:.1%}", f"< {TARGET:.0%}",
            "yes" if cost < TARGET else "NO"],
           ["throughput lost to one policy (x16 req/s)", f"{wall:.1%}", "-", "-"],
           ["p50 added by one policy (x1)", f"{added:.2f} ms", "-", "-"]])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
