"""RBAC authorization cost per request with 10,000 RoleBindings (standalone scenario).

``python -m tests.benchmarks.rbac [--bindings N]`` fills a fresh SQLite store with N
RoleBindings (spread over N/10 namespaces, each naming one user and one group, half to a
Role, half to a read-only ClusterRole) plus the bootstrap policy, builds the RBAC
index the way a worker does, and times ``RBACAuthorizer.authorize`` in-process: an allowed
request, a denied one (every binding of the user and groups consulted), a non-resource
path, and ``rules_for``. The figure is the cost the authorization filter adds to a request.

With ``--http``, the same store then backs a real server (2 workers, ``--authorization-mode
RBAC``) and one connection GETs a ConfigMap as ``admin`` (``system:masters``: RBAC is never
asked) and as a user allowed by a RoleBinding: the difference is RBAC's share of a request.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time

from kapiserver.authentication import UserInfo
from kapiserver.authorization import Attributes
from kapiserver.registry.store import RegistryStore
from kapiserver.storage.sqlite import SQLiteStore
from kapiserver.storage.watchcache import WatchCache

from .report import table

GROUP = "rbac.authorization.k8s.io"


class _Server:
    """What the RBAC plugin reads of an APIServer, over a real store and watch cache."""

    def __init__(self, path: str):
        from kapiserver_plugins.rbac.resources import (CLUSTERROLEBINDINGS, CLUSTERROLES,
                                                       ROLEBINDINGS, ROLES, BindingStrategy,
                                                       RoleStrategy)

        self.storage = SQLiteStore(path)
        self.watch_cache = WatchCache(self.storage)
        self.stopping = threading.Event()
        self.registries = {
            (GROUP, spec.resource): RegistryStore(spec, strategy(spec), self.storage)
            for spec, strategy in ((ROLES, RoleStrategy), (CLUSTERROLES, RoleStrategy),
                                   (ROLEBINDINGS, BindingStrategy),
                                   (CLUSTERROLEBINDINGS, BindingStrategy))}

    def close(self):
        self.stopping.set()
        self.watch_cache.close()
        # The feed thread may be reading the store: closing it under that thread crashes.
        self.watch_cache.thread.join(5)
        self.storage.close()


def populate(server: _Server, bindings: int) -> None:
    from kapiserver_plugins.rbac.bootstrap import ensure_bootstrap_policy

    ensure_bootstrap_policy(server)
    roles = server.registries[(GROUP, "roles")]
    rolebindings = server.registries[(GROUP, "rolebindings")]
    server.registries[(GROUP, "clusterroles")].create({
        "metadata": {"name": "bench-view"}, "rules": [
            {"verbs": ["get", "list", "watch"], "apiGroups": [""],
             "resources": ["configmaps", "services"]}]})
    namespaces = max(bindings // 10, 1)
    for n in range(namespaces):
        ns = f"ns-{n}"
        roles.create({"metadata": {"name": "cm-writer"}, "rules": [
            {"verbs": ["create", "update"], "apiGroups": [""], "resources": ["configmaps"]}]},
            ns)
    for i in range(bindings):
        ns = f"ns-{i % namespaces}"
        # Alternate per round of namespaces, so one user holds both kinds in a namespace.
        kind, role = (("Role", "cm-writer") if (i // namespaces) % 2
                      else ("ClusterRole", "bench-view"))
        rolebindings.create({
            "metadata": {"name": f"b-{i}"},
            "roleRef": {"apiGroup": GROUP, "kind": kind, "name": role},
            "subjects": [{"kind": "User", "apiGroup": GROUP, "name": f"user-{i % 1000}"},
                         {"kind": "Group", "apiGroup": GROUP, "name": f"team-{i % 100}"}]},
            ns)


def per_call_us(fn, seconds: float) -> tuple[float, int]:
    calls, start = 0, time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(200):
            fn()
        calls += 200
        now = time.perf_counter()
        if now >= deadline:
            return (now - start) / calls * 1e6, calls


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.rbac")
    parser.add_argument("--bindings", type=int, default=10_000)
    parser.add_argument("--duration", type=float, default=2.0, help="seconds per figure")
    parser.add_argument("--http", action="store_true",
                        help="also time GETs through a real server as admin and as a user")
    args = parser.parse_args(argv)
    from kapiserver_plugins.rbac.authorizer import RBACAuthorizer, index_for

    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(f"{tmp}/server/data")
        # The server's own database file, so that --http serves what was measured here.
        server = _Server(f"{tmp}/server/data/kapiserver.db")
        try:
            start = time.monotonic()
            populate(server, args.bindings)
            filled = time.monotonic() - start
            from kapiserver_plugins.rbac.index import RBACIndex

            # What a worker does at start: load every role and binding from the store.
            start = time.monotonic()
            RBACIndex(server).start()
            loaded = time.monotonic() - start
            index = index_for(server)  # the one following the writes since the bootstrap
            while index.revision < server.storage.current_revision():
                time.sleep(0.05)
            authorizer = RBACAuthorizer(server)
            user = UserInfo("user-7", groups=("team-7", "system:authenticated"))
            stranger = UserInfo("nobody", groups=("system:authenticated",))
            namespaces = max(args.bindings // 10, 1)
            ns = f"ns-{7 % namespaces}"

            def ask(who, verb, resource="configmaps", namespace=ns, name=""):
                return Attributes(user=who, verb=verb, resource_request=True,
                                  namespace=namespace, api_group="", api_version="v1",
                                  resource=resource, name=name)

            cases = [
                ("allowed: get configmap (ClusterRole via RoleBinding)",
                 ask(user, "get", name="x")),
                ("allowed: update configmap (Role)", ask(user, "update", name="x")),
                ("denied: delete secret (user's bindings all consulted)",
                 ask(user, "delete", "secrets", name="x")),
                ("denied: stranger, list in another namespace", ask(stranger, "list")),
                ("allowed: GET /healthz (bootstrap ClusterRoleBinding)",
                 Attributes(user=stranger, verb="get", resource_request=False,
                            path="/healthz")),
            ]
            rows = []
            for label, attributes in cases:
                decision = authorizer.authorize(attributes)[0].name
                us, calls = per_call_us(lambda a=attributes: authorizer.authorize(a),
                                        args.duration)
                rows.append([label, decision, f"{us:.1f}", calls])
            us, calls = per_call_us(lambda: authorizer.rules_for(user, ns), args.duration)
            rows.append(["rules_for(user, namespace)", "-", f"{us:.1f}", calls])
            table(f"RBAC authorization with {args.bindings:,} RoleBindings "
                  f"(+ bootstrap policy; store filled in {filled:.1f} s, index loaded in "
                  f"{loaded * 1000:.0f} ms)",
                  ["decision", "result", "µs per call", "calls"], rows)
        finally:
            server.close()
        if args.http:
            over_http(f"{tmp}/server", args)
    return 0


def over_http(workdir: str, args) -> None:
    """GET one ConfigMap through a real RBAC server as admin and as an RBAC-allowed user."""
    from kapiserver.testing import KapiserverProcess

    from . import load
    from .client import Client, Credentials

    process = KapiserverProcess(workdir, {"authorization-mode": ["RBAC"], "log-level": "warning"},
                                workers=2)
    process.start(timeout=120)
    try:
        namespaces = max(args.bindings // 10, 1)
        ns = f"ns-{7 % namespaces}"
        cert, key = process.client_cert("admin", ["system:masters"])
        admin = Credentials(process.port, process.ca_file, cert, key)
        client = Client(admin)
        client.request("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
        client.request("POST", f"/api/v1/namespaces/{ns}/configmaps",
                       {"metadata": {"name": "x"}, "data": {"k": "v"}})
        client.close()
        path = f"/api/v1/namespaces/{ns}/configmaps/x"
        rows = []
        for label, who in (("admin (system:masters, RBAC not asked)", ("admin",
                                                                       ["system:masters"])),
                           ("user-7 (allowed by a RoleBinding)", ("user-7", ["team-7"]))):
            cert, key = process.client_cert(*who)
            rate, p50, p99, errors = load.run("127.0.0.1", process.port, path, process.ca_file,
                                              cert, key, 1, args.duration)
            rows.append([label, f"{rate:.0f}", f"{p50:.2f}", f"{p99:.2f}", errors])
        table(f"GET a ConfigMap over HTTPS, 1 connection, {args.bindings:,} RoleBindings",
              ["as", "req/s", "p50 ms", "p99 ms", "errors"], rows)
    finally:
        process.stop()


if __name__ == "__main__":
    sys.exit(main())
