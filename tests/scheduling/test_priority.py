"""Priority: pods' priority from their class or the global default; one default class."""

import pytest

from kapiserver import errors
from kapiserver.admission import DELETE, UPDATE
from kapiserver_plugins.core.pods import PODS
from kapiserver_plugins.scheduling.priority import Priority
from kapiserver_plugins.scheduling.priorityclasses import (PRIORITY_CLASSES,
                                                           PriorityClassStrategy,
                                                           ensure_system_priority_classes)
from tests.support.admission import AdmissionServer, Attributes, run

GROUP = "scheduling.k8s.io"


@pytest.fixture
def server(tmp_path):
    s = AdmissionServer(str(tmp_path / "db.sqlite"),
                        kinds=((PRIORITY_CLASSES, PriorityClassStrategy),))
    ensure_system_priority_classes(s)
    yield s
    s.close()


def priority_class(name, value, default=False, policy=None):
    obj = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
           "metadata": {"name": name}, "value": value, "globalDefault": default}
    if policy:
        obj["preemptionPolicy"] = policy
    return obj


def pod(**spec):
    return {"metadata": {"name": "p", "namespace": "ns"},
            "spec": {"containers": [{"name": "app", "image": "nginx"}], "schedulerName": "x",
                     "enableServiceLinks": True, **spec}}


def admit(server, obj, **kwargs):
    run(Priority(server), Attributes(PODS, obj, namespace="ns", **kwargs))
    return obj["spec"]


def refused(server, obj) -> str:
    with pytest.raises(errors.Forbidden) as caught:
        admit(server, obj)
    return caught.value.message


def test_without_a_default_class_pods_get_zero(server):
    spec = admit(server, pod())
    assert (spec["priority"], spec["preemptionPolicy"]) == (0, "PreemptLowerPriority")
    assert "priorityClassName" not in spec
    assert list(spec) == ["containers", "schedulerName", "priority", "enableServiceLinks",
                          "preemptionPolicy"]


def test_a_named_class_gives_its_value_and_policy(server):
    server.create(GROUP, "priorityclasses", priority_class("high", 1000, policy="Never"))
    spec = admit(server, pod(priorityClassName="high"))
    assert (spec["priority"], spec["preemptionPolicy"]) == (1000, "Never")
    spec = admit(server, pod(priorityClassName="system-node-critical"))
    assert spec["priority"] == 2000001000


def test_the_global_default_class_names_itself(server):
    server.create(GROUP, "priorityclasses", priority_class("normal", 50, default=True))
    spec = admit(server, pod())
    assert (spec["priorityClassName"], spec["priority"], spec["preemptionPolicy"]) == \
        ("normal", 50, "PreemptLowerPriority")


def test_refusals_word_for_word(server):
    server.create(GROUP, "priorityclasses", priority_class("high", 1000, policy="Never"))
    assert refused(server, pod(priorityClassName="nope")) == \
        'pods "p" is forbidden: no PriorityClass with name nope was found'
    assert refused(server, pod(priorityClassName="high", priority=5)) == (
        'pods "p" is forbidden: the integer value of priority (5) must not be provided in pod '
        'spec; priority admission controller computed 1000 from the given PriorityClass name')
    assert refused(server, pod(priorityClassName="high",
                               preemptionPolicy="PreemptLowerPriority")) == (
        'pods "p" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) '
        'must not be provided in pod spec; priority admission controller computed Never from '
        'the given PriorityClass name')
    # The same value as the class computes is accepted.
    assert admit(server, pod(priorityClassName="high", priority=1000))["priority"] == 1000


def test_deletes_are_left_alone(server):
    run(Priority(server), Attributes(PODS, None, DELETE, old=pod(priority=7), namespace="ns",
                                     name="p"))


def test_updates_keep_the_priority(server):
    old = pod(priority=7, preemptionPolicy="Never")
    spec = admit(server, pod(), operation=UPDATE, old=old, name="p")
    assert (spec["priority"], spec["preemptionPolicy"]) == (7, "Never")


def test_only_one_global_default(server):
    plugin = Priority(server)
    server.create(GROUP, "priorityclasses", priority_class("normal", 50, default=True))
    with pytest.raises(errors.Forbidden) as caught:
        run(plugin, Attributes(PRIORITY_CLASSES, priority_class("other", 10, default=True)))
    assert caught.value.message == ('priorityclasses.scheduling.k8s.io "other" is forbidden: '
                                    'PriorityClass normal is already marked as default. Only '
                                    'one default can exist')
    assert caught.value.details == {"name": "other", "group": "scheduling.k8s.io",
                                    "kind": "priorityclasses"}
    # The default itself may be updated; another may not become the default.
    run(plugin, Attributes(PRIORITY_CLASSES, priority_class("normal", 50, default=True),
                           UPDATE, old=priority_class("normal", 50, default=True),
                           name="normal"))
    with pytest.raises(errors.Forbidden):
        run(plugin, Attributes(PRIORITY_CLASSES, priority_class("low", 1, default=True),
                               UPDATE, old=priority_class("low", 1), name="low"))
    run(plugin, Attributes(PRIORITY_CLASSES, priority_class("low", 1)))


def test_of_two_defaults_the_lowest_wins(server):
    server.create(GROUP, "priorityclasses", priority_class("b", 50, default=True))
    server.create(GROUP, "priorityclasses", priority_class("a", 60, default=True))
    assert admit(server, pod())["priorityClassName"] == "b"
