"""LimitRange defaults and validation (``kapiserver_plugins.core.limitranges``)."""

from kapiserver_plugins.core.limitranges import (LIMIT_RANGES, LimitRangeStrategy,
                                                 set_item_defaults, validate_limits)

STRATEGY = LimitRangeStrategy(LIMIT_RANGES)


def texts(errs):
    return [e.error_text() for e in errs]


def test_container_items_default_limits_to_max_and_requests_to_limits_or_min():
    item = {"type": "Container", "max": {"cpu": "2", "memory": "1Gi"},
            "min": {"cpu": "100m", "ephemeral-storage": "1Gi"}, "default": {"memory": "512Mi"}}
    set_item_defaults(item)
    assert item["default"] == {"memory": "512Mi", "cpu": "2"}
    assert item["defaultRequest"] == {"memory": "512Mi", "cpu": "2",
                                      "ephemeral-storage": "1Gi"}


def test_pod_items_get_no_defaults_but_rounded_quantities():
    item = {"type": "Pod", "max": {"cpu": "0.0001"}}
    set_item_defaults(item)
    assert item == {"type": "Pod", "max": {"cpu": "1m"}}


def test_the_transcript_limit_range_is_valid():
    spec = {"limits": [{"type": "Container", "default": {"cpu": "200m"},
                        "defaultRequest": {"cpu": "100m"}}]}
    assert validate_limits(spec) == []


def test_quantities_must_be_ordered():
    spec = {"limits": [{"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"},
                        "default": {"cpu": "3"}, "defaultRequest": {"cpu": "4"}}]}
    messages = [e.detail for e in validate_limits(spec)]
    assert messages == [
        "min value 2 is greater than max value 1",
        "default request value 4 is greater than max value 1",
        "default request value 4 is greater than default limit value 3",
        "default value 3 is greater than max value 1",
    ]


def test_ratios_and_types():
    spec = {"limits": [
        {"type": "Container", "min": {"cpu": "1"}, "max": {"cpu": "2"},
         "maxLimitRequestRatio": {"cpu": "3"}},
        {"type": "Container"},
        {"type": "Pod", "default": {"cpu": "1"}},
        {"type": "bogus"},
        {"type": "PersistentVolumeClaim"},
    ]}
    assert texts(validate_limits(spec)) == [
        "spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: resource.Quantity{i:resource."
        'int64Amount{value:3, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"3", '
        'Format:"DecimalSI"}: ratio 3 is greater than max/min = 2.000000',
        'spec.limits[1].type: Duplicate value: "Container"',
        "spec.limits[2].default: Forbidden: may not be specified when `type` is 'Pod'",
        'spec.limits[3].type: Invalid value: "bogus": must be a standard limit type or fully '
        "qualified",
        "spec.limits[4].limits: Required value: either minimum or maximum storage value is "
        "required, but neither was provided",
    ]


def test_resource_names_depend_on_the_type():
    spec = {"limits": [{"type": "Container", "max": {"storage": "1Gi"}},
                       {"type": "PersistentVolumeClaim", "max": {"storage": "1Gi"}}]}
    assert texts(validate_limits(spec)) == [
        "spec.limits[0].max[storage]: Invalid value: storage: must be a standard resource for "
        "containers"]


def test_a_limit_range_without_a_name_is_named_by_a_uuid():
    obj = {"metadata": {"namespace": "ns"}, "spec": {"limits": []}}
    STRATEGY.on_create(obj)
    assert len(obj["metadata"]["name"]) == 36
    generated = {"metadata": {"generateName": "lr-"}}
    STRATEGY.on_create(generated)
    assert "name" not in generated["metadata"]
