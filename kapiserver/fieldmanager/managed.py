"""``metadata.managedFields`` bookkeeping for non-apply writes (create, update, patch).

Mirrors the ``Update`` path of upstream's default field manager
(``k8s.io/apimachinery/pkg/util/managedfields/internal``, the chain built by
``NewDefaultFieldManager`` as of v1.32), manager by manager:

* ``FieldManager.Update`` / ``decodeLiveOrNew``: take the managed fields the request
  sent, unless it sent none, sent ones that do not decode, or wrote a subresource — then
  the live object's; ``[]`` or ``[{}]`` resets them;
* ``skipNonAppliedManager``: an update of an object that has no managed fields leaves it
  without (only a create starts the tracking);
* ``capManagersManager``: past 10 ``Update`` entries the oldest merge into
  ``ancient-changes`` entries, one per API version;
* ``managedFieldsUpdater``: the changes of this write are gathered as
  ``current-operation``; if any, they join the writer's entry and its time becomes now —
  an entry's time never changes otherwise;
* ``stripMetaManager``: ``apiVersion``, ``kind``, ``metadata`` itself, and its ``name``,
  ``namespace``, ``creationTimestamp``, ``selfLink``, ``uid``, ``clusterName``,
  ``generation``, ``managedFields`` and ``resourceVersion`` are never owned;
* ``structuredMergeManager`` / ``merge.Updater.Update``: fields this write added or
  modified move to the writer (every other entry loses them), fields it removed leave
  every entry, entries left empty are dropped, and reset fields (``status`` on a main
  resource with a status subresource, ``spec`` on ``/status``) are ignored;
* ``encodeManagedFields``: entries sorted by operation, time (seconds), manager, API
  version and subresource; keys in ``ManagedFieldsEntry`` order.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Iterable

from .fieldpath import Path, Set, make_path
from .gojson import go_string
from .listtypes import ListTypes, for_kind, reset_fields as default_reset_fields
from .typed import CompareError, compare

logger = logging.getLogger(__name__)

#: upstream's ``DefaultMaxUpdateManagers``.
MAX_UPDATE_MANAGERS = 10
#: The manager of the entries old updates are merged into.
ANCIENT_CHANGES = "ancient-changes"
UPDATE, APPLY = "Update", "Apply"
FIELDS_V1 = "FieldsV1"

#: upstream's ``stripMetaManager`` set.
STRIPPED = Set([make_path("apiVersion"), make_path("kind"), make_path("metadata"),
                *(make_path("metadata", name) for name in (
                    "name", "namespace", "creationTimestamp", "selfLink", "uid",
                    "clusterName", "generation", "managedFields", "resourceVersion"))])


@dataclass
class ManagedFieldsEntry:
    """One decoded ``metadata.managedFields`` entry."""

    manager: str
    operation: str
    api_version: str
    fields: Set
    time: str | None = None
    subresource: str = ""

    @property
    def identifier(self) -> str:
        """upstream's ``BuildManagerIdentifier``: the entry as JSON without fields, type
        and time (and without apiVersion for ``Apply``); entries with equal identifiers
        are one entry."""
        parts = [("manager", self.manager), ("operation", self.operation),
                 ("apiVersion", "" if self.operation == APPLY else self.api_version),
                 ("subresource", self.subresource)]
        return "{" + ",".join(f'"{name}":{go_string(value)}'
                              for name, value in parts if value) + "}"

    def to_dict(self) -> dict:
        """The API form, keys in ``ManagedFieldsEntry`` field order, empty ones omitted."""
        entry: dict = {}
        if self.manager:
            entry["manager"] = self.manager
        entry["operation"] = self.operation
        if self.api_version:
            entry["apiVersion"] = self.api_version
        if self.time is not None:
            entry["time"] = self.time
        entry["fieldsType"] = FIELDS_V1
        entry["fieldsV1"] = self.fields.to_fields_v1()
        if self.subresource:
            entry["subresource"] = self.subresource
        return entry


def _format_time(value: Any) -> str | None:
    # metav1.Time is written as RFC 3339 in UTC, to the second.
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"time must be a string, got {value!r}")
    parsed = _parse_time(value)
    return value if parsed is None else parsed.strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_time(value: str) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.astimezone(timezone.utc)


def _seconds(value: str | None) -> int:
    parsed = _parse_time(value) if value else None
    return math.floor(parsed.timestamp()) if parsed else 0


def decode_managed_fields(entries: Any) -> dict[str, ManagedFieldsEntry]:
    """upstream's ``DecodeManagedFields``: entries by identifier (a later entry with the
    same identifier replaces an earlier one). Raises ``ValueError`` on any invalid entry."""
    if entries is None:
        return {}
    if not isinstance(entries, list):
        raise ValueError("managedFields must be a list")
    managed: dict[str, ManagedFieldsEntry] = {}
    for index, raw in enumerate(entries):
        if not isinstance(raw, dict):
            raise ValueError(f"managed fields entry {index} is not an object")
        operation = raw.get("operation") or ""
        if operation not in (APPLY, UPDATE):
            raise ValueError("operation must be `Apply` or `Update`")
        api_version = raw.get("apiVersion") or ""
        if not isinstance(api_version, str) or not api_version:
            raise ValueError("apiVersion must not be empty")
        fields_type = raw.get("fieldsType") or ""
        if not fields_type:
            raise ValueError(f"missing fieldsType in managed fields entry {index}")
        if fields_type != FIELDS_V1:
            raise ValueError(f"invalid fieldsType {fields_type!r} in managed fields entry "
                             f"{index}")
        fields_v1 = raw.get("fieldsV1")
        entry = ManagedFieldsEntry(
            manager=_string(raw, "manager"), operation=operation, api_version=api_version,
            fields=Set() if fields_v1 is None else Set.from_fields_v1(fields_v1),
            time=_format_time(raw.get("time")), subresource=_string(raw, "subresource"))
        managed[entry.identifier] = entry
    return managed


def _string(raw: dict, name: str) -> str:
    value = raw.get(name) or ""
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string")
    return value


def encode_managed_fields(managed: dict[str, ManagedFieldsEntry]) -> list[dict] | None:
    """upstream's ``encodeManagedFields``: the sorted API form, ``None`` when empty."""
    if not managed:
        return None
    entries = sorted(managed.values(), key=lambda e: (
        e.operation, _seconds(e.time), e.manager, e.api_version, e.subresource))
    return [entry.to_dict() for entry in entries]


def _is_reset(entries: Any) -> bool:
    # isResetManagedFields: a present but empty list, or one entry with every field empty.
    if entries == []:
        return True
    if isinstance(entries, list) and len(entries) == 1 and isinstance(entries[0], dict):
        entry = entries[0]
        return (all(not entry.get(name) for name in
                    ("manager", "operation", "apiVersion", "fieldsType", "subresource"))
                and entry.get("time") is None and entry.get("fieldsV1") is None)
    return False


def _decode_or_empty(entries: Any) -> dict[str, ManagedFieldsEntry]:
    try:
        return decode_managed_fields(entries)
    except ValueError:
        return {}


def _decode_live_or_new(live_entries: Any, new_meta: dict,
                        subresource: str) -> dict[str, ManagedFieldsEntry]:
    # A subresource never sets managed fields; a main-resource write may, and when it
    # sends none (or bad ones) it keeps the live ones, so that clients unaware of the
    # field do not wipe it.
    if subresource:
        return _decode_or_empty(live_entries)
    sent = new_meta.get("managedFields")
    if _is_reset(sent):
        return {}
    try:
        managed = decode_managed_fields(sent)
    except ValueError:
        managed = {}
    return managed or _decode_or_empty(live_entries)


def cap_update_managers(managed: dict[str, ManagedFieldsEntry], limit: int) -> None:
    """Merge the oldest ``Update`` entries into ``ancient-changes`` entries until at most
    ``limit`` remain (``capManagersManager.capUpdateManagers``, statement for statement)."""
    updaters = [key for key, entry in managed.items() if entry.operation != APPLY]
    if len(updaters) <= limit:
        return
    updaters.sort(key=lambda key: (_seconds(managed[key].time), key))
    first_of_version: dict[str, str] = {}
    length = len(updaters)
    for key in updaters:
        if length <= limit:
            break
        entry = managed[key]
        version = entry.api_version
        bucket = ManagedFieldsEntry(ANCIENT_CHANGES, UPDATE, version, Set())
        if version in first_of_version:
            if bucket.identifier not in managed:
                moved = managed.pop(first_of_version[version])
                managed[bucket.identifier] = ManagedFieldsEntry(
                    ANCIENT_CHANGES, UPDATE, version, moved.fields, moved.time)
            merged = managed[bucket.identifier]
            merged.fields = entry.fields.union(merged.fields)
            managed.pop(key, None)
            length -= 1
            # The bucket takes the time of the newer update merged into it.
            merged.time = entry.time
        else:
            first_of_version[version] = key


def path_set(fields: Iterable[str | Path]) -> Set:
    """A ``Set`` of paths given dotted (``"spec"``, ``"status.phase"``) or as tuples."""
    return Set(make_path(*field.split(".")) if isinstance(field, str) else tuple(field)
               for field in fields)


def update_managed_fields(old: dict | None, new: dict, manager: str, api_version: str,
                          now: str | None, subresource: str = "", operation: str = UPDATE, *,
                          list_types: ListTypes | None = None,
                          reset_fields: Iterable[str | Path] | None = None,
                          status_subresource: bool = False,
                          max_update_managers: int = MAX_UPDATE_MANAGERS) -> None:
    """Record a create (``old`` is ``None``) or an update in ``new``'s managed fields.

    ``new`` is the object about to be stored, ``old`` the stored one; ``manager`` comes
    from ``manager_name``, ``api_version`` is the request's (``v1``), ``now`` an RFC 3339
    time. ``list_types`` defaults to the built-in table of ``new``'s kind;
    ``reset_fields`` (dotted paths) default to ``listtypes.reset_fields(subresource,
    status_subresource)``. ``new["metadata"]["managedFields"]`` is replaced, or removed
    when nothing is managed. Like upstream's ``UpdateNoErrors`` this never fails on the
    object: one whose lists cannot be walked is logged and left without managed fields.
    """
    if operation != UPDATE:
        raise ValueError(f"only {UPDATE!r} is recorded here, not {operation!r}")
    new_meta = new.setdefault("metadata", {})
    old_meta = (old or {}).get("metadata") or {}
    managed = _decode_live_or_new(old_meta.get("managedFields"), new_meta, subresource)
    new_meta.pop("managedFields", None)
    if not managed and old is not None and old_meta.get("uid"):
        return  # skipNonAppliedManager: updates never start the tracking

    if list_types is None:
        list_types = for_kind(new.get("apiVersion") or api_version, new.get("kind") or "")
    if reset_fields is None:
        reset_fields = default_reset_fields(subresource, status_subresource)
    live = None
    if old is not None:
        live = dict(old, metadata={k: v for k, v in old_meta.items() if k != "managedFields"})
    try:
        changes = compare(live, new, list_types).exclude(path_set(reset_fields))
    except CompareError as err:
        logger.error("[SHOULD NOT HAPPEN] failed to update managedFields for %s %s/%s: %s",
                     new.get("kind"), new_meta.get("namespace", ""), new_meta.get("name", ""),
                     err)
        return  # upstream removes managedFields rather than keep garbage

    taken = changes.modified.union(changes.added)
    for key in list(managed):
        entry = managed[key]
        owned = entry.fields.difference(entry.fields.intersection(taken))
        owned = owned.difference(changes.removed)
        if owned.empty():
            del managed[key]
        else:
            entry.fields = owned

    current = taken.difference(changes.removed).difference(STRIPPED)
    if not current.empty():
        mine = ManagedFieldsEntry(manager, UPDATE, api_version, current, now, subresource)
        previous = managed.get(mine.identifier)
        if previous is not None:
            mine.fields = current.union(previous.fields)
        managed[mine.identifier] = mine

    cap_update_managers(managed, max_update_managers)
    encoded = encode_managed_fields(managed)
    if encoded:
        new_meta["managedFields"] = encoded

