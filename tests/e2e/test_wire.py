"""The wire as client-go sees it: protobuf objects, lists, watch streams and errors,
metadata-only answers, 406s, gzip — checked against kube-apiserver 1.32's transcripts and
driven as a protobuf informer and a metadata informer drive them."""

import base64
import gzip
import json
import pathlib
import threading
import time

import pytest

from kapiserver.runtime import protobuf
from kapiserver.testing import assert_status

ADMIN = dict(user="admin", groups=["system:masters"])
PROTOBUF = "application/vnd.kubernetes.protobuf"
CMS = "/api/v1/namespaces/default/configmaps"
REFERENCE = pathlib.Path("/work/shared/reference")
PARTIAL = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
PARTIAL_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
#: What client-go's metadata informer asks for.
METADATA_INFORMER = (f"{PROTOBUF};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
                     "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
                     "application/json")
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "gadgets.wire.example.com"},
    "spec": {"group": "wire.example.com", "scope": "Namespaced",
             "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
             "versions": [{"name": "v1", "served": True, "storage": True,
                           "schema": {"openAPIV3Schema": {
                               "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]},
}
GADGETS = "/apis/wire.example.com/v1/namespaces/default/gadgets"


def reference(name):
    return json.loads((REFERENCE / name).read_text())


needs_reference = pytest.mark.skipif(not REFERENCE.is_dir(), reason="no reference transcripts")


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    server = KapiserverProcess(str(tmp_path_factory.mktemp("wire")), workers=2).start()
    for name in ("one", "two"):
        server.request("POST", CMS, json={"apiVersion": "v1", "kind": "ConfigMap",
                                          "metadata": {"name": name, "labels": {"a": name}},
                                          "data": {"k": name}}, **ADMIN)
    server.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                   json=CRD, **ADMIN)
    server.wait_established(CRD["metadata"]["name"])
    server.request("POST", GADGETS, json={"apiVersion": "wire.example.com/v1",
                                           "kind": "Gadget", "metadata": {"name": "g1"},
                                           "spec": {"x": 1}}, **ADMIN)
    yield server
    server.stop()


def get(api, path, accept, **kwargs):
    return api.get(path, headers={"Accept": accept}, **ADMIN, **kwargs)


def test_objects_and_lists_in_protobuf_equal_their_json(api):
    response = get(api, f"{CMS}/one", PROTOBUF)
    assert response.headers["Content-Type"] == PROTOBUF
    assert protobuf.decode(response.content) == api.get(f"{CMS}/one", **ADMIN).json()
    listed = get(api, CMS, f"{PROTOBUF}, application/json")
    assert listed.headers["Content-Type"] == PROTOBUF
    decoded = protobuf.decode(listed.content)
    as_json = api.get(CMS, **ADMIN).json()
    assert decoded["kind"] == "ConfigMapList"
    assert [i["metadata"]["name"] for i in decoded["items"]] == \
        [i["metadata"]["name"] for i in as_json["items"]]
    assert decoded["items"] == as_json["items"]
    # a second list is joined from cached item messages: the same bytes
    assert get(api, CMS, PROTOBUF).content == listed.content


def test_a_list_larger_than_one_send_arrives_whole_in_both_encodings(api):
    path = "/api/v1/namespaces/kube-public/configmaps"
    for i in range(48):  # about 200 KB: sent apart from its head
        api.request("POST", path, json={"apiVersion": "v1", "kind": "ConfigMap",
                                        "metadata": {"name": f"big-{i:02d}"},
                                        "data": {"k": str(i) * 4096}}, **ADMIN)
    plain = {"Accept-Encoding": "identity"}  # not gzipped: sent as it is
    as_json = api.get(path, headers={"Accept": "application/json", **plain}, **ADMIN)
    assert int(as_json.headers["Content-Length"]) == len(as_json.content) > 64 * 1024
    items = as_json.json()["items"]
    assert [item["data"]["k"] for item in items if item["metadata"]["name"].startswith(
        "big-")] == [str(i) * 4096 for i in range(48)]
    for _ in range(2):  # made, then held with each object
        listed = api.get(path, headers={"Accept": PROTOBUF, **plain}, **ADMIN)
        assert int(listed.headers["Content-Length"]) == len(listed.content) > 64 * 1024
        assert protobuf.decode(listed.content)["items"] == items


@needs_reference
def test_protobuf_list_has_upstreams_envelope_and_layout():
    body = base64.b64decode(reference("wide/protocols/configmaps-list-protobuf.json")[
        "response"]["body"]["base64"])
    decoded = protobuf.decode(body)
    items = [{k: v for k, v in i.items()} for i in decoded["items"]]
    again = protobuf.default_codec().encode_list("v1", "ConfigMapList", decoded["metadata"], [
        protobuf.default_codec().encode_item("v1", "ConfigMap", i) for i in items])
    assert again == body


def test_errors_are_status_in_protobuf_when_asked(api):
    response = get(api, f"{CMS}/missing", PROTOBUF)
    assert response.status_code == 404
    assert response.headers["Content-Type"] == PROTOBUF
    status = protobuf.decode(response.content)
    assert status["kind"] == "Status" and status["reason"] == "NotFound"
    assert status["message"] == 'configmaps "missing" not found'


@needs_reference
def test_unknown_accept_is_upstreams_406(api):
    exchange = reference("wide/protocols/not-acceptable.json")
    response = get(api, exchange["request"]["path"], exchange["request"]["accept"])
    assert response.status_code == 406
    assert response.headers["Content-Type"] == "application/json"
    assert response.json() == exchange["response"]["body"]


@needs_reference
def test_custom_resource_in_protobuf_only_is_a_protobuf_406(api):
    exchange = reference("cr-protobuf-unsupported.json")
    response = get(api, f"{GADGETS}/g1", PROTOBUF)
    assert response.status_code == 406
    assert response.headers["Content-Type"] == PROTOBUF
    status = protobuf.decode(response.content)
    assert status["message"] == ("only the following media types are accepted: "
                                 "application/json, application/yaml, " + PROTOBUF)
    assert exchange["response"]["status"] == 406
    assert get(api, f"{GADGETS}/g1", f"{PROTOBUF}, application/json").json()[
        "metadata"]["name"] == "g1"


def test_table_in_protobuf_only_is_not_acceptable(api):
    response = get(api, CMS, f"{PROTOBUF};as=Table;v=v1;g=meta.k8s.io")
    # The error is negotiated without conversions: no clause fits, so it is raw JSON.
    assert_status(response, 406, "NotAcceptable", "only the following media types are "
                  f"accepted: application/json, application/yaml, {PROTOBUF}")
    table = get(api, CMS, f"{PROTOBUF};as=Table;v=v1;g=meta.k8s.io,"
                          "application/json;as=Table;v=v1;g=meta.k8s.io")
    assert table.json()["kind"] == "Table"


@pytest.mark.parametrize("include", ["None", "Metadata", "Object", ""])
def test_table_include_object_values_upstream_accepts(api, include):
    table = get(api, f"{CMS}?includeObject={include}",
                "application/json;as=Table;v=v1;g=meta.k8s.io").json()
    row = table["rows"][0]
    if include == "None":
        assert "object" not in row
    elif include == "Object":
        assert row["object"]["kind"] == "ConfigMap" and "data" in row["object"]
    else:
        assert row["object"]["kind"] == "PartialObjectMetadata"


def test_table_include_object_other_values_are_invalid(api):
    response = get(api, f"{CMS}?includeObject=All",
                   "application/json;as=Table;v=v1;g=meta.k8s.io")
    assert_status(response, 422, "Invalid", 'TableOptions.meta.k8s.io "" is invalid: '
                  "includeObject: Invalid value: \"All\": must be 'Metadata', 'Object', "
                  "'None', or empty")


@needs_reference
def test_partial_object_metadata_get_and_list_as_upstream(api):
    got = get(api, "/api/v1/namespaces/default/services/kubernetes", PARTIAL).json()
    theirs = reference("wide/protocols/partial-metadata-get.json")["response"]["body"]
    assert set(got) == set(theirs) == {"kind", "apiVersion", "metadata"}
    assert (got["kind"], got["apiVersion"]) == (theirs["kind"], theirs["apiVersion"])
    listed = get(api, CMS, PARTIAL_LIST).json()
    theirs = reference("wide/protocols/partial-metadata-list.json")["response"]["body"]
    assert (listed["kind"], listed["apiVersion"]) == (theirs["kind"], theirs["apiVersion"])
    assert listed["items"][0].keys() == theirs["items"][0].keys()
    assert {i["metadata"]["name"] for i in listed["items"]} >= {"one", "two"}
    beta = get(api, CMS, PARTIAL_LIST.replace("v=v1", "v=v1beta1")).json()
    assert beta["apiVersion"] == "meta.k8s.io/v1beta1"


def test_partial_object_metadata_of_the_wrong_shape_is_not_acceptable(api):
    response = get(api, CMS, PARTIAL)
    assert_status(response, 406, "NotAcceptable", "you requested PartialObjectMetadata, but "
                  "the requested object is a list (*core.ConfigMapList)")
    response = get(api, f"{CMS}/one", PARTIAL_LIST)
    assert_status(response, 406, "NotAcceptable", "you requested PartialObjectMetadataList, "
                  "but the requested object is not a list (*core.ConfigMap)")


def test_metadata_of_custom_resources_in_protobuf(api):
    response = get(api, GADGETS, METADATA_INFORMER)
    assert response.headers["Content-Type"] == PROTOBUF
    listed = protobuf.decode(response.content)
    assert listed["kind"] == "PartialObjectMetadataList"
    assert [i["metadata"]["name"] for i in listed["items"]] == ["g1"]


def watch_frames(response, count, deadline):
    """Read ``count`` protobuf watch frames from a streaming response."""
    frames, buffer = [], b""
    for data in response.iter_content(chunk_size=None):
        buffer += data
        while len(buffer) >= 4 and len(buffer) >= 4 + int.from_bytes(buffer[:4], "big"):
            size = int.from_bytes(buffer[:4], "big")
            frames.append(protobuf.decode_watch_event(buffer[:4 + size]))
            buffer = buffer[4 + size:]
        if len(frames) >= count or time.monotonic() > deadline:
            break
    return frames


def test_a_protobuf_informer_lists_then_watches(api):
    listed = protobuf.decode(get(api, CMS, f"{PROTOBUF}, application/json").content)
    rv = listed["metadata"]["resourceVersion"]

    def later():
        time.sleep(0.5)
        api.request("POST", CMS, json={"apiVersion": "v1", "kind": "ConfigMap",
                                       "metadata": {"name": "watched"}}, **ADMIN)

    threading.Thread(target=later).start()
    with api.get(f"{CMS}?watch=1&resourceVersion={rv}&timeoutSeconds=10",
                 headers={"Accept": f"{PROTOBUF}, application/json"}, stream=True,
                 timeout=15, **ADMIN) as response:
        assert response.headers["Content-Type"] == f"{PROTOBUF};stream=watch"
        frames = watch_frames(response, 1, time.monotonic() + 10)
    assert frames[0]["type"] == "ADDED"
    assert frames[0]["object"]["kind"] == "ConfigMap"
    assert frames[0]["object"]["metadata"]["name"] == "watched"


def test_a_metadata_informer_watches_partial_objects(api):
    def later():
        time.sleep(0.5)
        api.request("POST", CMS, json={"apiVersion": "v1", "kind": "ConfigMap",
                                       "metadata": {"name": "meta-watched"}}, **ADMIN)

    rv = get(api, CMS, PARTIAL_LIST).json()["metadata"]["resourceVersion"]
    threading.Thread(target=later).start()
    accept = (f"{PROTOBUF};as=PartialObjectMetadata;g=meta.k8s.io;v=v1,"
              "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json")
    with api.get(f"{CMS}?watch=1&resourceVersion={rv}&timeoutSeconds=10",
                 headers={"Accept": accept}, stream=True, timeout=15, **ADMIN) as response:
        frames = watch_frames(response, 1, time.monotonic() + 10)
    event = frames[0]
    assert event["type"] == "ADDED"
    assert event["object"]["kind"] == "PartialObjectMetadata"
    assert event["object"]["apiVersion"] == "meta.k8s.io/v1"
    assert event["object"]["metadata"]["name"] == "meta-watched"
    assert "data" not in event["object"]


def test_large_answers_are_gzip_compressed_for_clients_that_accept_it(api):
    big = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"},
           "data": {f"k{i}": "x" * 1000 for i in range(150)}}
    api.request("POST", CMS, json=big, **ADMIN)
    response = api.get(f"{CMS}/big", headers={"Accept-Encoding": "gzip"}, stream=True,
                       **ADMIN)
    assert response.headers["Content-Encoding"] == "gzip"
    raw = response.raw.read(decode_content=False)
    assert json.loads(gzip.decompress(raw))["metadata"]["name"] == "big"
    small = api.get(f"{CMS}/one", headers={"Accept-Encoding": "gzip"}, **ADMIN)
    assert "Content-Encoding" not in small.headers
    plain = api.get(f"{CMS}/big", headers={"Accept-Encoding": "identity"}, **ADMIN)
    assert "Content-Encoding" not in plain.headers
