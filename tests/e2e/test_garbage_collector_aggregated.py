"""The garbage collector over an aggregated API: the wardle extension's Flunders, followed
through the main server's proxy, own and are owned by the main server's objects."""

import json
import time

import pytest

from tests.support.wardle import (ADMIN, register, start_extension, start_main,
                                  wait_available)

NS = "gc-wardle"
FLUNDERS = f"/apis/wardle.example.com/v1alpha1/namespaces/{NS}/flunders"
CM = f"/api/v1/namespaces/{NS}/configmaps"
MERGE = {"Content-Type": "application/merge-patch+json"}


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    base = tmp_path_factory.mktemp("gc-wardle")
    main = start_main(str(base), {"authorization-mode": ["RBAC"]})
    extension = None
    try:
        extension = start_extension(str(base), main)
        register(main, extension)
        main.kubectl("create", "namespace", NS, check=True)
        wait_available(main, "True")
        yield main, extension
    finally:
        if extension is not None:
            extension.stop()
        main.stop()


def post(server, path, body):
    response = server.request("POST", path, json=body, **ADMIN)
    assert response.status_code == 201, response.text
    return response.json()


def ref(obj, block=None):
    owner = {"apiVersion": obj["apiVersion"], "kind": obj["kind"],
             "name": obj["metadata"]["name"], "uid": obj["metadata"]["uid"]}
    if block is not None:
        owner["blockOwnerDeletion"] = block
    return owner


def flunder(server, name, owners=()):
    meta = {"name": name}
    if owners:
        meta["ownerReferences"] = list(owners)
    return post(server, FLUNDERS, {"apiVersion": "wardle.example.com/v1alpha1",
                                   "kind": "Flunder", "metadata": meta, "spec": {}})


def wait_for(check, what, timeout=20.0):
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"{what}: not after {timeout}s"
        time.sleep(0.1)


def status(server, path):
    return server.get(path, **ADMIN).status_code


def test_a_flunder_owned_by_a_configmap_goes_with_it(servers):
    main, extension = servers
    owner = post(main, CM, {"metadata": {"name": "flunder-owner"}})
    flunder(main, "owned", [ref(owner)])
    time.sleep(1.0)
    assert status(main, f"{FLUNDERS}/owned") == 200
    main.kubectl("delete", "configmap", "flunder-owner", "-n", NS, check=True)
    # Deleted through the proxy, on the extension itself.
    wait_for(lambda: status(extension, f"{FLUNDERS}/owned") == 404, "the flunder gone")


def test_a_configmap_owned_by_a_flunder_goes_with_it(servers):
    main, _ = servers
    owner = flunder(main, "owner")
    post(main, CM, {"metadata": {"name": "flunder-dep", "ownerReferences": [ref(owner)]}})
    time.sleep(1.0)
    assert status(main, f"{CM}/flunder-dep") == 200
    main.kubectl("delete", "flunder", "owner", "-n", NS, check=True)
    wait_for(lambda: status(main, f"{CM}/flunder-dep") == 404, "the configmap gone")


def test_a_flunder_deleted_in_the_foreground_waits_then_goes(servers):
    main, extension = servers
    owner = flunder(main, "fg-flunder")
    post(main, CM, {"metadata": {"name": "fg-blocker", "finalizers": ["example.com/hold"],
                                 "ownerReferences": [ref(owner, block=True)]}})
    main.kubectl("delete", "flunder", "fg-flunder", "-n", NS, "--cascade=foreground",
                 "--wait=false", check=True)
    wait_for(lambda: main.get(f"{CM}/fg-blocker", **ADMIN).json()["metadata"].get(
        "deletionTimestamp"), "the blocking dependent deleted")
    meta = main.get(f"{FLUNDERS}/fg-flunder", **ADMIN).json()["metadata"]
    assert meta["finalizers"] == ["foregroundDeletion"]
    main.request("PATCH", f"{CM}/fg-blocker", data=json.dumps(
        {"metadata": {"finalizers": None}}), headers=MERGE, **ADMIN)
    # The collector takes the finalizer off through the proxy: the extension deletes it.
    wait_for(lambda: status(extension, f"{FLUNDERS}/fg-flunder") == 404, "the flunder gone")


def test_the_extension_runs_no_collector_of_its_own(servers):
    _, extension = servers
    line = extension.log().split("controllers: ")[-1].splitlines()[0]
    assert "garbage-collector-controller" not in line
