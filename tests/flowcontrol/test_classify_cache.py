"""FlowControl.classify remembers its answer per user and request class: the same
answers as matching each time, a new answer once the flow schemas change."""

from kapiserver.authentication import UserInfo
from kapiserver.flowcontrol import bootstrap

from .test_apf import _bootstrapped, _info, _objects

REQUESTS = [
    ("admin", ("system:masters",), "GET", "/api/v1/namespaces/x/configmaps/a"),
    ("alice", ("system:authenticated",), "GET", "/api/v1/namespaces/x/configmaps/a"),
    ("alice", ("system:authenticated",), "GET", "/livez/ping"),
    ("alice", ("system:authenticated",), "POST", "/healthz"),
    ("system:node:n", ("system:nodes",), "PATCH", "/api/v1/nodes/n/status"),
    ("system:node:n", ("system:nodes",), "GET", "/api/v1/namespaces/a/pods"),
]


def test_remembered_answers_are_the_matched_ones():
    fresh, cached = _bootstrapped(), _bootstrapped()
    for _ in range(2):  # the second round is answered from the cache
        for user, groups, method, path in REQUESTS:
            info = _info(method, path)
            fresh._classified_for = None  # forget: match every time
            expected, _ = fresh.classify(UserInfo(user, groups=groups), info)
            found, level = cached.classify(UserInfo(user, groups=groups), info)
            assert (found.name, level.name) == (expected.name, expected.level)
    assert len(cached._classified) == len(REQUESTS)


def test_new_flow_schemas_are_matched_again():
    control = _bootstrapped()
    user, info = UserInfo("carol", groups=("system:authenticated",)), \
        _info("GET", "/api/v1/namespaces/team/configmaps")
    assert control.classify(user, info)[0].name == "global-default"
    carol = {"matchingPrecedence": 500, "priorityLevelConfiguration": {"name": "workload-low"},
             "rules": [{"subjects": [{"kind": "User", "user": {"name": "carol"}}],
                        "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"],
                                           "resources": ["*"], "namespaces": ["*"]}]}]}
    control.apply_config(
        _objects("PriorityLevelConfiguration", {**bootstrap.MANDATORY_PRIORITY_LEVELS,
                                                **bootstrap.SUGGESTED_PRIORITY_LEVELS}),
        _objects("FlowSchema", {**bootstrap.MANDATORY_FLOW_SCHEMAS,
                                **bootstrap.SUGGESTED_FLOW_SCHEMAS, "carol": carol}))
    schema, level = control.classify(user, info)
    assert (schema.name, level.name) == ("carol", "workload-low")
    # Another namespace is another request class, matched on its own.
    assert control.classify(user, _info("GET", "/api/v1/namespaces/b/configmaps"))[0].name \
        == "carol"


def test_groups_that_cannot_be_hashed_are_matched_without_the_cache():
    control = _bootstrapped()
    found, _ = control.classify(UserInfo("admin", groups=["system:masters"]),
                                _info("DELETE", "/api/v1/namespaces/x"))
    assert found.name == "exempt"
    assert not control._classified
