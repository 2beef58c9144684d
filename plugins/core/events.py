"""Events (``v1``): the stored form, upstream's event validation, field selectors and table.

The ``events.k8s.io`` plugin serves the same stored objects (upstream keeps both APIs
under ``/registry/events``); it converts to and from the ``v1`` form kept here and uses
this module's validation, selectable fields and table.
"""

import calendar
import time

from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue, go_quote
from kapiserver.apimachinery.validation import (go_time, is_dns1123_subdomain,
                                                is_qualified_name, validate_core_object_meta,
                                                validate_core_object_meta_update,
                                                validate_object_meta,
                                                validate_object_meta_update,
                                                validate_path_segment_name)
from kapiserver.registry.printers import NAME_COLUMN, human_duration
from kapiserver.registry.resource import ResourceSpec
from kapiserver.registry.strategy import Strategy

#: upstream's ``ToSelectableFields`` besides metadata (the ``v1`` field label names).
SELECTABLE_FIELDS = ("involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                     "involvedObject.uid", "involvedObject.apiVersion",
                     "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason",
                     "reportingComponent", "source", "type")
EVENTS = ResourceSpec(group="", version="v1", kind="Event", resource="events", singular="event",
                      namespaced=True, short_names=("ev",), selectable_fields=SELECTABLE_FIELDS,
                      storage_version_hash="r2yiGXH7wu8=")
REPORTING_INSTANCE_LIMIT = ACTION_LIMIT = REASON_LIMIT = 128
NOTE_LIMIT = 1024
EVENT_TYPES = ("Normal", "Warning")
_REFERENCE_GO_NAMES = {"kind": "Kind", "namespace": "Namespace", "name": "Name", "uid": "UID",
                       "apiVersion": "APIVersion", "resourceVersion": "ResourceVersion",
                       "fieldPath": "FieldPath"}
_REFERENCE_FIELDS = tuple(_REFERENCE_GO_NAMES)


def _column(name: str, description: str, priority: int = 0) -> dict:
    return {"name": name, "type": "string", "format": "", "description": description,
            "priority": priority}


COLUMNS = [
    _column("Last Seen", "The time at which the most recent occurrence of this event was "
            "recorded."),
    _column("Type", "Type of this event (Normal, Warning), new types could be added in the "
            "future"),
    _column("Reason", "This should be a short, machine understandable string that gives the "
            "reason for the transition into the object's current status."),
    _column("Object", "The object that this event is about."),
    _column("Subobject", "If referring to a piece of an object instead of an entire object, "
            "this string should contain a valid JSON/Go field access statement, such as "
            "desiredState.manifest.containers[2]. For example, if the object reference is to "
            "a container within a pod, this would take on a value like: \"spec.containers"
            "{name}\" (where \"name\" refers to the name of the container that triggered the "
            "event) or if no container name is specified \"spec.containers[2]\" (container "
            "with index 2 in this pod). This syntax is chosen only to have some well-defined "
            "way of referencing a part of an object.", 1),
    _column("Source", "The component reporting this event. Should be a short machine "
            "understandable string.", 1),
    _column("Message", "A human-readable description of the status of this operation."),
    _column("First Seen", "The time at which the event was first recorded. (Time of server "
            "receipt is in TypeMeta.)", 1),
    _column("Count", "The number of times this event has occurred.", 1),
    dict(NAME_COLUMN, priority=1),
]


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _str(value) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def _len(value) -> int:
    return len(_str(value).encode("utf-8", "surrogatepass"))


def normalize(event: dict) -> dict:
    """``event`` as upstream writes a ``v1`` Event: its fields in order, and the unset ones
    Go always writes (``involvedObject``, ``source``, the timestamps, ``reporting*``)."""
    out = {key: event[key] for key in ("kind", "apiVersion", "metadata") if key in event}
    out["involvedObject"] = _dict(event.get("involvedObject"))
    for key in ("reason", "message"):
        if event.get(key):
            out[key] = event[key]
    out["source"] = _dict(event.get("source"))
    out["firstTimestamp"] = event.get("firstTimestamp") or None
    out["lastTimestamp"] = event.get("lastTimestamp") or None
    for key in ("count", "type"):
        if event.get(key):
            out[key] = event[key]
    out["eventTime"] = event.get("eventTime") or None
    for key in ("series", "action", "related"):
        if event.get(key):
            out[key] = event[key]
    out["reportingComponent"] = _str(event.get("reportingComponent"))
    out["reportingInstance"] = _str(event.get("reportingInstance"))
    return out


def replace(obj: dict, new: dict) -> None:
    """Make ``obj`` (the dict the store answers with) become ``new``."""
    obj.clear()
    obj.update(new)


# -- validation (pkg/apis/core/validation/events.go) ------------------------------------------

def _legacy(event: dict, core_v1: bool) -> list:
    """``legacyValidateEvent``: what every event passes, whichever API wrote it. The
    reporting controller's field is named as the request's API names it."""
    controller_field = "reportingComponent" if core_v1 else "reportingController"
    errs = []
    namespace = _str((event.get("metadata") or {}).get("namespace"))
    involved = _str(_dict(event.get("involvedObject")).get("namespace"))
    mismatch = FieldError.invalid(FieldPath("involvedObject", "namespace"), involved,
                                  "does not match event.namespace")
    if not event.get("eventTime"):
        # An old-style event: its namespace is the involved object's ("default" or none for
        # a cluster-scoped one, for the sake of old clients).
        if (not involved and namespace not in ("", "default")) or (
                involved and namespace != involved):
            errs.append(mismatch)
    else:
        if not involved and namespace not in ("default", "kube-system"):
            errs.append(mismatch)
        controller = _str(event.get("reportingComponent"))
        if not controller:
            errs.append(FieldError.required(FieldPath(controller_field)))
        errs += [FieldError.invalid(FieldPath(controller_field), controller, msg)
                 for msg in is_qualified_name(controller)]
        for field, limit in (("reportingInstance", REPORTING_INSTANCE_LIMIT),
                             ("action", ACTION_LIMIT), ("reason", REASON_LIMIT)):
            if not event.get(field):
                errs.append(FieldError.required(FieldPath(field)))
            if _len(event.get(field)) > limit:
                errs.append(FieldError.invalid(FieldPath(field), "",
                                               f"can have at most {limit} characters"))
        if _len(event.get("message")) > NOTE_LIMIT:
            errs.append(FieldError.invalid(FieldPath("message"), "",
                                           f"can have at most {NOTE_LIMIT} characters"))
    errs += [FieldError.invalid(FieldPath("namespace"), namespace, msg)
             for msg in is_dns1123_subdomain(namespace)]
    return errs


def _series(event: dict) -> list:
    series = event.get("series")
    if not isinstance(series, dict):
        return []
    errs = []
    count = series.get("count")
    if not isinstance(count, int) or count < 2:
        errs.append(FieldError.invalid(FieldPath("series.count"), "", "should be at least 2"))
    if not series.get("lastObservedTime"):
        errs.append(FieldError.required(FieldPath("series.lastObservedTime")))
    return errs


def validate_event(event: dict, strict: bool) -> list:
    """``ValidateEventCreate`` for an event in the ``v1`` form; ``strict`` for writes
    through ``events.k8s.io/v1``, which must use the new fields only."""
    errs = _legacy(event, core_v1=not strict)
    if not strict:
        return errs
    errs += validate_core_object_meta(event.get("metadata") or {}, True)
    errs += _series(event)
    if not event.get("eventTime"):
        errs.append(FieldError.required(FieldPath("eventTime")))
    if event.get("type") not in EVENT_TYPES:
        errs.append(FieldError.invalid(FieldPath("type"), "",
                                       f"has invalid value: {_str(event.get('type'))}"))
    for field in ("firstTimestamp", "lastTimestamp", "count"):
        if event.get(field):
            errs.append(FieldError.invalid(FieldPath(field), "", "needs to be unset"))
    if _dict(event.get("source")).get("component") or _dict(event.get("source")).get("host"):
        errs.append(FieldError.invalid(FieldPath("source"), "", "needs to be unset"))
    return errs


def _go_reference(ref) -> GoValue:
    """A ``core.ObjectReference`` as ``%#v`` prints it (a nil pointer prints as "null")."""
    if not isinstance(ref, dict):
        return GoValue('"null"')
    fields = ", ".join(f"{go_name}:{go_quote(_str(ref.get(name)))}"
                       for name, go_name in _REFERENCE_GO_NAMES.items())
    return GoValue(f"core.ObjectReference{{{fields}}}")


def _go_source(source) -> GoValue:
    source = _dict(source)
    return GoValue(f"core.EventSource{{Component:{go_quote(_str(source.get('component')))}, "
                   f"Host:{go_quote(_str(source.get('host')))}}}")


def _immutable(new: dict, old: dict, field: str, render=_str, path: str = "") -> list:
    if new.get(field) == old.get(field) or (not new.get(field) and not old.get(field)):
        return []
    return [FieldError.invalid(FieldPath(path or field), render(new.get(field)),
                               "field is immutable")]


def validate_event_update(new: dict, old: dict, strict: bool) -> list:
    """``ValidateEventUpdate``: through ``events.k8s.io`` an event's content is immutable."""
    errs = _legacy(new, core_v1=not strict)
    if not strict:
        return errs
    errs += validate_core_object_meta_update(new.get("metadata") or {},
                                             old.get("metadata") or {})
    if new.get("series") != old.get("series"):
        errs += _series(new)
    # In upstream's order (reason is checked twice there too).
    errs += _immutable(new, old, "involvedObject", _go_reference)
    errs += _immutable(new, old, "reason") + _immutable(new, old, "message")
    errs += _immutable(new, old, "source", _go_source)
    errs += _immutable(new, old, "firstTimestamp", go_time)
    errs += _immutable(new, old, "lastTimestamp", go_time)
    errs += _immutable(new, old, "count", lambda v: v or 0)
    errs += _immutable(new, old, "reason") + _immutable(new, old, "type")
    errs += _immutable(new, old, "eventTime", go_time)
    errs += _immutable(new, old, "action")
    errs += _immutable(new, old, "related", _go_reference)
    errs += _immutable(new, old, "reportingComponent", path="reportingController")
    errs += _immutable(new, old, "reportingInstance")
    return errs


# -- reading ----------------------------------------------------------------------------------

def selectable_fields(event: dict) -> dict:
    """upstream's ``ToSelectableFields`` (``source`` falls back to the reporting controller)."""
    meta = event.get("metadata") or {}
    involved = _dict(event.get("involvedObject"))
    fields = {f"involvedObject.{name}": _str(involved.get(name)) for name in _REFERENCE_FIELDS}
    fields.update({
        "reason": _str(event.get("reason")),
        "reportingComponent": _str(event.get("reportingComponent")),
        "source": _str(_dict(event.get("source")).get("component"))
        or _str(event.get("reportingComponent")),
        "type": _str(event.get("type")),
        "metadata.name": _str(meta.get("name")),
        "metadata.namespace": _str(meta.get("namespace")),
    })
    return fields


def _since(timestamp) -> str:
    """``translateTimestampSince`` for a ``Time`` or ``MicroTime`` (``<unknown>`` if unset)."""
    if not timestamp:
        return "<unknown>"
    whole = _str(timestamp).split(".")[0].rstrip("Z") + "Z"
    try:
        at = calendar.timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%SZ"))
    except ValueError:
        return "<unknown>"
    return human_duration(time.time() - at)


def table_cells(event: dict) -> list:
    """upstream's ``printEvent`` (wide, as the server prints every column)."""
    first = _since(event.get("firstTimestamp")) if event.get("firstTimestamp") else \
        _since(event.get("eventTime"))
    last = _since(event.get("lastTimestamp")) if event.get("lastTimestamp") else first
    count = event.get("count") or 0
    series = event.get("series")
    if isinstance(series, dict):
        last = _since(series.get("lastObservedTime"))
        count = series.get("count") or 0
    elif not count:
        count = 1  # singleton events carry no count in the new API
    involved = _dict(event.get("involvedObject"))
    kind = _str(involved.get("kind")).lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    source = _dict(event.get("source"))
    component = _str(source.get("component")) or _str(event.get("reportingComponent"))
    host = _str(source.get("host")) or _str(event.get("reportingInstance"))
    return [last, _str(event.get("type")), _str(event.get("reason")), target,
            _str(involved.get("fieldPath")), f"{component}, {host}" if host else component,
            _str(event.get("message")).strip(), first, count,
            _str((event.get("metadata") or {}).get("name"))]


class EventStrategy(Strategy):
    """``pkg/registry/core/event`` strategy for writes through ``v1`` (legacy validation)."""

    allow_create_on_update = True
    #: DELETE leaves an event's finalizers alone (upstream's ``rest.Unsupported``).
    default_garbage_collection_policy = "Unsupported"

    def validate_meta(self, meta):
        # Only the generic rules, with names that are valid path segments, and only once the
        # event itself is valid (upstream's common checks after the strategy's).
        return validate_object_meta(meta, True, validate_path_segment_name)

    def prepare_for_create(self, obj):
        super().prepare_for_create(obj)
        replace(obj, normalize(obj))

    def prepare_for_update(self, new, old):
        super().prepare_for_update(new, old)
        replace(new, normalize(new))

    def validate(self, obj):
        return validate_event(obj, strict=False) or self.validate_meta(obj.get("metadata") or {})

    def validate_update(self, new, old):
        meta, old_meta = new.get("metadata") or {}, old.get("metadata") or {}
        errs = self.validate_meta(meta) + validate_object_meta_update(meta, old_meta)
        return errs + validate_event_update(new, old, strict=False)

    def selectable_fields(self, obj):
        return selectable_fields(obj)

    def table_columns(self):
        return COLUMNS

    def table_cells(self, obj):
        return table_cells(obj)
