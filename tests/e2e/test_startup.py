"""Start-up end to end: the workers take turns at the bootstrap RBAC policy, a restart
reconciles it as upstream does (missing rules and subjects put back, ``autoupdate:
"false"`` objects left alone), and what start-up leaves to the first request (discovery)
still answers in full."""

import json
import re

from kapiserver.testing import KapiserverProcess

ADMIN = dict(user="admin", groups=["system:masters"])
RBAC = "/apis/rbac.authorization.k8s.io/v1"
AUTOUPDATE = "rbac.authorization.kubernetes.io/autoupdate"


def _put(server, path, obj):
    response = server.request("PUT", path, **ADMIN, data=json.dumps(obj),
                              headers={"Content-Type": "application/json"})
    assert response.status_code == 200, response.text
    return response.json()


def test_restart_reconciles_bootstrap_policy(tmp_path):
    server = KapiserverProcess(str(tmp_path), workers=2).start()
    try:
        # One worker wrote the policy; the other found it written.
        outcomes = re.findall(r"RBAC bootstrap policy reconciled: (.*)", server.log())
        assert sorted(re.sub(r"\d+", "N", o) for o in outcomes) == ["N created",
                                                                     "N unchanged"]
        view = server.get(f"{RBAC}/clusterroles/system:discovery", **ADMIN).json()
        wanted_rules = view["rules"]
        # A bootstrap role with a rule taken away, one its owner keeps as it is, and a
        # bootstrap binding with its subjects taken away.
        _put(server, f"{RBAC}/clusterroles/system:discovery", {**view, "rules": []})
        kept = server.get(f"{RBAC}/clusterroles/system:basic-user", **ADMIN).json()
        kept["metadata"].setdefault("annotations", {})[AUTOUPDATE] = "false"
        kept["rules"] = kept["rules"][:1]
        _put(server, f"{RBAC}/clusterroles/system:basic-user", kept)
        binding = server.get(f"{RBAC}/clusterrolebindings/system:discovery", **ADMIN).json()
        wanted_subjects = binding["subjects"]
        _put(server, f"{RBAC}/clusterrolebindings/system:discovery",
             {**binding, "subjects": []})
        untouched = server.get(f"{RBAC}/clusterroles/system:monitoring", **ADMIN).json()
    finally:
        server.stop()

    server = KapiserverProcess(str(tmp_path), workers=2, port=server.port).start()
    try:
        role = server.get(f"{RBAC}/clusterroles/system:discovery", **ADMIN).json()
        # Upstream adds what is missing broken down: one rule per URL and verb.
        assert role["rules"] == [{"nonResourceURLs": [url], "verbs": [verb]}
                                 for rule in wanted_rules for url in rule["nonResourceURLs"]
                                 for verb in rule["verbs"]]
        kept_now = server.get(f"{RBAC}/clusterroles/system:basic-user", **ADMIN).json()
        assert kept_now["rules"] == kept["rules"]
        binding = server.get(f"{RBAC}/clusterrolebindings/system:discovery", **ADMIN).json()
        assert binding["subjects"] == wanted_subjects
        # An object already as the policy has it is not written again.
        again = server.get(f"{RBAC}/clusterroles/system:monitoring", **ADMIN).json()
        assert again["metadata"]["resourceVersion"] == \
            untouched["metadata"]["resourceVersion"]
        assert "RBAC bootstrap policy reconciled" in server.log()
    finally:
        server.stop()


def test_discovery_answers_in_full_on_the_first_request(server):
    # The documents are built on first use: the first request gets every group.
    groups = server.get("/apis", **ADMIN).json()["groups"]
    names = {g["name"] for g in groups}
    assert {"apps", "batch", "rbac.authorization.k8s.io", "apiregistration.k8s.io",
            "flowcontrol.apiserver.k8s.io"} <= names
    aggregated = server.get("/apis", **ADMIN, headers={
        "Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"})
    assert aggregated.status_code == 200
    assert aggregated.headers["ETag"]
    assert {i["metadata"]["name"] for i in aggregated.json()["items"]} == names
    resources = server.get("/apis/apps/v1", **ADMIN).json()["resources"]
    assert "deployments/scale" in {r["name"] for r in resources}
