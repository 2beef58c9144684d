"""``<resource>/scale`` of a built-in kind: an ``autoscaling/v1`` Scale (upstream's
``ScaleREST`` of deployments, replicasets, statefulsets and replicationcontrollers).

GET answers the Scale read from the object; PUT and PATCH (JSON, merge and strategic
merge patches) change the Scale, which is validated as a Scale, then written to the
object's replicas through the object's own update: its strategy validates it, its
admission sees it, and ``managedFields`` records the write under the ``scale``
subresource. A ``resourceVersion`` in the new Scale is a precondition on the object.
"""

from __future__ import annotations

import json

from .. import errors
from ..admission import UPDATE
from ..apimachinery.field_errors import FieldError, FieldPath, new_invalid
from ..registry import patch
from ..registry.resource import ResourceSpec
from .handlers import RESTHandler, _dry_run

VERBS = ("get", "patch", "update")
PATCH_TYPES = (patch.JSON_PATCH, patch.MERGE_PATCH, patch.STRATEGIC_MERGE_PATCH)
_SCALE_META = ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")


def scale_spec(parent: ResourceSpec) -> ResourceSpec:
    """The spec a Scale is served under: ``autoscaling/v1`` Scale, the parent's resource."""
    return ResourceSpec(group="autoscaling", version="v1", kind="Scale",
                        resource=parent.resource, singular="", namespaced=parent.namespaced,
                        verbs=VERBS)


def validate_scale(scale: dict) -> list[FieldError]:
    """``ValidateScale``: metadata's name and namespace as any object's, replicas >= 0."""
    errs = []
    replicas = (scale.get("spec") or {}).get("replicas", 0)
    if isinstance(replicas, int) and not isinstance(replicas, bool) and replicas < 0:
        errs.append(FieldError.invalid(FieldPath("spec", "replicas"), replicas,
                                       "must be greater than or equal to 0"))
    return errs


class ScaleHandler(RESTHandler):
    """Serves ``<resource>/scale`` over the parent's store; ``accessor`` is the kind's
    ``ScaleAccessor`` (which fields hold the replicas, how the selector reads)."""

    def __init__(self, store, server, accessor):
        super().__init__(store, server, VERBS)
        self.parent = store.spec
        self.spec = scale_spec(store.spec)
        self.accessor = accessor

    def to_scale(self, obj: dict) -> dict:
        meta = obj.get("metadata") or {}
        scale_meta = {key: meta[key] for key in _SCALE_META if meta.get(key)}
        status = {"replicas": self.accessor.status_replicas(obj)}
        selector = self.accessor.selector(obj)
        if selector:
            status["selector"] = selector
        return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": scale_meta,
                "spec": {"replicas": self.accessor.spec_replicas(obj)}, "status": status}

    def serve(self, ctx):
        info = ctx.info
        namespace = info.namespace if self.parent.namespaced else ""
        if info.verb == "get":
            return self.respond(ctx, self.to_scale(self.store.get(namespace, info.name)))
        if info.verb == "update":
            return self._write(ctx, namespace, self._replace(ctx))
        if info.verb == "patch":
            return self._write(ctx, namespace, self._patcher(ctx))
        raise errors.MethodNotAllowed()

    def _replace(self, ctx):
        scale = self.decode_body(ctx)

        def updated(current_scale: dict) -> dict:
            return scale

        return updated

    def _patcher(self, ctx):
        request = ctx.request
        media = (request.mimetype or "").lower()
        if media not in PATCH_TYPES:
            raise errors.UnsupportedMediaType(
                "the body of the request was in an unknown format - accepted media types "
                f"include: {', '.join(PATCH_TYPES)}")
        try:
            document = json.loads(request.get_data() or b"null")
        except ValueError as err:
            raise errors.BadRequest(f"error decoding patch: {err}") from None

        def updated(current_scale: dict) -> dict:
            try:
                if media == patch.JSON_PATCH:
                    return patch.apply_json_patch(current_scale, document)
                if media == patch.MERGE_PATCH:
                    return patch.apply_merge_patch(current_scale, document)
                return patch.apply_strategic_merge_patch(current_scale, document, {})
            except patch.PatchError as err:
                if err.invalid:
                    raise errors.Invalid("the server rejected our request due to an error "
                                         "in our request", {}) from None
                raise errors.BadRequest(str(err)) from None

        return updated

    def _write(self, ctx, namespace: str, updated):
        name = ctx.info.name
        dry_run = _dry_run(ctx.request.args,
                           "UpdateOptions" if ctx.info.verb == "update" else "PatchOptions")
        chain = self.server.admission

        def mutate(current: dict) -> dict:
            old_scale = self.to_scale(current)
            scale = updated(json.loads(json.dumps(old_scale)))
            if not isinstance(scale, dict):
                raise errors.BadRequest("the patched object must be a JSON object")
            meta = scale.get("metadata") if isinstance(scale.get("metadata"), dict) else {}
            if meta.get("name", name) != name:
                raise errors.BadRequest(f"the name of the object ({meta.get('name')}) does "
                                        f"not match the name on the URL ({name})")
            field_errors = validate_scale(scale)
            if field_errors:
                raise new_invalid("Scale", "autoscaling", name, field_errors)
            wanted = meta.get("resourceVersion")
            if wanted and wanted != current["metadata"].get("resourceVersion"):
                raise self._stale_parent(name)
            from .handlers import AdmissionAttributes, operation_options

            attributes = AdmissionAttributes(
                UPDATE, scale, old_scale, ctx, self.spec, name, dry_run,
                operation_options(ctx.request.args, UPDATE, dry_run))
            chain.admit(attributes)
            chain.validate(attributes)
            replicas = (scale.get("spec") or {}).get("replicas", 0)
            self.accessor.set_replicas(current, replicas)
            return current

        from ..fieldmanager import manager_name

        # Upstream's scale handler carries the Scale's managers over to the parent without
        # a time.
        manage = self.store.field_manager(
            manager_name(ctx.request.args.get("fieldManager", ""),
                         ctx.request.headers.get("User-Agent", ""),
                         options_kind="UpdateOptions"), "scale", timed=False)
        obj = self.store.guaranteed_update(namespace, name, mutate, dry_run, manage=manage)
        return self.respond(ctx, self.to_scale(obj))

    def _stale_parent(self, name: str) -> errors.Conflict:
        return errors.Conflict(
            f"Operation cannot be fulfilled on {self.parent.group_resource} "
            f"{errors.go_quote(name)}: the object has been modified; please apply your "
            "changes to the latest version and try again",
            errors.status_details(name, self.parent.group, self.parent.resource))
