"""Defaults of the pod spec, as kube-apiserver 1.32 fills them in (``pkg/apis/core/v1``).

Ports ``SetDefaults_Pod``, ``SetDefaults_PodSpec``, ``SetDefaults_Container``, the volume
sources' and probes' defaults and the declarative ``+default`` tags of ``k8s.io/api``
(ports' protocol, RBD, iSCSI, Azure disk, ScaleIO, gRPC probes), walked as the generated
``SetObjectDefaults_Pod`` and ``SetObjectDefaults_PodTemplate`` walk them. Every workload
kind embeds a pod template and calls :func:`set_pod_template_spec_defaults` on it; only a
Pod gets :func:`set_pod_defaults` (requests copied from limits, ``enableServiceLinks``,
host-network ports), as upstream keeps those out of templates.

Objects are the decoded JSON dicts, changed in place; values of the wrong JSON type are
left for validation (or the codec) to refuse.
"""

from __future__ import annotations

from ...apimachinery import quantity as _quantity
from .imageref import default_pull_policy

DEFAULT_TERMINATION_MESSAGE_PATH = "/dev/termination-log"
DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30
#: 0644, the ``defaultMode`` of secret, configMap, downwardAPI and projected volumes.
DEFAULT_VOLUME_MODE = 0o644
#: ``SetDefaults_ServiceAccountTokenProjection``: an hour.
DEFAULT_TOKEN_EXPIRATION_SECONDS = 3600

#: Every ``VolumeSource`` member, in the Go struct's order.
VOLUME_SOURCES = (
    "hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret",
    "nfs", "iscsi", "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder",
    "cephfs", "flocker", "downwardAPI", "fc", "azureFile", "configMap", "vsphereVolume",
    "quobyte", "azureDisk", "photonPersistentDisk", "projected", "portworxVolume", "scaleIO",
    "storageos", "csi", "ephemeral", "image",
)
_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")
_PROBES = ("livenessProbe", "readinessProbe", "startupProbe")


def _dict(value) -> dict | None:
    return value if isinstance(value, dict) else None


def _member(obj, key) -> dict | None:
    """``obj[key]`` when both are JSON objects, else ``None``."""
    if not isinstance(obj, dict):
        return None
    value = obj.get(key)
    return value if isinstance(value, dict) else None


def _dicts(value) -> list[dict]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


# -- resource lists -------------------------------------------------------------------------

def round_up_milli(value: _quantity.Quantity) -> _quantity.Quantity:
    """``Quantity.RoundUp(-3)``: a quantity finer than a thousandth is rounded away from
    zero to thousandths (``0.0001`` becomes ``1m``); others are kept as they are."""
    limit = _quantity.MAX_MILLI_VALUE
    if value.cmp_int64(limit) > 0 or value.cmp_int64(-limit) < 0:
        return _round_up_large(value)
    milli = value.milli_value()
    rounded = _quantity.new_milli_quantity(milli, value.format or _quantity.DECIMAL_SI)
    return value if rounded.cmp(value) == 0 else rounded


_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12,
                     "P": 15, "E": 18}


def _round_up_large(value: _quantity.Quantity) -> _quantity.Quantity:
    # Beyond int64 thousandths Go holds an inf.Dec and rounds it exactly; so does this,
    # from the exact canonical text of the value (binary forms are whole numbers here).
    text = value.canonical()
    if "e" in text:
        digits, _, power = text.partition("e")
        exponent, suffix = int(power), "e-3"
    else:
        digits = text.rstrip("numkMGTPE")
        if text[len(digits):] not in _DECIMAL_SUFFIXES:
            return value
        exponent, suffix = _DECIMAL_SUFFIXES[text[len(digits):]], "m"
    if exponent >= -3 or not digits.lstrip("-").isdigit():
        return value
    unit = 10 ** (-3 - exponent)
    number = int(digits)
    milli = (abs(number) + unit - 1) // unit * (1 if number >= 0 else -1)  # away from zero
    return _quantity.parse(f"{milli}{suffix}")


def set_resource_list_defaults(resources) -> None:
    """``SetDefaults_ResourceList``: every quantity rounded up to thousandths (upstream's
    compatibility rounding, #18538) and written in its canonical form. Values that do not
    parse are left for validation to report."""
    if not isinstance(resources, dict):
        return
    for name, value in resources.items():
        try:
            parsed = _quantity.from_json(value)
        except (_quantity.QuantityError, ValueError, TypeError):
            continue
        resources[name] = round_up_milli(parsed).canonical()


def _set_requirements_defaults(requirements) -> None:
    requirements = _dict(requirements)
    if requirements is not None:
        set_resource_list_defaults(requirements.get("limits"))
        set_resource_list_defaults(requirements.get("requests"))


# -- containers ------------------------------------------------------------------------------

def _set_http_get_defaults(handler) -> None:
    http_get = _member(handler, "httpGet")
    if http_get is None:
        return
    if not http_get.get("path"):
        http_get["path"] = "/"
    if not http_get.get("scheme"):
        http_get["scheme"] = "HTTP"


def set_probe_defaults(probe: dict) -> None:
    """``SetDefaults_Probe`` and its handler's defaults (``httpGet`` path and scheme, the
    gRPC ``service`` of ``+default=""``)."""
    for key, default in (("timeoutSeconds", 1), ("periodSeconds", 10),
                         ("successThreshold", 1), ("failureThreshold", 3)):
        if not probe.get(key):
            probe[key] = default
    _set_http_get_defaults(probe)
    grpc = _dict(probe.get("grpc"))
    if grpc is not None and grpc.get("service") is None:
        grpc["service"] = ""


def _set_field_ref_defaults(field_ref) -> None:
    # SetDefaults_ObjectFieldSelector
    field_ref = _dict(field_ref)
    if field_ref is not None and not field_ref.get("apiVersion"):
        field_ref["apiVersion"] = "v1"


def set_container_defaults(container: dict) -> None:
    """``SetDefaults_Container`` and what the generated defaulter adds for a container:
    ports' protocol, env ``fieldRef.apiVersion``, resource lists, probes, lifecycle."""
    if not container.get("imagePullPolicy"):
        image = container.get("image")
        container["imagePullPolicy"] = default_pull_policy(image if isinstance(image, str)
                                                           else "")
    if not container.get("terminationMessagePath"):
        container["terminationMessagePath"] = DEFAULT_TERMINATION_MESSAGE_PATH
    if not container.get("terminationMessagePolicy"):
        container["terminationMessagePolicy"] = "File"
    for port in _dicts(container.get("ports")):
        if not port.get("protocol"):
            port["protocol"] = "TCP"
    for env in _dicts(container.get("env")):
        value_from = _dict(env.get("valueFrom"))
        if value_from is not None:
            _set_field_ref_defaults(value_from.get("fieldRef"))
    _set_requirements_defaults(container.get("resources"))
    for key in _PROBES:
        probe = _dict(container.get(key))
        if probe is not None:
            set_probe_defaults(probe)
    lifecycle = _dict(container.get("lifecycle"))
    if lifecycle is not None:
        _set_http_get_defaults(lifecycle.get("postStart"))
        _set_http_get_defaults(lifecycle.get("preStop"))


# -- volumes -----------------------------------------------------------------------------------

def _default_mode(source) -> None:
    source = _dict(source)
    if source is not None and source.get("defaultMode") is None:
        source["defaultMode"] = DEFAULT_VOLUME_MODE


def _set_string_defaults(source, defaults) -> None:
    source = _dict(source)
    if source is None:
        return
    for key, value in defaults:
        if not source.get(key):
            source[key] = value


def _set_pointer_defaults(source, defaults) -> None:
    source = _dict(source)
    if source is None:
        return
    for key, value in defaults:
        if source.get(key) is None:
            source[key] = value


def set_volume_defaults(volume: dict) -> None:
    """``SetDefaults_Volume`` (an ``emptyDir`` when no source is given) and every volume
    source's defaults."""
    if all(volume.get(key) is None for key in VOLUME_SOURCES):
        volume["emptyDir"] = {}
    host_path = _dict(volume.get("hostPath"))
    if host_path is not None and host_path.get("type") is None:
        host_path["type"] = ""
    _default_mode(volume.get("secret"))
    _set_string_defaults(volume.get("iscsi"), (("iscsiInterface", "default"),))
    _set_string_defaults(volume.get("rbd"), (("pool", "rbd"), ("user", "admin"),
                                             ("keyring", "/etc/ceph/keyring")))
    downward = _dict(volume.get("downwardAPI"))
    if downward is not None:
        _default_mode(downward)
        for item in _dicts(downward.get("items")):
            _set_field_ref_defaults(item.get("fieldRef"))
    _default_mode(volume.get("configMap"))
    _set_pointer_defaults(volume.get("azureDisk"), (("cachingMode", "ReadWrite"),
                                                    ("fsType", "ext4"), ("readOnly", False),
                                                    ("kind", "Shared")))
    projected = _dict(volume.get("projected"))
    if projected is not None:
        _default_mode(projected)
        for source in _dicts(projected.get("sources")):
            downward = _dict(source.get("downwardAPI"))
            if downward is not None:
                for item in _dicts(downward.get("items")):
                    _set_field_ref_defaults(item.get("fieldRef"))
            _set_pointer_defaults(source.get("serviceAccountToken"),
                                  (("expirationSeconds", DEFAULT_TOKEN_EXPIRATION_SECONDS),))
    _set_string_defaults(volume.get("scaleIO"), (("storageMode", "ThinProvisioned"),
                                                 ("fsType", "xfs")))
    template = _member(_member(volume, "ephemeral"), "volumeClaimTemplate")
    spec = _member(template, "spec")
    if spec is not None:
        set_persistent_volume_claim_spec_defaults(spec)


def set_persistent_volume_claim_spec_defaults(spec: dict) -> None:
    """``SetDefaults_PersistentVolumeClaimSpec`` (``volumeMode: Filesystem``) and its
    resource lists."""
    if spec.get("volumeMode") is None:
        spec["volumeMode"] = "Filesystem"
    _set_requirements_defaults(spec.get("resources"))


# -- pod specs -----------------------------------------------------------------------------------

def set_pod_spec_defaults(spec: dict) -> None:
    """The defaults of a pod spec wherever it is (``SetDefaults_PodSpec``, then volumes,
    containers and overhead as ``SetObjectDefaults_PodTemplate`` walks them)."""
    if not spec.get("dnsPolicy"):
        spec["dnsPolicy"] = "ClusterFirst"
    if not spec.get("restartPolicy"):
        spec["restartPolicy"] = "Always"
    if spec.get("securityContext") is None:
        spec["securityContext"] = {}
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS
    if not spec.get("schedulerName"):
        spec["schedulerName"] = DEFAULT_SCHEDULER_NAME
    for volume in _dicts(spec.get("volumes")):
        set_volume_defaults(volume)
    for key in _CONTAINER_LISTS:
        for container in _dicts(spec.get(key)):
            set_container_defaults(container)
    set_resource_list_defaults(spec.get("overhead"))
    _set_requirements_defaults(spec.get("resources"))


def set_pod_template_spec_defaults(template: dict) -> None:
    """A ``PodTemplateSpec``'s defaults (``{"metadata": ..., "spec": ...}``): its spec's.
    Templates get none of :func:`set_pod_defaults`."""
    if not isinstance(template, dict):
        return
    spec = template.get("spec")
    if spec is None:
        spec = template["spec"] = {}
    if isinstance(spec, dict):
        set_pod_spec_defaults(spec)


def _requests_from_limits(containers) -> None:
    for container in _dicts(containers):
        resources = _member(container, "resources")
        limits = _member(resources, "limits")
        if limits is None:
            continue
        requests = resources.get("requests")
        if not isinstance(requests, dict):
            requests = resources["requests"] = {}
        for name, value in limits.items():
            requests.setdefault(name, value)


def _host_network_ports(containers) -> None:
    for container in _dicts(containers):
        for port in _dicts(container.get("ports")):
            if not port.get("hostPort"):
                port["hostPort"] = port.get("containerPort", 0)


def set_pod_defaults(pod: dict) -> None:
    """A Pod's defaults: ``SetDefaults_Pod`` (requests default to limits, service links
    enabled, a host-network pod's container ports become host ports), then its spec's."""
    spec = pod.get("spec")
    if spec is None:
        spec = pod["spec"] = {}
    if not isinstance(spec, dict):
        return
    # Only for Pods, not templates: a controller's template must not gain requests.
    _requests_from_limits(spec.get("containers"))
    _requests_from_limits(spec.get("initContainers"))
    if spec.get("enableServiceLinks") is None:
        spec["enableServiceLinks"] = True
    if spec.get("hostNetwork") is True:
        _host_network_ports(spec.get("containers"))
        _host_network_ports(spec.get("initContainers"))
    set_pod_spec_defaults(spec)
