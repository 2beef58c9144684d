"""Unit tests of kapiserver.admission: ordering, selection, and the chain."""

import logging
from types import SimpleNamespace

import pytest

from kapiserver import admission
from kapiserver.admission import (CONNECT, CREATE, DELETE, UPDATE, AdmissionChain,
                                  AdmissionPlugin, RECOMMENDED_ORDER)
from kapiserver.errors import ConfigError


def test_order_known_names_follow_recommended_order():
    names = ["ResourceQuota", "NamespaceLifecycle", "AlwaysDeny", "ServiceAccount",
             "MutatingAdmissionWebhook", "AlwaysAdmit", "ValidatingAdmissionWebhook"]
    assert admission.order(names) == ["AlwaysAdmit", "NamespaceLifecycle", "ServiceAccount",
                                      "MutatingAdmissionWebhook", "ValidatingAdmissionWebhook",
                                      "ResourceQuota", "AlwaysDeny"]


def test_order_full_recommended_order_is_stable():
    assert admission.order(list(reversed(RECOMMENDED_ORDER))) == list(RECOMMENDED_ORDER)


def test_order_third_party_between_deny_external_ips_and_mutating_policy():
    names = {"zz-custom", "DenyServiceExternalIPs", "MutatingAdmissionPolicy", "aa-custom",
             "Mid", "NamespaceLifecycle", "ValidatingAdmissionWebhook", "AlwaysDeny"}
    assert admission.order(names) == [
        "NamespaceLifecycle", "DenyServiceExternalIPs", "Mid", "aa-custom", "zz-custom",
        "MutatingAdmissionPolicy", "ValidatingAdmissionWebhook", "AlwaysDeny"]


def test_order_third_party_before_webhooks_even_without_policy_plugins():
    assert admission.order(["ResourceQuota", "MyPlugin", "AlwaysAdmit"]) == [
        "AlwaysAdmit", "MyPlugin", "ResourceQuota"]
    assert admission.order(["b", "a"]) == ["a", "b"]
    assert admission.order([]) == []


def _factory(default_enabled=True):
    return type("F", (), {"default_enabled": default_enabled})


FACTORIES = {
    "NamespaceLifecycle": _factory(),
    "ResourceQuota": _factory(),
    "AlwaysDeny": _factory(False),
    "MyPlugin": _factory(False),
    "Plain": object(),  # no attribute: default on
}


def test_select_defaults_skip_default_disabled():
    assert admission.select(FACTORIES, [], []) == ["NamespaceLifecycle", "Plain",
                                                   "ResourceQuota"]


def test_select_enable_and_disable():
    assert admission.select(FACTORIES, ["MyPlugin", "AlwaysDeny"], ["ResourceQuota"]) == [
        "NamespaceLifecycle", "MyPlugin", "Plain", "AlwaysDeny"]
    assert admission.select(FACTORIES, [], ["NamespaceLifecycle", "Plain", "ResourceQuota"]) == []
    # enabling a default-on plugin is harmless
    assert admission.select(FACTORIES, ["ResourceQuota"], []) == [
        "NamespaceLifecycle", "Plain", "ResourceQuota"]


def test_select_unknown_names_report_option_and_choices():
    with pytest.raises(ConfigError) as excinfo:
        admission.select(FACTORIES, ["Nope", "AlsoNope"], ["Gone"])
    errors = excinfo.value.errors
    assert len(errors) == 2
    enable, disable = errors
    assert enable.startswith("--enable-admission-plugins: ")
    assert "Nope" in enable and "AlsoNope" in enable and "Gone" not in enable
    assert disable.startswith("--disable-admission-plugins: ")
    assert "Gone" in disable
    valid = "valid choices: NamespaceLifecycle, MyPlugin, Plain, ResourceQuota, AlwaysDeny"
    assert valid in enable and valid in disable


def test_select_unknown_with_no_factories():
    with pytest.raises(ConfigError) as excinfo:
        admission.select({}, ["X"], [])
    assert excinfo.value.errors == [
        "--enable-admission-plugins: unknown admission plugin(s) X; valid choices: (none)"]


def test_select_enable_and_disable_same_plugin_is_an_error():
    with pytest.raises(ConfigError) as excinfo:
        admission.select(FACTORIES, ["MyPlugin", "Plain"], ["Plain", "MyPlugin"])
    assert excinfo.value.errors == [
        "--enable-admission-plugins: MyPlugin, Plain also in --disable-admission-plugins"]


def test_config_error_str_joins_errors():
    err = ConfigError(["--a: x", "--b: y"])
    assert str(err) == "--a: x\n--b: y"
    assert ConfigError("--c: z").errors == ["--c: z"]


# -- the chain -----------------------------------------------------------------------------

class Mutating(AdmissionPlugin):
    def __init__(self, name, log, operations=None):
        self.name = name
        self.log = log
        if operations is not None:
            self.operations = frozenset(operations)

    def admit(self, attributes):
        self.log.append(("admit", self.name, attributes.operation))
        attributes.object.setdefault("trail", []).append(self.name)


class Validating(AdmissionPlugin):
    def __init__(self, name, log, operations=None):
        self.name = name
        self.log = log
        if operations is not None:
            self.operations = frozenset(operations)

    def validate(self, attributes):
        self.log.append(("validate", self.name, attributes.operation))


class Both(Mutating, Validating):
    def validate(self, attributes):
        self.log.append(("validate", self.name, attributes.operation))


class Neither(AdmissionPlugin):
    name = "Neither"


def test_mutating_and_validating_properties():
    log = []
    assert (Mutating("m", log).mutating, Mutating("m", log).validating) == (True, False)
    assert (Validating("v", log).mutating, Validating("v", log).validating) == (False, True)
    assert (Both("b", log).mutating, Both("b", log).validating) == (True, True)
    assert (Neither().mutating, Neither().validating) == (False, False)


def test_default_operations_are_all():
    assert Neither().operations == {CREATE, UPDATE, DELETE, CONNECT}
    assert all(Neither().handles(op) for op in (CREATE, UPDATE, DELETE, CONNECT))
    assert not Neither().handles("WATCH")


def test_chain_calls_admit_and_validate_in_order(caplog):
    log = []
    m1, v1, b, m2 = Mutating("m1", log), Validating("v1", log), Both("b", log), Mutating("m2", log)
    with caplog.at_level(logging.INFO, logger="kapiserver.admission"):
        chain = AdmissionChain([m1, v1, b, m2, Neither()])
    assert "m1, v1, b, m2, Neither" in caplog.text
    assert chain.mutating == [m1, b, m2]
    assert chain.validating == [v1, b]
    attributes = SimpleNamespace(operation=CREATE, object={})
    chain.admit(attributes)
    assert log == [("admit", "m1", CREATE), ("admit", "b", CREATE), ("admit", "m2", CREATE)]
    assert attributes.object["trail"] == ["m1", "b", "m2"]
    log.clear()
    chain.validate(attributes)
    assert log == [("validate", "v1", CREATE), ("validate", "b", CREATE)]


def test_chain_respects_operations():
    log = []
    only_create = Mutating("create-only", log, {CREATE})
    only_delete = Validating("delete-only", log, {DELETE})
    chain = AdmissionChain([only_create, only_delete])
    chain.admit(SimpleNamespace(operation=UPDATE, object={}))
    chain.validate(SimpleNamespace(operation=UPDATE, object={}))
    assert log == []
    chain.admit(SimpleNamespace(operation=CREATE, object={}))
    chain.validate(SimpleNamespace(operation=CREATE, object={}))
    assert log == [("admit", "create-only", CREATE)]
    log.clear()
    chain.admit(SimpleNamespace(operation=DELETE, object={}))
    chain.validate(SimpleNamespace(operation=DELETE, object={}))
    assert log == [("validate", "delete-only", DELETE)]


def test_chain_validation_error_propagates_and_stops():
    from kapiserver.errors import Invalid

    log = []

    class Refuse(AdmissionPlugin):
        name = "Refuse"

        def validate(self, attributes):
            raise Invalid("refused")

    after = Validating("after", log)
    chain = AdmissionChain([Refuse(), after])
    with pytest.raises(Invalid, match="refused"):
        chain.validate(SimpleNamespace(operation=CREATE, object={}))
    assert log == []


def test_empty_chain_is_noop():
    chain = AdmissionChain([])
    attributes = SimpleNamespace(operation=CREATE, object={"a": 1})
    chain.admit(attributes)
    chain.validate(attributes)
    assert attributes.object == {"a": 1}
