"""The pod transcripts of kube-apiserver 1.32, replayed through defaulting and validation."""

import copy
import json
import pathlib

import pytest

from kapiserver.apimachinery.field_errors import invalid_status
from kapiserver.apis.core import defaults, gotypes
from kapiserver.apis.core.validation import validate_pod_create, validate_pod_update

KINDS = pathlib.Path("/work/shared/reference/wide/kinds")


def _load(name):
    path = KINDS / name
    if not path.exists():
        pytest.skip("reference transcripts not available")
    return json.loads(path.read_text())


def test_pods_invalid_word_for_word():
    transcript = _load("pods-invalid.json")
    pod = copy.deepcopy(transcript["request"]["body"])
    pod["metadata"]["namespace"] = "ref-069ea7"
    defaults.set_pod_defaults(pod)
    errors = validate_pod_create(pod)
    assert invalid_status("Pod", "", "p-bad", errors) == transcript["response"]["body"]


def test_created_pod_is_valid():
    created = _load("pods-create.json")["response"]["body"]
    assert validate_pod_create(created) == []


def test_pods_update_immutable_word_for_word():
    old = _load("pods-create.json")["response"]["body"]
    transcript = _load("pods-update-immutable.json")
    new = copy.deepcopy(old)
    new["spec"].update(transcript["request"]["body"]["spec"])  # the merge patch
    errors = validate_pod_update(new, old)
    assert invalid_status("Pod", "", "p1", errors) == transcript["response"]["body"]


def test_immutable_update_diff_alone():
    old = _load("pods-create.json")["response"]["body"]["spec"]
    new = dict(old, restartPolicy="Never")
    message = _load("pods-update-immutable.json")["response"]["body"]["details"]["causes"][0][
        "message"]
    assert message.endswith("\n" + gotypes.pod_spec_diff(old, new))
