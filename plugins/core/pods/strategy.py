"""The strategies of Pods (``pkg/registry/core/pod/strategy.go``): the pod, its status
and its ephemeral containers, their field selectors and graceful deletion."""

from __future__ import annotations

import copy
import json

from kapiserver.registry.builtin import builtin_spec
from kapiserver.registry.builtin_strategy import StatusStrategy
from kapiserver.registry.strategy import Strategy

from ..kind_helpers import CoreStrategy
from . import disabled, table

#: Fields ``fieldSelector`` may name on pods (the core group's field-label conversion);
#: ``spec.host`` is an old client's name for ``spec.nodeName``, ``status.podIPs`` is
#: accepted but no pod has it as a selectable field (so it reads as "").
SELECTABLE_FIELDS = ("spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
                     "spec.serviceAccountName", "spec.hostNetwork", "status.phase",
                     "status.podIP", "status.podIPs", "status.nominatedNodeName", "spec.host")
PODS = builtin_spec("", "v1", "pods", selectable_fields=SELECTABLE_FIELDS)
PENDING = "Pending"
TERMINAL_PHASES = ("Succeeded", "Failed")


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _str(value) -> str:
    return value if isinstance(value, str) else ""


def _int(value):
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def check_graceful_delete(pod: dict, grace_period) -> int:
    """``podStrategy.CheckGracefulDelete``: the grace period a delete gives ``pod``.

    The request's ``gracePeriodSeconds`` (``None``: the pod's
    ``terminationGracePeriodSeconds``, or 0); 0 for a pod no node runs and for a finished
    one; a negative period is 1.
    """
    spec = _dict(pod.get("spec"))
    period = grace_period
    if period is None:
        period = _int(spec.get("terminationGracePeriodSeconds")) or 0
    if not spec.get("nodeName"):
        period = 0
    if _dict(pod.get("status")).get("phase") in TERMINAL_PHASES:
        period = 0
    return 1 if period < 0 else period


def _prepared_parts(pod: dict) -> str:
    """What ``PrepareForCreate``'s feature steps may change (the spec, the annotations,
    the status), as text to compare."""
    return json.dumps((pod.get("spec"), _dict(pod.get("metadata")).get("annotations"),
                       pod.get("status")), separators=(",", ":"))


class PodStrategy(CoreStrategy):
    """``podStrategy``: defaults, ``PrepareForCreate``/``PrepareForUpdate``, validation,
    selectable fields, the Table and graceful deletion."""

    #: Its upstream store is built with ``ReturnDeletedObject``: DELETE answers the object.
    return_deleted_object = True

    def set_defaults(self, obj: dict) -> None:
        from kapiserver.apis.core.defaults import set_pod_defaults

        set_pod_defaults(obj)

    def prepare_for_create(self, obj: dict) -> None:
        from kapiserver.apis.core.qos import get_pod_qos

        # GetPodQOS reads the status as sent, before it is replaced.
        obj["status"] = {"phase": PENDING, "qosClass": get_pod_qos(obj)}  # in Go's order
        before = _prepared_parts(obj)
        disabled.drop_disabled_pod_fields(obj, None)
        disabled.apply_scheduling_gated_condition(obj)
        disabled.mutate_pod_affinity(obj)
        disabled.apply_app_armor_version_skew(obj)
        # Defaulting left the object in Go's form: normalized again only if the steps
        # above changed it (most pods use no feature they touch).
        if _prepared_parts(obj) != before:
            self.normalize(obj)

    def on_update(self, new: dict, old: dict) -> None:
        disabled.drop_disabled_pod_fields(new, old)

    def validate(self, obj: dict) -> list:
        from kapiserver.apis.core.validation import validate_pod_create

        return validate_pod_create(obj)

    def validate_update(self, new: dict, old: dict) -> list:
        from kapiserver.apis.core.validation import validate_pod_update

        return validate_pod_update(new, old)

    def spec_changed(self, new: dict, old: dict) -> bool:
        return False  # pods have no generation in 1.32

    def deletion_pending(self, obj: dict) -> bool:
        """Finalizers remain, or the grace period of a graceful deletion runs (upstream's
        ``shouldDeleteDuringUpdate``: an update never ends such a deletion)."""
        meta = _dict(obj.get("metadata"))
        return bool(meta.get("finalizers")) or (_int(meta.get("deletionGracePeriodSeconds"))
                                                or 0) > 0

    def selectable_fields(self, obj: dict) -> dict[str, str]:
        """``ToSelectableFields``."""
        meta = _dict(obj.get("metadata"))
        spec = _dict(obj.get("spec"))
        status = _dict(obj.get("status"))
        ips = status.get("podIPs")
        first = ips[0] if isinstance(ips, list) and ips and isinstance(ips[0], dict) else {}
        return {
            "metadata.name": _str(meta.get("name")),
            "metadata.namespace": _str(meta.get("namespace")),
            "spec.nodeName": _str(spec.get("nodeName")),
            "spec.host": _str(spec.get("nodeName")),
            "spec.restartPolicy": _str(spec.get("restartPolicy")),
            "spec.schedulerName": _str(spec.get("schedulerName")),
            "spec.serviceAccountName": _str(spec.get("serviceAccountName")),
            "spec.hostNetwork": "true" if spec.get("hostNetwork") is True else "false",
            "status.phase": _str(status.get("phase")),
            "status.podIP": _str(first.get("ip")),
            "status.nominatedNodeName": _str(status.get("nominatedNodeName")),
        }

    def table_cells(self, obj: dict) -> list:
        return table.pod_cells(obj)

    def table_row_conditions(self, obj: dict) -> list[dict]:
        return table.row_conditions(obj)

    # -- subresources ------------------------------------------------------------------------

    def prepare_status_update(self, new: dict, old: dict) -> None:
        """``podStatusStrategy.PrepareForUpdate``: the spec and the owner references are
        the stored ones (old kubelets corrupt owner references); the QoS class, set at
        creation, is backfilled when a status omits it."""
        super().prepare_status_update(new, old)
        meta, old_meta = new.setdefault("metadata", {}), _dict(old.get("metadata"))
        if "ownerReferences" in old_meta:
            meta["ownerReferences"] = copy.deepcopy(old_meta["ownerReferences"])
        else:
            meta.pop("ownerReferences", None)
        status = new.get("status")
        old_qos = _dict(old.get("status")).get("qosClass")
        if isinstance(status, dict) and not status.get("qosClass") and old_qos:
            status["qosClass"] = old_qos
        elif status is None and old_qos:
            new["status"] = {"qosClass": old_qos}
        disabled.drop_disabled_pod_fields(new, old)

    def validate_status_update(self, new: dict, old: dict) -> list:
        from kapiserver.apis.core.validation import validate_pod_status_update

        return validate_pod_status_update(new, old)

    def ephemeral_containers_strategy(self) -> Strategy:
        return EphemeralContainersStrategy(self)


#: ``metav1.ResetObjectMetaForStatus``: what a subresource write keeps of the stored meta.
RESET_META = ("deletionTimestamp", "generation", "selfLink", "labels", "annotations",
              "finalizers", "ownerReferences")


class EphemeralContainersStrategy(StatusStrategy):
    """``pods/ephemeralcontainers`` (``podEphemeralContainersStrategy``): only
    ``spec.ephemeralContainers`` changes; validated by
    ``ValidatePodEphemeralContainersUpdate``."""

    def prepare_for_update(self, new: dict, old: dict) -> None:
        spec = _dict(new.get("spec"))
        ephemeral = spec.get("ephemeralContainers")
        meta, old_meta = new.setdefault("metadata", {}), _dict(old.get("metadata"))
        for key in list(new):
            if key not in ("metadata", "kind", "apiVersion"):
                del new[key]
        for key, value in old.items():
            if key not in ("metadata", "kind", "apiVersion"):
                new[key] = copy.deepcopy(value)
        new_spec = new.setdefault("spec", {})
        if ephemeral is None:
            new_spec.pop("ephemeralContainers", None)
        else:
            new_spec["ephemeralContainers"] = ephemeral
        for key in RESET_META:
            if key in old_meta:
                meta[key] = copy.deepcopy(old_meta[key])
            else:
                meta.pop(key, None)
        disabled.drop_disabled_pod_fields(new, old)
        self.main.normalize(new)

    def validate_update(self, new: dict, old: dict) -> list:
        from kapiserver.apis.core.validation import validate_pod_ephemeral_containers_update

        return validate_pod_ephemeral_containers_update(new, old)
