"""Pod creation: ValidatePodCreate and the ValidatePodSpec rules users meet first."""

import pytest

from kapiserver.apis.core import defaults
from kapiserver.apis.core.validation import (PodValidationOptions, validate_pod_create,
                                             validate_pod_spec)
from kapiserver.apimachinery.field_errors import FieldPath

from .conftest import make_pod, texts

DNS_LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
             "or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  "
             "or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
DNS_SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                 "characters, '-' or '.', and must start and end with an alphanumeric "
                 "character (e.g. 'example.com', regex used for validation is "
                 "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
QUALIFIED = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must "
             "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
             "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?"
             "[A-Za-z0-9]')")
FILE_MODE = "must be a number between 0 and 0777 (octal), both inclusive"
RANGE_ID = "must be between 0 and 2147483647, inclusive"


def errors_of(container=None, metadata=None, **spec):
    pod = make_pod(**spec)
    if container:
        pod["spec"]["containers"][0].update(container)
        defaults.set_pod_defaults(pod)
    if metadata:
        pod["metadata"].update(metadata)
    return texts(validate_pod_create(pod))


def test_a_defaulted_pod_is_valid(pod):
    assert validate_pod_create(pod) == []


@pytest.mark.parametrize("spec, expected", [
    ({"volumes": [{"name": ""}]}, ["spec.volumes[0].name: Required value"]),
    ({"volumes": [{"name": "a", "hostPath": {"path": "/x"}, "emptyDir": {}}]},
     ["spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type"]),
    ({"volumes": [{"name": "a", "emptyDir": {}, "hostPath": {"path": "/x"},
                   "secret": {"secretName": "s"}}]},
     ["spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type",
      "spec.volumes[0].secret: Forbidden: may not specify more than 1 volume type"]),
    ({"volumes": [{"name": "a", "emptyDir": {}}, {"name": "a", "emptyDir": {}}]},
     ['spec.volumes[1].name: Duplicate value: "a"']),
    ({"volumes": [{"name": "A_b", "emptyDir": {}}]},
     [f'spec.volumes[0].name: Invalid value: "A_b": {DNS_LABEL}']),
    ({"volumes": [{"name": "a", "secret": {"defaultMode": 1000, "items": [
        {"key": "", "path": "../x", "mode": -1}]}}]},
     ["spec.volumes[0].secret.secretName: Required value",
      f"spec.volumes[0].secret.defaultMode: Invalid value: 1000: {FILE_MODE}",
      "spec.volumes[0].secret.items[0].key: Required value",
      "spec.volumes[0].secret.items[0].path: Invalid value: \"../x\": must not contain '..'",
      f"spec.volumes[0].secret.items[0].mode: Invalid value: -1: {FILE_MODE}"]),
    ({"volumes": [{"name": "a", "hostPath": {"path": "/a/../b", "type": "Bogus"}}]},
     ["spec.volumes[0].hostPath.path: Invalid value: \"/a/../b\": must not contain '..'",
      'spec.volumes[0].hostPath.type: Unsupported value: "Bogus": supported values: "", '
      '"BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", '
      '"FileOrCreate", "Socket"']),
    ({"volumes": [{"name": "a", "configMap": {"items": [{"key": "k", "path": "/abs"}]}}]},
     ["spec.volumes[0].configMap.name: Required value",
      'spec.volumes[0].configMap.items[0].path: Invalid value: "/abs": must be a relative '
      'path']),
    ({"volumes": [{"name": "a", "nfs": {"server": "s", "path": "rel"}}]},
     ['spec.volumes[0].nfs.path: Invalid value: "rel": must be an absolute path']),
    ({"volumes": [{"name": "a", "gcePersistentDisk": {"pdName": "", "partition": 300}}]},
     ["spec.volumes[0].persistentDisk.pdName: Required value",
      "spec.volumes[0].persistentDisk.partition: Invalid value: 300: must be between 1 and "
      "255, inclusive"]),
    ({"volumes": [{"name": "a", "iscsi": {"targetPortal": "", "iqn": "bogus", "lun": 256,
                                          "chapAuthSession": True}}]},
     ["spec.volumes[0].iscsi.targetPortal: Required value",
      'spec.volumes[0].iscsi.iqn: Invalid value: "bogus": must be valid format starting with '
      'iqn, eui, or naa',
      "spec.volumes[0].iscsi.lun: Invalid value: 256: must be between 0 and 255, inclusive",
      "spec.volumes[0].iscsi.secretRef: Required value"]),
    ({"volumes": [{"name": "a", "iscsi": {"targetPortal": "t:3260", "iqn": "iqn.bad",
                                          "lun": 0}}]},
     ['spec.volumes[0].iscsi.iqn: Invalid value: "iqn.bad": must be valid format']),
    ({"volumes": [{"name": "a", "iscsi": {"targetPortal": "t:3260",
                                          "iqn": "iqn.2015-02.example.com:test", "lun": 0}}]},
     []),
    ({"volumes": [{"name": "a", "fc": {}}]},
     ["spec.volumes[0].fc.targetWWNs: Required value: must specify either targetWWNs or "
      "wwids, but not both"]),
    ({"volumes": [{"name": "a", "fc": {"targetWWNs": ["x"], "wwids": ["y"]}}]},
     ['spec.volumes[0].fc.targetWWNs: Invalid value: []string{"x"}: targetWWNs and wwids '
      'can not be specified simultaneously',
      "spec.volumes[0].fc.lun: Required value: lun is required if targetWWNs is specified"]),
    ({"volumes": [{"name": "a", "rbd": {}}]},
     ["spec.volumes[0].rbd.monitors: Required value",
      "spec.volumes[0].rbd.image: Required value"]),
    ({"volumes": [{"name": "a", "quobyte": {"registry": "host", "volume": "v"}}]},
     ['spec.volumes[0].quobyte.registry: Invalid value: "host": must be a host:port pair or '
      'multiple pairs separated by commas']),
    ({"volumes": [{"name": "a", "quobyte": {"registry": "h:1,[::1]:2", "volume": "v"}}]}, []),
    ({"volumes": [{"name": "a", "flexVolume": {"driver": "d",
                                               "options": {"x.kubernetes.io/o": "v"}}}]},
     ['spec.volumes[0].flexVolume.options[x.kubernetes.io/o]: Invalid value: '
      '"x.kubernetes.io/o": kubernetes.io and k8s.io namespaces are reserved']),
    ({"volumes": [{"name": "a", "azureDisk": {"diskName": "d", "diskURI": "u",
                                              "kind": "Managed"}}]},
     ['spec.volumes[0].azureDisk.diskURI: Unsupported value: "u": supported values: '
      '"/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/'
      'disks/{disk-id}"']),
    ({"volumes": [{"name": "a", "csi": {"driver": "Bad_Driver"}}]},
     [f'spec.volumes[0].csi.driver: Invalid value: "Bad_Driver": {DNS_SUBDOMAIN}']),
    ({"volumes": [{"name": "a", "cephfs": {"monitors": []}}]},
     ["spec.volumes[0].cephfs.monitors: Required value"]),
    ({"volumes": [{"name": "a", "cephfs": {"monitors": ["m"]}, "cinder": {"volumeID": "v"}}]},
     ["spec.volumes[0].cephFS: Forbidden: may not specify more than 1 volume type"]),
    ({"volumes": [{"name": "a", "emptyDir": {"sizeLimit": "-1"}}]},
     ["spec.volumes[0].emptyDir.sizeLimit: Forbidden: SizeLimit field must be a valid resource "
      "quantity"]),
    ({"volumes": [{"name": "a", "downwardAPI": {"items": [
        {"path": "x", "fieldRef": {"fieldPath": "spec.nodeName"}},
        {"path": "y"},
        {"path": "z", "resourceFieldRef": {"resource": "limits.cpu", "divisor": "2"}}]}}]},
     ['spec.volumes[0].downwardAPI.fieldRef.fieldPath: Unsupported value: "spec.nodeName": '
      'supported values: "metadata.annotations", "metadata.labels", "metadata.name", '
      '"metadata.namespace", "metadata.uid"',
      "spec.volumes[0].downwardAPI: Required value: one of fieldRef and resourceFieldRef is "
      "required",
      "spec.volumes[0].downwardAPI.resourceFieldRef.containerName: Required value",
      'spec.volumes[0].downwardAPI.resourceFieldRef.divisor: Invalid value: "limits.cpu": '
      "only divisor's values 1m and 1 are supported with the cpu resource"]),
    ({"volumes": [{"name": "a", "downwardAPI": {"items": [
        {"path": "l", "fieldRef": {"fieldPath": "metadata.labels['app']"}},
        {"path": "n", "fieldRef": {"fieldPath": "metadata.name['x']"}}]}}]},
     ['spec.volumes[0].downwardAPI.fieldRef.fieldPath: Invalid value: "metadata.name[\'x\']": '
      'error converting fieldPath: field label does not support subscript: '
      "metadata.name['x']"]),
    ({"volumes": [{"name": "a", "persistentVolumeClaim": {"claimName": "p-e"}},
                  {"name": "e", "ephemeral": {"volumeClaimTemplate": {"spec": {
                      "accessModes": ["ReadWriteOnce"],
                      "resources": {"requests": {"storage": "1Gi"}}}}}}]},
     ['spec.volumes[0].persistentVolumeClaim.claimName: Invalid value: "p-e": must not '
      'reference a PVC that gets created for an ephemeral volume']),
    ({"volumes": [{"name": "e", "ephemeral": {"volumeClaimTemplate": {
        "metadata": {"name": "x", "labels": {"a": "b"}}, "spec": {}}}}]},
     ["spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.name: Forbidden: cannot be set",
      "spec.volumes[0].ephemeral.volumeClaimTemplate.spec.accessModes: Required value: at "
      "least 1 access mode is required",
      "spec.volumes[0].ephemeral.volumeClaimTemplate.spec.resources[storage]: Required "
      "value"]),
    ({"volumes": [{"name": "e", "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOncePod", "ReadWriteOnce", "Bogus"], "volumeMode": "Raw",
        "resources": {"requests": {"storage": "0"}}}}}}]},
     ['spec.volumes[0].ephemeral.volumeClaimTemplate.spec.accessModes: Unsupported value: '
      '"Bogus": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", '
      '"ReadWriteOncePod"',
      "spec.volumes[0].ephemeral.volumeClaimTemplate.spec.accessModes: Forbidden: may not use "
      "ReadWriteOncePod with other access modes",
      'spec.volumes[0].ephemeral.volumeClaimTemplate.spec.resources[storage]: Invalid value: '
      '"0": must be greater than zero',
      'spec.volumes[0].ephemeral.volumeClaimTemplate.spec.volumeMode: Unsupported value: '
      '"Raw": supported values: "Block", "Filesystem"']),
    ({"serviceAccountName": "", "volumes": [{"name": "p", "projected": {"sources": [
        {"serviceAccountToken": {"path": "/abs", "expirationSeconds": 60}},
        {"secret": {"name": "s", "items": [{"key": "k", "path": "dup"}]},
         "configMap": {"name": "c", "items": [{"key": "k", "path": "dup"}]}}]}}]},
     ["spec.volumes[0].projected.sources[0].serviceAccountToken.expirationSeconds: Invalid "
      "value: 60: may not specify a duration less than 10 minutes",
      'spec.volumes[0].projected.path: Invalid value: "/abs": must be a relative path',
      'spec.volumes[0].projected: Invalid value: "c": conflicting duplicate paths',
      "spec.volumes[0].projected.sources[1]: Forbidden: may not specify more than 1 volume "
      "type per source",
      "spec.volumes[0].projected.sources[0].serviceAccountToken: Forbidden: must not be "
      "specified when serviceAccountName is not set"]),
])
def test_volumes(spec, expected):
    assert errors_of(**spec) == expected


def test_ephemeral_volume_claim_name_must_be_valid():
    long_name = "v" * 63
    pod = make_pod(volumes=[{"name": long_name, "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}])
    pod["metadata"]["name"] = "p" * 200
    claim = pod["metadata"]["name"] + "-" + long_name
    assert texts(validate_pod_create(pod)) == [
        f'spec.volumes[0].name: Invalid value: "{long_name}": PVC name "{claim}": must be no '
        'more than 253 characters']


@pytest.mark.parametrize("container, expected", [
    ({"volumeMounts": [{"name": "nope", "mountPath": ""}, {"name": "nope", "mountPath": ""}]},
     ['spec.containers[0].volumeMounts[0].name: Not found: "nope"',
      "spec.containers[0].volumeMounts[0].mountPath: Required value",
      'spec.containers[0].volumeMounts[1].name: Not found: "nope"',
      "spec.containers[0].volumeMounts[1].mountPath: Required value",
      'spec.containers[0].volumeMounts[1].mountPath: Invalid value: "": must be unique']),
    ({"env": [{"name": ""}, {"name": "A=B"}, {"name": "X", "value": "1", "valueFrom": {
        "fieldRef": {"fieldPath": "metadata.name"}}}, {"name": "Y", "valueFrom": {}},
        {"name": "Z", "valueFrom": {"fieldRef": {"fieldPath": "spec.bogus"}}},
        {"name": "W", "valueFrom": {"resourceFieldRef": {"resource": "limits.gpu"}}},
        {"name": "V", "valueFrom": {"secretKeyRef": {"name": "S", "key": "a/b"}}},
        {"name": "1 relaxed-name.ok!", "value": "x"}]},
     ["spec.containers[0].env[0].name: Required value",
      'spec.containers[0].env[1].name: Invalid value: "A=B": a valid environment variable '
      "name must consist only of printable ASCII characters other than '='",
      'spec.containers[0].env[2].valueFrom: Invalid value: "": may not be specified when '
      '`value` is not empty',
      'spec.containers[0].env[3].valueFrom: Invalid value: "": must specify one of: '
      '`fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`',
      'spec.containers[0].env[4].valueFrom.fieldRef.fieldPath: Invalid value: "spec.bogus": '
      "error converting fieldPath: field label not supported: spec.bogus",
      'spec.containers[0].env[5].valueFrom.resourceFieldRef.resource: Unsupported value: '
      '"limits.gpu": supported values: "limits.cpu", "limits.ephemeral-storage", '
      '"limits.memory", "requests.cpu", "requests.ephemeral-storage", "requests.memory"',
      f'spec.containers[0].env[6].valueFrom.secretKeyRef.name: Invalid value: "S": '
      f"{DNS_SUBDOMAIN}",
      'spec.containers[0].env[6].valueFrom.secretKeyRef.key: Invalid value: "a/b": a valid '
      "config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',"
      "  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"]),
    ({"env": [{"name": "H", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIPs"}}},
              {"name": "M", "valueFrom": {"resourceFieldRef": {"resource": "requests.memory",
                                                               "divisor": "1Mi"}}},
              {"name": "G", "valueFrom": {"resourceFieldRef": {
                  "resource": "limits.hugepages-2Mi"}}},
              {"name": "A", "valueFrom": {"fieldRef": {
                  "fieldPath": "metadata.annotations['Example.com/Key']"}}}]}, []),
    ({"envFrom": [{}, {"configMapRef": {"name": "a"}, "secretRef": {"name": "b"}},
                  {"prefix": "=", "configMapRef": {"name": ""}}]},
     ['spec.containers[0].envFrom: Invalid value: "": must specify one of: `configMapRef` or '
      '`secretRef`',
      'spec.containers[0].envFrom: Invalid value: "": may not have more than one field '
      'specified at a time',
      'spec.containers[0].envFrom[2].prefix: Invalid value: "=": a valid environment variable '
      "name must consist only of printable ASCII characters other than '='",
      "spec.containers[0].envFrom[2].configMapRef.name: Required value"]),
    ({"ports": [{"containerPort": 0, "protocol": "XTP", "name": "TOO-LONG-NAME-FOR-PORT"},
                {"containerPort": 80, "hostPort": 80}, {"containerPort": 81, "hostPort": 80},
                {"name": "http", "containerPort": 1}, {"name": "http", "containerPort": 2}]},
     ['spec.containers[0].ports[0].name: Invalid value: "TOO-LONG-NAME-FOR-PORT": must be no '
      'more than 15 characters',
      'spec.containers[0].ports[0].name: Invalid value: "TOO-LONG-NAME-FOR-PORT": must contain '
      'only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
      'spec.containers[0].ports[0].name: Invalid value: "TOO-LONG-NAME-FOR-PORT": must contain '
      'at least one letter (a-z)',
      "spec.containers[0].ports[0].containerPort: Required value",
      'spec.containers[0].ports[0].protocol: Unsupported value: "XTP": supported values: '
      '"SCTP", "TCP", "UDP"',
      'spec.containers[0].ports[4].name: Duplicate value: "http"',
      'spec.containers[0].ports[2].hostPort: Duplicate value: "TCP//80"']),
    ({"livenessProbe": {"successThreshold": 2, "periodSeconds": -1},
      "readinessProbe": {"httpGet": {"port": 0, "scheme": "FTP", "path": ""},
                         "exec": {"command": []}, "terminationGracePeriodSeconds": 5},
      "startupProbe": {"tcpSocket": {"port": "nope_nope"}}},
     ["spec.containers[0].livenessProbe: Required value: must specify a handler type",
      "spec.containers[0].livenessProbe.periodSeconds: Invalid value: -1: must be greater "
      "than or equal to 0",
      "spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1",
      "spec.containers[0].readinessProbe.exec.command: Required value",
      "spec.containers[0].readinessProbe.httpGet: Forbidden: may not specify more than 1 "
      "handler type",
      "spec.containers[0].readinessProbe.terminationGracePeriodSeconds: Invalid value: 5: "
      "must not be set for readinessProbes",
      'spec.containers[0].startupProbe.tcpSocket.port: Invalid value: "nope_nope": must '
      "contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"]),
    ({"livenessProbe": {"httpGet": {"port": 70000, "httpHeaders": [{"name": "Bad Header"}]},
                        "terminationGracePeriodSeconds": 0},
      "readinessProbe": {"grpc": {"port": 0}}},
     ["spec.containers[0].livenessProbe.httpGet.port: Invalid value: 70000: must be between 1 "
      "and 65535, inclusive",
      'spec.containers[0].livenessProbe.httpGet.httpHeaders: Invalid value: "Bad Header": a '
      "valid HTTP header must consist of alphanumeric characters or '-' (e.g. "
      "'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')",
      "spec.containers[0].livenessProbe.terminationGracePeriodSeconds: Invalid value: 0: must "
      "be greater than 0",
      "spec.containers[0].readinessProbe.grpc.port: Invalid value: 0: must be between 1 and "
      "65535, inclusive"]),
    ({"lifecycle": {"preStop": {"sleep": {"seconds": 0}}, "postStart": {}}},
     ["spec.containers[0].lifecycle.postStart: Required value: must specify a handler type",
      "spec.containers[0].lifecycle.preStop.sleep: Invalid value: 0: must be greater than 0 "
      "and less than terminationGracePeriodSeconds (30). Enable "
      "AllowPodLifecycleSleepActionZeroValue feature gate for zero sleep."]),
    ({"lifecycle": {"preStop": {"sleep": {"seconds": 10}}}}, []),
    ({"resources": {"limits": {"cpu": "1", "memory": "1Gi", "foo": "1", "example.com/gpu": "1.5",
                               "hugepages-2Mi": "3Mi"},
                    "requests": {"cpu": "2", "example.com/gpu": "1"}}},
     ["spec.containers[0].resources.limits[foo]: Invalid value: foo: must be a standard "
      "resource type or fully qualified",
      "spec.containers[0].resources.limits[foo]: Invalid value: foo: must be a standard "
      "resource for containers",
      "spec.containers[0].resources.limits[example.com/gpu]: Invalid value: "
      "resource.Quantity{i:resource.int64Amount{value:1500, scale:-3}, "
      "d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:\"1500m\", Format:\"DecimalSI\"}: "
      "must be an integer",
      'spec.containers[0].resources.limits[hugepages-2Mi]: Invalid value: "3Mi": 3Mi is not '
      "positive integer multiple of hugepages-2Mi",
      'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal '
      "to cpu limit of 1",
      'spec.containers[0].resources.requests: Invalid value: "1": must be equal to '
      "example.com/gpu limit of 1500m",
      "spec.containers[0].resources.requests[foo]: Invalid value: foo: must be a standard "
      "resource type or fully qualified",
      "spec.containers[0].resources.requests[foo]: Invalid value: foo: must be a standard "
      "resource for containers",
      'spec.containers[0].resources.requests[hugepages-2Mi]: Invalid value: "3Mi": 3Mi is not '
      "positive integer multiple of hugepages-2Mi"]),
    ({"resources": {"limits": {"hugepages-2Mi": "4Mi"}}},
     ["spec.containers[0].resources: Forbidden: HugePages require cpu or memory"]),
    ({"resources": {"requests": {"example.com/dongle": "1"}}},
     ["spec.containers[0].resources.limits: Required value: Limit must be set for non "
      "overcommitable resources"]),
    ({"resources": {"requests": {"memory": "-1"}}},
     ['spec.containers[0].resources.requests[memory]: Invalid value: "-1": must be greater '
      "than or equal to 0"]),
    ({"resources": {"claims": [{"name": ""}, {"name": "gpu"}, {"name": "gpu"}]}},
     ["spec.containers[0].resources.claims[0]: Required value",
      'spec.containers[0].resources.claims[1]: Not found: "gpu": must be one of the names in '
      "pod.spec.resourceClaims which is empty",
      'spec.containers[0].resources.claims[2]: Duplicate value: "gpu"',
      'spec.containers[0].resources.claims[2]: Not found: "gpu": must be one of the names in '
      "pod.spec.resourceClaims which is empty"]),
    ({"image": " nginx "},
     ['spec.containers[0].image: Invalid value: " nginx ": must not have leading or trailing '
      "whitespace"]),
    ({"name": "Bad_Name", "terminationMessagePolicy": "Sometimes", "imagePullPolicy": "Maybe"},
     [f'spec.containers[0].name: Invalid value: "Bad_Name": {DNS_LABEL}',
      'spec.containers[0].terminationMessagePolicy: Unsupported value: "Sometimes": supported '
      'values: "File", "FallbackToLogsOnError"',
      'spec.containers[0].imagePullPolicy: Unsupported value: "Maybe": supported values: '
      '"Always", "IfNotPresent", "Never"']),
    ({"restartPolicy": "Always"},
     ["spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers"]),
    ({"securityContext": {"privileged": True, "allowPrivilegeEscalation": False,
                          "runAsGroup": -5, "procMount": "Unmasked",
                          "seccompProfile": {"type": "RuntimeDefault",
                                             "localhostProfile": "x"}}},
     [f"spec.containers[0].securityContext.runAsGroup: Invalid value: -5: {RANGE_ID}",
      'spec.containers[0].securityContext.procMount: Invalid value: "Unmasked": `hostUsers` '
      "must be false to use `Unmasked`",
      "spec.containers[0].securityContext.seccompProfile.localhostProfile: Invalid value: "
      "core.SeccompProfile{Type:\"RuntimeDefault\", LocalhostProfile:(*string)(0xc000010000)}:"
      " can only be set when seccomp type is Localhost",
      "spec.containers[0].securityContext: Invalid value: core.SecurityContext{Capabilities:"
      "(*core.Capabilities)(nil), Privileged:(*bool)(0xc000010000), SELinuxOptions:"
      "(*core.SELinuxOptions)(nil), WindowsOptions:(*core.WindowsSecurityContextOptions)(nil),"
      " RunAsUser:(*int64)(nil), RunAsGroup:(*int64)(0xc000010000), RunAsNonRoot:(*bool)(nil),"
      " ReadOnlyRootFilesystem:(*bool)(nil), AllowPrivilegeEscalation:(*bool)(0xc000010000), "
      "ProcMount:(*core.ProcMountType)(0xc000010000), SeccompProfile:(*core.SeccompProfile)"
      "(0xc000010000), AppArmorProfile:(*core.AppArmorProfile)(nil)}: cannot set "
      "`allowPrivilegeEscalation` to false and `privileged` to true"]),
    ({"securityContext": {"appArmorProfile": {"type": "Localhost", "localhostProfile": " x "},
                          "windowsOptions": {"runAsUserName": "a\\b\\c"}}},
     ["spec.containers[0].securityContext.windowsOptions.runAsUserName: Invalid value: "
      '"a\\\\b\\\\c": runAsUserName cannot contain more than one backslash',
      'spec.containers[0].securityContext.appArmorProfile.localhostProfile: Invalid value: '
      '" x ": must not be padded with whitespace']),
])
def test_containers(container, expected):
    assert errors_of(container=container) == expected


@pytest.mark.parametrize("spec, expected", [
    ({"restartPolicy": "Sometimes", "dnsPolicy": "Bogus", "nodeSelector": {"a b": "c"},
      "activeDeadlineSeconds": 0, "hostname": "Bad_Host", "subdomain": "a.b",
      "priorityClassName": "X", "preemptionPolicy": "Sometimes", "runtimeClassName": "Y",
      "nodeName": "N_ode", "serviceAccountName": "S A"},
     ['spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", '
      '"OnFailure", "Never"',
      'spec.dnsPolicy: Unsupported value: "Bogus": supported values: "ClusterFirstWithHostNet"'
      ', "ClusterFirst", "Default", "None"',
      f'spec.nodeSelector: Invalid value: "a b": {QUALIFIED}',
      f'spec.serviceAccountName: Invalid value: "S A": {DNS_SUBDOMAIN}',
      f'spec.nodeName: Invalid value: "N_ode": {DNS_SUBDOMAIN}',
      "spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, "
      "inclusive",
      f'spec.hostname: Invalid value: "Bad_Host": {DNS_LABEL}',
      'spec.subdomain: Invalid value: "a.b": must not contain dots',
      f'spec.priorityClassName: Invalid value: "X": {DNS_SUBDOMAIN}',
      f'spec.runtimeClassName: Invalid value: "Y": {DNS_SUBDOMAIN}',
      'spec.preemptionPolicy: Unsupported value: "Sometimes": supported values: '
      '"PreemptLowerPriority", "Never"']),
    ({"tolerations": [{"operator": "Equal"}, {"key": "k", "operator": "Exists", "value": "v"},
                      {"key": "k", "operator": "Bad", "effect": "Nope"},
                      {"key": "k", "tolerationSeconds": 5, "effect": "NoSchedule"},
                      {"key": "k", "value": "bad value"}]},
     ['spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when '
      '`key` is empty, which means "match all values and all keys"',
      'spec.tolerations[1].operator: Invalid value: "v": value must be empty when `operator` '
      "is 'Exists'",
      'spec.tolerations[2].operator: Unsupported value: "Bad": supported values: "Equal", '
      '"Exists"',
      'spec.tolerations[2].effect: Unsupported value: "Nope": supported values: '
      '"NoSchedule", "PreferNoSchedule", "NoExecute"',
      'spec.tolerations[3].effect: Invalid value: "NoSchedule": effect must be \'NoExecute\' '
      "when `tolerationSeconds` is set",
      'spec.tolerations[4].operator: Invalid value: "bad value": a valid label must be an '
      "empty string or consist of alphanumeric characters, '-', '_' or '.', and must start "
      "and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
      "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"]),
    ({"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{
            "matchExpressions": [{"key": "k", "operator": "In"}, {"key": "k", "operator": "Bad"},
                                 {"key": "k", "operator": "Gt", "values": ["1", "2"]}],
            "matchFields": [{"key": "metadata.uid", "operator": "In", "values": ["a", "b"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 0, "preference": {}}]}}},
     ["spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
      "nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be specified "
      "when `operator` is 'In' or 'NotIn'",
      "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
      'nodeSelectorTerms[0].matchExpressions[1].operator: Invalid value: "Bad": not a valid '
      "selector operator",
      "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
      "nodeSelectorTerms[0].matchExpressions[2].values: Required value: must be specified "
      "single value when `operator` is 'Lt' or 'Gt'",
      "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
      "nodeSelectorTerms[0].matchFields[0].values: Required value: must be only one value "
      "when `operator` is 'In' or 'NotIn' for node field selector",
      "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
      'nodeSelectorTerms[0].matchFields[0].key: Invalid value: "metadata.uid": not a valid '
      "field selector key",
      "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
      "Invalid value: 0: must be in the range 1-100"]),
    ({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}}},
     ["spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
      "nodeSelectorTerms: Required value: must have at least one node selector term"]),
    ({"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchLabels": {"a": "x"},
                          "matchExpressions": [{"key": "a", "operator": "In", "values": ["x"]}]},
        "topologyKey": "zone", "matchLabelKeys": ["a"], "mismatchLabelKeys": ["a"],
        "namespaces": ["Bad"]}]}}},
     ["spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]."
      'namespace: Invalid value: "Bad": ' + DNS_LABEL,
      'spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0][0]: '
      'Invalid value: "a": exists in both matchLabelKeys and labelSelector',
      "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]."
      'matchLabelKeys[0]: Invalid value: "a": exists in both matchLabelKeys and '
      "mismatchLabelKeys"]),
    ({"affinity": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
        "weight": 101, "podAffinityTerm": {"topologyKey": "z", "matchLabelKeys": ["a"]}}]}}},
     ["spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
      "Invalid value: 101: must be in the range 1-100",
      "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]."
      "podAffinityTerm.matchLabelKeys: Forbidden: must not be specified when labelSelector is "
      "not set"]),
    ({"topologySpreadConstraints": [
        {"maxSkew": 0, "topologyKey": "", "whenUnsatisfiable": "Bad", "minDomains": 0},
        {"maxSkew": 1, "topologyKey": "z", "whenUnsatisfiable": "DoNotSchedule",
         "nodeAffinityPolicy": "Sometimes"},
        {"maxSkew": 1, "topologyKey": "z", "whenUnsatisfiable": "DoNotSchedule",
         "matchLabelKeys": ["a"]},
        {"maxSkew": 1, "topologyKey": "y", "whenUnsatisfiable": "ScheduleAnyway",
         "labelSelector": {"matchLabels": {"a": "b"}}, "matchLabelKeys": ["a"]}]},
     ["spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
      "spec.topologySpreadConstraints[0].topologyKey: Required value: can not be empty",
      'spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Bad": '
      'supported values: "DoNotSchedule", "ScheduleAnyway"',
      "spec.topologySpreadConstraints[0].minDomains: Invalid value: 0: must be greater than "
      "zero",
      "spec.topologySpreadConstraints[0].minDomains: Invalid value: 0: can only use "
      "minDomains if whenUnsatisfiable=DoNotSchedule, not Bad",
      "spec.topologySpreadConstraints[1].{topologyKey, whenUnsatisfiable}: Duplicate value: "
      '"{z, DoNotSchedule}"',
      'spec.topologySpreadConstraints[1].nodeAffinityPolicy: Unsupported value: "Sometimes": '
      'supported values: "Honor", "Ignore"',
      "spec.topologySpreadConstraints[2].matchLabelKeys: Forbidden: must not be specified "
      "when labelSelector is not set",
      'spec.topologySpreadConstraints[3].matchLabelKeys[0]: Invalid value: "a": exists in '
      "both matchLabelKeys and labelSelector"]),
    ({"hostPID": True, "shareProcessNamespace": True, "hostNetwork": True,
      "securityContext": {"runAsUser": -1, "fsGroup": -2, "supplementalGroups": [-1],
                          "sysctls": [{"name": "net.ipv4.ip_forward"}, {"name": "Bad Name"},
                                      {"name": ""}, {"name": "kernel.shm_rmid_forced"},
                                      {"name": "kernel.shm_rmid_forced"}],
                          "seccompProfile": {"type": "Localhost"},
                          "appArmorProfile": {"type": "Bad"},
                          "fsGroupChangePolicy": "Sometimes"}},
     [f"spec.securityContext.fsGroup: Invalid value: -2: {RANGE_ID}",
      f"spec.securityContext.runAsUser: Invalid value: -1: {RANGE_ID}",
      f"spec.securityContext.supplementalGroups[0]: Invalid value: -1: {RANGE_ID}",
      "spec.securityContext.shareProcessNamespace: Invalid value: true: ShareProcessNamespace "
      "and HostPID cannot both be enabled",
      'spec.securityContext.sysctls[0].name: Invalid value: "net.ipv4.ip_forward": may not be '
      "specified when 'hostNetwork' is true",
      'spec.securityContext.sysctls[1].name: Invalid value: "Bad Name": must have at most 253 '
      "characters and match regex ^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]"
      "([-_a-z0-9]*[a-z0-9])?$",
      "spec.securityContext.sysctls[2].name: Required value",
      'spec.securityContext.sysctls[4].name: Duplicate value: "kernel.shm_rmid_forced"',
      'spec.securityContext.fsGroupChangePolicy: Unsupported value: "Sometimes": supported '
      'values: "Always", "OnRootMismatch"',
      "spec.securityContext.seccompProfile.localhostProfile: Required value: must be set when "
      "seccomp type is Localhost",
      'spec.securityContext.appArmorProfile.type: Unsupported value: "Bad": supported values: '
      '"Localhost", "RuntimeDefault", "Unconfined"']),
    ({"hostIPC": True, "securityContext": {"sysctls": [{"name": "kernel/shm_rmid_forced"}]}},
     ['spec.securityContext.sysctls[0].name: Invalid value: "kernel/shm_rmid_forced": may not '
      "be specified when 'hostIPC' is true"]),
    ({"hostUsers": False, "hostNetwork": True, "hostPID": True, "hostIPC": True},
     ["spec.hostNetwork: Forbidden: when `pod.Spec.HostUsers` is false",
      "spec.HostPID: Forbidden: when `pod.Spec.HostUsers` is false",
      "spec.HostIPC: Forbidden: when `pod.Spec.HostUsers` is false"]),
    ({"dnsPolicy": "None", "dnsConfig": {"nameservers": ["1.1.1.1", "2.2.2.2", "3.3.3.3", "bad"],
                                         "searches": ["Bad_", "ok.", "."],
                                         "options": [{"name": ""}]}},
     ['spec.dnsConfig.nameservers: Invalid value: []string{"1.1.1.1", "2.2.2.2", "3.3.3.3", '
      '"bad"}: must not have more than 3 nameservers',
      'spec.dnsConfig.nameservers[3]: Invalid value: "bad": must be a valid IP address, (e.g. '
      "10.9.8.7 or 2001:db8::ffff)",
      f'spec.dnsConfig.searches[0]: Invalid value: "Bad_": {DNS_SUBDOMAIN}',
      f'spec.dnsConfig.searches[2]: Invalid value: "": {DNS_SUBDOMAIN}',
      "spec.dnsConfig.options[0]: Required value: must not be empty"]),
    ({"dnsPolicy": "None"},
     ["spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None"]),
    ({"dnsPolicy": "None", "dnsConfig": {}},
     ["spec.dnsConfig.nameservers: Required value: must provide at least one DNS nameserver "
      "when `dnsPolicy` is None"]),
    ({"hostAliases": [{"ip": "x", "hostnames": ["A"]}]},
     ['spec.hostAliases[0].ip: Invalid value: "x": must be a valid IP address, (e.g. 10.9.8.7 '
      "or 2001:db8::ffff)",
      f'spec.hostAliases[0].hostnames[0]: Invalid value: "A": {DNS_SUBDOMAIN}']),
    ({"readinessGates": [{"conditionType": "a/b/c"}], "schedulingGates": [{"name": "g"},
                                                                          {"name": "g"}],
      "nodeName": "n"},
     ['spec.readinessGates[0].conditionType: Invalid value: "a/b/c": a qualified name must '
      "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
      "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
      "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS "
      "subdomain prefix and '/' (e.g. 'example.com/MyName')",
      'spec.schedulingGates[1]: Duplicate value: "g"',
      "spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared"]),
    ({"initContainers": [{"name": "c", "image": "x", "restartPolicy": "Never",
                          "livenessProbe": {"exec": {"command": ["x"]}}},
                         {"name": "s", "image": "x", "restartPolicy": "Always",
                          "startupProbe": {"exec": {"command": ["x"]}}},
                         {"name": "r", "image": "x", "resizePolicy": [
                             {"resourceName": "cpu", "restartPolicy": "NotRequired"}]}]},
     ['spec.initContainers[0].restartPolicy: Unsupported value: "Never": supported values: '
      '"Always"',
      'spec.initContainers[0].name: Duplicate value: "c"',
      "spec.initContainers[0].livenessProbe: Forbidden: may not be set for init containers "
      "without restartPolicy=Always",
      "spec.initContainers[2].resizePolicy: Invalid value: []core.ContainerResizePolicy"
      "{core.ContainerResizePolicy{ResourceName:\"cpu\", RestartPolicy:\"NotRequired\"}}: must "
      "not be set for init containers"]),
    ({"ephemeralContainers": [{"name": "e", "image": "x", "ports": [{"containerPort": 1}]}]},
     ["spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container",
      "spec.ephemeralContainers: Forbidden: cannot be set on create"]),
    ({"os": {"name": "windows"}, "hostPID": True, "securityContext": {"runAsUser": 1}},
     ["spec.hostPID: Forbidden: cannot be set for a windows pod",
      "spec.securityContext.runAsUser: Forbidden: cannot be set for a windows pod"]),
    ({"os": {"name": "linux"}, "securityContext": {"windowsOptions": {}}},
     ["spec.securityContext.windowsOptions: Forbidden: windows options cannot be set for a "
      "linux pod"]),
    ({"os": {"name": "plan9"}},
     ['spec.os: Unsupported value: "plan9": supported values: "linux", "windows"']),
    ({"os": {}}, ["spec.os.name: Required value: cannot be empty"]),
    ({"containers": []}, ["spec.containers: Required value"]),
    ({"imagePullSecrets": [{"name": "ok"}, {"name": "x", "other": 1}]},
     ['spec.imagePullSecrets[1]: Invalid value: core.LocalObjectReference{Name:"x"}: only name '
      "may be set"]),
    ({"overhead": {"cpu": "-1", "pods": "1"}},
     # upstream validates overhead as the limits of a resource requirement
     ['spec.overhead.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0',
      "spec.overhead.limits[pods]: Invalid value: pods: must be a standard resource for "
      "containers"]),
    ({"hostNetwork": True, "containers": [{"name": "c", "image": "i",
                                           "ports": [{"containerPort": 80, "hostPort": 81}]}]},
     ["spec.containers[0].ports[0].hostPort: Invalid value: 81: must match `containerPort` "
      "when `hostNetwork` is true"]),
    ({"resourceClaims": [{"name": "a"}, {"name": "a", "resourceClaimName": "x",
                                         "resourceClaimTemplateName": "y"}]},
     ["spec.resourceClaims[0]: Invalid value: core.PodResourceClaim{Name:\"a\", "
      "ResourceClaimName:(*string)(nil), ResourceClaimTemplateName:(*string)(nil)}: must "
      "specify one of: `resourceClaimName`, `resourceClaimTemplateName`",
      'spec.resourceClaims[1].name: Duplicate value: "a"',
      "spec.resourceClaims[1]: Invalid value: core.PodResourceClaim{Name:\"a\", "
      "ResourceClaimName:(*string)(0xc000010000), ResourceClaimTemplateName:(*string)"
      "(0xc000010000)}: at most one of `resourceClaimName` or `resourceClaimTemplateName` may "
      "be specified"]),
])
def test_pod_spec(spec, expected):
    assert errors_of(**spec) == expected


@pytest.mark.parametrize("annotations, expected", [
    ({"controller.kubernetes.io/pod-deletion-cost": "+1"},
     ['metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: "+1": '
      "must be a 32bit integer"]),
    ({"controller.kubernetes.io/pod-deletion-cost": "-2147483648"}, []),
    ({"controller.kubernetes.io/pod-deletion-cost": "2147483648"},
     ['metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: '
      '"2147483648": must be a 32bit integer']),
    ({"scheduler.alpha.kubernetes.io/tolerations": '[{"operator":"Bad"}]'},
     ['metadata.annotations.scheduler.alpha.kubernetes.io/tolerations[0].operator: Invalid '
      'value: "Bad": operator must be Exists when `key` is empty, which means "match all '
      'values and all keys"',
      'metadata.annotations.scheduler.alpha.kubernetes.io/tolerations[0].operator: '
      'Unsupported value: "Bad": supported values: "Equal", "Exists"']),
    ({"scheduler.alpha.kubernetes.io/tolerations": "x"},
     ['metadata.annotations: Invalid value: "scheduler.alpha.kubernetes.io/tolerations": '
      "invalid character 'x' looking for beginning of value"]),
    ({"seccomp.security.alpha.kubernetes.io/pod": "bogus",
      "container.seccomp.security.alpha.kubernetes.io/c": "localhost/../x"},
     ['metadata.annotations.seccomp.security.alpha.kubernetes.io/pod: Invalid value: "bogus": '
      "must be a valid seccomp profile",
      "metadata.annotations.container.seccomp.security.alpha.kubernetes.io/c: Invalid value: "
      "\"../x\": must not contain '..'"]),
    ({"container.apparmor.security.beta.kubernetes.io/nope": "bogus"},
     ['metadata.annotations[container.apparmor.security.beta.kubernetes.io/nope]: Invalid '
      'value: "nope": container not found',
      'metadata.annotations[container.apparmor.security.beta.kubernetes.io/nope]: Invalid '
      'value: "bogus": invalid AppArmor profile name: "bogus"']),
    ({"container.apparmor.security.beta.kubernetes.io/c": "localhost/p"}, []),
    ({"kubernetes.io/config.mirror": "x"},
     ['metadata.annotations[kubernetes.io/config.mirror]: Invalid value: "x": must set '
      "spec.nodeName if mirror pod annotation is set"]),
])
def test_pod_annotations(annotations, expected):
    assert errors_of(metadata={"annotations": annotations}) == expected


def test_seccomp_and_apparmor_annotations_must_match_fields():
    pod = make_pod(securityContext={"seccompProfile": {"type": "RuntimeDefault"}})
    pod["spec"]["containers"][0]["securityContext"] = {
        "appArmorProfile": {"type": "Localhost", "localhostProfile": "a"}}
    pod["metadata"]["annotations"] = {
        "seccomp.security.alpha.kubernetes.io/pod": "unconfined",
        "container.apparmor.security.beta.kubernetes.io/c": "localhost/b"}
    assert texts(validate_pod_create(pod)) == [
        "spec.securityContext.seccompProfile.type: Forbidden: seccomp type in annotation and "
        "field must match",
        "spec.containers[0].securityContext.appArmorProfile.localhostProfile: Forbidden: "
        "apparmor profile in annotation and field must match"]


def test_termination_grace_period_is_required():
    pod = make_pod()
    del pod["spec"]["terminationGracePeriodSeconds"]
    assert texts(validate_pod_create(pod)) == [
        "spec.terminationGracePeriodSeconds: Required value"]


def test_metadata_is_validated_first():
    pod = make_pod()
    pod["metadata"] = {"name": "Bad_Name"}
    assert texts(validate_pod_create(pod)) == [
        f'metadata.name: Invalid value: "Bad_Name": {DNS_SUBDOMAIN}',
        "metadata.namespace: Required value"]


def test_templates_need_no_host_port_but_pods_do():
    spec = {"hostNetwork": True, "containers": [{"name": "c", "image": "i", "ports": [
        {"containerPort": 80, "protocol": "TCP", "hostPort": 0}]}],
        "restartPolicy": "Always", "dnsPolicy": "ClusterFirst",
        "terminationGracePeriodSeconds": 30}
    spec["containers"][0].update(imagePullPolicy="Always", terminationMessagePolicy="File")
    assert validate_pod_spec(spec, None, FieldPath("spec"), PodValidationOptions()) == []
    assert texts(validate_pod_spec(spec, None, FieldPath("spec"),
                                   PodValidationOptions(resource_is_pod=True))) == [
        "spec.containers[0].ports[0].hostPort: Invalid value: 0: must match `containerPort` "
        "when `hostNetwork` is true"]


def test_strict_environment_names_without_the_relaxed_gate():
    pod = make_pod(containers=[{"name": "c", "image": "i", "env": [{"name": "1x"}]}])
    opts = PodValidationOptions(allow_relaxed_environment_variable_validation=False)
    assert texts(validate_pod_create(pod, opts)) == [
        'spec.containers[0].env[0].name: Invalid value: "1x": a valid environment variable name '
        "must consist of alphabetic characters, digits, '_', '-', or '.', and must not start "
        "with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for "
        "validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')"]
    assert validate_pod_create(pod) == []


def test_privileged_containers_follow_cluster_policy():
    pod = make_pod(containers=[{"name": "c", "image": "i",
                                "securityContext": {"privileged": True}}])
    assert validate_pod_create(pod) == []
    assert texts(validate_pod_create(pod, PodValidationOptions(resource_is_pod=True,
                                                               allow_privileged=False))) == [
        "spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy"]


def test_malformed_json_shapes_do_not_raise():
    pod = make_pod()
    pod["spec"]["volumes"] = ["x", {"name": "v", "secret": "nope"}]
    pod["spec"]["containers"].append("y")
    pod["spec"]["tolerations"] = [None]
    validate_pod_create(pod)
    validate_pod_create({})
    validate_pod_spec(None, None, FieldPath("spec"))
