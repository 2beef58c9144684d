"""The volume sources of a PersistentVolume: their defaults and validation.

Ports of the ``validate*PersistentVolumeSource`` (and shared ``validate*VolumeSource``)
functions of ``pkg/apis/core/validation``, with their field paths as upstream spells them
(``spec.persistentDisk`` for a GCE disk, ``spec.cephfs`` under ``cephFS``, ``initiatorname``
and ``targetportal`` of iSCSI), and the declarative ``+default`` values of
``k8s.io/api/core/v1`` for the PV flavours of RBD, iSCSI, Azure disk, ScaleIO and host
paths. ``validate_sources`` enforces "exactly one volume type" as
``ValidatePersistentVolumeSpec`` does.
"""

from __future__ import annotations

import posixpath
import re

from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue
from kapiserver.apimachinery.gosyntax import go_string_slice
from kapiserver.apimachinery.validation import (inclusive_range_error, is_dns1123_label,
                                                is_dns1123_subdomain)

from .kind_helpers import as_dict, as_int, as_list, as_str

#: Every ``PersistentVolumeSource`` member, in the Go struct's order.
PV_SOURCES = (
    "gcePersistentDisk", "awsElasticBlockStore", "hostPath", "glusterfs", "nfs", "rbd",
    "iscsi", "cinder", "cephfs", "fc", "flocker", "flexVolume", "azureFile", "vsphereVolume",
    "quobyte", "azureDisk", "photonPersistentDisk", "portworxVolume", "scaleIO", "local",
    "storageos", "csi",
)
MORE_THAN_ONE = "may not specify more than 1 volume type"
#: ``supportedHostPathTypes``, sorted as ``sets.List`` sorts them.
HOST_PATH_TYPES = ("", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File",
                   "FileOrCreate", "Socket")
_IQN = re.compile(r"iqn\.\d{4}-\d{2}\.([A-Za-z0-9\-.]+)(:[^,;*&$|\s]+)$")
_EUI = re.compile(r"^eui.[A-Za-z0-9]{16}$")
_NAA = re.compile(r"^naa.[A-Za-z0-9]{32}$")
_PD_PARTITION = inclusive_range_error(1, 255)
_AZURE_CACHING_MODES = ("None", "ReadOnly", "ReadWrite")
_AZURE_KINDS = ("Dedicated", "Managed", "Shared")


# -- defaults -----------------------------------------------------------------------------

def _strings(source, defaults) -> None:
    if isinstance(source, dict):
        for key, value in defaults:
            if not source.get(key):
                source[key] = value


def _pointers(source, defaults) -> None:
    if isinstance(source, dict):
        for key, value in defaults:
            if source.get(key) is None:
                source[key] = value


def set_source_defaults(spec: dict) -> None:
    """The ``+default`` values of the PV sources (``SetObjectDefaults_PersistentVolume``)."""
    host_path = spec.get("hostPath")
    if isinstance(host_path, dict) and host_path.get("type") is None:
        host_path["type"] = ""  # SetDefaults_HostPathVolumeSource: HostPathUnset
    _strings(spec.get("rbd"), (("pool", "rbd"), ("user", "admin"),
                               ("keyring", "/etc/ceph/keyring")))
    _strings(spec.get("iscsi"), (("iscsiInterface", "default"),))
    _pointers(spec.get("azureDisk"), (("cachingMode", "ReadWrite"), ("fsType", "ext4"),
                                      ("readOnly", False), ("kind", "Shared")))
    _strings(spec.get("scaleIO"), (("storageMode", "ThinProvisioned"), ("fsType", "xfs")))


# -- shared rules ----------------------------------------------------------------------------

def validate_path_no_backsteps(target: str, path: FieldPath) -> list:
    """``validatePathNoBacksteps``: no ``..`` element (one error is enough)."""
    if ".." in target.split("/"):
        return [FieldError.invalid(path, target, "must not contain '..'")]
    return []


def _dns_label(value: str, path: FieldPath) -> list:
    return [FieldError.invalid(path, value, msg) for msg in is_dns1123_label(value)]


def _dns_subdomain(value: str, path: FieldPath) -> list:
    return [FieldError.invalid(path, value, msg) for msg in is_dns1123_subdomain(value)]


def _required(source: dict, names, path: FieldPath) -> list:
    return [FieldError.required(path.child(name)) for name in names if not source.get(name)]


def _secret_reference(ref: dict, path: FieldPath) -> list:
    """``validatePVSecretReference``."""
    errs = []
    name, namespace = as_str(ref.get("name")), as_str(ref.get("namespace"))
    errs += [FieldError.required(path.child("name"))] if not name else \
        _dns_subdomain(name, path.child("name"))
    errs += [FieldError.required(path.child("namespace"))] if not namespace else \
        _dns_label(namespace, path.child("namespace"))
    return errs


def validate_csi_driver_name(driver: str, path: FieldPath) -> list:
    """``ValidateCSIDriverName``."""
    errs = []
    if not driver:
        errs.append(FieldError.required(path))
    if len(driver) > 63:
        errs.append(FieldError.too_long(path, driver, 63))
    errs += [FieldError.invalid(path, driver, msg)
             for msg in is_dns1123_subdomain(driver.lower())]
    return errs


def _iscsi_name_errors(value: str, path: FieldPath, prefix_message: str) -> list:
    if not value.startswith(("iqn", "eui", "naa")):
        return [FieldError.invalid(path, value, prefix_message)]
    pattern = _IQN if value.startswith("iqn") else _EUI if value.startswith("eui") else _NAA
    if not (pattern.search(value) if pattern is _IQN else pattern.match(value)):
        return [FieldError.invalid(path, value, "must be valid format")]
    return []


def _options_errors(options, path: FieldPath) -> list:
    """Flex volume options may not use the kubernetes.io or k8s.io namespaces."""
    errs = []
    for key in sorted(as_dict(options)):
        namespace = key.split("/", 1)[0] if "/" in key else key
        normalized = "." + namespace.lower()
        if normalized.endswith((".kubernetes.io", ".k8s.io")):
            errs.append(FieldError.invalid(path.child("options").key(key), key,
                                           "kubernetes.io and k8s.io namespaces are reserved"))
    return errs


# -- the sources -------------------------------------------------------------------------------

def _host_path(source: dict, path: FieldPath, pv_name: str) -> list:
    target = as_str(source.get("path"))
    if not target:
        return [FieldError.required(path.child("path"))]
    errs = validate_path_no_backsteps(target, path.child("path"))
    kind = source.get("type")
    if kind is not None and kind not in HOST_PATH_TYPES:
        errs.append(FieldError.not_supported(path.child("type"), kind, HOST_PATH_TYPES))
    return errs


def _gce_disk(source: dict, path: FieldPath, pv_name: str) -> list:
    errs = _required(source, ("pdName",), path)
    partition = as_int(source.get("partition"))
    if partition < 0 or partition > 255:
        errs.append(FieldError.invalid(path.child("partition"), partition, _PD_PARTITION))
    return errs


def _aws_disk(source: dict, path: FieldPath, pv_name: str) -> list:
    errs = _required(source, ("volumeID",), path)
    partition = as_int(source.get("partition"))
    if partition < 0 or partition > 255:
        errs.append(FieldError.invalid(path.child("partition"), partition, _PD_PARTITION))
    return errs


def _glusterfs(source: dict, path: FieldPath, pv_name: str) -> list:
    errs = _required(source, ("endpoints", "path"), path)
    namespace = source.get("endpointsNamespace")
    if namespace is not None:
        if namespace == "":
            errs.append(FieldError.invalid(path.child("endpointsNamespace"), namespace,
                                           "if the endpointnamespace is set, it must be a valid "
                                           "namespace name"))
        else:
            errs += [FieldError.invalid(path.child("endpointsNamespace"), namespace, msg)
                     for msg in is_dns1123_label(as_str(namespace))]
    return errs


def _flocker(source: dict, path: FieldPath, pv_name: str) -> list:
    errs = []
    name, uid = as_str(source.get("datasetName")), as_str(source.get("datasetUUID"))
    if not name and not uid:
        errs.append(FieldError.required(path, "one of datasetName and datasetUUID is required"))
    if name and uid:
        errs.append(FieldError.invalid(path, "resource", "datasetName and datasetUUID can not "
                                                         "be specified simultaneously"))
    if "/" in name:
        errs.append(FieldError.invalid(path.child("datasetName"), name, "must not contain '/'"))
    return errs


def _nfs(source: dict, path: FieldPath, pv_name: str) -> list:
    errs = _required(source, ("server", "path"), path)
    target = as_str(source.get("path"))
    if not target.startswith("/"):
        errs.append(FieldError.invalid(path.child("path"), target, "must be an absolute path"))
    return errs


def _rbd(source: dict, path: FieldPath, pv_name: str) -> list:
    return _required(source, ("monitors", "image"), path)


def _quobyte(source: dict, path: FieldPath, pv_name: str) -> list:
    errs = []
    registry, tenant = as_str(source.get("registry")), as_str(source.get("tenant"))
    if not registry:
        errs.append(FieldError.required(path.child("registry"), "must be a host:port pair or "
                                                                "multiple pairs separated by "
                                                                "commas"))
    elif len(tenant) >= 65:
        errs.append(FieldError.required(path.child("tenant"), "must be a UUID and may not exceed "
                                                              "a length of 64 characters"))
    else:
        for pair in registry.split(","):
            host, sep, port = pair.rpartition(":")
            if not sep or (":" in host and not (host.startswith("[") and host.endswith("]"))):
                errs.append(FieldError.invalid(path.child("registry"), registry,
                                               "must be a host:port pair or multiple pairs "
                                               "separated by commas"))
    errs += _required(source, ("volume",), path)
    return errs


def _cephfs(source: dict, path: FieldPath, pv_name: str) -> list:
    return _required(source, ("monitors",), path)


def _iscsi(source: dict, path: FieldPath, pv_name: str) -> list:
    errs = _required(source, ("targetPortal",), path)
    portal = as_str(source.get("targetPortal"))
    initiator = source.get("initiatorName")
    if initiator is not None and len(f"{pv_name}:{portal}") > 64:
        errs.append(FieldError.invalid(path.child("targetportal"), portal,
                                       "Total length of <volume name>:<iscsi.targetPortal> must "
                                       "be under 64 characters if iscsi.initiatorName is "
                                       "specified."))
    iqn = as_str(source.get("iqn"))
    if not iqn:
        errs.append(FieldError.required(path.child("iqn")))
    else:
        errs += _iscsi_name_errors(iqn, path.child("iqn"), "must be valid format")
    lun = as_int(source.get("lun"))
    if lun < 0 or lun > 255:
        errs.append(FieldError.invalid(path.child("lun"), lun, inclusive_range_error(0, 255)))
    secret = source.get("secretRef")
    if (source.get("chapAuthDiscovery") or source.get("chapAuthSession")) and secret is None:
        errs.append(FieldError.required(path.child("secretRef")))
    if isinstance(secret, dict) and not secret.get("name"):
        errs.append(FieldError.required(path.child("secretRef", "name")))
    if initiator is not None:
        errs += _iscsi_name_errors(as_str(initiator), path.child("initiatorname"),
                                   "must be valid format")
    return errs


def _cinder(source: dict, path: FieldPath, pv_name: str) -> list:
    errs = _required(source, ("volumeID",), path)
    secret = source.get("secretRef")
    if isinstance(secret, dict):
        errs += _required(secret, ("name", "namespace"), path.child("secretRef"))
    return errs


def _fc(source: dict, path: FieldPath, pv_name: str) -> list:
    errs = []
    wwns, wwids = as_list(source.get("targetWWNs")), as_list(source.get("wwids"))
    if not wwns and not wwids:
        errs.append(FieldError.required(path.child("targetWWNs"),
                                        "must specify either targetWWNs or wwids, but not both"))
    if wwns and wwids:
        errs.append(FieldError.invalid(path.child("targetWWNs"), GoValue(go_string_slice(wwns)),
                                       "targetWWNs and wwids can not be specified "
                                       "simultaneously"))
    if wwns:
        lun = source.get("lun")
        if lun is None:
            errs.append(FieldError.required(path.child("lun"),
                                            "lun is required if targetWWNs is specified"))
        elif as_int(lun) < 0 or as_int(lun) > 255:
            errs.append(FieldError.invalid(path.child("lun"), as_int(lun),
                                           inclusive_range_error(0, 255)))
    return errs


def _flex(source: dict, path: FieldPath, pv_name: str) -> list:
    return _required(source, ("driver",), path) + _options_errors(source.get("options"), path)


def _azure_file(source: dict, path: FieldPath, pv_name: str) -> list:
    errs = _required(source, ("secretName", "shareName"), path)
    namespace = source.get("secretNamespace")
    if namespace is not None and not namespace:
        errs.append(FieldError.required(path.child("secretNamespace")))
    return errs


def _vsphere(source: dict, path: FieldPath, pv_name: str) -> list:
    return _required(source, ("volumePath",), path)


def _photon(source: dict, path: FieldPath, pv_name: str) -> list:
    return _required(source, ("pdID",), path)


def _portworx(source: dict, path: FieldPath, pv_name: str) -> list:
    return _required(source, ("volumeID",), path)


def _azure_disk(source: dict, path: FieldPath, pv_name: str) -> list:
    errs = _required(source, ("diskName", "diskURI"), path)
    caching, kind = source.get("cachingMode"), source.get("kind")
    uri = as_str(source.get("diskURI"))
    if caching is not None and caching not in _AZURE_CACHING_MODES:
        errs.append(FieldError.not_supported(path.child("cachingMode"), caching,
                                             _AZURE_CACHING_MODES))
    if kind is not None and kind not in _AZURE_KINDS:
        errs.append(FieldError.not_supported(path.child("kind"), kind, _AZURE_KINDS))
    if kind == "Managed" and not uri.startswith("/subscriptions/"):
        errs.append(FieldError.not_supported(
            path.child("diskURI"), uri,
            ("/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/"
             "disks/{disk-id}",)))
    if kind is not None and kind != "Managed" and not uri.startswith("https://"):
        errs.append(FieldError.not_supported(
            path.child("diskURI"), uri,
            ("https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd",)))
    return errs


def _scale_io(source: dict, path: FieldPath, pv_name: str) -> list:
    return _required(source, ("gateway", "system", "volumeName"), path)


def _local(source: dict, path: FieldPath, pv_name: str) -> list:
    target = as_str(source.get("path"))
    if not target:
        return [FieldError.required(path.child("path"))]
    return validate_path_no_backsteps(target, path.child("path"))


def _storageos(source: dict, path: FieldPath, pv_name: str) -> list:
    errs = []
    name = as_str(source.get("volumeName"))
    errs += [FieldError.required(path.child("volumeName"))] if not name else \
        _dns_label(name, path.child("volumeName"))
    namespace = as_str(source.get("volumeNamespace"))
    if namespace:
        errs += _dns_label(namespace, path.child("volumeNamespace"))
    secret = source.get("secretRef")
    if isinstance(secret, dict):
        errs += _required(secret, ("name", "namespace"), path.child("secretRef"))
    return errs


def _csi(source: dict, path: FieldPath, pv_name: str) -> list:
    errs = validate_csi_driver_name(as_str(source.get("driver")), path.child("driver"))
    if not source.get("volumeHandle"):
        errs.append(FieldError.required(path.child("volumeHandle")))
    for ref in ("controllerPublishSecretRef", "controllerExpandSecretRef",
                "nodePublishSecretRef", "nodeExpandSecretRef"):
        if isinstance(source.get(ref), dict):
            errs += _secret_reference(source[ref], path.child(ref))
    return errs


#: ``(source, path the "more than one" error names, path its own errors name, check)``, in
#: the order ``ValidatePersistentVolumeSpec`` looks at them.
_CHECKS = (
    ("hostPath", "hostPath", "hostPath", _host_path),
    ("gcePersistentDisk", "gcePersistentDisk", "persistentDisk", _gce_disk),
    ("awsElasticBlockStore", "awsElasticBlockStore", "awsElasticBlockStore", _aws_disk),
    ("glusterfs", "glusterfs", "glusterfs", _glusterfs),
    ("flocker", "flocker", "flocker", _flocker),
    ("nfs", "nfs", "nfs", _nfs),
    ("rbd", "rbd", "rbd", _rbd),
    ("quobyte", "quobyte", "quobyte", _quobyte),
    ("cephfs", "cephFS", "cephfs", _cephfs),
    ("iscsi", "iscsi", "iscsi", _iscsi),
    ("cinder", "cinder", "cinder", _cinder),
    ("fc", "fc", "fc", _fc),
    ("flexVolume", None, "flexVolume", _flex),
    ("azureFile", "azureFile", "azureFile", _azure_file),
    ("vsphereVolume", "vsphereVolume", "vsphereVolume", _vsphere),
    ("photonPersistentDisk", "photonPersistentDisk", "photonPersistentDisk", _photon),
    ("portworxVolume", "portworxVolume", "portworxVolume", _portworx),
    ("azureDisk", "azureDisk", "azureDisk", _azure_disk),
    ("scaleIO", "scaleIO", "scaleIO", _scale_io),
    ("local", "local", "local", _local),
    ("storageos", "storageos", "storageos", _storageos),
    ("csi", "csi", "csi", _csi),
)


def validate_sources(spec: dict, pv_name: str, path: FieldPath,
                     node_affinity_set: bool) -> list:
    """The volume type of a PV spec: exactly one source, each checked by its own rules
    (a flex volume, as upstream, is counted but never refused as a second type)."""
    errs, count = [], 0
    for key, forbidden_name, name, check in _CHECKS:
        source = spec.get(key)
        if source is None:
            continue
        if count and forbidden_name is not None:
            errs.append(FieldError.forbidden(path.child(forbidden_name), MORE_THAN_ONE))
            continue
        count += 1
        errs += check(as_dict(source), path.child(name), pv_name)
        if key == "local" and not node_affinity_set:
            errs.append(FieldError.required(path.child("nodeAffinity"),
                                            "Local volume requires node affinity"))
    if not count:
        errs.append(FieldError.required(path, "must specify a volume type"))
    return errs


def host_path_is_root(spec: dict) -> bool:
    """A hostPath source mounting ``/`` (``path.Clean`` of its path)."""
    source = spec.get("hostPath")
    if not isinstance(source, dict):
        return False
    # Go's path.Clean also folds the two leading slashes POSIX's normpath keeps.
    return posixpath.normpath(re.sub("^/+", "/", as_str(source.get("path"))) or ".") == "/"

