"""The bootstrap configuration of API Priority and Fairness (``apis/flowcontrol/bootstrap``
of k8s.io/apiserver 1.32): the mandatory and suggested FlowSchemas and
PriorityLevelConfigurations, as the v1 specs the server stores (defaults filled in)."""

from __future__ import annotations

EXEMPT, CATCH_ALL = "exempt", "catch-all"
#: ``flowcontrolv1.AutoUpdateAnnotationKey``.
AUTO_UPDATE_ANNOTATION = "apf.kubernetes.io/autoupdate-spec"
MASTERS, NODES = "system:masters", "system:nodes"
AUTHENTICATED, UNAUTHENTICATED = "system:authenticated", "system:unauthenticated"
KUBE_CONTROLLER_MANAGER, KUBE_SCHEDULER = ("system:kube-controller-manager",
                                           "system:kube-scheduler")


def _group(name: str) -> dict:
    return {"kind": "Group", "group": {"name": name}}


def _user(name: str) -> dict:
    return {"kind": "User", "user": {"name": name}}


def _service_account(namespace: str, name: str) -> dict:
    return {"kind": "ServiceAccount", "serviceAccount": {"namespace": namespace, "name": name}}


def _resources(verbs, groups, resources, cluster_scope: bool) -> dict:
    rule = {"verbs": list(verbs), "apiGroups": list(groups), "resources": list(resources)}
    if cluster_scope:
        rule["clusterScope"] = True
    rule["namespaces"] = ["*"]
    return rule


_EVERY_RESOURCE = _resources(["*"], ["*"], ["*"], True)
_EVERY_PATH = {"verbs": ["*"], "nonResourceURLs": ["*"]}
_ALL_AUTHENTICATED = [_group(UNAUTHENTICATED), _group(AUTHENTICATED)]
_KUBE_SYSTEM_ACCOUNTS = _service_account("kube-system", "*")


def _everything(*subjects) -> list:
    return [{"subjects": list(subjects), "resourceRules": [_EVERY_RESOURCE],
             "nonResourceRules": [_EVERY_PATH]}]


def _schema(level: str, precedence: int, method: str | None, rules: list) -> dict:
    spec = {"priorityLevelConfiguration": {"name": level}, "matchingPrecedence": precedence}
    if method:
        spec["distinguisherMethod"] = {"type": method}
    spec["rules"] = rules
    return spec


def _queuing(shares: int, queues: int, hand: int, lendable: int) -> dict:
    return {"type": "Limited", "limited": {
        "nominalConcurrencyShares": shares,
        "limitResponse": {"type": "Queue", "queuing": {"queues": queues, "handSize": hand,
                                                        "queueLengthLimit": 50}},
        "lendablePercent": lendable}}


#: ``MandatoryPriorityLevelConfigurations``: name -> spec.
MANDATORY_PRIORITY_LEVELS = {
    EXEMPT: {"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}},
    CATCH_ALL: {"type": "Limited", "limited": {"nominalConcurrencyShares": 5,
                                               "limitResponse": {"type": "Reject"},
                                               "lendablePercent": 0}},
}
#: ``MandatoryFlowSchemas``: name -> spec.
MANDATORY_FLOW_SCHEMAS = {
    EXEMPT: _schema(EXEMPT, 1, None, _everything(_group(MASTERS))),
    CATCH_ALL: _schema(CATCH_ALL, 10000, "ByUser", _everything(*_ALL_AUTHENTICATED)),
}
#: ``SuggestedPriorityLevelConfigurations``.
SUGGESTED_PRIORITY_LEVELS = {
    "system": _queuing(30, 64, 6, 33),
    "node-high": _queuing(40, 64, 6, 25),
    "leader-election": _queuing(10, 16, 4, 0),
    "workload-high": _queuing(40, 128, 6, 50),
    "workload-low": _queuing(100, 128, 6, 90),
    "global-default": _queuing(20, 128, 6, 50),
}
_LEASES = _resources(["get", "create", "update"], ["coordination.k8s.io"], ["leases"], False)
#: ``SuggestedFlowSchemas``.
SUGGESTED_FLOW_SCHEMAS = {
    "system-nodes": _schema("system", 500, "ByUser", _everything(_group(NODES))),
    "system-node-high": _schema("node-high", 400, "ByUser", [{
        "subjects": [_group(NODES)],
        "resourceRules": [_resources(["*"], [""], ["nodes", "nodes/status"], True),
                          _resources(["*"], ["coordination.k8s.io"], ["leases"], False)]}]),
    "probes": _schema(EXEMPT, 2, None, [{
        "subjects": list(_ALL_AUTHENTICATED),
        "nonResourceRules": [{"verbs": ["get"],
                              "nonResourceURLs": ["/healthz", "/readyz", "/livez"]}]}]),
    "system-leader-election": _schema("leader-election", 100, "ByUser", [{
        "subjects": [_user(KUBE_CONTROLLER_MANAGER), _user(KUBE_SCHEDULER),
                     _KUBE_SYSTEM_ACCOUNTS],
        "resourceRules": [_LEASES]}]),
    "workload-leader-election": _schema("leader-election", 200, "ByUser", [{
        "subjects": [_KUBE_SYSTEM_ACCOUNTS],
        "resourceRules": [
            _resources(["get", "create", "update"], [""], ["endpoints", "configmaps"], False),
            _LEASES]}]),
    "endpoint-controller": _schema("workload-high", 150, "ByUser", [{
        "subjects": [_user(KUBE_CONTROLLER_MANAGER),
                     _service_account("kube-system", "endpoint-controller"),
                     _service_account("kube-system", "endpointslicemirroring-controller")],
        "resourceRules": [_resources(["get", "create", "update"], [""], ["endpoints"],
                                     False)]}]),
    "kube-controller-manager": _schema("workload-high", 800, "ByNamespace",
                                       _everything(_user(KUBE_CONTROLLER_MANAGER))),
    "kube-scheduler": _schema("workload-high", 800, "ByNamespace",
                              _everything(_user(KUBE_SCHEDULER))),
    "kube-system-service-accounts": _schema("workload-high", 900, "ByNamespace",
                                            _everything(_KUBE_SYSTEM_ACCOUNTS)),
    "service-accounts": _schema("workload-low", 9000, "ByUser",
                                _everything(_group("system:serviceaccounts"))),
    "global-default": _schema("global-default", 9900, "ByUser",
                              _everything(*_ALL_AUTHENTICATED)),
}


def mandatory_object(kind: str, name: str) -> dict:
    """The mandatory ``kind`` object ``name`` as the filter imagines it when it is not
    stored (no uid: the response headers then carry empty uids, as upstream's)."""
    specs = MANDATORY_FLOW_SCHEMAS if kind == "FlowSchema" else MANDATORY_PRIORITY_LEVELS
    return {"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": kind,
            "metadata": {"name": name, "annotations": {AUTO_UPDATE_ANNOTATION: "true"}},
            "spec": specs[name]}
