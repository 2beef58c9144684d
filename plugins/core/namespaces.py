"""Namespaces: DNS-1123 label names, the ``kubernetes`` finalizer, phase, and their table."""

import copy

from kapiserver.registry.printers import AGE_COLUMN, NAME_COLUMN, age
from kapiserver.registry.resource import ResourceSpec
from kapiserver.registry.strategy import Strategy

NAMESPACES = ResourceSpec(group="", version="v1", kind="Namespace", resource="namespaces",
                          singular="namespace", namespaced=False, short_names=("ns",),
                          verbs=("create", "delete", "get", "list", "patch", "update", "watch"),
                          selectable_fields=("status.phase",),
                          storage_version_hash="Q3oi5N2YM8M=")
METADATA_NAME_LABEL = "kubernetes.io/metadata.name"
FINALIZER = "kubernetes"
STATUS_COLUMN = {"name": "Status", "type": "string", "format": "",
                 "description": "The status of the namespace", "priority": 0}


class NamespaceStrategy(Strategy):
    """``pkg/registry/core/namespace`` strategy: finalizer, phase, name label."""

    status_subresource = True
    return_deleted_object = True
    #: Upstream's namespace REST wraps its store without ``MayReturnFullObjectDeleter``:
    #: OpenAPI documents its DELETE as answering a Status.
    delete_returns_object = False

    def name_validator(self):
        from kapiserver.apimachinery.validation import name_is_dns_label

        return name_is_dns_label

    def apply_defaults(self, obj):
        # SetDefaults_Namespace: the name label, owned by the writer.
        self._label(obj)

    def prepare_for_create(self, obj):
        super().prepare_for_create(obj)
        obj["status"] = {"phase": "Active"}
        spec = obj.setdefault("spec", {})
        finalizers = spec.setdefault("finalizers", [])
        if FINALIZER not in finalizers:
            finalizers.append(FINALIZER)

    def prepare_for_update(self, new, old):
        super().prepare_for_update(new, old)
        new["spec"] = old.get("spec", {})  # spec.finalizers changes only through /finalize
        self._label(new)

    @staticmethod
    def _label(obj):
        meta = obj.setdefault("metadata", {})
        if meta.get("name"):
            meta.setdefault("labels", {})[METADATA_NAME_LABEL] = meta["name"]

    def deletion_pending(self, obj):
        return super().deletion_pending(obj) or bool((obj.get("spec") or {}).get("finalizers"))

    def gc_finalizers(self, obj, options):
        """As upstream's namespace REST ``Delete``: the first DELETE sets the ``orphan``
        and ``foregroundDeletion`` finalizers from its options alone (``orphanDependents:
        false`` asks for the foreground), later ones change nothing until the content is
        gone (``spec.finalizers`` empty), and then the generic store's rule applies."""
        meta = obj.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            if (obj.get("spec") or {}).get("finalizers"):
                return None
            return super().gc_finalizers(obj, options)
        from kapiserver.registry.propagation import FOREGROUND, ORPHAN

        options = options or {}
        current = list(meta.get("finalizers") or [])
        orphan, foreground = "orphan" in current, "foregroundDeletion" in current
        if options.get("orphanDependents") is not None:
            orphan = bool(options["orphanDependents"])
            foreground = not orphan
        elif options.get("propagationPolicy") is not None:
            orphan = options["propagationPolicy"] == ORPHAN
            foreground = options["propagationPolicy"] == FOREGROUND
        new = [f for f in current if f not in ("orphan", "foregroundDeletion")]
        new += ["orphan"] * orphan + ["foregroundDeletion"] * foreground
        return None if set(new) == set(current) else new

    def prepare_for_delete(self, obj):
        obj.setdefault("status", {})["phase"] = "Terminating"
        # Namespaces carry no deletionGracePeriodSeconds upstream.
        obj["metadata"].pop("deletionGracePeriodSeconds", None)

    def selectable_fields(self, obj):
        fields = super().selectable_fields(obj)
        fields["status.phase"] = (obj.get("status") or {}).get("phase", "")
        return fields

    def table_columns(self):
        return [NAME_COLUMN, STATUS_COLUMN, AGE_COLUMN]

    def table_cells(self, obj):
        meta = obj.get("metadata") or {}
        return [meta.get("name", ""), (obj.get("status") or {}).get("phase", ""),
                age(meta.get("creationTimestamp"))]


class NamespaceStatusStrategy(NamespaceStrategy):
    """``namespaces/status``: writes the status and metadata, never the spec (upstream's
    ``namespaceStatusStrategy``)."""

    def prepare_for_update(self, new, old):
        new["spec"] = copy.deepcopy(old.get("spec") or {})


class NamespaceFinalizeStrategy(NamespaceStrategy):
    """``namespaces/finalize``: writes ``spec.finalizers`` only."""

    def prepare_for_update(self, new, old):
        finalizers = (new.get("spec") or {}).get("finalizers") or []
        new.clear()
        new.update(old)
        new["spec"] = dict(old.get("spec") or {}, finalizers=finalizers)
        if not finalizers:
            new["spec"].pop("finalizers")
