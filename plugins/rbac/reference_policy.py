"""Derive ``bootstrap_policy.json`` from kube-apiserver's own answers.

The bootstrap policy is the one a real kube-apiserver v1.32 creates at start
(``plugin/pkg/auth/authorizer/rbac/bootstrappolicy``), captured as the
``bootstrap-*.json`` transcripts. Regenerate after a new capture::

    python -m kapiserver_plugins.rbac.reference_policy /work/shared/reference

Only what the policy decides is kept: names, namespaces, labels, annotations, rules,
aggregation rules, subjects and role references (no uids, times or managedFields).
"""

from __future__ import annotations

import json
import os
import sys

#: transcript file -> the key of that kind in the policy document
SOURCES = {"clusterroles": "bootstrap-clusterroles.json",
           "clusterrolebindings": "bootstrap-clusterrolebindings.json",
           "roles": "bootstrap-roles-all-namespaces.json",
           "rolebindings": "bootstrap-rolebindings-all-namespaces.json"}
KEPT_METADATA = ("name", "namespace", "labels", "annotations")
KEPT_FIELDS = ("rules", "aggregationRule", "subjects", "roleRef")
DATA_FILE = os.path.join(os.path.dirname(__file__), "bootstrap_policy.json")


def policy_object(item: dict) -> dict:
    """One captured object reduced to what the policy decides."""
    meta = item.get("metadata") or {}
    obj = {"metadata": {k: meta[k] for k in KEPT_METADATA if k in meta}}
    for field in KEPT_FIELDS:
        if item.get(field) is not None:
            obj[field] = item[field]
    return obj


def derive(reference_dir: str) -> dict:
    """The policy document: ``{resource: [objects sorted by namespace and name]}``."""
    policy = {}
    for resource, filename in SOURCES.items():
        with open(os.path.join(reference_dir, filename)) as f:
            items = json.load(f)["response"]["body"]["items"]
        objects = [policy_object(i) for i in items]
        policy[resource] = sorted(objects, key=lambda o: (o["metadata"].get("namespace", ""),
                                                          o["metadata"]["name"]))
    return policy


def load() -> dict:
    """The shipped policy."""
    with open(DATA_FILE) as f:
        return json.load(f)


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    reference_dir = args[0] if args else "/work/shared/reference"
    with open(DATA_FILE, "w") as f:
        json.dump(derive(reference_dir), f, indent=1, sort_keys=True)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
