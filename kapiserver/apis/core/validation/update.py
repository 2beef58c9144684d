"""Pod updates: the spec's few mutable fields (``ValidatePodUpdate``), status writes
(``ValidatePodStatusUpdate``), the ``ephemeralcontainers`` subresource
(``ValidatePodEphemeralContainersUpdate``) and ``pods/binding`` (``ValidatePodBinding``)."""

from __future__ import annotations

import copy

from ....apimachinery import quantity as _quantity
from ....apimachinery import validation as apivalidation
from ....apimachinery.field_errors import FieldError, FieldPath, GoValue, go_quote
from ....apimachinery.gosyntax import go_string_map
from .. import gotypes, helpers
from .common import (INT32_MAX, d, dicts, i, opt, opt_int, s, str_map, validate_name,
                     validate_qualified_name)
from .options import PodValidationOptions, pod_validation_options
from .pod import validate_pod_metadata_and_spec, validate_pod_specific_annotations
from .scheduling import validate_only_added_tolerations, validate_only_deleted_scheduling_gates

UPDATABLE_POD_SPEC_FIELDS = (
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously "
    "negative)",
)
_SYSTEM_CONDITIONS = frozenset({"PodScheduled", "Ready", "Initialized"})


# -- semantic equality ------------------------------------------------------------------------

def _empty(value) -> bool:
    return value is None or value == [] or value == {}


def semantic_equal(a, b) -> bool:
    """``apiequality.Semantic.DeepEqual`` of decoded JSON: a missing member, ``null``,
    ``[]`` and ``{}`` are alike (nil and empty slices and maps are), quantities compare by
    value. Zero scalars differ from missing ones only where Go could tell them apart, which
    decoded JSON cannot; they are treated alike too."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in a.keys() | b.keys():
            if not semantic_equal(a.get(key), b.get(key)):
                return False
        return True
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(semantic_equal(x, y) for x, y in zip(a, b))
    if _empty(a) and _empty(b):
        return True
    if a is None or b is None:
        return _zero_scalar(a if b is None else b)
    if isinstance(a, str) and isinstance(b, str) and a != b:
        return _same_quantity(a, b)
    return type(a) is type(b) and a == b


def _zero_scalar(value) -> bool:
    return value in ("", 0, False) and not isinstance(value, float) or _empty(value)


def _same_quantity(a: str, b: str) -> bool:
    try:
        return _quantity.parse(a).cmp(_quantity.parse(b)) == 0
    except _quantity.QuantityError:
        return False


# -- pod-specific annotations -----------------------------------------------------------------

def validate_pod_specific_annotation_updates(new: dict, old: dict, path: FieldPath,
                                             opts: PodValidationOptions) -> list[FieldError]:
    """``ValidatePodSpecificAnnotationUpdates``: AppArmor and mirror-pod annotations are
    fixed once the pod exists."""
    new_annotations = str_map(d(new, "metadata").get("annotations"))
    old_annotations = str_map(d(old, "metadata").get("annotations"))
    apparmor = helpers.APPARMOR_CONTAINER_ANNOTATION_KEY_PREFIX
    mirror = helpers.MIRROR_POD_ANNOTATION_KEY
    errs = []
    for key, old_value in old_annotations.items():
        if new_annotations.get(key) == old_value:
            continue
        if key.startswith(apparmor):
            errs.append(FieldError.forbidden(path.key(key),
                                             "may not remove or update AppArmor annotations"))
        if key == mirror:
            errs.append(FieldError.forbidden(path.key(key),
                                             "may not remove or update mirror pod annotation"))
    for key in new_annotations:
        if key in old_annotations:
            continue
        if key.startswith(apparmor):
            errs.append(FieldError.forbidden(path.key(key), "may not add AppArmor annotations"))
        if key == mirror:
            errs.append(FieldError.forbidden(path.key(key), "may not add mirror pod annotation"))
    return errs + validate_pod_specific_annotations(new_annotations, d(new, "spec"), path, opts)


# -- spec updates -----------------------------------------------------------------------------

def _validate_container_updates(new: list, old: list, path: FieldPath
                                ) -> tuple[list[FieldError], bool]:
    # ValidateContainerUpdates: the same containers; images set, without whitespace
    new, old = dicts(new), dicts(old)
    if len(new) != len(old):
        return [FieldError.forbidden(path, "pod updates may not add or remove containers")], True
    errs = []
    for index, container in enumerate(new):
        image = s(container, "image")
        if not image:
            errs.append(FieldError.required(path.index(index).child("image"), ""))
        if image != image.strip(" \t\n\v\f\r\x85\xa0"):
            errs.append(FieldError.invalid(path.index(index).child("image"), image,
                                           "must not have leading or trailing whitespace"))
    return errs, False


def _validate_node_selector_mutation(path: FieldPath, new: dict, old: dict) -> list[FieldError]:
    for key, value in old.items():
        if new.get(key) != value:
            return [FieldError.invalid(path, GoValue(go_string_map(new or None)),
                                       "only additions to spec.nodeSelector are allowed (no "
                                       "mutations or deletions)")]
    return []


def _term_has_only_additions(new: dict, old: dict) -> bool:
    old_expressions, old_fields = dicts(old.get("matchExpressions")), dicts(
        old.get("matchFields"))
    new_expressions, new_fields = dicts(new.get("matchExpressions")), dicts(
        new.get("matchFields"))
    if not old_expressions and not old_fields and (new_expressions or new_fields):
        return False
    for old_list, new_list in ((old_expressions, new_expressions), (old_fields, new_fields)):
        if old_list:
            if len(new_list) < len(old_list):
                return False
            if not semantic_equal(new_list[:len(old_list)], old_list):
                return False
    return True


def _go_terms(terms: list) -> GoValue:
    # []core.NodeSelectorTerm as %#v prints it, its slices by count only.
    items = []
    for term in terms:
        expressions, fields = dicts(term.get("matchExpressions")), dicts(term.get("matchFields"))
        items.append("core.NodeSelectorTerm{MatchExpressions:[]core.NodeSelectorRequirement"
                     + (f"{{...{len(expressions)}...}}" if expressions else "(nil)")
                     + ", MatchFields:[]core.NodeSelectorRequirement"
                     + (f"{{...{len(fields)}...}}" if fields else "(nil)") + "}")
    return GoValue("[]core.NodeSelectorTerm{" + ", ".join(items) + "}")


def _validate_node_affinity_mutation(path: FieldPath, new: dict | None,
                                     old: dict | None) -> list[FieldError]:
    old_required = opt(old, "requiredDuringSchedulingIgnoredDuringExecution") if old else None
    if old_required is None:
        return []
    old_terms = dicts(old_required.get("nodeSelectorTerms"))
    new_required = opt(new, "requiredDuringSchedulingIgnoredDuringExecution") if new else None
    new_terms = dicts(new_required.get("nodeSelectorTerms")) if new_required else []
    terms_path = path.child("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
    if old_terms and len(old_terms) != len(new_terms):
        return [FieldError.invalid(terms_path, _go_terms(new_terms),
                                   "no additions/deletions to non-empty NodeSelectorTerms list "
                                   "are allowed")]
    errs = []
    for index, old_term in enumerate(old_terms):
        if not _term_has_only_additions(new_terms[index], old_term):
            errs.append(FieldError.invalid(terms_path.index(index), _go_terms([new_terms[index]]),
                                           "only additions are allowed (no mutations or "
                                           "deletions)"))
    return errs


def validate_pod_update(new: dict, old: dict,
                        opts: PodValidationOptions | None = None) -> list[FieldError]:
    """``ValidatePodUpdate``: metadata rules, a valid new pod, and a spec changed only in
    its containers' images, ``activeDeadlineSeconds`` (down), added tolerations, removed
    scheduling gates, and a negative grace period set to 1 — or, for pods with scheduling
    gates, added node selectors and affinity. Anything else is Forbidden with go-cmp's
    diff of the specs."""
    opts = opts or pod_validation_options(new, old)
    meta_path, spec_path = FieldPath("metadata"), FieldPath("spec")
    errs = apivalidation.validate_core_object_meta_update(d(new, "metadata"), d(old, "metadata"),
                                                          meta_path)
    errs += validate_pod_metadata_and_spec(new, opts)
    errs += validate_pod_specific_annotation_updates(new, old, meta_path.child("annotations"),
                                                     opts)
    new_spec, old_spec = d(new, "spec"), d(old, "spec")
    for key in ("containers", "initContainers"):
        container_errs, stop = _validate_container_updates(new_spec.get(key), old_spec.get(key),
                                                           spec_path.child(key))
        errs += container_errs
        if stop:
            return errs
    new_deadline = opt_int(new_spec, "activeDeadlineSeconds")
    old_deadline = opt_int(old_spec, "activeDeadlineSeconds")
    deadline_path = spec_path.child("activeDeadlineSeconds")
    if new_deadline is not None:
        if not 0 <= new_deadline <= INT32_MAX:
            errs.append(FieldError.invalid(deadline_path, new_deadline,
                                           apivalidation.inclusive_range_error(0, INT32_MAX)))
            return errs
        if old_deadline is not None and old_deadline < new_deadline:
            errs.append(FieldError.invalid(deadline_path, new_deadline,
                                           "must be less than or equal to previous value"))
            return errs
    elif old_deadline is not None:
        errs.append(FieldError.invalid(deadline_path, None,
                                       "must not update from a positive integer to nil value"))
    errs += validate_only_added_tolerations(new_spec.get("tolerations"),
                                            old_spec.get("tolerations"),
                                            spec_path.child("tolerations"))
    errs += validate_only_deleted_scheduling_gates(new_spec.get("schedulingGates"),
                                                   old_spec.get("schedulingGates"),
                                                   spec_path.child("schedulingGates"))
    if gotypes.pod_specs_equal(new_spec, old_spec):
        return errs
    munged = _munge_pod_spec(new_spec, old_spec, spec_path, errs)
    if not gotypes.pod_specs_equal(munged, old_spec):
        # "This diff isn't perfect, but it's a helluva lot better an 'I'm not going to tell
        # you what the difference is'" (upstream).
        spec_diff = gotypes.pod_spec_diff(old_spec, munged)
        errs.append(FieldError.forbidden(spec_path, "pod updates may not change fields other "
                                                    f"than {','.join(UPDATABLE_POD_SPEC_FIELDS)}"
                                                    f"\n{spec_diff}"))
    return errs


def _munge_pod_spec(new_spec: dict, old_spec: dict, spec_path: FieldPath,
                    errs: list) -> dict:
    """The new spec with what may change set back to the old values."""
    munged = copy.deepcopy(new_spec)
    for key in ("containers", "initContainers"):
        old_containers = dicts(old_spec.get(key))
        containers = dicts(munged.get(key))
        for index, container in enumerate(containers):
            if "image" in old_containers[index]:
                container["image"] = old_containers[index]["image"]
            else:
                container.pop("image", None)
        if containers:
            munged[key] = containers
        else:
            munged.pop(key, None)
    for key in ("activeDeadlineSeconds", "schedulingGates", "tolerations"):
        if key in old_spec:
            munged[key] = copy.deepcopy(old_spec[key])
        else:
            munged.pop(key, None)
    old_grace = opt_int(old_spec, "terminationGracePeriodSeconds")
    if old_grace is not None and old_grace < 0 and \
            opt_int(munged, "terminationGracePeriodSeconds") == 1:
        munged["terminationGracePeriodSeconds"] = old_grace
    if dicts(old_spec.get("schedulingGates")):
        # A gated pod may gain node selectors and node affinity, nothing else.
        old_selector = str_map(old_spec.get("nodeSelector"))
        new_selector = str_map(munged.get("nodeSelector"))
        if not semantic_equal(new_selector, old_selector):
            errs += _validate_node_selector_mutation(spec_path.child("nodeSelector"),
                                                     new_selector, old_selector)
            if "nodeSelector" in old_spec:
                munged["nodeSelector"] = copy.deepcopy(old_spec["nodeSelector"])
            else:
                munged.pop("nodeSelector", None)
        old_affinity = opt(old_spec, "affinity")
        old_node = opt(old_affinity, "nodeAffinity") if old_affinity else None
        new_affinity = opt(munged, "affinity")
        new_node = opt(new_affinity, "nodeAffinity") if new_affinity else None
        if not semantic_equal(old_node, new_node):
            errs += _validate_node_affinity_mutation(
                spec_path.child("affinity", "nodeAffinity"), new_node, old_node)
            if new_affinity is None and old_node is None:
                pass
            elif new_affinity is None:
                munged["affinity"] = {"nodeAffinity": copy.deepcopy(old_node)}
            elif old_affinity is None and new_affinity.get("podAntiAffinity") is None and \
                    new_affinity.get("podAffinity") is None:
                munged.pop("affinity", None)
            elif old_node is None:
                new_affinity.pop("nodeAffinity", None)
            else:
                new_affinity["nodeAffinity"] = copy.deepcopy(old_node)
    return munged


# -- status updates -----------------------------------------------------------------------------

def _validate_state_transitions(new: list, old: list, path: FieldPath, restart_policy: str,
                                init_spec: dict | None = None) -> list[FieldError]:
    # ValidateContainerStateTransition / ValidateInitContainerStateTransition
    if restart_policy == "Always":
        return []
    errs = []
    restartable: dict[str, bool] = {}
    if init_spec is not None:
        for container in dicts(init_spec.get("initContainers")):
            restartable.setdefault(s(container, "name"),
                                   container.get("restartPolicy") == "Always")
    for index, old_status in enumerate(dicts(old)):
        terminated = opt(d(old_status, "state"), "terminated")
        if terminated is None:
            continue
        if i(terminated, "exitCode") != 0 and restart_policy == "OnFailure":
            continue
        name = s(old_status, "name")
        if restartable.get(name):
            continue  # a sidecar may restart
        for new_status in dicts(new):
            if s(new_status, "name") == name and \
                    opt(d(new_status, "state"), "terminated") is None:
                errs.append(FieldError.forbidden(path.index(index).child("state"),
                                                 "may not be transitioned to non-terminated "
                                                 "state"))
    return errs


def _ip_family(ip: str) -> int | None:
    parsed = apivalidation.parse_ip_sloppy(ip)
    return None if parsed is None else parsed.version


def _go_ip_list(kind: str, items: list[dict]) -> GoValue:
    inner = ", ".join(f"core.{kind}{{IP:{go_quote(s(item, 'ip'))}}}" for item in items)
    return GoValue(f"[]core.{kind}{{{inner}}}")


def _validate_ips(items: list, path: FieldPath, kind: str) -> list[FieldError]:
    errs = []
    items = dicts(items)
    for index, item in enumerate(items):
        errs += apivalidation.is_valid_ip(path.index(index), s(item, "ip"))
    if len(items) > 1:
        families = [_ip_family(s(item, "ip")) for item in items]
        dual_stack = None not in families and len(set(families)) == 2
        if not dual_stack or len(items) > 2:
            errs.append(FieldError.invalid(path, _go_ip_list(kind, items),
                                           "may specify no more than one IP for each IP family"))
    return errs


def _validate_pod_ips(pod: dict) -> list[FieldError]:
    path = FieldPath("status", "podIPs")
    items = dicts(d(pod, "status").get("podIPs"))
    errs = _validate_ips(items, path, "PodIP")
    if len(items) > 1:
        seen: set[str] = set()
        for index, item in enumerate(items):
            if s(item, "ip") in seen:
                errs.append(FieldError.duplicate(
                    path.index(index), GoValue(f"core.PodIP{{IP:{go_quote(s(item, 'ip'))}}}")))
            seen.add(s(item, "ip"))
    return errs


def _validate_host_ips(pod: dict) -> list[FieldError]:
    status = d(pod, "status")
    items = dicts(status.get("hostIPs"))
    if not items:
        return []
    path = FieldPath("status", "hostIPs")
    errs = []
    if s(status, "hostIP") != s(items[0], "ip"):
        errs.append(FieldError.invalid(path.index(0).child("ip"), s(items[0], "ip"),
                                       "must be equal to `hostIP`"))
    for index, item in enumerate(items):
        errs += apivalidation.is_valid_ip(path.index(index), s(item, "ip"))
    if len(items) > 1:
        seen: set[str] = set()
        for index, item in enumerate(items):
            if s(item, "ip") in seen:
                errs.append(FieldError.duplicate(
                    path.index(index), GoValue(f"core.HostIP{{IP:{go_quote(s(item, 'ip'))}}}")))
            seen.add(s(item, "ip"))
        families = [_ip_family(s(item, "ip")) for item in items]
        if None in families or len(set(families)) != 2 or len(items) > 2:
            errs.append(FieldError.invalid(path, _go_ip_list("HostIP", items),
                                           "may specify no more than one IP for each IP family"))
    return errs


def _validate_container_status_users(statuses: list, path: FieldPath,
                                     os_name: str) -> list[FieldError]:
    from .security import _id_errors

    errs = []
    for index, status in enumerate(dicts(statuses)):
        user = opt(status, "user")
        if user is None:
            continue
        linux = opt(user, "linux")
        linux_path = path.index(index).child("linux")
        if os_name == "windows":
            if linux is not None:
                errs.append(FieldError.forbidden(linux_path, "cannot be set for a windows pod"))
        elif os_name == "linux" and linux is not None:
            for key in ("uid", "gid"):
                errs += [FieldError.invalid(linux_path.child(key), i(linux, key), msg)
                         for msg in _id_errors(i(linux, key))]
            groups = linux.get("supplementalGroups")
            for group_index, gid in enumerate(groups if isinstance(groups, list) else []):
                if isinstance(gid, int):
                    errs += [FieldError.invalid(
                        linux_path.child("supplementalGroups").index(group_index), gid, msg)
                        for msg in _id_errors(gid)]
    return errs


def _validate_allocated_resources_status(statuses: list, path: FieldPath,
                                         containers: list | None) -> list[FieldError]:
    errs = []
    for index, status in enumerate(dicts(statuses)):
        allocated = status.get("allocatedResourcesStatus")
        if allocated is None:
            continue
        status_path = path.index(index).child("allocatedResourcesStatus")
        if containers is None:
            if allocated:
                errs.append(FieldError.forbidden(status_path,
                                                 "must not be specified in container status"))
            continue
        container = next((c for c in dicts(containers)
                          if s(c, "name") == s(status, "name")), None)
        for item_index, item in enumerate(dicts(allocated)):
            item_path = status_path.index(item_index)
            name = s(item, "name")
            if container is not None:
                resources = d(container, "resources")
                if name.startswith("claim:"):
                    detail = ("must match one of the container's resource claims in a format "
                              "'claim:<claimName>/<request>' or 'claim:<claimName>' if request "
                              "is empty")
                    names = {"claim:" + s(c, "name") + ("/" + s(c, "request")
                                                         if s(c, "request") else "")
                             for c in dicts(resources.get("claims"))}
                else:
                    detail = "must match one of the container's resource requests"
                    names = set(d(resources, "requests"))
                if name not in names:
                    errs.append(FieldError.invalid(item_path.child("name"), GoValue(name),
                                                   detail))
            seen: set[str] = set()
            for resource_index, resource in enumerate(dicts(item.get("resources"))):
                resource_path = item_path.child("resources").index(resource_index)
                health = s(resource, "health")
                if health not in ("Healthy", "Unhealthy", "Unknown"):
                    errs.append(FieldError.not_supported(resource_path.child("health"), health,
                                                         ("Healthy", "Unhealthy", "Unknown")))
                resource_id = s(resource, "resourceID")
                if resource_id in seen:
                    errs.append(FieldError.duplicate(resource_path.child("resourceID"),
                                                     resource_id))
                seen.add(resource_id)
    return errs


def validate_pod_status_update(new: dict, old: dict,
                               opts: PodValidationOptions | None = None) -> list[FieldError]:
    """``ValidatePodStatusUpdate``: metadata rules, conditions, no node change, a valid
    nominated node, a fixed QoS class, no terminated container coming back to life (unless
    the pod restarts it), valid pod and host IPs."""
    opts = opts or pod_validation_options(new, old)
    meta_path = FieldPath("metadata")
    errs = apivalidation.validate_core_object_meta_update(d(new, "metadata"), d(old, "metadata"),
                                                          meta_path)
    errs += validate_pod_specific_annotation_updates(new, old, meta_path.child("annotations"),
                                                     opts)
    new_status, old_status = d(new, "status"), d(old, "status")
    new_spec, old_spec = d(new, "spec"), d(old, "spec")
    for index, condition in enumerate(dicts(new_status.get("conditions"))):
        kind = s(condition, "type")
        if kind not in _SYSTEM_CONDITIONS:
            # upstream reports these under metadata.conditions[i].Type
            errs += validate_qualified_name(kind, meta_path.child("conditions").index(index)
                                            .child("Type"))
    status_path = FieldPath("status")
    if s(new_spec, "nodeName") != s(old_spec, "nodeName"):
        errs.append(FieldError.forbidden(status_path.child("nodeName"),
                                         "may not be changed directly"))
    nominated = s(new_status, "nominatedNodeName")
    if nominated != s(old_status, "nominatedNodeName") and nominated:
        errs += validate_name(apivalidation.name_is_dns_subdomain, nominated,
                              status_path.child("nominatedNodeName"))
    if s(new_status, "qosClass") != s(old_status, "qosClass"):
        errs.append(FieldError.invalid(status_path.child("qosClass"), s(new_status, "qosClass"),
                                       apivalidation.FIELD_IMMUTABLE_ERROR_MSG))
    restart_policy = s(old_spec, "restartPolicy")
    errs += _validate_state_transitions(new_status.get("containerStatuses"),
                                        old_status.get("containerStatuses"),
                                        status_path.child("containerStatuses"), restart_policy)
    errs += _validate_state_transitions(new_status.get("initContainerStatuses"),
                                        old_status.get("initContainerStatuses"),
                                        status_path.child("initContainerStatuses"),
                                        restart_policy, init_spec=old_spec)
    errs += _validate_state_transitions(new_status.get("ephemeralContainerStatuses"),
                                        old_status.get("ephemeralContainerStatuses"),
                                        status_path.child("ephemeralContainerStatuses"), "Never")
    errs += _validate_resource_claim_statuses(new_status.get("resourceClaimStatuses"),
                                              new_spec.get("resourceClaims"),
                                              status_path.child("resourceClaimStatuses"))
    errs += _validate_pod_ips(new)
    errs += _validate_host_ips(new)
    os_name = s(d(new_spec, "os"), "name") if opt(new_spec, "os") is not None else "linux"
    for key in ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses"):
        errs += _validate_container_status_users(new_status.get(key), status_path.child(key),
                                                 os_name)
    errs += _validate_allocated_resources_status(new_status.get("containerStatuses"),
                                                 status_path.child("containerStatuses"),
                                                 new_spec.get("containers") or [])
    errs += _validate_allocated_resources_status(new_status.get("initContainerStatuses"),
                                                 status_path.child("initContainerStatuses"),
                                                 new_spec.get("initContainers") or [])
    errs += _validate_allocated_resources_status(
        new_status.get("ephemeralContainerStatuses"),
        status_path.child("ephemeralContainerStatuses"), None)
    return errs


def _validate_resource_claim_statuses(statuses: list, claims: list,
                                      path: FieldPath) -> list[FieldError]:
    errs = []
    names = {s(claim, "name") for claim in dicts(claims)}
    seen: set[str] = set()
    for index, status in enumerate(dicts(statuses)):
        item_path = path.index(index)
        name = s(status, "name")
        if name not in names:
            errs.append(FieldError.invalid(item_path.child("name"), name,
                                           "must match the name of an entry in "
                                           "`spec.resourceClaims`"))
        if name in seen:
            errs.append(FieldError.duplicate(item_path.child("name"), name))
        else:
            seen.add(name)
        claim_name = status.get("resourceClaimName")
        if isinstance(claim_name, str):
            errs += validate_name(apivalidation.name_is_dns_subdomain, claim_name,
                                  item_path.child("name"))
    return errs


# -- ephemeral containers and bindings ------------------------------------------------------------

def validate_pod_ephemeral_containers_update(new: dict, old: dict,
                                             opts: PodValidationOptions | None = None
                                             ) -> list[FieldError]:
    """``ValidatePodEphemeralContainersUpdate``: a valid pod whose existing ephemeral
    containers are neither removed nor changed (static pods have none)."""
    opts = opts or pod_validation_options(new, old)
    meta_path = FieldPath("metadata")
    errs = apivalidation.validate_core_object_meta_update(d(new, "metadata"), d(old, "metadata"),
                                                          meta_path)
    errs += validate_pod_metadata_and_spec(new, opts)
    errs += validate_pod_specific_annotation_updates(new, old, meta_path.child("annotations"),
                                                     opts)
    if helpers.MIRROR_POD_ANNOTATION_KEY in str_map(d(old, "metadata").get("annotations")):
        return [FieldError.forbidden(FieldPath(""), "static pods do not support ephemeral "
                                                    "containers")]
    spec_path = FieldPath("spec", "ephemeralContainers")
    by_name = {s(c, "name"): c for c in dicts(d(new, "spec").get("ephemeralContainers"))}
    for old_container in dicts(d(old, "spec").get("ephemeralContainers")):
        name = s(old_container, "name")
        new_container = by_name.get(name)
        if new_container is None:
            errs.append(FieldError.forbidden(spec_path, f"existing ephemeral containers "
                                                        f"{go_quote(name)} may not be removed\n"))
        elif not gotypes.ephemeral_containers_equal(old_container, new_container):
            container_diff = gotypes.ephemeral_container_diff(old_container, new_container)
            errs.append(FieldError.forbidden(spec_path, f"existing ephemeral containers "
                                                        f"{go_quote(name)} may not be changed\n"
                                                        f"{container_diff}"))
    return errs


def validate_pod_binding(binding: dict) -> list[FieldError]:
    """``ValidatePodBinding``: a target of kind Node (or none) with a name."""
    target = d(binding, "target")
    errs = []
    kind = s(target, "kind")
    if kind and kind != "Node":
        errs.append(FieldError.not_supported(FieldPath("target", "kind"), kind,
                                             ["Node", "<empty>"]))
    if not s(target, "name"):
        errs.append(FieldError.required(FieldPath("target", "name"), ""))
    return errs
