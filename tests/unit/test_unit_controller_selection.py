"""``--controllers``: which controllers run, as kube-controller-manager's flag chooses."""

import pytest

from kapiserver.controllers import select
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
