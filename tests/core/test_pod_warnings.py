"""The warnings of GetWarningsForPod and GetWarningsForPodTemplate, word for word."""

from kapiserver.apimachinery.field_errors import FieldPath
from kapiserver_plugins.core.pods.handler import warnings_on_create
from kapiserver_plugins.core.pods.warnings import pod_template_warnings, pod_warnings


def pod(meta=None, **spec):
    return {"metadata": {"name": "p", **(meta or {})},
            "spec": {"containers": [{"name": "app", "image": "x"}], **spec}}


def test_a_plain_pod_has_no_warnings():
    assert warnings_on_create(pod()) == []


def test_a_name_that_is_no_dns_label():
    assert warnings_on_create(pod({"name": "my.pod"})) == [
        "metadata.name: this is used in the Pod's hostname, which can result in surprising "
        "behavior; a DNS label is recommended: [must not contain dots]"]


def test_deprecated_node_labels_and_empty_selectors():
    obj = pod(nodeSelector={"beta.kubernetes.io/os": "linux"},
              affinity={"nodeAffinity": {
                  "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                      {"matchExpressions": [{"key": "failure-domain.beta.kubernetes.io/zone",
                                             "operator": "Exists"}]}]}},
                  "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                      {"weight": 1, "podAffinityTerm": {"topologyKey": "x"}}]}},
              topologySpreadConstraints=[{"maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule",
                                          "topologyKey": "beta.kubernetes.io/instance-type"}])
    assert pod_warnings(obj) == [
        'spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use '
        '"kubernetes.io/os" instead',
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
        "nodeSelectorTerms[0].matchExpressions[0].key: failure-domain.beta.kubernetes.io/zone "
        'is deprecated since v1.17; use "topology.kubernetes.io/zone" instead',
        "spec.topologySpreadConstraints[0].topologyKey: beta.kubernetes.io/instance-type is "
        'deprecated since v1.17; use "node.kubernetes.io/instance-type" instead',
        "spec.topologySpreadConstraints[0].labelSelector: a null labelSelector results in "
        "matching no pod",
        "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]."
        "podAffinityTerm.labelSelector: a null labelSelector results in matching no pod"]


def test_volumes_annotations_and_names():
    obj = pod({"annotations": {"scheduler.alpha.kubernetes.io/critical-pod": "",
                               "seccomp.security.alpha.kubernetes.io/pod": "runtime/default"}},
              volumes=[{"name": "g", "gitRepo": {"repository": "r"}},
                       {"name": "s", "storageos": {"volumeName": "v"}},
                       {"name": "e", "ephemeral": {"volumeClaimTemplate": {"spec": {
                           "resources": {"requests": {"storage": "1.5"}}}}}}],
              imagePullSecrets=[{"name": "a"}, {"name": "a"}, {}],
              hostAliases=[{"ip": "1.2.3.4"}, {"ip": "1.2.3.4"}],
              terminationGracePeriodSeconds=-1)
    assert pod_warnings(obj) == [
        'metadata.annotations[scheduler.alpha.kubernetes.io/critical-pod]: non-functional in '
        'v1.16+; use the "priorityClassName" field instead',
        "spec.volumes[0].gitRepo: deprecated in v1.11",
        "spec.volumes[1].storageOS: deprecated in v1.22, non-functional in v1.25+",
        'spec.volumes[2].ephemeral.volumeClaimTemplate.spec.resources.requests[storage]: '
        'fractional byte value "1500m" is invalid, must be an integer',
        'spec.hostAliases[1].ip: duplicate ip "1.2.3.4"',
        'spec.imagePullSecrets[1].name: duplicate name "a"',
        'spec.imagePullSecrets[2].name: invalid empty name ""',
        'metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: non-functional in '
        'v1.27+; use the "seccompProfile" field instead',
        "spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and "
        "will be treated as 1"]


def test_containers_resources_env_and_ports():
    obj = pod(containers=[
        {"name": "a", "image": "x",
         "resources": {"limits": {"memory": "1.5"}, "requests": {"ephemeral-storage": "0.5"}},
         "env": [{"name": "X", "value": "1"}, {"name": "X", "value": "$(X)2"},
                 {"name": "X", "value": "3"}],
         "ports": [{"containerPort": 80, "protocol": "TCP"},
                   {"containerPort": 81, "protocol": "TCP", "hostIP": "1.2.3.4"}]},
        {"name": "b", "image": "x", "ports": [{"containerPort": 80, "protocol": "TCP"}]}])
    assert pod_warnings(obj) == [
        'spec.containers[0].resources.limits[memory]: fractional byte value "1500m" is '
        "invalid, must be an integer",
        'spec.containers[0].resources.requests[ephemeral-storage]: fractional byte value '
        '"500m" is invalid, must be an integer',
        'spec.containers[0].env[2]: hides previous definition of "X", which may be dropped '
        "when using apply",
        "spec.containers[0].ports[1]: hostIP set without hostPort: {Name: HostPort:0 "
        "ContainerPort:81 Protocol:TCP HostIP:1.2.3.4}",
        "spec.containers[1].ports[0]: duplicate port definition with "
        "spec.containers[0].ports[0]"]


def test_templates_warn_under_their_path_and_of_apparmor_annotations():
    template = {"metadata": {"annotations": {
        "container.apparmor.security.beta.kubernetes.io/app": "runtime/default"}},
        "spec": {"containers": [{"name": "app", "image": "x"}],
                 "nodeSelector": {"beta.kubernetes.io/arch": "amd64"}}}
    assert pod_template_warnings(template, FieldPath("spec", "template")) == [
        'spec.template.spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; '
        'use "kubernetes.io/arch" instead',
        "spec.template.metadata.annotations[container.apparmor.security.beta.kubernetes.io/app]"
        ': deprecated since v1.30; use the "appArmorProfile" field instead']
    # A Pod's are answered as it is created instead.
    assert pod_warnings(template) == [
        'spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; use '
        '"kubernetes.io/arch" instead']
