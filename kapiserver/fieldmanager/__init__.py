"""Field ownership (``metadata.managedFields``) and server-side apply, without Flask.

``manager_name`` names the writer of a request, ``update_managed_fields`` records a
create or an update in the object about to be stored, ``Applier`` merges an applied
configuration (``application/apply-patch+yaml``) and records what its manager owns,
``Set`` is the FieldsV1 path set and ``ListTypes`` declares how each kind's lists and
atomic maps are tracked.
"""

from .fieldpath import PathElement, Set, make_path, path_string
from .listtypes import BUILTIN, DEFAULT, ListType, ListTypes, for_kind, reset_fields
from .managed import (ManagedFieldsEntry, decode_managed_fields, encode_managed_fields,
                      update_managed_fields)
from .manager import (InvalidFieldManager, manager_name, prefix_from_user_agent,
                      validate_field_manager)
from .typed import Comparison, CompareError, compare

__all__ = [
    "Applier", "LAST_APPLIED", "build_last_applied",
    "BUILTIN", "DEFAULT", "CompareError", "Comparison", "InvalidFieldManager", "ListType",
    "ListTypes", "ManagedFieldsEntry", "PathElement", "Set", "compare",
    "decode_managed_fields", "encode_managed_fields", "for_kind", "make_path",
    "manager_name", "path_string", "prefix_from_user_agent", "reset_fields",
    "update_managed_fields", "validate_field_manager",
]

#: Server-side apply's names, imported on first use: the apply engine and its schema
#: tables (about 1.5 MiB a worker) are not needed until the first apply.
_APPLY_NAMES = ("Applier", "LAST_APPLIED", "build_last_applied")


def __getattr__(name):
    if name in _APPLY_NAMES:
        from . import apply

        return getattr(apply, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
