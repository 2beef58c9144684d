"""``--controllers``: which controllers run, as kube-controller-manager's flag chooses."""

import pytest

from kapiserver.controllers import aliased, select
from kapiserver.errors import ConfigError


def factory(default_enabled=True):
    def make(server):
        return None
    make.default_enabled = default_enabled
    return make


FACTORIES = {"namespace": factory(), "serviceaccount": factory(),
             "root-ca-cert-publisher": factory(), "experimental": factory(False)}


@pytest.mark.parametrize("chosen, expected", [
    (["*"], ["namespace", "root-ca-cert-publisher", "serviceaccount"]),
    (["*", "-serviceaccount"], ["namespace", "root-ca-cert-publisher"]),
    (["-serviceaccount", "*"], ["namespace", "root-ca-cert-publisher"]),
    (["*", "experimental"], ["experimental", "namespace", "root-ca-cert-publisher",
                             "serviceaccount"]),
    (["namespace"], ["namespace"]),
    (["namespace", "-namespace"], []),
    ([], []),
    ([""], []),
])
def test_selection(chosen, expected):
    assert select(FACTORIES, chosen) == expected


def test_unknown_names_are_refused_with_the_choices():
    with pytest.raises(ConfigError) as info:
        select(FACTORIES, ["*", "-bogus", "other"])
    assert info.value.errors == [
        "--controllers: unknown controller(s) -bogus, other; valid choices: *, experimental, "
        "namespace, root-ca-cert-publisher, serviceaccount"]


ALIASED = {"namespace-controller": aliased(factory(), "namespace"),
           "garbage-collector-controller": aliased(factory(), "garbagecollector"),
           "experimental-controller": aliased(factory(False), "experimental")}


@pytest.mark.parametrize("chosen, expected", [
    (["*"], ["garbage-collector-controller", "namespace-controller"]),
    (["*", "-garbagecollector"], ["namespace-controller"]),
    (["*", "-garbage-collector-controller", "-namespace"], []),
    (["namespace", "experimental"], ["experimental-controller", "namespace-controller"]),
])
def test_former_names_still_choose_the_controllers(chosen, expected):
    assert select(ALIASED, chosen) == expected


def test_unknown_names_list_the_current_names_only():
    with pytest.raises(ConfigError) as info:
        select(ALIASED, ["-garbage-collector"])
    assert info.value.errors == [
        "--controllers: unknown controller(s) -garbage-collector; valid choices: *, "
        "experimental-controller, garbage-collector-controller, namespace-controller"]


def test_the_installed_plugins_use_kube_controller_managers_names():
    from kapiserver.plugin_manager import new_plugin_manager

    names = new_plugin_manager().collect("kapiserver_controllers", config=None)
    for name in ("garbage-collector-controller", "namespace-controller",
                 "serviceaccount-controller", "serviceaccount-token-controller",
                 "root-ca-certificate-publisher-controller", "resourcequota-controller",
                 "persistentvolumeclaim-protection-controller",
                 "persistentvolume-protection-controller",
                 "clusterrole-aggregation-controller"):
        assert name in names
    assert select(names, ["*", "-namespace", "-garbagecollector", "-pvc-protection",
                          "-resourcequota"]) == select(
        names, ["*", "-namespace-controller", "-garbage-collector-controller",
                "-persistentvolumeclaim-protection-controller", "-resourcequota-controller"])
