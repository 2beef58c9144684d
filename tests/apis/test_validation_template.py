"""Pod templates (ValidatePodTemplateSpec and its RC variant) and validation options."""

import copy

import pytest

from kapiserver.apis.core import defaults
from kapiserver.apis.core.validation import (PodValidationOptions, pod_template_validation_options,
                                             pod_validation_options, validate_pod_template,
                                             validate_pod_template_spec,
                                             validate_pod_template_spec_for_rc,
                                             validate_pod_template_spec_update,
                                             validate_pod_template_update)
from kapiserver.apimachinery.field_errors import FieldPath

from .conftest import make_pod, texts

PATH = FieldPath("spec", "template")


def template(**spec):
    tmpl = {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    tmpl["spec"].update(copy.deepcopy(spec))
    defaults.set_pod_template_spec_defaults(tmpl)
    return tmpl


def test_a_defaulted_template_is_valid():
    assert validate_pod_template_spec(template(), PATH) == []


def test_template_labels_annotations_and_spec_paths():
    tmpl = template(containers=[{"name": "c", "image": " padded ", "ports": [
        {"containerPort": 80}]}], hostNetwork=True)
    tmpl["metadata"] = {"labels": {"a b": "c"}, "annotations": {"x y": "z"}}
    assert texts(validate_pod_template_spec(tmpl, PATH)) == [
        'spec.template.labels: Invalid value: "a b": name part must consist of alphanumeric '
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character "
        "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        'spec.template.annotations: Invalid value: "x y": name part must consist of '
        "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
        "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"]


def test_templates_refuse_ephemeral_containers():
    tmpl = template(ephemeralContainers=[{"name": "e", "image": "i"}])
    assert texts(validate_pod_template_spec(tmpl, PATH)) == [
        "spec.template.spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in "
        "pod template"]


def test_template_host_ports_must_match_when_set():
    tmpl = template(hostNetwork=True, containers=[{"name": "c", "image": "i", "ports": [
        {"containerPort": 80, "hostPort": 81}]}])
    assert texts(validate_pod_template_spec(tmpl, PATH)) == [
        "spec.template.spec.containers[0].ports[0].hostPort: Invalid value: 81: must match "
        "`containerPort` when `hostNetwork` is true"]


def test_template_errors_nest_under_the_given_path():
    tmpl = template(restartPolicy="Sometimes")
    path = FieldPath("spec", "jobTemplate", "spec", "template")
    assert texts(validate_pod_template_spec(tmpl, path)) == [
        'spec.jobTemplate.spec.template.spec.restartPolicy: Unsupported value: "Sometimes": '
        'supported values: "Always", "OnFailure", "Never"']


def test_rc_templates():
    tmpl = template(restartPolicy="Never", activeDeadlineSeconds=5)
    assert texts(validate_pod_template_spec_for_rc(tmpl, {"app": "other"}, PATH)) == [
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: '
        "`selector` does not match template `labels`",
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: '
        '"Always"',
        "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in "
        "ReplicationController is not Supported"]
    assert texts(validate_pod_template_spec_for_rc(None, {}, PATH)) == [
        "spec.template: Required value"]
    assert validate_pod_template_spec_for_rc(template(), {"app": "web"}, PATH) == []


def test_pod_template_objects():
    obj = {"metadata": {"name": "t", "namespace": "ns"}, "template": template()}
    assert validate_pod_template(obj) == []
    bad = copy.deepcopy(obj)
    bad["metadata"]["name"] = "T"
    bad["template"]["spec"]["dnsPolicy"] = "Nope"
    assert [e.field for e in validate_pod_template(bad)] == ["metadata.name",
                                                             "template.spec.dnsPolicy"]
    old = dict(obj, metadata=dict(obj["metadata"], resourceVersion="1"))
    new = copy.deepcopy(old)
    new["template"]["spec"]["containers"][0]["image"] = "other"
    assert validate_pod_template_update(new, old) == []


def test_update_options_keep_what_the_old_template_allowed():
    old = template(topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "z",
                                               "whenUnsatisfiable": "DoNotSchedule",
                                               "labelSelector": {"matchLabels": {"a": "-"}}}])
    new = copy.deepcopy(old)
    assert validate_pod_template_spec(new, PATH) != []
    assert validate_pod_template_spec_update(new, old, PATH) == []
    opts = pod_template_validation_options(new, old)
    assert opts.allow_invalid_topology_spread_constraint_label_selector


@pytest.mark.parametrize("old_spec, option", [
    ({"containers": [{"name": "c", "image": "i", "resources": {
        "limits": {"hugepages-2Mi": "3Mi", "memory": "1Gi"}}}]},
     "allow_indivisible_huge_pages_values"),
    ({"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "topologyKey": "z", "labelSelector": {"matchExpressions": [
            {"key": "a", "operator": "In", "values": ["-bad-"]}]}}]}}},
     "allow_invalid_label_value_in_selector"),
    ({"volumes": [{"name": "p", "projected": {"sources": [{"serviceAccountToken": {
        "path": "../token"}}]}}]}, "allow_non_local_projected_token_path"),
    ({"hostNetwork": True, "securityContext": {"sysctls": [{"name": "net.core.somaxconn"}]}},
     "allow_namespaced_sysctls_for_host_net_and_host_ipc"),
    ({"dnsConfig": {"searches": ["a_b"]}}, "allow_relaxed_dns_search_validation"),
])
def test_options_from_the_old_spec(old_spec, option):
    old = {"metadata": {}, "spec": old_spec}
    assert getattr(pod_template_validation_options({"spec": {}}, old), option) is True
    assert getattr(pod_template_validation_options({"spec": {}}), option) is False


def test_pod_options():
    pod = make_pod()
    assert pod_validation_options(pod).resource_is_pod
    assert not pod_template_validation_options(pod).resource_is_pod
    old = make_pod()
    old["metadata"]["annotations"] = {"controller.kubernetes.io/pod-deletion-cost": "x"}
    assert pod_validation_options(pod, old).allow_invalid_pod_deletion_cost
    defaults_1_32 = PodValidationOptions()
    assert defaults_1_32.allow_relaxed_environment_variable_validation
    assert not defaults_1_32.pod_level_resources_enabled
