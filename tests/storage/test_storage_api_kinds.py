"""storage.k8s.io/v1 defaults, validation and Table cells, with 1.32's exact texts."""

import json
import pathlib

import pytest

from kapiserver_plugins.storage.csi import (CSI_DRIVERS, CSI_NODES, CSI_STORAGE_CAPACITIES,
                                            CSIDriverStrategy, CSINodeStrategy,
                                            CSIStorageCapacityStrategy, csi_driver_generation)
from kapiserver_plugins.storage.storageclasses import STORAGE_CLASSES, StorageClassStrategy
from kapiserver_plugins.storage.volumeattachments import (VOLUME_ATTACHMENTS,
                                                          VolumeAttachmentStrategy)
from tests.support.kinds import create, stored, texts, update

KINDS = pathlib.Path("/work/shared/reference/wide/kinds")
CLASSES = StorageClassStrategy(STORAGE_CLASSES)
DRIVERS = CSIDriverStrategy(CSI_DRIVERS)
NODES = CSINodeStrategy(CSI_NODES)
CAPACITIES = CSIStorageCapacityStrategy(CSI_STORAGE_CAPACITIES)
ATTACHMENTS = VolumeAttachmentStrategy(VOLUME_ATTACHMENTS)


def storage_class(**fields) -> dict:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": "sc"}, "provisioner": "example.com/disk", **fields}


@pytest.mark.skipif(not KINDS.is_dir(), reason="reference transcripts absent")
@pytest.mark.parametrize("name, strategy", [("storageclasses", CLASSES),
                                            ("csidrivers", DRIVERS)])
def test_defaults_are_the_transcripts(name, strategy):
    exchange = json.loads((KINDS / f"{name}-create.json").read_text())
    obj, errors = create(strategy, exchange["request"]["body"])
    assert errors == []
    expected = exchange["response"]["body"]
    assert {k: v for k, v in obj.items() if k != "metadata"} == \
        {k: v for k, v in expected.items() if k != "metadata"}
    assert "generation" not in obj["metadata"]


def test_storage_class_provisioner_and_enumerations():
    assert texts(create(CLASSES, storage_class(provisioner=""))[1]) == [
        "provisioner: Required value"]
    _, errors = create(CLASSES, storage_class(provisioner="Ex/a/b", reclaimPolicy="Recycle",
                                              volumeBindingMode="Later",
                                              parameters={"": "x"}))
    assert texts(errors)[0].startswith('provisioner: Invalid value: "ex/a/b": a qualified name')
    assert texts(errors)[1:] == [
        'parameters: Invalid value: "": field can not be empty.',
        'reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"',
        'volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", '
        '"WaitForFirstConsumer"']


def test_storage_class_allowed_topologies():
    term = {"matchLabelExpressions": [{"key": "zone", "values": ["a", "a"]},
                                      {"key": "zone", "values": []}]}
    _, errors = create(CLASSES, storage_class(allowedTopologies=[term, term]))
    at = "allowedTopologies"
    assert texts(errors) == [
        f'{at}[0].matchLabelExpressions[0].values[1]: Duplicate value: "a"',
        f"{at}[0].matchLabelExpressions[1].values: Required value",
        f'{at}[0].matchLabelExpressions[1].key: Duplicate value: "zone"',
        f'{at}[1].matchLabelExpressions[0].values[1]: Duplicate value: "a"',
        f"{at}[1].matchLabelExpressions[1].values: Required value",
        f'{at}[1].matchLabelExpressions[1].key: Duplicate value: "zone"',
        f'{at}[1].matchLabelExpressions: Duplicate value: ""']


def test_storage_class_updates_may_change_none_of_its_settings():
    old = stored(CLASSES, storage_class(parameters={"a": "b"}))
    new = storage_class(provisioner="example.com/other", parameters={"a": "c"},
                        reclaimPolicy="Retain", volumeBindingMode="WaitForFirstConsumer")
    new["metadata"] = dict(old["metadata"])
    assert texts(update(CLASSES, new, old)[1]) == [
        "parameters: Forbidden: updates to parameters are forbidden.",
        "provisioner: Forbidden: updates to provisioner are forbidden.",
        "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.",
        'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable']
    relabelled = storage_class(parameters={"a": "b"}, allowVolumeExpansion=True)
    relabelled["metadata"] = {**old["metadata"], "labels": {"x": "y"}}
    assert update(CLASSES, relabelled, old)[1] == []


def test_storage_class_table_marks_the_default():
    obj = stored(CLASSES, storage_class(allowVolumeExpansion=True))
    obj["metadata"]["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    assert CLASSES.table_cells(obj)[:5] == ["sc (default)", "example.com/disk", "Delete",
                                            "Immediate", True]


def csi_driver(**spec) -> dict:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
            "metadata": {"name": "csi.example.com"}, "spec": spec}


def test_csi_driver_validation():
    _, errors = create(DRIVERS, csi_driver(fsGroupPolicy="Any", volumeLifecycleModes=["Odd"],
                                           tokenRequests=[{"audience": "a",
                                                           "expirationSeconds": 60},
                                                          {"audience": "a"}]))
    assert texts(errors) == [
        'spec.fsGroupPolicy: Unsupported value: "Any": supported values: "File", "None", '
        '"ReadWriteOnceWithFSType"',
        "spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a duration "
        "less than 10 minutes",
        'spec.tokenRequests[1].audience: Duplicate value: "a"',
        'spec.volumeLifecycleModes: Unsupported value: "Odd": supported values: "Persistent", '
        '"Ephemeral"']


def test_csi_driver_updates():
    old = stored(DRIVERS, csi_driver())
    new = csi_driver(attachRequired=False, volumeLifecycleModes=["Ephemeral"])
    new["metadata"] = dict(old["metadata"])
    assert texts(update(DRIVERS, new, old)[1]) == [
        "spec.attachedRequired: Invalid value: false: field is immutable",
        'spec.volumeLifecycleModes: Invalid value: []storage.VolumeLifecycleMode{"Ephemeral"}: '
        "field is immutable"]
    republish = csi_driver(requiresRepublish=True)
    republish["metadata"] = dict(old["metadata"])
    changed, errors = update(DRIVERS, republish, old)
    assert errors == [] and csi_driver_generation(changed, old) == 1
    mounted = csi_driver(podInfoOnMount=True)
    mounted["metadata"] = dict(old["metadata"])
    assert csi_driver_generation(update(DRIVERS, mounted, old)[0], old) == 0
    assert not DRIVERS.allow_unconditional_update


def test_csi_driver_table():
    obj = stored(DRIVERS, csi_driver(tokenRequests=[{"audience": "a"}, {"audience": "b"}]))
    assert DRIVERS.table_cells(obj)[:7] == ["csi.example.com", True, False, False, "a,b", False,
                                            "Persistent"]


def test_csi_nodes():
    node = {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "n1"},
            "spec": {"drivers": [{"name": "csi.example.com", "nodeID": "",
                                  "topologyKeys": ["zone", "zone"]},
                                 {"name": "csi.example.com", "nodeID": "x" * 300}]}}
    _, errors = create(NODES, node)
    assert texts(errors) == [
        "spec.drivers[0].nodeID: Required value",
        'spec.drivers[0]: Duplicate value: "zone"',
        'spec.drivers[1].nodeID: Invalid value: "' + "x" * 300 + '": must be 256 characters or '
        "less",
        'spec.drivers[1].name: Duplicate value: "csi.example.com"']
    old = stored(NODES, {**node, "spec": {"drivers": [{"name": "d.example.com", "nodeID": "a"}]}})
    new = {**node, "metadata": dict(old["metadata"]),
           "spec": {"drivers": [{"name": "d.example.com", "nodeID": "b"}]}}
    assert texts(update(NODES, new, old)[1]) == [
        'spec.drivers: Invalid value: storage.CSINodeDriver{Name:"d.example.com", NodeID:"b", '
        "TopologyKeys:[]string(nil), Allocatable:(*storage.VolumeNodeResources)(nil)}: field is "
        "immutable"]
    assert NODES.table_cells(old)[:2] == ["n1", 1]
    assert [c["name"] for c in NODES.table_columns()] == ["Name", "Drivers", "Age"]


def test_csi_storage_capacities():
    capacity = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
                "metadata": {"name": "c"}, "storageClassName": "Fast", "capacity": "-1Gi",
                "nodeTopology": {"matchLabels": {"zone": "a"}}}
    _, errors = create(CAPACITIES, capacity)
    assert texts(errors)[0].startswith('storageClassName: Invalid value: "Fast"')
    assert texts(errors)[1] == 'capacity: Invalid value: "-1Gi": must be greater than or equal to 0'
    old = stored(CAPACITIES, {**capacity, "storageClassName": "fast", "capacity": "1Gi"})
    assert CAPACITIES.table_cells(old) == ["c", "fast", "1Gi"]
    new = {**old, "metadata": dict(old["metadata"]), "storageClassName": "slow",
           "nodeTopology": {"matchLabels": {"zone": "b"}}}
    assert texts(update(CAPACITIES, new, old)[1]) == [
        'nodeTopology: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"zone":"b"}, '
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable",
        'storageClassName: Invalid value: "slow": field is immutable']


def attachment(**spec) -> dict:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
            "metadata": {"name": "va"},
            "spec": {"attacher": "csi.example.com", "nodeName": "node-1",
                     "source": {"persistentVolumeName": "pv-1"}, **spec}}


def test_volume_attachments():
    _, errors = create(ATTACHMENTS, attachment(attacher="", nodeName="", source={}))
    assert texts(errors)[:2] == [
        "spec.attacher: Required value",
        "spec.source: Required value: must specify exactly one of inlineVolumeSpec and "
        "persistentVolumeName"]
    assert texts(errors)[2].startswith('spec.nodeName: Invalid value: "": a lowercase RFC 1123')
    obj, errors = create(ATTACHMENTS, {**attachment(), "status": {"attached": True}})
    assert errors == [] and obj["status"] == {"attached": False}
    old = stored(ATTACHMENTS, attachment())
    new = attachment(nodeName="node-2")
    new["metadata"] = dict(old["metadata"])
    assert texts(update(ATTACHMENTS, new, old)[1]) == [
        'spec: Invalid value: storage.VolumeAttachmentSpec{Attacher:"csi.example.com", '
        "Source:storage.VolumeAttachmentSource{PersistentVolumeName:(*string)(0xc000000000), "
        'InlineVolumeSpec:(*core.PersistentVolumeSpec)(nil)}, NodeName:"node-2"}: field is '
        "immutable"]
    written = {**old, "metadata": {**old["metadata"], "labels": {"a": "b"}},
               "status": {"attached": True}}
    ATTACHMENTS.prepare_status_update(written, old)
    assert "labels" not in written["metadata"] and written["status"] == {"attached": True}
    assert ATTACHMENTS.table_cells(written)[:5] == ["va", "csi.example.com", "pv-1", "node-1",
                                                    True]


def test_inline_volume_specs():
    inline = {"accessModes": ["ReadWriteOnce"],
              "csi": {"driver": "csi.example.com", "volumeHandle": "h"}}
    obj, errors = create(ATTACHMENTS, attachment(source={"inlineVolumeSpec": inline}))
    assert errors == []
    assert obj["spec"]["source"]["inlineVolumeSpec"]["volumeMode"] == "Filesystem"
    _, errors = create(ATTACHMENTS, attachment(source={"inlineVolumeSpec": {
        "capacity": {"storage": "1Gi"}, "claimRef": {"name": "c"}}}))
    at = "spec.source.inlineVolumeSpec"
    assert texts(errors)[:4] == [
        f"{at}.claimRef: Forbidden: may not be specified in the context of inline volumes",
        f"{at}.capacity: Forbidden: may not be specified in the context of inline volumes",
        f"{at}.csi: Required value: has to be specified in the context of inline volumes",
        f"{at}.accessModes: Required value"]
    _, errors = create(ATTACHMENTS, attachment(source={"inlineVolumeSpec": inline,
                                                      "persistentVolumeName": "pv"}))
    assert texts(errors) == ["spec.source: Forbidden: must specify exactly one of "
                             "inlineVolumeSpec and persistentVolumeName"]
