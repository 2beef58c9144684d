"""ReplicationController defaults, status validation, Scale and Table cells
(``kapiserver_plugins.core.replicationcontrollers``), and PodTemplate cells."""

from kapiserver_plugins.core.podtemplates import PODTEMPLATES, PodTemplateStrategy
from kapiserver_plugins.core.replicationcontrollers import (REPLICATION_CONTROLLERS,
                                                            ReplicationControllerStrategy,
                                                            set_controller_defaults,
                                                            validate_controller_status)
from kapiserver.apimachinery.field_errors import FieldPath

STRATEGY = ReplicationControllerStrategy(REPLICATION_CONTROLLERS)


def controller(spec, status=None, **meta):
    obj = {"apiVersion": "v1", "kind": "ReplicationController",
           "metadata": {"name": "rc1", "namespace": "ns", **meta}, "spec": spec}
    if status is not None:
        obj["status"] = status
    return obj


def template(labels=None):
    meta = {"labels": labels} if labels is not None else {}
    return {"metadata": meta, "spec": {"containers": [{"name": "app", "image": "nginx:1.27"},
                                                      {"name": "side", "image": "busybox"}]}}


def test_selector_labels_and_replicas_default_from_the_template():
    obj = controller({"template": template({"app": "web"})})
    set_controller_defaults(obj)
    assert obj["spec"]["selector"] == {"app": "web"}
    assert obj["metadata"]["labels"] == {"app": "web"}
    assert obj["spec"]["replicas"] == 1
    pod_spec = obj["spec"]["template"]["spec"]
    assert pod_spec["restartPolicy"] == "Always"
    assert pod_spec["containers"][0]["imagePullPolicy"] == "IfNotPresent"


def test_given_selector_labels_and_replicas_are_kept():
    obj = controller({"template": template({"app": "web"}), "selector": {"tier": "x"},
                      "replicas": 0}, labels={"own": "label"})
    set_controller_defaults(obj)
    assert obj["spec"]["selector"] == {"tier": "x"}
    assert obj["metadata"]["labels"] == {"own": "label"}
    assert obj["spec"]["replicas"] == 0


def test_a_controller_without_a_template_gets_only_its_replicas():
    obj = controller({})
    set_controller_defaults(obj)
    assert obj["spec"] == {"replicas": 1}


def test_status_counts_are_ordered():
    errs = validate_controller_status({"replicas": 2, "readyReplicas": 3,
                                       "availableReplicas": 4, "fullyLabeledReplicas": -1},
                                      FieldPath("status"))
    assert [e.error_text() for e in errs] == [
        "status.fullyLabeledReplicas: Invalid value: -1: must be greater than or equal to 0",
        "status.readyReplicas: Invalid value: 3: cannot be greater than status.replicas",
        "status.availableReplicas: Invalid value: 4: cannot be greater than status.replicas",
        "status.availableReplicas: Invalid value: 4: cannot be greater than readyReplicas",
    ]


def test_scale_reads_the_map_selector():
    obj = controller({"replicas": 3, "selector": {"tier": "x", "app": "web"}},
                     {"replicas": 2})
    assert STRATEGY.scale.selector(obj) == "app=web,tier=x"
    assert (STRATEGY.scale.spec_replicas(obj), STRATEGY.scale.status_replicas(obj)) == (3, 2)
    STRATEGY.scale.set_replicas(obj, 5)
    assert obj["spec"]["replicas"] == 5


def test_status_replicas_is_a_field_selector():
    obj = controller({}, {"replicas": 2})
    assert STRATEGY.selectable_fields(obj)["status.replicas"] == "2"
    assert STRATEGY.selectable_fields(controller({}))["status.replicas"] == "0"


def test_table_cells():
    obj = controller({"replicas": 3, "selector": {"app": "web"},
                      "template": template({"app": "web"})}, {"replicas": 2, "readyReplicas": 1},
                     creationTimestamp="2020-01-01T00:00:00Z")
    cells = STRATEGY.table_cells(obj)
    assert cells[:4] == ["rc1", 3, 2, 1]
    assert cells[5:] == ["app,side", "nginx:1.27,busybox", "app=web"]
    assert STRATEGY.table_cells(controller({}))[5:] == ["", "", "<none>"]


def test_pod_template_cells():
    obj = {"metadata": {"name": "pt1"}, "template": template({"b": "2", "a": "1"})}
    assert PodTemplateStrategy(PODTEMPLATES).table_cells(obj) == [
        "pt1", "app,side", "nginx:1.27,busybox", "a=1,b=2"]
    assert PodTemplateStrategy(PODTEMPLATES).table_cells({"metadata": {"name": "e"}}) == [
        "e", "", "", "<none>"]


def texts(errs):
    return [e.error_text() for e in errs]


def defaulted(spec, **meta):
    obj = controller(spec, resourceVersion="9", **meta)
    set_controller_defaults(obj)
    return obj


def test_a_defaulted_controller_is_valid():
    assert STRATEGY.validate(defaulted({"template": template({"app": "web"})})) == []


def test_the_template_must_match_the_selector_and_always_restart():
    obj = defaulted({"selector": {"app": "a"}, "template": template({"app": "b"})})
    obj["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
    obj["spec"]["template"]["spec"]["activeDeadlineSeconds"] = 5
    assert texts(STRATEGY.validate(obj)) == [
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"b"}: '
        "`selector` does not match template `labels`",
        'spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: '
        '"Always"',
        "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in "
        "ReplicationController is not Supported",
    ]


def test_a_selector_and_a_template_are_required():
    obj = controller({"replicas": -1, "minReadySeconds": -2})
    assert texts(STRATEGY.validate(obj)) == [
        "spec.minReadySeconds: Invalid value: -2: must be greater than or equal to 0",
        "spec.selector: Required value",
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        "spec.template: Required value",
    ]


def test_non_convertible_selectors_cannot_change():
    old = defaulted({"template": template({"app": "web"})},
                    annotations={"non-convertible.kubernetes.io/selector": "x"})
    new = defaulted({"template": template({"app": "web", "v": "2"}),
                     "selector": {"app": "web", "v": "2"}},
                    annotations={"non-convertible.kubernetes.io/selector": "x"})
    assert texts(STRATEGY.validate_update(new, old)) == [
        'spec.selector: Invalid value: map[string]string{"app":"web", "v":"2"}: cannot update '
        "non-convertible selector"]


def test_fields_of_disabled_features_leave_new_templates():
    resize = [{"resourceName": "cpu", "restartPolicy": "NotRequired"}]
    obj = defaulted({"template": template({"app": "web"})})
    obj["spec"]["template"]["spec"]["containers"][0]["resizePolicy"] = resize
    STRATEGY.on_create(obj)
    assert "resizePolicy" not in obj["spec"]["template"]["spec"]["containers"][0]
    old = defaulted({"template": template({"app": "web"})})
    old["spec"]["template"]["spec"]["containers"][0]["resizePolicy"] = resize
    new = defaulted({"template": template({"app": "web"})})
    new["spec"]["template"]["spec"]["containers"][0]["resizePolicy"] = resize
    STRATEGY.on_update(new, old)  # kept: the stored template already uses it
    assert new["spec"]["template"]["spec"]["containers"][0]["resizePolicy"] == resize
    pod_template = {"metadata": {"name": "pt"}, "template": template({"a": "b"})}
    pod_template["template"]["spec"]["containers"][1]["resizePolicy"] = resize
    PodTemplateStrategy(PODTEMPLATES).on_create(pod_template)
    assert "resizePolicy" not in pod_template["template"]["spec"]["containers"][1]
