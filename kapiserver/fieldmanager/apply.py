"""Server-side apply: merge an applied configuration and record who owns each field.

Mirrors the ``Apply`` path of upstream's default field manager
(``k8s.io/apimachinery/pkg/util/managedfields/internal`` as of v1.32) over
``merge.Updater.Apply`` of ``sigs.k8s.io/structured-merge-diff/v4``:

* ``versionCheckManager``: the config's apiVersion and kind must be the resource's
  (400 ``invalid object type: /v1, Kind=Foo``); it may not carry ``managedFields``;
* ``structuredMergeManager``: the config must fit the kind's schema (else a 400 with
  upstream's words, ``failed to create typed patch object (ns/name; /v1, Kind=ConfigMap):
  ...``; upstream's plain error is a 500, kubernetes/kubernetes#122480);
* ``Updater.Apply``: the config is merged into the live object; the applier's ``Apply``
  entry becomes exactly the config's fields (less reset fields); fields the applier's
  previous config set and this one does not are removed unless another manager owns
  them (``prune``); every other manager owning a field this apply changes is a conflict
  (409, one cause per field) unless ``force``, which takes the fields from them;
  fields the apply removes leave every manager;
* ``managedFieldsUpdater``: the applier's entry gets the current time only when the
  object changed; ``stripMetaManager``, ``capManagersManager`` as for updates;
* ``lastAppliedManager`` / ``lastAppliedUpdater``: for the ``kubectl`` manager, conflicts
  on fields kubectl's client-side ``last-applied-configuration`` annotation still matches
  are forced, and that annotation follows the applied config.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any, Iterable

from .. import errors
from ..apimachinery.field_errors import go_quote
from .fieldpath import Set, path_string
from .gojson import go_json
from .listtypes import ListTypes, for_kind, reset_fields as default_reset_fields
from .managed import (APPLY, MAX_UPDATE_MANAGERS, STRIPPED, UPDATE, ManagedFieldsEntry,
                      cap_update_managers, decode_managed_fields, encode_managed_fields,
                      path_set)
from .schema import Node, gvk_string, validate
from .structured import merge, remove_items, to_field_set, to_object
from .typed import CompareError, compare

#: The annotation ``kubectl apply`` (client-side) keeps its last configuration in.
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
#: The manager whose applies upgrade from, and keep up, client-side apply's annotation.
KUBECTL = "kubectl"


class Conflicts(Exception):
    """``merge.Conflicts``: ``(manager identifier, path)`` pairs, in upstream's order."""

    def __init__(self, conflicts: list[tuple[str, tuple]]):
        super().__init__(f"{len(conflicts)} conflicts")
        self.conflicts = conflicts

    def to_error(self) -> errors.Conflict:
        """``NewConflictError``: the 409 with one ``FieldManagerConflict`` cause per path."""
        causes = [{"reason": "FieldManagerConflict",
                   "message": f"conflict with {_print_manager(manager)}",
                   "field": path_string(path)} for manager, path in self.conflicts]
        if len(self.conflicts) == 1:
            manager, path = self.conflicts[0]
            message = (f"Apply failed with 1 conflict: conflict with "
                       f"{_print_manager(manager)}: {path_string(path)}")
        else:
            lines = []
            for manager in sorted({manager for manager, _ in self.conflicts}):
                lines.append(f"conflicts with {_print_manager(manager)}:")
                lines += [f"- {path_string(path)}" for who, path in self.conflicts
                          if who == manager]
            message = (f"Apply failed with {len(self.conflicts)} conflicts: "
                       + "\n".join(lines))
        return errors.Conflict(message, {"causes": causes})


def _print_manager(identifier: str) -> str:
    # printManager: identifiers never carry a time, so an updater reads "x" using v1.
    try:
        entry = json.loads(identifier)
    except ValueError:
        return go_quote(identifier)
    text = go_quote(entry.get("manager", ""))
    if entry.get("subresource"):
        text += f" with subresource {go_quote(entry['subresource'])}"
    if entry.get("operation") == UPDATE:
        text += f" using {entry.get('apiVersion', '')}"
    return text


@dataclass
class _Outcome:
    object: Any            # the merged and pruned value
    managed: dict          # identifier -> ManagedFieldsEntry
    changed: bool          # whether the object differs from the live one


class Applier:
    """Server-side apply for one resource (or subresource) by one field manager.

    ``api_version`` and ``kind`` are the resource's; ``list_types`` default to the kind's
    table, ``reset_fields`` (dotted paths) to ``listtypes.reset_fields``.
    """

    def __init__(self, api_version: str, kind: str, manager: str, subresource: str = "", *,
                 list_types: ListTypes | None = None,
                 reset_fields: Iterable[str] | None = None, status_subresource: bool = False,
                 max_update_managers: int = MAX_UPDATE_MANAGERS, shape=None):
        self.api_version = api_version
        self.kind = kind
        self.manager = manager
        self.subresource = subresource
        self.list_types = list_types or for_kind(api_version, kind)
        self.root = Node.root(api_version, kind, self.list_types, shape)
        if reset_fields is None:
            reset_fields = default_reset_fields(subresource, status_subresource)
        self.reset = path_set(reset_fields)
        self.max_update_managers = max_update_managers
        self.identifier = ManagedFieldsEntry(manager, APPLY, api_version, Set(), None,
                                             subresource).identifier

    def apply(self, live: dict | None, config: dict, now: str, force: bool = False) -> dict:
        """The object ``config`` applied to ``live`` (``None``: it does not exist yet)
        makes, with its ``metadata.managedFields``; ``now`` is an RFC 3339 time.

        Raises ``errors.BadRequest`` for a config of another type, carrying managed
        fields or not fitting the kind's schema, ``errors.Conflict`` for conflicts.
        Neither argument is modified.
        """
        self._check_type(config)
        meta = config.get("metadata")
        if isinstance(meta, dict) and isinstance(meta.get("managedFields"), list):
            raise errors.BadRequest("metadata.managedFields must be nil")
        live_meta = (live or {}).get("metadata") or {}
        try:
            managed = decode_managed_fields(live_meta.get("managedFields"))
        except ValueError as err:
            raise errors.Unknown(f"failed to decode managed fields: {err}") from None
        problems = validate(config, self.root)
        if problems:
            detail = problems[0] if len(problems) == 1 else "\n  ".join(["errors:", *problems])
            # The client's mistake, so a 400 (upstream answers its plain error with a 500,
            # a bug it means to fix the same way: kubernetes/kubernetes#139253).
            raise errors.BadRequest(f"failed to create typed patch object ({_gvknn(config)}): "
                                    f"{detail}")

        typed_live = self._typed(live)
        try:
            outcome = self._apply(typed_live, config, managed, force, now)
        except Conflicts as conflicts:
            if self.manager != KUBECTL:
                raise conflicts.to_error() from None
            allowed = self._allowed_by_last_applied(live, typed_live)
            rest = [(m, p) for m, p in conflicts.conflicts if not allowed.has(p)]
            if rest:
                raise Conflicts(rest).to_error() from None
            outcome = self._apply(typed_live, config, managed, True, now)

        if outcome.changed:
            obj = self.list_types.normalize(to_object(outcome.object, self.root))
        else:
            obj = copy.deepcopy(live) if live is not None else self.list_types.normalize(
                to_object(outcome.object, self.root))
        obj_meta = obj.setdefault("metadata", {})
        obj_meta.pop("managedFields", None)
        if self.manager == KUBECTL:
            _keep_last_applied(obj_meta, config)
        encoded = encode_managed_fields(outcome.managed)
        if encoded:
            obj_meta["managedFields"] = encoded
        return obj

    # -- the steps -------------------------------------------------------------------------

    def _check_type(self, config: dict) -> None:
        want = gvk_string(self.api_version, self.kind)
        got = gvk_string(config.get("apiVersion"), config.get("kind"))
        if got != want:
            raise errors.BadRequest(f"invalid object type: {got}")

    def _typed(self, live: dict | None) -> dict:
        """The live object as upstream's typed value holds it: the zero object of the kind
        when there is none yet, without managed fields, Go's empty values dropped."""
        if live is None:
            live = {"kind": self.kind, "apiVersion": self.api_version, "metadata": {}}
        meta = {k: v for k, v in (live.get("metadata") or {}).items() if k != "managedFields"}
        return self.list_types.normalize(dict(live, metadata=meta))

    def _apply(self, live: dict, config: dict, managed: dict, force: bool,
               now: str) -> _Outcome:
        """``Updater.Apply`` and the managers around it, on decoded managed fields."""
        managed = {key: copy.copy(entry) for key, entry in managed.items()}
        merged = merge(live, config, self.root)
        last = managed.get(self.identifier)
        applied = to_field_set(config, self.root).recursive_difference(self.reset)
        previous_time = last.time if last is not None else None
        managed[self.identifier] = ManagedFieldsEntry(
            self.manager, APPLY, self.api_version, applied, previous_time, self.subresource)
        if last is not None and not last.fields.empty():
            merged = self._prune(merged, managed, last.fields)
        try:
            comparison = compare(live, merged, self.list_types, normalize=False)
        except CompareError as err:
            raise errors.Unknown(f"failed to compare objects: {err}") from None
        comparison = comparison.exclude(self.reset)
        self._take_ownership(comparison, managed, force)

        mine = managed.get(self.identifier)
        if mine is not None:
            mine.fields = mine.fields.difference(STRIPPED)
            if mine.fields.empty():
                del managed[self.identifier]
        changed = not comparison.is_same()
        if changed and self.identifier in managed:
            managed[self.identifier].time = now
        cap_update_managers(managed, self.max_update_managers)
        return _Outcome(merged, managed, changed)

    def _prune(self, merged: Any, managed: dict, last: Set) -> Any:
        # prune, addBackOwnedItems, addBackDanglingItems: remove what the applier's last
        # config set and this one does not, unless some manager still owns it.
        owned = Set()
        for entry in managed.values():
            owned = owned.union(entry.fields)
        merged_set = to_field_set(merged, self.root)
        pruned = remove_items(merged, last, self.root)
        pruned_set = to_field_set(pruned, self.root)
        pruned = remove_items(merged, merged_set.difference(pruned_set.union(owned)),
                              self.root)
        pruned_set = to_field_set(pruned, self.root)
        gone = merged_set.difference(pruned_set).intersection(last)
        result = remove_items(merged, gone, self.root)
        return {} if result is None else result

    def _take_ownership(self, comparison, managed: dict, force: bool) -> None:
        # Updater.update: other managers owning a changed field conflict (or, forced,
        # lose it); fields that disappeared leave every manager.
        changed = comparison.modified.union(comparison.added)
        conflicts = []
        for key in sorted(managed):
            if key == self.identifier:
                continue
            entry = managed[key]
            overlap = entry.fields.intersection(changed)
            conflicts += [(key, path) for path in overlap]
            entry.fields = entry.fields.difference(overlap).difference(comparison.removed)
        if conflicts and not force:
            raise Conflicts(conflicts)
        for key in [key for key, entry in managed.items() if entry.fields.empty()]:
            del managed[key]

    def _allowed_by_last_applied(self, live: dict | None, typed_live: dict) -> Set:
        """The fields kubectl's client-side annotation set that still hold their value:
        conflicts on those are an upgrade to server-side apply, not a conflict."""
        annotations = ((live or {}).get("metadata") or {}).get("annotations") or {}
        text = annotations.get(LAST_APPLIED) if isinstance(annotations, dict) else None
        if not text:
            return Set()
        try:
            last = json.loads(text)
        except ValueError:
            return Set()
        if not isinstance(last, dict) or last.get("apiVersion") != self.api_version \
                or validate(last, self.root):
            return Set()
        fields = to_field_set(last, self.root)
        try:
            comparison = compare(last, typed_live, self.list_types, normalize=False)
        except CompareError:
            return Set()
        return (fields.difference(comparison.modified).difference(comparison.added)
                .difference(comparison.removed))


def _gvknn(config: dict) -> str:
    # objectGVKNN: "namespace/name; group/version, Kind=kind" of the applied config
    meta = config.get("metadata") if isinstance(config.get("metadata"), dict) else {}
    namespace = meta.get("namespace") if isinstance(meta.get("namespace"), str) else ""
    name = meta.get("name") if isinstance(meta.get("name"), str) else ""
    return f"{namespace}/{name}; {gvk_string(config.get('apiVersion'), config.get('kind'))}"


def _keep_last_applied(meta: dict, config: dict) -> None:
    # lastAppliedUpdater: only an object that still has the annotation gets it updated.
    annotations = meta.get("annotations")
    if not isinstance(annotations, dict) or not annotations.get(LAST_APPLIED):
        return
    annotations[LAST_APPLIED] = build_last_applied(config)


def build_last_applied(config: dict) -> str:
    """The annotation's value for ``config``: itself without the annotation, as Go's
    unstructured JSON encoder writes it (keys sorted, a final newline)."""
    obj = copy.deepcopy(config)
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        if isinstance(meta.get("annotations"), dict):
            meta["annotations"].pop(LAST_APPLIED, None)
        else:
            meta.pop("annotations", None)
    return go_json(obj) + "\n"

