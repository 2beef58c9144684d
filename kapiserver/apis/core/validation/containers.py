"""Containers: regular, init and ephemeral (``validateContainers``,
``validateInitContainers``, ``validateEphemeralContainers``, ``validateContainerCommon``),
their ports, volume mounts and devices (``pkg/apis/core/validation``, 1.32)."""

from __future__ import annotations

from ....apimachinery import validation as apivalidation
from ....apimachinery.field_errors import FieldError, FieldPath, GoValue
from ....apimachinery.gosyntax import go_slice, go_str, go_struct
from .common import (d, dicts, i, invalid_each, opt, opt_bool, opt_str, s,
                     validate_dns1123_label, validate_local_descending_path,
                     validate_path_no_backsteps)
from .env import validate_env, validate_env_from
from .options import PodValidationOptions
from .probes import (validate_lifecycle, validate_liveness_probe, validate_readiness_probe,
                     validate_startup_probe)
from .resources import validate_container_resource_requirements
from .security import validate_security_context

PORT_PROTOCOLS = ("SCTP", "TCP", "UDP")
PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_TERMINATION_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")
_MOUNT_PROPAGATIONS = ("Bidirectional", "HostToContainer", "None")
_RECURSIVE_READ_ONLY = ("Disabled", "Enabled", "IfPossible")
_RESIZE_RESOURCES = ("cpu", "memory")
_RESIZE_POLICIES = ("NotRequired", "RestartContainer")
_INIT_ONLY_MESSAGE = "may not be set for init containers without restartPolicy=Always"

#: ``allowedEphemeralContainerFields``: the ``EphemeralContainerCommon`` fields in Go's
#: order, with whether an ephemeral container may set them.
_EPHEMERAL_FIELDS = (
    ("name", True), ("image", True), ("command", True), ("args", True), ("workingDir", True),
    ("ports", False), ("envFrom", True), ("env", True), ("resources", False),
    ("resizePolicy", False), ("restartPolicy", False), ("volumeMounts", True),
    ("volumeDevices", True), ("livenessProbe", False), ("readinessProbe", False),
    ("startupProbe", False), ("lifecycle", False), ("terminationMessagePath", True),
    ("terminationMessagePolicy", True), ("imagePullPolicy", True), ("securityContext", True),
    ("stdin", True), ("stdinOnce", True), ("tty", True),
)


def _is_zero(value) -> bool:
    # reflect.DeepEqual with the zero value of the Go field.
    if value is None or value is False or value == "" or value == 0:
        return True
    if isinstance(value, dict):
        return all(_is_zero(v) for v in value.values())
    return False


def validate_pull_policy(policy: str, path: FieldPath) -> list[FieldError]:
    """``validatePullPolicy``."""
    if policy in PULL_POLICIES:
        return []
    if not policy:
        return [FieldError.required(path, "")]
    return [FieldError.not_supported(path, policy, PULL_POLICIES)]


def validate_container_ports(ports: list, path: FieldPath) -> list[FieldError]:
    """``validateContainerPorts``: names unique, ports in range, a known protocol."""
    errs = []
    names: set[str] = set()
    for index, port in enumerate(dicts(ports)):
        item_path = path.index(index)
        name = s(port, "name")
        if name:
            messages = apivalidation.is_valid_port_name(name)
            if messages:
                errs += invalid_each(item_path.child("name"), name, messages)
            elif name in names:
                errs.append(FieldError.duplicate(item_path.child("name"), name))
            else:
                names.add(name)
        container_port = i(port, "containerPort")
        if container_port == 0:
            errs.append(FieldError.required(item_path.child("containerPort"), ""))
        else:
            errs += invalid_each(item_path.child("containerPort"), container_port,
                                 apivalidation.is_valid_port_num(container_port))
        host_port = i(port, "hostPort")
        if host_port != 0:
            errs += invalid_each(item_path.child("hostPort"), host_port,
                                 apivalidation.is_valid_port_num(host_port))
        protocol = s(port, "protocol")
        if not protocol:
            errs.append(FieldError.required(item_path.child("protocol"), ""))
        elif protocol not in PORT_PROTOCOLS:
            errs.append(FieldError.not_supported(item_path.child("protocol"), protocol,
                                                 PORT_PROTOCOLS))
    return errs


def _validate_mount_propagation(propagation: str, container: dict | None,
                                path: FieldPath) -> list[FieldError]:
    errs = []
    if propagation not in _MOUNT_PROPAGATIONS:
        errs.append(FieldError.not_supported(path, propagation, _MOUNT_PROPAGATIONS))
    if container is None:
        return errs
    privileged = opt_bool(d(container, "securityContext"), "privileged") is True
    if propagation == "Bidirectional" and not privileged:
        errs.append(FieldError.forbidden(path, "Bidirectional mount propagation is available "
                                               "only to privileged containers"))
    return errs


def _validate_recursive_read_only(mount: dict, path: FieldPath) -> list[FieldError]:
    value = opt_str(mount, "recursiveReadOnly")
    if value is None or value == "Disabled":
        return []
    if value in ("Enabled", "IfPossible"):
        errs = []
        if mount.get("readOnly") is not True:
            errs.append(FieldError.forbidden(path, "may only be specified when readOnly is true"))
        propagation = opt_str(mount, "mountPropagation")
        if propagation is not None and propagation != "None":
            errs.append(FieldError.forbidden(path, "may only be specified when mountPropagation "
                                                   "is None or not specified"))
        return errs
    return [FieldError.not_supported(path, value, _RECURSIVE_READ_ONLY)]


def validate_volume_mounts(mounts: list, devices: dict, volumes: dict, container: dict | None,
                           path: FieldPath) -> list[FieldError]:
    """``ValidateVolumeMounts``: mounts name known volumes, each path once."""
    errs = []
    mount_points: set[str] = set()
    device_paths = set(devices.values())
    for index, mount in enumerate(dicts(mounts)):
        item_path = path.index(index)
        name, mount_path = s(mount, "name"), s(mount, "mountPath")
        if not name:
            errs.append(FieldError.required(item_path.child("name"), ""))
        if name not in volumes:
            errs.append(FieldError.not_found(item_path.child("name"), name))
        if not mount_path:
            errs.append(FieldError.required(item_path.child("mountPath"), ""))
        if mount_path in mount_points:
            errs.append(FieldError.invalid(item_path.child("mountPath"), mount_path,
                                           "must be unique"))
        mount_points.add(mount_path)
        if name in devices:
            errs.append(FieldError.invalid(item_path.child("name"), name,
                                           "must not already exist in volumeDevices"))
        if mount_path in device_paths:
            errs.append(FieldError.invalid(item_path.child("mountPath"), mount_path,
                                           "must not already exist as a path in volumeDevices"))
        sub_path, sub_path_expr = s(mount, "subPath"), s(mount, "subPathExpr")
        volume = volumes.get(name)
        if volume is not None and opt(volume, "image") is not None:
            if sub_path:
                errs.append(FieldError.invalid(item_path.child("subPath"), sub_path,
                                               "not allowed in image volume sources"))
            if sub_path_expr:
                errs.append(FieldError.invalid(item_path.child("subPathExpr"), sub_path_expr,
                                               "not allowed in image volume sources"))
        # upstream reports these two at the list's path, without the index
        if sub_path:
            errs += validate_local_descending_path(sub_path, path.child("subPath"))
        if sub_path_expr:
            if sub_path:
                errs.append(FieldError.invalid(item_path.child("subPathExpr"), sub_path_expr,
                                               "subPathExpr and subPath are mutually exclusive"))
            errs += validate_local_descending_path(sub_path_expr, path.child("subPathExpr"))
        propagation = opt_str(mount, "mountPropagation")
        if propagation is not None:
            errs += _validate_mount_propagation(propagation, container,
                                                path.child("mountPropagation"))
        errs += _validate_recursive_read_only(mount, path.child("recursiveReadOnly"))
    return errs


def validate_volume_devices(devices: list, mounts: dict, volumes: dict,
                            path: FieldPath) -> list[FieldError]:
    """``ValidateVolumeDevices``: block devices of claims, each name and path once."""
    errs = []
    device_paths: set[str] = set()
    device_names: set[str] = set()
    mount_paths = set(mounts.values())
    for index, device in enumerate(dicts(devices)):
        item_path = path.index(index)
        name, device_path = s(device, "name"), s(device, "devicePath")
        volume = volumes.get(name)
        matched = volume is not None
        is_claim = matched and (opt(volume, "persistentVolumeClaim") is not None
                                or opt(volume, "ephemeral") is not None)
        if not name:
            errs.append(FieldError.required(item_path.child("name"), ""))
        if name in device_names:
            errs.append(FieldError.invalid(item_path.child("name"), name, "must be unique"))
        if matched and not is_claim:
            errs.append(FieldError.invalid(item_path.child("name"), name,
                                           "can only use volume source type of "
                                           "PersistentVolumeClaim or Ephemeral for block mode"))
        if not matched:
            errs.append(FieldError.not_found(item_path.child("name"), name))
        if not device_path:
            errs.append(FieldError.required(item_path.child("devicePath"), ""))
        if device_path in device_paths:
            errs.append(FieldError.invalid(item_path.child("devicePath"), device_path,
                                           "must be unique"))
        if device_path and validate_path_no_backsteps(device_path, path):
            errs.append(FieldError.invalid(item_path.child("devicePath"), device_path,
                                           "can not contain backsteps ('..')"))
        else:
            device_paths.add(device_path)
        if name in mounts:
            errs.append(FieldError.invalid(item_path.child("name"), name,
                                           "must not already exist in volumeMounts"))
        if device_path in mount_paths:
            errs.append(FieldError.invalid(item_path.child("devicePath"), device_path,
                                           "must not already exist as a path in volumeMounts"))
        if name:
            device_names.add(name)
    return errs


def _validate_resize_policy(policies: list, path: FieldPath,
                            pod_restart_policy: str) -> list[FieldError]:
    errs = []
    seen: set[str] = set()
    for index, policy in enumerate(dicts(policies)):
        resource, restart = s(policy, "resourceName"), s(policy, "restartPolicy")
        if resource in seen:
            errs.append(FieldError.duplicate(path.index(index), resource))
        seen.add(resource)
        if not resource:
            errs.append(FieldError.required(path, ""))
        elif resource not in _RESIZE_RESOURCES:
            errs.append(FieldError.not_supported(path, resource, _RESIZE_RESOURCES))
        if not restart:
            errs.append(FieldError.required(path, ""))
        elif restart not in _RESIZE_POLICIES:
            errs.append(FieldError.not_supported(path, restart, _RESIZE_POLICIES))
        if pod_restart_policy == "Never" and restart != "NotRequired":
            errs.append(FieldError.invalid(path, restart, "must be 'NotRequired' when "
                                                          "`restartPolicy` is 'Never'"))
    return errs


def _mount_map(container: dict, key: str, path_key: str) -> dict:
    # GetVolumeMountMap / GetVolumeDeviceMap: name -> path, the last one winning
    return {s(item, "name"): s(item, path_key) for item in dicts(container.get(key))}


def validate_container_common(container: dict, volumes: dict, claim_names: set[str],
                              path: FieldPath, opts: PodValidationOptions,
                              pod_restart_policy: str, host_users: bool) -> list[FieldError]:
    """``validateContainerCommon``: what every kind of container must satisfy."""
    errs = []
    name = s(container, "name")
    if not name:
        errs.append(FieldError.required(path.child("name"), ""))
    else:
        errs += validate_dns1123_label(name, path.child("name"))
    # Leading and trailing whitespace is allowed here (pod templates use " " as a token).
    if not s(container, "image"):
        errs.append(FieldError.required(path.child("image"), ""))
    policy = s(container, "terminationMessagePolicy")
    if not policy:
        errs.append(FieldError.required(path.child("terminationMessagePolicy"), ""))
    elif policy not in _TERMINATION_MESSAGE_POLICIES:
        errs.append(FieldError.not_supported(path.child("terminationMessagePolicy"), policy,
                                             _TERMINATION_MESSAGE_POLICIES))
    mounts = _mount_map(container, "volumeMounts", "mountPath")
    devices = _mount_map(container, "volumeDevices", "devicePath")
    errs += validate_container_ports(container.get("ports"), path.child("ports"))
    errs += validate_env(container.get("env"), path.child("env"), opts)
    errs += validate_env_from(container.get("envFrom"), path.child("envFrom"), opts)
    errs += validate_volume_mounts(container.get("volumeMounts"), devices, volumes, container,
                                   path.child("volumeMounts"))
    errs += validate_volume_devices(container.get("volumeDevices"), mounts, volumes,
                                    path.child("volumeDevices"))
    errs += validate_pull_policy(s(container, "imagePullPolicy"), path.child("imagePullPolicy"))
    errs += validate_container_resource_requirements(d(container, "resources"), claim_names,
                                                     path.child("resources"), opts)
    errs += _validate_resize_policy(container.get("resizePolicy"), path.child("resizePolicy"),
                                    pod_restart_policy)
    errs += validate_security_context(opt(container, "securityContext"),
                                      path.child("securityContext"), host_users, opts)
    return errs


def _host_port_conflicts(containers: list[dict], path: FieldPath,
                         seen: set[str]) -> list[FieldError]:
    # AccumulateUniqueHostPorts
    errs = []
    for index, container in enumerate(containers):
        ports_path = path.index(index).child("ports")
        for port_index, port in enumerate(dicts(container.get("ports"))):
            host_port = i(port, "hostPort")
            if host_port == 0:
                continue
            key = f"{s(port, 'protocol')}/{s(port, 'hostIP')}/{host_port}"
            if key in seen:
                errs.append(FieldError.duplicate(ports_path.index(port_index).child("hostPort"),
                                                 key))
            else:
                seen.add(key)
    return errs


def validate_containers(containers: list, volumes: dict, claim_names: set[str],
                        grace_period: int | None, path: FieldPath, opts: PodValidationOptions,
                        pod_restart_policy: str, host_users: bool) -> list[FieldError]:
    """``validateContainers``: at least one, unique names, probes and hooks, host ports."""
    containers = dicts(containers)
    if not containers:
        return [FieldError.required(path, "")]
    errs = []
    names: set[str] = set()
    for index, container in enumerate(containers):
        item_path = path.index(index)
        errs += validate_container_common(container, volumes, claim_names, item_path, opts,
                                          pod_restart_policy, host_users)
        name = s(container, "name")
        if name in names:
            errs.append(FieldError.duplicate(item_path.child("name"), name))
        else:
            names.add(name)
        lifecycle = opt(container, "lifecycle")
        if lifecycle is not None:
            errs += validate_lifecycle(lifecycle, grace_period, item_path.child("lifecycle"),
                                       opts)
        errs += validate_liveness_probe(opt(container, "livenessProbe"), grace_period,
                                        item_path.child("livenessProbe"), opts)
        errs += validate_readiness_probe(opt(container, "readinessProbe"), grace_period,
                                         item_path.child("readinessProbe"), opts)
        errs += validate_startup_probe(opt(container, "startupProbe"), grace_period,
                                       item_path.child("startupProbe"), opts)
        if container.get("restartPolicy") is not None:
            errs.append(FieldError.forbidden(item_path.child("restartPolicy"),
                                             "may not be set for non-init containers"))
    return errs + _host_port_conflicts(containers, path, set())


def validate_init_containers(containers: list, regular: list, volumes: dict,
                             claim_names: set[str], grace_period: int | None, path: FieldPath,
                             opts: PodValidationOptions, pod_restart_policy: str,
                             host_users: bool) -> list[FieldError]:
    """``validateInitContainers``: names unique across regular and init containers; only
    restartable (sidecar) init containers may have probes and hooks."""
    errs = []
    names = {s(c, "name") for c in dicts(regular)}
    for index, container in enumerate(dicts(containers)):
        item_path = path.index(index)
        errs += validate_container_common(container, volumes, claim_names, item_path, opts,
                                          pod_restart_policy, host_users)
        restart_always = False
        restart_policy = opt_str(container, "restartPolicy")
        if restart_policy is not None:
            if restart_policy != "Always":
                errs.append(FieldError.not_supported(item_path.child("restartPolicy"),
                                                     restart_policy, ["Always"]))
            restart_always = restart_policy == "Always"
        name = s(container, "name")
        if name in names:
            errs.append(FieldError.duplicate(item_path.child("name"), name))
        elif name:
            names.add(name)
        # init containers run one by one: their host ports conflict only within each
        errs += _host_port_conflicts([container], path, set())
        if restart_always:
            lifecycle = opt(container, "lifecycle")
            if lifecycle is not None:
                errs += validate_lifecycle(lifecycle, grace_period,
                                           item_path.child("lifecycle"), opts)
            errs += validate_liveness_probe(opt(container, "livenessProbe"), grace_period,
                                            item_path.child("livenessProbe"), opts)
            errs += validate_readiness_probe(opt(container, "readinessProbe"), grace_period,
                                             item_path.child("readinessProbe"), opts)
            errs += validate_startup_probe(opt(container, "startupProbe"), grace_period,
                                           item_path.child("startupProbe"), opts)
        else:
            for key in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe"):
                if opt(container, key) is not None:
                    errs.append(FieldError.forbidden(item_path.child(key), _INIT_ONLY_MESSAGE))
        policies = container.get("resizePolicy")
        if isinstance(policies, list) and policies and not opts.allow_sidecar_resize_policy:
            errs.append(FieldError.invalid(item_path.child("resizePolicy"),
                                           _go_resize_policies(policies),
                                           "must not be set for init containers"))
    return errs


def _go_resize_policies(policies: list) -> GoValue:
    return GoValue(go_slice("core.ContainerResizePolicy", [
        go_struct("core.ContainerResizePolicy", (
            ("ResourceName", go_str(policy.get("resourceName"))),
            ("RestartPolicy", go_str(policy.get("restartPolicy")))))
        for policy in dicts(policies)]))


def validate_container_only_for_pod(container: dict, path: FieldPath) -> list[FieldError]:
    """``validateContainerOnlyForPod``: a Pod's images have no surrounding whitespace."""
    image = s(container, "image")
    if image != image.strip(_GO_SPACE):
        return [FieldError.invalid(path.child("image"), image,
                                   "must not have leading or trailing whitespace")]
    return []


_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007" \
            "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def validate_ephemeral_containers(ephemeral: list, containers: list, init_containers: list,
                                  volumes: dict, claim_names: set[str], path: FieldPath,
                                  opts: PodValidationOptions, pod_restart_policy: str,
                                  host_users: bool) -> list[FieldError]:
    """``validateEphemeralContainers``: unique names, a known target, and only the fields
    an ephemeral container may set."""
    ephemeral = dicts(ephemeral)
    if not ephemeral:
        return []
    errs = []
    other_names = {s(c, "name") for c in dicts(containers) + dicts(init_containers)}
    all_names = set(other_names)
    for index, container in enumerate(ephemeral):
        item_path = path.index(index)
        errs += validate_container_common(container, volumes, claim_names, item_path, opts,
                                          pod_restart_policy, host_users)
        errs += validate_container_only_for_pod(container, item_path)
        name = s(container, "name")
        if name in all_names:
            errs.append(FieldError.duplicate(item_path.child("name"), name))
        else:
            all_names.add(name)
        target = s(container, "targetContainerName")
        if target and target not in other_names:
            errs.append(FieldError.not_found(item_path.child("targetContainerName"), target))
        for key, allowed in _EPHEMERAL_FIELDS:
            if not allowed and not _is_zero_field(container.get(key)):
                errs.append(FieldError.forbidden(item_path.child(key),
                                                 "cannot be set for an Ephemeral Container"))
        for mount_index, mount in enumerate(dicts(container.get("volumeMounts"))):
            mount_path = item_path.child("volumeMounts").index(mount_index)
            if s(mount, "subPath"):
                errs.append(FieldError.forbidden(mount_path.child("subPath"),
                                                 "cannot be set for an Ephemeral Container"))
            if s(mount, "subPathExpr"):
                errs.append(FieldError.forbidden(mount_path.child("subPathExpr"),
                                                 "cannot be set for an Ephemeral Container"))
    return errs


def _is_zero_field(value) -> bool:
    # A nil slice or pointer, or a struct of zero fields (an empty "resources").
    if value is None:
        return True
    if isinstance(value, dict):
        return all(_is_zero(v) and not isinstance(v, list) for v in value.values())
    return False
