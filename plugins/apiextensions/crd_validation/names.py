"""The names of a CRD, its status and its stored versions, validated as upstream.

``ValidateCustomResourceDefinitionNames``, ``ValidateCustomResourceDefinitionStatus`` and
``ValidateCustomResourceDefinitionStoredVersions`` of ``apiextensions/validation``.
"""

from __future__ import annotations

from kapiserver.apimachinery.field_errors import FieldError, FieldPath
from kapiserver.apimachinery.validation import is_dns1035_label

from .gosyntax import go_strings
from .internal import as_dict, as_list, as_str

__all__ = ["validate_names", "validate_status", "validate_stored_versions"]

_MIXED_CASE = "may have mixed case, but should otherwise match: "


def _go_lower(value: str) -> str:
    # Go's strings.ToLower maps U+0130 to "i" followed by nothing; Python adds a dot.
    return value.replace("\u0130", "i").lower()


def validate_names(names, path: FieldPath) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionNames`` (the spec's names or the accepted ones)."""
    names = as_dict(names)
    plural, singular = as_str(names.get("plural")), as_str(names.get("singular"))
    kind, list_kind = as_str(names.get("kind")), as_str(names.get("listKind"))
    errs = []
    if plural and (msgs := is_dns1035_label(plural)):
        errs.append(FieldError.invalid(path.child("plural"), plural, ",".join(msgs)))
    if singular and (msgs := is_dns1035_label(singular)):
        errs.append(FieldError.invalid(path.child("singular"), singular, ",".join(msgs)))
    if kind and (msgs := is_dns1035_label(_go_lower(kind))):
        errs.append(FieldError.invalid(path.child("kind"), kind, _MIXED_CASE + ",".join(msgs)))
    if list_kind and (msgs := is_dns1035_label(_go_lower(list_kind))):
        errs.append(FieldError.invalid(path.child("listKind"), list_kind,
                                       _MIXED_CASE + ",".join(msgs)))
    for i, short_name in enumerate(as_list(names.get("shortNames"))):
        short_name = as_str(short_name)
        if msgs := is_dns1035_label(short_name):
            errs.append(FieldError.invalid(path.child("shortNames").index(i), short_name,
                                           ",".join(msgs)))
    # kind and listKind may not be the same or parsing becomes ambiguous
    if kind and kind == list_kind:
        errs.append(FieldError.invalid(path.child("listKind"), list_kind,
                                       "kind and listKind may not be the same"))
    for i, category in enumerate(as_list(names.get("categories"))):
        category = as_str(category)
        if msgs := is_dns1035_label(category):
            errs.append(FieldError.invalid(path.child("categories").index(i), category,
                                           ",".join(msgs)))
    return errs


def validate_status(status, path: FieldPath) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionStatus``: the accepted names."""
    return validate_names(as_dict(status).get("acceptedNames"), path.child("acceptedNames"))


def validate_stored_versions(stored, versions, path: FieldPath) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionStoredVersions``: every stored version stays in
    ``spec.versions`` and the storage version is among them."""
    stored = stored if isinstance(stored, list) else None
    if not stored:
        return [FieldError.invalid(path, go_strings(stored),
                                   "must have at least one stored version")]
    errs = []
    index = {as_str(v): i for i, v in enumerate(stored)}
    for version in versions or []:
        name = as_str(version.get("name"))
        if version.get("storage") is True and name not in index:
            errs.append(FieldError.invalid(path, go_strings(stored),
                                           "must have the storage version " + name))
        index.pop(name, None)
    # Go ranges over the remaining map in random order; here in index order.
    for name, i in sorted(index.items(), key=lambda item: item[1]):
        errs.append(FieldError.invalid(
            path.index(i), name,
            f"missing from spec.versions; {name} was previously a storage version, and must "
            f"remain in spec.versions until a storage migration ensures no data remains "
            f"persisted in {name} and removes {name} from status.storedVersions"))
    return errs
