"""Pod volumes and every volume source (``ValidateVolumes``, ``validateVolumeSource`` and
the per-source validators of ``pkg/apis/core/validation``, 1.32)."""

from __future__ import annotations

import re

from ....apimachinery import validation as apivalidation
from ....apimachinery.field_errors import FieldError, FieldPath, GoValue
from ....apimachinery.gosyntax import go_string_slice
from ....apimachinery.selector_validation import (LabelSelectorValidationOptions,
                                                  go_label_selector, validate_label_selector)
from .common import (b, dicts, i, invalid_each, lst, opt, opt_int,
                     opt_str, s, strs, validate_dns1123_label, validate_file_mode,
                     validate_local_descending_path, validate_local_non_reserved_path,
                     validate_name, validate_path_no_backsteps)
from .options import PodValidationOptions
from .pvc import validate_persistent_volume_claim_template

PD_PARTITION_ERROR_MSG = apivalidation.inclusive_range_error(1, 255)
_MORE_THAN_ONE = "may not specify more than 1 volume type"

# Go's regexp: [[:alnum:]] is ASCII, \s is [\t\n\f\r ], \d is [0-9].
_ISCSI_IQN = re.compile(r"iqn\.[0-9]{4}-[0-9]{2}\.([A-Za-z0-9.-]+)(:[^,;*&$|\t\n\f\r ]+)$")
_ISCSI_EUI = re.compile(r"^eui.[A-Za-z0-9]{16}$")
_ISCSI_NAA = re.compile(r"^naa.[A-Za-z0-9]{32}$")

_HOST_PATH_TYPES = ("", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File",
                    "FileOrCreate", "Socket")
_VOLUME_DOWNWARD_API_FIELD_PATHS = frozenset({
    "metadata.name", "metadata.namespace", "metadata.labels", "metadata.annotations",
    "metadata.uid"})


def _search_from_start(pattern: re.Pattern, value: str) -> bool:
    # Go's MatchString finds a match anywhere; these patterns anchor what they need.
    return pattern.search(value) is not None


# -- sources ------------------------------------------------------------------------------------

def _validate_host_path(source: dict, path: FieldPath) -> list[FieldError]:
    host_path = s(source, "path")
    if not host_path:
        return [FieldError.required(path.child("path"), "")]
    errs = validate_path_no_backsteps(host_path, path.child("path"))
    kind = opt_str(source, "type")
    if kind is not None and kind not in _HOST_PATH_TYPES:
        errs.append(FieldError.not_supported(path.child("type"), kind, _HOST_PATH_TYPES))
    return errs


def _validate_git_repo(source: dict, path: FieldPath) -> list[FieldError]:
    errs = []
    if not s(source, "repository"):
        errs.append(FieldError.required(path.child("repository"), ""))
    return errs + validate_local_descending_path(s(source, "directory"), path.child("directory"))


def _validate_iscsi_name(value: str, path: FieldPath, prefix_message: str) -> list[FieldError]:
    errs = []
    if not value.startswith(("iqn", "eui", "naa")):
        errs.append(FieldError.invalid(path, value, prefix_message))
    if value.startswith("iqn") and not _search_from_start(_ISCSI_IQN, value):
        errs.append(FieldError.invalid(path, value, "must be valid format"))
    elif value.startswith("eui") and not _search_from_start(_ISCSI_EUI, value):
        errs.append(FieldError.invalid(path, value, "must be valid format"))
    elif value.startswith("naa") and not _search_from_start(_ISCSI_NAA, value):
        errs.append(FieldError.invalid(path, value, "must be valid format"))
    return errs


def _validate_iscsi(source: dict, path: FieldPath) -> list[FieldError]:
    errs = []
    if not s(source, "targetPortal"):
        errs.append(FieldError.required(path.child("targetPortal"), ""))
    iqn = s(source, "iqn")
    if not iqn:
        errs.append(FieldError.required(path.child("iqn"), ""))
    else:
        errs += _validate_iscsi_name(iqn, path.child("iqn"),
                                     "must be valid format starting with iqn, eui, or naa")
    lun = i(source, "lun")
    if not 0 <= lun <= 255:
        errs.append(FieldError.invalid(path.child("lun"), lun,
                                       apivalidation.inclusive_range_error(0, 255)))
    if (b(source, "chapAuthDiscovery") or b(source, "chapAuthSession")) and \
            opt(source, "secretRef") is None:
        errs.append(FieldError.required(path.child("secretRef"), ""))
    initiator = opt_str(source, "initiatorName")
    if initiator is not None:
        errs += _validate_iscsi_name(initiator, path.child("initiatorname"),
                                     "must be valid format starting with iqn, eui, or naa")
    return errs


def _validate_fc(source: dict, path: FieldPath) -> list[FieldError]:
    errs = []
    wwns, wwids = strs(source.get("targetWWNs")), strs(source.get("wwids"))
    if not wwns and not wwids:
        errs.append(FieldError.required(path.child("targetWWNs"),
                                        "must specify either targetWWNs or wwids, but not both"))
    if wwns and wwids:
        errs.append(FieldError.invalid(path.child("targetWWNs"), GoValue(go_string_slice(wwns)),
                                       "targetWWNs and wwids can not be specified simultaneously"))
    if wwns:
        lun = opt_int(source, "lun")
        if lun is None:
            errs.append(FieldError.required(path.child("lun"),
                                            "lun is required if targetWWNs is specified"))
        elif not 0 <= lun <= 255:
            errs.append(FieldError.invalid(path.child("lun"), lun,
                                           apivalidation.inclusive_range_error(0, 255)))
    return errs


def _validate_partitioned_disk(source: dict, path: FieldPath, id_key: str) -> list[FieldError]:
    # validateGCEPersistentDiskVolumeSource, validateAWSElasticBlockStoreVolumeSource
    errs = []
    if not s(source, id_key):
        errs.append(FieldError.required(path.child(id_key), ""))
    partition = i(source, "partition")
    if not 0 <= partition <= 255:
        errs.append(FieldError.invalid(path.child("partition"), partition,
                                       PD_PARTITION_ERROR_MSG))
    return errs


def validate_key_to_path(item: dict, path: FieldPath) -> list[FieldError]:
    """``validateKeyToPath``: an item of a secret or configMap volume."""
    errs = []
    if not s(item, "key"):
        errs.append(FieldError.required(path.child("key"), ""))
    target = s(item, "path")
    if not target:
        errs.append(FieldError.required(path.child("path"), ""))
    errs += validate_local_non_reserved_path(target, path.child("path"))
    return errs + validate_file_mode(opt_int(item, "mode"), path.child("mode"))


def _validate_items(source: dict, path: FieldPath) -> list[FieldError]:
    items_path = path.child("items")
    errs = []
    for index, item in enumerate(dicts(source.get("items"))):
        errs += validate_key_to_path(item, items_path.index(index))
    return errs


def _validate_secret(source: dict, path: FieldPath) -> list[FieldError]:
    errs = []
    if not s(source, "secretName"):
        errs.append(FieldError.required(path.child("secretName"), ""))
    errs += validate_file_mode(opt_int(source, "defaultMode"), path.child("defaultMode"))
    return errs + _validate_items(source, path)


def _validate_config_map(source: dict, path: FieldPath) -> list[FieldError]:
    errs = []
    if not s(source, "name"):
        errs.append(FieldError.required(path.child("name"), ""))
    errs += validate_file_mode(opt_int(source, "defaultMode"), path.child("defaultMode"))
    return errs + _validate_items(source, path)


def _validate_claim(source: dict, path: FieldPath) -> list[FieldError]:
    if not s(source, "claimName"):
        return [FieldError.required(path.child("claimName"), "")]
    return []


def _validate_nfs(source: dict, path: FieldPath) -> list[FieldError]:
    errs = []
    if not s(source, "server"):
        errs.append(FieldError.required(path.child("server"), ""))
    nfs_path = s(source, "path")
    if not nfs_path:
        errs.append(FieldError.required(path.child("path"), ""))
    if not nfs_path.startswith("/"):
        errs.append(FieldError.invalid(path.child("path"), nfs_path, "must be an absolute path"))
    return errs


def split_host_port(value: str) -> bool:
    """Whether Go's ``net.SplitHostPort`` accepts ``value``."""
    last = value.rfind(":")
    if last < 0:
        return False
    start, end = 0, 0
    if value.startswith("["):
        close = value.find("]")
        if close < 0 or close + 1 != last:
            return False
        start, end = 1, close + 1
    elif ":" in value[:last]:
        return False
    return "[" not in value[start:] and "]" not in value[end:]


def _validate_quobyte(source: dict, path: FieldPath) -> list[FieldError]:
    errs = []
    registry = s(source, "registry")
    message = "must be a host:port pair or multiple pairs separated by commas"
    if not registry:
        errs.append(FieldError.required(path.child("registry"), message))
    elif len(s(source, "tenant")) >= 65:
        errs.append(FieldError.required(path.child("tenant"),
                                        "must be a UUID and may not exceed a length of 64 "
                                        "characters"))
    else:
        for pair in registry.split(","):
            if not split_host_port(pair):
                errs.append(FieldError.invalid(path.child("registry"), registry, message))
    if not s(source, "volume"):
        errs.append(FieldError.required(path.child("volume"), ""))
    return errs


def _validate_glusterfs(source: dict, path: FieldPath) -> list[FieldError]:
    errs = []
    if not s(source, "endpoints"):
        errs.append(FieldError.required(path.child("endpoints"), ""))
    if not s(source, "path"):
        errs.append(FieldError.required(path.child("path"), ""))
    return errs


def _validate_flocker(source: dict, path: FieldPath) -> list[FieldError]:
    errs = []
    name, uuid = s(source, "datasetName"), s(source, "datasetUUID")
    if not name and not uuid:
        errs.append(FieldError.required(path, "one of datasetName and datasetUUID is required"))
    if name and uuid:
        errs.append(FieldError.invalid(path, "resource",
                                       "datasetName and datasetUUID can not be specified "
                                       "simultaneously"))
    if "/" in name:
        errs.append(FieldError.invalid(path.child("datasetName"), name, "must not contain '/'"))
    return errs


def _validate_rbd(source: dict, path: FieldPath) -> list[FieldError]:
    errs = []
    if not lst(source, "monitors"):
        errs.append(FieldError.required(path.child("monitors"), ""))
    if not s(source, "image"):
        errs.append(FieldError.required(path.child("image"), ""))
    return errs


def _validate_cinder(source: dict, path: FieldPath) -> list[FieldError]:
    errs = []
    if not s(source, "volumeID"):
        errs.append(FieldError.required(path.child("volumeID"), ""))
    secret = opt(source, "secretRef")
    if secret is not None and not s(secret, "name"):
        errs.append(FieldError.required(path.child("secretRef", "name"), ""))
    return errs


def _validate_cephfs(source: dict, path: FieldPath) -> list[FieldError]:
    if not lst(source, "monitors"):
        return [FieldError.required(path.child("monitors"), "")]
    return []


def _validate_flex(source: dict, path: FieldPath) -> list[FieldError]:
    errs = []
    if not s(source, "driver"):
        errs.append(FieldError.required(path.child("driver"), ""))
    options = source.get("options")
    for key in (options if isinstance(options, dict) else {}):
        namespace = key.split("/", 1)[0] if "/" in key else key
        normalized = "." + namespace.lower()
        if normalized.endswith(".kubernetes.io") or normalized.endswith(".k8s.io"):
            errs.append(FieldError.invalid(path.child("options").key(key), key,
                                           "kubernetes.io and k8s.io namespaces are reserved"))
    return errs


def _validate_azure_file(source: dict, path: FieldPath) -> list[FieldError]:
    errs = []
    if not s(source, "secretName"):
        errs.append(FieldError.required(path.child("secretName"), ""))
    if not s(source, "shareName"):
        errs.append(FieldError.required(path.child("shareName"), ""))
    return errs


_CACHING_MODES = ("None", "ReadOnly", "ReadWrite")
_DISK_KINDS = ("Dedicated", "Managed", "Shared")


def _validate_azure_disk(source: dict, path: FieldPath) -> list[FieldError]:
    errs = []
    if not s(source, "diskName"):
        errs.append(FieldError.required(path.child("diskName"), ""))
    uri = s(source, "diskURI")
    if not uri:
        errs.append(FieldError.required(path.child("diskURI"), ""))
    caching = opt_str(source, "cachingMode")
    if caching is not None and caching not in _CACHING_MODES:
        errs.append(FieldError.not_supported(path.child("cachingMode"), caching, _CACHING_MODES))
    kind = opt_str(source, "kind")
    if kind is not None and kind not in _DISK_KINDS:
        errs.append(FieldError.not_supported(path.child("kind"), kind, _DISK_KINDS))
    if kind == "Managed" and not uri.startswith("/subscriptions/"):
        errs.append(FieldError.not_supported(
            path.child("diskURI"), uri,
            ["/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/"
             "disks/{disk-id}"]))
    if kind is not None and kind != "Managed" and not uri.startswith("https://"):
        errs.append(FieldError.not_supported(
            path.child("diskURI"), uri,
            ["https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"]))
    return errs


def _required(key: str):
    def validate(source: dict, path: FieldPath) -> list[FieldError]:
        if not s(source, key):
            return [FieldError.required(path.child(key), "")]
        return []
    return validate


def _validate_scale_io(source: dict, path: FieldPath) -> list[FieldError]:
    errs = []
    for key in ("gateway", "system", "volumeName"):
        if not s(source, key):
            errs.append(FieldError.required(path.child(key), ""))
    return errs


def _validate_storageos(source: dict, path: FieldPath) -> list[FieldError]:
    errs = []
    name = s(source, "volumeName")
    if not name:
        errs.append(FieldError.required(path.child("volumeName"), ""))
    else:
        errs += validate_dns1123_label(name, path.child("volumeName"))
    namespace = s(source, "volumeNamespace")
    if namespace:
        errs += validate_dns1123_label(namespace, path.child("volumeNamespace"))
    secret = opt(source, "secretRef")
    if secret is not None and not s(secret, "name"):
        errs.append(FieldError.required(path.child("secretRef", "name"), ""))
    return errs


def validate_csi_driver_name(driver: str, path: FieldPath) -> list[FieldError]:
    """``ValidateCSIDriverName``."""
    errs = []
    if not driver:
        errs.append(FieldError.required(path, ""))
    if len(driver.encode()) > 63:
        errs.append(FieldError.too_long(path, "", 63))
    return errs + invalid_each(path, driver, apivalidation.is_dns1123_subdomain(driver.lower()))


def _validate_csi(source: dict, path: FieldPath) -> list[FieldError]:
    errs = validate_csi_driver_name(s(source, "driver"), path.child("driver"))
    secret = opt(source, "nodePublishSecretRef")
    if secret is not None:
        name = s(secret, "name")
        if not name:
            errs.append(FieldError.required(path.child("nodePublishSecretRef", "name"), ""))
        else:
            # upstream reports the name at "csi.name", not under nodePublishSecretRef
            errs += validate_name(apivalidation.name_is_dns_subdomain, name, path.child("name"))
    return errs


# -- downward API and projections ---------------------------------------------------------------

def validate_downward_api_volume_file(item: dict, path: FieldPath,
                                      opts: PodValidationOptions) -> list[FieldError]:
    """``validateDownwardAPIVolumeFile``."""
    from .env import validate_container_resource_field_selector, validate_object_field_selector

    errs = []
    target = s(item, "path")
    if not target:
        errs.append(FieldError.required(path.child("path"), ""))
    errs += validate_local_non_reserved_path(target, path.child("path"))
    field_ref, resource_ref = opt(item, "fieldRef"), opt(item, "resourceFieldRef")
    if field_ref is not None:
        errs += validate_object_field_selector(field_ref, _VOLUME_DOWNWARD_API_FIELD_PATHS,
                                               path.child("fieldRef"))
        if resource_ref is not None:
            errs.append(FieldError.invalid(path, "resource", "fieldRef and resourceFieldRef can "
                                                             "not be specified simultaneously"))
    elif resource_ref is not None:
        errs += validate_container_resource_field_selector(
            resource_ref, path.child("resourceFieldRef"), volume=True)
    else:
        errs.append(FieldError.required(path, "one of fieldRef and resourceFieldRef is required"))
    return errs + validate_file_mode(opt_int(item, "mode"), path.child("mode"))


def _validate_downward_api(source: dict, path: FieldPath,
                           opts: PodValidationOptions) -> list[FieldError]:
    errs = validate_file_mode(opt_int(source, "defaultMode"), path.child("defaultMode"))
    for item in dicts(source.get("items")):
        # upstream reports each file's errors at the source's path, without an index
        errs += validate_downward_api_volume_file(item, path, opts)
    return errs


def _go_cluster_trust_bundle(source: dict) -> GoValue:
    from ....apimachinery.gosyntax import POINTER_ADDRESS

    def pointer(key, type_name):
        present = source.get(key) is not None
        return f"(*{type_name})({POINTER_ADDRESS if present else 'nil'})"
    return GoValue("core.ClusterTrustBundleProjection{"
                   f"Name:{pointer('name', 'string')}, "
                   f"SignerName:{pointer('signerName', 'string')}, "
                   f"LabelSelector:{pointer('labelSelector', 'v1.LabelSelector')}, "
                   f"Optional:{pointer('optional', 'bool')}, "
                   f"Path:{apivalidation.go_quote(s(source, 'path'))}}}")


def _validate_cluster_trust_bundle(source: dict, path: FieldPath) -> list[FieldError]:
    # ClusterTrustBundleProjection is alpha (off) in 1.32: strategies drop the field, so
    # only its shape is checked here, as upstream's validateProjectionSources does.
    errs = []
    name, signer = opt_str(source, "name"), opt_str(source, "signerName")
    if name is not None and signer is not None:
        errs.append(FieldError.invalid(path, _go_cluster_trust_bundle(source),
                                       "only one of name and signerName may be used"))
    elif name is not None:
        if not name:
            errs.append(FieldError.required(path.child("name"), "must be a valid object name"))
        errs += [FieldError.invalid(path.child("name"), name,
                                    f"not a valid clustertrustbundlename: {msg}")
                 for msg in apivalidation.validate_path_segment_name(name, False)]
        if source.get("labelSelector") is not None:
            errs.append(FieldError.invalid(path.child("labelSelector"),
                                           go_label_selector(opt(source, "labelSelector")),
                                           "labelSelector must be unset if name is specified"))
    elif signer is not None:
        if not signer:
            errs.append(FieldError.required(path.child("signerName"),
                                            "must be a valid signer name"))
        errs += validate_label_selector(opt(source, "labelSelector"),
                                        LabelSelectorValidationOptions(),
                                        path.child("labelSelector"))
    else:
        errs.append(FieldError.required(path, "either name or signerName must be specified"))
    bundle_path = s(source, "path")
    if not bundle_path:
        errs.append(FieldError.required(path.child("path"), ""))
    return errs + validate_local_non_reserved_path(bundle_path, path.child("path"))


def _validate_projection_sources(projection: dict, path: FieldPath,
                                 opts: PodValidationOptions) -> list[FieldError]:
    errs = []
    all_paths: set[str] = set()

    def claim_path(value: str, bad_value: str) -> None:
        if value in all_paths:
            errs.append(FieldError.invalid(path, bad_value, "conflicting duplicate paths"))
        else:
            all_paths.add(value)

    for index, source in enumerate(dicts(projection.get("sources"))):
        count = 0
        source_path = path.child("sources").index(index)
        for kind in ("secret", "configMap"):
            member = opt(source, kind)
            if member is None:
                continue
            count += 1
            member_path = source_path.child(kind)
            if not s(member, "name"):
                errs.append(FieldError.required(member_path.child("name"), ""))
            items_path = member_path.child("items")
            for item_index, item in enumerate(dicts(member.get("items"))):
                errs += validate_key_to_path(item, items_path.index(item_index))
                if s(item, "path"):
                    claim_path(s(item, "path"), s(member, "name"))
        downward = opt(source, "downwardAPI")
        if downward is not None:
            count += 1
            for item in dicts(downward.get("items")):
                errs += validate_downward_api_volume_file(item, source_path.child("downwardAPI"),
                                                          opts)
                if s(item, "path"):
                    claim_path(s(item, "path"), s(item, "path"))
        token = opt(source, "serviceAccountToken")
        if token is not None:
            count += 1
            token_path = source_path.child("serviceAccountToken")
            expiration = i(token, "expirationSeconds")
            if expiration < 10 * 60:
                errs.append(FieldError.invalid(token_path.child("expirationSeconds"), expiration,
                                               "may not specify a duration less than 10 minutes"))
            if expiration > 1 << 32:
                errs.append(FieldError.invalid(token_path.child("expirationSeconds"), expiration,
                                               "may not specify a duration larger than 2^32 "
                                               "seconds"))
            token_file = s(token, "path")
            if not token_file:
                errs.append(FieldError.required(path.child("path"), ""))
            elif not opts.allow_non_local_projected_token_path:
                errs += validate_local_non_reserved_path(token_file, path.child("path"))
        bundle = opt(source, "clusterTrustBundle")
        if bundle is not None:
            count += 1
            errs += _validate_cluster_trust_bundle(bundle,
                                                   source_path.child("clusterTrustBundle"))
            claim_path(s(bundle, "path"), s(bundle, "path"))
        if count > 1:
            errs.append(FieldError.forbidden(source_path, "may not specify more than 1 volume "
                                                          "type per source"))
    return errs


def _validate_projected(source: dict, path: FieldPath,
                        opts: PodValidationOptions) -> list[FieldError]:
    errs = validate_file_mode(opt_int(source, "defaultMode"), path.child("defaultMode"))
    return errs + _validate_projection_sources(source, path, opts)


def _validate_image(source: dict, path: FieldPath, opts: PodValidationOptions) -> list[FieldError]:
    from .containers import validate_pull_policy

    errs = []
    if opts.resource_is_pod and not s(source, "reference"):
        errs.append(FieldError.required(path.child("reference"), ""))
    return errs + validate_pull_policy(s(source, "pullPolicy"), path.child("pullPolicy"))


# -- a volume -----------------------------------------------------------------------------------

def _plain(validate):
    return lambda source, path, opts: validate(source, path)


# (member, path name, validator): validateVolumeSource's order. Note "persistentDisk" and
# "cephfs" report errors under names that differ from the member, and the duplicate-type
# error of downwardAPI names "downwarAPI": both as upstream.
_SOURCES = (
    ("hostPath", "hostPath", _plain(_validate_host_path)),
    ("gitRepo", "gitRepo", _plain(_validate_git_repo)),
    ("gcePersistentDisk", "persistentDisk",
     _plain(lambda src, p: _validate_partitioned_disk(src, p, "pdName"))),
    ("awsElasticBlockStore", "awsElasticBlockStore",
     _plain(lambda src, p: _validate_partitioned_disk(src, p, "volumeID"))),
    ("secret", "secret", _plain(_validate_secret)),
    ("nfs", "nfs", _plain(_validate_nfs)),
    ("iscsi", "iscsi", _plain(_validate_iscsi)),
    ("glusterfs", "glusterfs", _plain(_validate_glusterfs)),
    ("flocker", "flocker", _plain(_validate_flocker)),
    ("persistentVolumeClaim", "persistentVolumeClaim", _plain(_validate_claim)),
    ("rbd", "rbd", _plain(_validate_rbd)),
    ("cinder", "cinder", _plain(_validate_cinder)),
    ("cephfs", "cephfs", _plain(_validate_cephfs)),
    ("quobyte", "quobyte", _plain(_validate_quobyte)),
    ("downwardAPI", "downwardAPI", _validate_downward_api),
    ("fc", "fc", _plain(_validate_fc)),
    ("flexVolume", "flexVolume", _plain(_validate_flex)),
    ("configMap", "configMap", _plain(_validate_config_map)),
    ("azureFile", "azureFile", _plain(_validate_azure_file)),
    ("vsphereVolume", "vsphereVolume", _plain(_required("volumePath"))),
    ("photonPersistentDisk", "photonPersistentDisk", _plain(_required("pdID"))),
    ("portworxVolume", "portworxVolume", _plain(_required("volumeID"))),
    ("azureDisk", "azureDisk", _plain(_validate_azure_disk)),
    ("storageos", "storageos", _plain(_validate_storageos)),
    ("projected", "projected", _validate_projected),
    ("scaleIO", "scaleIO", _plain(_validate_scale_io)),
    ("csi", "csi", _plain(_validate_csi)),
)
_DUPLICATE_NAMES = {"gcePersistentDisk": "gcePersistentDisk", "cephfs": "cephFS",
                    "downwardAPI": "downwarAPI"}


def validate_volume_source(volume: dict, path: FieldPath, name: str, pod_meta: dict | None,
                           opts: PodValidationOptions) -> list[FieldError]:
    """``validateVolumeSource``: exactly one source, and that source's rules."""
    count = 0
    errs = []

    def another(member: str) -> bool:
        nonlocal count
        if count > 0:
            errs.append(FieldError.forbidden(path.child(_DUPLICATE_NAMES.get(member, member)),
                                             _MORE_THAN_ONE))
            return False
        count += 1
        return True

    empty_dir = opt(volume, "emptyDir")
    if empty_dir is not None:
        count += 1
        errs += _validate_empty_dir(empty_dir, path.child("emptyDir"))
    for member, name_in_path, validate in _SOURCES:
        source = opt(volume, member)
        if source is None:
            continue
        if another(member):
            errs += validate(source, path.child(name_in_path), opts)
        if member == "iscsi" and opt_str(source, "initiatorName") is not None and \
                len(f"{name}:{s(source, 'targetPortal')}".encode()) > 64:
            errs.append(FieldError.invalid(path.child("name"), name,
                                           "Total length of <volume name>:<iscsi.targetPortal> "
                                           "must be under 64 characters if iscsi.initiatorName "
                                           "is specified."))
    ephemeral = opt(volume, "ephemeral")
    if ephemeral is not None and another("ephemeral"):
        errs += _validate_ephemeral(ephemeral, path, name, pod_meta)
    image = opt(volume, "image")
    if image is not None and another("image"):
        errs += _validate_image(image, path.child("image"), opts)
    if count == 0:
        errs.append(FieldError.required(path, "must specify a volume type"))
    return errs


def _validate_empty_dir(source: dict, path: FieldPath) -> list[FieldError]:
    from ....apimachinery import quantity

    limit = source.get("sizeLimit")
    if limit is None:
        return []
    try:
        negative = quantity.from_json(limit).sign() < 0
    except (quantity.QuantityError, ValueError, TypeError) as err:
        return [FieldError.invalid(path.child("sizeLimit"), limit, str(err))]
    if negative:
        return [FieldError.forbidden(path.child("sizeLimit"),
                                     "SizeLimit field must be a valid resource quantity")]
    return []


def _validate_ephemeral(source: dict, path: FieldPath, name: str,
                        pod_meta: dict | None) -> list[FieldError]:
    errs = []
    template = opt(source, "volumeClaimTemplate")
    if template is None:
        errs.append(FieldError.required(path.child("ephemeral", "volumeClaimTemplate"), ""))
    else:
        errs += validate_persistent_volume_claim_template(
            template, path.child("ephemeral", "volumeClaimTemplate"))
    # The PVC's name is the pod's name, "-", the volume's; it must be a valid PVC name.
    pod_name = s(pod_meta, "name") if pod_meta else ""
    if pod_name and name:
        claim = f"{pod_name}-{name}"
        quoted = apivalidation.go_quote(claim)
        errs += [FieldError.invalid(path.child("name"), name, f"PVC name {quoted}: {msg}")
                 for msg in apivalidation.name_is_dns_subdomain(claim, False)]
    return errs


def validate_volumes(volumes: list, pod_meta: dict | None, path: FieldPath,
                     opts: PodValidationOptions) -> tuple[dict, list[FieldError]]:
    """``ValidateVolumes``: the volumes by name (those without errors) and the errors."""
    errs = []
    names: set[str] = set()
    by_name: dict = {}
    volumes = dicts(volumes)
    pod_name = s(pod_meta, "name") if pod_meta else ""
    created_claims = {f"{pod_name}-{s(v, 'name')}" for v in volumes
                      if pod_name and opt(v, "ephemeral") is not None}
    for index, volume in enumerate(volumes):
        item_path = path.index(index)
        name_path = item_path.child("name")
        name = s(volume, "name")
        volume_errs = validate_volume_source(volume, item_path, name, pod_meta, opts)
        if not name:
            volume_errs.append(FieldError.required(name_path, ""))
        else:
            volume_errs += validate_dns1123_label(name, name_path)
        if name in names:
            volume_errs.append(FieldError.duplicate(name_path, name))
        if not volume_errs:
            names.add(name)
            by_name[name] = volume
        else:
            errs += volume_errs
        claim = opt(volume, "persistentVolumeClaim")
        if claim is not None and s(claim, "claimName") in created_claims:
            errs.append(FieldError.invalid(item_path.child("persistentVolumeClaim", "claimName"),
                                           s(claim, "claimName"),
                                           "must not reference a PVC that gets created for an "
                                           "ephemeral volume"))
    return by_name, errs

