"""What FlowSchemas and PriorityLevelConfigurations share: their status conditions and how a
status write leaves the metadata."""

from __future__ import annotations

from kapiserver.apimachinery.field_errors import FieldError, FieldPath


def dict_of(value) -> dict:
    return value if isinstance(value, dict) else {}


def list_of(value) -> list:
    return value if isinstance(value, list) else []


def str_of(value) -> str:
    return value if isinstance(value, str) else ""


def validate_status_conditions(obj: dict) -> list[FieldError]:
    """``ValidateFlowSchemaStatus`` and ``ValidatePriorityLevelConfigurationStatus``: each
    condition has a type, and no type is there twice."""
    errs, seen = [], set()
    path = FieldPath("status", "conditions")
    for i, condition in enumerate(list_of(dict_of(obj.get("status")).get("conditions"))):
        kind = str_of(dict_of(condition).get("type"))
        if kind in seen:
            errs.append(FieldError.duplicate(path.index(i).child("type"), kind))
        seen.add(kind)
        if not kind:
            errs.append(FieldError.required(path.index(i).child("type"), "must not be empty"))
    return errs


def keep_metadata_for_status(new: dict, old: dict) -> None:
    """A status write keeps the stored metadata but for ``managedFields``, which records
    the write (the flowcontrol status strategies' ``PrepareForUpdate``)."""
    meta = new.setdefault("metadata", {})
    managed = meta.get("managedFields")
    # Refilled in place: the store holds on to this dict.
    meta.clear()
    meta.update(dict_of(old.get("metadata")))
    if managed is None:
        meta.pop("managedFields", None)
    else:
        meta["managedFields"] = managed
