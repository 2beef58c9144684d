"""The whole built-in API as clients discover it, against kube-apiserver 1.32's own answers:
every ``/openapi/v3`` document and the index, ``/openapi/v2``, legacy and aggregated
discovery of every group and version, and what kubectl makes of them (``api-resources``,
``get all``, ``explain``, ``create --validate``, ``diff``).

The documents are compared byte for byte where kube-apiserver's bytes are known: the v3
documents (their hashes in the index are SHA-512 of the bytes) and aggregated discovery
(its ETag is SHA-512 of the list's JSON).
"""

import base64
import glob
import hashlib
import json
import os

import pytest

from kapiserver.openapi.schemas import go_json
from kapiserver.serialization import dumps_json

ADMIN = dict(user="admin", groups=["system:masters"])
REFERENCE = "/work/shared/reference"
OPENAPI = os.path.join(REFERENCE, "wide", "openapi")

pytestmark = pytest.mark.skipif(not os.path.isdir(OPENAPI), reason="reference transcripts absent")


def _transcript(path: str) -> dict:
    with open(path) as f:
        return json.load(f)


def _v3_transcripts() -> list[str]:
    return sorted(os.path.basename(p) for p in glob.glob(os.path.join(OPENAPI, "v3-*.json")))


def _reference(name: str) -> dict:
    return _transcript(os.path.join(REFERENCE, name))


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    server = KapiserverProcess(str(tmp_path_factory.mktemp("surface")), workers=2).start()
    yield server
    server.stop()


def get(api, path, **kwargs):
    return api.get(path, **ADMIN, **kwargs)


# -- /openapi/v3 ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", _v3_transcripts())
def test_v3_document_is_kube_apiservers_byte_for_byte(api, name):
    exchange = _transcript(os.path.join(OPENAPI, name))
    theirs = exchange["response"]["body"]
    response = get(api, exchange["request"]["path"], headers={"Accept": "application/json"})
    assert response.status_code == 200
    if name == "v3-index.json":
        # Every document kube-apiserver lists, at the same hash: the same bytes.
        assert response.json() == theirs
        return
    assert response.headers["Content-Type"] == "application/json"
    assert response.content == go_json(theirs).encode(), name


def test_v3_index_hashes_are_the_documents_bytes(api):
    paths = get(api, "/openapi/v3").json()["paths"]
    index = _transcript(os.path.join(OPENAPI, "v3-index.json"))["response"]["body"]["paths"]
    for key, entry in index.items():
        document = get(api, entry["serverRelativeURL"])
        assert document.status_code == 200, key
        digest = hashlib.sha512(document.content).hexdigest().upper()
        assert paths[key]["serverRelativeURL"] == f"/openapi/v3/{key}?hash={digest}"
        assert document.headers["Cache-Control"] == "public, immutable"


def test_connect_subresources_are_described_as_upstream_describes_them(api):
    paths = get(api, "/openapi/v3/api/v1").json()["paths"]
    exec_ = paths["/api/v1/namespaces/{namespace}/pods/{name}/exec"]
    assert [m for m in exec_ if m != "parameters"] == ["get", "post"]
    assert exec_["post"]["operationId"] == "connectCoreV1PostNamespacedPodExec"
    assert exec_["post"]["x-kubernetes-action"] == "connect"
    assert exec_["get"]["responses"]["200"]["content"] == {"*/*": {"schema": {"type": "string"}}}
    assert [p["name"] for p in exec_["parameters"]] == [
        "command", "container", "name", "namespace", "stderr", "stdin", "stdout", "tty"]
    proxy = paths["/api/v1/nodes/{name}/proxy/{path}"]
    assert [m for m in proxy if m != "parameters"] == [
        "get", "put", "post", "delete", "options", "head", "patch"]
    assert proxy["head"]["operationId"] == "connectCoreV1HeadNodeProxyWithPath"
    assert [(p["name"], p["in"]) for p in proxy["parameters"]] == [
        ("name", "path"), ("path", "path"), ("path", "query")]
    services = paths["/api/v1/namespaces/{namespace}/services/{name}/proxy"]
    assert services["get"]["x-kubernetes-group-version-kind"]["kind"] == "ServiceProxyOptions"
    log = paths["/api/v1/namespaces/{namespace}/pods/{name}/log"]["get"]
    assert sorted(log["responses"]["200"]["content"]) == [
        "application/json", "application/vnd.kubernetes.protobuf", "application/yaml",
        "text/plain"]


# -- /openapi/v2 ---------------------------------------------------------------------------------

def test_v2_is_kube_apiservers(api):
    exchange = _transcript(os.path.join(OPENAPI, "v2.json"))
    theirs = exchange["response"]["body"]
    # The transcript is the bytes kube-apiserver sent: its ETag is their SHA-512.
    assert hashlib.sha512(go_json(theirs, escape_html=False).encode()).hexdigest().upper() \
        == exchange["response"]["headers"]["etag"].strip('"')
    response = get(api, "/openapi/v2", headers={"Accept": "application/json"})
    assert response.status_code == 200
    assert response.json() == theirs
    # Byte for byte but one thing: kube-aggregator writes the GVK of its own routes
    # (apiregistration.k8s.io) from a Go struct (group, version, kind); every route here
    # is written as kube-apiserver writes its delegates' (keys sorted).
    for path, item in theirs["paths"].items():
        if path.startswith("/apis/apiregistration.k8s.io/"):
            for operation in item.values():
                gvk = operation.get("x-kubernetes-group-version-kind") \
                    if isinstance(operation, dict) else None
                if gvk:
                    operation["x-kubernetes-group-version-kind"] = dict(sorted(gvk.items()))
    assert response.content == go_json(theirs, escape_html=False).encode()


def test_v2_shares_parameters_as_kube_openapi_names_them(api):
    swagger = get(api, "/openapi/v2").json()
    post = swagger["paths"]["/api/v1/namespaces/{namespace}/configmaps"]["post"]
    # kubectl looks for dryRun and fieldValidation inline: they are never shared.
    assert [p.get("name", p.get("$ref")) for p in post["parameters"]] == [
        "body", "dryRun", "#/parameters/fieldManager-Qy4HdaTW", "fieldValidation"]
    assert swagger["parameters"]["pretty-tJGM1-ng"]["name"] == "pretty"


# -- discovery -----------------------------------------------------------------------------------

def _discovery_transcripts() -> list[str]:
    return sorted(os.path.basename(p)
                  for p in glob.glob(os.path.join(REFERENCE, "discovery-*.json")))


@pytest.mark.parametrize("name", _discovery_transcripts())
def test_legacy_discovery_is_kube_apiservers(api, name):
    exchange = _reference(name)
    theirs = exchange["response"]["body"]
    response = get(api, exchange["request"]["path"])
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    ours = response.json()
    if name == "discovery-api.json":
        address = ours["serverAddressByClientCIDRs"][0]["serverAddress"]
        assert address.endswith(f":{api.port}")
        theirs["serverAddressByClientCIDRs"][0]["serverAddress"] = address
    assert response.content == dumps_json(theirs)


@pytest.mark.parametrize("path,name", [("/api", "aggregated-discovery-api.json"),
                                       ("/apis", "aggregated-discovery-apis.json")])
def test_aggregated_discovery_is_kube_apiservers_byte_for_byte(api, path, name):
    exchange = _reference(name)
    response = get(api, path, headers={"Accept": exchange["request"]["accept"]})
    assert response.status_code == 200
    assert response.headers["Content-Type"] == exchange["response"]["headers"]["content-type"]
    assert response.content == dumps_json(exchange["response"]["body"])
    # The ETag is upstream's calculateETag of the same list: equal, so the same bytes.
    assert response.headers["ETag"] == exchange["response"]["headers"]["etag"]
    beta = get(api, path, headers={
        "Accept": "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"})
    assert beta.json()["apiVersion"] == "apidiscovery.k8s.io/v2beta1"
    assert beta.headers["ETag"] == response.headers["ETag"]
    cached = get(api, path, headers={"Accept": exchange["request"]["accept"],
                                     "If-None-Match": response.headers["ETag"]})
    assert (cached.status_code, cached.content) == (304, b"")


def _aggregated_groups() -> list[dict]:
    return (_reference("aggregated-discovery-api.json")["response"]["body"]["items"]
            + _reference("aggregated-discovery-apis.json")["response"]["body"]["items"])


def storage_version_hash(group: str, version: str, kind: str) -> str:
    """``discovery.StorageVersionHash``."""
    digest = hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


#: Kinds kube-apiserver stores in another version than the one served, and so hashes.
STORED_AS = {("events.k8s.io", "v1", "Event"): ("", "v1", "Event"),
             ("autoscaling", "v1", "HorizontalPodAutoscaler"):
                 ("autoscaling", "v2", "HorizontalPodAutoscaler"),
             ("apiextensions.k8s.io", "v1", "CustomResourceDefinition"):
                 ("apiextensions.k8s.io", "v1beta1", "CustomResourceDefinition")}
#: Resources that are not stored (no storageVersionHash).
NOT_STORED = {"bindings", "componentstatuses", "tokenreviews", "selfsubjectreviews",
              "localsubjectaccessreviews", "selfsubjectaccessreviews",
              "selfsubjectrulesreviews", "subjectaccessreviews"}


def legacy_resources(group: str, version: dict) -> list[dict]:
    """The ``APIResourceList`` entries upstream serves for an aggregated discovery version."""
    out = []
    for entry in version["resources"]:
        kind = entry["responseKind"]
        resource = {"name": entry["resource"], "singularName": entry["singularResource"],
                    "namespaced": entry["scope"] == "Namespaced", "kind": kind["kind"],
                    "verbs": entry["verbs"]}
        for key in ("shortNames", "categories"):
            if key in entry:
                resource[key] = entry[key]
        if entry["resource"] not in NOT_STORED:
            gvk = (group, version["version"], kind["kind"])
            resource["storageVersionHash"] = storage_version_hash(*STORED_AS.get(gvk, gvk))
        out.append(resource)
        for sub in entry.get("subresources", ()):
            kind = sub["responseKind"]
            item = {"name": f"{entry['resource']}/{sub['subresource']}", "singularName": "",
                    "namespaced": entry["scope"] == "Namespaced"}
            if kind.get("group") or kind.get("version"):
                item.update(group=kind["group"], version=kind["version"])
            item.update(kind=kind["kind"], verbs=sub["verbs"])
            out.append(item)
    return sorted(out, key=lambda r: r["name"])


def test_every_group_and_version_document_is_upstreams(api):
    listed = _reference("discovery-apis.json")["response"]["body"]["groups"]
    groups = {group["name"]: group for group in listed}
    for item in _aggregated_groups():
        name = item["metadata"].get("name", "")
        if name:
            response = get(api, f"/apis/{name}")
            assert response.json() == {"kind": "APIGroup", "apiVersion": "v1", **groups[name]}
        for version in item["versions"]:
            gv = f"{name}/{version['version']}" if name else version["version"]
            response = get(api, f"/apis/{gv}" if name else f"/api/{gv}")
            assert response.status_code == 200, gv
            ours = response.json()
            assert ours["groupVersion"] == gv
            ours_by_name = sorted(ours["resources"], key=lambda r: r["name"])
            assert ours_by_name == legacy_resources(name, version), gv


# -- kubectl -------------------------------------------------------------------------------------

def tabwriter(rows: list[list[str]]) -> str:
    """kubectl's table: Go's tabwriter (padding 3) over tab-separated cells, the last cell
    of each line not aligned."""
    widths = [max(len(row[i]) for row in rows) + 3 for i in range(len(rows[0]) - 1)]
    return "".join("".join(cell.ljust(width) for cell, width in zip(row, widths)) + row[-1]
                   + "\n" for row in rows)


def preferred_resources() -> list[tuple[str, str, dict]]:
    """``ServerPreferredResources``: each group's resources in its most preferred version,
    kubectl's api-resources order (stably sorted by group)."""
    rows = []
    for item in _aggregated_groups():
        group = item["metadata"].get("name", "")
        seen = set()
        for version in item["versions"]:
            for entry in version["resources"]:
                if entry["resource"] not in seen:
                    seen.add(entry["resource"])
                    rows.append((group, version["version"], entry))
    return sorted(rows, key=lambda row: row[0])


def test_kubectl_api_resources_prints_what_it_prints_against_kube_apiserver(api):
    rows, wide = [["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]], []
    wide.append(rows[0] + ["VERBS", "CATEGORIES"])
    for group, version, entry in preferred_resources():
        row = [entry["resource"], ",".join(entry.get("shortNames", ())),
               f"{group}/{version}" if group else version,
               "true" if entry["scope"] == "Namespaced" else "false",
               entry["responseKind"]["kind"]]
        rows.append(row)
        wide.append(row + [",".join(entry["verbs"]), ",".join(entry.get("categories", ()))])
    assert api.kubectl("api-resources", check=True).stdout == tabwriter(rows)
    assert api.kubectl("api-resources", "-o", "wide", check=True).stdout == tabwriter(wide)
    names = api.kubectl("api-resources", "--api-group=apps", "-o", "name", check=True).stdout
    assert names.split() == ["controllerrevisions.apps", "daemonsets.apps", "deployments.apps",
                             "replicasets.apps", "statefulsets.apps"]


WORKLOADS = """
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers: [{name: web, image: nginx}]
---
apiVersion: v1
kind: ReplicationController
metadata: {name: web}
spec:
  selector: {app: web}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  ports: [{port: 80}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web}
spec:
  serviceName: web
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 3
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: web}
spec:
  schedule: "*/5 * * * *"
  jobTemplate:
    spec:
      template:
        spec: {restartPolicy: Never, containers: [{name: web, image: nginx}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: web}
spec:
  template:
    spec: {restartPolicy: Never, containers: [{name: web, image: nginx}]}
"""


def test_kubectl_get_all_lists_the_kinds_of_the_all_category(api):
    api.kubectl("create", "namespace", "all-kinds", check=True)
    api.kubectl("create", "-n", "all-kinds", "-f", "-", input=WORKLOADS, check=True)
    # The category's resources in discovery order, as kubectl expands "all".
    expected = []
    for item in _aggregated_groups():
        group = item["metadata"].get("name", "")
        for entry in item["versions"][0]["resources"]:
            if "all" in entry.get("categories", ()):
                expected.append(f"{entry['singularResource']}{'.' + group if group else ''}/web")
    assert len(expected) == 10
    listed = api.kubectl("get", "all", "-n", "all-kinds", "-o", "name", check=True).stdout
    assert listed.split() == expected
    table = api.kubectl("get", "all", "-n", "all-kinds", check=True).stdout
    assert "deployment.apps/web" in table and "horizontalpodautoscaler.autoscaling/web" in table


def test_kubectl_explain_reads_upstream_field_docs(api):
    strategy = api.kubectl("explain", "deployment.spec.strategy", check=True).stdout
    assert strategy.startswith("GROUP:      apps\nKIND:       Deployment\nVERSION:    v1\n")
    assert "FIELD: strategy <DeploymentStrategy>" in strategy
    assert "The deployment strategy to use to replace existing pods with new ones." in strategy
    assert "rollingUpdate\t<RollingUpdateDeployment>" in strategy
    assert "type\t<string>\n  enum: Recreate, RollingUpdate" in strategy
    resources = api.kubectl("explain", "pod.spec.containers.resources", check=True).stdout
    assert "FIELD: resources <ResourceRequirements>" in resources
    assert "Compute Resources required by this container. Cannot be updated." in resources
    for field in ("claims\t<[]ResourceClaim>", "limits\t<map[string]Quantity>",
                  "requests\t<map[string]Quantity>"):
        assert field in resources


def test_kubectl_explain_recursive_and_from_openapi_v2(api):
    recursive = api.kubectl("explain", "deployment.spec.strategy", "--recursive",
                            check=True).stdout
    assert "  rollingUpdate\t<RollingUpdateDeployment>\n    maxSurge\t<IntOrString>\n" \
           "    maxUnavailable\t<IntOrString>\n  type\t<string>\n" in recursive
    v2 = api.kubectl("explain", "deployment.spec.strategy",
                     "--output=plaintext-openapiv2", check=True).stdout
    assert v2.startswith("KIND:     Deployment\nVERSION:  apps/v1\n")
    assert "RESOURCE: strategy <Object>" in v2
    assert "rollingUpdate\t<Object>" in v2
    hpa = api.kubectl("explain", "hpa.spec.metrics.resource.target", "--recursive",
                      check=True).stdout
    assert "averageUtilization\t<integer>" in hpa and "type\t<string> -required-" in hpa


def test_kubectl_explains_every_preferred_kind(api):
    for group, version, entry in preferred_resources():
        api_version = f"{group}/{version}" if group else version
        result = api.kubectl("explain", entry["resource"], "--api-version", api_version)
        assert result.returncode == 0, (entry["resource"], api_version, result.stderr)
        assert f"KIND:       {entry['responseKind']['kind']}\n" in result.stdout, api_version
        assert "\nFIELDS:\n" in result.stdout and "metadata\t<ObjectMeta>" in result.stdout


def test_kubectl_validates_and_diffs_with_the_schemas(api):
    api.kubectl("create", "namespace", "validate", check=True)
    bad = WORKLOADS.split("---")[4].replace("replicas", "x").replace(
        "selector:", "selectr: {}\n  selector:")
    result = api.kubectl("create", "-n", "validate", "--dry-run=server", "--validate=strict",
                         "-f", "-", input=bad)
    assert result.returncode != 0
    assert 'unknown field "spec.selectr"' in result.stderr
    deployment = WORKLOADS.split("---")[4]
    api.kubectl("apply", "-n", "validate", "-f", "-", input=deployment, check=True)
    diff = api.kubectl("diff", "-n", "validate", "-f", "-",
                       input=deployment.replace("image: nginx", "image: nginx:1.27"))
    assert diff.returncode == 1, diff.stderr
    assert "-      - image: nginx\n" in diff.stdout
    assert "+      - image: nginx:1.27\n" in diff.stdout


# -- what the documents promise ----------------------------------------------------------------

KINDS = os.path.join(REFERENCE, "wide", "kinds")


def _documented_deletes() -> list[tuple[str, str, str]]:
    """``(create transcript, item path, what DELETE is documented to answer)`` for every
    kind whose minimal object kube-apiserver was sent."""
    out = []
    for name in sorted(glob.glob(os.path.join(OPENAPI, "v3-ap*_v*.json"))):
        for path, item in _transcript(name)["response"]["body"]["paths"].items():
            delete = item.get("delete")
            resource = path.rsplit("/", 2)[-2]
            create = os.path.join(KINDS, f"{resource}-create.json")
            if not delete or not path.endswith("/{name}") or "/watch/" in path or \
                    not os.path.exists(create):
                continue
            schema = delete["responses"]["200"]["content"]["application/json"]["schema"]
            out.append((os.path.basename(create), path, schema["$ref"].rsplit(".", 1)[-1]))
    return out


@pytest.mark.parametrize("create,path,answer", _documented_deletes())
def test_delete_answers_what_openapi_documents(api, create, path, answer):
    """A DELETE answers the object where upstream's store has ``ReturnDeletedObject`` (and
    its OpenAPI says so), a Status elsewhere: clients decode it by the document.

    A delete that leaves the object waiting for finalizers answers the object whatever the
    document says, as upstream's store does: batch/v1 Jobs and v1 ReplicationControllers
    orphan their dependents by default, so a DELETE without options answers the Job with
    the ``orphan`` finalizer; with ``propagationPolicy: Background`` it is gone at once."""
    exchange = _transcript(os.path.join(KINDS, create))
    namespace = "deletes"
    get(api, "/api/v1/namespaces")  # warm up
    api.request("POST", "/api/v1/namespaces", json={
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}, **ADMIN)
    collection = exchange["request"]["path"].split("?")[0].replace(
        "/namespaces/ref-069ea7/", f"/namespaces/{namespace}/")
    created = api.request("POST", collection, json=exchange["request"]["body"], **ADMIN)
    assert created.status_code == 201, created.text
    name = created.json()["metadata"]["name"]
    deleted = api.request("DELETE", f"{collection}/{name}", json={
        "kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"},
        **ADMIN)
    assert deleted.status_code in (200, 202), deleted.text
    assert deleted.json()["kind"] == answer, path
    if answer != "Status":
        assert deleted.json()["metadata"]["name"] == name


@pytest.mark.parametrize("create,kind", [("jobs-create.json", "Job"),
                                         ("replicationcontrollers-create.json",
                                          "ReplicationController")])
def test_a_delete_that_orphans_by_default_answers_the_waiting_object(api, create, kind):
    exchange = _transcript(os.path.join(KINDS, create))
    api.request("POST", "/api/v1/namespaces", json={
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "orphans"}}, **ADMIN)
    collection = exchange["request"]["path"].split("?")[0].replace(
        "/namespaces/ref-069ea7/", "/namespaces/orphans/")
    created = api.request("POST", collection, json=exchange["request"]["body"], **ADMIN)
    assert created.status_code == 201, created.text
    name = created.json()["metadata"]["name"]
    deleted = api.request("DELETE", f"{collection}/{name}", **ADMIN)
    assert deleted.status_code == 200, deleted.text
    body = deleted.json()
    assert body["kind"] == kind and body["metadata"]["name"] == name
    assert body["metadata"]["finalizers"] == ["orphan"]
    assert body["metadata"]["deletionTimestamp"]


def _masked(value, key=""):
    """``value`` with what differs between any two servers (uids, revisions, times) masked."""
    if isinstance(value, dict):
        return {k: _masked(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    if key in ("uid", "resourceVersion", "creationTimestamp", "time", "lastTransitionTime"):
        return "<volatile>"
    return value


def test_every_built_in_group_version_has_its_apiservice(api):
    """One local APIService per group version served, with upstream's priorities, available
    from its creation (one managedFields entry: the registration's)."""
    theirs = _reference("apiservices.json")["response"]["body"]
    response = get(api, "/apis/apiregistration.k8s.io/v1/apiservices")
    assert _masked(response.json()) == _masked(theirs)
    # Every group version but the aggregator's own (it registers no APIService for itself).
    served = {f"{v}." if not g else f"{v}.{g}"
              for g, v in ((item["metadata"].get("name", ""), version["version"])
                           for item in _aggregated_groups() for version in item["versions"])
              if g != "apiregistration.k8s.io"}
    assert {item["metadata"]["name"] for item in theirs["items"]} == served
