"""Create-only virtual resources: reviews that are answered, never stored.

Upstream's ``TokenReview``, ``SubjectAccessReview`` and friends are ``rest.Creater``s
without storage: the generic create handler decodes the body, puts the request's
namespace on it, and the resource's ``create`` computes the answer, returned with 201.
"""

from __future__ import annotations

from flask import Response

from .. import errors
from ..admission import CREATE
from .handlers import RESTHandler, _dry_run

#: ``metav1.ObjectMeta``'s JSON field order, for echoing a request's metadata back.
OBJECT_META_ORDER = ("name", "generateName", "namespace", "selfLink", "uid",
                     "resourceVersion", "generation", "creationTimestamp",
                     "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
                     "annotations", "ownerReferences", "finalizers", "managedFields")


def echo_metadata(meta) -> dict:
    """The request's metadata as Go re-encodes it: known fields, in order, empty ones gone
    (``creationTimestamp`` is always there, ``null`` when unset)."""
    meta = meta if isinstance(meta, dict) else {}
    out = {}
    for key in OBJECT_META_ORDER:
        value = meta.get(key)
        if key == "creationTimestamp" or value not in (None, "", 0, [], {}):
            out[key] = value
    return out


class CreateOnlyHandler(RESTHandler):
    """The ``ResourceHandler`` of a create-only resource (verbs ``["create"]``).

    ``create(ctx, obj) -> dict`` receives the decoded body (JSON, YAML or protobuf) with
    the request's namespace applied, and returns the answer, sent with 201. The admission
    chain sees the body first (a ``CREATE`` of the resource, as upstream's create handler
    admits a review or a token request), unless ``admits_in_create``: the create runs it
    itself, at the point upstream's storage does (bindings, evictions).
    """

    admits_in_create = False

    def __init__(self, spec, server, create):
        # No store: only decoding (shared with stored resources) and encoding are used.
        self.store = None
        self.spec = spec
        self.verbs = ("create",)
        self.server = server
        self.create = create

    def respond(self, ctx, obj: dict, code: int = 200) -> Response:
        # The answer echoes the request: no conversion, just the negotiated serializer.
        return self.encode_response(ctx, self.output(ctx), obj, code)

    def serve(self, ctx):
        info = ctx.info
        # Named only as a subresource's parent (serviceaccounts/NAME/token).
        if info.verb != "create" or bool(info.name) != bool(info.subresource):
            raise errors.MethodNotAllowed()
        obj = self.decode_body(ctx)
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            meta = obj["metadata"] = {}
        # rest.EnsureObjectNamespaceMatchesRequestNamespace
        expected = info.namespace if self.spec.namespaced else ""
        given = meta.get("namespace") or ""
        if given != expected:
            if given and expected:
                raise errors.BadRequest("the namespace of the provided object does not match "
                                        "the namespace sent on the request")
            meta["namespace"] = expected
        if not self.admits_in_create:
            dry_run = _dry_run(ctx.request.args, "CreateOptions")
            self._admitter(ctx, CREATE, info.name, dry_run)(obj)
        return self.respond(ctx, self.create(ctx, obj), 201)
