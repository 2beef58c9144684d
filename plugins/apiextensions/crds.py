"""CustomResourceDefinition objects: strategy, status strategy and deletion.

Upstream's ``pkg/registry/customresourcedefinition``: defaulting and validation come from
``crd_validation``; the status starts with the storage version as the only stored version
and only the ``/status`` subresource writes it; deleting a CRD first marks it
(``deletionTimestamp``, the ``customresourcecleanup`` finalizer and a ``Terminating``
condition) so that the finalizer controller can delete its custom resources.
"""

from __future__ import annotations

import copy

from kapiserver import errors
from kapiserver.registry.resource import ResourceSpec
from kapiserver.registry.store import RegistryStore, now_rfc3339
from kapiserver.registry.strategy import Strategy
from kapiserver.storage import Conflict, KeyNotFound

GROUP = "apiextensions.k8s.io"
CRDS = ResourceSpec(group=GROUP, version="v1", kind="CustomResourceDefinition",
                    resource="customresourcedefinitions", singular="customresourcedefinition",
                    namespaced=False, short_names=("crd", "crds"),
                    categories=("api-extensions",), storage_version_hash="jfWCUB31mvA=")
#: The storage prefix every worker follows to serve custom resources.
PREFIX = CRDS.key_prefix()
CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"

ESTABLISHED = "Established"
NAMES_ACCEPTED = "NamesAccepted"
TERMINATING = "Terminating"


def conditions(crd: dict) -> list:
    return ((crd.get("status") or {}).get("conditions")) or []


def condition(crd: dict, kind: str) -> dict | None:
    for entry in conditions(crd):
        if entry.get("type") == kind:
            return entry
    return None


def is_true(crd: dict, kind: str) -> bool:
    entry = condition(crd, kind)
    return entry is not None and entry.get("status") == "True"


def set_condition(crd: dict, new: dict) -> None:
    """``SetCRDCondition``: replace the condition of that type; the transition time moves
    only when the status changes."""
    status = crd.setdefault("status", {})
    current = status.get("conditions") or []
    for index, entry in enumerate(current):
        if entry.get("type") == new["type"]:
            merged = {"type": new["type"], "status": new["status"],
                      "lastTransitionTime": (entry.get("lastTransitionTime")
                                             if entry.get("status") == new["status"]
                                             else now_rfc3339()),
                      "reason": new.get("reason", ""), "message": new.get("message", "")}
            current[index] = merged
            status["conditions"] = current
            return
    current.append({"type": new["type"], "status": new["status"],
                    "lastTransitionTime": now_rfc3339(), "reason": new.get("reason", ""),
                    "message": new.get("message", "")})
    status["conditions"] = current


def storage_version(crd: dict) -> str:
    for version in (crd.get("spec") or {}).get("versions") or []:
        if version.get("storage"):
            return version.get("name", "")
    return ""


def _storage_versions(crd: dict) -> list[str]:
    """Every version marked ``storage`` (validation allows one; this runs before it)."""
    names = []
    for version in (crd.get("spec") or {}).get("versions") or []:
        if isinstance(version, dict) and version.get("storage") and version.get("name") \
                not in names:
            names.append(version.get("name", ""))
    return names


def _initial_status(crd: dict) -> dict:
    return {"conditions": None, "acceptedNames": {"plural": "", "kind": ""},
            "storedVersions": _storage_versions(crd)}


class CRDStrategy(Strategy):
    """``customresourcedefinition.strategy``: defaults, validation, stored versions."""

    has_generation = True
    status_subresource = True

    def apply_defaults(self, obj):
        from .crd_validation import set_defaults

        set_defaults(obj)

    def prepare_for_create(self, obj):
        obj["status"] = _initial_status(obj)

    def prepare_for_update(self, new, old):
        new["status"] = copy.deepcopy(old.get("status")) if "status" in old else \
            _initial_status(new)
        # As upstream's PrepareForUpdate: every storage version joins the stored ones.
        stored = list(new["status"].get("storedVersions") or [])
        for version in _storage_versions(new):
            if version not in stored:
                stored.append(version)
        new["status"]["storedVersions"] = stored

    def validate(self, obj):
        from .crd_validation import validate_crd

        return validate_crd(obj)

    def from_storage(self, obj):
        # kube-apiserver writes CRDs in their v1beta1 form: read an etcd it filled as v1.
        from .v1beta1 import crd_from_storage

        return crd_from_storage(obj)

    def from_storage(self, obj):
        # kube-apiserver writes CRDs in their v1beta1 form: read an etcd it filled as v1.
        from .v1beta1 import crd_from_storage

        return crd_from_storage(obj)

    def validate_update(self, new, old):
        from .crd_validation import validate_crd_update

        return validate_crd_update(new, old)


class CRDStatusStrategy(CRDStrategy):
    """``customresourcedefinitions/status``: writes the status, never the spec, and of the
    metadata only what upstream's ``ResetObjectMetaForStatus`` lets through."""

    def apply_defaults(self, obj):
        pass

    def prepare_for_update(self, new, old):
        new["spec"] = copy.deepcopy(old.get("spec") or {})
        _reset_metadata_for_status(new, old)

    def validate_update(self, new, old):
        from kapiserver.apimachinery.field_errors import FieldPath
        from kapiserver.apimachinery.validation import validate_object_meta_update

        from .crd_validation import validate_crd_status

        return (validate_object_meta_update(new.get("metadata") or {},
                                            old.get("metadata") or {})
                + validate_crd_status(new.get("status") or {}, FieldPath("status")))


def _reset_metadata_for_status(new: dict, old: dict) -> None:
    """``metav1.ResetObjectMetaForStatus``: a status write keeps the old labels,
    annotations, finalizers, owner references and deletion timestamp."""
    new_meta, old_meta = new.setdefault("metadata", {}), old.get("metadata") or {}
    for field in ("deletionTimestamp", "generation", "labels", "annotations", "finalizers",
                  "ownerReferences"):
        if field in old_meta:
            new_meta[field] = copy.deepcopy(old_meta[field])
        else:
            new_meta.pop(field, None)


class CRDRegistryStore(RegistryStore):
    """The CRD registry: the first DELETE marks the CRD for the finalizer controller.

    As upstream's ``customresourcedefinition.REST.Delete``: the first delete sets
    ``deletionTimestamp``, adds the cleanup finalizer and a ``Terminating`` condition in
    one storage update (no ``managedFields`` entry, no generation bump), and answers with
    the marked object; once marked, deletes take the generic path.
    """

    def delete(self, namespace, name, preconditions=None, dry_run=False, admit=None,
               options=None):
        key = self.spec.key(namespace, name)
        for _ in range(16):
            try:
                current = self.storage.get(key)
            except KeyNotFound:
                raise self._not_found(name) from None
            obj = self.decode(current.value, current.mod_revision)
            if obj["metadata"].get("deletionTimestamp"):
                return super().delete(namespace, name, preconditions, dry_run, admit,
                                      options=options)
            if preconditions:
                preconditions.check(self.spec, name, obj)
            if admit is not None:
                admit(obj)
            meta = obj["metadata"]
            meta["deletionTimestamp"] = now_rfc3339()
            finalizers = meta.setdefault("finalizers", [])
            if CLEANUP_FINALIZER not in finalizers:
                finalizers.append(CLEANUP_FINALIZER)
            set_condition(obj, {"type": TERMINATING, "status": "True",
                                "reason": "InstanceDeletionPending",
                                "message": "CustomResourceDefinition marked for deletion; "
                                           "CustomResource deletion will begin soon"})
            if dry_run:
                return obj, False
            try:
                written = self.storage.update(key, self.encode(obj), current.mod_revision)
            except Conflict:
                continue
            except KeyNotFound:
                raise self._not_found(name) from None
            meta["resourceVersion"] = str(written)
            self.on_write()
            return obj, False
        raise errors.Conflict(f"Operation cannot be fulfilled on {self.spec.group_resource} "
                              f"{errors.go_quote(name)}: the object has been modified; please "
                              "apply your changes to the latest version and try again",
                              errors.status_details(name, self.spec.group, self.spec.resource))
