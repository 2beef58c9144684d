"""Content negotiation as kube-apiserver's two steps: the route, then the serializers."""

import pytest

from kapiserver import errors
from kapiserver.endpoints import negotiation as n

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
PARTIAL = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"


def test_empty_accept_is_the_first_serializer():
    assert n.negotiate("") == n.MediaType(n.JSON)
    assert n.negotiate("", n.UNSTRUCTURED_MEDIA_TYPES) == n.MediaType(n.JSON)


@pytest.mark.parametrize("header,media", [
    ("application/json", n.JSON), ("*/*", n.JSON), ("application/*", n.JSON),
    ("application/yaml", n.YAML), ("application/vnd.kubernetes.protobuf", n.PROTOBUF),
    ("application/vnd.kubernetes.protobuf, application/json", n.PROTOBUF),
    ("application/json;q=0.5, application/yaml", n.YAML),
    ("text/html, */*;q=0.1", n.JSON),
])
def test_clauses_are_tried_best_first(header, media):
    assert n.negotiate(header).media == media


def test_table_is_json_or_yaml_only():
    assert n.negotiate(TABLE) == n.MediaType(n.JSON, "Table", "meta.k8s.io", "v1")
    assert n.negotiate(TABLE + ",application/json").convert == "Table"
    with pytest.raises(errors.NotAcceptable) as caught:
        n.negotiate("application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io")
    assert caught.value.message == ("only the following media types are accepted: "
                                    "application/json, application/yaml, "
                                    "application/vnd.kubernetes.protobuf")
    # a later clause the endpoint serves wins
    assert n.negotiate("application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,"
                       "application/json").media == n.JSON


def test_endpoint_without_tables_skips_table_clauses():
    assert n.negotiate(TABLE + ",application/json", table=False).convert == ""
    with pytest.raises(errors.NotAcceptable):
        n.negotiate(TABLE, table=False)


def test_partial_object_metadata_in_any_serializer_even_for_custom_resources():
    assert n.negotiate(PARTIAL).convert == "PartialObjectMetadata"
    proto = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
    assert n.negotiate(proto, n.UNSTRUCTURED_MEDIA_TYPES) == n.MediaType(
        n.PROTOBUF, "PartialObjectMetadataList", "meta.k8s.io", "v1")
    assert n.negotiate(PARTIAL.replace("v=v1", "v=v1beta1")).version == "v1beta1"


def test_conversions_outside_meta_or_to_unknown_kinds_are_not_acceptable():
    for header in ("application/json;as=Table;g=apps;v=v1",
                   "application/json;as=Deployment;g=meta.k8s.io;v=v1",
                   "application/json;as=Table;g=meta.k8s.io;v=v2"):
        with pytest.raises(errors.NotAcceptable):
            n.negotiate(header)


def test_custom_resources_refuse_plain_protobuf():
    with pytest.raises(errors.NotAcceptable):
        n.negotiate("application/vnd.kubernetes.protobuf", n.UNSTRUCTURED_MEDIA_TYPES)
    assert n.negotiate("application/vnd.kubernetes.protobuf, application/json",
                       n.UNSTRUCTURED_MEDIA_TYPES).media == n.JSON


def test_watch_streams():
    assert n.negotiate("application/json;stream=watch", stream=True).stream == "watch"
    assert n.negotiate("application/vnd.kubernetes.protobuf;stream=watch",
                       stream=True).protobuf
    with pytest.raises(errors.NotAcceptable):
        n.negotiate("application/json;stream=watch")  # not a watch endpoint


def test_route_accepts_types_it_produces_and_any():
    assert n.route_accepts("")
    assert n.route_accepts("application/json;as=Table;v=v1;g=meta.k8s.io")
    assert n.route_accepts("text/html, */*")
    assert not n.route_accepts("application/x-unknown")
    assert not n.route_accepts("application/*")
    error = n.route_not_acceptable(stream=True)
    assert error.message == (
        "406: Not Acceptable\n\nAvailable representations: application/json, "
        "application/yaml, application/vnd.kubernetes.protobuf, application/json;stream=watch, "
        "application/vnd.kubernetes.protobuf;stream=watch")
