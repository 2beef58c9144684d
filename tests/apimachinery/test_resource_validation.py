"""Tests for kapiserver.apimachinery.resource_validation: 1.32's messages, worked out from
``pkg/apis/core/validation/validation.go`` and ``pkg/apis/core/helper/helpers.go``."""

import pytest

from kapiserver.apimachinery import resource_validation as rv
from kapiserver.apimachinery.field_errors import FieldPath, aggregate_message
from kapiserver.apimachinery.quantity import parse

HARD = FieldPath("spec", "hard")
QUALIFIED_REGEX = ("must consist of alphanumeric characters, '-', '_' or '.', and must start "
                   "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
                   "'123-abc', regex used for validation is "
                   "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


def texts(errors):
    return [err.error_text() for err in errors]


# -- quantities -----------------------------------------------------------------------------

def test_nonnegative_and_positive():
    path = HARD.key("cpu")
    assert rv.validate_nonnegative_quantity(parse("0"), path) == []
    assert texts(rv.validate_nonnegative_quantity(parse("-100m"), path)) == [
        'spec.hard[cpu]: Invalid value: "-100m": must be greater than or equal to 0']
    # the value shown is String(), which keeps a reused input as written
    assert texts(rv.validate_nonnegative_quantity(parse("-1.001"), path)) == [
        'spec.hard[cpu]: Invalid value: "-1.001": must be greater than or equal to 0']
    assert rv.validate_positive_quantity_value(parse("1n"), path) == []
    assert texts(rv.validate_positive_quantity_value(parse("0.0"), path)) == [
        'spec.hard[cpu]: Invalid value: "0": must be greater than zero']


@pytest.mark.parametrize("resource, text, messages", [
    ("cpu", "500m", []),
    ("memory", "1.5Gi", []),
    ("pods", "10", []),
    ("pods", "1k", []),
    ("example.com/gpu", "2", []),
    # MilliValue() rounds up and overflows as Go's int64s do: these pass upstream too
    ("pods", "1.9999", []),
    ("pods", "12E", []),
    ("pods", "-1", ['spec.hard[pods]: Invalid value: "-1": must be greater than or equal to 0']),
    ("pods", "1.5", [
        "spec.hard[pods]: Invalid value: resource.Quantity{i:resource.int64Amount{value:15, "
        "scale:-1}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:\"\", "
        "Format:\"DecimalSI\"}: must be an integer"]),
    ("example.com/gpu", "500m", [
        "spec.hard[example.com/gpu]: Invalid value: resource.Quantity{i:resource."
        "int64Amount{value:500, scale:-3}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, "
        "s:\"500m\", Format:\"DecimalSI\"}: must be an integer"]),
    ("services", "-1.5", [
        'spec.hard[services]: Invalid value: "-1500m": must be greater than or equal to 0',
        "spec.hard[services]: Invalid value: resource.Quantity{i:resource.int64Amount{"
        "value:-15, scale:-1}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:\"\", "
        "Format:\"DecimalSI\"}: must be an integer"]),
])
def test_resource_quantity_value(resource, text, messages):
    errors = rv.validate_resource_quantity_value(resource, parse(text), HARD.key(resource))
    assert texts(errors) == messages


def test_integer_error_for_an_inf_dec_shows_a_pointer():
    errors = rv.validate_resource_quantity_value("pods", parse("0.5Ki"),
                                                 HARD.key("pods"))
    assert errors == []  # 512
    errors = rv.validate_resource_quantity_value("pods", parse("1.1Ki"), HARD.key("pods"))
    (err,) = errors
    assert err.error_body().startswith(
        "Invalid value: resource.Quantity{i:resource.int64Amount{value:0, scale:0}, "
        "d:resource.infDecAmount{Dec:(*inf.Dec)(0xc")
    assert err.error_body().endswith('s:"", Format:"BinarySI"}: must be an integer')
    assert err.to_cause()["reason"] == "FieldValueInvalid"


def test_basic_resource():
    path = FieldPath("status", "capacity").key("cpu")
    assert rv.validate_basic_resource(parse("4"), path) == []
    assert texts(rv.validate_basic_resource(parse("-1.5"), path)) == [
        "status.capacity[cpu]: Invalid value: -2: must be a valid resource quantity"]
    # Value() of a negative inf.Dec fraction truncates and adds one, as upstream does
    assert rv.validate_basic_resource(parse("-0.0000000001"), path) == []


def test_request_against_limit():
    requests = FieldPath("spec", "containers").index(0).child("resources", "requests")
    limits = FieldPath("spec", "containers").index(0).child("resources", "limits")

    def check(resource, request, limit):
        return texts(rv.validate_request_against_limit(
            resource, parse(request), None if limit is None else parse(limit),
            requests, limits))

    assert check("cpu", "500m", "1") == []
    assert check("cpu", "1", "1000m") == []
    assert check("cpu", "1", None) == []
    assert check("cpu", "2", "1") == [
        'spec.containers[0].resources.requests: Invalid value: "2": '
        "must be less than or equal to cpu limit of 1"]
    assert check("memory", "1.5Gi", "1Gi") == [
        'spec.containers[0].resources.requests: Invalid value: "1536Mi": '
        "must be less than or equal to memory limit of 1Gi"]
    assert check("hugepages-2Mi", "2Mi", "2048Ki") == []
    assert check("hugepages-2Mi", "1Mi", "2Mi") == [
        'spec.containers[0].resources.requests: Invalid value: "1Mi": '
        "must be equal to hugepages-2Mi limit of 2Mi"]
    assert check("example.com/gpu", "1", "2") == [
        'spec.containers[0].resources.requests: Invalid value: "1": '
        "must be equal to example.com/gpu limit of 2"]
    assert check("example.com/gpu", "1", None) == [
        "spec.containers[0].resources.limits: Required value: "
        "Limit must be set for non overcommitable resources"]


# -- names ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name, integer, extended, native, overcommit", [
    ("pods", True, False, True, True),
    ("services.loadbalancers", True, False, True, True),
    ("cpu", False, False, True, True),
    ("hugepages-2Mi", False, False, True, False),
    ("example.com/gpu", True, True, False, False),
    ("kubernetes.io/foo", False, False, True, True),
    ("requests.example.com/gpu", False, False, False, False),
    ("example.com/Bad_", False, False, False, False),
])
def test_name_predicates(name, integer, extended, native, overcommit):
    assert rv.is_integer_resource_name(name) is integer
    assert rv.is_extended_resource_name(name) is extended
    assert rv.is_native_resource(name) is native
    assert rv.is_overcommit_allowed(name) is overcommit


def test_standard_name_sets():
    assert rv.is_standard_resource_name("storage")
    assert not rv.is_standard_quota_resource_name("storage")
    assert rv.is_standard_quota_resource_name("requests.hugepages-1Gi")
    assert not rv.is_standard_container_resource_name("requests.hugepages-1Gi")
    assert rv.is_standard_container_resource_name("hugepages-1Gi")
    assert rv.is_standard_container_resource_name("ephemeral-storage")
    assert not rv.is_standard_container_resource_name("pods")
    assert rv.is_huge_page_resource_name("hugepages-")
    assert rv.is_quota_huge_page_resource_name("requests.hugepages-2Mi")


@pytest.mark.parametrize("name, messages", [
    ("cpu", []),
    ("example.com/foo", []),
    ("count/pods", []),
    # a ResourceName is a fmt.Stringer: upstream prints it unquoted
    ("foo", ["r[foo]: Invalid value: foo: must be a standard resource type or fully qualified"]),
    ("a/b/c", ["r[a/b/c]: Invalid value: a/b/c: a qualified name " + QUALIFIED_REGEX
               + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]),
    ("example.com/", ["r[example.com/]: Invalid value: example.com/: name part must be "
                      "non-empty", "r[example.com/]: Invalid value: example.com/: name part "
                      + QUALIFIED_REGEX]),
])
def test_resource_name(name, messages):
    assert texts(rv.validate_resource_name(name, FieldPath("r").key(name))) == messages


@pytest.mark.parametrize("name, messages", [
    ("memory", []),
    ("hugepages-2Mi", []),
    ("example.com/gpu", []),
    ("kubernetes.io/foo", []),
    ("storage", ["r: Invalid value: storage: must be a standard resource for containers"]),
    ("foo", ["r: Invalid value: foo: must be a standard resource type or fully qualified",
             "r: Invalid value: foo: must be a standard resource for containers"]),
    ("requests.example.com/gpu", [
        "r: Invalid value: requests.example.com/gpu: "
        "doesn't follow extended resource name standard"]),
])
def test_container_resource_name(name, messages):
    assert texts(rv.validate_container_resource_name(name, FieldPath("r"))) == messages


@pytest.mark.parametrize("name, messages", [
    ("requests.cpu", []),
    ("pods", []),
    ("requests.hugepages-2Mi", []),
    ("example.com/gpu", []),
    ("storage", ["r: Invalid value: storage: must be a standard resource for quota"]),
    ("foo", ["r: Invalid value: foo: must be a standard resource type or fully qualified",
             "r: Invalid value: foo: must be a standard resource for quota"]),
])
def test_resource_quota_resource_name(name, messages):
    assert texts(rv.validate_resource_quota_resource_name(name, FieldPath("r"))) == messages


def test_errors_aggregate_like_upstreams():
    errors = (rv.validate_resource_quota_resource_name("pods", HARD.key("pods"))
              + rv.validate_resource_quantity_value("pods", parse("-2"), HARD.key("pods")))
    assert aggregate_message(errors) == (
        'spec.hard[pods]: Invalid value: "-2": must be greater than or equal to 0')
