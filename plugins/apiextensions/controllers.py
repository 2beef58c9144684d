"""The CRD controllers, run by the elected worker (upstream's apiextensions controllers).

* ``NamingController``: accepts a CRD's names unless another CRD of the group holds them
  (``NamesAccepted``; ``status.acceptedNames``), and marks a newly accepted CRD
  ``Established=False/Installing``.
* ``EstablishingController``: flips ``Established`` to true once the names are accepted;
  every worker serves and lists the CRD from then on.
* ``FinalizerController``: deletes every custom resource of a CRD being deleted, then
  removes the ``customresourcecleanup`` finalizer so the CRD goes away.

Status writes go through the ``/status`` rules and record ``kube-apiserver`` as their
manager, as upstream's controllers do through the API.
"""

from __future__ import annotations

import copy
import logging

from kapiserver import errors
from kapiserver.controllers import Controller
from kapiserver.registry.store import RegistryStore

from .crds import (CLEANUP_FINALIZER, CRDS, ESTABLISHED, NAMES_ACCEPTED, TERMINATING,
                   CRDStatusStrategy, condition, is_true, set_condition)

log = logging.getLogger(__name__)
MANAGER = "kapiserver"


def _status_store(server) -> RegistryStore:
    return RegistryStore(CRDS, CRDStatusStrategy(CRDS), server.storage,
                         server.watch_cache.written)


class _CRDController(Controller):
    interval = 1.0

    def __init__(self, server):
        self.server = server
        self.status = _status_store(server)
        self.manage = self.status.field_manager("kube-apiserver", "status")

    @property
    def crds(self):
        return self.server.registries[(CRDS.group, CRDS.resource)]

    def list(self) -> list[dict]:
        return self.crds.list("")["items"]

    def update_status(self, name: str, mutate) -> None:
        try:
            self.status.guaranteed_update("", name, mutate, manage=self.manage)
        except errors.NotFound:
            pass


class NamingController(_CRDController):
    """``NamingConditionController`` (see the module docstring)."""

    name = "crd-naming"
    interval = 1.0

    def sync(self) -> None:
        crds = self.list()
        for crd in crds:
            names, accepted, established = calculate_names(crd, crds)
            status = crd.get("status") or {}
            if (status.get("acceptedNames") == names
                    and condition(crd, NAMES_ACCEPTED) is not None
                    and _same(condition(crd, NAMES_ACCEPTED), accepted)
                    and _same(condition(crd, ESTABLISHED), established)):
                continue

            def mutate(current, names=names, accepted=accepted, established=established):
                current.setdefault("status", {})["acceptedNames"] = names
                set_condition(current, accepted)
                set_condition(current, established)
                return current

            self.update_status(crd["metadata"]["name"], mutate)


class EstablishingController(_CRDController):
    """``EstablishingController``: one worker set, so no wait for other servers."""

    name = "crd-establishing"
    interval = 1.0

    def sync(self) -> None:
        for crd in self.list():
            if not is_true(crd, NAMES_ACCEPTED) or is_true(crd, ESTABLISHED):
                continue

            def mutate(current):
                if is_true(current, NAMES_ACCEPTED) and not is_true(current, ESTABLISHED):
                    set_condition(current, {"type": ESTABLISHED, "status": "True",
                                            "reason": "InitialNamesAccepted",
                                            "message": "the initial names have been accepted"})
                return current

            self.update_status(crd["metadata"]["name"], mutate)


class FinalizerController(_CRDController):
    """``CRDFinalizer``: empty a deleted CRD of its custom resources, then let it go."""

    name = "crd-finalizer"
    interval = 0.5

    def __init__(self, server, custom_resources):
        super().__init__(server)
        self.custom = custom_resources

    def sync(self) -> None:
        for crd in self.list():
            meta = crd["metadata"]
            if meta.get("deletionTimestamp") and CLEANUP_FINALIZER in (meta.get("finalizers")
                                                                       or []):
                self._finalize(crd)

    def _finalize(self, crd: dict) -> None:
        name = crd["metadata"]["name"]
        if is_true(crd, ESTABLISHED):
            in_progress = {"type": TERMINATING, "status": "True",
                           "reason": "InstanceDeletionInProgress",
                           "message": "CustomResource deletion is in progress"}
            if not _same(condition(crd, TERMINATING), in_progress):
                self.update_status(name, lambda c: _with_condition(c, in_progress))
            self.custom.refresh()
            store = self.custom.storage_store(name)
            if store is not None and self._delete_instances(store):
                return  # objects held by finalizers remain: look again next time
            done = {"type": TERMINATING, "status": "False", "reason": "InstanceDeletionCompleted",
                    "message": "removed all instances"}
        else:
            done = {"type": TERMINATING, "status": "False", "reason": "NeverEstablished",
                    "message": "resource was never established"}
        self.update_status(name, lambda c: _with_condition(c, done))

        def remove_finalizer(current):
            finalizers = [f for f in current["metadata"].get("finalizers") or []
                          if f != CLEANUP_FINALIZER]
            if finalizers:
                current["metadata"]["finalizers"] = finalizers
            else:
                current["metadata"].pop("finalizers", None)
            return current

        try:
            self.crds.guaranteed_update("", name, remove_finalizer)
            log.info("CRD %s: custom resources deleted, finalizer removed", name)
        except errors.NotFound:
            pass

    @staticmethod
    def _delete_instances(store) -> int:
        """Delete every object; return how many remain (held by finalizers)."""
        remaining = 0
        for item in store.list("")["items"]:
            meta = item["metadata"]
            remaining += 1
            if meta.get("deletionTimestamp"):
                continue
            try:
                _, deleted = store.delete(meta.get("namespace", ""), meta["name"])
            except errors.NotFound:
                deleted = True
            if deleted:
                remaining -= 1
        return remaining


def _with_condition(crd: dict, new: dict) -> dict:
    set_condition(crd, new)
    return crd


def _same(current: dict | None, wanted: dict) -> bool:
    if current is None:
        return False
    return all(current.get(k) == wanted.get(k) for k in ("status", "reason", "message"))


def calculate_names(crd: dict, crds: list[dict]):
    """``calculateNamesAndConditions``: the accepted names and the NamesAccepted and
    Established conditions, given the names the group's CRDs have accepted."""
    spec = crd["spec"]
    requested = spec["names"]
    status = crd.get("status") or {}
    accepted = status.get("acceptedNames") or {}
    resources, kinds = set(), set()
    for other in crds:
        if other["spec"]["group"] != spec["group"] or \
                other["metadata"]["name"] == crd["metadata"]["name"]:
            continue
        names = (other.get("status") or {}).get("acceptedNames") or {}
        resources.update(n for n in [names.get("plural"), names.get("singular"),
                                     *(names.get("shortNames") or [])] if n)
        kinds.update(n for n in [names.get("kind"), names.get("listKind")] if n)
    names = copy.deepcopy(accepted)
    result = {"type": NAMES_ACCEPTED, "status": "Unknown", "reason": "", "message": ""}

    def fresh(wanted: str, have: str, used: set) -> str | None:
        if wanted == have or wanted not in used:
            return None
        return f'"{wanted}" is already in use'

    def check(field: str, used: set, reason: str) -> None:
        problem = fresh(requested.get(field, ""), accepted.get(field, ""), used)
        if problem:
            result.update(status="False", reason=reason, message=problem)
        elif requested.get(field) is not None:
            names[field] = requested.get(field, "")

    check("plural", resources, "PluralConflict")
    check("singular", resources, "SingularConflict")
    if (requested.get("shortNames") or []) != (accepted.get("shortNames") or []):
        problems = [p for p in (fresh(short, "", resources)
                                for short in requested.get("shortNames") or []
                                if short not in (accepted.get("shortNames") or []))
                    if p]
        if problems:
            message = problems[0] if len(problems) == 1 else \
                "[" + ", ".join(problems) + "]"
            result.update(status="False", reason="ShortNamesConflict", message=message)
        elif requested.get("shortNames"):
            names["shortNames"] = list(requested["shortNames"])
        else:
            names.pop("shortNames", None)
    check("kind", kinds, "KindConflict")
    check("listKind", kinds, "ListKindConflict")
    if requested.get("categories"):
        names["categories"] = list(requested["categories"])
    else:
        names.pop("categories", None)
    if result["status"] == "Unknown":
        result.update(status="True", reason="NoConflicts", message="no conflicts found")
    established = condition(crd, ESTABLISHED) or {
        "type": ESTABLISHED, "status": "False", "reason": "NotAccepted",
        "message": "not all names are accepted"}
    if established.get("status") != "True" and result["status"] == "True":
        established = {"type": ESTABLISHED, "status": "False", "reason": "Installing",
                       "message": "the initial names have been accepted"}
    return _ordered_names(names), result, dict(established)


def _ordered_names(names: dict) -> dict:
    """``CustomResourceDefinitionNames`` in Go's field order."""
    order = ("plural", "singular", "shortNames", "kind", "listKind", "categories")
    out = {key: names[key] for key in order if key in names}
    out.setdefault("plural", "")
    out.setdefault("kind", "")
    return {key: out[key] for key in order if key in out}
