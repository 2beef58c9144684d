"""Tests for kapiserver.registry.patch.decode_apply_patch: reading server-side apply bodies."""

import pytest

from kapiserver.registry.patch import PatchError, decode_apply_patch

# upstream's test/integration/apiserver/field_validation_test.go applyInvalidBody
TABBED_JSON = b"""{
\t\t"apiVersion": "apps/v1",
\t\t"kind": "Deployment",
\t\t"metadata": {
\t\t\t"name": "d",
\t\t\t"labels": {"app": "nginx"}
\t\t},
\t\t"spec": {
\t\t\t"paused": false,
\t\t\t"paused": true,
\t\t\t"selector": {
\t\t\t\t"matchLabels": {
\t\t\t\t\t"app": "nginx"
\t\t\t\t}
\t\t\t},
\t\t\t"template": {
\t\t\t\t"metadata": {
\t\t\t\t\t"labels": {
\t\t\t\t\t\t"app": "nginx"
\t\t\t\t\t}
\t\t\t\t},
\t\t\t\t"spec": {
\t\t\t\t\t"containers": [{
\t\t\t\t\t\t"name":  "nginx",
\t\t\t\t\t\t"image": "nginx:latest",
\t\t\t\t\t\t"imagePullPolicy": "Never",
\t\t\t\t\t\t"imagePullPolicy": "Always"
\t\t\t\t\t}]
\t\t\t\t}
\t\t\t}
\t\t}
\t}"""


def test_repeated_keys_are_reported_at_upstreams_lines_and_the_last_wins():
    obj, duplicates = decode_apply_patch(TABBED_JSON)
    assert duplicates == ['line 10: key "paused" already set in map',
                          'line 27: key "imagePullPolicy" already set in map']
    assert obj["spec"]["paused"] is True
    assert obj["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] == "Always"


def test_yaml_bodies():
    obj, duplicates = decode_apply_patch(
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: '1'\n")
    assert obj == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"},
                   "data": {"x": "1"}} and duplicates == []


def test_nested_repeats_come_before_the_repeat_holding_them():
    _, duplicates = decode_apply_patch(b"a:\n  b: 1\n  b: 2\na: 3\n")
    assert duplicates == ['line 3: key "b" already set in map',
                          'line 4: key "a" already set in map']


def test_scalars_are_read_as_goyaml_reads_them():
    obj, _ = decode_apply_patch(b"a: 2020-01-01\nb: y\nc: 1.5e3\nd: 012\ne: 1:30\nf: 0x1F\n"
                                b"g: ~\nh: No\ni: '1'\nj: -3\n")
    assert obj == {"a": "2020-01-01", "b": True, "c": 1500.0, "d": 10, "e": "1:30", "f": 31,
                   "g": None, "h": False, "i": "1", "j": -3}


def test_keys_yaml_reads_as_booleans_or_numbers_become_their_text():
    # the "y" and "on" keys of YAML 1.1, as sigs.k8s.io/yaml turns them into JSON
    obj, _ = decode_apply_patch(b"data:\n  y: a\n  off: b\n  2: c\n  x: y\n")
    assert obj == {"data": {"true": "a", "false": "b", "2": "c", "x": True}}


def test_json_numbers_stay_exact():
    obj, _ = decode_apply_patch(b'{"a": 1.5e3, "b": 12345678901234567, "c": "\\u00e9\\/"}')
    assert obj == {"a": 1500.0, "b": 12345678901234567, "c": "\u00e9/"}


def test_an_empty_body_is_an_empty_config():
    assert decode_apply_patch(b"") == ({}, [])
    assert decode_apply_patch(b"null") == ({}, [])


@pytest.mark.parametrize("body,message", [
    (b"- a\n- b\n", "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: "
                    "cannot unmarshal array into Go value of type map[string]interface {}"),
    (b"3", "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: "
           "cannot unmarshal number into Go value of type map[string]interface {}"),
    (b"a: b: c", "error decoding YAML: error converting YAML to JSON: yaml: line 1: "
                 "mapping values are not allowed in this context"),
])
def test_bodies_that_are_no_object(body, message):
    with pytest.raises(PatchError) as caught:
        decode_apply_patch(body)
    assert str(caught.value) == message
