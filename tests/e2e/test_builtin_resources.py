"""Built-in resources end to end: secrets, serviceaccounts, events (both APIs), endpoints,
services with cluster IP allocation, and leases, with kubectl and the Python client."""

import base64
import concurrent.futures
import ipaddress
import json
import subprocess
import sys

import pytest

from kapiserver.testing import assert_status

ADMIN = dict(user="admin", groups=["system:masters"])
NS = "/api/v1/namespaces/default"
CONFIG_KEY_MSG = ("a valid config key must consist of alphanumeric characters, '-', '_' or "
                  "'.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for "
                  "validation is '[-._a-zA-Z0-9]+')")


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    server = KapiserverProcess(str(tmp_path_factory.mktemp("builtin")), workers=2).start()
    yield server
    server.stop()


def post(api, path, body, **kwargs):
    return api.request("POST", path, json=body, **ADMIN, **kwargs)


def put(api, path, body):
    return api.request("PUT", path, json=body, **ADMIN)


def b64(data: bytes | str) -> str:
    return base64.b64encode(data.encode() if isinstance(data, str) else data).decode()


def table(api, path: str) -> dict:
    return api.get(path, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"},
                   **ADMIN).json()


def invalid(response, message: str) -> dict:
    return assert_status(response, 422, "Invalid", message)


def header(output: str) -> list[str]:
    return output.splitlines()[0].split()


# -- discovery ------------------------------------------------------------------------------------

ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


def test_core_discovery_has_upstreams_entries(api):
    resources = {r["name"]: r for r in api.get("/api/v1", **ADMIN).json()["resources"]}
    assert resources["secrets"] == {
        "name": "secrets", "singularName": "secret", "namespaced": True, "kind": "Secret",
        "verbs": ALL_VERBS, "storageVersionHash": "S6u1pOWzb84="}
    assert resources["serviceaccounts"] == {
        "name": "serviceaccounts", "singularName": "serviceaccount", "namespaced": True,
        "kind": "ServiceAccount", "verbs": ALL_VERBS, "shortNames": ["sa"],
        "storageVersionHash": "pbx9ZvyFpBE="}
    assert resources["events"] == {
        "name": "events", "singularName": "event", "namespaced": True, "kind": "Event",
        "verbs": ALL_VERBS, "shortNames": ["ev"], "storageVersionHash": "r2yiGXH7wu8="}
    assert resources["endpoints"] == {
        "name": "endpoints", "singularName": "endpoints", "namespaced": True,
        "kind": "Endpoints", "verbs": ALL_VERBS, "shortNames": ["ep"],
        "storageVersionHash": "fWeeMqaN/OA="}
    assert resources["services"] == {
        "name": "services", "singularName": "service", "namespaced": True, "kind": "Service",
        "verbs": ALL_VERBS, "shortNames": ["svc"], "categories": ["all"],
        "storageVersionHash": "0/CO1lhkEBI="}
    assert resources["services/status"] == {
        "name": "services/status", "singularName": "", "namespaced": True, "kind": "Service",
        "verbs": ["get", "patch", "update"]}


def test_group_discovery_for_coordination_and_events(api):
    groups = {g["name"]: g for g in api.get("/apis", **ADMIN).json()["groups"]}
    for name in ("coordination.k8s.io", "events.k8s.io"):
        assert groups[name] == {"name": name,
                                "versions": [{"groupVersion": f"{name}/v1", "version": "v1"}],
                                "preferredVersion": {"groupVersion": f"{name}/v1",
                                                     "version": "v1"}}
    leases = api.get("/apis/coordination.k8s.io/v1", **ADMIN).json()
    assert leases == {"kind": "APIResourceList", "apiVersion": "v1",
                      "groupVersion": "coordination.k8s.io/v1", "resources": [{
                          "name": "leases", "singularName": "lease", "namespaced": True,
                          "kind": "Lease", "verbs": ALL_VERBS,
                          "storageVersionHash": "gqkMMb/YqFM="}]}
    events = api.get("/apis/events.k8s.io/v1", **ADMIN).json()
    assert events["resources"] == [{
        "name": "events", "singularName": "event", "namespaced": True, "kind": "Event",
        "verbs": ALL_VERBS, "shortNames": ["ev"], "storageVersionHash": "r2yiGXH7wu8="}]


@pytest.mark.parametrize("path, names", [
    (f"{NS}/secrets", ["Name", "Type", "Data", "Age"]),
    (f"{NS}/serviceaccounts", ["Name", "Secrets", "Age"]),
    (f"{NS}/endpoints", ["Name", "Endpoints", "Age"]),
    (f"{NS}/services", ["Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age",
                        "Selector"]),
    (f"{NS}/events", ["Last Seen", "Type", "Reason", "Object", "Subobject", "Source", "Message",
                      "First Seen", "Count", "Name"]),
    ("/apis/events.k8s.io/v1/namespaces/default/events",
     ["Last Seen", "Type", "Reason", "Object", "Subobject", "Source", "Message", "First Seen",
      "Count", "Name"]),
    ("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases", ["Name", "Holder", "Age"]),
])
def test_table_columns_are_upstreams(api, path, names):
    columns = table(api, path)["columnDefinitions"]
    assert [c["name"] for c in columns] == names
    wide = {"Subobject", "Source", "First Seen", "Count", "Selector"}
    assert [c["priority"] for c in columns] == [
        1 if c["name"] in wide or (c["name"] == "Name" and "events" in path) else 0
        for c in columns]


# -- secrets --------------------------------------------------------------------------------------

def test_secret_string_data_is_merged_and_type_defaults_to_opaque(api):
    created = post(api, f"{NS}/secrets", {"metadata": {"name": "creds"},
                                          "data": {"user": b64("admin"), "pass": b64("old")},
                                          "stringData": {"pass": "s3cr3t"}})
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["type"] == "Opaque" and "stringData" not in body
    assert body["data"] == {"user": b64("admin"), "pass": b64("s3cr3t")}
    assert api.get(f"{NS}/secrets/creds", **ADMIN).json()["data"] == body["data"]


def test_secret_data_must_be_base64(api):
    body = assert_status(post(api, f"{NS}/secrets", {"metadata": {"name": "nb"},
                                                     "data": {"a": "abc!"}}),
                         400, "BadRequest", 'Secret in version "v1" cannot be handled as a '
                                            "Secret: illegal base64 data at input byte 3")
    assert "details" not in body


def test_secret_validation_messages(api):
    invalid(post(api, f"{NS}/secrets", {"metadata": {"name": "badkey"},
                                        "data": {"bad key": b64("x")}}),
            f'Secret "badkey" is invalid: data[bad key]: Invalid value: "bad key": '
            f"{CONFIG_KEY_MSG}")
    body = invalid(post(api, f"{NS}/secrets", {"metadata": {"name": "tls"},
                                               "type": "kubernetes.io/tls"}),
                   'Secret "tls" is invalid: [data[tls.crt]: Required value, data[tls.key]: '
                   "Required value]")
    assert body["details"]["causes"] == [
        {"reason": "FieldValueRequired", "message": "Required value", "field": "data[tls.crt]"},
        {"reason": "FieldValueRequired", "message": "Required value", "field": "data[tls.key]"}]
    invalid(post(api, f"{NS}/secrets", {"metadata": {"name": "tok"},
                                        "type": "kubernetes.io/service-account-token"}),
            'Secret "tok" is invalid: metadata.annotations[kubernetes.io/service-account.name]: '
            "Required value")
    invalid(post(api, f"{NS}/secrets", {"metadata": {"name": "dcj"},
                                        "type": "kubernetes.io/dockerconfigjson"}),
            'Secret "dcj" is invalid: data[.dockerconfigjson]: Required value')
    invalid(post(api, f"{NS}/secrets", {"metadata": {"name": "dcj"},
                                        "type": "kubernetes.io/dockerconfigjson",
                                        "data": {".dockerconfigjson": b64("{")}}),
            'Secret "dcj" is invalid: data[.dockerconfigjson]: Invalid value: "<secret contents '
            'redacted>": unexpected end of JSON input')
    invalid(post(api, f"{NS}/secrets", {"metadata": {"name": "basic"},
                                        "type": "kubernetes.io/basic-auth"}),
            'Secret "basic" is invalid: [data[username]: Required value, data[password]: '
            "Required value]")
    invalid(post(api, f"{NS}/secrets", {"metadata": {"name": "ssh"},
                                        "type": "kubernetes.io/ssh-auth"}),
            'Secret "ssh" is invalid: data[ssh-privatekey]: Required value')
    big = b64(b"x" * (1024 * 1024 + 1))
    invalid(post(api, f"{NS}/secrets", {"metadata": {"name": "big"}, "data": {"big": big}}),
            'Secret "big" is invalid: data: Too long: may not be more than 1048576 bytes')
    ok = post(api, f"{NS}/secrets", {"metadata": {"name": "tls-ok"}, "type": "kubernetes.io/tls",
                                     "stringData": {"tls.crt": "c", "tls.key": "k"}})
    assert ok.status_code == 201, ok.text


def test_secret_type_is_immutable_and_immutable_secrets_keep_their_data(api):
    assert post(api, f"{NS}/secrets", {"metadata": {"name": "typed"},
                                       "data": {"a": b64("1")}}).status_code == 201
    invalid(put(api, f"{NS}/secrets/typed", {"metadata": {"name": "typed"},
                                             "type": "kubernetes.io/tls",
                                             "data": {"tls.crt": "", "tls.key": ""}}),
            'Secret "typed" is invalid: type: Invalid value: "kubernetes.io/tls": field is '
            "immutable")
    assert post(api, f"{NS}/secrets", {"metadata": {"name": "frozen"}, "immutable": True,
                                       "data": {"a": b64("1")}}).status_code == 201
    body = invalid(put(api, f"{NS}/secrets/frozen", {"metadata": {"name": "frozen"},
                                                     "immutable": True,
                                                     "stringData": {"a": "2"}}),
                   'Secret "frozen" is invalid: data: Forbidden: field is immutable when '
                   "`immutable` is set")
    assert body["details"]["causes"] == [{"reason": "FieldValueForbidden",
                                          "message": "Forbidden: field is immutable when "
                                                     "`immutable` is set", "field": "data"}]
    same = put(api, f"{NS}/secrets/frozen", {"metadata": {"name": "frozen"}, "immutable": True,
                                             "data": {"a": b64("1")}})
    assert same.status_code == 200, same.text


def test_secret_field_selector_on_type(api):
    post(api, "/api/v1/namespaces", {"metadata": {"name": "secret-types"}})
    path = "/api/v1/namespaces/secret-types/secrets"
    post(api, path, {"metadata": {"name": "plain"}, "data": {}})
    post(api, path, {"metadata": {"name": "cert"}, "type": "kubernetes.io/tls",
                     "stringData": {"tls.crt": "c", "tls.key": "k"}})
    listed = api.get(f"{path}?fieldSelector=type%3Dkubernetes.io%2Ftls", **ADMIN).json()
    assert [s["metadata"]["name"] for s in listed["items"]] == ["cert"]
    listed = api.get(f"{path}?fieldSelector=type!%3DOpaque,metadata.name%3Dcert", **ADMIN)
    assert [s["metadata"]["name"] for s in listed.json()["items"]] == ["cert"]
    assert_status(api.get(f"{path}?fieldSelector=data.a%3Db", **ADMIN), 400, "BadRequest",
                  "field label not supported: data.a")
    out = api.kubectl("get", "secrets", "-n", "secret-types",
                      "--field-selector", "type=kubernetes.io/tls", check=True).stdout
    assert header(out) == ["NAME", "TYPE", "DATA", "AGE"]
    assert out.splitlines()[1].split()[:3] == ["cert", "kubernetes.io/tls", "2"]


SECRET_YAML = """apiVersion: v1
kind: Secret
metadata:
  name: from-yaml
  namespace: default
stringData:
  password: hunter2
"""


def test_secret_with_kubectl_and_the_python_client(api):
    from kubernetes import client

    assert api.kubectl("create", "-f", "-", input=SECRET_YAML,
                       check=True).stdout.strip() == "secret/from-yaml created"
    with api.python_client() as api_client:
        core = client.CoreV1Api(api_client)
        secret = core.read_namespaced_secret("from-yaml", "default")
        assert base64.b64decode(secret.data["password"]) == b"hunter2"
        assert secret.type == "Opaque"
        made = core.create_namespaced_secret("default", client.V1Secret(
            metadata=client.V1ObjectMeta(name="py-secret"), string_data={"k": "v"}))
        assert made.data == {"k": b64("v")}


# -- service accounts -----------------------------------------------------------------------------

def test_service_accounts_keep_only_secret_names(api):
    created = post(api, f"{NS}/serviceaccounts", {
        "metadata": {"name": "builder"},
        "secrets": [{"name": "creds", "namespace": "elsewhere", "uid": "x"}, {"name": "tls"}]})
    assert created.status_code == 201, created.text
    assert created.json()["secrets"] == [{"name": "creds"}, {"name": "tls"}]
    out = api.kubectl("get", "sa", "builder", "-n", "default", check=True).stdout
    assert header(out) == ["NAME", "SECRETS", "AGE"]
    assert out.splitlines()[1].split()[:2] == ["builder", "2"]
    invalid(post(api, f"{NS}/serviceaccounts", {"metadata": {"name": "Bad_SA"}}),
            'ServiceAccount "Bad_SA" is invalid: metadata.name: Invalid value: "Bad_SA": a '
            "lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
            "'-' or '.', and must start and end with an alphanumeric character (e.g. "
            "'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]"
            "([-a-z0-9]*[a-z0-9])?)*')")
    from kubernetes import client

    with api.python_client() as api_client:
        core = client.CoreV1Api(api_client)
        assert core.read_namespaced_service_account("builder", "default").secrets[0].name == \
            "creds"
    # Upstream's serviceaccounts registry returns the deleted object, not a Status.
    deleted = api.request("DELETE", f"{NS}/serviceaccounts/builder", **ADMIN)
    assert deleted.status_code == 200
    assert deleted.json()["kind"] == "ServiceAccount"
    assert deleted.json()["metadata"]["name"] == "builder"


# -- events ---------------------------------------------------------------------------------------

def core_event(name: str, **fields) -> dict:
    return {"metadata": {"name": name, "namespace": "default"},
            "involvedObject": {"kind": "Pod", "name": "web-1", "namespace": "default",
                               "uid": "u-1", "apiVersion": "v1"},
            "reason": "Started", "message": "Started container web", "type": "Normal",
            "source": {"component": "kubelet", "host": "node-1"},
            "firstTimestamp": "2024-01-01T00:00:00Z", "lastTimestamp": "2024-01-01T00:00:05Z",
            "count": 2, **fields}


NEW_EVENT = {"metadata": {"name": "scaled", "namespace": "default"},
             "eventTime": "2024-05-01T10:00:00.123456Z", "reportingController": "example.com/ctl",
             "reportingInstance": "ctl-0", "action": "Scale", "reason": "Scaled",
             "regarding": {"kind": "Deployment", "name": "web", "namespace": "default",
                           "apiVersion": "apps/v1"},
             "note": "scaled to 3", "type": "Normal"}
EVENTS_V1 = "/apis/events.k8s.io/v1/namespaces/default/events"


def test_core_event_round_trip_and_serialization(api):
    created = post(api, f"{NS}/events", core_event("started"))
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["eventTime"] is None and body["reportingComponent"] == ""
    assert body["reportingInstance"] == "" and body["count"] == 2
    out = api.kubectl("get", "events", "-n", "default", "--field-selector",
                      "involvedObject.name=web-1", check=True).stdout
    assert header(out) == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert out.splitlines()[1].split()[1:] == ["Normal", "Started", "pod/web-1", "Started",
                                               "container", "web"]
    cells = table(api, f"{NS}/events/started")["rows"][0]["cells"]
    assert cells[1:] == ["Normal", "Started", "pod/web-1", "", "kubelet, node-1",
                         "Started container web", cells[7], 2, "started"]


def test_core_event_validation(api):
    invalid(post(api, f"{NS}/events", core_event(
        "elsewhere", involvedObject={"kind": "Pod", "name": "p", "namespace": "other"})),
        'Event "elsewhere" is invalid: involvedObject.namespace: Invalid value: "other": does '
        "not match event.namespace")
    invalid(post(api, f"{NS}/events", {**core_event("long"), "eventTime": "2024-01-01T00:00:00.000000Z",
                                       "reportingComponent": "ctl", "reportingInstance": "i",
                                       "action": "A", "reason": "r" * 129,
                                       "message": "m" * 1025}),
            'Event "long" is invalid: [reason: Invalid value: "": can have at most 128 '
            'characters, message: Invalid value: "": can have at most 1024 characters]')
    invalid(post(api, f"{NS}/events", {**core_event("nocontroller"),
                                       "eventTime": "2024-01-01T00:00:00.000000Z"}),
            # core/v1 names the field as its own API does (upstream's legacyValidateEvent)
            'Event "nocontroller" is invalid: [reportingComponent: Required value, '
            'reportingComponent: Invalid value: "": name part must be non-empty, '
            'reportingComponent: Invalid value: "": name part must consist of alphanumeric '
            "characters, '-', '_' or '.', and must start and end with an alphanumeric character "
            "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), reportingInstance: Required value, "
            "action: Required value]")


def test_time_fields_are_decoded_and_written_as_upstream(api):
    """metav1.Time is written in UTC to the second, MicroTime to the microsecond; a value
    Go cannot parse is refused with time.Parse's own message."""
    event = {**core_event("timed"), "firstTimestamp": "2026-11-25T05:04:08.955864+01:00",
             "lastTimestamp": "2026-11-25T04:04:09Z",
             "eventTime": "2026-11-25T05:04:08.955864+01:00",
             "reportingComponent": "example.com/ctl", "reportingInstance": "i",
             "action": "Do"}
    created = post(api, f"{NS}/events", event)
    assert created.status_code == 201, created.text
    body = created.json()
    assert (body["firstTimestamp"], body["lastTimestamp"], body["eventTime"]) == (
        "2026-11-25T04:04:08Z", "2026-11-25T04:04:09Z", "2026-11-25T04:04:08.955864Z")
    refused = post(api, f"{NS}/events", {**core_event("badtime"), "lastTimestamp": "yesterday"})
    assert_status(refused, 400, "BadRequest",
                  'Event in version "v1" cannot be handled as a Event: parsing time '
                  '"yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as '
                  '"2006"')
    lease = {"metadata": {"name": "timed"}, "spec": {"renewTime": "2026-11-25T04:04:08Z"}}
    refused = post(api, "/apis/coordination.k8s.io/v1/namespaces/default/leases", lease)
    assert_status(refused, 400, "BadRequest",
                  'Lease in version "v1" cannot be handled as a Lease: parsing time '
                  '"2026-11-25T04:04:08Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse '
                  '"Z" as ".000000"')
    path = "/apis/coordination.k8s.io/v1/namespaces/default/leases/timed"
    lease["spec"]["renewTime"] = "2026-11-25T04:04:08.000001-00:30"
    assert post(api, "/apis/coordination.k8s.io/v1/namespaces/default/leases",
                lease).json()["spec"]["renewTime"] == "2026-11-25T04:34:08.000001Z"
    patched = api.request("PATCH", path, data=b'{"spec":{"acquireTime":"soon"}}',
                          headers={"Content-Type": "application/merge-patch+json"}, **ADMIN)
    body = assert_status(patched, 422, "Invalid")
    assert body["details"]["causes"][0]["field"] == "patch"
    assert body["message"].endswith(': parsing time "soon" as '
                                    '"2006-01-02T15:04:05.000000Z07:00": cannot parse "soon" '
                                    'as "2006"')


def test_event_field_selectors(api):
    post(api, "/api/v1/namespaces", {"metadata": {"name": "ev-select"}})
    path = "/api/v1/namespaces/ev-select/events"
    ref = {"kind": "Pod", "namespace": "ev-select", "apiVersion": "v1"}
    post(api, path, {"metadata": {"name": "a"}, "involvedObject": {**ref, "name": "one"},
                     "reason": "Pulled", "type": "Normal", "source": {"component": "kubelet"}})
    post(api, path, {"metadata": {"name": "b"}, "involvedObject": {**ref, "name": "two"},
                     "reason": "Failed", "type": "Warning",
                     "reportingComponent": "example.com/ctl", "reportingInstance": "i"})

    def names(selector, base=path):
        response = api.get(f"{base}?fieldSelector={selector}", **ADMIN)
        assert response.status_code == 200, response.text
        return [e["metadata"]["name"] for e in response.json()["items"]]

    assert names("involvedObject.name=two") == ["b"]
    assert names("type=Warning") == ["b"]
    assert names("reason=Pulled") == ["a"]
    assert names("source=kubelet") == ["a"]
    assert names("source=example.com/ctl") == ["b"]  # the reporting controller stands in
    assert names("reportingComponent=example.com/ctl") == ["b"]
    assert names("involvedObject.kind=Pod,involvedObject.namespace=ev-select") == ["a", "b"]
    v1 = "/apis/events.k8s.io/v1/namespaces/ev-select/events"
    assert names("regarding.name=one", v1) == ["a"]
    assert names("reportingController=example.com/ctl", v1) == ["b"]
    assert_status(api.get(f"{v1}?fieldSelector=source%3Dkubelet", **ADMIN), 400, "BadRequest",
                  "field label not supported: source")
    assert_status(api.get(f"{path}?fieldSelector=regarding.name%3Done", **ADMIN), 400,
                  "BadRequest", "field label not supported: regarding.name")


def test_an_event_is_one_object_seen_through_both_apis(api):
    created = post(api, EVENTS_V1, NEW_EVENT)
    assert created.status_code == 201, created.text
    new = created.json()
    assert new["apiVersion"] == "events.k8s.io/v1" and new["note"] == "scaled to 3"
    assert new["deprecatedSource"] == {} and new["deprecatedFirstTimestamp"] is None
    old = api.get(f"{NS}/events/scaled", **ADMIN).json()
    assert old["apiVersion"] == "v1"
    assert old["involvedObject"] == NEW_EVENT["regarding"]
    assert old["message"] == "scaled to 3" and old["reportingComponent"] == "example.com/ctl"
    assert old["eventTime"] == NEW_EVENT["eventTime"] and old["source"] == {}
    assert old["metadata"]["uid"] == new["metadata"]["uid"]
    assert old["metadata"]["resourceVersion"] == new["metadata"]["resourceVersion"]
    # A core event, read through events.k8s.io: the old fields are the deprecated ones.
    post(api, f"{NS}/events", core_event("legacy"))
    seen = api.get(f"{EVENTS_V1}/legacy", **ADMIN).json()
    assert seen["regarding"]["name"] == "web-1" and seen["note"] == "Started container web"
    assert seen["deprecatedSource"] == {"component": "kubelet", "host": "node-1"}
    assert seen["deprecatedFirstTimestamp"] == "2024-01-01T00:00:00Z"
    assert seen["deprecatedCount"] == 2 and seen["eventTime"] is None
    # An update through one API shows in the other; a delete through one removes from both.
    old["message"] = "changed through v1"
    assert put(api, f"{NS}/events/scaled", old).status_code == 200
    assert api.get(f"{EVENTS_V1}/scaled", **ADMIN).json()["note"] == "changed through v1"
    listed = api.get(EVENTS_V1, **ADMIN).json()
    assert listed["kind"] == "EventList" and listed["apiVersion"] == "events.k8s.io/v1"
    assert {"scaled", "legacy"} <= {e["metadata"]["name"] for e in listed["items"]}
    assert all("regarding" in e for e in listed["items"])
    assert api.request("DELETE", f"{EVENTS_V1}/legacy", **ADMIN).status_code == 200
    assert api.get(f"{NS}/events/legacy", **ADMIN).status_code == 404
    out = api.kubectl("get", "events.events.k8s.io", "-n", "default", "--field-selector",
                      "regarding.name=web", check=True).stdout
    assert header(out) == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert "deployment/web" in out


def test_events_k8s_io_validation_is_strict(api):
    invalid(post(api, EVENTS_V1, {**NEW_EVENT, "metadata": {"name": "counted"},
                                  "deprecatedCount": 3}),
            'Event.events.k8s.io "counted" is invalid: count: Invalid value: "": needs to be '
            "unset")
    invalid(post(api, EVENTS_V1, {**NEW_EVENT, "metadata": {"name": "odd"}, "type": "Odd"}),
            'Event.events.k8s.io "odd" is invalid: type: Invalid value: "": has invalid value: '
            "Odd")
    invalid(post(api, EVENTS_V1, {**NEW_EVENT, "metadata": {"name": "timeless"},
                                  "eventTime": None}),
            'Event.events.k8s.io "timeless" is invalid: eventTime: Required value')
    assert post(api, EVENTS_V1, {**NEW_EVENT, "metadata": {"name": "fixed"}}).status_code == 201
    current = api.get(f"{EVENTS_V1}/fixed", **ADMIN).json()
    current["note"] = "rewritten"
    invalid(put(api, f"{EVENTS_V1}/fixed", current),
            'Event.events.k8s.io "fixed" is invalid: message: Invalid value: "rewritten": field '
            "is immutable")


def test_events_with_the_python_client(api):
    from kubernetes import client

    import datetime

    with api.python_client() as api_client:
        core = client.CoreV1Api(api_client)
        made = core.create_namespaced_event("default", client.CoreV1Event(
            metadata=client.V1ObjectMeta(name="py-event"),
            involved_object=client.V1ObjectReference(kind="Pod", name="py", namespace="default"),
            reason="Tested", message="from python", type="Normal", action="Test",
            # MicroTime wants six fractional digits, which isoformat() leaves out when
            # there are no microseconds (upstream refuses those too).
            event_time=datetime.datetime(2024, 1, 1, 0, 0, 0, 1, tzinfo=datetime.timezone.utc),
            reporting_component="example.com/tester", reporting_instance="t-0"))
        assert made.involved_object.name == "py"
        # events.k8s.io/v1 requires eventTime, which the client enforces when it reads.
        seen = client.EventsV1Api(api_client).read_namespaced_event("py-event", "default")
        assert seen.regarding.name == "py" and seen.note == "from python"
        assert seen.reporting_controller == "example.com/tester"


# -- endpoints ------------------------------------------------------------------------------------

def test_endpoints_round_trip_and_table(api):
    subsets = [{"addresses": [{"ip": f"10.1.0.{i}"} for i in range(1, 6)],
                "ports": [{"port": 8080, "name": "http"}]}]
    created = post(api, f"{NS}/endpoints", {"metadata": {"name": "web"}, "subsets": subsets})
    assert created.status_code == 201, created.text
    assert created.json()["subsets"][0]["ports"] == [{"port": 8080, "name": "http",
                                                      "protocol": "TCP"}]
    out = api.kubectl("get", "ep", "web", "-n", "default", check=True).stdout
    assert header(out) == ["NAME", "ENDPOINTS", "AGE"]
    assert out.splitlines()[1].split()[:5] == ["web", "10.1.0.1:8080,10.1.0.2:8080,10.1.0.3:8080",
                                               "+", "2", "more..."]
    post(api, f"{NS}/endpoints", {"metadata": {"name": "headless"},
                                  "subsets": [{"addresses": [{"ip": "10.2.0.1"}]}]})
    post(api, f"{NS}/endpoints", {"metadata": {"name": "empty"}})
    cells = {row["cells"][0]: row["cells"][1] for row in table(api, f"{NS}/endpoints")["rows"]}
    assert cells["headless"] == "10.2.0.1" and cells["empty"] == "<none>"


def test_endpoints_validation(api):
    invalid(post(api, f"{NS}/endpoints", {"metadata": {"name": "lo"}, "subsets": [
        {"addresses": [{"ip": "127.0.0.1"}], "ports": [{"port": 80}]}]}),
        'Endpoints "lo" is invalid: subsets[0].addresses[0].ip: Invalid value: "127.0.0.1": may '
        "not be in the loopback range (127.0.0.0/8, ::1/128)")
    invalid(post(api, f"{NS}/endpoints", {"metadata": {"name": "bad"}, "subsets": [
        {"addresses": [{"ip": "abc"}], "ports": [{"port": 80}]}]}),
        'Endpoints "bad" is invalid: subsets[0].addresses[0].ip: Invalid value: "abc": must be a '
        "valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")
    invalid(post(api, f"{NS}/endpoints", {"metadata": {"name": "none"}, "subsets": [
        {"ports": [{"port": 80}]}]}),
        'Endpoints "none" is invalid: subsets[0]: Required value: must specify `addresses` or '
        "`notReadyAddresses`")
    invalid(post(api, f"{NS}/endpoints", {"metadata": {"name": "unnamed"}, "subsets": [
        {"addresses": [{"ip": "10.0.9.1"}], "ports": [{"port": 80}, {"port": 81,
                                                                     "protocol": "HTTP"}]}]}),
        'Endpoints "unnamed" is invalid: [subsets[0].ports[0].name: Required value, '
        "subsets[0].ports[1].name: Required value, subsets[0].ports[1].protocol: Unsupported "
        'value: "HTTP": supported values: "SCTP", "TCP", "UDP"]')


# -- services -------------------------------------------------------------------------------------

RANGE = ipaddress.ip_network("10.0.0.0/24")


def service(name: str, **spec) -> dict:
    return {"metadata": {"name": name}, "spec": {"ports": [{"port": 80}], **spec}}


def cluster_ip(response) -> str:
    assert response.status_code == 201, response.text
    return response.json()["spec"]["clusterIP"]


def test_service_defaults_and_allocation(api):
    created = post(api, f"{NS}/services", service("web", selector={"app": "web"}))
    spec = created.json()["spec"]
    ip = cluster_ip(created)
    assert ipaddress.ip_address(ip) in RANGE
    assert ip not in ("10.0.0.0", "10.0.0.1", "10.0.0.255")
    assert spec == {"ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}],
                    "selector": {"app": "web"}, "sessionAffinity": "None", "type": "ClusterIP",
                    "internalTrafficPolicy": "Cluster", "ipFamilyPolicy": "SingleStack",
                    "ipFamilies": ["IPv4"], "clusterIPs": [ip], "clusterIP": ip}
    assert created.json()["status"] == {"loadBalancer": {}}
    other = cluster_ip(post(api, f"{NS}/services", service("web2")))
    assert other != ip
    out = api.kubectl("get", "svc", "web", "-n", "default", "-o", "wide", check=True).stdout
    assert header(out) == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE",
                           "SELECTOR"]
    row = out.splitlines()[1].split()
    assert row[:5] == ["web", "ClusterIP", ip, "<none>", "80/TCP"] and row[6] == "app=web"


def test_requested_ips_are_honoured_refused_when_taken_and_released_on_delete(api):
    assert cluster_ip(post(api, f"{NS}/services", service("fixed", clusterIP="10.0.0.10"))) == \
        "10.0.0.10"
    taken = invalid(post(api, f"{NS}/services", service("thief", clusterIP="10.0.0.10")),
                    'Service "thief" is invalid: spec.clusterIPs: Invalid value: []string{'
                    '"10.0.0.10"}: failed to allocate IP 10.0.0.10: provided IP is already '
                    "allocated")
    assert taken["details"] == {"name": "thief", "kind": "Service", "causes": [{
        "reason": "FieldValueInvalid", "field": "spec.clusterIPs",
        "message": 'Invalid value: []string{"10.0.0.10"}: failed to allocate IP 10.0.0.10: '
                   "provided IP is already allocated"}]}
    invalid(post(api, f"{NS}/services", service("faraway", clusterIP="192.168.0.1")),
            'Service "faraway" is invalid: spec.clusterIPs: Invalid value: []string{'
            '"192.168.0.1"}: failed to allocate IP 192.168.0.1: the provided IP (192.168.0.1) '
            "is not in the valid range. The range of valid IPs is 10.0.0.0/24")
    invalid(post(api, f"{NS}/services", service("kubernetes-like", clusterIP="10.0.0.1")),
            'Service "kubernetes-like" is invalid: spec.clusterIPs: Invalid value: []string{'
            '"10.0.0.1"}: failed to allocate IP 10.0.0.1: provided IP is already allocated')
    # An invalid service gives back what it was allocated.
    invalid(post(api, f"{NS}/services", {"metadata": {"name": "noports"},
                                         "spec": {"clusterIP": "10.0.0.11"}}),
            'Service "noports" is invalid: spec.ports: Required value')
    assert cluster_ip(post(api, f"{NS}/services", service("eleven", clusterIP="10.0.0.11"))) == \
        "10.0.0.11"
    assert api.request("DELETE", f"{NS}/services/fixed", **ADMIN).status_code == 200
    assert cluster_ip(post(api, f"{NS}/services", service("heir", clusterIP="10.0.0.10"))) == \
        "10.0.0.10"


def test_dry_run_allocates_nothing(api):
    dry = post(api, f"{NS}/services?dryRun=All", service("dry", clusterIP="10.0.0.12"))
    assert cluster_ip(dry) == "10.0.0.12"
    assert api.get(f"{NS}/services/dry", **ADMIN).status_code == 404
    assert cluster_ip(post(api, f"{NS}/services", service("wet", clusterIP="10.0.0.12"))) == \
        "10.0.0.12"
    picked = cluster_ip(post(api, f"{NS}/services?dryRun=All", service("dry2")))
    assert ipaddress.ip_address(picked) in RANGE


def test_cluster_ip_is_immutable_and_kept_when_omitted(api):
    ip = cluster_ip(post(api, f"{NS}/services", service("steady", selector={"app": "s"})))
    current = api.get(f"{NS}/services/steady", **ADMIN).json()
    moved = dict(current, spec=dict(current["spec"], clusterIP="10.0.0.99"))
    invalid(put(api, f"{NS}/services/steady", moved),
            'Service "steady" is invalid: spec.clusterIPs[0]: Invalid value: []string{'
            '"10.0.0.99"}: may not change once set')
    # Resubmitting what the service was created from keeps the allocated values.
    again = put(api, f"{NS}/services/steady", service("steady", selector={"app": "s2"}))
    assert again.status_code == 200, again.text
    assert again.json()["spec"]["clusterIP"] == ip
    assert again.json()["spec"]["selector"] == {"app": "s2"}


def test_headless_and_external_name_services_get_no_ip(api):
    headless = post(api, f"{NS}/services", service("headless", clusterIP="None",
                                                   selector={"app": "h"}))
    assert cluster_ip(headless) == "None"
    assert headless.json()["spec"]["clusterIPs"] == ["None"]
    bare = post(api, f"{NS}/services", {"metadata": {"name": "bare"},
                                        "spec": {"clusterIP": "None"}})
    assert cluster_ip(bare) == "None"
    assert bare.json()["spec"]["ipFamilyPolicy"] == "RequireDualStack"
    assert bare.json()["spec"]["ipFamilies"] == ["IPv4", "IPv6"]
    external = post(api, f"{NS}/services", {"metadata": {"name": "alias"}, "spec": {
        "type": "ExternalName", "externalName": "example.com"}})
    assert external.status_code == 201, external.text
    assert "clusterIP" not in external.json()["spec"]
    rows = {r["cells"][0]: r["cells"][:5] for r in table(api, f"{NS}/services")["rows"]}
    assert rows["alias"] == ["alias", "ExternalName", "<none>", "example.com", "<none>"]
    assert rows["headless"][2] == "None"


def test_type_changes_allocate_and_release(api):
    ip = cluster_ip(post(api, f"{NS}/services", service("shifty", clusterIP="10.0.0.13")))
    current = api.get(f"{NS}/services/shifty", **ADMIN).json()
    current["spec"].update(type="ExternalName", externalName="example.org")
    changed = put(api, f"{NS}/services/shifty", current)
    assert changed.status_code == 200, changed.text
    assert "clusterIP" not in changed.json()["spec"]
    assert cluster_ip(post(api, f"{NS}/services", service("taker", clusterIP=ip))) == ip
    back = api.get(f"{NS}/services/shifty", **ADMIN).json()
    back["spec"] = {"type": "ClusterIP", "ports": [{"port": 80}]}
    changed = put(api, f"{NS}/services/shifty", back)
    assert changed.status_code == 200, changed.text
    assert ipaddress.ip_address(changed.json()["spec"]["clusterIP"]) in RANGE
    assert changed.json()["spec"]["clusterIP"] != ip


def test_node_ports_are_allocated(api):
    made = post(api, f"{NS}/services", service("np", type="NodePort"))
    assert made.status_code == 201, made.text
    node_port = made.json()["spec"]["ports"][0]["nodePort"]
    assert 30000 <= node_port <= 32767
    assert made.json()["spec"]["externalTrafficPolicy"] == "Cluster"
    invalid(post(api, f"{NS}/services", {"metadata": {"name": "np2"}, "spec": {
        "type": "NodePort", "ports": [{"port": 80, "nodePort": node_port}]}}),
        f'Service "np2" is invalid: spec.ports[0].nodePort: Invalid value: {node_port}: '
        "provided port is already allocated")
    invalid(post(api, f"{NS}/services", {"metadata": {"name": "np3"}, "spec": {
        "type": "NodePort", "ports": [{"port": 80, "nodePort": 80}]}}),
        'Service "np3" is invalid: spec.ports[0].nodePort: Invalid value: 80: provided port is '
        "not in the valid range. The range of valid ports is 30000-32767")
    cells = table(api, f"{NS}/services/np")["rows"][0]["cells"]
    assert cells[1] == "NodePort" and cells[4] == f"80:{node_port}/TCP"
    listed = api.get(f"{NS}/services?fieldSelector=spec.type%3DNodePort", **ADMIN).json()
    assert [s["metadata"]["name"] for s in listed["items"]] == ["np"]
    assert api.request("DELETE", f"{NS}/services/np", **ADMIN).status_code == 200
    again = post(api, f"{NS}/services", {"metadata": {"name": "np2"}, "spec": {
        "type": "NodePort", "ports": [{"port": 80, "nodePort": node_port}]}})
    assert again.status_code == 201, again.text


def test_service_validation_messages(api):
    invalid(post(api, f"{NS}/services", service("bigport", ports=[{"port": 70000}])),
            'Service "bigport" is invalid: [spec.ports[0].port: Invalid value: 70000: must be '
            "between 1 and 65535, inclusive, spec.ports[0].targetPort: Invalid value: 70000: "
            "must be between 1 and 65535, inclusive]")
    invalid(post(api, f"{NS}/services", service("dupnames", ports=[
        {"name": "http", "port": 80}, {"name": "http", "port": 81}])),
        'Service "dupnames" is invalid: spec.ports[1].name: Duplicate value: "http"')
    invalid(post(api, f"{NS}/services", service("dupports", ports=[
        {"name": "a", "port": 80}, {"name": "b", "port": 80}])),
        'Service "dupports" is invalid: spec.ports[1]: Duplicate value: core.ServicePort{'
        'Name:"", Protocol:"TCP", AppProtocol:(*string)(nil), Port:80, '
        'TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}')
    invalid(post(api, f"{NS}/services", service("badsel", selector={"app": "a b"})),
            'Service "badsel" is invalid: spec.selector: Invalid value: "a b": a valid label '
            "must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
            "'my_value',  or '12345', regex used for validation is "
            "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
    invalid(post(api, f"{NS}/services", service("Upper")),
            'Service "Upper" is invalid: metadata.name: Invalid value: "Upper": a DNS-1035 label '
            "must consist of lower case alphanumeric characters or '-', start with an "
            "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
            "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")
    invalid(post(api, f"{NS}/services", service("badip", clusterIP="10.0.0.300")),
            'Service "badip" is invalid: spec.clusterIPs[0]: Invalid value: "10.0.0.300": must '
            "be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")
    invalid(post(api, f"{NS}/services", service("v6", clusterIP="fd00::1")),
            'Service "v6" is invalid: spec.clusterIPs[0]: Invalid value: []string{"fd00::1"}: '
            "IPv6 is not configured on this cluster")
    invalid(post(api, f"{NS}/services", service("dual", ipFamilyPolicy="RequireDualStack")),
            'Service "dual" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": '
            "this cluster is not configured for dual-stack services")


def test_status_subresource(api):
    cluster_ip(post(api, f"{NS}/services", service("lb", type="LoadBalancer")))
    current = api.get(f"{NS}/services/lb/status", **ADMIN).json()
    assert current["status"] == {"loadBalancer": {}}
    current["status"] = {"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}}
    current["spec"]["type"] = "ClusterIP"  # ignored: /status writes the status only
    written = put(api, f"{NS}/services/lb/status", current)
    assert written.status_code == 200, written.text
    stored = api.get(f"{NS}/services/lb", **ADMIN).json()
    assert stored["spec"]["type"] == "LoadBalancer"
    assert stored["status"] == {"loadBalancer": {"ingress": [{"ip": "192.0.2.10",
                                                              "ipMode": "VIP"}]}}
    # The main resource ignores status in turn.
    stored["status"] = {"loadBalancer": {}}
    assert put(api, f"{NS}/services/lb", stored).json()["status"]["loadBalancer"]["ingress"]
    cells = table(api, f"{NS}/services/lb")["rows"][0]["cells"]
    assert cells[3] == "192.0.2.10"
    stored = api.get(f"{NS}/services/lb", **ADMIN).json()
    stored["status"] = {"loadBalancer": {"ingress": [{"ip": "nope", "ipMode": "VIP"}]}}
    invalid(put(api, f"{NS}/services/lb/status", stored),
            'Service "lb" is invalid: status.loadBalancer.ingress[0].ip: Invalid value: "nope": '
            "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")
    assert_status(api.request("DELETE", f"{NS}/services/lb/status", **ADMIN), 405,
                  "MethodNotAllowed")


def test_patch_can_change_the_type(api):
    cluster_ip(post(api, f"{NS}/services", service("patched", clusterIP="10.0.0.14")))
    patched = api.request("PATCH", f"{NS}/services/patched", **ADMIN,
                          headers={"Content-Type": "application/merge-patch+json"},
                          data=json.dumps({"spec": {"type": "ExternalName",
                                                    "externalName": "example.net"}}))
    assert patched.status_code == 200, patched.text
    assert "clusterIP" not in patched.json()["spec"]
    assert cluster_ip(post(api, f"{NS}/services", service("after-patch",
                                                          clusterIP="10.0.0.14"))) == "10.0.0.14"


SERVICE_YAML = """apiVersion: v1
kind: Service
metadata:
  name: kubectl-svc
  namespace: default
spec:
  selector:
    app: kubectl
  ports:
  - name: http
    port: 80
    targetPort: 8080
"""


def test_services_with_kubectl_and_the_python_client(api):
    from kubernetes import client

    assert api.kubectl("create", "-f", "-", input=SERVICE_YAML,
                       check=True).stdout.strip() == "service/kubectl-svc created"
    # The "all" category finds services (the only kind of it served here).
    out = api.kubectl("get", "all", "-n", "default", check=True).stdout
    assert any(line.split()[0] in ("kubectl-svc", "service/kubectl-svc")
               for line in out.splitlines()[1:])
    with api.python_client() as api_client:
        core = client.CoreV1Api(api_client)
        svc = core.read_namespaced_service("kubectl-svc", "default")
        assert ipaddress.ip_address(svc.spec.cluster_ip) in RANGE
        assert svc.spec.ports[0].target_port == 8080
        made = core.create_namespaced_service("default", client.V1Service(
            metadata=client.V1ObjectMeta(generate_name="py-svc-"),
            spec=client.V1ServiceSpec(ports=[client.V1ServicePort(port=443)])))
        assert made.metadata.name.startswith("py-svc-")
        assert made.spec.cluster_ip not in (None, svc.spec.cluster_ip)
    # (Not the client's delete_namespaced_service: it expects the deleted Service back, as
    # upstream answers for services, where kapiserver answers a Status for now.)
    assert api.request("DELETE", f"{NS}/services/{made.metadata.name}",
                       **ADMIN).status_code == 200
    assert api.kubectl("delete", "svc", "kubectl-svc", "-n", "default",
                       check=True).stdout.strip() == 'service "kubectl-svc" deleted'


def test_imperative_kubectl_creates(api):
    # kubectl's create subcommands send protobuf bodies.
    for args, said in (
            (["secret", "generic", "imp-secret", "--from-literal=user=me"],
             "secret/imp-secret created"),
            (["serviceaccount", "imp-sa"], "serviceaccount/imp-sa created"),
            (["service", "clusterip", "imp-cip", "--tcp=80:8080"], "service/imp-cip created"),
            (["service", "nodeport", "imp-np", "--tcp=80:8080"], "service/imp-np created"),
            (["service", "externalname", "imp-ext", "--external-name=example.com"],
             "service/imp-ext created")):
        result = api.kubectl("create", *args, "-n", "default")
        assert result.returncode == 0 and result.stdout.strip() == said, result.stderr
    assert api.get(f"{NS}/secrets/imp-secret", **ADMIN).json()["data"] == {"user": b64("me")}
    rows = {r["cells"][0]: r["cells"] for r in table(api, f"{NS}/services")["rows"]}
    assert ipaddress.ip_address(rows["imp-cip"][2]) in RANGE
    assert rows["imp-cip"][4] == "80/TCP" and rows["imp-ext"][3] == "example.com"
    assert rows["imp-np"][4].startswith("80:") and rows["imp-np"][4].endswith("/TCP")


def test_concurrent_creates_on_two_workers_never_share_an_ip(api):
    post(api, "/api/v1/namespaces", {"metadata": {"name": "race"}})
    path = "/api/v1/namespaces/race/services"
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        responses = list(pool.map(lambda i: post(api, path, service(f"svc-{i}")), range(40)))
    ips = [cluster_ip(r) for r in responses]
    assert len(set(ips)) == len(ips)
    assert all(ipaddress.ip_address(ip) in RANGE for ip in ips)
    # Everyone wants the same address (from the lower part of the range, which dynamic
    # allocation leaves alone while it can): exactly one gets it.
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        responses = list(pool.map(
            lambda i: post(api, path, service(f"want-{i}", clusterIP="10.0.0.16")), range(8)))
    assert sorted(r.status_code for r in responses) == [201] + [422] * 7
    assert all("provided IP is already allocated" in r.json()["message"]
               for r in responses if r.status_code == 422)
    # Deleting them all frees their addresses for others.
    for i in range(40):
        assert api.request("DELETE", f"{path}/svc-{i}", **ADMIN).status_code == 200
    assert cluster_ip(post(api, path, service("reuse", clusterIP=ips[0]))) == ips[0]


def test_allocations_survive_restarts_and_the_range_option(kapiserver_factory):
    server = kapiserver_factory(config={"service-cluster-ip-range": "10.96.0.0/28"}, workers=1)
    path = "/api/v1/namespaces/default/services"
    ips = {cluster_ip(post(server, path, service(f"s{i}"))) for i in range(13)}
    # 10.96.0.1 is the kubernetes service's; .0 and .15 are not addresses for services.
    assert ips == {f"10.96.0.{i}" for i in range(2, 15)}
    full = post(server, path, service("one-too-many"))
    assert_status(full, 500, "InternalError",
                  "Internal error occurred: failed to allocate a serviceIP: range is full",
                  {"causes": [{"message": "failed to allocate a serviceIP: range is full"}]})
    server.stop()
    server.start()
    invalid(post(server, path, service("again", clusterIP="10.96.0.5")),
            'Service "again" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.5"}: '
            "failed to allocate IP 10.96.0.5: provided IP is already allocated")
    taken = server.get(f"{path}?fieldSelector=spec.clusterIP%3D10.96.0.5", **ADMIN).json()
    name = taken["items"][0]["metadata"]["name"]
    assert server.request("DELETE", f"{path}/{name}", **ADMIN).status_code == 200
    assert cluster_ip(post(server, path, service("again"))) == "10.96.0.5"


def test_range_options_are_validated(tmp_path):
    result = subprocess.run([sys.executable, "-m", "kapiserver", "serve", "--data-dir",
                             str(tmp_path / "d"), "--service-cluster-ip-range", "10.0.0.0/8",
                             "--service-node-port-range", "3000-100"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert ("--service-cluster-ip-range: specified --service-cluster-ip-range is too large; for "
            "32-bit addresses, the mask must be >= 12") in result.stderr
    assert ("--service-node-port-range: '3000-100' is not a valid port range (e.g. "
            "30000-32767)") in result.stderr


# -- leases ---------------------------------------------------------------------------------------

LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"


def test_leases(api):
    created = post(api, LEASES, {"metadata": {"name": "lock"}, "spec": {
        "holderIdentity": "me", "leaseDurationSeconds": 15,
        "strategy": "OldestEmulationVersion", "preferredHolder": "you"}})
    assert created.status_code == 201, created.text
    # Coordinated leader election is off (alpha in 1.32): its fields are dropped.
    assert created.json()["spec"] == {"holderIdentity": "me", "leaseDurationSeconds": 15}
    out = api.kubectl("get", "leases", "-n", "default", check=True).stdout
    assert header(out) == ["NAME", "HOLDER", "AGE"]
    assert out.splitlines()[1].split()[:2] == ["lock", "me"]
    invalid(post(api, LEASES, {"metadata": {"name": "zero"}, "spec": {
        "leaseDurationSeconds": 0, "leaseTransitions": -1}}),
        'Lease.coordination.k8s.io "zero" is invalid: [spec.leaseDurationSeconds: Invalid '
        "value: 0: must be greater than 0, spec.leaseTransitions: Invalid value: -1: must be "
        "greater than or equal to 0]")
    assert_status(api.get(f"{LEASES}?fieldSelector=spec.holderIdentity%3Dme", **ADMIN), 400,
                  "BadRequest", '"spec.holderIdentity" is not a known field selector: only '
                                '"metadata.name", "metadata.namespace"')
    from kubernetes import client

    with api.python_client() as api_client:
        coordination = client.CoordinationV1Api(api_client)
        lease = coordination.read_namespaced_lease("lock", "default")
        lease.spec.holder_identity = "someone-else"
        assert coordination.replace_namespaced_lease("lock", "default", lease) \
            .spec.holder_identity == "someone-else"
        names = [item.metadata.name for item in
                 coordination.list_namespaced_lease("kube-system").items]
        assert "kapiserver-controllers" in names


def test_python_client_deletes_a_service(api):
    from kubernetes import client

    with api.python_client() as api_client:
        core = client.CoreV1Api(api_client)
        core.create_namespaced_service("default", client.V1Service(
            metadata=client.V1ObjectMeta(name="py-svc"),
            spec=client.V1ServiceSpec(ports=[client.V1ServicePort(port=80)])))
        deleted = core.delete_namespaced_service("py-svc", "default")
    assert deleted.metadata.name == "py-svc"  # upstream answers with the deleted Service


def test_watch_through_events_k8s_io_sees_its_own_form(api):
    import threading

    start = api.get("/apis/events.k8s.io/v1/namespaces/default/events", **ADMIN).json()
    lines = []

    def watch():
        with api.get("/apis/events.k8s.io/v1/namespaces/default/events?watch=1&resourceVersion="
                     + start["metadata"]["resourceVersion"] + "&timeoutSeconds=5", **ADMIN,
                     stream=True) as response:
            for line in response.iter_lines():
                if line:
                    lines.append(json.loads(line))
                    return

    thread = threading.Thread(target=watch)
    thread.start()
    import time

    time.sleep(0.5)
    created = api.request("POST", "/api/v1/namespaces/default/events", json={
        "metadata": {"name": "seen-twice"}, "involvedObject": {"kind": "Pod", "name": "p",
                                                                "namespace": "default"},
        "reason": "Tested", "message": "hello", "type": "Normal"}, **ADMIN)
    assert created.status_code == 201, created.text
    thread.join(10)
    event = lines[0]["object"]
    assert event["apiVersion"] == "events.k8s.io/v1" and event["note"] == "hello"
    assert event["regarding"]["name"] == "p"
