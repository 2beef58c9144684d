"""The pods' REST handler: DELETE passes its options on to graceful deletion and answers
with the pod; Table rows of finished pods carry their ``Completed`` condition; a create
warns of a name that makes a surprising hostname."""

from __future__ import annotations

from flask import Response

from kapiserver import errors
from kapiserver.admission import DELETE
from kapiserver.endpoints.handlers import RESTHandler, json_type

from .registry import DeleteOptions


def _int(value):
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _go_int64(text: str) -> int:
    """A query parameter read as Go's ``strconv.ParseInt`` reads it (400 otherwise)."""
    try:
        value = int(text, 10)
        if text.strip() != text or "_" in text:
            raise ValueError
    except ValueError:
        raise errors.BadRequest(f'strconv.ParseInt: parsing "{text}": invalid syntax') from None
    if not -(1 << 63) <= value < (1 << 63):
        raise errors.BadRequest(f'strconv.ParseInt: parsing "{text}": value out of range')
    return value


class PodHandler(RESTHandler):
    """The pods' handler: DELETE passes its options on (graceful deletion), answers with
    the pod; Table rows of finished pods carry their ``Completed`` condition; a create
    warns of a name that is no DNS label."""

    def respond(self, ctx, obj: dict, code: int = 200) -> Response:
        if code == 201 and ctx.info.verb == "create":
            ctx.warnings.extend(warnings_on_create(obj))
        return super().respond(ctx, obj, code)

    def table(self, obj: dict, include: str) -> dict:
        result = super().table(obj, include)
        items = obj["items"] if obj.get("kind") == self.spec.list_kind else [obj]
        strategy = getattr(self.store.strategy, "main", self.store.strategy)
        for index, (row, item) in enumerate(zip(result["rows"], items)):
            conditions = strategy.table_row_conditions(item)
            if conditions:
                # TableRow's field order: cells, conditions, object.
                result["rows"][index] = {"cells": row["cells"], "conditions": conditions,
                                         **{k: v for k, v in row.items() if k != "cells"}}
        return result

    def decode_delete_options(self, ctx) -> dict:
        """``DeleteOptions`` in JSON, or in protobuf as typed clients (kubelets,
        controllers) send them."""
        from kapiserver.runtime import protobuf

        if (ctx.request.mimetype or "").lower() != protobuf.CONTENT_TYPE:
            return super().decode_delete_options(ctx)
        try:
            body = protobuf.decode(ctx.request.get_data())
        except protobuf.ProtobufError as err:
            raise errors.BadRequest(f"invalid DeleteOptions: {err}") from None
        if body.get("kind") != "DeleteOptions":
            raise errors.BadRequest(f"invalid DeleteOptions: unexpected kind "
                                    f"{errors.go_quote(str(body.get('kind')))}")
        return body

    def delete_options(self, ctx) -> tuple[DeleteOptions, bool, dict]:
        """The request's ``DeleteOptions`` (from its body, else its query), dryRun, and
        the options as JSON."""
        args = ctx.request.args
        if not ctx.request.content_length:
            grace = args.get("gracePeriodSeconds")
            grace = _go_int64(grace) if grace is not None else None
            body, dry_run = self.read_delete_options(ctx)
            return DeleteOptions(grace, propagation=body), dry_run, body
        grace = self.decode_delete_options(ctx).get("gracePeriodSeconds")
        if grace is not None and _int(grace) is None:
            raise errors.BadRequest(f"json: cannot unmarshal {json_type(grace)} into Go struct "
                                    "field DeleteOptions.gracePeriodSeconds of type int64")
        body, dry_run = self.read_delete_options(ctx)
        return DeleteOptions.from_body(body), dry_run, body

    def delete(self, ctx, namespace: str):
        options, dry_run, body = self.delete_options(ctx)
        name = ctx.info.name
        obj, deleted = self.store.delete(namespace, name, None, dry_run,
                                         self._admitter(ctx, DELETE, name, dry_run),
                                         options=options)
        obj.setdefault("kind", self.spec.kind)
        obj.setdefault("apiVersion", self.spec.api_version)
        # Upstream answers 202 for an object kept after a DELETE that asked not to orphan.
        code = 202 if not deleted and body.get("orphanDependents") is False else 200
        return self.respond(ctx, obj, code)

    def delete_collection(self, ctx, namespace: str) -> Response:
        """Delete each pod the selectors match, each with the request's options; answer
        with the pods listed (upstream's ``DeleteCollection``)."""
        options, dry_run, _ = self.delete_options(ctx)
        label_selector, field_selector = self.selectors(ctx.request.args)
        listed = self.store.list(namespace, label_selector, field_selector)
        for item in listed["items"]:
            name = item["metadata"]["name"]
            try:
                self.store.delete(namespace, name, None, dry_run,
                                  self._admitter(ctx, DELETE, name, dry_run),
                                  options=options.copy())
            except errors.NotFound:
                continue  # deleted meanwhile: that is what was asked
        return self.respond(ctx, listed)


def warnings_on_create(pod: dict) -> list[str]:
    """``podStrategy.WarningsOnCreate``: a name that is no DNS label makes a surprising
    hostname; then ``GetWarningsForPod``."""
    from kapiserver.apimachinery.validation import is_dns1123_label

    from .warnings import pod_warnings

    name = (pod.get("metadata") or {}).get("name")
    messages = is_dns1123_label(name) if isinstance(name, str) else []
    warnings = []
    if messages:
        warnings.append("metadata.name: this is used in the Pod's hostname, which can result "
                        f"in surprising behavior; a DNS label is recommended: "
                        f"[{' '.join(messages)}]")
    return warnings + pod_warnings(pod)
