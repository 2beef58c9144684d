"""ControllerRevisions: ``ValidateControllerRevision``/``…Update`` (``data`` is required
and immutable, ``revision`` not negative) and the CONTROLLER/REVISION Table."""

import functools
import json

from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue
from kapiserver.apimachinery.gosyntax import go_slice, go_struct
from kapiserver.apimachinery.validation import (FIELD_IMMUTABLE_ERROR_MSG,
                                                validate_nonnegative_field,
                                                validate_object_meta_update)
from kapiserver.fieldmanager import ListTypes, for_kind
from kapiserver.registry.builtin import builtin_spec

from . import workloads as w
from .base import AppsStrategy

CONTROLLERREVISIONS = builtin_spec("apps", "v1", "controllerrevisions")


def raw_data(value) -> bytes:
    """The bytes a ``runtime.RawExtension`` holds: the JSON as the server writes it."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def go_data(value) -> GoValue:
    """``data`` as upstream holds it internally: a ``runtime.Unknown`` with the raw JSON,
    printed with ``%#v`` (bytes as ``[]uint8{0x7b, ...}``)."""
    return GoValue(go_struct("runtime.Unknown", (
        ("TypeMeta", 'runtime.TypeMeta{APIVersion:"", Kind:""}'),
        ("Raw", go_slice("uint8", [f"0x{byte:x}" for byte in raw_data(value)])),
        ("ContentEncoding", '""'),
        ("ContentType", '"application/json"'))))


def validate_controller_revision(obj: dict, validate_meta) -> list[FieldError]:
    """``ValidateControllerRevision``; ``validate_meta`` checks the object's metadata."""
    errs = validate_meta(obj.get("metadata") or {})
    if obj.get("data") is None:
        errs.append(FieldError.required(FieldPath("data"), "data is mandatory"))
    errs += validate_nonnegative_field(w.as_int(obj.get("revision")), FieldPath("revision"))
    return errs


class ControllerRevisionStrategy(AppsStrategy):
    """``pkg/registry/apps/controllerrevision`` strategy: no status, no generation."""

    @functools.cached_property
    def list_types(self):
        # data is a runtime.RawExtension, which field ownership treats as one value
        # (upstream records f:data, never the keys inside it).
        return for_kind(self.spec.api_version, self.spec.kind) | ListTypes(atomic=("data",))

    def validate(self, obj):
        return validate_controller_revision(obj, self.validate_meta)

    def validate_update(self, new, old):
        """``ValidateControllerRevisionUpdate``: metadata, the new object, and ``data`` as
        it was (compared as the raw JSON upstream compares)."""
        errs = validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        errs += validate_controller_revision(new, self.validate_meta)
        new_data, old_data = new.get("data"), old.get("data")
        if (new_data is None) != (old_data is None) or (
                new_data is not None and raw_data(new_data) != raw_data(old_data)):
            errs.append(FieldError.invalid(FieldPath("data"),
                                           None if new_data is None else go_data(new_data),
                                           FIELD_IMMUTABLE_ERROR_MSG))
        return errs

    def table_cells(self, obj):
        meta = w.as_dict(obj.get("metadata"))
        controller = "<none>"
        for ref in w.as_list(meta.get("ownerReferences")):
            if isinstance(ref, dict) and ref.get("controller") is True:
                group = (ref.get("apiVersion") or "").rpartition("/")[0]
                kind = ref.get("kind") or ""
                if group or kind:
                    kind = f"{kind}.{group}" if group else kind
                    controller = f"{kind.lower()}/{ref.get('name') or ''}"
                else:
                    controller = ref.get("name") or ""
                break
        return [meta.get("name", ""), controller, w.as_int(obj.get("revision")), w.created(obj)]
