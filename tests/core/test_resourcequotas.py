"""ResourceQuota validation, defaults and Table cells (``core.resourcequotas``)."""

from kapiserver.apimachinery.field_errors import aggregate_message
from kapiserver_plugins.core.resourcequotas import (RESOURCE_QUOTAS, ResourceQuotaStrategy,
                                                    _set_quota_defaults, validate_quota_spec,
                                                    validate_quota_status)

STRATEGY = ResourceQuotaStrategy(RESOURCE_QUOTAS)


def quota(spec=None, status=None, name="rq"):
    obj = {"apiVersion": "v1", "kind": "ResourceQuota",
           "metadata": {"name": name, "namespace": "ns", "resourceVersion": "5"},
           "spec": spec or {}}
    if status is not None:
        obj["status"] = status
    return obj


def texts(errs):
    return [e.error_text() for e in errs]


def test_standard_and_qualified_resources_with_whole_counts_are_valid():
    spec = {"hard": {"pods": "5", "configmaps": "10", "requests.cpu": "500m",
                     "limits.memory": "1Gi", "example.com/gpu": "2", "requests.storage": "1Ti"}}
    assert validate_quota_spec(spec) == []


def test_unknown_and_negative_and_fractional_resources_are_refused_as_upstream():
    errs = validate_quota_spec({"hard": {"foo": "1", "cpu": "-1", "pods": "1500m"}})
    assert texts(errs) == [
        'spec.hard[cpu]: Invalid value: "-1": must be greater than or equal to 0',
        "spec.hard[foo]: Invalid value: foo: must be a standard resource type or fully "
        "qualified",
        "spec.hard[foo]: Invalid value: foo: must be a standard resource for quota",
        "spec.hard[pods]: Invalid value: resource.Quantity{i:resource.int64Amount{value:1500, "
        'scale:-3}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"1500m", '
        'Format:"DecimalSI"}: must be an integer',
    ]


def test_scopes_must_suit_the_resources_and_not_conflict():
    errs = validate_quota_spec({"hard": {"configmaps": "1"}, "scopes": ["BestEffort", "Foo",
                                                                         "NotBestEffort"]})
    assert texts(errs) == [
        'spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort", "Foo", '
        '"NotBestEffort"}: unsupported scope applied to resource',
        'spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort", "Foo", '
        '"NotBestEffort"}: unsupported scope',
        'spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort", "Foo", '
        '"NotBestEffort"}: unsupported scope applied to resource',
        'spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort", "Foo", '
        '"NotBestEffort"}: conflicting scopes',
    ]
    assert validate_quota_spec({"hard": {"pods": "3", "requests.cpu": "1"},
                                "scopes": ["NotTerminating", "PriorityClass"]}) == []


def test_scope_selectors_check_operators_and_values():
    spec = {"hard": {"pods": "1"}, "scopeSelector": {"matchExpressions": [
        {"scopeName": "PriorityClass", "operator": "In"},
        {"scopeName": "BestEffort", "operator": "In", "values": ["x"]},
        {"scopeName": "Terminating", "operator": "Exists", "values": ["x"]},
        {"scopeName": "PriorityClass", "operator": "Bogus"},
    ]}}
    assert texts(validate_quota_spec(spec)) == [
        "spec.scopeSelector.matchExpressions.values: Required value: must be at least one "
        "value when `operator` is 'In' or 'NotIn' for scope selector",
        'spec.scopeSelector.matchExpressions.operator: Invalid value: "In": must be \'Exist\' '
        "when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, "
        "ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or "
        "ResourceQuotaScopeCrossNamespacePodAffinity",
        'spec.scopeSelector.matchExpressions.values: Invalid value: []string{"x"}: must be no '
        "value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
        'spec.scopeSelector.matchExpressions.operator: Invalid value: "Bogus": not a valid '
        "selector operator",
    ]


def test_scopes_are_immutable_but_the_hard_limits_may_change():
    old = quota({"hard": {"pods": "1"}, "scopes": ["Terminating"]})
    new = quota({"hard": {"pods": "2"}, "scopes": ["Terminating"]})
    assert STRATEGY.validate_update(new, old) == []
    new["spec"]["scopes"] = ["NotTerminating"]
    assert texts(STRATEGY.validate_update(new, old)) == [
        'spec.scopes: Invalid value: []core.ResourceQuotaScope{"NotTerminating"}: field is '
        "immutable"]


def test_status_validation_covers_hard_and_used():
    errs = validate_quota_status({"hard": {"pods": "2"}, "used": {"pods": "-1", "bad": "1"}})
    assert aggregate_message(errs) == (
        "[status.used[bad]: Invalid value: bad: must be a standard resource type or fully "
        "qualified, status.used[bad]: Invalid value: bad: must be a standard resource for "
        'quota, status.used[pods]: Invalid value: "-1": must be greater than or equal to 0]')


def test_quantities_are_rounded_up_to_thousandths():
    obj = quota({"hard": {"cpu": "0.0001", "memory": "1024Mi"}},
                {"hard": {"cpu": "1.0001"}, "used": {"cpu": "0.00001"}})
    _set_quota_defaults(obj)
    assert obj["spec"]["hard"] == {"cpu": "1m", "memory": "1Gi"}
    assert obj["status"] == {"hard": {"cpu": "1001m"}, "used": {"cpu": "1m"}}


def test_table_cells_split_requests_and_limits():
    obj = quota(status={"hard": {"pods": "10", "limits.cpu": "2", "requests.cpu": "1"},
                        "used": {"pods": "3", "limits.cpu": "500m"}})
    obj["metadata"]["creationTimestamp"] = "2020-01-01T00:00:00Z"
    name, age, requests, limits = STRATEGY.table_cells(obj)
    assert (name, requests, limits) == ("rq", "pods: 3/10, requests.cpu: 0/1",
                                        "limits.cpu: 500m/2")
    assert "y" in age  # created years ago
