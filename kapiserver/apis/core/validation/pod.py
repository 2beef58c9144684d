"""Pod specs, pod templates and Pods on create (``ValidatePodSpec``,
``ValidatePodTemplateSpec``, ``ValidatePodCreate`` and the pod-specific annotations;
``pkg/apis/core/validation``, 1.32)."""

from __future__ import annotations

from ....apimachinery import validation as apivalidation
from ....apimachinery.field_errors import FieldError, FieldPath, GoValue, go_quote
from ....apimachinery.gosyntax import go_str, go_string_map
from ....apimachinery.labels import selector_from_set
from .. import helpers
from .common import (INT32_MAX, d, dicts, opt, opt_int, opt_str, s, str_map,
                     validate_dns1123_label, validate_local_descending_path, validate_name)
from .containers import (validate_container_only_for_pod, validate_containers,
                         validate_ephemeral_containers, validate_init_containers)
from .dns import (validate_dns_policy, validate_host_aliases, validate_host_network_deps,
                  validate_pod_dns_config)
from .options import (PodValidationOptions, pod_template_validation_options,
                      pod_validation_options)
from .resources import (pod_resource_claim_names, validate_overhead,
                        validate_pod_resource_claims, validate_pod_resources)
from .scheduling import (validate_affinity, validate_readiness_gates, validate_scheduling_gates,
                         validate_tolerations, validate_topology_spread_constraints)
from .security import (host_users, validate_host_users,
                       validate_linux, validate_os, validate_pod_security_context,
                       validate_windows, validate_windows_host_process_pod)
from .volumes import validate_volumes

RESTART_POLICIES = ("Always", "OnFailure", "Never")
PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")

_SECCOMP_RUNTIME_DEFAULT = "runtime/default"
_SECCOMP_DOCKER_DEFAULT = "docker/default"
_SECCOMP_UNCONFINED = "unconfined"
_SECCOMP_LOCALHOST_PREFIX = "localhost/"
_APPARMOR_RUNTIME_DEFAULT = "runtime/default"
_APPARMOR_UNCONFINED = "unconfined"
_APPARMOR_LOCALHOST_PREFIX = "localhost/"


# -- pod-specific annotations -----------------------------------------------------------------

def validate_seccomp_profile_annotation(profile: str, path: FieldPath) -> list[FieldError]:
    """``ValidateSeccompProfile``: an annotation's seccomp profile."""
    if profile in (_SECCOMP_RUNTIME_DEFAULT, _SECCOMP_DOCKER_DEFAULT, _SECCOMP_UNCONFINED):
        return []
    if profile.startswith(_SECCOMP_LOCALHOST_PREFIX):
        return validate_local_descending_path(profile[len(_SECCOMP_LOCALHOST_PREFIX):], path)
    return [FieldError.invalid(path, profile, "must be a valid seccomp profile")]


def _has_container(spec: dict, name: str) -> bool:
    return any(s(container, "name") == name for container in helpers.all_containers(spec))


def _validate_apparmor_annotations(annotations: dict, spec: dict,
                                   path: FieldPath) -> list[FieldError]:
    errs = []
    prefix = helpers.APPARMOR_CONTAINER_ANNOTATION_KEY_PREFIX
    for key, profile in annotations.items():
        if not key.startswith(prefix):
            continue
        container = key[len(prefix):]
        if not _has_container(spec, container):
            errs.append(FieldError.invalid(path.key(key), container, "container not found"))
        if profile not in ("", _APPARMOR_RUNTIME_DEFAULT, _APPARMOR_UNCONFINED) and \
                not profile.startswith(_APPARMOR_LOCALHOST_PREFIX):
            errs.append(FieldError.invalid(path.key(key), profile,
                                           "invalid AppArmor profile name: "
                                           f"{go_quote(profile)}"))
    return errs


def validate_pod_specific_annotations(annotations: dict, spec: dict, path: FieldPath,
                                      opts: PodValidationOptions) -> list[FieldError]:
    """``ValidatePodSpecificAnnotations``: mirror pods, tolerations, deletion cost,
    seccomp and AppArmor annotations."""
    annotations = str_map(annotations)
    errs = []
    mirror = annotations.get(helpers.MIRROR_POD_ANNOTATION_KEY)
    if mirror is not None and not s(spec, "nodeName"):
        errs.append(FieldError.invalid(path.key(helpers.MIRROR_POD_ANNOTATION_KEY), mirror,
                                       "must set spec.nodeName if mirror pod annotation is set"))
    if annotations.get(helpers.TOLERATIONS_ANNOTATION_KEY):
        tolerations, error = helpers.tolerations_from_annotations(annotations)
        if tolerations is None:
            errs.append(FieldError.invalid(path, helpers.TOLERATIONS_ANNOTATION_KEY, error))
        elif tolerations:
            errs += validate_tolerations(tolerations,
                                         path.child(helpers.TOLERATIONS_ANNOTATION_KEY))
    if not opts.allow_invalid_pod_deletion_cost and helpers.deletion_cost_error(annotations):
        errs.append(FieldError.invalid(path.key(helpers.POD_DELETION_COST),
                                       annotations.get(helpers.POD_DELETION_COST, ""),
                                       "must be a 32bit integer"))
    pod_profile = annotations.get(helpers.SECCOMP_POD_ANNOTATION_KEY)
    if pod_profile is not None:
        errs += validate_seccomp_profile_annotation(
            pod_profile, path.child(helpers.SECCOMP_POD_ANNOTATION_KEY))
    for key, profile in annotations.items():
        if key.startswith(helpers.SECCOMP_CONTAINER_ANNOTATION_KEY_PREFIX):
            errs += validate_seccomp_profile_annotation(profile, path.child(key))
    return errs + _validate_apparmor_annotations(annotations, spec, path)


def _seccomp_mismatch(annotation: str, profile: dict, path: FieldPath) -> FieldError | None:
    # validateSeccompAnnotationsAndFieldsMatch
    kind = s(profile, "type")
    if kind == "Unconfined":
        if annotation != _SECCOMP_UNCONFINED:
            return FieldError.forbidden(path.child("type"),
                                        "seccomp type in annotation and field must match")
    elif kind == "RuntimeDefault":
        if annotation not in (_SECCOMP_RUNTIME_DEFAULT, _SECCOMP_DOCKER_DEFAULT):
            return FieldError.forbidden(path.child("type"),
                                        "seccomp type in annotation and field must match")
    elif kind == "Localhost":
        if not annotation.startswith(_SECCOMP_LOCALHOST_PREFIX):
            return FieldError.forbidden(path.child("type"),
                                        "seccomp type in annotation and field must match")
        if opt_str(profile, "localhostProfile") != annotation[len(_SECCOMP_LOCALHOST_PREFIX):]:
            return FieldError.forbidden(path.child("localhostProfile"),
                                        "seccomp profile in annotation and field must match")
    return None


def _validate_seccomp_annotations_and_fields(meta: dict, spec: dict,
                                             path: FieldPath) -> list[FieldError]:
    annotations = str_map(meta.get("annotations"))
    errs = []
    pod_profile = opt(d(spec, "securityContext"), "seccompProfile")
    annotation = annotations.get(helpers.SECCOMP_POD_ANNOTATION_KEY)
    if pod_profile is not None and annotation is not None:
        error = _seccomp_mismatch(annotation, pod_profile,
                                  path.child("securityContext", "seccompProfile"))
        if error is not None:
            errs.append(error)
    for container, container_path in helpers.visit_containers_with_path(spec, path):
        profile = opt(d(container, "securityContext"), "seccompProfile")
        if profile is None:
            continue
        key = helpers.SECCOMP_CONTAINER_ANNOTATION_KEY_PREFIX + s(container, "name")
        if key in annotations:
            error = _seccomp_mismatch(annotations[key], profile,
                                      container_path.child("securityContext", "seccompProfile"))
            if error is not None:
                errs.append(error)
    return errs


def _validate_apparmor_annotations_and_fields(meta: dict, spec: dict,
                                              path: FieldPath) -> list[FieldError]:
    # validateAppArmorAnnotationsAndFieldsMatchOnCreate
    if s(d(spec, "os"), "name") == "windows":
        return []
    annotations = str_map(meta.get("annotations"))
    errs = []
    pod_profile = opt(d(spec, "securityContext"), "appArmorProfile")
    for container, container_path in helpers.visit_containers_with_path(spec, path):
        profile = opt(d(container, "securityContext"), "appArmorProfile") or pod_profile
        if profile is None:
            continue
        annotation = annotations.get(helpers.APPARMOR_CONTAINER_ANNOTATION_KEY_PREFIX
                                     + s(container, "name"))
        if annotation is None:
            continue
        apparmor_path = container_path.child("securityContext", "appArmorProfile")
        kind = s(profile, "type")
        mismatch = "apparmor type in annotation and field must match"
        if kind == "Unconfined" and annotation != _APPARMOR_UNCONFINED:
            errs.append(FieldError.forbidden(apparmor_path.child("type"), mismatch))
        elif kind == "RuntimeDefault" and annotation != _APPARMOR_RUNTIME_DEFAULT:
            errs.append(FieldError.forbidden(apparmor_path.child("type"), mismatch))
        elif kind == "Localhost":
            if not annotation.startswith(_APPARMOR_LOCALHOST_PREFIX):
                errs.append(FieldError.forbidden(apparmor_path.child("type"), mismatch))
            elif opt_str(profile, "localhostProfile") != \
                    annotation[len(_APPARMOR_LOCALHOST_PREFIX):]:
                errs.append(FieldError.forbidden(apparmor_path.child("localhostProfile"),
                                                 "apparmor profile in annotation and field "
                                                 "must match"))
    return errs


# -- the pod spec ---------------------------------------------------------------------------------

def _validate_restart_policy(policy: str, path: FieldPath) -> list[FieldError]:
    if policy in RESTART_POLICIES:
        return []
    if not policy:
        return [FieldError.required(path, "")]
    return [FieldError.not_supported(path, policy, RESTART_POLICIES)]


def _validate_image_pull_secrets(secrets, path: FieldPath) -> list[FieldError]:
    errs = []
    for index, secret in enumerate(secrets if isinstance(secrets, list) else []):
        if isinstance(secret, dict) and set(secret) <= {"name"}:
            continue
        name = s(secret, "name") if isinstance(secret, dict) else ""
        errs.append(FieldError.invalid(path.index(index),
                                       GoValue(f"core.LocalObjectReference{{Name:{go_str(name)}}}"),
                                       "only name may be set"))
    return errs


def validate_pod_spec(spec: dict, meta: dict | None, path: FieldPath,
                      opts: PodValidationOptions | None = None) -> list[FieldError]:
    """``ValidatePodSpec``. ``meta`` is the Pod's metadata (generic ephemeral volumes need
    its name), ``None`` for templates; ``path`` is the spec's (``spec``,
    ``spec.template.spec``)."""
    opts = opts or PodValidationOptions()
    spec = spec if isinstance(spec, dict) else {}
    errs = []
    grace_period = opt_int(spec, "terminationGracePeriodSeconds")
    if grace_period is None:
        errs.append(FieldError.required(path.child("terminationGracePeriodSeconds"), ""))
    uses_host_users = host_users(spec)
    restart_policy = s(spec, "restartPolicy")
    volumes, volume_errs = validate_volumes(spec.get("volumes"), meta, path.child("volumes"),
                                            opts)
    errs += volume_errs
    claim_names = pod_resource_claim_names(spec.get("resourceClaims"))
    errs += validate_pod_resource_claims(spec.get("resourceClaims"), path.child("resourceClaims"))
    errs += validate_containers(spec.get("containers"), volumes, claim_names, grace_period,
                                path.child("containers"), opts, restart_policy, uses_host_users)
    errs += validate_init_containers(spec.get("initContainers"), spec.get("containers"), volumes,
                                     claim_names, grace_period, path.child("initContainers"),
                                     opts, restart_policy, uses_host_users)
    errs += validate_ephemeral_containers(spec.get("ephemeralContainers"),
                                          spec.get("containers"), spec.get("initContainers"),
                                          volumes, claim_names, path.child("ephemeralContainers"),
                                          opts, restart_policy, uses_host_users)
    if opts.pod_level_resources_enabled:
        errs += validate_pod_resources(spec, claim_names, path.child("resources"), opts)
    errs += validate_host_network_deps(spec, path, opts)
    errs += _validate_restart_policy(restart_policy, path.child("restartPolicy"))
    errs += validate_dns_policy(s(spec, "dnsPolicy"), path.child("dnsPolicy"))
    errs += apivalidation.validate_labels(str_map(spec.get("nodeSelector")),
                                          path.child("nodeSelector"))
    errs += validate_pod_security_context(spec, path.child("securityContext"), opts)
    errs += _validate_image_pull_secrets(spec.get("imagePullSecrets"),
                                         path.child("imagePullSecrets"))
    errs += validate_affinity(opt(spec, "affinity"), opts, path.child("affinity"))
    errs += validate_pod_dns_config(opt(spec, "dnsConfig"), s(spec, "dnsPolicy"),
                                    path.child("dnsConfig"), opts)
    errs += validate_readiness_gates(spec.get("readinessGates"), path.child("readinessGates"))
    errs += validate_scheduling_gates(spec.get("schedulingGates"), path.child("schedulingGates"))
    errs += validate_topology_spread_constraints(spec.get("topologySpreadConstraints"),
                                                 path.child("topologySpreadConstraints"), opts)
    errs += validate_windows_host_process_pod(spec, path, opts)
    errs += validate_host_users(spec, path)
    service_account = s(spec, "serviceAccountName")
    if service_account:
        errs += validate_name(apivalidation.validate_service_account_name, service_account,
                              path.child("serviceAccountName"))
    node_name = s(spec, "nodeName")
    if node_name:
        errs += validate_name(apivalidation.name_is_dns_subdomain, node_name,
                              path.child("nodeName"))
    deadline = opt_int(spec, "activeDeadlineSeconds")
    if deadline is not None and not 1 <= deadline <= INT32_MAX:
        errs.append(FieldError.invalid(path.child("activeDeadlineSeconds"), deadline,
                                       apivalidation.inclusive_range_error(1, INT32_MAX)))
    for key in ("hostname", "subdomain"):
        value = s(spec, key)
        if value:
            errs += validate_dns1123_label(value, path.child(key))
    tolerations = spec.get("tolerations")
    if isinstance(tolerations, list) and tolerations:
        errs += validate_tolerations(tolerations, path.child("tolerations"))
    aliases = spec.get("hostAliases")
    if isinstance(aliases, list) and aliases:
        errs += validate_host_aliases(aliases, path.child("hostAliases"))
    priority_class = s(spec, "priorityClassName")
    if priority_class:
        errs += validate_name(apivalidation.name_is_dns_subdomain, priority_class,
                              path.child("priorityClassName"))
    runtime_class = opt_str(spec, "runtimeClassName")
    if runtime_class is not None:
        errs += validate_name(apivalidation.name_is_dns_subdomain, runtime_class,
                              path.child("runtimeClassName"))
    preemption = opt_str(spec, "preemptionPolicy")
    if preemption is not None:
        if not preemption:
            errs.append(FieldError.required(path.child("preemptionPolicy"), ""))
        elif preemption not in PREEMPTION_POLICIES:
            errs.append(FieldError.not_supported(path.child("preemptionPolicy"), preemption,
                                                 PREEMPTION_POLICIES))
    overhead = spec.get("overhead")
    if isinstance(overhead, dict):
        errs += validate_overhead(overhead, path.child("overhead"), opts)
    if opt(spec, "os") is not None:
        os_errs = validate_os(spec, path.child("os"))
        if os_errs:
            errs += os_errs
        elif s(d(spec, "os"), "name") == "linux":
            errs += validate_linux(spec, path)
        elif s(d(spec, "os"), "name") == "windows":
            errs += validate_windows(spec, path)
    return errs


# -- templates -------------------------------------------------------------------------------------

def validate_pod_template_spec(template: dict, path: FieldPath,
                               opts: PodValidationOptions | None = None) -> list[FieldError]:
    """``ValidatePodTemplateSpec``: the template's labels and annotations, its spec, and
    no ephemeral containers. ``path`` is the template's (``spec.template``)."""
    opts = opts or PodValidationOptions()
    template = template if isinstance(template, dict) else {}
    meta, spec = d(template, "metadata"), d(template, "spec")
    errs = apivalidation.validate_labels(str_map(meta.get("labels")), path.child("labels"))
    annotations = str_map(meta.get("annotations"))
    errs += apivalidation.validate_annotations(annotations, path.child("annotations"))
    errs += validate_pod_specific_annotations(annotations, spec, path.child("annotations"), opts)
    errs += validate_pod_spec(spec, None, path.child("spec"), opts)
    errs += _validate_seccomp_annotations_and_fields(meta, spec, path.child("spec"))
    errs += _validate_apparmor_annotations_and_fields(meta, spec, path.child("spec"))
    if dicts(spec.get("ephemeralContainers")):
        errs.append(FieldError.forbidden(path.child("spec", "ephemeralContainers"),
                                         "ephemeral containers not allowed in pod template"))
    return errs


def validate_pod_template_spec_update(new: dict, old: dict, path: FieldPath,
                                      opts: PodValidationOptions | None = None
                                      ) -> list[FieldError]:
    """A template on its owner's update: ``ValidatePodTemplateSpec`` of the new one, with
    the options the old one earns (``GetValidationOptionsFromPodTemplate(new, old)``).
    Templates are mutable; what a workload keeps immutable is its own rule."""
    if opts is None:
        opts = pod_template_validation_options(new, old)
    return validate_pod_template_spec(new, path, opts)


def validate_pod_template_spec_for_rc(template: dict | None, selector: dict, path: FieldPath,
                                      opts: PodValidationOptions | None = None
                                      ) -> list[FieldError]:
    """``ValidatePodTemplateSpecForRC``: required, matching the selector, restartPolicy
    Always, no activeDeadlineSeconds (ReplicationControllers)."""
    if not isinstance(template, dict):
        return [FieldError.required(path, "")]
    errs = []
    selector = str_map(selector)
    labels = str_map(d(template, "metadata").get("labels"))
    if selector and not selector_from_set(selector).matches(labels):
        raw_labels = d(template, "metadata").get("labels")
        shown = GoValue(go_string_map(labels if isinstance(raw_labels, dict) else None))
        errs.append(FieldError.invalid(path.child("metadata", "labels"), shown,
                                       "`selector` does not match template `labels`"))
    errs += validate_pod_template_spec(template, path, opts)
    spec = d(template, "spec")
    if s(spec, "restartPolicy") != "Always":
        errs.append(FieldError.not_supported(path.child("spec", "restartPolicy"),
                                             s(spec, "restartPolicy"), ["Always"]))
    if spec.get("activeDeadlineSeconds") is not None:
        errs.append(FieldError.forbidden(path.child("spec", "activeDeadlineSeconds"),
                                         "activeDeadlineSeconds in ReplicationController is not "
                                         "Supported"))
    return errs


def validate_pod_template(template: dict, opts: PodValidationOptions | None = None
                          ) -> list[FieldError]:
    """``ValidatePodTemplate``: a PodTemplate object (its metadata, then ``template``)."""
    if opts is None:
        opts = pod_template_validation_options(opt(template, "template"))
    errs = apivalidation.validate_core_object_meta(d(template, "metadata"), True,
                                                   apivalidation.name_is_dns_subdomain)
    return errs + validate_pod_template_spec(d(template, "template"), FieldPath("template"), opts)


def validate_pod_template_update(new: dict, old: dict,
                                 opts: PodValidationOptions | None = None) -> list[FieldError]:
    """``ValidatePodTemplateUpdate``: metadata update rules, then the new template."""
    if opts is None:
        opts = pod_template_validation_options(opt(new, "template"), opt(old, "template"))
    errs = apivalidation.validate_core_object_meta_update(d(new, "metadata"), d(old, "metadata"))
    return errs + validate_pod_template_spec(d(new, "template"), FieldPath("template"), opts)


# -- Pods -------------------------------------------------------------------------------------

def validate_pod_metadata_and_spec(pod: dict, opts: PodValidationOptions) -> list[FieldError]:
    """``validatePodMetadataAndSpec``: what create and update check alike."""
    meta_path, spec_path = FieldPath("metadata"), FieldPath("spec")
    meta, spec = d(pod, "metadata"), d(pod, "spec")
    errs = apivalidation.validate_core_object_meta(meta, True, apivalidation.name_is_dns_subdomain,
                                                   meta_path)
    errs += validate_pod_specific_annotations(meta.get("annotations"), spec,
                                              meta_path.child("annotations"), opts)
    errs += validate_pod_spec(spec, meta, spec_path, opts)
    if not s(spec, "serviceAccountName"):
        for index, volume in enumerate(dicts(spec.get("volumes"))):
            projected = opt(volume, "projected")
            if projected is None:
                continue
            sources_path = spec_path.child("volumes").index(index).child("projected", "sources")
            for source_index, source in enumerate(dicts(projected.get("sources"))):
                if opt(source, "serviceAccountToken") is not None:
                    errs.append(FieldError.forbidden(
                        sources_path.index(source_index).child("serviceAccountToken"),
                        "must not be specified when serviceAccountName is not set"))
    for key in ("containers", "initContainers"):
        for index, container in enumerate(dicts(spec.get(key))):
            errs += validate_container_only_for_pod(container, spec_path.child(key).index(index))
    return errs


def validate_pod_create(pod: dict, opts: PodValidationOptions | None = None
                        ) -> list[FieldError]:
    """``ValidatePodCreate``: metadata and spec, no ephemeral containers, no node while
    scheduling gates remain, annotations and fields of seccomp and AppArmor agreeing."""
    opts = opts or pod_validation_options(pod)
    errs = validate_pod_metadata_and_spec(pod, opts)
    spec_path = FieldPath("spec")
    meta, spec = d(pod, "metadata"), d(pod, "spec")
    if dicts(spec.get("ephemeralContainers")):
        errs.append(FieldError.forbidden(spec_path.child("ephemeralContainers"),
                                         "cannot be set on create"))
    if s(spec, "nodeName") and dicts(spec.get("schedulingGates")):
        errs.append(FieldError.forbidden(spec_path.child("nodeName"),
                                         "cannot be set until all schedulingGates have been "
                                         "cleared"))
    errs += _validate_seccomp_annotations_and_fields(meta, spec, spec_path)
    return errs + _validate_apparmor_annotations_and_fields(meta, spec, spec_path)

