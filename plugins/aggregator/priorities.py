"""Where groups and versions sit in discovery: upstream's APIService priorities.

kube-apiserver registers a local APIService for each built-in group version with the
``groupPriorityMinimum``/``versionPriority`` of its ``apiVersionPriorities`` table; CRD
group versions get 1000/100. Discovery lists groups by priority (highest first, then by
name) and each group's versions by priority, then in kube-aware version order.
"""

from __future__ import annotations

from kapiserver.apimachinery.versions import kube_version_key as version_key

#: (group, version) -> (groupPriorityMinimum, versionPriority), as kube-apiserver v1.32.
BUILTIN = {
    ("", "v1"): (18000, 1),
    ("apps", "v1"): (17800, 15),
    ("events.k8s.io", "v1"): (17750, 15),
    ("authentication.k8s.io", "v1"): (17700, 15),
    ("authorization.k8s.io", "v1"): (17600, 15),
    ("autoscaling", "v1"): (17500, 15),
    ("autoscaling", "v2"): (17500, 30),
    ("batch", "v1"): (17400, 15),
    ("certificates.k8s.io", "v1"): (17300, 15),
    ("networking.k8s.io", "v1"): (17200, 15),
    ("policy", "v1"): (17100, 15),
    ("rbac.authorization.k8s.io", "v1"): (17000, 15),
    ("storage.k8s.io", "v1"): (16800, 15),
    ("apiextensions.k8s.io", "v1"): (16700, 15),
    ("admissionregistration.k8s.io", "v1"): (16700, 15),
    ("scheduling.k8s.io", "v1"): (16600, 15),
    ("coordination.k8s.io", "v1"): (16500, 15),
    ("node.k8s.io", "v1"): (16300, 15),
    ("discovery.k8s.io", "v1"): (16200, 15),
    ("flowcontrol.apiserver.k8s.io", "v1"): (16100, 21),
}
#: What a CRD group version (and, in kapiserver, a plugin's group version upstream's table
#: does not know) is registered with.
DEFAULT = (1000, 100)
#: The aggregator's own group, listed first whatever the priorities.
AGGREGATOR_GROUP = "apiregistration.k8s.io"

def priority(group: str, version: str) -> tuple[int, int]:
    return BUILTIN.get((group, version), DEFAULT)


def sort_groups(groups: list, priorities: dict) -> list:
    """``groups`` (objects with ``name`` and an ordered ``versions`` dict) in discovery
    order; ``priorities`` maps (group, version) to (group priority, version priority)
    and wins over the built-in table. Versions are reordered in place copies."""
    def of(group, version):
        return priorities.get((group, version)) or priority(group, version)

    ordered = []
    for group in groups:
        versions = sorted(group.versions, key=lambda v: (-of(group.name, v)[1], version_key(v)))
        copy = type(group).__new__(type(group))
        copy.__dict__.update(group.__dict__)
        copy.versions = {v: group.versions[v] for v in versions}
        ordered.append(copy)

    def group_key(group):
        if group.name == "":
            return (0, 0, "")
        if group.name == AGGREGATOR_GROUP:
            return (1, 0, "")
        return (2, -max(of(group.name, v)[0] for v in group.versions), group.name)

    return sorted(ordered, key=group_key)
