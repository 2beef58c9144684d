"""CRD versions end to end: two served versions converted by a real webhook on loopback.

v1 has ``spec.size``; v2 calls it ``spec.replicas``. Objects are stored in v1 (the storage
version) and converted on every read and write through v2, by a ``ConversionReview``
webhook reached by URL or through a Service and its Endpoints, over TLS verified with the
CRD's ``caBundle``. v1 is deprecated: each request to it gets the deprecation warning.
Lists, watches (events and the initial state) and Tables are converted too.
"""

import json
import time

import pytest
import yaml

from kapiserver.testing import KapiserverProcess
from tests.support.conversion_webhook import ConversionWebhook, size_to_replicas

ADMIN = dict(user="admin", groups=["system:masters"])
GROUP = "conv.example.com"
NS = "versions"


def schema(field: str) -> dict:
    return {"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {field: {"type": "integer"}}}}}}


def crd(plural: str, kind: str, client_config: dict) -> dict:
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {"group": GROUP, "scope": "Namespaced",
                 "names": {"plural": plural, "kind": kind},
                 "versions": [
                     {"name": "v1", "served": True, "storage": True, "deprecated": True,
                      "schema": schema("size")},
                     {"name": "v2", "served": True, "storage": False, "schema": schema("replicas")}],
                 "conversion": {"strategy": "Webhook", "webhook": {
                     "conversionReviewVersions": ["v1"], "clientConfig": client_config}}}}


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    server = KapiserverProcess(str(tmp_path_factory.mktemp("versions")), workers=2).start()
    try:
        server.kubectl("create", "namespace", NS, check=True)
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def hook(tmp_path_factory):
    webhook = ConversionWebhook(str(tmp_path_factory.mktemp("conversion-pki")), size_to_replicas,
                                hosts=("127.0.0.1", "converter.default.svc"))
    yield webhook
    webhook.close()


def install(api, manifest) -> None:
    api.kubectl("apply", "-f", "-", input=yaml.safe_dump(manifest), check=True)
    api.wait_established(manifest["metadata"]["name"])


def path(plural: str, version: str, name: str = "") -> str:
    return f"/apis/{GROUP}/{version}/namespaces/{NS}/{plural}" + (f"/{name}" if name else "")


def test_objects_are_converted_between_versions_by_url(api, hook):
    install(api, crd("things", "Thing", {"url": hook.url, "caBundle": hook.ca_bundle}))
    created = api.request("POST", path("things", "v1"), json={
        "apiVersion": f"{GROUP}/v1", "kind": "Thing", "metadata": {"name": "a"},
        "spec": {"size": 3}}, **ADMIN)
    assert created.status_code == 201, created.text
    assert created.headers["Warning"] == f'299 - "{GROUP}/v1 Thing is deprecated"'
    got = api.get(path("things", "v2", "a"), **ADMIN)
    assert got.status_code == 200, got.text
    assert "Warning" not in got.headers
    assert got.json()["apiVersion"] == f"{GROUP}/v2"
    assert got.json()["spec"] == {"replicas": 3}
    # A write through v2 is stored in v1 and read back in either version.
    created = api.request("POST", path("things", "v2"), json={
        "apiVersion": f"{GROUP}/v2", "kind": "Thing", "metadata": {"name": "b"},
        "spec": {"replicas": 7}}, **ADMIN)
    assert created.status_code == 201, created.text
    assert created.json()["spec"] == {"replicas": 7}
    assert api.get(path("things", "v1", "b"), **ADMIN).json()["spec"] == {"size": 7}
    listed = api.get(path("things", "v2"), **ADMIN).json()
    assert [(i["apiVersion"], i["spec"]) for i in listed["items"]] == [
        (f"{GROUP}/v2", {"replicas": 3}), (f"{GROUP}/v2", {"replicas": 7})]
    review = hook.reviews[-1]
    assert review["apiVersion"] == "apiextensions.k8s.io/v1"
    assert review["kind"] == "ConversionReview"
    assert review["request"]["uid"]
    # kubectl reads the preferred version (v2, the GA version listed first by priority).
    out = api.kubectl("get", f"things.{GROUP}", "b", "-n", NS, "-o", "json", check=True)
    assert json.loads(out.stdout)["spec"] == {"replicas": 7}


def test_a_list_is_converted_in_one_review(api, hook):
    install(api, crd("crates", "Crate", {"url": hook.url, "caBundle": hook.ca_bundle}))
    for index in range(5):
        created = api.request("POST", path("crates", "v1"), json={
            "apiVersion": f"{GROUP}/v1", "kind": "Crate",
            "metadata": {"name": f"c{index}", "labels": {"batch": "yes"}},
            "spec": {"size": index}}, **ADMIN)
        assert created.status_code == 201, created.text
    before = len(hook.reviews)
    # A selector reads every item from storage (no cached encodings): all five in one call.
    listed = api.get(path("crates", "v2") + "?labelSelector=batch%3Dyes", **ADMIN).json()
    assert [i["spec"] for i in listed["items"]] == [{"replicas": i} for i in range(5)]
    assert len(hook.reviews) == before + 1
    assert len(hook.reviews[-1]["request"]["objects"]) == 5


def test_conversion_through_a_service(api, hook):
    # Endpoints may not name loopback addresses (upstream's validation): an ExternalName
    # Service reaches the webhook on this host, verified as converter.default.svc.
    api.kubectl("apply", "-f", "-", check=True, input=yaml.safe_dump(
        {"apiVersion": "v1", "kind": "Service",
         "metadata": {"name": "converter", "namespace": "default"},
         "spec": {"type": "ExternalName", "externalName": "localhost"}}))
    install(api, crd("gears", "Gear", {
        "service": {"namespace": "default", "name": "converter", "path": "/convert",
                    "port": hook.port}, "caBundle": hook.ca_bundle}))
    created = api.request("POST", path("gears", "v2"), json={
        "apiVersion": f"{GROUP}/v2", "kind": "Gear", "metadata": {"name": "g"},
        "spec": {"replicas": 2}}, **ADMIN)
    assert created.status_code == 201, created.text
    assert api.get(path("gears", "v1", "g"), **ADMIN).json()["spec"] == {"size": 2}


def test_an_untrusted_webhook_fails_the_request(api, hook, tmp_path):
    other = ConversionWebhook(str(tmp_path / "other-pki"), size_to_replicas)
    try:
        install(api, crd("bolts", "Bolt", {"url": hook.url, "caBundle": other.ca_bundle}))
        response = api.request("POST", path("bolts", "v2"), json={
            "apiVersion": f"{GROUP}/v2", "kind": "Bolt", "metadata": {"name": "x"},
            "spec": {"replicas": 1}}, **ADMIN)
        assert response.status_code == 500, response.text
        body = response.json()
        assert body["reason"] == "InternalError"
        assert "conversion webhook for" in body["message"]
        # Nothing was stored.
        assert api.get(path("bolts", "v1", "x"), **ADMIN).status_code == 404
    finally:
        other.close()


def test_watches_lists_and_tables_through_the_other_version(api, hook):
    from kubernetes import client, watch

    install(api, crd("dials", "Dial", {"url": hook.url, "caBundle": hook.ca_bundle}))
    objects = client.CustomObjectsApi(api.python_client())
    first = objects.create_namespaced_custom_object(GROUP, "v1", NS, "dials", {
        "apiVersion": f"{GROUP}/v1", "kind": "Dial", "metadata": {"name": "d1"},
        "spec": {"size": 1}})
    start = first["metadata"]["resourceVersion"]
    created = api.request("POST", path("dials", "v1"), json={
        "apiVersion": f"{GROUP}/v1", "kind": "Dial", "metadata": {"name": "d2"},
        "spec": {"size": 2}}, **ADMIN)
    assert created.status_code == 201, created.text
    patched = api.request("PATCH", path("dials", "v1", "d1"), data=b'{"spec":{"size":5}}',
                          headers={"Content-Type": "application/merge-patch+json"}, **ADMIN)
    assert patched.status_code == 200, patched.text

    def events(**kwargs):
        seen, stream = [], watch.Watch()
        for event in stream.stream(objects.list_namespaced_custom_object, GROUP, "v2", NS,
                                   "dials", timeout_seconds=5, **kwargs):
            obj = event["object"]
            seen.append((event["type"], obj["apiVersion"], obj["metadata"]["name"],
                         obj["spec"]))
            if len(seen) == 2:
                stream.stop()
        return seen

    v2 = f"{GROUP}/v2"
    assert events(resource_version=start) == [("ADDED", v2, "d2", {"replicas": 2}),
                                              ("MODIFIED", v2, "d1", {"replicas": 5})]
    # Without a resourceVersion the watch starts with the current state, converted.
    assert sorted(events()) == [("ADDED", v2, "d1", {"replicas": 5}),
                                ("ADDED", v2, "d2", {"replicas": 2})]
    listed = objects.list_namespaced_custom_object(GROUP, "v2", NS, "dials")
    assert listed["apiVersion"] == v2
    assert [(i["apiVersion"], i["spec"]) for i in listed["items"]] == [
        (v2, {"replicas": 5}), (v2, {"replicas": 2})]
    table = api.get(path("dials", "v2"), headers={
        "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}, **ADMIN).json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Age"]
    assert [row["cells"][0] for row in table["rows"]] == ["d1", "d2"]
    out = api.kubectl("get", f"dials.v2.{GROUP}", "-n", NS, check=True).stdout.splitlines()
    assert out[0].split() == ["NAME", "AGE"] and [line.split()[0] for line in out[1:]] == [
        "d1", "d2"]


def test_a_failing_webhook_fails_reads_and_ends_watches_cleanly(api, hook):
    import threading

    install(api, crd("knobs", "Knob", {"url": hook.url, "caBundle": hook.ca_bundle}))
    start = api.get(path("knobs", "v2"), **ADMIN).json()["metadata"]["resourceVersion"]
    lines = []

    def watch():
        with api.get(path("knobs", "v2") + f"?watch=1&resourceVersion={start}"
                     "&timeoutSeconds=10", stream=True, **ADMIN) as response:
            lines.extend(line for line in response.iter_lines() if line)
        lines.append("ended")

    thread = threading.Thread(target=watch)
    thread.start()
    hook.respond = lambda review, answer: dict(answer, response=dict(
        answer["response"], convertedObjects=[],
        result={"status": "Failure", "message": "knobs cannot turn"}))
    try:
        time.sleep(0.5)
        created = api.request("POST", path("knobs", "v1"), json={
            "apiVersion": f"{GROUP}/v1", "kind": "Knob", "metadata": {"name": "k"},
            "spec": {"size": 1}}, **ADMIN)
        assert created.status_code == 201, created.text
        thread.join(10)
        # Upstream ends a watch whose event it cannot convert; the stream ends cleanly.
        assert lines == ["ended"]
        response = api.get(path("knobs", "v2", "k"), **ADMIN)
        assert response.status_code == 500
        assert response.json()["message"] == (
            f"Internal error occurred: conversion webhook for {GROUP}/v1, Kind=Knob failed: "
            "knobs cannot turn")
    finally:
        hook.respond = None
    assert api.get(path("knobs", "v2", "k"), **ADMIN).json()["spec"] == {"replicas": 1}
