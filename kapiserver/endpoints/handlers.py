"""RESTHandler: serves one resource's verbs over a ``RegistryStore`` (``endpoints/handlers``).

Decodes bodies (JSON or YAML, at most 3 MiB), runs admission around the registry, and
encodes answers as JSON, YAML or a ``meta.k8s.io/v1`` Table as the client asks.
"""

from __future__ import annotations

import functools
import json

import yaml
from flask import Response

from .. import errors
from ..admission import CREATE, DELETE, UPDATE
from ..registry import patch
from ..registry.store import Preconditions
from ..serialization import dumps_json, dumps_json_indent, dumps_yaml
from . import negotiation
from .responses import JSON, YAML

MAX_BODY_BYTES = 3 * 1024 * 1024
FIELD_VALIDATION_MODES = ("Ignore", "Warn", "Strict")
ACCEPTED_MEDIA_TYPES = "application/json, application/yaml"
ACCEPTED_MEDIA_TYPES_PROTOBUF = ACCEPTED_MEDIA_TYPES + ", application/vnd.kubernetes.protobuf"


class AdmissionAttributes:
    """What admission plugins see of one request (upstream's ``admission.Attributes``).

    * ``operation``: ``CREATE``, ``UPDATE``, ``DELETE`` or ``CONNECT``.
    * ``object``: the new object, which mutating plugins change in place (``None`` for
      ``DELETE``); ``old_object``: the stored object an update replaces or a delete
      removes (``None`` for ``CREATE`` and ``CONNECT``).
    * ``name`` (``""`` for a create that only has ``generateName``) and ``namespace`` (``""``
      for cluster-scoped objects; a namespace's own name for requests on a namespace).
    * ``resource``: the handler's ``ResourceSpec`` (the kind served: ``autoscaling/v1 Scale``
      for ``deployments/scale``); ``gvr``: ``(group, version, resource)`` of the request's
      URL (``apps/v1 deployments``); ``subresource`` (``status``, ``scale``, ``""``…);
      ``gvk``: ``(group, version, kind)`` of ``object``; ``kind`` its kind;
      ``namespaced``: the resource's scope.
    * ``user``: the ``UserInfo`` the request acts as; ``dry_run``; ``options``: the
      operation's options as webhooks receive them (``CreateOptions``, ``UpdateOptions``,
      ``DeleteOptions``, a connect request's ``PodExecOptions``…, with kind and apiVersion),
      or ``None``.
    * ``strategy``: the store's strategy (``apply_defaults`` of an object a plugin
      replaced), or ``None``; ``ctx``: the ``RequestContext`` (``None`` outside a request).
    * ``reinvocation``: what mutating plugins keep between the two rounds of a reinvoked
      chain; ``reinvoking`` is true during the second round (upstream's
      ``ReinvocationContext``); a plugin sets ``should_reinvoke`` to ask for it.

    ``add_warning(text)`` sends a ``Warning`` header; ``add_annotation(key, value)``
    records an audit annotation on the request (``ctx.audit_annotations``; the first value
    of a key stays, as upstream's ``AddAnnotation``).
    """

    __slots__ = ("operation", "object", "old_object", "namespace", "name", "resource",
                 "subresource", "kind", "user", "dry_run", "gvr", "gvk", "namespaced",
                 "options", "strategy", "ctx", "reinvocation", "reinvoking", "should_reinvoke",
                 "caught_up")

    def __init__(self, operation, obj, old, ctx, spec, name, dry_run, options=None,
                 strategy=None):
        info = ctx.info if ctx is not None else None
        self.operation = operation
        self.object = obj
        self.old_object = old
        self.namespace = info.namespace if info is not None else ""
        self.name = name
        self.resource = spec
        self.subresource = info.subresource if info is not None else ""
        self.kind = spec.kind
        self.user = ctx.user if ctx is not None else None
        self.dry_run = dry_run
        # The URL names the resource; the handler's spec the kind (they differ for
        # subresources served as another kind: scale, binding, eviction).
        if info is not None and info.resource:
            self.gvr = (info.api_group, info.api_version, info.resource)
        else:
            self.gvr = (spec.group, spec.version, spec.resource)
        self.gvk = (spec.group, spec.version, spec.kind)
        self.namespaced = spec.namespaced
        self.options = options
        self.strategy = strategy
        self.ctx = ctx
        self.reinvocation: dict = {}
        self.reinvoking = False
        self.should_reinvoke = False
        #: The servers whose watch cache caught up for this request (``caught_up_once``).
        self.caught_up: set = set()

    def add_warning(self, text: str) -> None:
        """A ``Warning`` header for the client."""
        from ..warning import add_warning

        add_warning(text)

    def add_annotation(self, key: str, value: str) -> None:
        """An audit annotation of the request (kept when the key is already there)."""
        if self.ctx is not None:
            self.ctx.audit_annotations.setdefault(key, value)


class Admitter:
    """The admission chain of one write. Called (``admitter(obj, old=None)``) it runs
    whole; ``mutate`` and ``validate`` run its two phases apart, on the same attributes
    (``make(obj, old)`` builds them), so that validating plugins see the object the
    strategy validated, after mutating ones ran before it, as upstream orders them."""

    __slots__ = ("chain", "make", "attributes")

    def __init__(self, chain, make):
        self.chain = chain
        self.make = make
        self.attributes = None

    def __call__(self, obj, old=None) -> None:
        self.mutate(obj, old)
        self.validate(obj, old)

    def mutate(self, obj, old=None) -> None:
        self.attributes = self.make(obj, old)
        self.chain.admit(self.attributes)

    def validate(self, obj, old=None) -> None:
        attributes, self.attributes = self.attributes, None
        self.chain.validate(attributes if attributes is not None else self.make(obj, old))


def _phases(admit) -> tuple:
    """``(mutate, validate)`` of an admitter; a plain function (a subclass's wrapper)
    runs whole in the first, with no second."""
    mutate = getattr(admit, "mutate", None)
    return (mutate, admit.validate) if mutate is not None else (admit, None)


#: The options object each operation's webhooks receive (``meta.k8s.io/v1``).
OPTIONS_KINDS = {CREATE: "CreateOptions", UPDATE: "UpdateOptions", DELETE: "DeleteOptions"}


def operation_options(args, operation: str, dry_run: bool, body: dict | None = None) -> dict:
    """The options of a write as upstream hands them to admission: ``CreateOptions`` and
    ``UpdateOptions`` (a patch's too: upstream turns ``PatchOptions`` into the options of
    the write it makes) from the query, ``DeleteOptions`` from the body and the query."""
    kind = OPTIONS_KINDS[operation]
    options = {"kind": kind, "apiVersion": "meta.k8s.io/v1"}
    if operation == DELETE:
        for key in ("gracePeriodSeconds", "preconditions", "orphanDependents",
                    "propagationPolicy", "ignoreStoreReadErrorWithClusterBreakingPotential"):
            if (body or {}).get(key) is not None:
                options[key] = body[key]
        for key in ("gracePeriodSeconds", "propagationPolicy", "orphanDependents"):
            if key not in options and args.get(key):
                value = args[key]
                if key == "gracePeriodSeconds":
                    try:
                        value = int(value)
                    except ValueError:
                        continue
                elif key == "orphanDependents":
                    value = value.lower() == "true"
                options[key] = value
    if dry_run:
        options["dryRun"] = ["All"]
    if operation != DELETE:
        for key in ("fieldManager", "fieldValidation"):
            if args.get(key):
                options[key] = args[key]
    return options


#: Upstream compresses answers of more than this many bytes for a gzip-accepting client.
GZIP_THRESHOLD = 128 * 1024
TABLE_INCLUDE_OBJECT = ("Metadata", "Object", "None", "")


def compressed_response(ctx, data: bytes, content_type: str, code: int = 200) -> Response:
    """``data`` as the answer; gzip-encoded (level 1, as upstream's ``deferredResponseWriter``)
    when it exceeds ``GZIP_THRESHOLD`` and the client accepts gzip."""
    if len(data) > GZIP_THRESHOLD and _accepts_gzip(ctx.request.headers.get("Accept-Encoding",
                                                                              "")):
        import gzip

        response = Response(gzip.compress(data, compresslevel=1, mtime=0), code,
                            content_type=content_type)
        response.headers["Content-Encoding"] = "gzip"
        response.headers["Vary"] = "Accept-Encoding"
        return response
    return Response(data, code, content_type=content_type)


def _accepts_gzip(header: str) -> bool:
    # Upstream looks for the token gzip among the encodings, whatever their q.
    return any(part.split(";")[0].strip().lower() == "gzip" for part in header.split(","))


def partial_object_metadata(obj: dict, api_version: str) -> dict:
    """``asPartialObjectMetadata``: only the object's metadata (ObjectMeta as stored)."""
    return {"kind": "PartialObjectMetadata", "apiVersion": api_version,
            "metadata": obj.get("metadata") or {}}


def _go_type_name(spec, kind: str) -> str:
    """``%T`` of the object upstream holds at that point (its internal type)."""
    if getattr(spec, "openapi_definitions", None) and not spec.group.endswith(".k8s.io"):
        return "*unstructured.Unstructured"
    package = spec.group.split(".")[0] if spec.group else "core"
    return f"*{package}.{kind}"


def _validate_table_options(include: str) -> None:
    """``ValidateTableOptions``: a 422 on TableOptions for an unknown ``includeObject``."""
    if include not in TABLE_INCLUDE_OBJECT:
        from ..apimachinery.field_errors import FieldError, FieldPath, new_invalid

        raise new_invalid("TableOptions", "meta.k8s.io", "", [FieldError.invalid(
            FieldPath("includeObject"), include,
            "must be 'Metadata', 'Object', 'None', or empty")])


def _dry_run(args, options_kind: str = "CreateOptions", values=None) -> bool:
    """``ValidateDryRun`` of the request's ``dryRun`` (``values`` when the options came in
    a body): ``All`` only, else a 422 on ``<options_kind>.meta.k8s.io``."""
    from ..apimachinery.field_errors import (FieldError, FieldPath, GoValue, go_string_slice,
                                             new_invalid)

    values = args.getlist("dryRun") if values is None else list(values or [])
    if any(value != "All" for value in values):
        raise new_invalid(options_kind, "meta.k8s.io", "", [FieldError.not_supported(
            FieldPath("dryRun"), GoValue(go_string_slice(values)), ("All",))])
    return bool(values)


def _ensure_namespace(obj: dict, namespace: str) -> None:
    """``EnsureObjectNamespaceMatchesRequestNamespace`` on create: an object naming another
    namespace than the URL is refused; none takes the URL's; a cluster-scoped one has none."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return
    given = meta.get("namespace") or ""
    if given and namespace and given != namespace:
        raise errors.BadRequest("the namespace of the provided object does not match the "
                                "namespace sent on the request")


def _check_name(obj: dict, name: str, namespace: str) -> None:
    """``checkName`` of an update: the body names the object the URL names."""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    given = meta.get("name") or ""
    if given != name:
        raise errors.BadRequest(f"the name of the object ({given}) does not match the name on "
                                f"the URL ({name})")
    given_namespace = meta.get("namespace") or ""
    if namespace and given_namespace and given_namespace != namespace:
        raise errors.BadRequest(f"the namespace of the object ({given_namespace}) does not "
                                f"match the namespace on the request ({namespace})")


#: Apply races a concurrent create or delete this many times before giving up.
_APPLY_ATTEMPTS = 8


def _field_validation(args) -> str:
    """The ``fieldValidation`` mode (``Warn`` when unset); 400 for an unknown one."""
    mode = args.get("fieldValidation", "") or "Warn"
    if mode not in FIELD_VALIDATION_MODES:
        raise errors.BadRequest(f"fieldValidation parameter unsupported: "
                                f"{errors.go_quote(mode)}. Valid values are: "
                                f"{', '.join(FIELD_VALIDATION_MODES)}")
    return mode


def _patch_options(args, apply: bool) -> bool:
    """``ValidatePatchOptions``: ``force`` only for apply, which needs ``fieldManager``
    (one 422 for every problem). Returns ``force``, read as upstream reads booleans."""
    from ..apimachinery.field_errors import FieldError, FieldPath
    from ..fieldmanager import InvalidFieldManager, validate_field_manager

    problems = []
    if not apply and "force" in args:
        problems.append(FieldError.forbidden(FieldPath("force"),
                                             "may not be specified for non-apply patch"))
    if apply and not args.get("fieldManager"):
        problems.append(FieldError.required(FieldPath("fieldManager"),
                                            "is required for apply patch"))
    problems += validate_field_manager(args.get("fieldManager", ""))
    if problems:
        raise InvalidFieldManager(problems, "PatchOptions")
    value = args.get("force")
    return value is not None and value != "0" and value.lower() != "false"


#: How long a read waits for a resourceVersion the store has not reached (upstream's
#: watch cache waits 3 s).
FUTURE_RV_WAIT = 3.0
RESOURCE_VERSION_MATCHES = ("Exact", "NotOlderThan", "")


def _validate_list_options(resource_version: str, match: str, continue_token: str,
                           send_initial_events: bool) -> None:
    """``ValidateListOptions`` of a list (not a watch): a 422 on ``ListOptions``."""
    from ..apimachinery.field_errors import FieldError, FieldPath, new_invalid

    errs = []
    path = FieldPath("resourceVersionMatch")
    if match:
        if not resource_version:
            errs.append(FieldError.forbidden(path, "resourceVersionMatch is forbidden unless "
                                                   "resourceVersion is provided"))
        if continue_token:
            errs.append(FieldError.forbidden(path, "resourceVersionMatch is forbidden when "
                                                   "continue is provided"))
        if match not in RESOURCE_VERSION_MATCHES:
            errs.append(FieldError.not_supported(path, match, RESOURCE_VERSION_MATCHES))
        if match == "Exact" and resource_version == "0":
            errs.append(FieldError.forbidden(path, 'resourceVersionMatch "exact" is forbidden '
                                                   'for resourceVersion "0"'))
    if send_initial_events:
        errs.append(FieldError.forbidden(FieldPath("sendInitialEvents"),
                                         "sendInitialEvents is forbidden for list"))
    if errs:
        raise new_invalid("ListOptions", "meta.k8s.io", "", errs)


def _check_applied_name(obj: dict, name: str, namespace: str) -> None:
    """``checkName``: the applied object must be the one the URL names."""
    meta = obj.get("metadata") or {}
    if meta.get("name", "") != name:
        raise errors.BadRequest(f"the name of the object ({meta.get('name', '')}) does not "
                                f"match the name on the URL ({name})")
    if namespace and meta.get("namespace") and meta["namespace"] != namespace:
        raise errors.BadRequest(f"the namespace of the object ({meta['namespace']}) does not "
                                f"match the namespace on the request ({namespace})")


class RESTHandler:
    """The ``ResourceHandler`` of one resource backed by a ``RegistryStore``."""

    #: Served as upstream serves routes it registers with go-restful: an ``Accept`` naming
    #: nothing the route produces is refused before negotiation (custom resources: no).
    restful = True

    def __init__(self, store, server, verbs=None):
        self.store = store
        self.spec = store.spec
        self.verbs = tuple(verbs or store.spec.verbs)
        self.server = server

    # -- encoding --------------------------------------------------------------------------

    @functools.cached_property
    def media_types(self) -> tuple[str, ...]:
        """The serializers of this endpoint: protobuf too for a kind with protobuf tables
        (looked up once: an endpoint serves one kind)."""
        from ..runtime import protobuf

        return (negotiation.BUILTIN_MEDIA_TYPES
                if protobuf.known(self.spec.api_version, self.spec.kind)
                else negotiation.UNSTRUCTURED_MEDIA_TYPES)

    def output(self, ctx, stream: bool = False) -> negotiation.MediaType:
        """The representation the client asked for (negotiated once per request)."""
        if ctx.media is None:
            ctx.media = negotiation.negotiate(ctx.accept, self.media_types,
                                              table=self.store is not None, stream=stream)
        return ctx.media

    def respond(self, ctx, obj: dict, code: int = 200) -> Response:
        """Answer with ``obj`` (an object or a list) as negotiated: converted to a Table or
        to PartialObjectMetadata[List] if asked, encoded as JSON, YAML or protobuf."""
        media = self.output(ctx)
        obj = self.convert(ctx, media, obj)
        if "kind" in obj and next(iter(obj)) != "kind":
            # Go writes TypeMeta first, whatever order the request body had.
            obj = {"kind": obj["kind"], "apiVersion": obj.get("apiVersion"),
                   **{k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}}
        return self.encode_response(ctx, media, obj, code)

    def encode_response(self, ctx, media, obj: dict, code: int = 200) -> Response:
        """``obj`` encoded as ``media`` says (``respond`` without the conversion)."""
        if media.protobuf:
            from ..runtime import protobuf

            if obj.get("kind") == "PartialObjectMetadataList":
                obj = dict(obj, items=[{k: v for k, v in item.items()
                                        if k not in ("kind", "apiVersion")}
                                       for item in obj.get("items") or []])
            return self.send(ctx, protobuf.encode(obj), protobuf.CONTENT_TYPE, code)
        if media.yaml:
            return self.send(ctx, dumps_yaml(obj), YAML, code)
        if media.pretty:
            return self.send(ctx, dumps_json_indent(obj) + b"\n", JSON, code)
        return self.send(ctx, dumps_json(obj), JSON, code)

    def send(self, ctx, data: bytes, content_type: str, code: int = 200) -> Response:
        """A response of ``data``, gzip-compressed as upstream compresses answers over
        128 KiB for a client that accepts gzip."""
        return compressed_response(ctx, data, content_type, code)

    def convert(self, ctx, media, obj: dict) -> dict:
        """``transformResponseObject``: ``obj`` as the Table or PartialObjectMetadata[List]
        the client asked for (406 for a conversion the object cannot take)."""
        if not media.convert:
            return obj
        is_list = obj.get("kind") == self.spec.list_kind
        api_version = f"{media.group}/{media.version}"
        if media.convert == "Table":
            include = ctx.request.args.get("includeObject", "")
            _validate_table_options(include)
            table = self.table(obj, include or "Metadata")
            table["apiVersion"] = api_version
            return table
        if media.convert == "PartialObjectMetadata":
            if is_list:
                raise errors.NotAcceptable(
                    "you requested PartialObjectMetadata, but the requested object is a list "
                    f"({_go_type_name(self.spec, self.spec.list_kind)})", {})
            return partial_object_metadata(obj, api_version)
        if not is_list:
            raise errors.NotAcceptable(
                "you requested PartialObjectMetadataList, but the requested object is not a "
                f"list ({_go_type_name(self.spec, self.spec.kind)})", {})
        return {"kind": "PartialObjectMetadataList", "apiVersion": api_version,
                "metadata": obj.get("metadata") or {},
                "items": [partial_object_metadata(item, api_version)
                          for item in obj.get("items") or []]}

    def table(self, obj: dict, include: str) -> dict:
        strategy = self.store.strategy
        items = obj["items"] if obj.get("kind") == self.spec.list_kind else [obj]
        rows = []
        for item in items:
            row = {"cells": strategy.table_cells(item)}
            if include == "Object":
                full = dict(item)
                full.setdefault("kind", self.spec.kind)
                full.setdefault("apiVersion", self.spec.api_version)
                row["object"] = full
            elif include != "None":
                row["object"] = {"kind": "PartialObjectMetadata",
                                 "apiVersion": "meta.k8s.io/v1",
                                 "metadata": item.get("metadata", {})}
            rows.append(row)
        meta = obj.get("metadata", {})
        table_meta = {"resourceVersion": meta.get("resourceVersion", "")}
        if meta.get("continue"):
            table_meta["continue"] = meta["continue"]
        if "remainingItemCount" in meta:
            table_meta["remainingItemCount"] = meta["remainingItemCount"]
        return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": table_meta,
                "columnDefinitions": strategy.table_columns(), "rows": rows}

    def decode_body(self, ctx) -> dict:
        # The protobuf schema tables (about 2 MiB) load with the first write, not at start.
        from ..runtime import protobuf

        request = ctx.request
        length = request.content_length
        if length is not None and length > MAX_BODY_BYTES:
            raise errors.RequestEntityTooLarge(f"Request entity too large: limit is {MAX_BODY_BYTES}")
        body = request.stream.read(MAX_BODY_BYTES + 1)
        if len(body) > MAX_BODY_BYTES:
            raise errors.RequestEntityTooLarge(f"Request entity too large: limit is {MAX_BODY_BYTES}")
        media = (request.mimetype or "application/json").lower()
        duplicates: list[str] = []
        try:
            if media == "application/json":
                obj, duplicates = patch.decode_patch_json(body)
            elif media == "application/yaml":
                obj = patch.load_yaml(body)
            elif media == protobuf.CONTENT_TYPE and protobuf.known(self.spec.api_version,
                                                                   self.spec.kind):
                # Typed clients (kubectl create configmap/namespace/secret, client-go
                # controllers) send built-in kinds as protobuf.
                obj = protobuf.decode(body)
            else:
                accepted = (ACCEPTED_MEDIA_TYPES_PROTOBUF
                            if protobuf.known(self.spec.api_version, self.spec.kind)
                            else ACCEPTED_MEDIA_TYPES)
                raise errors.UnsupportedMediaType(
                    "the body of the request was in an unknown format - accepted media types "
                    f"include: {accepted}")
        except protobuf.ProtobufError as err:
            raise errors.BadRequest(f"the object provided is unrecognized (must be of type "
                                    f"{self.spec.kind}): {err}") from None
        except (ValueError, yaml.YAMLError) as err:
            raise errors.BadRequest(
                f"the object provided is unrecognized (must be of type {self.spec.kind}): "
                f"couldn't get version/kind; json parse error: {err}") from None
        if not isinstance(obj, dict):
            raise errors.BadRequest(f"the object provided is unrecognized (must be of type "
                                    f"{self.spec.kind}): couldn't get version/kind; json parse "
                                    "error: expected an object")
        if media != protobuf.CONTENT_TYPE:  # a protobuf body is typed already
            self.check_go_types(obj, body if media == "application/json" else None)
        self.check_unknown_fields(ctx, obj, duplicates)
        from ..runtime.gotime import TimeParseError, normalize_times

        try:
            normalize_times(obj, self.spec.api_version, self.spec.kind)
        except TimeParseError as err:
            kind = self.spec.kind
            raise errors.BadRequest(f"{kind} in version {errors.go_quote(self.spec.version)} "
                                    f"cannot be handled as a {kind}: {err}") from None
        kind, api_version = obj.get("kind"), obj.get("apiVersion")
        if (kind and kind != self.spec.kind) or (api_version and api_version != self.spec.api_version):
            raise errors.BadRequest(
                f"the API version in the data ({api_version}) does not match the expected API "
                f"version ({self.spec.api_version})" if api_version != self.spec.api_version
                else f"the object provided is unrecognized (must be of type {self.spec.kind}): "
                     f"{kind}")
        obj["kind"], obj["apiVersion"] = self.spec.kind, self.spec.api_version
        self.normalize_decoded(obj)
        if ctx.audit is not None:
            ctx.audit.log_request_object(obj)  # audit.LogRequestObject
        return obj

    def check_go_types(self, obj: dict, body: bytes | None) -> None:
        """A body that does not fit the kind's Go types is refused as upstream's decoder
        refuses it: 400 ``ConfigMap in version "v1" cannot be handled as a ConfigMap: json:
        cannot unmarshal array into Go struct field ConfigMap.data of type
        map[string]string`` (``runtime.godecode``); ``body`` is the JSON it was read from
        (``None``: YAML)."""
        from ..runtime.decoding import type_error

        problem = type_error(obj, self.spec.api_version, self.spec.kind, body)
        if problem is not None:
            kind = self.spec.kind
            raise errors.BadRequest(f"{kind} in version {errors.go_quote(self.spec.version)} "
                                    f"cannot be handled as a {kind}: {problem}")

    def normalize_decoded(self, obj: dict) -> None:
        """``obj`` as Go writes it back after decoding it (its field order, ``omitempty``):
        what is stored, answered and owned in ``managedFields``. A ``BuiltinStrategy``
        does it itself before defaulting; other stored kinds are done here."""
        from ..registry.builtin_strategy import BuiltinStrategy, StatusStrategy
        from ..runtime.decoding import normalize_decoded

        if self.store is None:
            return  # a create-only virtual resource reads what it needs itself
        if not isinstance(self.store.strategy, (BuiltinStrategy, StatusStrategy)):
            normalize_decoded(obj, self.spec.api_version, self.spec.kind)

    def check_unknown_fields(self, ctx, obj: dict, duplicates=()) -> None:
        """``fieldValidation``: drop unknown fields; ``Warn`` (default) says so (and names
        the fields the body set twice, ``duplicates``) in Warning headers, ``Strict``
        refuses the request, ``Ignore`` says nothing. The last of duplicates wins."""
        mode = _field_validation(ctx.request.args)
        unknown = self.unknown_fields(obj)
        if not (unknown or duplicates) or mode == "Ignore":
            return
        messages = [f"duplicate field {errors.go_quote(path)}" for path in duplicates]
        messages += [f"unknown field {errors.go_quote(path)}" for path in unknown or ()]
        if mode == "Strict":
            kind = self.spec.kind
            raise errors.BadRequest(f"{kind} in version {errors.go_quote(self.spec.version)} "
                                    f"cannot be handled as a {kind}: strict decoding error: "
                                    f"{', '.join(messages)}")
        ctx.warnings.extend(messages)

    def unknown_fields(self, obj: dict) -> list[str]:
        """Drop the fields ``obj``'s kind does not have; return their paths (``spec.x``)."""
        from ..runtime.unknown_fields import unknown_fields

        found = unknown_fields(obj, self.spec.api_version, self.spec.kind, prune=True)
        if found is None and self.schema_fields is not None:
            found = self.schema_fields.unknown_fields(obj, prune=True)
        return found

    @functools.cached_property
    def schema_fields(self):
        """The fields of a kind the protobuf tables lack, from the OpenAPI definitions its
        spec brings (``None`` without them: such a kind keeps every field). Built on first
        use."""
        from ..openapi.schemas import kind_definitions
        from ..runtime.unknown_fields import SchemaFields

        described = kind_definitions(self.spec)
        if described is None:
            return None
        return SchemaFields(*described, unmarshalers=self.spec.openapi_unmarshalers)

    def _check_patched_fields(self, ctx, patched: dict, mode: str, strict_errors,
                              patch_value=None, strategic: bool = False) -> None:
        """``fieldValidation`` of a patched object, as upstream's patchers decode it: unknown
        fields are dropped; ``Strict`` refuses them (and fields the patch set twice) with a
        ``strict decoding error``, ``Warn`` names each in a Warning header. Upstream's
        patchers refuse with a 422 on the field ``patch`` whose value is ``patch_value()``
        (``_patch_value``); the unstructured converter of a strategic merge sorts the
        unknown fields."""
        unknown = self.unknown_fields(patched)
        messages = list(strict_errors)
        if mode != "Ignore":
            found = [f"unknown field {errors.go_quote(path)}" for path in unknown or ()]
            messages += sorted(found) if strategic else found
        if not messages:
            return
        if mode == "Strict":
            detail = f"strict decoding error: {', '.join(messages)}"
            if patch_value is None:
                raise errors.BadRequest(detail)
            from ..apimachinery.field_errors import FieldError, FieldPath, new_invalid

            raise new_invalid("", "", "", [
                FieldError.invalid(FieldPath("patch"), patch_value(), detail)])
        for message in messages:
            if message not in ctx.warnings:
                ctx.warnings.append(message)

    def _decode_patched_times(self, patched: dict) -> None:
        """The patched object's time fields as upstream decodes them; one Go cannot read
        fails the patch as upstream's patchers fail it (422 on the field ``patch``)."""
        from ..apimachinery.field_errors import FieldError, FieldPath, new_invalid
        from ..runtime.gotime import TimeParseError, normalize_times

        try:
            normalize_times(patched, self.spec.api_version, self.spec.kind)
        except TimeParseError as err:
            text = json.dumps(patched, sort_keys=True, separators=(",", ":"),
                              ensure_ascii=False)
            raise new_invalid("", "", "", [
                FieldError.invalid(FieldPath("patch"), text, str(err))]) from None

    def _check_patched_types(self, media: str, current: dict, document, patched: dict,
                             body: bytes) -> None:
        """A patched object that does not fit the kind's Go types fails the patch as
        upstream's patchers fail it: 422 on the field ``patch``, whose value is the
        patched JSON (JSON and merge patches, decoded by sigs.k8s.io/json) or the patch
        as ``%+v`` prints it (strategic merge, converted from unstructured)."""
        from ..apimachinery.field_errors import FieldError, FieldPath, new_invalid
        from ..runtime import decoding

        api_version, kind = self.spec.api_version, self.spec.kind
        if media == patch.STRATEGIC_MERGE_PATCH:
            problem = decoding.converter_error(patched, api_version, kind)
        else:
            problem = decoding.type_error(patched, api_version, kind, body)
        if problem is not None:
            raise new_invalid("", "", "", [FieldError.invalid(
                FieldPath("patch"), self._patch_value(media, current, document, body),
                problem)])

    @staticmethod
    def _patch_value(media: str, current: dict, document, body: bytes) -> str:
        """What upstream's patchers quote of a patch they refuse: the patched JSON as
        json-patch.v4 wrote it, or a strategic merge patch as ``%+v`` prints it."""
        from ..apimachinery.field_errors import go_value
        from ..runtime import decoding

        if media == patch.STRATEGIC_MERGE_PATCH:
            return go_value(document)
        return decoding.patched_text(current, document, media == patch.JSON_PATCH, body)

    def _check_applied_types(self, obj: dict, config: dict) -> None:
        """The object server-side apply merged, converted into the kind's Go types as
        upstream's field manager converts it (a plain 500 there, worded as there)."""
        from ..fieldmanager.schema import gvk_string
        from ..runtime.decoding import converter_error

        problem = converter_error(obj, self.spec.api_version, self.spec.kind)
        if problem is not None:
            meta = config.get("metadata") if isinstance(config.get("metadata"), dict) else {}
            names = "/".join(value if isinstance(value, str) else "" for value in (
                meta.get("namespace"), meta.get("name")))
            gvk = gvk_string(self.spec.api_version, self.spec.kind)
            raise errors.Unknown(
                f"failed to convert new object ({names}; "
                f"{gvk_string(config.get('apiVersion'), config.get('kind'))}) to proper "
                f"version: unable to convert unstructured object to {gvk}: {problem}")

    # -- admission -------------------------------------------------------------------------

    def _manager(self, ctx, options_kind: str):
        """The write's ``managedFields`` recorder: ``fieldManager`` or the User-Agent."""
        from ..fieldmanager import manager_name

        manager = manager_name(ctx.request.args.get("fieldManager", ""),
                               ctx.request.headers.get("User-Agent", ""),
                               options_kind=options_kind)
        return self.store.field_manager(manager, ctx.info.subresource)

    def _admitter(self, ctx, operation, name, dry_run):
        """An ``Admitter`` of one write: ``admitter(obj, old=None)`` runs the admission
        chain (mutating, then validating plugins) on one attempt; the store runs its
        ``mutate`` and ``validate`` phases apart, around the strategy's validation. A
        delete's ``obj`` is the object it removes (the attributes' ``old_object``, as
        upstream's)."""
        chain = self.server.admission
        body = None
        if operation == DELETE and ctx.request.content_length:
            body = self.decode_delete_options(ctx)
        options = operation_options(ctx.request.args, operation, dry_run, body)
        strategy = self.store.strategy if self.store is not None else None

        def attributes(obj, old=None):
            if operation == DELETE:
                obj, old = None, obj
            if not name and operation == CREATE:
                # Named by the object (by now its generated name, if it asked for one).
                meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
                object_name = meta.get("name") or ""
            else:
                object_name = name
            return AdmissionAttributes(operation, obj, old, ctx, self.spec, object_name,
                                       dry_run, options, strategy)

        return Admitter(chain, attributes)

    # -- verbs -----------------------------------------------------------------------------

    def serve(self, ctx):
        info = ctx.info
        verb, args = info.verb, ctx.request.args
        if verb not in self.verbs:
            raise errors.MethodNotAllowed()
        if self.spec.namespaced and not info.namespace and verb in ("create",
                                                                    "deletecollection"):
            # Upstream serves only list and watch across all namespaces (/api/v1/pods):
            # a POST or DELETE there is go-restful's 405, not a write to every namespace.
            raise errors.MethodNotAllowed()
        namespace = info.namespace if self.spec.namespaced else ""
        if self.restful and not negotiation.route_accepts(ctx.accept):
            raise negotiation.route_not_acceptable(verb in ("list", "watch"))
        if verb == "watch":
            if ctx.request.method != "GET":
                # Upstream registers the watch routes for GET alone: any other method on
                # /watch/... is go-restful's 405, never a stream.
                raise errors.MethodNotAllowed()
            return self.watch(ctx, namespace)
        media = self.output(ctx)
        if verb == "get":
            resource_version = ctx.request.args.get("resourceVersion", "")
            self.wait_for_resource_version(resource_version)
            # resourceVersion=0: any version will do, as upstream's cache serves it.
            consistent = resource_version != "0"
            if media == negotiation.DEFAULT:
                return self.send(ctx, self.store.get_json(namespace, info.name, consistent),
                                 JSON)
            if media.protobuf and not media.convert:
                from ..runtime.protobuf import CONTENT_TYPE

                return self.send(ctx, self.store.get_protobuf(namespace, info.name,
                                                              consistent), CONTENT_TYPE)
            return self.respond(ctx, self.store.get(namespace, info.name, consistent))
        if verb == "list":
            if media == negotiation.DEFAULT:
                return self.send(ctx, self.list(ctx, namespace, encoded="json"), JSON)
            if media.protobuf and not media.convert:
                from ..runtime.protobuf import CONTENT_TYPE

                return self.send(ctx, self.list(ctx, namespace, encoded="protobuf"),
                                 CONTENT_TYPE)
            return self.respond(ctx, self.list(ctx, namespace))
        if verb == "create":
            if info.name:
                raise errors.MethodNotAllowed()
            dry_run = _dry_run(args, "CreateOptions")
            obj = self.decode_body(ctx)
            _ensure_namespace(obj, namespace)
            manage = self._manager(ctx, "CreateOptions")
            created = self.store.create(obj, namespace, dry_run,
                                        self._admitter(ctx, CREATE, "", dry_run), manage)
            return self.respond(ctx, created, 201)
        if verb == "update":
            dry_run = _dry_run(args, "UpdateOptions")
            obj = self.decode_body(ctx)
            _check_name(obj, info.name, namespace)
            manage = self._manager(ctx, "UpdateOptions")
            updated, created = self.store.update(namespace, info.name, obj, dry_run,
                                                 self._admitter(ctx, UPDATE, info.name, dry_run),
                                                 manage=manage)
            return self.respond(ctx, updated, 201 if created else 200)
        if verb == "delete":
            return self.delete(ctx, namespace)
        if verb == "patch":
            return self.patch(ctx, namespace)
        if verb == "deletecollection":
            return self.delete_collection(ctx, namespace)
        raise errors.MethodNotAllowed()

    def patch(self, ctx, namespace: str) -> Response:
        """PATCH with a JSON, merge or strategic merge patch, applied to the latest object,
        or server-side apply (``apply``)."""
        request, name = ctx.request, ctx.info.name
        media = (request.mimetype or "").lower()
        strategic = getattr(self.store.strategy, "merge_keys", None)
        supported = [patch.JSON_PATCH, patch.MERGE_PATCH]
        if strategic is not None:
            supported.append(patch.STRATEGIC_MERGE_PATCH)
        supported.append(patch.APPLY_PATCH)
        if media not in supported:
            raise errors.UnsupportedMediaType(
                f"the body of the request was in an unknown format - accepted media types "
                f"include: {', '.join(supported)}")
        force = _patch_options(request.args, media == patch.APPLY_PATCH)
        if media == patch.APPLY_PATCH:
            return self.apply(ctx, namespace, force)
        body = request.get_data()
        if len(body) > MAX_BODY_BYTES:
            raise errors.RequestEntityTooLarge(f"Request entity too large: limit is {MAX_BODY_BYTES}")
        mode = _field_validation(request.args)
        try:
            document, duplicates = patch.decode_patch_json(body)
        except ValueError as err:
            raise errors.BadRequest(f"error decoding patch: {err}") from None
        if ctx.audit is not None and ctx.audit.logs_request:
            ctx.audit.log_request_patch(document)  # audit.LogRequestPatch
        # Upstream reads merge and strategic patches strictly (a JSON patch is a list of
        # operations: nothing to report there).
        strict_errors = ([f"duplicate field {errors.go_quote(path)}" for path in duplicates]
                         if media != patch.JSON_PATCH and mode != "Ignore" else [])
        dry_run = _dry_run(request.args, "PatchOptions")
        admit = self._admitter(ctx, UPDATE, name, dry_run)
        manage = self._manager(ctx, "PatchOptions")

        def mutate(current: dict) -> dict:
            try:
                if media == patch.JSON_PATCH:
                    patched = patch.apply_json_patch(current, document)
                elif media == patch.MERGE_PATCH:
                    patched = patch.apply_merge_patch(current, document)
                else:
                    patched = patch.apply_strategic_merge_patch(current, document, strategic)
            except patch.PatchError as err:
                if err.invalid:
                    raise errors.Invalid("the server rejected our request due to an error in "
                                         "our request", {}) from None
                raise errors.BadRequest(str(err)) from None
            if not isinstance(patched, dict):
                raise errors.BadRequest("the patched object must be a JSON object")
            self._check_patched_types(media, current, document, patched, body)
            self._check_patched_fields(
                ctx, patched, mode, strict_errors,
                lambda: self._patch_value(media, current, document, body),
                media == patch.STRATEGIC_MERGE_PATCH)
            self._decode_patched_times(patched)
            patched["kind"], patched["apiVersion"] = self.spec.kind, self.spec.api_version
            self.normalize_decoded(patched)
            if not isinstance(patched.get("metadata"), dict):
                patched["metadata"] = {}  # Go decodes null into an empty ObjectMeta
            meta = patched["metadata"]
            wanted = meta.get("resourceVersion")
            if wanted and wanted != current["metadata"].get("resourceVersion"):
                raise self._stale(name)
            patched["kind"], patched["apiVersion"] = self.spec.kind, self.spec.api_version
            mutating(patched, current)
            return patched

        mutating, validating = _phases(admit)
        updated = self.store.guaranteed_update(namespace, name, mutate, dry_run, manage=manage,
                                               validate=validating)
        return self.respond(ctx, updated)

    def apply(self, ctx, namespace: str, force: bool) -> Response:
        """Server-side apply: merge the applied configuration into the latest object, or
        create the object from it (201) when there is none, as upstream's ``applyPatcher``.

        Apply goes through admission, defaulting and validation as any write; what it
        owns is recorded by ``fieldmanager.Applier``, not by the store.
        """
        from ..fieldmanager import Applier
        from ..registry.store import now_rfc3339

        request, info, name = ctx.request, ctx.info, ctx.info.name
        body = request.get_data()
        if len(body) > MAX_BODY_BYTES:
            raise errors.RequestEntityTooLarge(
                f"Request entity too large: limit is {MAX_BODY_BYTES}")
        dry_run = _dry_run(request.args, "PatchOptions")
        mode = _field_validation(request.args)
        try:
            config, duplicates = patch.decode_apply_patch(body)
        except patch.PatchError as err:
            raise errors.BadRequest(str(err)) from None
        if ctx.audit is not None and ctx.audit.logs_request:
            ctx.audit.log_request_patch(config)  # audit.LogRequestPatch
        applier = Applier(self.spec.api_version, self.spec.kind, request.args["fieldManager"],
                          info.subresource, list_types=self.store.strategy.list_types,
                          status_subresource=self.store.strategy.status_subresource,
                          shape=self.store.strategy.apply_shape)
        warned = []

        def applied(current: dict | None) -> dict:
            obj = applier.apply(current, config, now_rfc3339(), force)
            # fieldValidation only judges keys set twice: unknown fields never fit the
            # kind's schema, whatever the mode (upstream's applyPatcher).
            if duplicates and mode == "Strict":
                raise errors.BadRequest("error strict decoding YAML: error converting YAML to "
                                        "JSON: yaml: unmarshal errors:\n  "
                                        + "\n  ".join(duplicates))
            if duplicates and mode == "Warn" and not warned:
                warned.append(True)
                ctx.warnings.extend(duplicates)
            _check_applied_name(obj, name, namespace)
            # The merged object is decoded into the kind's Go types, its times too.
            self._check_applied_types(obj, config)
            self._decode_patched_times(obj)
            self.normalize_decoded(obj)
            return obj

        def mutate(current: dict) -> dict:
            obj = applied(current)
            wanted = obj["metadata"].get("resourceVersion")
            if wanted and wanted != current["metadata"].get("resourceVersion"):
                raise self._stale(name)
            mutating(obj, current)
            return obj

        mutating, validating = _phases(self._admitter(ctx, UPDATE, name, dry_run))
        for _ in range(_APPLY_ATTEMPTS):
            try:
                return self.respond(ctx, self.store.guaranteed_update(
                    namespace, name, mutate, dry_run, validate=validating))
            except errors.NotFound as err:
                # Missing (or deleted meanwhile): create it. Subresources never create
                # (upstream's status REST forbids it), nor does another thing's absence.
                missing = errors.NotFound.for_object(self.spec.group, self.spec.resource, name)
                if info.subresource or err.message != missing.message:
                    raise
            obj = applied(None)
            meta = obj["metadata"]
            if meta.get("uid"):
                raise errors.Conflict(
                    f"Operation cannot be fulfilled on {self.spec.group_resource} "
                    f"{errors.go_quote(name)}: uid mismatch: the provided object specified uid "
                    f"{meta['uid']}, and no existing object was found",
                    errors.status_details(name, self.spec.group, self.spec.resource))
            meta.pop("resourceVersion", None)  # create-on-update ignores it, as upstream
            try:
                created = self.store.create(obj, namespace, dry_run,
                                            self._admitter(ctx, CREATE, name, dry_run))
            except errors.AlreadyExists:
                continue  # created meanwhile: apply to it
            return self.respond(ctx, created, 201)
        raise self._stale(name)

    def _stale(self, name: str) -> errors.Conflict:
        return errors.Conflict(
            f"Operation cannot be fulfilled on {self.spec.group_resource} "
            f"{errors.go_quote(name)}: the object has been modified; please apply "
            "your changes to the latest version and try again",
            errors.status_details(name, self.spec.group, self.spec.resource))

    def selectors(self, args):
        """The request's label and field selectors, parsed and checked (400 when invalid)."""
        from ..apimachinery import fields, labels

        label_selector = field_selector = None
        try:
            if args.get("labelSelector"):
                label_selector = labels.parse(args["labelSelector"])
            if args.get("fieldSelector"):
                field_selector = fields.parse(args["fieldSelector"])
                supported = {"metadata.name"} | ({"metadata.namespace"} if self.spec.namespaced
                                                 else set()) | set(self.spec.selectable_fields)
                fields.check_supported(field_selector, supported, self.spec.kind)
        except (labels.SelectorError, fields.SelectorError) as err:
            raise errors.BadRequest(str(err)) from None
        return label_selector, field_selector

    def list(self, ctx, namespace: str, encoded: str = ""):
        """The list as a dict, or with ``encoded`` (``json``, ``protobuf``) as bytes joined
        from the item caches.

        ``resourceVersion`` semantics as upstream's (its watch cache serves what is not
        exact): unset or ``0``, the current state; ``N`` with ``NotOlderThan`` (or neither a
        match nor a limit), the current state once the store has reached ``N``; ``N`` with
        ``Exact`` (or a limit and no match), the state at ``N`` — 410 when compacted.
        """
        args = ctx.request.args
        label_selector, field_selector = self.selectors(args)
        limit = args.get("limit", "0")
        try:
            value = int(limit)
            if not -2**63 <= value < 2**63:  # ListOptions.Limit is an int64
                raise ValueError(limit)
            limit = max(value, 0)
        except ValueError:
            raise errors.BadRequest(f"invalid limit: {limit}") from None
        resource_version = args.get("resourceVersion", "")
        match = args.get("resourceVersionMatch", "")
        continue_token = args.get("continue", "")
        _validate_list_options(resource_version, match, continue_token,
                               "sendInitialEvents" in args)
        exact = bool(resource_version) and resource_version != "0" and (
            match == "Exact" or (not match and limit > 0))
        self.wait_for_resource_version(resource_version)
        listing = {"json": self.store.list_json, "protobuf": self.store.list_protobuf}.get(
            encoded, self.store.list)
        # "0" goes on: any version will do, so the store may answer without a quorum.
        return listing(namespace, label_selector, field_selector, limit, continue_token,
                       resource_version if exact or resource_version == "0" else "")

    def wait_for_resource_version(self, resource_version: str) -> None:
        """A read at least as new as ``resource_version`` waits (3 s at most, as upstream's
        watch cache) until the store has reached it; then 504 ``Too large resource
        version``. ``400`` for one that is not a number."""
        if resource_version in ("", "0"):
            return
        try:
            wanted = int(resource_version)
            if not 0 <= wanted < 2**64:  # upstream parses it as a uint64
                raise ValueError(resource_version)
        except ValueError:
            raise errors.BadRequest(f"invalid resource version: {resource_version}") from None
        cache = self.server.watch_cache
        if wanted > cache.revision and not cache.wait_for(wanted, FUTURE_RV_WAIT):
            raise errors.Timeout(
                f"Timeout: Too large resource version: {wanted}, current: {cache.revision}",
                {"causes": [{"reason": "ResourceVersionTooLarge",
                             "message": "Too large resource version"}],
                 "retryAfterSeconds": 1})

    def watch(self, ctx, namespace: str) -> Response:
        from .watch import WatchStream

        media = self.output(ctx, stream=True)
        if media.convert == "Table":
            _validate_table_options(ctx.request.args.get("includeObject", ""))
        label_selector, field_selector = self.selectors(ctx.request.args)
        stream = WatchStream(self, ctx, namespace, label_selector, field_selector)
        # serveWatch: JSON streams are application/json, others name the stream.
        content_type = JSON if media.media == JSON else f"{media.media};stream=watch"
        return Response(stream.lines(), 200, content_type=content_type)

    def delete(self, ctx, namespace: str):
        body, dry_run = self.read_delete_options(ctx)
        pre = body.get("preconditions") or {}
        name = ctx.info.name
        obj, deleted = self.store.delete(namespace, name,
                                         Preconditions(pre.get("uid", ""),
                                                       pre.get("resourceVersion", "")), dry_run,
                                         self._admitter(ctx, DELETE, name, dry_run),
                                         options=body)
        if not deleted or self.store.strategy.return_deleted_object:
            obj.setdefault("kind", self.spec.kind)
            obj.setdefault("apiVersion", self.spec.api_version)
            # Upstream answers 202 for an object kept after a DELETE that asked not to
            # orphan (the deprecated option only, for the clients that relied on it).
            return self.respond(ctx, obj, 202 if not deleted and
                                body.get("orphanDependents") is False else 200)
        details = errors.status_details(name, self.spec.group, self.spec.resource,
                                        uid=obj["metadata"].get("uid", ""))
        return Response(dumps_json({"kind": "Status", "apiVersion": "v1", "metadata": {},
                                    "status": "Success", "details": details}), 200,
                        content_type=JSON)

    def delete_collection(self, ctx, namespace: str) -> Response:
        """Delete every object matching the selectors; answer with the list deleted."""
        body, dry_run = self.read_delete_options(ctx)
        label_selector, field_selector = self.selectors(ctx.request.args)
        listed = self.store.list(namespace, label_selector, field_selector)
        deleted = []
        for item in listed["items"]:
            name = item["metadata"]["name"]
            try:
                obj, _ = self.store.delete(namespace, name, None, dry_run,
                                           self._admitter(ctx, DELETE, name, dry_run),
                                           options=body)
            except errors.NotFound:
                continue  # deleted meanwhile: that is what was asked
            obj.pop("kind", None)
            obj.pop("apiVersion", None)
            deleted.append(obj)
        listed["items"] = deleted
        return self.respond(ctx, listed)

    def read_delete_options(self, ctx) -> tuple[dict, bool]:
        """The request's ``DeleteOptions`` as JSON — its body, else its query, as upstream
        decodes them — checked as ``ValidateDeleteOptions`` checks them (one 422 on
        ``DeleteOptions.meta.k8s.io``), and whether the delete is a dry run."""
        from ..apimachinery.field_errors import new_invalid
        from ..registry.propagation import validate_delete_options, validate_dry_run

        args = ctx.request.args
        if ctx.request.content_length:
            body = self.decode_delete_options(ctx)
            if ctx.audit is not None:
                ctx.audit.log_request_object({"kind": "DeleteOptions",
                                              "apiVersion": "meta.k8s.io/v1", **body})
        else:
            body = {}
            if args.get("propagationPolicy") is not None:
                body["propagationPolicy"] = args["propagationPolicy"]
            if args.get("orphanDependents") is not None:
                # The parameter codec's string-to-bool: anything but false, 0 or empty.
                body["orphanDependents"] = args["orphanDependents"].lower() not in (
                    "false", "0", "")
        values = body.get("dryRun") if "dryRun" in body else args.getlist("dryRun")
        problems = validate_delete_options(body) + validate_dry_run(values)
        if problems:
            raise new_invalid("DeleteOptions", "meta.k8s.io", "", problems)
        return body, bool(values)

    def decode_delete_options(self, ctx) -> dict:
        """The DELETE body's ``DeleteOptions``; one that does not fit the Go type is a 400
        naming the field as Go's decoder does (upstream lets that error through as a 500)."""
        from ..runtime.decoding import type_error

        data = ctx.request.get_data() or b"{}"
        try:
            body = patch.load_json(data)
        except ValueError as err:
            raise errors.BadRequest(f"invalid DeleteOptions: {err}") from None
        if not isinstance(body, dict):
            return {}
        problem = type_error(dict(body, kind="DeleteOptions", apiVersion="meta.k8s.io/v1"),
                             "meta.k8s.io/v1", "DeleteOptions", data)
        if problem is not None:
            raise errors.BadRequest(problem)
        return body


def json_type(value) -> str:
    """How Go's JSON decoder names the type of a value it cannot decode into a field."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return f"number {json.dumps(value)}"
    return {str: "string", list: "array", dict: "object"}.get(type(value), "value")
