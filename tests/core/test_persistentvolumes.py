"""PersistentVolume defaults, validation, status and Table cells
(``kapiserver_plugins.core.persistentvolumes``, ``pv_sources``)."""

from kapiserver_plugins.core.persistentvolumes import (PERSISTENT_VOLUMES,
                                                       PersistentVolumeStrategy,
                                                       set_volume_defaults, validate_volume_spec)

STRATEGY = PersistentVolumeStrategy(PERSISTENT_VOLUMES)


def volume(spec, name="pv1", **meta):
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "resourceVersion": "3", **meta}, "spec": spec}


def valid_spec(**extra):
    return {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": "/tmp/x", "type": ""}, **extra}


def texts(errs):
    return [e.error_text() for e in errs]


def test_defaults_are_upstreams():
    obj = volume({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                  "hostPath": {"path": "/tmp/x"}, "rbd": {"monitors": ["m"], "image": "i"},
                  "azureDisk": {"diskName": "d", "diskURI": "u"}})
    set_volume_defaults(obj)
    spec = obj["spec"]
    assert spec["persistentVolumeReclaimPolicy"] == "Retain"
    assert spec["volumeMode"] == "Filesystem"
    assert spec["hostPath"] == {"path": "/tmp/x", "type": ""}
    assert spec["rbd"] == {"monitors": ["m"], "image": "i", "pool": "rbd", "user": "admin",
                           "keyring": "/etc/ceph/keyring"}
    assert spec["azureDisk"] == {"diskName": "d", "diskURI": "u", "cachingMode": "ReadWrite",
                                 "fsType": "ext4", "readOnly": False, "kind": "Shared"}


def test_a_new_volume_is_pending_with_its_transition_time():
    obj = volume(valid_spec())
    obj["status"] = {"phase": "Bound"}
    STRATEGY.on_create(obj)
    assert obj["status"]["phase"] == "Pending"
    assert obj["status"]["lastPhaseTransitionTime"].endswith("Z")


def test_the_transcript_volume_is_valid():
    assert STRATEGY.validate(volume(valid_spec(persistentVolumeReclaimPolicy="Retain",
                                               volumeMode="Filesystem"))) == []


def test_an_empty_spec_names_everything_missing():
    assert texts(validate_volume_spec({}, "pv1")) == [
        "spec.accessModes: Required value",
        "spec.capacity: Required value",
        'spec.capacity: Unsupported value: core.ResourceList{}: supported values: "storage"',
        "spec: Required value: must specify a volume type",
    ]


def test_exactly_one_source():
    spec = valid_spec(nfs={"server": "s", "path": "relative"}, cephfs={"monitors": []})
    assert texts(validate_volume_spec(spec, "pv1")) == [
        "spec.nfs: Forbidden: may not specify more than 1 volume type",
        "spec.cephFS: Forbidden: may not specify more than 1 volume type",
    ]
    only_nfs = {k: v for k, v in spec.items() if k not in ("hostPath", "cephfs")}
    assert texts(validate_volume_spec(only_nfs, "pv1")) == [
        'spec.nfs.path: Invalid value: "relative": must be an absolute path']


def test_modes_capacity_and_policies():
    spec = valid_spec(accessModes=["ReadWriteOncePod", "ReadWriteOnce", "Bogus"],
                      capacity={"storage": "0", "cpu": "1"},
                      persistentVolumeReclaimPolicy="Keep", volumeMode="Raw",
                      storageClassName="Not_Valid")
    assert texts(validate_volume_spec(spec, "pv1")) == [
        'spec.accessModes: Unsupported value: "Bogus": supported values: "ReadOnlyMany", '
        '"ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
        "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes",
        "spec.capacity: Unsupported value: core.ResourceList{\"cpu\":resource.Quantity{i:"
        "resource.int64Amount{value:1, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, "
        's:"1", Format:"DecimalSI"}, "storage":resource.Quantity{i:resource.int64Amount{'
        'value:0, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"0", '
        'Format:"DecimalSI"}}: supported values: "storage"',
        'spec.capacity[storage]: Invalid value: "0": must be greater than zero',
        'spec.persistentVolumeReclaimPolicy: Unsupported value: "Keep": supported values: '
        '"Delete", "Recycle", "Retain"',
        'spec.storageClassName: Invalid value: "Not_Valid": a lowercase RFC 1123 subdomain must '
        "consist of lower case alphanumeric characters, '-' or '.', and must start and end with "
        "an alphanumeric character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        'spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"',
    ]


def test_local_volumes_need_node_affinity_and_root_host_paths_cannot_be_recycled():
    local = {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
             "local": {"path": "/mnt/../etc"}}
    assert texts(validate_volume_spec(local, "pv1")) == [
        'spec.local.path: Invalid value: "/mnt/../etc": must not contain \'..\'',
        "spec.nodeAffinity: Required value: Local volume requires node affinity",
    ]
    local["local"]["path"] = "/mnt/disk"
    local["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}]}]}}
    assert validate_volume_spec(local, "pv1") == []
    local["nodeAffinity"] = {"required": {"nodeSelectorTerms": []}}
    assert texts(validate_volume_spec(local, "pv1")) == [
        "spec.nodeAffinity.required.nodeSelectorTerms: Required value: must have at least one "
        "node selector term"]
    root = valid_spec(hostPath={"path": "//", "type": ""}, persistentVolumeReclaimPolicy="Recycle")
    assert texts(validate_volume_spec(root, "pv1")) == [
        "spec.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath "
        "mount of '/'"]


def test_csi_sources():
    spec = {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteMany"],
            "csi": {"driver": "Bad_Driver", "nodePublishSecretRef": {"name": "s"}}}
    assert texts(validate_volume_spec(spec, "pv1")) == [
        'spec.csi.driver: Invalid value: "Bad_Driver": a lowercase RFC 1123 subdomain must '
        "consist of lower case alphanumeric characters, '-' or '.', and must start and end with "
        "an alphanumeric character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        "spec.csi.volumeHandle: Required value",
        "spec.csi.nodePublishSecretRef.namespace: Required value",
    ]


def test_the_source_and_the_mode_are_immutable():
    old = volume(valid_spec(volumeMode="Filesystem", persistentVolumeReclaimPolicy="Retain"))
    new = volume(valid_spec(volumeMode="Block", persistentVolumeReclaimPolicy="Delete",
                            hostPath={"path": "/tmp/y", "type": ""}))
    errs = STRATEGY.validate_update(new, old)
    assert [e.field for e in errs] == ["spec.persistentvolumesource", "volumeMode"]
    assert errs[0].detail.startswith("spec.persistentvolumesource is immutable after "
                                     "creation\n")
    assert '/tmp/y' in errs[0].detail
    assert errs[1].error_text() == 'volumeMode: Invalid value: "Block": field is immutable'
    reclaimed = volume(valid_spec(volumeMode="Filesystem", persistentVolumeReclaimPolicy="Delete"))
    assert STRATEGY.validate_update(reclaimed, old) == []


def test_status_writes_stamp_phase_transitions():
    old = volume(valid_spec())
    old["status"] = {"phase": "Pending", "lastPhaseTransitionTime": "2020-01-01T00:00:00Z"}
    same = volume({})
    same["status"] = {"phase": "Pending"}
    STRATEGY.prepare_status_update(same, old)
    assert same["status"]["lastPhaseTransitionTime"] == "2020-01-01T00:00:00Z"
    assert same["spec"] == old["spec"]
    bound = volume({})
    bound["status"] = {"phase": "Bound"}
    STRATEGY.prepare_status_update(bound, old)
    assert bound["status"]["lastPhaseTransitionTime"] != "2020-01-01T00:00:00Z"


def test_fields_and_table_cells():
    obj = volume(valid_spec(persistentVolumeReclaimPolicy="Delete", volumeMode="Block",
                            claimRef={"namespace": "ns", "name": "c"}, storageClassName="fast"),
                 creationTimestamp="2020-01-01T00:00:00Z")
    obj["status"] = {"phase": "Bound"}
    assert STRATEGY.selectable_fields(obj) == {"metadata.name": "pv1"}
    cells = STRATEGY.table_cells(obj)
    assert cells[:9] == ["pv1", "1Gi", "RWO", "Delete", "Bound", "ns/c", "fast", "<unset>", ""]
    assert cells[10] == "Block"
