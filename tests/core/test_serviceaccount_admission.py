"""The ServiceAccount admission plugin's mutations and refusals, without a server."""

import re
from types import SimpleNamespace

import pytest

from kapiserver import errors
from kapiserver.admission import CREATE, UPDATE
from kapiserver.registry.resource import ResourceSpec
from kapiserver_plugins.core.pods import PODS
from kapiserver_plugins.core.serviceaccount_admission import (
    TOKEN_MOUNT_PATH, ServiceAccountAdmission, token_volume_source)

NS = "team"
MOUNT = {"name": None, "readOnly": True, "mountPath": TOKEN_MOUNT_PATH}


class Registry:
    """What the plugin reads of a registry: ``get``, counting the calls."""

    def __init__(self, resource, objects=()):
        self.resource = resource
        self.objects = {(o["metadata"].get("namespace", ""), o["metadata"]["name"]): o
                        for o in objects}
        self.gets = 0

    def get(self, namespace, name):
        self.gets += 1
        try:
            return self.objects[(namespace, name)]
        except KeyError:
            raise errors.NotFound.for_object("", self.resource, name) from None


def account(name="default", **fields):
    meta = {"name": name, "namespace": NS, "uid": f"uid-{name}"}
    meta.update(fields.pop("metadata", {}))
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta, **fields}


def make_plugin(*accounts, namespace_phase="Active"):
    namespaces = [] if namespace_phase is None else [
        {"metadata": {"name": NS}, "status": {"phase": namespace_phase}}]
    server = SimpleNamespace(registries={
        ("", "namespaces"): Registry("namespaces", namespaces),
        ("", "serviceaccounts"): Registry("serviceaccounts", accounts)})
    sleeps = []
    plugin = ServiceAccountAdmission(server, sleep=sleeps.append)
    # No informers here (no watch cache): every lookup is the live one, as for an
    # account the lister does not have yet.
    plugin.listed_account = lambda namespace, name: None
    plugin.sleeps = sleeps
    plugin.accounts = server.registries[("", "serviceaccounts")]
    return plugin


def pod(name="p", annotations=None, **spec):
    meta = {"name": name, "namespace": NS}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "app", "image": "nginx"}], **spec}}


def attributes(obj, operation=CREATE, subresource="", resource=PODS):
    return SimpleNamespace(operation=operation, object=obj, old_object=None, namespace=NS,
                           name="" if operation == CREATE else obj["metadata"]["name"],
                           resource=resource, subresource=subresource, kind=resource.kind,
                           user=None, dry_run=False)


def admit(plugin, obj, **kwargs):
    attrs = attributes(obj, **kwargs)
    plugin.admit(attrs)
    plugin.validate(attrs)
    return obj


def refusal(plugin, obj, **kwargs):
    with pytest.raises(errors.StatusError) as info:
        admit(plugin, obj, **kwargs)
    return info.value


# -- mutations -------------------------------------------------------------------------------

def test_a_pod_gets_the_default_account_and_its_token_volume_in_every_container():
    obj = admit(make_plugin(account()), pod(initContainers=[{"name": "init", "image": "busybox"}]))
    spec = obj["spec"]
    assert spec["serviceAccountName"] == spec["serviceAccount"] == "default"
    [volume] = spec["volumes"]
    assert re.fullmatch(r"kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}", volume["name"])
    assert volume == {"name": volume["name"], "projected": token_volume_source()}
    assert volume["projected"] == {
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt",
                           "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {
                "apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}],
        "defaultMode": 420}
    mount = dict(MOUNT, name=volume["name"])
    for container in spec["initContainers"] + spec["containers"]:
        assert container["volumeMounts"] == [mount]
    # Go's PodSpec order: volumes first, the alias right after the name.
    assert list(spec)[0] == "volumes"
    keys = list(spec)
    assert keys.index("serviceAccount") == keys.index("serviceAccountName") + 1


def test_the_named_account_is_used_and_the_deprecated_alias_is_read():
    plugin = make_plugin(account("builder"))
    assert admit(plugin, pod(serviceAccountName="builder"))["spec"]["serviceAccount"] == \
        "builder"
    obj = admit(plugin, pod(serviceAccount="builder"))
    assert obj["spec"]["serviceAccountName"] == "builder"


def test_containers_mounting_the_token_path_already_are_left_alone():
    own = {"name": "mine", "mountPath": TOKEN_MOUNT_PATH}
    obj = admit(make_plugin(account()), pod(
        volumes=[{"name": "mine", "emptyDir": {}}],
        containers=[{"name": "a", "image": "x", "volumeMounts": [own]},
                    {"name": "b", "image": "x"}]))
    a, b = obj["spec"]["containers"]
    assert a["volumeMounts"] == [own]
    assert b["volumeMounts"][0]["mountPath"] == TOKEN_MOUNT_PATH
    assert [v["name"] for v in obj["spec"]["volumes"]][0] == "mine"
    assert len(obj["spec"]["volumes"]) == 2
    # Nobody needs the token: no volume is added.
    obj = admit(make_plugin(account()), pod(
        volumes=[{"name": "mine", "emptyDir": {}}],
        containers=[{"name": "a", "image": "x", "volumeMounts": [own]}]))
    assert [v["name"] for v in obj["spec"]["volumes"]] == ["mine"]


def test_an_existing_kube_api_access_volume_is_reused():
    volume = {"name": "kube-api-access-abcde", "projected": token_volume_source()}
    obj = admit(make_plugin(account()), pod(volumes=[volume]))
    assert [v["name"] for v in obj["spec"]["volumes"]] == ["kube-api-access-abcde"]
    assert obj["spec"]["containers"][0]["volumeMounts"] == [
        dict(MOUNT, name="kube-api-access-abcde")]


@pytest.mark.parametrize("pod_says, account_says, mounted", [
    (False, None, False), (None, False, False), (True, False, True), (False, True, False),
    (None, True, True)])
def test_automount_opt_out_the_pods_preference_wins(pod_says, account_says, mounted):
    fields = {} if account_says is None else {"automountServiceAccountToken": account_says}
    spec = {} if pod_says is None else {"automountServiceAccountToken": pod_says}
    obj = admit(make_plugin(account(**fields)), pod(**spec))
    assert ("volumes" in obj["spec"]) is mounted
    assert ("volumeMounts" in obj["spec"]["containers"][0]) is mounted
    assert obj["spec"]["serviceAccountName"] == "default"


def test_image_pull_secrets_come_from_the_account_when_the_pod_has_none():
    sa = account(imagePullSecrets=[{"name": "registry"}, {"name": "mirror"}])
    obj = admit(make_plugin(sa), pod())
    assert obj["spec"]["imagePullSecrets"] == [{"name": "registry"}, {"name": "mirror"}]
    obj = admit(make_plugin(sa), pod(imagePullSecrets=[{"name": "own"}]))
    assert obj["spec"]["imagePullSecrets"] == [{"name": "own"}]
    assert "imagePullSecrets" not in admit(make_plugin(account()), pod())["spec"]


def test_updates_other_resources_and_subresources_are_not_touched():
    plugin = make_plugin()  # no account at all: any lookup would refuse
    existing = pod(serviceAccountName="gone")
    admit(plugin, existing, operation=UPDATE)
    assert "volumes" not in existing["spec"]
    admit(plugin, pod(), subresource="status")
    other = ResourceSpec(group="", version="v1", kind="PodTemplate", resource="podtemplates",
                         singular="podtemplate", namespaced=True)
    admit(plugin, {"metadata": {"name": "t"}, "template": {}}, resource=other)
    assert plugin.accounts.gets == 0


# -- refusals --------------------------------------------------------------------------------

def test_a_missing_account_is_refused_as_upstream():
    plugin = make_plugin()
    err = refusal(plugin, pod("p0"))
    assert (err.code, err.reason) == (403, "Forbidden")
    assert err.message == ('pods "p0" is forbidden: error looking up service account '
                           'team/default: serviceaccount "default" not found')
    assert err.details == {"name": "p0", "kind": "pods"}
    # The default account is looked for ten times (the controller may be about to make
    # it), 100 to 200 ms apart; any other only once.
    assert plugin.accounts.gets == 10
    assert len(plugin.sleeps) == 9 and all(0.1 <= s <= 0.2 for s in plugin.sleeps)
    plugin = make_plugin()
    err = refusal(plugin, pod("p1", serviceAccountName="robot"))
    assert err.message == ('pods "p1" is forbidden: error looking up service account '
                           'team/robot: serviceaccount "robot" not found')
    assert plugin.accounts.gets == 1 and plugin.sleeps == []


def test_the_default_account_made_meanwhile_is_found():
    plugin = make_plugin()
    real_get = plugin.accounts.get

    def get(namespace, name):
        if plugin.accounts.gets == 3:
            plugin.accounts.objects[(NS, "default")] = account()
        return real_get(namespace, name)

    plugin.accounts.get = get
    obj = admit(plugin, pod())
    assert obj["spec"]["volumes"]
    assert len(plugin.sleeps) == 3


def test_a_pod_without_a_name_yet_is_named_by_its_generate_name():
    obj = pod()
    obj["metadata"] = {"generateName": "web-", "namespace": NS}
    assert refusal(make_plugin(), obj).message.startswith('pods "web-" is forbidden: ')


def test_missing_and_terminating_namespaces_are_left_to_namespace_lifecycle():
    for phase in (None, "Terminating"):
        plugin = make_plugin(namespace_phase=phase)
        obj = admit(plugin, pod())
        assert "serviceAccountName" not in obj["spec"]
        # One look for the account, no wait for its return.
        assert plugin.accounts.gets == 1 and plugin.sleeps == []


MIRROR = {"kubernetes.io/config.mirror": "hash"}


def test_mirror_pods_are_not_mutated_and_reference_no_account_nor_secret():
    plugin = make_plugin(account())
    obj = admit(plugin, pod(annotations=MIRROR))
    assert obj["spec"] == pod()["spec"]
    for spec, message in (
            ({"serviceAccountName": "default"},
             "a mirror pod may not reference service accounts"),
            ({"imagePullSecrets": [{"name": "pull"}]}, "a mirror pod may not reference secrets"),
            ({"volumes": [{"name": "v", "csi": {"driver": "d",
                                                "nodePublishSecretRef": {"name": "s"}}}]},
             "a mirror pod may not reference secrets"),
            ({"containers": [{"name": "app", "image": "x", "envFrom": [
                {"secretRef": {"name": "s"}}]}]}, "a mirror pod may not reference secrets"),
            ({"volumes": [{"name": "v", "projected": {"sources": [
                {"serviceAccountToken": {"path": "t"}}]}}]},
             "a mirror pod may not use ServiceAccountToken volume projections")):
        err = refusal(plugin, pod("static", annotations=MIRROR, **spec))
        assert (err.code, err.message) == (403, f'pods "static" is forbidden: {message}')


ENFORCING = {"annotations": {"kubernetes.io/enforce-mountable-secrets": "true"}}


@pytest.mark.parametrize("spec, message", [
    ({"volumes": [{"name": "v", "secret": {"secretName": "other"}}]},
     'volume with secret.secretName="other" is not allowed because service account default '
     'does not reference that secret'),
    ({"initContainers": [{"name": "i", "image": "x", "env": [
        {"name": "PW", "valueFrom": {"secretKeyRef": {"name": "other", "key": "k"}}}]}]},
     'init container i with envVar PW referencing secret.secretName="other" is not allowed '
     'because service account default does not reference that secret'),
    ({"containers": [{"name": "app", "image": "x", "envFrom": [
        {"secretRef": {"name": "other"}}]}]},
     'container app with envFrom referencing secret.secretName="other" is not allowed '
     'because service account default does not reference that secret'),
    ({"imagePullSecrets": [{"name": "pull"}, {"name": "other"}]},
     'imagePullSecrets[1].name="other" is not allowed because service account default does '
     'not reference that imagePullSecret'),
])
def test_enforce_mountable_secrets_limits_the_pods_secrets(spec, message):
    sa = account(metadata=ENFORCING, secrets=[{"name": "allowed"}],
                 imagePullSecrets=[{"name": "pull"}])
    err = refusal(make_plugin(sa), pod(**spec))
    assert (err.code, err.message) == (403, f'pods "p" is forbidden: {message}')
    # What the account lists is fine; without the annotation anything is.
    admit(make_plugin(sa), pod(volumes=[{"name": "v", "secret": {"secretName": "allowed"}}]))
    admit(make_plugin(account(secrets=[{"name": "allowed"}])), pod(**spec))


def test_ephemeral_containers_may_only_use_the_accounts_secrets_when_enforced():
    sa = account(metadata=ENFORCING, secrets=[{"name": "allowed"}])
    debug = {"name": "debug", "image": "busybox", "env": [
        {"name": "T", "valueFrom": {"secretKeyRef": {"name": "other", "key": "k"}}}]}
    existing = pod(serviceAccountName="default", ephemeralContainers=[debug])
    err = refusal(make_plugin(sa), existing, operation=UPDATE, subresource="ephemeralcontainers")
    assert (err.code, err.reason) == (500, "")
    assert err.message == ('ephemeral container debug with envVar T referencing '
                           'secret.secretName="other" is not allowed because service account '
                           'default does not reference that secret')
    admit(make_plugin(account()), existing, operation=UPDATE, subresource="ephemeralcontainers")
    err = refusal(make_plugin(sa), pod(ephemeralContainers=[debug]), operation=UPDATE,
                  subresource="ephemeralcontainers")
    assert err.message == 'pods "p" is forbidden: no service account specified for pod team/p'
