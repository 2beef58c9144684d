"""Helpers of the core group that validation and strategies share (``pkg/apis/core/helper``,
``pkg/apis/core/pods``, ``pkg/fieldpath``, ``k8s.io/component-helpers/node/util/sysctl``).
"""

from __future__ import annotations

import json
from typing import Iterator

from ...apimachinery import quantity as _quantity
from ...apimachinery.field_errors import FieldPath

MIRROR_POD_ANNOTATION_KEY = "kubernetes.io/config.mirror"
TOLERATIONS_ANNOTATION_KEY = "scheduler.alpha.kubernetes.io/tolerations"
POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
SECCOMP_POD_ANNOTATION_KEY = "seccomp.security.alpha.kubernetes.io/pod"
SECCOMP_CONTAINER_ANNOTATION_KEY_PREFIX = "container.seccomp.security.alpha.kubernetes.io/"
APPARMOR_CONTAINER_ANNOTATION_KEY_PREFIX = "container.apparmor.security.beta.kubernetes.io/"
HUGE_PAGES_PREFIX = "hugepages-"

_CONTAINER_LISTS = (("initContainers", "initContainers"), ("containers", "containers"),
                    ("ephemeralContainers", "ephemeralContainers"))


def visit_containers_with_path(spec: dict, path: FieldPath) -> Iterator[tuple[dict, FieldPath]]:
    """``VisitContainersWithPath``: init, regular, then ephemeral containers, each with
    its path (``spec.initContainers[0]``…)."""
    for key, name in _CONTAINER_LISTS:
        items = spec.get(key)
        if not isinstance(items, list):
            continue
        list_path = path.child(name)
        for index, container in enumerate(items):
            yield (container if isinstance(container, dict) else {}), list_path.index(index)


def all_containers(spec: dict) -> Iterator[dict]:
    """Every container of a pod spec (init, regular, ephemeral)."""
    for container, _ in visit_containers_with_path(spec, FieldPath("spec")):
        yield container


# -- resources ----------------------------------------------------------------------------------

def huge_page_size(name: str) -> _quantity.Quantity | None:
    """``HugePageSizeFromResourceName``: the page size of ``hugepages-2Mi``; ``None`` for
    other names or a size that does not parse."""
    if not name.startswith(HUGE_PAGES_PREFIX):
        return None
    try:
        return _quantity.parse(name[len(HUGE_PAGES_PREFIX):])
    except _quantity.QuantityError:
        return None


def is_huge_page_resource_value_divisible(name: str, value: _quantity.Quantity) -> bool:
    """``IsHugePageResourceValueDivisible``: a whole number of pages."""
    size = huge_page_size(name)
    if size is None or size.value() <= 0 or value.value() < 0:
        return False
    return value.value() % size.value() == 0


# -- annotations --------------------------------------------------------------------------------

def deletion_cost_error(annotations: dict) -> bool:
    """Whether ``GetDeletionCostFromPodAnnotations`` fails: the cost must be a 32-bit
    integer written without ``+`` or leading zeros."""
    value = annotations.get(POD_DELETION_COST)
    if value is None:
        return False
    if not isinstance(value, str) or not value:
        return True
    first = value[0]
    if not (first == "-" or value == "0" or "1" <= first <= "9"):
        return True
    digits = value[1:] if first == "-" else value
    if not digits or not digits.isascii() or not digits.isdigit():
        return True
    return not -(1 << 31) <= int(value) <= (1 << 31) - 1


def tolerations_from_annotations(annotations: dict) -> tuple[list | None, str]:
    """``GetTolerationsFromPodAnnotations``: the tolerations in the annotation, or the
    JSON error that stopped their decoding."""
    raw = annotations.get(TOLERATIONS_ANNOTATION_KEY)
    if not raw:
        return [], ""
    try:
        tolerations = json.loads(raw)
    except json.JSONDecodeError as err:
        return None, _json_error(err)
    if tolerations is None:
        return [], ""
    if not isinstance(tolerations, list) or not all(isinstance(t, dict) for t in tolerations):
        return None, "json: cannot unmarshal into Go value of type []core.Toleration"
    return tolerations, ""


def _json_error(err: json.JSONDecodeError) -> str:
    # encoding/json's SyntaxError texts for the common cases.
    if err.pos >= len(err.doc):
        return "unexpected end of JSON input"
    char = err.doc[err.pos]
    quoted = "'\\''" if char == "'" else f"'{char}'"
    if err.msg == "Expecting value":
        return f"invalid character {quoted} looking for beginning of value"
    return f"invalid character {quoted} after top-level value" if err.msg == "Extra data" \
        else f"invalid character {quoted} in JSON input"


# -- downward API -------------------------------------------------------------------------------

def split_maybe_subscripted_path(field_path: str) -> tuple[str, str, bool]:
    """``fieldpath.SplitMaybeSubscriptedPath``: ``metadata.labels['app']`` →
    (``metadata.labels``, ``app``, True)."""
    if not field_path.endswith("']"):
        return field_path, "", False
    parts = field_path[:-2].split("['", 1)
    if len(parts) < 2 or not parts[0]:
        return field_path, "", False
    return parts[0], parts[1], True


_DOWNWARD_API_LABELS = frozenset({
    "metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace",
    "metadata.uid", "spec.nodeName", "spec.restartPolicy", "spec.serviceAccountName",
    "spec.schedulerName", "status.phase", "status.hostIP", "status.hostIPs", "status.podIP",
    "status.podIPs",
})


def convert_downward_api_field_label(version: str, label: str) -> tuple[str, str]:
    """``pods.ConvertDownwardAPIFieldLabel``: the internal field path, or ("", error)."""
    if version != "v1":
        return "", f"unsupported pod version: {version}"
    path, _, subscripted = split_maybe_subscripted_path(label)
    if subscripted:
        if path in ("metadata.annotations", "metadata.labels"):
            return label, ""
        return "", f"field label does not support subscript: {label}"
    if label in _DOWNWARD_API_LABELS:
        return label, ""
    if label == "spec.host":  # old v1 clients
        return "spec.nodeName", ""
    return "", f"field label not supported: {label}"


# -- sysctls ------------------------------------------------------------------------------------

NET_NAMESPACE = "net"
IPC_NAMESPACE = "ipc"
_IPC_SYSCTLS = frozenset({"kernel.sem", "kernel.shmall", "kernel.shmmax", "kernel.shmmni",
                          "kernel.msgmax", "kernel.msgmnb", "kernel.msgmni",
                          "kernel.shm_rmid_forced"})
_SWAP_SEPARATORS = str.maketrans("./", "/.")


def normalize_sysctl_name(name: str) -> str:
    """``sysctl.NormalizeName``: ``net/ipv4/ip_forward`` becomes ``net.ipv4.ip_forward``."""
    for ch in name:
        if ch == ".":
            return name
        if ch == "/":
            return name.translate(_SWAP_SEPARATORS)
    return name


def sysctl_namespace(name: str) -> str:
    """``sysctl.GetNamespace``: ``net``, ``ipc`` or "" (not namespaced, or unknown)."""
    name = normalize_sysctl_name(name)
    if name in _IPC_SYSCTLS:
        return IPC_NAMESPACE
    if name.startswith("net."):
        return NET_NAMESPACE
    if name.startswith("fs.mqueue."):
        return IPC_NAMESPACE
    return ""
