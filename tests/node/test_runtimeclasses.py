"""node.k8s.io/v1 RuntimeClasses: validation, update rules and Table cells."""

from kapiserver_plugins.node.runtimeclasses import RUNTIME_CLASSES, RuntimeClassStrategy
from tests.support.kinds import create, stored, texts, update

CLASSES = RuntimeClassStrategy(RUNTIME_CLASSES)
LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
             "'-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
             "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")


def runtime_class(handler="runc", **fields) -> dict:
    return {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
            "metadata": {"name": "rc"}, "handler": handler, **fields}


def test_handler_is_a_dns_label():
    obj, errors = create(CLASSES, runtime_class())
    assert errors == [] and "generation" not in obj["metadata"]
    assert texts(create(CLASSES, runtime_class("Run_C"))[1]) == [
        f'handler: Invalid value: "Run_C": {LABEL_MSG}']


def test_overhead_and_scheduling():
    _, errors = create(CLASSES, runtime_class(
        overhead={"podFixed": {"cpu": "-1"}},
        scheduling={"nodeSelector": {"a/b/c": "x"},
                    "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"},
                                    {"key": "k", "operator": "Exists", "effect": "NoSchedule"},
                                    {"key": "k", "operator": "Exists", "value": "v"}]}))
    fields = [t.split(":")[0] for t in texts(errors)]
    assert fields[0] == "overhead.limits[cpu]"
    assert "scheduling.nodeSelector" in fields
    assert 'scheduling.tolerations[1]: Duplicate value: core.Toleration{Key:"k", ' \
           'Operator:"Exists", Value:"", Effect:"NoSchedule", ' \
           "TolerationSeconds:(*int64)(nil)}" in texts(errors)
    assert any(t.startswith("scheduling.tolerations[2].operator") for t in texts(errors))


def test_handler_is_immutable_and_updates_need_a_resource_version():
    old = stored(CLASSES, runtime_class())
    new = runtime_class("crun")
    new["metadata"] = dict(old["metadata"])
    assert texts(update(CLASSES, new, old)[1]) == [
        'handler: Invalid value: "crun": field is immutable']
    assert not CLASSES.allow_unconditional_update and CLASSES.allow_create_on_update
    assert CLASSES.table_cells(old)[:2] == ["rc", "runc"]
