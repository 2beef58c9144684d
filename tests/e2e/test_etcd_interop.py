"""kapiserver on an etcd that kube-apiserver wrote: the values captured from kube-apiserver
1.32's etcd (protobuf for built-in kinds, JSON for CRDs, APIServices and custom resources)
are loaded into a real etcd, and kapiserver serves them; what kapiserver writes there is
JSON in the storage version kube-apiserver's decoder reads."""

import base64
import json
import os

import pytest

from kapiserver.etcdtesting import etcd_available

pytestmark = pytest.mark.skipif(not etcd_available(), reason="etcd is not installed")
pyetcd = pytest.importorskip("pyetcd", reason="the etcd extra is not installed")

ADMIN = dict(user="admin", groups=["system:masters"])
WIDE_ETCD = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "reference",
                         "wide", "etcd")


def captures() -> list[dict]:
    if not os.path.isdir(WIDE_ETCD):
        pytest.skip("no capture of kube-apiserver's etcd (../shared/reference/wide/etcd)")
    found = []
    for name in sorted(os.listdir(WIDE_ETCD)):
        if name.endswith(".json"):
            with open(os.path.join(WIDE_ETCD, name)) as f:
                found.append(json.load(f))
    return found


def stored_object(capture: dict) -> dict:
    value = base64.b64decode(capture["value_base64"])
    if capture["format"] == "protobuf":
        from kapiserver.runtime.protobuf import decode

        return decode(value)
    return json.loads(value)


#: The REST path of each captured key's object.
def rest_path(obj: dict, key: str) -> str:
    from kapiserver.registry.builtin import resources

    meta = obj["metadata"]
    group, _, version = obj["apiVersion"].rpartition("/")
    parts = key.split("/")
    if obj["kind"] == "CustomResourceDefinition":
        return f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{meta['name']}"
    if group == "capture.example.com":
        resource = parts[3]
    else:
        resource = next(r for g, v, r in resources() if g == group and v == version and
                        "/" not in r and _kind(g, v, r) == obj["kind"])
    base = f"/apis/{group}/{version}" if group else f"/api/{version}"
    if meta.get("namespace"):
        return f"{base}/namespaces/{meta['namespace']}/{resource}/{meta['name']}"
    return f"{base}/{resource}/{meta['name']}"


def _kind(group, version, resource):
    from kapiserver.registry.builtin import resource_info

    return resource_info(group, version, resource)["kind"]


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    """A fresh etcd holding what kube-apiserver wrote, and kapiserver started on it."""
    from kapiserver.etcdtesting import EtcdProcess
    from kapiserver.testing import KapiserverProcess

    workdir = tmp_path_factory.mktemp("interop")
    etcd = EtcdProcess(str(workdir / "etcd")).start()
    # Each thing started is stopped whatever fails after it (an etcd was left running).
    try:
        raw = pyetcd.client(host="127.0.0.1", port=etcd.client_port)
        try:
            for capture in captures():
                raw.put(capture["key"], base64.b64decode(capture["value_base64"]))
            server = KapiserverProcess(str(workdir / "kapiserver"), {
                "storage-backend": "etcd3", "etcd-servers": [etcd.url]}, workers=2)
            try:
                server.start(60)
                yield server, raw
            finally:
                server.stop()
        finally:
            raw.close()
    finally:
        etcd.stop()


def test_every_captured_object_is_served(loaded):
    server, _ = loaded
    for capture in captures():
        obj = stored_object(capture)
        if obj["kind"] == "APIService":
            path = f"/apis/apiregistration.k8s.io/v1/apiservices/{obj['metadata']['name']}"
        else:
            path = rest_path(obj, capture["key"])
        if obj["kind"] == "Gadget":
            server.wait_established("gadgets.capture.example.com", timeout=30)
        answer = server.get(path, **ADMIN)
        assert answer.status_code == 200, (capture["key"], answer.text)
        served = answer.json()
        assert served["metadata"]["uid"] == obj["metadata"]["uid"], capture["key"]
        # Objects kapiserver's own controllers reconcile (the aggregated admin role's rules,
        # bootstrap objects) or whose spec it defaults further are compared by uid only.
        for field in ("data", "rules", "spec"):
            if field in obj and obj["kind"] in ("ConfigMap", "Secret", "Role", "Namespace",
                                                "PriorityClass"):
                assert served[field] == obj[field], (capture["key"], field)
        # Never modified since kube-apiserver wrote it: its revision is the mod_revision.
        if obj["kind"] in ("ConfigMap", "Secret", "Role", "Pod", "Deployment", "Job"):
            _, meta = loaded[1].get(capture["key"])
            assert served["metadata"]["resourceVersion"] == str(meta.mod_revision)


def test_a_crd_kube_apiserver_stored_as_v1beta1_is_served_as_v1(loaded):
    server, _ = loaded
    crd = server.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                     "gadgets.capture.example.com", **ADMIN).json()
    assert crd["apiVersion"] == "apiextensions.k8s.io/v1"
    assert "validation" not in crd["spec"] and "version" not in crd["spec"]
    assert crd["spec"]["versions"][0]["schema"] == {
        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    gadget = server.get("/apis/capture.example.com/v1/namespaces/etcdcap/gadgets/g1",
                        **ADMIN).json()
    assert gadget["kind"] == "Gadget" and gadget["metadata"]["name"] == "g1"


def test_kubectl_lists_them(loaded):
    server, _ = loaded
    listed = server.kubectl("get", "configmaps,secrets,deployments,jobs,roles", "-n", "etcdcap",
                            "-o", "name")
    assert listed.returncode == 0, listed.stderr
    assert set(listed.stdout.split()) >= {
        "configmap/cm1", "secret/s1", "deployment.apps/d1", "job.batch/j1",
        "role.rbac.authorization.k8s.io/r1"}


def test_what_kapiserver_writes_is_json_in_the_storage_version(loaded):
    server, raw = loaded
    before = {c["key"]: stored_object(c) for c in captures()}
    patched = server.request("PATCH", "/api/v1/namespaces/etcdcap/configmaps/cm1",
                             headers={"Content-Type": "application/merge-patch+json"},
                             json={"data": {"written-by": "kapiserver"}}, **ADMIN)
    assert patched.status_code == 200, patched.text
    created = server.kubectl("create", "deployment", "d2", "-n", "etcdcap", "--image=nginx")
    assert created.returncode == 0, created.stderr
    for key, kind, api_version in (
            ("/registry/configmaps/etcdcap/cm1", "ConfigMap", "v1"),
            ("/registry/deployments/etcdcap/d2", "Deployment", "apps/v1")):
        value, _ = raw.get(key)
        obj = json.loads(value)  # JSON: kube-apiserver's storage decoder reads it
        assert (obj["kind"], obj["apiVersion"]) == (kind, api_version)
        assert "resourceVersion" not in obj["metadata"]
    cm = json.loads(raw.get("/registry/configmaps/etcdcap/cm1")[0])
    assert cm["data"] == {**before["/registry/configmaps/etcdcap/cm1"]["data"],
                          "written-by": "kapiserver"}
    assert cm["metadata"]["uid"] == before["/registry/configmaps/etcdcap/cm1"]["metadata"]["uid"]
