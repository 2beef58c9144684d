"""Service accounts end to end: the ServiceAccount admission plugin and the controllers
behind it (``default`` ServiceAccounts, ``kube-root-ca.crt``, legacy token Secrets),
driven by kubectl and the official Python client against a 2-worker server."""

import base64
import json
import pathlib
import re
import time

import pytest

from kapiserver.testing import assert_status

ADMIN = dict(user="admin", groups=["system:masters"])
REFERENCE = pathlib.Path("/work/shared/reference/wide")
MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
TOKEN_VOLUME = {
    "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {
            "apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}],
    "defaultMode": 420}
DESCRIPTION = ("Contains a CA bundle that can be used to verify the kube-apiserver when using "
               "internal endpoints such as the internal service IP or kubernetes.default.svc. "
               "No other usage is guaranteed across distributions of Kubernetes clusters.")
#: Generous bounds for what takes a fraction of a second on an idle machine.
QUICK = 3.0


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    server = KapiserverProcess(str(tmp_path_factory.mktemp("service-accounts")),
                               workers=2).start()
    yield server
    server.stop()


def wait_for(check, timeout=QUICK, interval=0.02):
    """``check()``'s first truthy answer within ``timeout`` seconds, and how long it took."""
    start = time.monotonic()
    while True:
        result = check()
        if result or time.monotonic() - start > timeout:
            return result, time.monotonic() - start
        time.sleep(interval)


def get(api, path):
    return api.get(path, **ADMIN)


def found(api, path):
    response = get(api, path)
    return response.json() if response.status_code == 200 else None


def pod(name, **spec):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}], **spec}}


def create_pod(api, namespace, obj):
    return api.request("POST", f"/api/v1/namespaces/{namespace}/pods", json=obj, **ADMIN)


def new_namespace(api, name):
    api.kubectl("create", "namespace", name, check=True)
    account, _ = wait_for(lambda: found(api, f"/api/v1/namespaces/{name}/serviceaccounts/default"))
    assert account, f"no default ServiceAccount in {name}"
    return account


def ca_pem(api) -> str:
    return pathlib.Path(api.ca_file).read_text()


def token_volume_of(obj):
    volumes = [v for v in obj["spec"].get("volumes") or []
               if v["name"].startswith("kube-api-access-")]
    return volumes[0] if volumes else None


# -- a fresh server -----------------------------------------------------------------------------

def test_kubectl_run_works_on_a_fresh_server(api):
    # The first thing done after start: the default ServiceAccount may still be coming
    # (the admission plugin waits a moment for it, as upstream's does).
    result = api.kubectl("run", "web", "--image=nginx")
    assert (result.returncode, result.stdout.strip()) == (0, "pod/web created"), result.stderr
    obj = json.loads(api.kubectl("get", "pod", "web", "-o", "json", check=True).stdout)
    spec = obj["spec"]
    assert spec["serviceAccountName"] == spec["serviceAccount"] == "default"
    volume = token_volume_of(obj)
    assert re.fullmatch(r"kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}", volume["name"])
    assert volume["projected"] == TOKEN_VOLUME
    assert spec["containers"][0]["volumeMounts"] == [
        {"name": volume["name"], "readOnly": True, "mountPath": MOUNT_PATH}]
    # The admission plugin's changes are not the client's: its managedFields don't list them.
    stored = get(api, "/api/v1/namespaces/default/pods/web").json()
    fields = stored["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]
    assert "f:volumes" not in fields and "f:serviceAccountName" not in fields


def test_every_namespace_has_its_default_account_and_root_ca(api):
    namespaces = {"default", "kube-system", "kube-public", "kube-node-lease"}

    def with_default_account():
        items = json.loads(api.kubectl("get", "serviceaccounts", "-A", "-o", "json",
                                       check=True).stdout)["items"]
        return {a["metadata"]["namespace"] for a in items if a["metadata"]["name"] == "default"}

    have, _ = wait_for(lambda: namespaces <= with_default_account())
    assert have, with_default_account()
    for namespace in namespaces:
        configmap, _ = wait_for(lambda: found(
            api, f"/api/v1/namespaces/{namespace}/configmaps/kube-root-ca.crt"))
        assert configmap["data"] == {"ca.crt": ca_pem(api)}


def test_kubectl_create_token_for_the_default_account(api):
    token = api.kubectl("create", "token", "default", check=True).stdout.strip()
    whoami = json.loads(api.kubectl("auth", "whoami", "-o", "json", user=None, token=token,
                                    check=True).stdout)
    assert whoami["status"]["userInfo"]["username"] == "system:serviceaccount:default:default"


# -- new namespaces -------------------------------------------------------------------------------

def test_a_new_namespace_gets_default_and_kube_root_ca_at_once(api):
    api.kubectl("create", "namespace", "fresh", check=True)
    account, took = wait_for(lambda: found(api, "/api/v1/namespaces/fresh/serviceaccounts/default"))
    assert account and took < QUICK, took
    assert [m["manager"] for m in account["metadata"].get("managedFields") or []] in (
        [], ["kube-controller-manager"])
    configmap, took = wait_for(lambda: found(
        api, "/api/v1/namespaces/fresh/configmaps/kube-root-ca.crt"))
    assert configmap and took < QUICK, took
    assert configmap["data"] == {"ca.crt": ca_pem(api)}
    assert configmap["metadata"]["annotations"] == {"kubernetes.io/description": DESCRIPTION}
    assert configmap["metadata"]["managedFields"][0]["manager"] == "kube-controller-manager"
    result = api.kubectl("-n", "fresh", "run", "web", "--image=nginx")
    assert result.stdout.strip() == "pod/web created", result.stderr
    assert token_volume_of(json.loads(api.kubectl("-n", "fresh", "get", "pod", "web", "-o",
                                                  "json", check=True).stdout))


def test_the_python_client_gets_the_token_volume_in_every_container(api):
    from kubernetes import client

    new_namespace(api, "py")
    core = client.CoreV1Api(api.python_client())
    created = core.create_namespaced_pod("py", client.V1Pod(
        metadata=client.V1ObjectMeta(name="two"),
        spec=client.V1PodSpec(
            init_containers=[client.V1Container(name="init", image="busybox")],
            containers=[client.V1Container(name="a", image="nginx"),
                        client.V1Container(name="b", image="nginx", volume_mounts=[
                            client.V1VolumeMount(name="own", mount_path=MOUNT_PATH)])],
            volumes=[client.V1Volume(name="own", empty_dir=client.V1EmptyDirVolumeSource())])))
    assert created.spec.service_account_name == "default"
    token = [v for v in created.spec.volumes if v.name.startswith("kube-api-access-")]
    assert len(token) == 1 and token[0].projected.default_mode == 420
    assert token[0].projected.sources[0].service_account_token.expiration_seconds == 3607
    assert token[0].projected.sources[1].config_map.name == "kube-root-ca.crt"
    mounts = {c.name: [(m.name, m.mount_path, m.read_only) for m in c.volume_mounts or []]
              for c in created.spec.init_containers + created.spec.containers}
    assert mounts == {"init": [(token[0].name, MOUNT_PATH, True)],
                      "a": [(token[0].name, MOUNT_PATH, True)],
                      "b": [("own", MOUNT_PATH, None)]}


# -- refusals and opting out ----------------------------------------------------------------------

def test_a_pod_naming_a_missing_account_is_refused_as_upstream(api):
    response = create_pod(api, "default", pod("p0", serviceAccountName="ghost"))
    assert_status(response, 403, "Forbidden",
                  'pods "p0" is forbidden: error looking up service account default/ghost: '
                  'serviceaccount "ghost" not found', {"name": "p0", "kind": "pods"})
    result = api.kubectl("run", "p1", "--image=nginx", "--overrides",
                         json.dumps({"spec": {"serviceAccountName": "ghost"}}))
    assert result.returncode == 1
    assert result.stderr.strip() == (
        'Error from server (Forbidden): pods "p1" is forbidden: error looking up service '
        'account default/ghost: serviceaccount "ghost" not found')
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    with pytest.raises(ApiException) as info:
        client.CoreV1Api(api.python_client()).create_namespaced_pod(
            "default", client.V1Pod(metadata=client.V1ObjectMeta(generate_name="gen-"),
                                    spec=client.V1PodSpec(service_account_name="ghost",
                                                          containers=[client.V1Container(
                                                              name="a", image="nginx")])))
    assert info.value.status == 403
    # Named after the generated name: kapiserver's admission sees it (upstream's mutating
    # admission runs before the name is made, and says "gen-").
    assert re.match(r'pods "gen-\w{5}" is forbidden: error looking up service account',
                    json.loads(info.value.body)["message"])


def test_pods_and_accounts_may_opt_out_of_the_token(api):
    new_namespace(api, "optout")
    path = "/api/v1/namespaces/optout/serviceaccounts"
    assert api.request("POST", path, json={"metadata": {"name": "quiet"},
                                           "automountServiceAccountToken": False},
                       **ADMIN).status_code == 201
    for name, spec, mounted in (
            ("pod-says-no", {"automountServiceAccountToken": False}, False),
            ("account-says-no", {"serviceAccountName": "quiet"}, False),
            ("pod-wins", {"serviceAccountName": "quiet", "automountServiceAccountToken": True},
             True)):
        response = create_pod(api, "optout", pod(name, **spec))
        assert response.status_code == 201, response.text
        obj = response.json()
        assert bool(token_volume_of(obj)) is mounted, name
        assert ("volumeMounts" in obj["spec"]["containers"][0]) is mounted, name


def test_image_pull_secrets_come_from_the_account(api):
    new_namespace(api, "pulls")
    api.kubectl("-n", "pulls", "patch", "serviceaccount", "default", "-p",
                '{"imagePullSecrets":[{"name":"registry"}]}', check=True)
    response = create_pod(api, "pulls", pod("pulled"))
    assert response.json()["spec"]["imagePullSecrets"] == [{"name": "registry"}]


# -- the controllers keep what they made ------------------------------------------------------

def test_a_deleted_default_account_comes_back(api):
    first = new_namespace(api, "again")
    assert api.kubectl("-n", "again", "delete", "serviceaccount", "default",
                       check=True).stdout.strip() == 'serviceaccount "default" deleted'
    back, took = wait_for(lambda: (found(api, "/api/v1/namespaces/again/serviceaccounts/default")
                                   or {}).get("metadata", {}).get("uid") not in (
        None, first["metadata"]["uid"]))
    assert back and took < QUICK, took


def test_kube_root_ca_is_mended_after_an_edit_and_a_deletion(api):
    new_namespace(api, "mend")
    path = "/api/v1/namespaces/mend/configmaps/kube-root-ca.crt"
    wait_for(lambda: found(api, path))
    api.kubectl("-n", "mend", "patch", "configmap", "kube-root-ca.crt", "--type=merge", "-p",
                '{"data":{"ca.crt":"forged"},"metadata":{"annotations":null}}', check=True)
    mended, _ = wait_for(lambda: (found(api, path) or {}).get("data") == {"ca.crt": ca_pem(api)}
                         and found(api, path)["metadata"].get("annotations"))
    assert mended
    api.kubectl("-n", "mend", "delete", "configmap", "kube-root-ca.crt", check=True)
    back, _ = wait_for(lambda: (found(api, path) or {}).get("data") == {"ca.crt": ca_pem(api)})
    assert back


def test_a_deleted_namespace_goes_and_nothing_is_made_again_in_it(api):
    new_namespace(api, "leaving")
    result = api.kubectl("delete", "namespace", "leaving", "--timeout=20s")
    assert result.stdout.strip() == 'namespace "leaving" deleted', result.stderr
    assert get(api, "/api/v1/namespaces/leaving").status_code == 404
    assert get(api, "/api/v1/namespaces/leaving/serviceaccounts").json()["items"] == []
    assert get(api, "/api/v1/namespaces/leaving/configmaps").json()["items"] == []


# -- legacy token Secrets ---------------------------------------------------------------------

TOKEN_SECRET = """apiVersion: v1
kind: Secret
metadata:
  name: {name}
  annotations:
    kubernetes.io/service-account.name: {account}
type: kubernetes.io/service-account-token
"""


def test_a_legacy_token_secret_is_filled_in_and_its_token_authenticates(api):
    new_namespace(api, "legacy")
    api.kubectl("-n", "legacy", "create", "serviceaccount", "builder", check=True)
    uid = found(api, "/api/v1/namespaces/legacy/serviceaccounts/builder")["metadata"]["uid"]
    api.kubectl("-n", "legacy", "apply", "-f", "-", check=True,
                input=TOKEN_SECRET.format(name="builder-token", account="builder"))
    path = "/api/v1/namespaces/legacy/secrets/builder-token"
    secret, took = wait_for(lambda: (found(api, path) or {}).get("data", {}).get("token")
                            and found(api, path))
    assert secret and took < QUICK, took
    data = {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}
    assert sorted(data) == ["ca.crt", "namespace", "token"]
    assert data["ca.crt"] == ca_pem(api) and data["namespace"] == "legacy"
    assert secret["metadata"]["annotations"] == {
        "kubernetes.io/service-account.name": "builder",
        "kubernetes.io/service-account.uid": uid,
        "kubectl.kubernetes.io/last-applied-configuration":
            secret["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]}
    claims = json.loads(base64.urlsafe_b64decode(data["token"].split(".")[1] + "=="))
    assert claims == {"iss": "kubernetes/serviceaccount",
                      "kubernetes.io/serviceaccount/namespace": "legacy",
                      "kubernetes.io/serviceaccount/secret.name": "builder-token",
                      "kubernetes.io/serviceaccount/service-account.name": "builder",
                      "kubernetes.io/serviceaccount/service-account.uid": uid,
                      "sub": "system:serviceaccount:legacy:builder"}
    whoami = json.loads(api.kubectl("auth", "whoami", "-o", "json", user=None,
                                    token=data["token"], check=True).stdout)
    assert whoami["status"]["userInfo"] == {
        "username": "system:serviceaccount:legacy:builder", "uid": uid,
        "groups": ["system:serviceaccounts", "system:serviceaccounts:legacy",
                   "system:authenticated"]}
    # The account goes: so do its token Secrets, and the token no longer works.
    api.kubectl("-n", "legacy", "delete", "serviceaccount", "builder", check=True)
    gone, _ = wait_for(lambda: get(api, path).status_code == 404)
    assert gone
    assert api.get("/api/v1/namespaces", token=data["token"]).status_code == 401


def test_a_token_secret_outliving_its_token_no_longer_authenticates(api):
    new_namespace(api, "rotate")
    api.kubectl("-n", "rotate", "create", "serviceaccount", "bot", check=True)
    api.kubectl("-n", "rotate", "apply", "-f", "-", check=True,
                input=TOKEN_SECRET.format(name="bot-token", account="bot"))
    path = "/api/v1/namespaces/rotate/secrets/bot-token"
    secret, _ = wait_for(lambda: (found(api, path) or {}).get("data", {}).get("token")
                         and found(api, path))
    token = base64.b64decode(secret["data"]["token"]).decode()
    assert api.get("/api/v1/namespaces", token=token).status_code == 200
    # Emptied, the Secret gets a new token; the old one is not the server's copy any more.
    api.kubectl("-n", "rotate", "patch", "secret", "bot-token", "--type=json", "-p",
                '[{"op":"remove","path":"/data/token"}]', check=True)
    renewed, _ = wait_for(lambda: (found(api, path) or {}).get("data", {}).get("token")
                          not in (None, secret["data"]["token"]))
    assert renewed
    assert api.get("/api/v1/namespaces", token=token).status_code == 401


def test_a_token_secret_for_a_missing_account_is_deleted(api):
    api.kubectl("apply", "-f", "-", check=True,
                input=TOKEN_SECRET.format(name="orphan-token", account="nobody"))
    gone, _ = wait_for(lambda: get(api, "/api/v1/namespaces/default/secrets/orphan-token")
                       .status_code == 404)
    assert gone


# -- switched off -------------------------------------------------------------------------------

def test_the_controllers_can_be_switched_off(kapiserver_factory):
    server = kapiserver_factory(workers=2, config={
        "controllers": "*,-serviceaccount,-root-ca-cert-publisher"})
    server.kubectl("create", "namespace", "bare", check=True)
    time.sleep(1.0)
    assert get(server, "/api/v1/namespaces/bare/serviceaccounts").json()["items"] == []
    assert get(server, "/api/v1/namespaces/bare/configmaps").json()["items"] == []
    # Without the default account the pod is refused (after the plugin's wait for it), as
    # kube-apiserver refused it.
    exchange = json.loads((REFERENCE / "pod-without-default-sa.json").read_text())
    namespace = exchange["request"]["path"].split("/")[4]
    started = time.monotonic()
    response = server.request("POST", "/api/v1/namespaces/bare/pods",
                              json=exchange["request"]["body"], **ADMIN)
    assert time.monotonic() - started >= 0.9
    expected = json.loads(json.dumps(exchange["response"]["body"]).replace(namespace, "bare"))
    assert (response.status_code, response.json()) == (exchange["response"]["status"], expected)
    # The namespace controller still runs.
    server.kubectl("delete", "namespace", "bare", "--timeout=20s", check=True)


def test_no_controller_runs_with_an_empty_list(kapiserver_factory):
    server = kapiserver_factory(config={"controllers": ""})
    server.kubectl("create", "namespace", "alone", check=True)
    time.sleep(1.0)
    assert get(server, "/api/v1/namespaces/alone/serviceaccounts").json()["items"] == []
    result = server.kubectl("delete", "namespace", "alone", "--wait=false", check=True)
    assert result.returncode == 0
    time.sleep(0.5)
    assert get(server, "/api/v1/namespaces/alone").json()["status"]["phase"] == "Terminating"
