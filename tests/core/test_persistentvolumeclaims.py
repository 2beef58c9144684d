"""PersistentVolumeClaim defaults, validation, updates and status
(``kapiserver_plugins.core.persistentvolumeclaims``)."""

import json
import pathlib

import pytest

from kapiserver.apimachinery.field_errors import invalid_status
from kapiserver_plugins.core.persistentvolumeclaims import (PERSISTENT_VOLUME_CLAIMS,
                                                            PersistentVolumeClaimStrategy,
                                                            drop_disabled_fields,
                                                            normalize_data_sources,
                                                            set_claim_defaults)

STRATEGY = PersistentVolumeClaimStrategy(PERSISTENT_VOLUME_CLAIMS)
REFERENCE = pathlib.Path("/work/shared/reference/wide/kinds/persistentvolumeclaims-invalid.json")


def claim(spec=None, status=None, name="pvc1", **meta):
    obj = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": {"name": name, "namespace": "ns", "resourceVersion": "7", **meta},
           "spec": spec if spec is not None else {
               "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
               "volumeMode": "Filesystem"}}
    if status is not None:
        obj["status"] = status
    return obj


def texts(errs):
    return [e.error_text() for e in errs]


@pytest.mark.skipif(not REFERENCE.exists(), reason="reference transcripts absent")
def test_the_invalid_claim_is_refused_word_for_word():
    exchange = json.loads(REFERENCE.read_text())
    obj = exchange["request"]["body"]
    obj["metadata"]["namespace"] = "ref-069ea7"
    errs = STRATEGY.validate(obj)
    assert invalid_status("PersistentVolumeClaim", "", "pvc-bad", errs) == \
        exchange["response"]["body"]


def test_defaults_and_creation():
    obj = claim({"accessModes": ["ReadWriteOnce"],
                 "resources": {"requests": {"storage": "0.5Gi"}},
                 "dataSource": {"kind": "PersistentVolumeClaim", "name": "src"},
                 "volumeAttributesClassName": "gold"})
    set_claim_defaults(obj)
    STRATEGY.on_create(obj)
    assert obj["spec"]["volumeMode"] == "Filesystem"
    assert obj["spec"]["resources"]["requests"]["storage"] == "512Mi"
    assert "volumeAttributesClassName" not in obj["spec"]
    assert obj["spec"]["dataSourceRef"] == {"kind": "PersistentVolumeClaim", "name": "src"}
    assert obj["status"] == {"phase": "Pending"}


def test_foreign_data_sources_are_dropped_unless_a_ref_is_given():
    spec = {"dataSource": {"apiGroup": "example.com", "kind": "Thing", "name": "x"}}
    drop_disabled_fields(spec, None)
    assert spec == {}
    spec = {"dataSourceRef": {"apiGroup": "example.com", "kind": "Thing", "name": "x",
                              "namespace": "other"}}
    drop_disabled_fields(spec, None)
    normalize_data_sources(spec)
    assert spec == {"dataSourceRef": {"apiGroup": "example.com", "kind": "Thing", "name": "x"},
                    "dataSource": {"apiGroup": "example.com", "kind": "Thing", "name": "x"}}


def test_spec_rules():
    spec = {"accessModes": ["ReadWriteMany", "ReadWriteOncePod"],
            "resources": {"requests": {"storage": "0"}}, "volumeMode": "Raw",
            "storageClassName": "fast", "selector": {"matchLabels": {"a": "-"}},
            "dataSource": {"kind": "Snapshot", "name": "x"},
            "dataSourceRef": {"kind": "PersistentVolumeClaim", "name": "y"}}
    assert texts(STRATEGY.validate(claim(spec))) == [
        'spec.selector.matchLabels: Invalid value: "-": a valid label must be an empty string '
        "or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
        "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes",
        'spec.resources[storage]: Invalid value: "0": must be greater than zero',
        'spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"',
        'spec.dataSource: Invalid value: "Snapshot": must be \'PersistentVolumeClaim\' when '
        "referencing the default apiGroup",
        'spec: Invalid value: field.Path{name:"dataSource", index:"", '
        "parent:(*field.Path)(0xc000010000)}: must match dataSourceRef",
    ]


def test_the_spec_is_immutable_but_the_binder_may_set_the_volume_name():
    old = claim(status={"phase": "Pending"})
    bound = claim(status={"phase": "Pending"})
    bound["spec"]["volumeName"] = "pv1"
    assert STRATEGY.validate_update(bound, old) == []
    grown = claim(status={"phase": "Pending"})
    grown["spec"]["resources"]["requests"]["storage"] = "2Gi"
    errs = STRATEGY.validate_update(grown, old)
    assert [e.field for e in errs] == ["spec"]
    detail = errs[0].detail.replace("\xa0", " ")  # go-cmp indents with no-break spaces
    assert detail.startswith(
        "spec is immutable after creation except resources.requests and "
        "volumeAttributesClassName for bound claims\n  core.PersistentVolumeClaimSpec{\n")
    assert '- \t\tRequests: core.ResourceList{' in detail
    assert 's"storage": {i: resource.int64Amount{value: 2147483648}, s: "2Gi", ' \
           'Format: "BinarySI"}' in detail


def test_bound_claims_may_grow_and_shrink_above_their_capacity():
    status = {"phase": "Bound", "capacity": {"storage": "2Gi"}}
    old = claim(status=status)
    old["spec"]["resources"]["requests"]["storage"] = "4Gi"
    grown = claim(status=status)
    grown["spec"]["resources"]["requests"]["storage"] = "8Gi"
    assert STRATEGY.validate_update(grown, old) == []
    shrunk = claim(status=status)
    shrunk["spec"]["resources"]["requests"]["storage"] = "3Gi"
    assert STRATEGY.validate_update(shrunk, old) == []
    too_small = claim(status=status)
    too_small["spec"]["resources"]["requests"]["storage"] = "2Gi"
    assert texts(STRATEGY.validate_update(too_small, old)) == [
        "spec.resources.requests.storage: Forbidden: field can not be less than "
        "status.capacity"]


def test_the_volume_mode_and_class_annotation_are_immutable():
    old = claim(annotations={"volume.beta.kubernetes.io/storage-class": "a"})
    new = claim(annotations={"volume.beta.kubernetes.io/storage-class": "b"})
    new["spec"]["volumeMode"] = "Block"
    fields = [e.field for e in STRATEGY.validate_update(new, old)]
    assert "metadata.annotations.volume.beta.kubernetes.io/storage-class" in fields
    assert "volumeMode" in fields
    # A class may move from the beta annotation into the field.
    moved = claim(annotations={"volume.beta.kubernetes.io/storage-class": "a"})
    moved["spec"]["storageClassName"] = "a"
    assert STRATEGY.validate_update(moved, old) == []
    # A claim without a class may get one.
    classless = claim()
    classed = claim()
    classed["spec"]["storageClassName"] = "standard"
    assert STRATEGY.validate_update(classed, classless) == []


def test_status_updates():
    old = claim(status={"phase": "Pending"})
    new = claim(status={"phase": "Bound", "capacity": {"storage": "1Gi"},
                        "allocatedResources": {"cpu": "1"},
                        "allocatedResourceStatuses": {"storage": "Bogus"}})
    assert texts(STRATEGY.validate_status(new, old)) == [
        'status.allocatedResourceStatus: Unsupported value: storage: supported values: '
        '"ControllerResizeFailed", "ControllerResizeInProgress", "NodeResizeFailed", '
        '"NodeResizeInProgress", "NodeResizePending"',
        'status.allocatedResources: Unsupported value: "cpu": supported values: "storage"',
    ]
    STRATEGY.prepare_status_update(new, old)
    assert new["spec"] == old["spec"]


def test_table_cells():
    obj = claim(status={"phase": "Bound", "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
                        "capacity": {"storage": "1Gi"}},
                creationTimestamp="2020-01-01T00:00:00Z")
    obj["spec"]["volumeName"] = "pv1"
    cells = STRATEGY.table_cells(obj)
    assert cells[:7] == ["pvc1", "Bound", "pv1", "1Gi", "RWO,ROX", "", "<unset>"]
    assert cells[8] == "Filesystem"
    assert STRATEGY.selectable_fields(obj) == {"metadata.name": "pvc1",
                                               "metadata.namespace": "ns"}
