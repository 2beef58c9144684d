"""resourceVersion on reads, as kube-apiserver 1.32 answers it: reads at least as new as a
version wait for it (then 504), ``NotOlderThan`` and plain versions serve the current state
even when compacted, ``Exact`` serves that revision or 410, and bad list options are 422."""

import time

import pytest

from kapiserver.testing import assert_status

ADMIN = dict(user="admin", groups=["system:masters"])
#: The server tests run on each storage backend (tests/conftest.py).
STORAGE_BACKENDS = ("sqlite", "etcd3")
CMS = "/api/v1/namespaces/default/configmaps"


@pytest.fixture(scope="module")
def api(tmp_path_factory, kapiserver_storage):
    from kapiserver.testing import KapiserverProcess

    server = KapiserverProcess(str(tmp_path_factory.mktemp("rv")), workers=2,
                               config={**kapiserver_storage.config(),
                                       "etcd-compaction-interval": "1s"}).start()
    yield server
    server.stop()


def create(api, name, value="1"):
    response = api.request("POST", CMS, json={"apiVersion": "v1", "kind": "ConfigMap",
                                              "metadata": {"name": name}, "data": {"v": value}},
                           **ADMIN)
    assert response.status_code == 201, response.text
    return response.json()


def rv(api) -> int:
    return int(api.get(CMS, **ADMIN).json()["metadata"]["resourceVersion"])


def compacted_past(api, revision: int) -> None:
    """Write until the store has compacted ``revision`` away (compaction runs every 1 s)."""
    deadline = time.monotonic() + 15
    for i in range(1000):
        create(api, f"churn-{revision}-{i}")
        probe = api.get(f"{CMS}?resourceVersion={revision}&resourceVersionMatch=Exact",
                        **ADMIN)
        if probe.status_code == 410 or time.monotonic() > deadline:
            return
        time.sleep(0.3)


@pytest.mark.parametrize("path", [f"{CMS}?resourceVersion={{rv}}",
                                  f"{CMS}/first?resourceVersion={{rv}}"])
def test_a_version_the_store_has_not_reached_waits_then_is_too_large(api, path):
    if "first" in path:
        create(api, "first")
    future = rv(api) + 1000
    started = time.monotonic()
    response = api.get(path.format(rv=future), **ADMIN)
    assert 2.5 < time.monotonic() - started < 8
    assert_status(response, 504, "Timeout",
                  f"Timeout: Too large resource version: {future}, current: "
                  f"{response.json()['message'].rsplit(' ', 1)[-1]}")
    assert response.json()["details"] == {
        "causes": [{"reason": "ResourceVersionTooLarge",
                    "message": "Too large resource version"}], "retryAfterSeconds": 1}


def test_a_version_written_meanwhile_is_served_once_reached(api):
    import threading

    target = rv(api) + 1
    results = {}
    reader = threading.Thread(target=lambda: results.setdefault(
        "r", api.get(f"{CMS}?resourceVersion={target}", **ADMIN)))
    reader.start()
    time.sleep(0.5)
    create(api, "written-meanwhile")
    reader.join(10)
    listed = results["r"]
    assert listed.status_code == 200
    assert int(listed.json()["metadata"]["resourceVersion"]) >= target


def test_old_versions_serve_the_current_state_unless_exact(api):
    old = rv(api)
    create(api, "after-old")
    compacted_past(api, old)
    names = {i["metadata"]["name"] for i in api.get(CMS, **ADMIN).json()["items"]}
    for query in (f"resourceVersion={old}", f"resourceVersion={old}&resourceVersionMatch="
                                           "NotOlderThan"):
        listed = api.get(f"{CMS}?{query}", **ADMIN)
        assert listed.status_code == 200, query
        assert {i["metadata"]["name"] for i in listed.json()["items"]} >= names
    for query in (f"resourceVersion={old}&resourceVersionMatch=Exact",
                  f"resourceVersion={old}&limit=5"):
        assert_status(api.get(f"{CMS}?{query}", **ADMIN), 410, "Expired",
                      "The resourceVersion for the provided list is too old.")


def test_exact_serves_that_revision(api):
    before = create(api, "exact-probe", "1")
    api.request("PUT", f"{CMS}/exact-probe", json={**before, "data": {"v": "2"}}, **ADMIN)
    at = before["metadata"]["resourceVersion"]
    listed = api.get(f"{CMS}?resourceVersion={at}&resourceVersionMatch=Exact", **ADMIN).json()
    assert listed["metadata"]["resourceVersion"] == at
    item = next(i for i in listed["items"] if i["metadata"]["name"] == "exact-probe")
    assert item["data"] == {"v": "1"}


@pytest.mark.parametrize("query,message", [
    ("resourceVersionMatch=NotOlderThan", "resourceVersionMatch: Forbidden: "
     "resourceVersionMatch is forbidden unless resourceVersion is provided"),
    ("resourceVersion=0&resourceVersionMatch=Exact", "resourceVersionMatch: Forbidden: "
     "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""),
    ("resourceVersion=1&resourceVersionMatch=Newest", "resourceVersionMatch: Unsupported "
     "value: \"Newest\": supported values: \"Exact\", \"NotOlderThan\", \"\""),
    ("sendInitialEvents=true", "sendInitialEvents: Forbidden: sendInitialEvents is "
     "forbidden for list"),
])
def test_bad_list_options_are_invalid_list_options(api, query, message):
    response = api.get(f"{CMS}?{query}", **ADMIN)
    assert_status(response, 422, "Invalid", f'ListOptions.meta.k8s.io "" is invalid: {message}')
    assert response.json()["details"]["kind"] == "ListOptions"
    assert response.json()["details"]["group"] == "meta.k8s.io"
