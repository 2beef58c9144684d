"""Strategy: how one kind is defaulted, validated and compared (``rest.RESTCreateStrategy`` …)."""

from __future__ import annotations

import copy

from .printers import AGE_COLUMN

AGE_DESCRIPTION = AGE_COLUMN["description"]


class Strategy:
    """Default behaviour for a kind; subclass per resource and override what differs.

    ``has_generation``: the kind carries ``metadata.generation`` (1 on create, bumped when
    anything but metadata and status changes). ``status_subresource``: ``status`` is only
    written through ``/status`` (the main resource keeps the old status and vice versa).
    """

    #: Merge keys for strategic merge patch by dotted list path (``""``: a set of
    #: primitives); ``None`` refuses strategic merge patch (custom resources).
    merge_keys: dict | None = {}
    #: DELETE answers with the deleted object instead of a success Status (upstream's
    #: ``ReturnDeletedObject``: namespaces, services).
    return_deleted_object = False
    has_generation = False
    status_subresource = False
    allow_create_on_update = False
    #: How field ownership tracks this kind's lists and maps (``fieldmanager.ListTypes``);
    #: ``None``: the built-in table of the kind (custom resources derive one from their
    #: schema).
    list_types = None
    #: The typed shape server-side apply checks applied configs against
    #: (``fieldmanager.schema.Shape``); ``None``: the built-in kind's (custom resources
    #: derive one from their schema).
    apply_shape = None
    allow_unconditional_update = True
    #: ``from_storage`` may wait on the network (a CRD's conversion webhook): watch
    #: events are then decoded by each watch's greenlet, never by the shared feed, and
    #: reads of many objects decode them together (``from_storage_many``).
    remote_decode = False
    #: What a DELETE that says nothing does with the object's dependents
    #: (``rest.GarbageCollectionPolicy``: ``propagation.DELETE_DEPENDENTS``,
    #: ``ORPHAN_DEPENDENTS`` or ``UNSUPPORTED``, the last leaving finalizers alone).
    default_garbage_collection_policy = "DeleteDependents"

    def __init__(self, spec, ttl: float = 0):
        self.spec = spec
        #: Seconds after its last write an object is deleted (0: never; events: --event-ttl).
        self.ttl = ttl

    # -- defaulting ----------------------------------------------------------------------------

    def apply_defaults(self, obj: dict) -> None:
        """Defaulting done as the object is decoded (upstream's ``SetDefaults_*``), before
        field ownership is recorded: what it sets is owned by the writer."""

    # -- create ------------------------------------------------------------------------------

    def prepare_for_create(self, obj: dict) -> None:
        """Clear what a client may not set on create (status when it has a subresource)."""
        if self.status_subresource:
            obj.pop("status", None)

    def validate(self, obj: dict) -> list:
        """Return the field errors of a new object (metadata, then kind-specific fields)."""
        return self.validate_meta(obj.get("metadata") or {})

    def validate_meta(self, meta: dict) -> list:
        """Generic ``ObjectMeta`` rules; core/v1 kinds use core's stricter finalizer rule."""
        from ..apimachinery import validation

        check = (validation.validate_core_object_meta if self.spec.group == ""
                 else validation.validate_object_meta)
        return check(meta, self.spec.namespaced, self.name_validator())

    def name_validator(self):
        """The function validating ``metadata.name`` (default: a DNS-1123 subdomain)."""
        from ..apimachinery.validation import name_is_dns_subdomain

        return name_is_dns_subdomain

    def warnings_on_create(self, obj: dict) -> list[str]:
        """Upstream's ``WarningsOnCreate``: texts sent to the client as Warning headers."""
        return []

    def warnings_on_update(self, new: dict, old: dict) -> list[str]:
        """Upstream's ``WarningsOnUpdate``."""
        return []

    # -- update ------------------------------------------------------------------------------

    def prepare_for_update(self, new: dict, old: dict) -> None:
        """Keep the status from the old object when status has its own subresource."""
        if self.status_subresource:
            if "status" in old:
                new["status"] = copy.deepcopy(old["status"])
            else:
                new.pop("status", None)

    def validate_update(self, new: dict, old: dict) -> list:
        from ..apimachinery import validation

        check = (validation.validate_core_object_meta_update if self.spec.group == ""
                 else validation.validate_object_meta_update)
        errors = check(new.get("metadata") or {}, old.get("metadata") or {})
        return errors + self.validate(new)

    def spec_changed(self, new: dict, old: dict) -> bool:
        """True when something besides metadata and status changed (bumps generation)."""
        skip = ("metadata", "status", "kind", "apiVersion")
        return ({k: v for k, v in new.items() if k not in skip}
                != {k: v for k, v in old.items() if k not in skip})

    # -- delete --------------------------------------------------------------------------------

    def deletion_pending(self, obj: dict) -> bool:
        """True while something must finish before the object goes (finalizers remain)."""
        return bool((obj.get("metadata") or {}).get("finalizers"))

    def prepare_for_delete(self, obj: dict) -> None:
        """Mark an object whose deletion has begun (e.g. a namespace's Terminating phase)."""

    def gc_finalizers(self, obj: dict, options: dict | None) -> list[str] | None:
        """The finalizers a DELETE with ``options`` (``metav1.DeleteOptions`` as JSON;
        ``None`` from inside the server) leaves on ``obj`` for the garbage collector, or
        ``None`` when they stay as they are (``propagation.gc_finalizers``)."""
        from .propagation import DELETE_DEPENDENTS, ORPHAN_DEPENDENTS, gc_finalizers

        policy = self.default_garbage_collection_policy
        if options is None and policy == ORPHAN_DEPENDENTS:
            # Upstream's orphaning defaults depend on the request's group version (batch/v1
            # Jobs, v1 ReplicationControllers): a delete from inside has none.
            policy = DELETE_DEPENDENTS
        return gc_finalizers((obj.get("metadata") or {}).get("finalizers"), options, policy)

    # -- storage form ------------------------------------------------------------------------

    def to_storage(self, obj: dict) -> dict:
        """Return ``obj`` as it is stored; the default stores it as served.

        The extension point for a kind stored in another version's form: upstream keeps
        ``events.k8s.io/v1`` Events under the core ``/registry/events`` keys in the
        ``v1`` form, so both APIs are views of one object. Called on every write, just
        before encoding; must not modify ``obj`` (the caller answers with it).
        """
        return obj

    def from_storage(self, obj: dict) -> dict:
        """Return the stored ``obj`` as this resource serves it (undoes ``to_storage``).

        Called on every read of a stored object (get, list, update, delete); may modify
        and return ``obj``, which is a fresh decode.
        """
        return obj

    def from_storage_many(self, objs: list[dict]) -> list[dict]:
        """``from_storage`` of several stored objects at once (a LIST page, a watch's
        initial state): one round trip for a ``remote_decode`` kind (upstream converts a
        list in one ConversionReview), the same as one by one otherwise."""
        return [self.from_storage(obj) for obj in objs]

    # -- reading ------------------------------------------------------------------------------

    def selectable_fields(self, obj: dict) -> dict[str, str]:
        """Field values ``fieldSelector`` may match (``GetAttrs``): name and namespace."""
        meta = obj.get("metadata") or {}
        fields = {"metadata.name": meta.get("name", "")}
        if self.spec.namespaced:
            fields["metadata.namespace"] = meta.get("namespace", "")
        return fields

    def table_columns(self) -> list[dict]:
        """Table column definitions (``metav1.TableColumnDefinition``); NAME and AGE by default."""
        from .printers import NAME_COLUMN

        created_at = {"name": "Created At", "type": "date", "format": "",
                      "description": AGE_DESCRIPTION, "priority": 0}
        return [NAME_COLUMN, created_at]

    def table_cells(self, obj: dict) -> list:
        meta = obj.get("metadata") or {}
        return [meta.get("name", ""), meta.get("creationTimestamp")]
