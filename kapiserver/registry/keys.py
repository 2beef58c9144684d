"""Storage keys: kube-apiserver's etcd layout, the one table both storage backends use.

kube-apiserver's storage factory names a built-in resource's keys after the resource
alone (``/registry/deployments/NS/NAME``, not ``/registry/apps/deployments/...``), with
the exceptions compiled into it (``SpecialDefaultResourcePrefixes`` in
``pkg/kubeapiserver/default_storage_factory_builder.go``: services under
``services/specs``, endpoints under ``services/endpoints``, nodes under ``minions``, …).
The servers that keep their own storage — apiextensions (CRDs and custom resources) and
the aggregator (APIServices) — and any other group name keys ``GROUP/RESOURCE``. The
same layout on SQLite and on etcd means tools that read kube-apiserver's etcd read
kapiserver's data, and kapiserver reads theirs.
"""

from __future__ import annotations

import functools

#: The root every key starts with inside kapiserver. On etcd, ``--etcd-prefix`` replaces
#: it (the store translates), so everything above the storage interface sees one layout.
ROOT = "/registry"

#: upstream's ``SpecialDefaultResourcePrefixes``.
SPECIAL_PREFIXES = {
    ("", "replicationcontrollers"): "controllers",
    ("", "endpoints"): "services/endpoints",
    ("", "nodes"): "minions",
    ("", "services"): "services/specs",
    ("extensions", "ingresses"): "ingress",
    ("networking.k8s.io", "ingresses"): "ingress",
}

#: Resources another group's keys hold (upstream's ``AddCohabitatingResources``): both
#: APIs read and write the same objects.
COHABITANTS = {
    ("events.k8s.io", "events"): ("", "events"),
    ("extensions", "deployments"): ("apps", "deployments"),
    ("extensions", "daemonsets"): ("apps", "daemonsets"),
    ("extensions", "replicasets"): ("apps", "replicasets"),
    ("extensions", "networkpolicies"): ("networking.k8s.io", "networkpolicies"),
}


@functools.lru_cache(maxsize=1)
def kube_resources() -> frozenset:
    """The ``(group, resource)`` pairs kube-apiserver's own storage factory stores."""
    from .builtin import resources

    return frozenset((group, resource) for group, _, resource in resources()
                     if "/" not in resource)


def resource_prefix(group: str, resource: str) -> str:
    """The key segment(s) of a resource under ``ROOT``: ``deployments``,
    ``services/specs``, ``apiextensions.k8s.io/customresourcedefinitions``,
    ``example.com/widgets``."""
    group, resource = COHABITANTS.get((group, resource), (group, resource))
    special = SPECIAL_PREFIXES.get((group, resource))
    if special:
        return special
    if not group or (group, resource) in kube_resources():
        return resource
    return f"{group}/{resource}"


def key_prefix(group: str, resource: str, namespace: str = "") -> str:
    """``/registry/<resource prefix>/[namespace/]``: where a resource's objects live."""
    base = f"{ROOT}/{resource_prefix(group, resource)}/"
    return f"{base}{namespace}/" if namespace else base


def legacy_key_prefix(group: str, resource: str) -> str:
    """Where kapiserver kept a resource before it used upstream's layout (the SQLite
    migration reads it): ``/registry/<group/>resource/``."""
    return f"{ROOT}/{group + '/' if group else ''}{resource}/"


@functools.lru_cache(maxsize=1)
def _legacy_moves() -> tuple:
    """(legacy prefix, new prefix) of every resource whose keys moved, longest first."""
    pairs = set(kube_resources()) | set(SPECIAL_PREFIXES)
    moves = {legacy_key_prefix(g, r): key_prefix(g, r) for g, r in pairs
             if (g, r) not in COHABITANTS}
    return tuple(sorted(((old, new) for old, new in moves.items() if old != new),
                        key=lambda move: -len(move[0])))


def migrate_legacy_key(key: str) -> str:
    """The key in upstream's layout of a key kapiserver wrote in its legacy one."""
    for old, new in _legacy_moves():
        if key.startswith(old):
            return new + key[len(old):]
    return key
