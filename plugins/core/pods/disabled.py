"""What a Pod loses or gains as it is written, beyond defaults (``pkg/api/pod/util.go``).

``drop_disabled_pod_fields`` is ``DropDisabledPodFields`` for the feature gates of
kube-apiserver 1.32 that are off by default: a field of such a feature is dropped unless
the stored object already uses it. ``apply_scheduling_gated_condition``,
``mutate_pod_affinity`` and ``apply_app_armor_version_skew`` are the rest of the pod
strategy's ``PrepareForCreate``.
"""

from __future__ import annotations

from kapiserver.apis.core.helpers import APPARMOR_CONTAINER_ANNOTATION_KEY_PREFIX

_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")
#: ``api.DefaultProcMount``: what a ``procMount`` becomes while ``ProcMountType`` is off.
DEFAULT_PROC_MOUNT = "Default"
SCHEDULING_GATED = "SchedulingGated"


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _dicts(value) -> list[dict]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _spec(pod) -> dict:
    return _dict(pod.get("spec")) if isinstance(pod, dict) else {}


def _containers(spec: dict, kinds=_CONTAINER_LISTS) -> list[dict]:
    return [c for kind in kinds for c in _dicts(spec.get(kind))]


# -- "in use" checks on the stored object (None on create) -----------------------------------

def _host_users_in_use(old: dict | None) -> bool:
    return old is not None and _dict(old.get("securityContext")).get("hostUsers") is not None


def _supplemental_groups_policy_in_use(old: dict | None) -> bool:
    return old is not None and \
        _dict(old.get("securityContext")).get("supplementalGroupsPolicy") is not None


def _se_linux_change_policy_in_use(old: dict | None) -> bool:
    return old is not None and \
        _dict(old.get("securityContext")).get("seLinuxChangePolicy") is not None


def _pod_level_resources_in_use(old: dict | None) -> bool:
    if old is None:
        return False
    resources = _dict(old.get("resources"))
    return bool(resources.get("requests") or resources.get("limits"))


def _proc_mount_in_use(old: dict | None) -> bool:
    if old is None:
        return False
    return any(_dict(c.get("securityContext")).get("procMount") not in (None, DEFAULT_PROC_MOUNT)
               for c in _containers(old))


def _resource_claims_in_use(old: dict | None) -> bool:
    # Containers cannot claim what the pod does not list, so the pod's list tells.
    return old is not None and bool(old.get("resourceClaims"))


def _cluster_trust_bundle_in_use(old: dict | None) -> bool:
    if old is None:
        return False
    return any(source.get("clusterTrustBundle") is not None
               for volume in _dicts(old.get("volumes"))
               for source in _dicts(_dict(volume.get("projected")).get("sources")))


def _in_place_resize_in_use(old: dict | None) -> bool:
    return old is not None and any(c.get("resizePolicy") for c in _containers(old))


def _image_volumes_in_use(old: dict | None) -> bool:
    return old is not None and any(volume.get("image") is not None
                                   for volume in _dicts(old.get("volumes")))


# -- DropDisabledPodFields --------------------------------------------------------------------

def drop_disabled_pod_spec_fields(spec: dict, old: dict | None = None) -> None:
    """``dropDisabledFields`` of 1.32 on a pod spec (``old``: the stored spec, if any)."""
    if not isinstance(spec, dict):
        return
    security = spec.get("securityContext")
    if isinstance(security, dict):
        # UserNamespacesSupport (beta, off), SupplementalGroupsPolicy and
        # SELinuxChangePolicy (alpha).
        if not _host_users_in_use(old):
            security.pop("hostUsers", None)
        if not _supplemental_groups_policy_in_use(old):
            security.pop("supplementalGroupsPolicy", None)
        if not _se_linux_change_policy_in_use(old):
            security.pop("seLinuxChangePolicy", None)
    if not _pod_level_resources_in_use(old):  # PodLevelResources (alpha)
        spec.pop("resources", None)
    if not _proc_mount_in_use(old):
        # ProcMountType (beta, off): forced to the default, never to nil, as upstream keeps
        # what 1.12 wrote.
        for container in _containers(spec):
            context = container.get("securityContext")
            if isinstance(context, dict) and context.get("procMount") is not None:
                context["procMount"] = DEFAULT_PROC_MOUNT
    if not _resource_claims_in_use(old):  # DynamicResourceAllocation (beta, off)
        spec.pop("resourceClaims", None)
        for container in _containers(spec):
            resources = container.get("resources")
            if isinstance(resources, dict):
                resources.pop("claims", None)
    if not _cluster_trust_bundle_in_use(old):  # ClusterTrustBundleProjection (alpha)
        for volume in _dicts(spec.get("volumes")):
            for source in _dicts(_dict(volume.get("projected")).get("sources")):
                source.pop("clusterTrustBundle", None)
    if not _in_place_resize_in_use(old):  # InPlacePodVerticalScaling (alpha)
        for container in _containers(spec):
            container.pop("resizePolicy", None)
    if not _image_volumes_in_use(old):  # ImageVolume (alpha): the volumes and their mounts
        _drop_image_volumes(spec)


def _drop_image_volumes(spec: dict) -> None:
    volumes = spec.get("volumes")
    if not isinstance(volumes, list):
        return
    names = {v.get("name") for v in _dicts(volumes) if v.get("image") is not None}
    if not names:
        return
    spec["volumes"] = [v for v in volumes
                       if not (isinstance(v, dict) and v.get("image") is not None)]
    for container in _containers(spec):
        mounts = container.get("volumeMounts")
        if isinstance(mounts, list):
            container["volumeMounts"] = [m for m in mounts
                                         if not (isinstance(m, dict) and m.get("name") in names)]


def drop_disabled_pod_status_fields(status: dict, spec: dict, old_spec: dict | None) -> None:
    """``dropDisabledPodStatusFields`` of 1.32."""
    if not isinstance(status, dict):
        return
    statuses = [s for key in ("initContainerStatuses", "containerStatuses",
                              "ephemeralContainerStatuses")
                for s in _dicts(status.get(key))]
    if not _resource_claims_in_use(old_spec):
        status.pop("resourceClaimStatuses", None)
    if not _in_place_resize_in_use(old_spec):
        status.pop("resize", None)
        for container in statuses:
            container.pop("resources", None)
    for container in statuses:
        # InPlacePodVerticalScaling's allocated resources and ResourceHealthStatus (alpha).
        container.pop("allocatedResources", None)
        container.pop("allocatedResourcesStatus", None)
        if not _supplemental_groups_policy_in_use(old_spec):
            container.pop("user", None)


def drop_disabled_pod_fields(pod: dict, old: dict | None = None) -> None:
    """``DropDisabledPodFields``: the spec's and the status's fields of disabled features."""
    old_spec = _spec(old) if old is not None else None
    spec = _spec(pod)
    drop_disabled_pod_spec_fields(spec, old_spec)
    drop_disabled_pod_status_fields(pod.get("status"), spec, old_spec)


# -- the rest of PrepareForCreate -------------------------------------------------------------

def apply_scheduling_gated_condition(pod: dict) -> None:
    """A pod created with scheduling gates says so in a ``PodScheduled`` condition."""
    if not _spec(pod).get("schedulingGates"):
        return
    status = pod.setdefault("status", {})
    conditions = status.get("conditions")
    if any(c.get("type") == "PodScheduled" for c in _dicts(conditions)):
        return
    status["conditions"] = (conditions if isinstance(conditions, list) else []) + [{
        "type": "PodScheduled", "status": "False", "lastProbeTime": None,
        "lastTransitionTime": None, "reason": SCHEDULING_GATED,
        "message": "Scheduling is blocked due to non-empty scheduling gates"}]


def _apply_label_keys(term: dict, labels: dict) -> None:
    selector = term.get("labelSelector")
    if not isinstance(selector, dict):
        # A nil selector matches nothing: no keys to merge into it.
        return
    keys = [("In", k) for k in term.get("matchLabelKeys") or [] if isinstance(k, str)]
    keys += [("NotIn", k) for k in term.get("mismatchLabelKeys") or [] if isinstance(k, str)]
    for operator, key in keys:
        if key in labels:
            expressions = selector.get("matchExpressions")
            if not isinstance(expressions, list):
                expressions = selector["matchExpressions"] = []
            expressions.append({"key": key, "operator": operator, "values": [labels[key]]})


def mutate_pod_affinity(pod: dict) -> None:
    """``mutatePodAffinity`` (MatchLabelKeysInPodAffinity, beta, on): each affinity term's
    ``matchLabelKeys`` and ``mismatchLabelKeys`` become ``In``/``NotIn`` requirements of
    its label selector, with the pod's values of those labels."""
    affinity = _dict(_spec(pod).get("affinity"))
    labels = _dict(_dict(pod.get("metadata")).get("labels"))
    for kind in ("podAffinity", "podAntiAffinity"):
        rules = _dict(affinity.get(kind))
        for weighted in _dicts(rules.get("preferredDuringSchedulingIgnoredDuringExecution")):
            if isinstance(weighted.get("podAffinityTerm"), dict):
                _apply_label_keys(weighted["podAffinityTerm"], labels)
        for term in _dicts(rules.get("requiredDuringSchedulingIgnoredDuringExecution")):
            _apply_label_keys(term, labels)


def _annotation_for_profile(profile: dict) -> str:
    kind = profile.get("type")
    if kind == "Unconfined":
        return "unconfined"
    if kind == "RuntimeDefault":
        return "runtime/default"
    if kind == "Localhost" and isinstance(profile.get("localhostProfile"), str):
        return "localhost/" + profile["localhostProfile"]
    return ""


def _profile_for_annotation(annotation: str) -> dict | None:
    if annotation == "unconfined":
        return {"type": "Unconfined"}
    if annotation == "runtime/default":
        return {"type": "RuntimeDefault"}
    if annotation.startswith("localhost/") and annotation[len("localhost/"):]:
        profile = annotation[len("localhost/"):]
        # ValidateAppArmorProfileField: a valid localhost profile name only.
        if len(profile.encode()) <= 4095 and profile.strip() == profile:
            return {"type": "Localhost", "localhostProfile": profile}
    return None


def apply_app_armor_version_skew(pod: dict) -> list[str]:
    """``applyAppArmorVersionSkew``: the deprecated per-container AppArmor annotations and
    the ``appArmorProfile`` fields are kept in step on create. Returns the deprecation
    warnings upstream gives for annotations that a field does not replace."""
    spec = _spec(pod)
    if _dict(spec.get("os")).get("name") == "windows":
        return []
    meta = pod.setdefault("metadata", {})
    pod_profile = _dict(spec.get("securityContext")).get("appArmorProfile")
    pod_profile = pod_profile if isinstance(pod_profile, dict) else None
    warnings = []
    for container in _containers(spec):
        name = container.get("name")
        if not isinstance(name, str):
            continue
        key = APPARMOR_CONTAINER_ANNOTATION_KEY_PREFIX + name
        annotations = meta.get("annotations")
        annotations = annotations if isinstance(annotations, dict) else {}
        context = container.get("securityContext")
        profile = _dict(context).get("appArmorProfile")
        profile = profile if isinstance(profile, dict) else None
        if key not in annotations:
            source = profile or pod_profile
            value = _annotation_for_profile(source) if source else ""
            if value:
                meta.setdefault("annotations", {})
                if isinstance(meta["annotations"], dict):
                    meta["annotations"][key] = value
        elif profile is None:
            annotation = annotations[key]
            field = _profile_for_annotation(annotation) if isinstance(annotation, str) else None
            warn = field is None
            if field is not None and field != pod_profile:
                if not isinstance(context, dict):
                    context = container["securityContext"] = {}
                context["appArmorProfile"] = field
                warn = True
            if warn:
                warnings.append(f'metadata.annotations[{key}]: deprecated since v1.30; use the '
                                f'"appArmorProfile" field instead')
    return warnings
