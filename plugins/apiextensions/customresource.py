"""Custom resources: the strategy, store and REST handlers of one served CRD version.

The generic machinery (``RegistryStore``, ``RESTHandler``, watch, apply) serves custom
resources as it serves built-ins; what differs is here, as upstream's
``pkg/registry/customresource``: the schema validates, defaults and prunes; CEL rules run
after it; updates are ratcheted (errors about what an update left unchanged are forgiven,
``CRDValidationRatcheting``); objects are stored in the storage version and converted on
the way in and out; ``status`` and ``scale`` are subresources when the CRD says so; Tables
come from the ``additionalPrinterColumns``; JSON is written with sorted keys (Go's
unstructured maps).
"""

from __future__ import annotations

import copy
import json

from flask import Response

from kapiserver import errors
from kapiserver.apimachinery.field_errors import ErrorType, FieldError, FieldPath
from kapiserver.endpoints.handlers import RESTHandler
from kapiserver.endpoints.responses import JSON, YAML, prefers_yaml
from kapiserver.fieldmanager.schema import shape_for_schema
from kapiserver.registry.resource import ResourceSpec
from kapiserver.registry.store import ItemCache, RegistryStore
from kapiserver.registry.strategy import Strategy
from kapiserver.serialization import dumps_json, dumps_yaml
from kapiserver.warning import add_warning

from .schema.correlation import Correlated
from .schema.listtype import validate_list_types
from .schema.objectmeta import validate_embedded_resources
from .schema.validation import has_extensions, validate, validate_openapi_update

#: The verbs of a custom resource, in the order upstream's discovery lists them.
VERBS = ("delete", "deletecollection", "get", "list", "patch", "create", "update", "watch")
SUBRESOURCE_VERBS = ("get", "patch", "update")
PROTOBUF = "application/vnd.kubernetes.protobuf"
#: Schema errors after which CEL rules are not run (upstream's ``hasBlockingErr``).
_BLOCKING = frozenset((ErrorType.TYPE_INVALID, ErrorType.NOT_SUPPORTED, ErrorType.REQUIRED,
                       ErrorType.TOO_LONG, ErrorType.TOO_MANY))
#: ObjectMeta's fields: anything else under ``metadata`` is an unknown field.
OBJECT_META_FIELDS = frozenset((
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
    "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
    "annotations", "ownerReferences", "finalizers", "managedFields"))


def sorted_keys(value):
    """``value`` with every map's keys in sorted order (how Go writes unstructured maps)."""
    if isinstance(value, dict):
        return {key: sorted_keys(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [sorted_keys(item) for item in value]
    return value


def dumps_sorted(obj) -> bytes:
    return dumps_json(sorted_keys(obj))


def list_types_for_schema(schema: dict):
    """The field-ownership table of a structural schema: its list types and atomic maps."""
    from kapiserver.fieldmanager.listtypes import OBJECT_META, ListTypes

    lists, atomic = {}, []

    def walk(node: dict, path: str) -> None:
        if not isinstance(node, dict):
            return
        kind = node.get("type")
        if kind == "array":
            list_type = node.get("x-kubernetes-list-type") or "atomic"
            keys = tuple(node.get("x-kubernetes-list-map-keys") or ())
            if list_type == "map" and keys:
                lists[path] = ("map", keys)
            elif list_type == "set":
                lists[path] = "set"
            else:
                lists[path] = "atomic"
            walk(node.get("items") or {}, f"{path}.*")
        elif kind == "object" or "properties" in node:
            if node.get("x-kubernetes-map-type") == "atomic" and path:
                atomic.append(path)
            for name, child in (node.get("properties") or {}).items():
                if path == "" and name == "metadata":
                    continue
                walk(child, f"{path}.{name}" if path else name)
            extra = node.get("additionalProperties")
            if isinstance(extra, dict):
                walk(extra, f"{path}.*" if path else "*")

    walk(schema or {}, "")
    return OBJECT_META | ListTypes(lists, atomic=atomic)


class ServedVersion:
    """What serving one version of one CRD needs, read from the CRD once."""

    def __init__(self, crd: dict, version: dict):
        spec = crd["spec"]
        names = (crd.get("status") or {}).get("acceptedNames") or spec["names"]
        self.crd = crd
        self.name = version["name"]
        self.group = spec["group"]
        self.schema = ((version.get("schema") or {}).get("openAPIV3Schema")) or {}
        self.subresources = version.get("subresources") or {}
        self.columns = version.get("additionalPrinterColumns") or []
        self.selectable = [f["jsonPath"] for f in version.get("selectableFields") or []]
        self.deprecated = bool(version.get("deprecated"))
        self.deprecation_warning = version.get("deprecationWarning") or (
            f"{self.group}/{self.name} {spec['names']['kind']} is deprecated")
        self.spec = ResourceSpec(
            group=self.group, version=self.name, kind=names.get("kind") or spec["names"]["kind"],
            resource=spec["names"]["plural"], singular=names.get("singular") or
            spec["names"].get("singular", ""),
            namespaced=spec.get("scope") == "Namespaced", verbs=VERBS,
            short_names=tuple(names.get("shortNames") or ()),
            categories=tuple(names.get("categories") or ()),
            list_kind=names.get("listKind") or spec["names"].get("listKind", ""),
            selectable_fields=tuple(p.lstrip(".") for p in self.selectable),
            storage_version_hash=storage_version_hash(crd))
        from .openapi import definition_name, definitions

        names = (self.group, self.name, self.spec.kind, self.spec.list_kind,
                 self.spec.resource, self.schema, self.selectable)
        self.spec.openapi_definitions = definitions(*names)
        self.spec.openapi_v2_definitions = definitions(*names, v2=True)
        self.spec.openapi_model = definition_name(self.group, self.name, self.spec.kind)


def storage_version_hash(crd: dict) -> str:
    """``discovery.StorageVersionHash`` of the storage version's group/version/kind."""
    import base64
    import hashlib

    from .crds import storage_version

    spec = crd["spec"]
    text = f"{spec['group']}/{storage_version(crd)}/{spec['names']['kind']}"
    return base64.b64encode(hashlib.sha256(text.encode()).digest()[:8]).decode()


class CustomResourceStrategy(Strategy):
    """``customresource.customResourceStrategy`` for one served version."""

    merge_keys = None  # strategic merge patch: 415, as upstream
    has_generation = True

    def __init__(self, served: ServedVersion, converter, storage_api_version: str):
        super().__init__(served.spec)
        self.served = served
        self.schema = served.schema
        self.status_subresource = "status" in served.subresources
        self.converter = converter
        # A conversion webhook is called while decoding: watches decode on their own.
        self.remote_decode = converter.remote
        self.storage_api_version = storage_api_version
        self.list_types = list_types_for_schema(self.schema)
        self.apply_shape = shape_for_schema(self.schema)
        self._rules = None
        self._extensions = None
        self._columns = None
        self._selectable = None

    # -- schema ----------------------------------------------------------------------------

    @property
    def rules(self):
        if self._rules is None:
            from .cel import RuleSet

            self._rules = RuleSet.compile(self.schema)
        return self._rules

    def apply_defaults(self, obj):
        from .schema.defaulting import default

        default(self.schema, obj)

    def prune(self, obj: dict) -> list[str]:
        """Drop unknown fields (schema and ObjectMeta); return their paths."""
        from .schema.pruning import prune

        pruned = []
        meta = obj.get("metadata")
        if isinstance(meta, dict):
            for key in list(meta):
                if key not in OBJECT_META_FIELDS:
                    del meta[key]
                    pruned.append(f"metadata.{key}")
        return pruned + prune(self.schema, obj, is_resource_root=True)

    @property
    def extensions(self) -> bool:
        """Whether the schema has embedded resources or set and map lists to check."""
        if self._extensions is None:
            self._extensions = has_extensions(self.schema)
        return self._extensions

    def _schema_errors(self, obj: dict, old: dict | None) -> list:
        """The schema, embedded resources, list types, then the CEL rules; on update
        (``old`` given) ratcheted as upstream's ``customResourceStrategy.ValidateUpdate``."""
        if old is None:
            return self._rule_errors(validate(self.schema, obj, extensions=self.extensions),
                                     obj, None, None)
        correlated = Correlated(obj, old, self.schema)
        errs = validate_openapi_update(self.schema, obj, old, correlated=correlated)
        if self.extensions:
            # Embedded ObjectMeta is checked as on create (upstream does not ratchet it);
            # set and map lists are, as a whole: not when the old object broke them already.
            errs += validate_embedded_resources(self.schema, obj)
            errs += _list_type_errors(self.schema, obj, old)
        return self._rule_errors(errs, obj, old, correlated)

    def _rule_errors(self, errs: list, obj: dict, old: dict | None, correlated) -> list:
        """``errs`` and the CEL rules' errors, unless ``errs`` blocks them. The failures
        ratcheting excuses become Warning headers, as upstream's ``warning.AddWarning``."""
        rules = self.rules
        if rules.empty:
            return errs
        if any(e.type in _BLOCKING for e in errs):
            # The object lacks the shape the rules were written for (a wrong type, a missing
            # or unsupported value, a size past its bound): upstream's hasBlockingErr skips
            # the rules, and says so.
            errs.append(FieldError.invalid(None, None,
                                           "some validation rules were not checked because "
                                           "the object was invalid; correct the existing "
                                           "errors to complete validation"))
            return errs
        if correlated is None:
            return errs + rules.validate(obj, old)
        warnings = []
        errs = errs + rules.validate(obj, old, correlated, warnings)
        for text in warnings:
            add_warning(text)
        return errs

    # -- create and update --------------------------------------------------------------------

    def prepare_for_create(self, obj):
        super().prepare_for_create(obj)

    def validate(self, obj):
        return self.validate_meta(obj.get("metadata") or {}) + self._schema_errors(obj, None) \
            + self._scale_errors(obj)

    def validate_update(self, new, old):
        from kapiserver.apimachinery.validation import validate_object_meta_update

        return (validate_object_meta_update(new.get("metadata") or {},
                                            old.get("metadata") or {})
                + self.validate_meta(new.get("metadata") or {})
                + self._schema_errors(new, old) + self._scale_errors(new))

    def _scale_errors(self, obj: dict) -> list:
        scale = self.served.subresources.get("scale")
        if not scale:
            return []
        from .jsonpath import find, parse

        errs = []
        for key in ("specReplicasPath", "statusReplicasPath"):
            path = scale.get(key)
            if not path:
                continue
            values = find(parse(path), obj)
            if values and values[0] is not None:
                value = values[0]
                field = FieldPath(*path.lstrip(".").split("."))
                if not isinstance(value, int) or isinstance(value, bool):
                    errs.append(FieldError.invalid(field, value, "should be an integer"))
                elif value < 0:
                    errs.append(FieldError.invalid(field, value,
                                                   "should be a non-negative integer"))
                elif value > 2 ** 31 - 1:
                    errs.append(FieldError.invalid(field, value,
                                                   "should be less than or equal to "
                                                   "2147483647"))
        return errs

    def spec_changed(self, new, old):
        if self.status_subresource:
            return super().spec_changed(new, old)
        skip = ("metadata", "kind", "apiVersion")
        return ({k: v for k, v in new.items() if k not in skip}
                != {k: v for k, v in old.items() if k not in skip})

    # -- storage form -------------------------------------------------------------------------

    def to_storage(self, obj):
        if obj.get("apiVersion") == self.storage_api_version:
            return obj
        return self._convert(copy.deepcopy(obj), self.storage_api_version)

    def from_storage(self, obj):
        if obj.get("apiVersion") != self.spec.api_version:
            obj = self._convert(obj, self.spec.api_version)
            # Defaulting on read applies to what the conversion produced, as upstream's.
        self.apply_defaults(obj)
        return sorted_keys(obj)

    def from_storage_many(self, objs):
        # One ConversionReview for all that are stored in another version, as upstream
        # converts a list.
        indexes = [i for i, obj in enumerate(objs) if obj.get("apiVersion") !=
                   self.spec.api_version]
        if indexes:
            converted = self._convert_all([objs[i] for i in indexes], self.spec.api_version)
            for i, obj in zip(indexes, converted):
                objs[i] = obj
        for obj in objs:
            self.apply_defaults(obj)
        return [sorted_keys(obj) for obj in objs]

    def _convert(self, obj: dict, api_version: str) -> dict:
        return self._convert_all([obj], api_version)[0]

    def _convert_all(self, objs: list, api_version: str) -> list:
        from .conversion import ConversionError

        try:
            return self.converter.convert(objs, api_version)
        except ConversionError as err:
            raise errors.InternalError.wrap(str(err)) from None

    # -- reading ------------------------------------------------------------------------------

    def selectable_fields(self, obj):
        fields = super().selectable_fields(obj)
        if self.served.selectable:
            from .jsonpath import find, parse

            if self._selectable is None:
                self._selectable = [(p, parse(p)) for p in self.served.selectable]
            for path, compiled in self._selectable:
                values = find(compiled, obj)
                value = values[0] if values else None
                if isinstance(value, bool):
                    value = "true" if value else "false"
                fields[path.lstrip(".")] = "" if value is None else str(value)
        return fields

    def _table(self):
        if self._columns is None:
            from .tableconvertor import TableConvertor

            self._columns = TableConvertor(self.served.columns)
        return self._columns

    def table_columns(self):
        return self._table().columns()

    def table_cells(self, obj):
        return self._table().cells(obj)


class CustomResourceStatusStrategy(CustomResourceStrategy):
    """``customresource.statusStrategy``: a write keeps everything but the status (and
    the managed fields that record it) from the stored object."""

    def apply_defaults(self, obj):
        from .schema.defaulting import default

        default(self.schema, obj)

    def prepare_for_update(self, new, old):
        status = new.get("status")
        has_status = "status" in new
        managed = (new.get("metadata") or {}).get("managedFields")
        version = (new.get("metadata") or {}).get("resourceVersion")
        new.clear()
        new.update(copy.deepcopy(old))
        meta = new.setdefault("metadata", {})
        if managed is not None:
            meta["managedFields"] = managed
        else:
            meta.pop("managedFields", None)
        if version is not None:
            meta["resourceVersion"] = version
        if has_status:
            new["status"] = status
        else:
            new.pop("status", None)

    def validate_update(self, new, old):
        from kapiserver.apimachinery.validation import validate_object_meta_update

        return (validate_object_meta_update(new.get("metadata") or {},
                                            old.get("metadata") or {})
                + self._status_errors(new, old) + self._scale_errors(new))

    def _status_errors(self, new: dict, old: dict) -> list:
        """``statusStrategy.ValidateUpdate``: only the status is checked against the
        schema (its own, with paths under ``status``), ratcheted; then the list types and
        the CEL rules of the whole object, ratcheted too."""
        correlated = Correlated(new, old, self.schema)
        errs = []
        if "status" in new:
            schema = (self.schema.get("properties") or {}).get("status") or {}
            status, old_status = new["status"], old.get("status")
            errs += validate_openapi_update(
                schema, status, old_status, FieldPath("status"),
                correlated.key("status") or Correlated(status, old_status, schema))
        if self.extensions:
            errs += _list_type_errors(self.schema, new, old)
        return self._rule_errors(errs, new, old, correlated)


def _list_type_errors(schema: dict, new: dict, old: dict) -> list:
    """``ValidateListSetsAndMaps`` of an update: the new object's duplicates, unless the old
    object had some already (upstream ratchets list types as a whole)."""
    errs = validate_list_types(schema, new)
    if errs and validate_list_types(schema, old):
        return []
    return errs


class UnstructuredItemCache(ItemCache):
    """Items as Go writes unstructured objects: whole (kind and apiVersion included), keys
    sorted."""

    def encode(self, obj: dict) -> bytes:
        return dumps_sorted(obj)[:-1]


class CustomResourceStore(RegistryStore):
    """The registry of one custom resource version: unstructured JSON on the way out."""

    def __init__(self, spec, strategy, storage, on_write=None):
        super().__init__(spec, strategy, storage, on_write)
        self.item_cache = UnstructuredItemCache()

    def decode(self, value, revision):
        obj = super().decode(value, revision)
        obj.setdefault("kind", self.spec.kind)
        obj.setdefault("apiVersion", self.spec.api_version)
        return obj

    def history_start(self) -> int:
        """A custom resource has no history from before its CRD was made: upstream's
        watch cache for it starts then."""
        from kapiserver.storage import KeyNotFound

        from .crds import PREFIX

        try:
            return self.storage.get(f"{PREFIX}{self.spec.resource}.{self.spec.group}"
                                    ).create_revision
        except KeyNotFound:
            return 0

    def get_json(self, namespace, name, consistent: bool = True):
        kv, _ = self._read(namespace, name, consistent)
        item = self.item_cache.get(kv)
        if item is None:
            item = self.item_cache.put(kv, self.decode(kv.value, kv.mod_revision))
        return item + b"\n"

    def list(self, *args, **kwargs):
        listed = super().list(*args, **kwargs)
        if not kwargs.get("encoded"):
            for item in listed["items"]:
                item["kind"], item["apiVersion"] = self.spec.kind, self.spec.api_version
        listed["metadata"].setdefault("continue", "")
        return listed

    def list_json(self, *args, **kwargs):
        listed = self.list(*args, encoded=True, **kwargs)
        head = dumps_sorted({"apiVersion": listed["apiVersion"], "items": []})[:-4]
        tail = dumps_sorted({"kind": listed["kind"], "metadata": listed["metadata"]})[1:]
        return head + b"[" + b",".join(listed["items"]) + b"]," + tail


class CustomResourceHandler(RESTHandler):
    """The REST handler of ``<plural>`` (or ``<plural>/status``) of one CRD version."""

    discovery_verbs = VERBS
    #: OpenAPI describes it as upstream's CRD builder does
    custom_resource = True

    def __init__(self, store, server, served: ServedVersion, terminating: bool,
                 subresource: str = ""):
        super().__init__(store, server, VERBS if not subresource else SUBRESOURCE_VERBS)
        self.served = served
        self.terminating = terminating
        if subresource:
            self.discovery_verbs = SUBRESOURCE_VERBS

    def serve(self, ctx):
        if protobuf_only(ctx.accept):
            return protobuf_status_response(ProtobufNotAcceptable())
        if self.served.deprecated:
            ctx.warnings.append(self.served.deprecation_warning)
        if self.terminating and ctx.info.verb == "create":
            raise errors.MethodNotAllowed(
                "create not allowed while custom resource definition is terminating")
        return super().serve(ctx)

    def unknown_fields(self, obj):
        return self.store.strategy.prune(obj)

    #: Custom resources are not go-restful routes: negotiation alone decides (406).
    restful = False

    def respond(self, ctx, obj, code=200):
        media = self.output(ctx)
        if media.convert:
            return super().respond(ctx, obj, code)
        accept = ctx.accept
        if obj.get("kind") == self.spec.list_kind:
            obj = dict(obj)
            obj["items"] = [dict(item, kind=self.spec.kind, apiVersion=self.spec.api_version)
                            for item in obj["items"]]
        if prefers_yaml(accept):
            return Response(dumps_yaml(sorted_keys(obj)), code, content_type=YAML)
        return Response(dumps_sorted(obj), code, content_type=JSON)


def protobuf_only(accept: str) -> bool:
    """True for a client that accepts protobuf and nothing custom resources have: it gets
    a 406, in protobuf, as upstream answers it."""
    if not accept or PROTOBUF not in accept:
        return False
    for item in accept.split(","):
        media = item.split(";")[0].strip().lower()
        if media in (JSON, YAML, "application/*", "*/*"):
            return False
    return True


class ProtobufNotAcceptable(errors.NotAcceptable):
    """406 for a protobuf-only client; answered in protobuf (``responses`` negotiates)."""

    def __init__(self):
        super().__init__("only the following media types are accepted: application/json, "
                         "application/yaml, application/vnd.kubernetes.protobuf", {})


def protobuf_status_response(error: errors.StatusError) -> Response:
    from kapiserver.runtime import protobuf

    return Response(protobuf.encode(error.to_status()), error.code,
                    content_type=protobuf.CONTENT_TYPE)


class ScaleHandler:
    """``<plural>/scale``: an ``autoscaling/v1`` Scale read from and written to the
    custom resource through the CRD's replica paths (upstream's ``ScaleREST``)."""

    discovery_verbs = SUBRESOURCE_VERBS
    verbs = SUBRESOURCE_VERBS
    custom_resource = True

    def __init__(self, store, server, served: ServedVersion):
        self.store = store
        self.server = server
        self.served = served
        self.scale = served.subresources["scale"]
        self.spec = ResourceSpec(group="autoscaling", version="v1", kind="Scale",
                                 resource=served.spec.resource, singular="",
                                 namespaced=served.spec.namespaced)

    def _path(self, key: str) -> list[str]:
        return (self.scale.get(key) or "").lstrip(".").split(".")

    def to_scale(self, obj: dict) -> dict:
        meta = obj.get("metadata") or {}
        scale_meta = {"name": meta.get("name", "")}
        if meta.get("namespace"):
            scale_meta["namespace"] = meta["namespace"]
        for field in ("uid", "resourceVersion", "creationTimestamp"):
            if field in meta:
                scale_meta[field] = meta[field]
        spec_replicas = _get_path(obj, self._path("specReplicasPath"))
        status_replicas = _get_path(obj, self._path("statusReplicasPath"))
        status = {"replicas": status_replicas if isinstance(status_replicas, int) else 0}
        if self.scale.get("labelSelectorPath"):
            selector = _get_path(obj, self._path("labelSelectorPath"))
            if isinstance(selector, str) and selector:
                status["selector"] = selector
        return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": scale_meta,
                "spec": {"replicas": spec_replicas} if isinstance(spec_replicas, int) else {},
                "status": status}

    def serve(self, ctx):
        from kapiserver.registry import patch

        info = ctx.info
        namespace = info.namespace if self.served.spec.namespaced else ""
        name = info.name
        if info.verb == "get":
            return self._respond(ctx, self.to_scale(self.store.get(namespace, name)))
        if info.verb not in ("update", "patch"):
            raise errors.MethodNotAllowed()
        request = ctx.request
        body = request.get_data()
        dry_run = "All" in request.args.getlist("dryRun")
        media = (request.mimetype or "application/json").lower()
        try:
            document = json.loads(body or b"null")
        except ValueError as err:
            raise errors.BadRequest(f"error decoding patch: {err}") from None
        if info.verb == "patch" and media not in (patch.JSON_PATCH, patch.MERGE_PATCH):
            raise errors.UnsupportedMediaType(
                "the body of the request was in an unknown format - accepted media types "
                f"include: {patch.JSON_PATCH}, {patch.MERGE_PATCH}")

        def mutate(current: dict) -> dict:
            scale = self.to_scale(current)
            if info.verb == "update":
                new_scale = document if isinstance(document, dict) else {}
            elif media == patch.JSON_PATCH:
                new_scale = patch.apply_json_patch(scale, document)
            else:
                new_scale = patch.apply_merge_patch(scale, document)
            wanted = ((new_scale.get("metadata") or {}).get("resourceVersion"))
            if wanted and wanted != current["metadata"].get("resourceVersion"):
                raise errors.Conflict(
                    f"Operation cannot be fulfilled on {self.served.spec.group_resource} "
                    f"{errors.go_quote(name)}: the object has been modified; please apply "
                    "your changes to the latest version and try again",
                    errors.status_details(name, self.served.group, self.served.spec.resource))
            replicas = (new_scale.get("spec") or {}).get("replicas")
            if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
                from kapiserver.apimachinery.field_errors import new_invalid

                raise new_invalid("Scale", "autoscaling", name, [FieldError.invalid(
                    FieldPath("spec", "replicas"), replicas,
                    "must be greater than or equal to 0")])
            _set_path(current, self._path("specReplicasPath"), replicas)
            return current

        try:
            updated = self.store.guaranteed_update(
                namespace, name, mutate, dry_run,
                manage=self.store.field_manager(_manager(ctx), "scale"))
        except patch.PatchError as err:
            raise errors.BadRequest(str(err)) from None
        return self._respond(ctx, self.to_scale(updated))

    def _respond(self, ctx, scale: dict):
        if prefers_yaml(ctx.accept):
            return Response(dumps_yaml(scale), 200, content_type=YAML)
        return Response(dumps_json(scale), 200, content_type=JSON)


def _manager(ctx) -> str:
    from kapiserver.fieldmanager import manager_name

    return manager_name(ctx.request.args.get("fieldManager", ""),
                        ctx.request.headers.get("User-Agent", ""), options_kind="UpdateOptions")


def _get_path(obj, parts):
    for part in parts:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def _set_path(obj, parts, value) -> None:
    for part in parts[:-1]:
        obj = obj.setdefault(part, {})
    obj[parts[-1]] = value
