"""Reads served from memory stay consistent through a real server, on both backends: a
write acknowledged by one worker (or one instance sharing the etcd) is seen by the very
next GET and LIST on any other, and paginated lists read the store's snapshots."""

from __future__ import annotations

import time
import uuid

import pytest

from kapiserver.testing import KapiserverProcess

ADMIN = dict(user="admin", groups=["system:masters"])
#: The server tests run on each storage backend (tests/conftest.py).
STORAGE_BACKENDS = ("sqlite", "etcd3")
NS = "/api/v1/namespaces"
CMS = "/api/v1/namespaces/{ns}/configmaps"


@pytest.fixture(scope="module")
def api(tmp_path_factory, kapiserver_storage):
    server = KapiserverProcess(str(tmp_path_factory.mktemp("reads")), workers=2,
                               config=kapiserver_storage.config()).start()
    yield server
    server.stop()


def namespace(server, name: str) -> str:
    """A new namespace's ConfigMaps path, once its controllers have written what they do
    (the CA bundle ConfigMap): the tests' writes are then the only ones there."""
    answer = server.request("POST", NS, json={"metadata": {"name": name}}, **ADMIN)
    assert answer.status_code in (201, 409), answer.text
    deadline = time.monotonic() + 15
    while server.get(f"{CMS.format(ns=name)}/kube-root-ca.crt", **ADMIN).status_code != 200:
        assert time.monotonic() < deadline, "no kube-root-ca.crt in the new namespace"
        time.sleep(0.1)
    return CMS.format(ns=name)


def names(listed: dict) -> list[str]:
    """The names listed, but the CA bundle every namespace gets from a controller."""
    return [item["metadata"]["name"] for item in listed["items"]
            if item["metadata"]["name"] != "kube-root-ca.crt"]


def test_every_write_is_seen_by_the_next_read_on_any_worker(api):
    cms = namespace(api, "seen")
    for i in range(15):  # a new connection per request: both workers answer some
        created = api.request("POST", cms, json={"metadata": {"name": f"cm-{i:02d}"},
                                                 "data": {"v": "1"}}, **ADMIN)
        assert created.status_code == 201, created.text
        rv = created.json()["metadata"]["resourceVersion"]
        got = api.get(f"{cms}/cm-{i:02d}", **ADMIN)
        assert got.status_code == 200 and got.json()["metadata"]["resourceVersion"] == rv
        listed = api.get(cms, **ADMIN).json()
        assert names(listed) == [f"cm-{j:02d}" for j in range(i + 1)]
        assert int(listed["metadata"]["resourceVersion"]) >= int(rv)
        obj = got.json()
        obj["data"]["v"] = "2"
        updated = api.request("PUT", f"{cms}/cm-{i:02d}", json=obj, **ADMIN)
        assert updated.status_code == 200, updated.text
        got = api.get(f"{cms}/cm-{i:02d}", **ADMIN).json()
        assert got["data"] == {"v": "2"}
        assert got["metadata"]["resourceVersion"] == updated.json()["metadata"][
            "resourceVersion"]
    for i in range(0, 15, 3):
        deleted = api.request("DELETE", f"{cms}/cm-{i:02d}", **ADMIN)
        assert deleted.status_code == 200, deleted.text
        assert api.get(f"{cms}/cm-{i:02d}", **ADMIN).status_code == 404
        assert f"cm-{i:02d}" not in names(api.get(cms, **ADMIN).json())


def test_pages_selectors_and_counts_as_before(api):
    cms = namespace(api, "pages")
    for i in range(12):
        answer = api.request("POST", cms, json={
            "metadata": {"name": f"a-{i:02d}", "labels": {"odd": str(i % 2)}}}, **ADMIN)
        assert answer.status_code == 201, answer.text
    first = api.get(f"{cms}?limit=5", **ADMIN).json()
    assert names(first) == [f"a-{i:02d}" for i in range(5)]
    assert first["metadata"]["remainingItemCount"] == 8  # with kube-root-ca.crt
    # A write after the first page is not in the pages that follow (one snapshot).
    api.request("POST", cms, json={"metadata": {"name": "a-99"}}, **ADMIN)
    rest, token = [], first["metadata"]["continue"]
    while token:
        page = api.get(f"{cms}?limit=5&continue={token}", **ADMIN).json()
        assert page["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
        rest += names(page)
        token = page["metadata"].get("continue")
    assert rest == [f"a-{i:02d}" for i in range(5, 12)]
    odd = api.get(f"{cms}?labelSelector=odd%3D1&limit=3", **ADMIN).json()
    assert names(odd) == ["a-01", "a-03", "a-05"]
    assert "remainingItemCount" not in odd["metadata"] and odd["metadata"]["continue"]
    assert names(api.get(f"{cms}?fieldSelector=metadata.name%3Da-99", **ADMIN).json()) == [
        "a-99"]
    any_version = api.get(f"{cms}?resourceVersion=0", **ADMIN).json()
    assert len(names(any_version)) == 13
    everywhere = api.get("/api/v1/configmaps", **ADMIN).json()
    assert {"a-00", "a-99"} <= set(names(everywhere))


def test_a_write_through_one_instance_is_read_through_the_other(tmp_path, kapiserver_storage):
    if kapiserver_storage.name != "etcd3":
        pytest.skip("several instances share an etcd")
    shared = {"storage-backend": "etcd3", "etcd-servers": [kapiserver_storage.etcd.url],
              "etcd-prefix": f"/shared-{uuid.uuid4().hex[:8]}"}
    a = KapiserverProcess(str(tmp_path / "a"), workers=1, config=shared).start(60)
    b = KapiserverProcess(str(tmp_path / "b"), workers=1, config=shared).start(60)
    try:
        namespace(a, "both")
        cms = CMS.format(ns="both")
        assert names(b.get(cms, **ADMIN).json()) == []  # b's index is built
        for i in range(10):
            created = a.request("POST", cms, json={"metadata": {"name": f"x-{i}"}}, **ADMIN)
            assert created.status_code == 201, created.text
            got = b.get(f"{cms}/x-{i}", **ADMIN)
            assert got.status_code == 200, got.text
            assert got.json()["metadata"]["resourceVersion"] == created.json()["metadata"][
                "resourceVersion"]
            assert f"x-{i}" in names(b.get(cms, **ADMIN).json())
            assert a.request("DELETE", f"{cms}/x-{i}", **ADMIN).status_code == 200
            assert b.get(f"{cms}/x-{i}", **ADMIN).status_code == 404
    finally:
        a.stop()
        b.stop()
