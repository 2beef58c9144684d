"""``events.k8s.io/v1`` Events: a view of the stored ``v1`` Events, converted both ways.

Upstream keeps both APIs' events under ``/registry/events`` in the ``v1`` form (the two
resources cohabit: one storage version hash); ``events.k8s.io/v1`` renames fields
(``regarding``, ``note``, ``reportingController``) and keeps the old ones as
``deprecated*``. Validation, field selectors and the table are the core ones, applied to
the ``v1`` form, with the strict rules upstream keeps for writes through this group.
"""

from kapiserver.apimachinery.validation import validate_core_object_meta
from kapiserver.registry.resource import ResourceSpec
from kapiserver.registry.strategy import Strategy
from kapiserver_plugins.core import events as core

GROUP, VERSION = "events.k8s.io", "v1"
#: The field labels upstream converts for this group, and their ``v1`` names.
FIELD_LABELS = {
    "reason": "reason",
    "regarding.kind": "involvedObject.kind",
    "regarding.namespace": "involvedObject.namespace",
    "regarding.name": "involvedObject.name",
    "regarding.uid": "involvedObject.uid",
    "regarding.apiVersion": "involvedObject.apiVersion",
    "regarding.resourceVersion": "involvedObject.resourceVersion",
    "regarding.fieldPath": "involvedObject.fieldPath",
    "reportingController": "reportingComponent",
    "type": "type",
}


class CohabitingSpec(ResourceSpec):
    """A resource kept under another resource's storage keys (``cohabitant``'s)."""

    cohabitant: ResourceSpec = core.EVENTS

    def key_prefix(self, namespace: str = "") -> str:
        return self.cohabitant.key_prefix(namespace)


EVENTS = CohabitingSpec(group=GROUP, version=VERSION, kind="Event", resource="events",
                        singular="event", namespaced=True, short_names=("ev",),
                        selectable_fields=tuple(FIELD_LABELS),
                        storage_version_hash=core.EVENTS.storage_version_hash)


def _set(out: dict, key: str, value) -> None:
    if value:
        out[key] = value


def to_v1(event: dict) -> dict:
    """The ``v1`` (stored) form of an ``events.k8s.io/v1`` Event."""
    out = {"kind": "Event", "apiVersion": "v1", "metadata": event.get("metadata") or {},
           "involvedObject": event.get("regarding") or {}}
    _set(out, "reason", event.get("reason"))
    _set(out, "message", event.get("note"))
    out["source"] = event.get("deprecatedSource") or {}
    out["firstTimestamp"] = event.get("deprecatedFirstTimestamp") or None
    out["lastTimestamp"] = event.get("deprecatedLastTimestamp") or None
    _set(out, "count", event.get("deprecatedCount"))
    _set(out, "type", event.get("type"))
    out["eventTime"] = event.get("eventTime") or None
    for key in ("series", "action", "related"):
        _set(out, key, event.get(key))
    out["reportingComponent"] = event.get("reportingController") or ""
    out["reportingInstance"] = event.get("reportingInstance") or ""
    return core.normalize(out)


def from_v1(event: dict) -> dict:
    """The ``events.k8s.io/v1`` form of a stored ``v1`` Event (fields in upstream's order)."""
    out = {"kind": "Event", "apiVersion": f"{GROUP}/{VERSION}",
           "metadata": event.get("metadata") or {}, "eventTime": event.get("eventTime") or None}
    _set(out, "series", event.get("series"))
    _set(out, "reportingController", event.get("reportingComponent"))
    _set(out, "reportingInstance", event.get("reportingInstance"))
    _set(out, "action", event.get("action"))
    _set(out, "reason", event.get("reason"))
    out["regarding"] = event.get("involvedObject") or {}
    _set(out, "related", event.get("related"))
    _set(out, "note", event.get("message"))
    _set(out, "type", event.get("type"))
    out["deprecatedSource"] = event.get("source") or {}
    out["deprecatedFirstTimestamp"] = event.get("firstTimestamp") or None
    out["deprecatedLastTimestamp"] = event.get("lastTimestamp") or None
    _set(out, "deprecatedCount", event.get("count"))
    return out


class EventStrategy(Strategy):
    """The event strategy for writes through ``events.k8s.io/v1`` (the strict rules)."""

    allow_create_on_update = True
    #: DELETE leaves an event's finalizers alone (upstream's ``rest.Unsupported``).
    default_garbage_collection_policy = "Unsupported"

    def to_storage(self, obj):
        return to_v1(obj)

    def from_storage(self, obj):
        return from_v1(obj)

    def validate_meta(self, meta):
        return validate_core_object_meta(meta, True, self.name_validator())

    def prepare_for_create(self, obj):
        super().prepare_for_create(obj)
        core.replace(obj, from_v1(to_v1(obj)))

    def prepare_for_update(self, new, old):
        super().prepare_for_update(new, old)
        core.replace(new, from_v1(to_v1(new)))

    def validate(self, obj):
        return core.validate_event(to_v1(obj), strict=True)

    def validate_update(self, new, old):
        return core.validate_event_update(to_v1(new), to_v1(old), strict=True)

    def selectable_fields(self, obj):
        fields = core.selectable_fields(to_v1(obj))
        selectable = {label: fields[name] for label, name in FIELD_LABELS.items()}
        selectable.update({"metadata.name": fields["metadata.name"],
                           "metadata.namespace": fields["metadata.namespace"]})
        return selectable

    def table_columns(self):
        return core.COLUMNS

    def table_cells(self, obj):
        return core.table_cells(to_v1(obj))
