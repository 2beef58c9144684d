"""Never a 500 for bad input: generated requests to every operation of a real server.

Every operation of every group version's ``/openapi/v3`` document gets requests of three
families (``cases``): what the schema describes, broken bodies, odd query parameters and
``Accept`` headers. No answer may be a 5xx, carry a traceback or be an error that is no
``Status``; the server logs no traceback; objects in a witness namespace the fuzzer never
names, and cluster-scoped witnesses, are byte for byte what they were; the dry-run-only
kinds hold what they held; ``/readyz`` still passes.

The budget is examples per operation and family (``conftest``): CI's is small and fixed
(a derandomized run); ``KAPISERVER_FUZZ_EXAMPLES=50`` runs longer, drawing anew.
"""

from __future__ import annotations

import json
import os
import pathlib
import time

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from kapiserver.testing import KapiserverProcess

from . import cases
from .client import Client, describe, problems
from .openapi import Document, operations

WITNESS_NAMESPACE = "fuzz-witness"
WITNESS_NAME = "fuzz-witness"
REFERENCE_KINDS = pathlib.Path("/work/shared/reference/wide/kinds")
LABELS = {"app": "web", "fuzz": "seed"}


def _pod_spec(**extra):
    return {"containers": [{"name": "app", "image": "nginx:1.27"}], **extra}


def _template():
    return {"metadata": {"labels": {"app": "web"}}, "spec": _pod_spec()}


#: The objects made before the run, in the fuzzer's namespace (its seeds, named
#: ``cases.SEED_NAME``) and in the witness namespace: (collection path, body).
NAMESPACED = [
    ("/api/v1/namespaces/{ns}/configmaps", {"apiVersion": "v1", "kind": "ConfigMap",
                                            "data": {"a": "1"}}),
    ("/api/v1/namespaces/{ns}/secrets", {"apiVersion": "v1", "kind": "Secret",
                                         "stringData": {"k": "v"}}),
    ("/api/v1/namespaces/{ns}/serviceaccounts", {"apiVersion": "v1",
                                                 "kind": "ServiceAccount"}),
    ("/api/v1/namespaces/{ns}/services", {"apiVersion": "v1", "kind": "Service", "spec": {
        "selector": {"app": "web"}, "ports": [{"port": 80}]}}),
    ("/api/v1/namespaces/{ns}/pods", {"apiVersion": "v1", "kind": "Pod",
                                      "spec": _pod_spec()}),
    ("/api/v1/namespaces/{ns}/replicationcontrollers", {
        "apiVersion": "v1", "kind": "ReplicationController",
        "spec": {"replicas": 1, "selector": {"app": "web"}, "template": _template()}}),
    ("/api/v1/namespaces/{ns}/persistentvolumeclaims", {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "spec": {
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}),
    ("/apis/apps/v1/namespaces/{ns}/deployments", {
        "apiVersion": "apps/v1", "kind": "Deployment", "spec": {
            "selector": {"matchLabels": {"app": "web"}}, "template": _template()}}),
    ("/apis/apps/v1/namespaces/{ns}/statefulsets", {
        "apiVersion": "apps/v1", "kind": "StatefulSet", "spec": {
            "serviceName": "web", "selector": {"matchLabels": {"app": "web"}},
            "template": _template()}}),
    ("/apis/batch/v1/namespaces/{ns}/cronjobs", {
        "apiVersion": "batch/v1", "kind": "CronJob", "spec": {
            "schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {
                "spec": _pod_spec(restartPolicy="Never")}}}}}),
    ("/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets", {
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "spec": {
            "minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}}),
    ("/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers", {
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                               "name": "fuzz-a"}, "maxReplicas": 3}}),
    ("/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "rules": [
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}),
    ("/apis/coordination.k8s.io/v1/namespaces/{ns}/leases", {
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "spec": {"holderIdentity": "fuzz"}}),
    ("/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies", {
        "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
        "spec": {"podSelector": {}}}),
    ("/apis/events.k8s.io/v1/namespaces/{ns}/events", {
        "apiVersion": "events.k8s.io/v1", "kind": "Event", "eventTime":
            "2024-01-02T03:04:05.000000Z", "reportingController": "fuzz/x",
        "reportingInstance": "fuzz", "action": "Fuzz", "reason": "Fuzz", "type": "Normal",
        "regarding": {"kind": "Pod", "namespace": "{ns}", "name": "fuzz-a"}}),
]
CLUSTER = [
    ("/apis/scheduling.k8s.io/v1/priorityclasses", {
        "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "value": 1000}),
    ("/apis/rbac.authorization.k8s.io/v1/clusterroles", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "rules": [
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}),
    ("/apis/storage.k8s.io/v1/storageclasses", {
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "provisioner": "example.com/fuzz"}),
    ("/apis/node.k8s.io/v1/runtimeclasses", {
        "apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "handler": "fuzz"}),
    ("/api/v1/persistentvolumes", {
        "apiVersion": "v1", "kind": "PersistentVolume", "spec": {
            "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": "/tmp/fuzz"}}}),
]
#: Kinds only ever written with dryRun=All: what they list must not change.
DRY_RUN_COLLECTIONS = [
    "/api/v1/nodes", "/apis/apiregistration.k8s.io/v1/apiservices",
    "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
    "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
    "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
    "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
    "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas",
    "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations",
]


def _named(body: dict, name: str, labels=None) -> dict:
    return {**body, "metadata": {"name": name, "labels": dict(labels or LABELS)}}


class Fuzz:
    """The server under test and what the fuzzer knows of it."""

    def __init__(self, server: KapiserverProcess):
        self.server = server
        self.client = Client(server)
        self.documents: list[Document] = []
        self.seeds = cases.Seeds()
        self.witnesses: dict[str, dict] = {}
        self.dry_run_names: dict[str, list[str]] = {}
        self.log_offset = 0

    def create(self, collection: str, body: dict) -> dict:
        response = self.client.json("POST", collection, body)
        if response.status_code == 403 and "serviceaccount" in response.text:
            time.sleep(0.5)  # the namespace's default ServiceAccount is on its way
            response = self.client.json("POST", collection, body)
        assert response.status_code == 201, (collection, response.status_code, response.text)
        return response.json()

    def setup(self) -> None:
        for namespace in (cases.FUZZ_NAMESPACE, WITNESS_NAMESPACE, cases.CONNECT_NAMESPACE):
            self.create("/api/v1/namespaces", _named({"apiVersion": "v1", "kind": "Namespace"},
                                                     namespace))
        for collection, body in NAMESPACED:
            for namespace, name in ((cases.FUZZ_NAMESPACE, cases.SEED_NAME),
                                    (WITNESS_NAMESPACE, WITNESS_NAME)):
                body = json.loads(json.dumps(body).replace("{ns}", namespace))
                self.create(collection.format(ns=namespace), _named(body, name))
        for collection, body in CLUSTER:
            for name in (cases.SEED_NAME, WITNESS_NAME):
                self.create(collection, _named(body, name))
        pods = f"/api/v1/namespaces/{cases.CONNECT_NAMESPACE}/pods"
        self.create(pods, _named({"apiVersion": "v1", "kind": "Pod", "spec": _pod_spec()},
                                 "unscheduled"))
        self.create(pods, _named({"apiVersion": "v1", "kind": "Pod",
                                  "spec": _pod_spec(nodeName="absent-node")}, "bound"))
        self.load_documents()
        self.load_seeds()
        self.witnesses = self.read_witnesses()
        self.dry_run_names = self.read_dry_run_names()
        with open(self.server.log_file, "rb") as f:
            self.log_offset = len(f.read())

    def load_documents(self) -> None:
        index = self.client.json("GET", "/openapi/v3").json()["paths"]
        for name, entry in sorted(index.items()):
            response = self.client.json("GET", entry["serverRelativeURL"])
            assert response.status_code == 200, (name, response.text[:300])
            self.documents.append(Document(name, response.json()))

    def load_seeds(self) -> None:
        """Stored objects of each kind the server lists (a few), and the create bodies
        of the reference transcripts when they are there."""
        found = self.seeds.objects
        for document in self.documents:
            for op in operations(document):
                if op.action != "list" or op.namespaced:
                    continue
                response = self.client.json("GET", op.path, limit="3")
                if response.status_code != 200:
                    continue
                listing = response.json()
                self.seeds.resource_version = listing["metadata"].get(
                    "resourceVersion") or self.seeds.resource_version
                if listing["metadata"].get("continue"):
                    self.seeds.continue_token = listing["metadata"]["continue"]
                kind = listing.get("kind", "").removesuffix("List")
                for item in listing.get("items") or ():
                    item.pop("status", None)
                    found.setdefault((listing.get("apiVersion"), kind), []).append(item)
        if REFERENCE_KINDS.is_dir():
            for path in sorted(REFERENCE_KINDS.glob("*-create.json")):
                body = json.loads(path.read_text()).get("request", {}).get("body")
                if isinstance(body, dict) and body.get("kind") and body.get("apiVersion"):
                    found.setdefault((body["apiVersion"], body["kind"]), []).append(body)

    def witness_paths(self) -> list[str]:
        paths = [f"{c.format(ns=WITNESS_NAMESPACE)}/{WITNESS_NAME}" for c, _ in NAMESPACED]
        paths += [f"{c}/{WITNESS_NAME}" for c, _ in CLUSTER]
        return paths + [f"/api/v1/namespaces/{WITNESS_NAMESPACE}"]

    def read_witnesses(self) -> dict[str, dict]:
        read = {}
        for path in self.witness_paths():
            response = self.client.json("GET", path)
            read[path] = response.json() if response.status_code == 200 else response.text
        return read

    def read_dry_run_names(self) -> dict[str, list[str]]:
        return {path: sorted(item["metadata"]["name"]
                             for item in self.client.json("GET", path).json()["items"])
                for path in DRY_RUN_COLLECTIONS}

    def operations(self):
        for document in self.documents:
            yield from operations(document)

    def new_log(self) -> str:
        with open(self.server.log_file, "rb") as f:
            return f.read()[self.log_offset:].decode("utf-8", "replace")


@pytest.fixture(scope="module")
def fuzz(tmp_path_factory):
    server = KapiserverProcess(str(tmp_path_factory.mktemp("fuzz")), workers=1).start()
    state = Fuzz(server)
    try:
        state.setup()
        yield state
    finally:
        state.client.close()
        server.stop()


def fuzz_settings(examples: int):
    seed = os.environ.get("KAPISERVER_FUZZ_SEED")
    derandomize = examples <= _ci_examples() and not seed
    # Shrinking resends a failing request hundreds of times (minutes per operation):
    # only on demand, KAPISERVER_FUZZ_SHRINK=1. A finding names its request either way.
    phases = [Phase.explicit, Phase.generate]
    if os.environ.get("KAPISERVER_FUZZ_SHRINK"):
        phases.append(Phase.shrink)
    return settings(max_examples=examples, deadline=None, database=None,
                    derandomize=derandomize, report_multiple_bugs=False, print_blob=False,
                    suppress_health_check=list(HealthCheck), phases=phases)


def _ci_examples() -> int:
    from .conftest import CI_EXAMPLES

    return CI_EXAMPLES


UNDOCUMENTED_METHODS = ("GET", "PUT", "POST", "PATCH", "DELETE", "OPTIONS", "TRACE")


class Finding(AssertionError):
    pass


def run_family(fuzz: Fuzz, family, examples: int, select=lambda op: True) -> list[str]:
    """Send ``examples`` cases of ``family`` to every selected operation; return the
    findings, one per operation (its smallest failing case, as Hypothesis shrank it)."""
    findings = []
    seed = os.environ.get("KAPISERVER_FUZZ_SEED")
    for op in fuzz.operations():
        if not select(op):
            continue

        @fuzz_settings(examples)
        @given(family(op, fuzz.seeds))
        def check(case):
            try:
                answer = fuzz.client.send(case)
            except Exception as err:  # no answer at all: the server hung or hung up
                raise Finding(describe(case, None, [f"no answer: {err!r}"])) from None
            found = problems(case, answer)
            if found:
                raise Finding(describe(case, answer, found))

        if seed:
            from hypothesis import seed as fix_seed

            check = fix_seed(int(seed))(check)
        try:
            check()
        except Finding as finding:
            findings.append(f"{op}: {finding}")
    return findings


def test_every_group_version_has_a_document(fuzz):
    """``/openapi/v3`` lists every group version discovery serves."""
    served = {doc.name for doc in fuzz.documents}
    versions = fuzz.client.json("GET", "/api").json()["versions"]
    groups = fuzz.client.json("GET", "/apis").json()["groups"]
    wanted = {f"api/{v}" for v in versions} | {
        f"apis/{version['groupVersion']}" for group in groups for version in group["versions"]}
    assert wanted <= served, sorted(wanted - served)
    assert sum(1 for _ in fuzz.operations()) > 500


def test_schema_requests(fuzz, fuzz_examples):
    """Requests as the documents describe them, bodies following the schemas."""
    findings = run_family(fuzz, cases.schema_case, fuzz_examples)
    assert not findings, "\n\n".join(findings)


def test_broken_bodies(fuzz, fuzz_examples):
    """Bodies that break the schema, the JSON grammar or the protobuf framing."""
    findings = run_family(fuzz, cases.broken_case, fuzz_examples,
                          lambda op: op.method in cases.WRITES)
    assert not findings, "\n\n".join(findings)


def test_odd_parameters_and_accept_headers(fuzz, fuzz_examples):
    """Odd selectors, limits, continue tokens, resourceVersions, timeouts, options, and
    odd ``Accept`` headers, on every operation."""
    findings = run_family(fuzz, cases.odd_case, fuzz_examples)
    assert not findings, "\n\n".join(findings)


def test_methods_no_operation_has(fuzz, fuzz_examples):
    """A method a path does not serve is a 405 (or 404) ``Status``, never a stream or a
    5xx. In CI each path gets one such method (taking turns); a larger budget, all."""
    findings, turn = [], 0
    for document in fuzz.documents:
        for path, item in (document.body.get("paths") or {}).items():
            values = {"namespace": cases.FUZZ_NAMESPACE, "name": "fuzz-missing", "path": ""}
            if any(s in path for s in ("/proxy", "/exec", "/attach", "/portforward", "/log")):
                values["namespace"], values["name"] = cases.CONNECT_NAMESPACE, "absent"
            url = path
            for key, value in values.items():
                url = url.replace("{" + key + "}", value)
            missing = [m for m in UNDOCUMENTED_METHODS if m.lower() not in item]
            if fuzz_examples <= _ci_examples() and missing:
                turn += 1
                missing = [missing[turn % len(missing)]]
            for method in missing:
                case = cases.Case(method, url, [("dryRun", "All")] if method != "GET" else [],
                                  {"Content-Type": cases.JSON}, b"{}")
                try:
                    answer = fuzz.client.send(case)
                except Exception as err:  # no answer at all
                    findings.append(describe(case, None, [f"no answer: {err!r}"]))
                    continue
                found = problems(case, answer)
                if answer.status < 400 and method != "OPTIONS" and url.startswith("/api"):
                    found.append(f"{method} is not documented but answered {answer.status}")
                if found:
                    findings.append(describe(case, answer, found))
    assert not findings, "\n\n".join(findings)


def test_stored_objects_unchanged_and_server_healthy(fuzz):
    """After the run: the witnesses are as they were, the dry-run-only kinds hold what
    they held, ``/readyz`` passes, and the server logged no traceback."""
    assert fuzz.read_witnesses() == fuzz.witnesses
    assert fuzz.read_dry_run_names() == fuzz.dry_run_names
    ready = fuzz.client.json("GET", "/readyz")
    assert ready.status_code == 200, ready.text
    log = fuzz.new_log()
    assert "Traceback" not in log and "panic serving" not in log, log[-20000:]
