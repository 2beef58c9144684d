"""``PodValidationOptions`` and how upstream derives them (``pkg/api/pod`` 1.32).

The options loosen validation where kube-apiserver 1.32's feature gates do, and on update
where the stored object already used something a newer rule forbids (a stored object must
stay updatable). Strategies compute them with :func:`pod_validation_options` (pods) or
:func:`pod_template_validation_options` (every workload's template).
"""

from __future__ import annotations

from dataclasses import dataclass

from ....apimachinery import quantity as _quantity
from ....apimachinery.field_errors import FieldPath
from ....apimachinery.selector_validation import (LabelSelectorValidationOptions,
                                                  validate_label_selector)
from .. import helpers
from .common import d, dicts, lst, opt, s, str_map, validate_local_non_reserved_path


@dataclass
class PodValidationOptions:
    """upstream's ``PodValidationOptions``; the defaults are a create with 1.32's gates."""

    #: An unparseable ``controller.kubernetes.io/pod-deletion-cost`` passes.
    allow_invalid_pod_deletion_cost: bool = False
    #: Invalid values in pod (anti-)affinity label selectors pass.
    allow_invalid_label_value_in_selector: bool = False
    #: Huge page quantities need not be whole pages.
    allow_indivisible_huge_pages_values: bool = False
    #: Topology spread constraints' label selectors are not validated.
    allow_invalid_topology_spread_constraint_label_selector: bool = False
    #: A projected service account token may name a non-local path.
    allow_non_local_projected_token_path: bool = False
    #: Namespaced sysctls pass in pods sharing the host's network or IPC namespace.
    allow_namespaced_sysctls_for_host_net_and_host_ipc: bool = False
    #: The spec is a Pod's, not a template's (host ports must then match container ports).
    resource_is_pod: bool = False
    #: RelaxedEnvironmentVariableValidation (beta, on in 1.32): any printable ASCII but '='.
    allow_relaxed_environment_variable_validation: bool = True
    #: RelaxedDNSSearchValidation (alpha, off in 1.32): "." and underscores in searches.
    allow_relaxed_dns_search_validation: bool = False
    #: PodLifecycleSleepActionAllowZero (alpha, off in 1.32): ``sleep.seconds: 0``.
    allow_pod_lifecycle_sleep_action_zero_value: bool = False
    #: SELinuxChangePolicy off: only ``Recursive`` may be set.
    allow_only_recursive_selinux_change_policy: bool = True
    #: PodLevelResources (alpha, off in 1.32): ``spec.resources`` is validated.
    pod_level_resources_enabled: bool = False
    #: InPlacePodVerticalScaling (alpha, off in 1.32): sidecars may carry a resizePolicy.
    allow_sidecar_resize_policy: bool = False
    #: kube-apiserver's ``--allow-privileged``; kubeadm, kind and most clusters set it.
    allow_privileged: bool = True


# Only whether errors exist matters where the options are derived.
_ANY_PATH = FieldPath("spec")


def _affinity_terms(affinity: dict):
    for kind in ("podAffinity", "podAntiAffinity"):
        section = d(affinity, kind)
        yield from dicts(section.get("requiredDuringSchedulingIgnoredDuringExecution"))
        for weighted in dicts(section.get("preferredDuringSchedulingIgnoredDuringExecution")):
            yield d(weighted, "podAffinityTerm")


def has_invalid_label_value_in_affinity_selector(spec: dict) -> bool:
    """``hasInvalidLabelValueInAffinitySelector``."""
    strict = LabelSelectorValidationOptions()
    for term in _affinity_terms(d(spec, "affinity")):
        for key in ("labelSelector", "namespaceSelector"):
            if validate_label_selector(opt(term, key), strict, _ANY_PATH):
                return True
    return False


def _has_invalid_topology_spread_selector(spec: dict) -> bool:
    strict = LabelSelectorValidationOptions()
    return any(validate_label_selector(opt(constraint, "labelSelector"), strict, _ANY_PATH)
               for constraint in dicts(spec.get("topologySpreadConstraints")))


def _has_non_local_projected_token_path(spec: dict) -> bool:
    for volume in dicts(spec.get("volumes")):
        for source in dicts(d(volume, "projected").get("sources")):
            token = opt(source, "serviceAccountToken")
            if token is not None and validate_local_non_reserved_path(s(token, "path"), _ANY_PATH):
                return True
    return False


def _resource_lists(container: dict):
    resources = d(container, "resources")
    yield d(resources, "limits")
    yield d(resources, "requests")


def uses_indivisible_huge_pages_values(spec: dict) -> bool:
    """``usesIndivisibleHugePagesValues``: some huge page quantity is not whole pages."""
    lists = [resources for container in helpers.all_containers(spec)
             for resources in _resource_lists(container)]
    lists.append(d(spec, "overhead"))
    for resources in lists:
        for name, value in resources.items():
            if not name.startswith(helpers.HUGE_PAGES_PREFIX):
                continue
            try:
                parsed = _quantity.from_json(value)
            except (_quantity.QuantityError, ValueError, TypeError):
                continue
            if not helpers.is_huge_page_resource_value_divisible(name, parsed):
                return True
    return False


def _has_host_sysctl_conflict(spec: dict) -> bool:
    security = d(spec, "securityContext")
    for sysctl in dicts(security.get("sysctls")):
        namespace = helpers.sysctl_namespace(s(sysctl, "name"))
        if (namespace == helpers.NET_NAMESPACE and spec.get("hostNetwork") is True) or \
                (namespace == helpers.IPC_NAMESPACE and spec.get("hostIPC") is True):
            return True
    return False


def _has_dot_or_underscore_search(spec: dict) -> bool:
    return any(search == "." or "_" in search
               for search in lst(d(spec, "dnsConfig"), "searches") if isinstance(search, str))


def _uses_sleep_zero(spec: dict) -> bool:
    for container in helpers.all_containers(spec):
        lifecycle = d(container, "lifecycle")
        for hook in ("preStop", "postStart"):
            sleep = opt(d(lifecycle, hook), "sleep")
            if sleep is not None and sleep.get("seconds") == 0:
                return True
    return False


def _uses_mount_option_selinux_policy(spec: dict) -> bool:
    return d(spec, "securityContext").get("seLinuxChangePolicy") == "MountOption"


def _has_sidecar_resize_policy(spec: dict) -> bool:
    return any(container.get("restartPolicy") == "Always" and lst(container, "resizePolicy")
               for container in dicts(spec.get("initContainers")))


def validation_options_from_pod_spec_and_meta(spec: dict | None, old_spec: dict | None,
                                              meta: dict | None,
                                              old_meta: dict | None) -> PodValidationOptions:
    """``GetValidationOptionsFromPodSpecAndMeta``: 1.32's gates, loosened on update for
    what the old object already uses."""
    opts = PodValidationOptions()
    if old_spec is not None:
        opts.allow_relaxed_environment_variable_validation = True
        opts.allow_relaxed_dns_search_validation = _has_dot_or_underscore_search(old_spec)
        opts.allow_only_recursive_selinux_change_policy = \
            not _uses_mount_option_selinux_policy(old_spec)
        opts.allow_indivisible_huge_pages_values = uses_indivisible_huge_pages_values(old_spec)
        opts.allow_invalid_label_value_in_selector = \
            has_invalid_label_value_in_affinity_selector(old_spec)
        opts.allow_invalid_topology_spread_constraint_label_selector = \
            _has_invalid_topology_spread_selector(old_spec)
        opts.allow_non_local_projected_token_path = _has_non_local_projected_token_path(old_spec)
        opts.allow_namespaced_sysctls_for_host_net_and_host_ipc = \
            _has_host_sysctl_conflict(old_spec)
        opts.allow_pod_lifecycle_sleep_action_zero_value = _uses_sleep_zero(old_spec)
        opts.allow_sidecar_resize_policy = _has_sidecar_resize_policy(old_spec)
    if old_meta is not None:
        # An update validates the deletion cost only if the stored one was valid.
        opts.allow_invalid_pod_deletion_cost = helpers.deletion_cost_error(
            str_map(old_meta.get("annotations")))
    return opts


def pod_validation_options(pod: dict, old_pod: dict | None = None) -> PodValidationOptions:
    """The options of a Pod create (``old_pod`` None) or update; ``resource_is_pod`` set,
    as the pod strategy sets it."""
    old_pod = old_pod if isinstance(old_pod, dict) else None
    opts = validation_options_from_pod_spec_and_meta(
        opt(pod, "spec"), opt(old_pod, "spec") if old_pod else None,
        opt(pod, "metadata"), opt(old_pod, "metadata") if old_pod else None)
    opts.resource_is_pod = True
    return opts


def pod_template_validation_options(template: dict | None,
                                    old_template: dict | None = None) -> PodValidationOptions:
    """``GetValidationOptionsFromPodTemplate``: the options for a workload's template
    (``old_template`` on update); either may be ``None``."""
    template = template if isinstance(template, dict) else None
    old_template = old_template if isinstance(old_template, dict) else None
    return validation_options_from_pod_spec_and_meta(
        opt(template, "spec") if template else None,
        opt(old_template, "spec") if old_template else None,
        opt(template, "metadata") if template else None,
        opt(old_template, "metadata") if old_template else None)
