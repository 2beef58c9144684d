"""ServiceAccount admission: every pod runs as a service account and gets its API token
(``plugin/pkg/admission/serviceaccount``).

On create a pod without ``serviceAccountName`` gets ``default``; the service account must
exist (the ``default`` one is waited for a moment, as the controller making it may not
have caught up with a new namespace); unless the pod or its service account opts out
(``automountServiceAccountToken: false``), a projected ``kube-api-access-xxxxx`` volume
(a bound token, the ``kube-root-ca.crt`` ConfigMap, the namespace) is mounted read-only at
``/var/run/secrets/kubernetes.io/serviceaccount`` into every init and app container that
mounts nothing there yet; a pod without ``imagePullSecrets`` gets its service account's.
Mirror pods (made by a kubelet from a static manifest) are left alone but may reference
neither service accounts nor secrets. A service account annotated
``kubernetes.io/enforce-mountable-secrets: "true"`` limits the secrets its pods (and
ephemeral containers added later) may use to those it lists. Enabled by default, as in
kube-apiserver 1.32.
"""

from __future__ import annotations

import copy
import random
import time

from kapiserver import errors
from kapiserver.admission import CREATE, UPDATE, AdmissionPlugin
from kapiserver.admission.informers import informers_for
from kapiserver.apis.core.helpers import MIRROR_POD_ANNOTATION_KEY

DEFAULT_SERVICE_ACCOUNT = "default"
ENFORCE_MOUNTABLE_SECRETS = "kubernetes.io/enforce-mountable-secrets"
#: The prefix of the token volume's generated name (``ServiceAccountVolumeName``).
VOLUME_PREFIX = "kube-api-access-"
TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
ROOT_CA_CONFIGMAP = "kube-root-ca.crt"
#: ``serviceaccount.WarnOnlyBoundTokenExpirationSeconds``: an hour and seven seconds, so
#: that a token of this exact lifetime marks a pod using the projected volume.
TOKEN_EXPIRATION_SECONDS = 3607
#: ``corev1.ProjectedVolumeSourceDefaultMode`` (0644), set explicitly as upstream does.
PROJECTED_DEFAULT_MODE = 0o644
#: How often the ``default`` service account is looked for before a pod is refused, and
#: the wait between two looks (upstream: 10 tries, 100–200 ms apart).
DEFAULT_ACCOUNT_ATTEMPTS = 10
RETRY_INTERVAL = (0.1, 0.2)
#: ``utilrand.String``'s alphabet (no vowels, no look-alike digits) and
#: ``SimpleNameGenerator``'s suffix length.
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_NAME_SUFFIX = 5


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _dicts(value) -> list[dict]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _name(ref) -> str:
    name = _dict(ref).get("name")
    return name if isinstance(name, str) else ""


def generate_volume_name() -> str:
    """``names.SimpleNameGenerator.GenerateName("kube-api-access-")``."""
    return VOLUME_PREFIX + "".join(random.choice(_NAME_ALPHABET) for _ in range(_NAME_SUFFIX))


def token_volume_source() -> dict:
    """``TokenVolumeSource()``: the projected volume holding the pod's API credentials."""
    return {
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION_SECONDS,
                                     "path": "token"}},
            {"configMap": {"name": ROOT_CA_CONFIGMAP,
                           "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {
                "apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
        ],
        "defaultMode": PROJECTED_DEFAULT_MODE,
    }


def should_automount(account: dict, spec: dict) -> bool:
    """``shouldAutomount``: the pod's preference wins, then the service account's."""
    if isinstance(spec.get("automountServiceAccountToken"), bool):
        return spec["automountServiceAccountToken"]
    if isinstance(account.get("automountServiceAccountToken"), bool):
        return account["automountServiceAccountToken"]
    return True


def mount_service_account_token(spec: dict, generate_name=generate_volume_name) -> None:
    """``mountServiceAccountToken``: mount the token volume into every init and app
    container that has nothing at the token path yet, adding the volume if one needs it.

    A volume named ``kube-api-access-*`` already there is reused (a pod re-created from
    another's spec keeps its volume); ephemeral containers, added later through their
    subresource, are not touched, as upstream.
    """
    volumes = spec.get("volumes") if isinstance(spec.get("volumes"), list) else []
    name = next((v["name"] for v in _dicts(volumes)
                 if isinstance(v.get("name"), str) and v["name"].startswith(VOLUME_PREFIX)), "")
    has_volume = bool(name)
    name = name or generate_name()
    needs_volume = False
    for field in ("initContainers", "containers"):
        for container in _dicts(spec.get(field)):
            mounts = container.get("volumeMounts")
            if not isinstance(mounts, list):
                mounts = container["volumeMounts"] = []
            if any(m.get("mountPath") == TOKEN_MOUNT_PATH for m in _dicts(mounts)):
                continue
            mounts.append({"name": name, "readOnly": True, "mountPath": TOKEN_MOUNT_PATH})
            needs_volume = True
    if needs_volume and not has_volume:
        spec["volumes"] = list(volumes) + [{"name": name, "projected": token_volume_source()}]


def pod_secret_names(spec: dict):
    """Every secret a pod spec names (``podutil.VisitPodSecretNames`` over all containers,
    empty names skipped)."""
    names = [_name(ref) for ref in _dicts(spec.get("imagePullSecrets"))]
    for field in ("initContainers", "containers", "ephemeralContainers"):
        for container in _dicts(spec.get(field)):
            names += [_name(_dict(e.get("secretRef"))) for e in _dicts(container.get("envFrom"))]
            names += [_name(_dict(_dict(e.get("valueFrom")).get("secretKeyRef")))
                      for e in _dicts(container.get("env"))]
    for volume in _dicts(spec.get("volumes")):
        names += _volume_secret_names(volume)
    return [name for name in names if name]


#: Volume sources naming a secret through ``secretRef`` (a LocalObjectReference or a
#: SecretReference, both with ``name``).
_SECRET_REF_SOURCES = ("cephfs", "cinder", "flexVolume", "rbd", "scaleIO", "iscsi",
                       "storageos")


def _volume_secret_names(volume: dict) -> list[str]:
    if isinstance(volume.get("azureFile"), dict):
        name = volume["azureFile"].get("secretName")
        return [name] if isinstance(name, str) else []
    for source in _SECRET_REF_SOURCES:
        if isinstance(volume.get(source), dict):
            return [_name(volume[source].get("secretRef"))]
    if isinstance(volume.get("projected"), dict):
        return [_name(s.get("secret")) for s in _dicts(volume["projected"].get("sources"))
                if isinstance(s.get("secret"), dict)]
    if isinstance(volume.get("secret"), dict):
        name = volume["secret"].get("secretName")
        return [name] if isinstance(name, str) else []
    if isinstance(volume.get("csi"), dict):
        return [_name(volume["csi"].get("nodePublishSecretRef"))]
    return []


def enforces_mountable_secrets(account: dict) -> bool:
    """The service account's ``kubernetes.io/enforce-mountable-secrets`` annotation, read
    as Go's ``strconv.ParseBool`` (anything unreadable is false)."""
    value = _dict(_dict(account.get("metadata")).get("annotations")).get(
        ENFORCE_MOUNTABLE_SECRETS)
    return value in ("1", "t", "T", "TRUE", "true", "True")


def _env_refusal(kind: str, container: dict, mountable: set, account_name: str) -> str:
    """The first secret ``container``'s environment names that the service account does
    not list, worded as upstream (``""`` when none)."""
    for env in _dicts(container.get("env")):
        secret = _name(_dict(_dict(env.get("valueFrom")).get("secretKeyRef")))
        if isinstance(_dict(env.get("valueFrom")).get("secretKeyRef"), dict) and \
                secret not in mountable:
            return (f"{kind} {container.get('name', '')} with envVar {env.get('name', '')} "
                    f"referencing secret.secretName=\"{secret}\" is not allowed because "
                    f"service account {account_name} does not reference that secret")
    for env_from in _dicts(container.get("envFrom")):
        if isinstance(env_from.get("secretRef"), dict):
            secret = _name(env_from["secretRef"])
            if secret not in mountable:
                return (f"{kind} {container.get('name', '')} with envFrom referencing "
                        f"secret.secretName=\"{secret}\" is not allowed because service "
                        f"account {account_name} does not reference that secret")
    return ""


def secret_reference_refusal(account: dict, spec: dict) -> str:
    """``limitSecretReferences``: why the pod may not use a secret, or ``""``."""
    name = _dict(account.get("metadata")).get("name", "")
    mountable = {_name(ref) for ref in _dicts(account.get("secrets"))}
    for volume in _dicts(spec.get("volumes")):
        if isinstance(volume.get("secret"), dict):
            secret = volume["secret"].get("secretName") or ""
            if secret not in mountable:
                return (f"volume with secret.secretName=\"{secret}\" is not allowed because "
                        f"service account {name} does not reference that secret")
    for field, kind in (("initContainers", "init container"), ("containers", "container")):
        for container in _dicts(spec.get(field)):
            refusal = _env_refusal(kind, container, mountable, name)
            if refusal:
                return refusal
    pull_secrets = {_name(ref) for ref in _dicts(account.get("imagePullSecrets"))}
    for index, ref in enumerate(_dicts(spec.get("imagePullSecrets"))):
        if _name(ref) not in pull_secrets:
            return (f"imagePullSecrets[{index}].name=\"{_name(ref)}\" is not allowed because "
                    f"service account {name} does not reference that imagePullSecret")
    return ""


def ephemeral_secret_refusal(account: dict, spec: dict) -> str:
    """``limitEphemeralContainerSecretReferences``' check of the ephemeral containers."""
    name = _dict(account.get("metadata")).get("name", "")
    mountable = {_name(ref) for ref in _dicts(account.get("secrets"))}
    for container in _dicts(spec.get("ephemeralContainers")):
        refusal = _env_refusal("ephemeral container", container, mountable, name)
        if refusal:
            return refusal
    return ""


class ServiceAccountAdmission(AdmissionPlugin):
    """Upstream's ``ServiceAccount`` plugin (see the module docstring)."""

    name = "ServiceAccount"
    operations = frozenset({CREATE, UPDATE})

    def __init__(self, server, sleep=time.sleep):
        self.server = server
        self.sleep = sleep

    # -- what it looks at ----------------------------------------------------------------

    @staticmethod
    def _ignores(attributes) -> bool:
        """``shouldIgnore``: anything but pods and their ephemeral containers."""
        spec = attributes.resource
        if spec.group != "" or spec.resource != "pods" or \
                attributes.subresource not in ("", "ephemeralcontainers"):
            return True
        return not isinstance(attributes.object, dict)

    def _namespace_refused(self, namespace: str) -> bool:
        """Whether NamespaceLifecycle will refuse the create: it runs before this plugin
        in kube-apiserver, so a pod in a missing or terminating namespace never meets the
        service-account lookup (and its wait) there. Asked only when the account is
        missing: a pod whose account exists gets it, as from upstream's plugin."""
        try:
            obj = self.server.registries[("", "namespaces")].get("", namespace)
        except errors.NotFound:
            return True
        return _dict(obj.get("status")).get("phase") == "Terminating"

    def listed_account(self, namespace: str, name: str) -> dict | None:
        """The service account as upstream's lister has it (the informer, caught up with
        the request), a copy the caller may change; None when it is not there."""
        account = informers_for(self.server).informer("", "serviceaccounts").get(namespace,
                                                                                  name)
        return None if account is None else copy.deepcopy(account)

    def service_account(self, namespace: str, name: str,
                        namespace_check: bool = False) -> dict | None:
        """``getServiceAccount``: the service account, looked for again for a while when
        it is the ``default`` one the controller may be about to create; raises
        ``NotFound`` worded as upstream's (``serviceaccount "x" not found``). With
        ``namespace_check``, None when it is missing and its namespace too, or the
        namespace is terminating (``_namespace_refused``): no wait for an account that
        will not come."""
        listed = self.listed_account(namespace, name)
        if listed is not None:
            return listed
        # Not listed: looked up live (again, for a while, for the default account).
        registry = self.server.registries[("", "serviceaccounts")]
        attempts = DEFAULT_ACCOUNT_ATTEMPTS if name == DEFAULT_SERVICE_ACCOUNT else 1
        # Upstream draws one interval per lookup.
        interval = random.uniform(*RETRY_INTERVAL)
        for attempt in range(attempts):
            if attempt:
                self.sleep(interval)
            try:
                return registry.get(namespace, name)
            except errors.NotFound:
                pass
            if namespace_check and not attempt and self._namespace_refused(namespace):
                return None
        raise errors.NotFound(f"serviceaccount {errors.go_quote(name)} not found",
                              errors.status_details(name=name, kind="serviceaccount"))

    def _account_or_refuse(self, attributes, name: str,
                           namespace_check: bool = False) -> dict | None:
        try:
            return self.service_account(attributes.namespace, name, namespace_check)
        except errors.StatusError as err:
            raise _forbidden(attributes, f"error looking up service account "
                                         f"{attributes.namespace}/{name}: {err.message}") from None

    # -- admission -----------------------------------------------------------------------

    def admit(self, attributes):
        if self._ignores(attributes) or attributes.operation != CREATE:
            return  # pods are only mutated as they are created
        pod = attributes.object
        meta = _dict(pod.get("metadata"))
        if MIRROR_POD_ANNOTATION_KEY in _dict(meta.get("annotations")):
            # Left as the kubelet wrote it, but checked at once (upstream's Admit ends by
            # validating, so its refusals come before the object's validation).
            self._validate_mirror_pod(attributes, _dict(pod.get("spec")))
            return
        spec = pod.get("spec")
        # ``serviceAccount`` is the deprecated alias: the name wins when both are given
        # (v1 conversion), and the alias always echoes the name on the way out.
        name = (_dict(spec).get("serviceAccountName") or _dict(spec).get("serviceAccount")
                or DEFAULT_SERVICE_ACCOUNT)
        # A pod whose namespace is missing or terminating is left alone (NamespaceLifecycle
        # refuses it: it runs first in kube-apiserver).
        account = self._account_or_refuse(attributes, name, namespace_check=True)
        if account is None:
            return
        if not isinstance(spec, dict):
            spec = pod["spec"] = {}
        if not spec.get("serviceAccountName"):
            spec["serviceAccountName"] = name
        if should_automount(account, spec):
            mount_service_account_token(spec)
        if not spec.get("imagePullSecrets"):
            pull = [{"name": _name(ref)} for ref in _dicts(account.get("imagePullSecrets"))]
            if pull:
                spec["imagePullSecrets"] = pull
        spec["serviceAccount"] = spec["serviceAccountName"]
        _normalize(pod)
        self._validate_create(attributes, _dict(pod.get("spec")), account)

    def validate(self, attributes):
        if self._ignores(attributes):
            return
        pod = attributes.object
        spec = _dict(pod.get("spec"))
        if attributes.operation == UPDATE:
            if attributes.subresource == "ephemeralcontainers":
                self._validate_ephemeral_containers(attributes, spec)
            return  # pod specs are only checked as pods are created
        meta = _dict(pod.get("metadata"))
        if MIRROR_POD_ANNOTATION_KEY in _dict(meta.get("annotations")):
            self._validate_mirror_pod(attributes, spec)
            return
        if not spec.get("serviceAccountName") and self._namespace_refused(attributes.namespace):
            return  # left alone by admit: NamespaceLifecycle refuses it
        self._validate_create(attributes, spec)

    def _validate_create(self, attributes, spec: dict, account: dict | None = None) -> None:
        """The service account named exists; with ``enforce-mountable-secrets``, the pod
        uses only the secrets it lists. ``account``: the one admit just read."""
        meta = _dict(attributes.object.get("metadata"))
        name = spec.get("serviceAccountName")
        if not name:
            raise _forbidden(attributes, f"no service account specified for pod "
                                         f"{attributes.namespace}/{meta.get('name', '')}")
        if account is None or _dict(account.get("metadata")).get("name") != name:
            account = self._account_or_refuse(attributes, name, namespace_check=True)
            if account is None:
                return  # the namespace is missing or terminating: as in admit
        if enforces_mountable_secrets(account):
            refusal = secret_reference_refusal(account, spec)
            if refusal:
                raise _forbidden(attributes, refusal)

    def _validate_mirror_pod(self, attributes, spec: dict) -> None:
        if spec.get("serviceAccountName"):
            raise _forbidden(attributes, "a mirror pod may not reference service accounts")
        if pod_secret_names(spec):
            raise _forbidden(attributes, "a mirror pod may not reference secrets")
        for volume in _dicts(spec.get("volumes")):
            if any(isinstance(source.get("serviceAccountToken"), dict)
                   for source in _dicts(_dict(volume.get("projected")).get("sources"))):
                raise _forbidden(attributes, "a mirror pod may not use ServiceAccountToken "
                                             "volume projections")

    def _validate_ephemeral_containers(self, attributes, spec: dict) -> None:
        name = spec.get("serviceAccountName")
        if not name:
            meta = _dict(attributes.object.get("metadata"))
            raise _forbidden(attributes, f"no service account specified for pod "
                                         f"{attributes.namespace}/{meta.get('name', '')}")
        account = self._account_or_refuse(attributes, name)
        if enforces_mountable_secrets(account):
            refusal = ephemeral_secret_refusal(account, spec)
            if refusal:
                # Upstream returns this one as a plain error, which its handlers answer
                # as a 500 without a reason.
                raise errors.Unknown(refusal)


def _forbidden(attributes, message: str) -> errors.Forbidden:
    """``admission.NewForbidden``: named after the object (``Unknown`` without a name)."""
    meta = _dict(attributes.object.get("metadata")) if isinstance(attributes.object, dict) \
        else {}
    name = attributes.name or meta.get("name") or meta.get("generateName") or "Unknown"
    return errors.Forbidden.for_resource(attributes.resource.group, attributes.resource.resource,
                                         name, message)


def _normalize(pod: dict) -> None:
    # What was added goes where Go's PodSpec puts it (volumes first, serviceAccount after
    # serviceAccountName, a mount's fields in VolumeMount's order). Only the spec changed:
    # the rest (managedFields among it) is not normalized again.
    from kapiserver.runtime.protobuf import default_codec

    spec = pod["spec"]
    normalized = default_codec().normalize_field("v1", "Pod", "spec", spec)
    spec.clear()
    spec.update(normalized)
