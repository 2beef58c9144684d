"""RegistryStore: REST verbs over a storage backend with upstream's metadata semantics.

Mirrors ``k8s.io/apiserver/pkg/registry/generic/registry.Store``: create (uid,
creationTimestamp, generateName with retry, generation), get, list (selectors, limit and
continue from one snapshot, remainingItemCount), guaranteed update with preconditions,
delete honouring finalizers and preconditions, and ``dryRun``. Objects are JSON dicts;
storage holds them without ``resourceVersion`` (the revision is the version).
"""

from __future__ import annotations

import base64
import collections
import copy
import functools
import json
import random
import time
import uuid

from .. import errors, heap
from ..serialization import GO_ESCAPES, dumps_json
from ..warning import add_warning
from ..storage import Compacted, Conflict, KeyExists, KeyNotFound
from ..storage.readcache import ABSENT, ReadCache
from ..runtime.protobuf_wire import framed

#: A LIST that read this many bytes of stored objects gives the memory their decoding
#: and encoding used back to the system (``heap.release``).
RELEASE_AFTER_BYTES = 4 * 1024 * 1024
#: A LIST decoding many objects lets the worker's other requests run after each this
#: many (a cold LIST of 10,000 pods takes seconds: watches and health checks wait no
#: longer than a few milliseconds, and the worker's heartbeat is not missed).
YIELD_EVERY = 50
#: upstream's ``names.SimpleNameGenerator`` alphabet and suffix length.
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_NAME_SUFFIX = 5
_GENERATE_NAME_RETRIES = 8
_MAX_GENERATED_NAME = 63


def now_rfc3339() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def encode(obj: dict) -> bytes:
    """The stored form: the object without ``resourceVersion``.

    A value is written *canonical* when the object starts with its kind, apiVersion and
    metadata, and the metadata is in ObjectMeta's order with a uid: then the value ends
    with a newline (JSON whitespace, which decoding ignores), and its JSON list item is
    the value itself with ``resourceVersion`` written after the uid (``json_item``).
    """
    meta = obj.get("metadata") or {}
    rv = meta.pop("resourceVersion", None)
    try:
        data = json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()
        return data + CANONICAL if _canonical(obj) else data
    finally:
        if rv is not None:
            meta["resourceVersion"] = rv


#: The end of a canonical stored value (see ``encode``).
CANONICAL = b"\n"
_PLAIN_META = ("name", "generateName", "namespace", "selfLink")


def _canonical(obj: dict) -> bool:
    keys = iter(obj)
    if (next(keys, None), next(keys, None), next(keys, None)) != ("kind", "apiVersion",
                                                                  "metadata"):
        return False
    meta = obj["metadata"]
    if not isinstance(meta, dict) or "resourceVersion" in meta:
        return False
    # json_item finds the metadata after the apiVersion's closing quote and the uid by its
    # key: kind, apiVersion and uid hold no quote (nor backslash), the names before the
    # uid are strings (where JSON escapes every quote, so no '"uid":"' can hide there).
    for text in (obj["kind"], obj["apiVersion"], meta.get("uid")):
        if not isinstance(text, str) or '"' in text or "\\" in text:
            return False
    if not all(isinstance(meta.get(key, ""), str) for key in _PLAIN_META):
        return False
    ranks = [_META_RANK.get(key, len(_META_RANK)) for key in meta]
    return ranks == sorted(ranks)


def json_item(value: bytes, revision: int) -> bytes | None:
    """The JSON list item (no kind, no apiVersion, ``resourceVersion`` set) of a stored
    value written canonical, byte for byte what decoding and ``ItemCache.encode`` give;
    ``None`` for any other value.

    The metadata's uid is the first ``"uid":"`` of the value: only kind, apiVersion and
    ObjectMeta's plain strings come before it, and in JSON a quote within a string is
    always escaped."""
    parts = _json_item_parts(value, revision)
    return parts and parts[0]


def _json_item_parts(value: bytes, revision: int):
    """``(item, start, end, escaped)`` of ``json_item``: the item is ``{`` +
    ``value[start:end]`` + the resourceVersion + ``value[end:-1]``, unless ``escaped``
    (then translated as ``dumps_json`` escapes); None for a value not canonical."""
    if not value.endswith(CANONICAL):
        return None
    start = value.index(b',"metadata":{') + 1
    uid = value.index(b'"uid":"', start) + 7
    end = value.index(b'"', uid) + 1
    item = b"".join((b"{", value[start:end], b',"resourceVersion":"%d"' % revision,
                     value[end:-1]))
    # One-byte scans (memchr): a three-byte search costs ten times more.
    escaped = (b"<" in item or b">" in item or b"&" in item or (
        b"\xe2" in item and (b"\xe2\x80\xa8" in item or b"\xe2\x80\xa9" in item)))
    if escaped:
        item = item.decode().translate(GO_ESCAPES).encode()  # as dumps_json escapes
    return item, start, end, escaped


class ItemKeyValue:
    """A stored ``KeyValue`` held as its JSON list item (``json_item``), its value rebuilt
    from the item when asked for: what the read cache holds for an object served as JSON,
    so a LIST joins the items held, and each object is kept once, not as value and item.
    Once the object was listed as protobuf, it holds that list item too (``protobuf``:
    the message framed as a list's ``items`` field), so such a LIST is a join as well.
    """

    __slots__ = ("key", "item", "create_revision", "mod_revision", "head", "cut", "skip",
                 "protobuf")

    def __init__(self, kv, item: bytes, head: bytes, cut: int, protobuf: bytes | None = None):
        self.key, self.item = kv.key, item
        self.create_revision, self.mod_revision = kv.create_revision, kv.mod_revision
        #: The value's bytes before its metadata (kind and apiVersion), shared.
        self.head = head
        #: Where the resourceVersion starts in the item, and how long it is.
        self.cut = cut
        self.skip = len(b',"resourceVersion":"%d"' % kv.mod_revision)
        self.protobuf = protobuf

    def with_protobuf(self, framed: bytes) -> "ItemKeyValue":
        """This object held with its framed protobuf list item as well."""
        return ItemKeyValue(self, self.item, self.head, self.cut, framed)

    @property
    def value(self) -> bytes:
        item, cut = self.item, self.cut
        return b"".join((self.head, item[1:cut], item[cut + self.skip:], CANONICAL))


#: ``metav1.ObjectMeta``'s fields in Go's order (the order of its JSON).
OBJECT_META_ORDER = ("name", "generateName", "namespace", "selfLink", "uid",
                     "resourceVersion", "generation", "creationTimestamp",
                     "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
                     "annotations", "ownerReferences", "finalizers", "managedFields")
_META_RANK = {name: rank for rank, name in enumerate(OBJECT_META_ORDER)}


def order_metadata(obj: dict) -> None:
    """Put ``obj``'s metadata fields in Go's order, in place (the dict stays the same)."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return
    if not _in_order(meta):
        ordered = sorted(meta.items(), key=lambda item: _META_RANK.get(item[0],
                                                                       len(_META_RANK)))
        meta.clear()
        meta.update(ordered)


_RESOURCE_VERSION_RANK = _META_RANK["resourceVersion"]


def _in_order(meta: dict) -> bool:
    last = -1
    for key in meta:
        rank = _META_RANK.get(key, len(_META_RANK))
        if rank < last:
            return False
        last = rank
    return True


def set_resource_version(obj: dict, revision: int) -> None:
    """Set ``metadata.resourceVersion`` where Go writes it (after ``uid``)."""
    meta = obj.setdefault("metadata", {})
    value = str(revision)
    if not isinstance(meta, dict) or "resourceVersion" in meta or not _in_order(meta):
        meta["resourceVersion"] = value
        order_metadata(obj)
        return
    # Every read adds it to metadata in Go's order (as stored): put in its place in one
    # pass, the same order as sorting gives.
    items = list(meta.items())
    meta.clear()
    for key, item in items:
        if value is not None and _META_RANK.get(key, len(_META_RANK)) > _RESOURCE_VERSION_RANK:
            meta["resourceVersion"], value = value, None
        meta[key] = item
    if value is not None:
        meta["resourceVersion"] = value


def decode(value: bytes, revision: int) -> dict:
    obj = json.loads(value)
    set_resource_version(obj, revision)
    return obj


def _object_meta(obj: dict) -> dict:
    """``obj``'s metadata, made a map when it is missing or ``null`` (Go decodes JSON
    ``null`` into an empty ObjectMeta)."""
    if not isinstance(obj.get("metadata"), dict):
        obj["metadata"] = {}
    return obj["metadata"]


def encode_continue(revision: int, start_key: str) -> str:
    """Upstream's continue token: base64url JSON ``{"v","rv","start"}`` without padding."""
    token = json.dumps({"v": "meta.k8s.io/v1", "rv": revision, "start": start_key},
                       separators=(",", ":"))
    return base64.urlsafe_b64encode(token.encode()).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, str]:
    try:
        padded = token + "=" * (-len(token) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded))
        if not isinstance(data, dict) or data.get("v") != "meta.k8s.io/v1":
            raise ValueError("unknown version")
        revision, start = int(data["rv"]), str(data["start"])
    except (ValueError, KeyError, TypeError, json.JSONDecodeError):
        raise errors.BadRequest("continue key is not valid: encoded continue token is "
                                "invalid") from None
    if revision <= 0 or start.startswith("/") or ".." in start.split("/"):
        raise errors.BadRequest("continue key is not valid: invalid continue token")
    return revision, start


class ItemCache:
    """Encoded list items by (key, revision), bounded in bytes, least recently used first out.

    A stored revision never changes, so an entry is never stale; LIST then joins bytes
    instead of decoding and re-encoding every object (upstream keeps serialized objects in
    its watch cache for the same reason). ``encoder(obj) -> bytes`` writes one item: JSON
    by default (``encode``), or another serializer's item form.
    """

    def __init__(self, max_bytes: int = 32 * 1024 * 1024, encoder=None):
        self.max_bytes = max_bytes
        self.size = 0
        self.entries: collections.OrderedDict = collections.OrderedDict()
        if encoder is not None:
            self.encode = encoder

    def get(self, kv) -> bytes | None:
        item = self.view(kv)
        return item if item is None or isinstance(item, bytes) else bytes(item)

    def view(self, kv) -> bytes | memoryview | None:
        """``get`` without a copy: the item may be a view into a block of several
        (``add_many``), for joining into a list's body."""
        item = self.entries.get((kv.key, kv.mod_revision))
        if item is not None:
            self.entries.move_to_end((kv.key, kv.mod_revision))
        return item

    def encode(self, obj: dict) -> bytes:
        """An item as a list holds it: without kind and apiVersion, no newline."""
        return dumps_json({k: v for k, v in obj.items() if k not in ("kind", "apiVersion")})[:-1]

    def put(self, kv, obj: dict) -> bytes:
        item = self.encode(obj)
        self.add(kv.key, kv.mod_revision, item)
        return item

    def add_many(self, entries: list) -> None:
        """``add`` each ``(key, revision, item)`` of a large LIST, packed in one block:
        the items are then no longer scattered among the freed memory they were made in,
        which can all go back to the system (``heap.release``)."""
        entries = [entry for entry in entries if entry[:2] not in self.entries]
        block = memoryview(b"".join(item for _, _, item in entries))
        start = 0
        for key, revision, item in entries:
            end = start + len(item)
            self.add(key, revision, block[start:end])
            start = end

    def add(self, key: str, revision: int, item: bytes) -> None:
        """Keep ``item``, already encoded, as the item of ``key`` at ``revision``."""
        key = (key, revision)
        if key not in self.entries:
            self.entries[key] = item
            self.size += len(item)
            while self.size > self.max_bytes and self.entries:
                _, dropped = self.entries.popitem(last=False)
                self.size -= len(dropped)


class Preconditions:
    """Delete and update preconditions (``metav1.Preconditions``): uid and resourceVersion."""

    def __init__(self, uid: str = "", resource_version: str = ""):
        self.uid = uid
        self.resource_version = resource_version

    def check(self, spec, name: str, obj: dict) -> None:
        meta = obj.get("metadata") or {}
        if self.uid and self.uid != meta.get("uid"):
            raise _conflict(spec, name, f"Precondition failed: UID in precondition: "
                                        f"{self.uid}, UID in object meta: {meta.get('uid', '')}")
        if self.resource_version and self.resource_version != meta.get("resourceVersion"):
            raise _conflict(spec, name, "Precondition failed: ResourceVersion in precondition: "
                                        f"{self.resource_version}, ResourceVersion in object "
                                        f"meta: {meta.get('resourceVersion', '')}")

    def check_before_delete(self, spec, name: str, obj: dict) -> None:
        """``rest.BeforeDelete``'s early check, worded as it words it: a conflict on the
        kind (``ConfigMap``, ``Deployment.apps``), not the resource."""
        meta = obj.get("metadata") or {}
        kind = f"{spec.kind}.{spec.group}" if spec.group else spec.kind
        details = errors.status_details(name, spec.group, spec.kind)
        if self.uid and self.uid != meta.get("uid"):
            raise errors.Conflict(
                f"Operation cannot be fulfilled on {kind} {errors.go_quote(name)}: the UID in "
                f"the precondition ({self.uid}) does not match the UID in record "
                f"({meta.get('uid', '')}). The object might have been deleted and then "
                "recreated", details)
        if self.resource_version and self.resource_version != meta.get("resourceVersion"):
            raise errors.Conflict(
                f"Operation cannot be fulfilled on {kind} {errors.go_quote(name)}: the "
                f"ResourceVersion in the precondition ({self.resource_version}) does not match "
                f"the ResourceVersion in record ({meta.get('resourceVersion', '')}). The object "
                "might have been modified", details)


def _conflict(spec, name: str, reason: str) -> errors.Conflict:
    return errors.Conflict(f"Operation cannot be fulfilled on {spec.group_resource} "
                           f"{errors.go_quote(name)}: {reason}",
                           _details(spec, name))


def _storage_error(key: str, message: str) -> str:
    """A ``storage.NewInvalidObjError`` as its ``Error()`` prints it."""
    return (f"StorageError: invalid object, Code: 4, Key: {key}, ResourceVersion: 0, "
            f"AdditionalErrorMsg: {message}")


def _admit_mutating(admit, obj: dict, old: dict | None = None) -> None:
    """The mutating phase of ``admit``; a plain function runs admission whole."""
    mutate = getattr(admit, "mutate", None)
    if mutate is not None:
        mutate(obj, old)
    elif old is None:
        admit(obj)
    else:
        admit(obj, old)


def _admit_validating(admit, obj: dict, old: dict | None = None) -> None:
    """The validating phase of ``admit``, when it has one of its own."""
    validate = getattr(admit, "validate", None) if admit is not None else None
    if validate is not None and getattr(admit, "mutate", None) is not None:
        validate(obj, old)


def _details(spec, name: str) -> dict:
    return errors.status_details(name, spec.group, spec.resource)


OBJECT_MODIFIED = ("the object has been modified; please apply your changes to the latest "
                   "version and try again")


class RegistryStore:
    """The generic registry for one resource: ``spec``, ``strategy`` and a storage ``Store``."""

    def __init__(self, spec, strategy, storage, on_write=None, read_cache=None):
        self.spec = spec
        self.strategy = strategy
        self.storage = storage
        # Called after every write, so this worker's watch cache reads the log at once.
        self.on_write = on_write or (lambda: None)
        #: The worker's ``ReadCache`` (GET and LIST from memory): given, or that of the
        #: watch cache whose ``written`` is ``on_write`` (every caller passes that); None
        #: reads the store every time.
        if read_cache is None:
            read_cache = getattr(getattr(on_write, "__self__", None), "reads", None)
        self.read_cache = read_cache if isinstance(read_cache, ReadCache) else None
        self._index_prefix = spec.key_prefix("")
        #: The heads of the values the read cache holds as items (``ItemKeyValue``), one
        #: bytes object for every object of one kind and version.
        self._heads: dict[bytes, bytes] = {}
        self.item_cache = ItemCache()
        self._protobuf_cache = None
        self._type_meta_json = dumps_json({"kind": spec.kind,
                                           "apiVersion": spec.api_version})[:-2] + b","

    # -- helpers -----------------------------------------------------------------------------

    def field_manager(self, manager: str, subresource: str = "", timed: bool = True):
        """``manage(new, old)`` recording a write by ``manager`` in ``managedFields``
        (``timed=False``: an entry without ``time``, as upstream's scale subresource
        records its managers)."""
        from ..fieldmanager import for_kind, update_managed_fields

        list_types = self.strategy.list_types or for_kind(self.spec.api_version, self.spec.kind)
        status_subresource = self.strategy.status_subresource

        def manage(new: dict, old: dict | None) -> None:
            update_managed_fields(old, new, manager, self.spec.api_version,
                                  now_rfc3339() if timed else None,
                                  subresource=subresource, list_types=list_types,
                                  status_subresource=status_subresource)

        return manage

    def _not_found(self, name: str) -> errors.NotFound:
        return errors.NotFound.for_object(self.spec.group, self.spec.resource, name)

    def _invalid(self, name: str, field_errors) -> errors.Invalid:
        from ..apimachinery.field_errors import invalid_status

        status = invalid_status(self.spec.kind, self.spec.group, name, field_errors)
        return errors.Invalid(status["message"], status.get("details"))

    def _check_valid(self, name: str, field_errors) -> None:
        if field_errors:
            raise self._invalid(name, field_errors)

    def decode(self, value: bytes, revision: int) -> dict:
        """A stored value read at ``revision``, as this resource serves it.

        Every read goes through here, so the strategy's ``from_storage`` sees it.
        """
        return self.strategy.from_storage(decode(value, revision))

    def decode_many(self, kvs) -> list[dict]:
        """``decode`` of several stored key-values, through ``from_storage_many``."""
        return self.strategy.from_storage_many([decode(kv.value, kv.mod_revision)
                                                for kv in kvs])

    def encode(self, obj: dict) -> bytes:
        """The bytes stored for ``obj``: its strategy's ``to_storage`` form, encoded."""
        return encode(self.strategy.to_storage(obj))

    def history_start(self) -> int:
        """The revision this resource's history starts at: a watch from before it is
        refused (410), as upstream's watch cache refuses one from before it began. Every
        built-in resource has existed since the store began."""
        return 0

    # -- create --------------------------------------------------------------------------------

    def create(self, obj: dict, namespace: str = "", dry_run: bool = False,
               admit=None, manage=None) -> dict:
        """Create ``obj``; ``admit(obj)`` runs admission after defaulting, before validation
        (an ``admit`` with ``mutate`` and ``validate`` methods has its mutating phase run
        there and its validating phase after the strategy's validation, as upstream's).

        ``manage(new, old)`` records the write in ``managedFields`` (``field_manager``).
        """
        meta = _object_meta(obj)
        if meta.get("resourceVersion"):
            raise errors.BadRequest("resourceVersion should not be set on objects to be created")
        if self.spec.namespaced:
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        for field in ("uid", "deletionTimestamp", "deletionGracePeriodSeconds"):
            meta.pop(field, None)
        self.strategy.apply_defaults(obj)
        if manage is not None:
            manage(obj, None)
        generate = not meta.get("name") and meta.get("generateName")
        # Each attempt at a generated name starts again from here (upstream retries
        # Store.create with a fresh copy: the strategy prepares the object knowing its name).
        before = copy.deepcopy(obj) if generate else None
        for attempt in range(_GENERATE_NAME_RETRIES if generate else 1):
            if attempt:
                obj.clear()
                obj.update(copy.deepcopy(before))
                meta = obj["metadata"]
            meta["creationTimestamp"] = now_rfc3339()
            meta["uid"] = str(uuid.uuid4())
            if self.strategy.has_generation:
                meta["generation"] = 1
            else:
                meta.pop("generation", None)
            if generate:
                prefix = meta["generateName"][:_MAX_GENERATED_NAME - _NAME_SUFFIX]
                meta["name"] = prefix + "".join(random.choice(_NAME_ALPHABET)
                                                for _ in range(_NAME_SUFFIX))
            self.strategy.prepare_for_create(obj)
            meta = obj["metadata"]
            if admit is not None:
                _admit_mutating(admit, obj)
            self._check_valid(meta.get("name", ""), self.strategy.validate(obj))
            _admit_validating(admit, obj)
            warnings = self.strategy.warnings_on_create(obj)
            order_metadata(obj)
            name = meta["name"]
            key = self.spec.key(namespace, name)
            if dry_run:
                try:
                    self.storage.get(key)
                except KeyNotFound:
                    return obj
                raise self._already_exists(name)
            try:
                revision = self.storage.create(key, self.encode(obj), self.strategy.ttl)
            except KeyExists:
                if generate and attempt + 1 < _GENERATE_NAME_RETRIES:
                    continue
                raise self._already_exists(name) from None
            set_resource_version(obj, revision)
            self.on_write()
            for text in warnings:
                add_warning(text)
            return obj
        raise AssertionError("unreachable")

    def _already_exists(self, name: str) -> errors.AlreadyExists:
        return errors.AlreadyExists(f"{self.spec.group_resource} {errors.go_quote(name)} "
                                    "already exists", _details(self.spec, name))

    # -- read -----------------------------------------------------------------------------

    def _read(self, namespace: str, name: str, consistent: bool = True):
        """The object's stored ``KeyValue`` now (a consistent read), and whether it is
        the read cache's: from the worker's read cache once it has every acknowledged
        write, else from the store. Not ``consistent`` (``resourceVersion=0``): whatever
        the read cache holds, without asking the store how far it is."""
        key = self.spec.key(namespace, name)
        reads = self.read_cache
        if reads is not None:
            kv = reads.get(self._index_prefix, key, consistent)
            if kv is ABSENT:
                raise self._not_found(name)
            if kv is not None:
                return kv, True
        try:
            return self.storage.get(key), False
        except KeyNotFound:
            raise self._not_found(name) from None

    def _held_item(self, kv, held: bool) -> bytes | None:
        """``json_item`` of ``kv``; one the read cache holds (``held``) is kept as its
        item from now on (``ItemKeyValue``)."""
        item = getattr(kv, "item", None)
        if item is not None:
            return item
        parts = _json_item_parts(kv.value, kv.mod_revision)
        if parts is None:
            return None
        if held and not parts[3]:
            self._hold_item(kv, parts)
        return parts[0]

    def _hold_item(self, kv, parts) -> ItemKeyValue:
        """The read cache holds ``kv`` as its JSON item (``_json_item_parts``' ``parts``)
        from now on, if it still holds ``kv``."""
        item, start, end, _ = parts
        head = kv.value[:start]
        head = self._heads.setdefault(head, head)  # one shared copy of each
        return self._hold(kv, ItemKeyValue(kv, item, head, 1 + end - start))

    def _hold(self, kv, replacement):
        """The read cache holds ``replacement`` (the same revision of ``kv``, in another
        form) instead of ``kv`` from now on, if it still holds ``kv``."""
        self.read_cache.replace(self._index_prefix, kv, replacement)
        return replacement

    def _held_protobuf(self, kv, cache: "ItemCache", tag: bytes) -> tuple[bytes | None, int]:
        """The framed protobuf list item of ``kv``, which the read cache holds, kept with
        it from now on (``ItemKeyValue.protobuf``), and the bytes of stored value read to
        make it; ``(None, 0)`` for a value that is not held as an item (escaped)."""
        if not isinstance(kv, ItemKeyValue):
            parts = _json_item_parts(kv.value, kv.mod_revision)
            if parts is None or parts[3]:
                return None, 0
            kv = self._hold_item(kv, parts)
        message = cache.view(kv)
        read = 0
        if message is None:
            value = kv.value
            read = len(value)
            message = cache.encode(self.decode(value, kv.mod_revision))
        item = framed(tag, message)
        self._hold(kv, kv.with_protobuf(item))
        return item, read

    def get(self, namespace: str, name: str, consistent: bool = True) -> dict:
        kv, _ = self._read(namespace, name, consistent)
        return self.decode(kv.value, kv.mod_revision)

    def get_json(self, namespace: str, name: str, consistent: bool = True) -> bytes:
        """``get`` encoded as upstream's JSON: a canonical stored value as it is
        (``json_item``), another from the item cache (no decode, no encode when the
        stored revision was served before)."""
        kv, held = self._read(namespace, name, consistent)
        item = self._held_item(kv, held) if self._stored_items else None
        if item is None:
            item = self.item_cache.get(kv)
            if item is None:
                item = self.item_cache.put(kv, self.decode(kv.value, kv.mod_revision))
        # An item is the object without kind and apiVersion, which come first in an object.
        return self._type_meta_json + item[1:] + b"\n"

    @functools.cached_property
    def _stored_items(self) -> bool:
        """Whether the JSON items of canonical stored values are the values themselves
        (``json_item``): this resource serves what is stored, and its item cache writes
        the items Go writes."""
        from .strategy import Strategy

        return (type(self.item_cache) is ItemCache and type(self).decode is RegistryStore.decode
                and type(self.strategy).from_storage is Strategy.from_storage
                and not self.strategy.remote_decode)

    @functools.cached_property
    def _list_item_tag(self) -> bytes:
        from ..runtime.protobuf import default_codec

        return default_codec().list_item_tag(self.spec.api_version, self.spec.list_kind)

    @property
    def protobuf_cache(self) -> ItemCache:
        """Protobuf item messages by (key, revision), made on first use."""
        if self._protobuf_cache is None:
            from ..runtime.protobuf import default_codec

            codec, spec = default_codec(), self.spec
            self._protobuf_cache = ItemCache(encoder=lambda obj: codec.encode_item(
                spec.api_version, spec.kind, obj))
        return self._protobuf_cache

    def list(self, namespace: str = "", label_selector=None, field_selector=None,
             limit: int = 0, continue_token: str = "", resource_version: str = "",
             encoded: bool | str = False) -> dict:
        """A ``<Kind>List``: items matching the selectors, paginated from one snapshot.

        With ``encoded`` (``True`` or ``"json"``, or ``"protobuf"``), ``items`` holds each
        item's bytes (as list items: without kind and apiVersion; protobuf ones framed as
        the list's ``items`` field), served from the read cache or that serializer's item
        cache where possible, for ``list_json``/``list_protobuf``; the values of cached
        items are not even read from storage.
        """
        listed, read = self._list(namespace, label_selector, field_selector, limit,
                                  continue_token, resource_version, encoded)
        self._release(read)
        return listed

    @staticmethod
    def _release(read: int) -> None:
        """After a list that read ``read`` bytes of stored values: once its garbage is
        gone, a large one gives the memory back (``heap.release``)."""
        if read >= RELEASE_AFTER_BYTES:
            heap.release()

    def _list(self, namespace, label_selector, field_selector, limit, continue_token,
              resource_version, encoded) -> tuple[dict, int]:
        """``list``, and the bytes of stored values it read (``list_json`` and
        ``list_protobuf`` build on this: a subclass overriding ``list`` overrides them)."""
        protobuf = encoded == "protobuf"
        item_cache = self.protobuf_cache if protobuf else self.item_cache
        unfiltered = not label_selector and not field_selector
        # JSON items of canonical values are the values (no cache): those are read.
        stored = encoded and not protobuf and unfiltered and self._stored_items
        have = item_cache.entries if encoded and unfiltered and not stored else None
        # Protobuf items are framed here (``items`` field), or held so in the read cache.
        item_tag = self._list_item_tag if protobuf else None
        held_protobuf = protobuf and unfiltered and self._stored_items
        prefix = self.spec.key_prefix(namespace)
        revision, start = 0, ""
        if continue_token:
            revision, start = decode_continue(continue_token)
            start = prefix + start
        elif resource_version not in ("", "0"):
            try:
                revision = int(resource_version)
            except ValueError:
                raise errors.BadRequest(f"invalid resource version: {resource_version}") from None
        items, more, remaining, last_key = [], False, 0, ""
        batch = max(limit, 100) if limit else 0
        read_bytes = decodes = 0
        # Items encoded here join the cache once the list is made (a large list's packed
        # together: see ItemCache.add_many).
        fresh = []
        read_revision = revision
        # The current state ("": consistent, "0": any) is read from the worker's memory,
        # all of it at once (one snapshot); a continue token or an exact resourceVersion
        # asks for the past: the store (upstream's shouldDelegateList).
        memory = None
        if (not continue_token and resource_version in ("", "0")
                and self.read_cache is not None):
            memory = self.read_cache.list(self._index_prefix, prefix,
                                          limit=limit if unfiltered else 0,
                                          consistent=resource_version != "0")
        from_memory = memory is not None
        try:
            while True:
                if memory is not None:
                    page, memory = memory, None
                else:
                    # resourceVersion=0: any version will do, so the store may answer
                    # without a quorum (etcd: a serializable read).
                    page = self.storage.list(prefix, revision=read_revision, limit=batch,
                                             start_key=start, have=have,
                                             stale=resource_version == "0" and not
                                             continue_token)
                read_revision = page.revision
                decoded = self._decode_page(page.items)
                for index, kv in enumerate(page.items):
                    last_key = kv.key
                    cached = None
                    if held_protobuf and from_memory:
                        cached = getattr(kv, "protobuf", None)
                        if cached is None:
                            cached, read = self._held_protobuf(kv, item_cache, item_tag)
                            read_bytes += read
                    elif stored and from_memory:
                        # Read again and again from memory: the read cache holds the
                        # item instead of the value, so such a LIST is a join of bytes.
                        cached = getattr(kv, "item", None)
                        if cached is None:
                            cached = self._held_item(kv, True)
                            if cached is not None:  # made here, its value let go
                                read_bytes += len(cached)
                            else:
                                cached = item_cache.view(kv)
                    elif stored:
                        cached = json_item(kv.value, kv.mod_revision) or item_cache.view(kv)
                    elif have is not None:
                        cached = item_cache.view(kv)
                        if cached is not None and item_tag:
                            cached = framed(item_tag, cached)
                    if not from_memory and kv.value is not None:
                        read_bytes += len(kv.value)
                    if cached is not None:
                        items.append(cached)
                    else:
                        if from_memory:  # what decoding it leaves behind
                            read_bytes += len(kv.value)
                        if kv.value is None:  # cached when listed, dropped since
                            kv = self.storage.get(kv.key, kv.mod_revision)
                        obj = decoded.pop(kv.key, None) or self.decode(kv.value,
                                                                       kv.mod_revision)
                        decodes += 1
                        if not decodes % YIELD_EVERY:
                            time.sleep(0)  # under gevent, the worker's other requests run
                        if not self.matches(obj, label_selector, field_selector):
                            continue
                        if encoded:
                            item = item_cache.view(kv)
                            if item is None:
                                item = item_cache.encode(obj)
                                fresh.append((kv.key, kv.mod_revision, item))
                            obj = framed(item_tag, item) if item_tag else item
                        items.append(obj)
                    if limit and len(items) == limit:
                        rest = page.items[index + 1:]
                        more = bool(rest) or page.more
                        remaining = len(rest) + page.remaining
                        break
                else:
                    if page.more and page.items:
                        start = page.items[-1].key + "\x00"
                        continue
                break
        except Compacted:
            raise errors.Gone("The provided continue parameter is too old to display a "
                              "consistent list result. You can start a new list without the "
                              "continue parameter, or use the continue token in this response "
                              "to retrieve the remainder of the results. Continuing with the "
                              "provided token results in an inconsistent list - objects that "
                              "were created, modified, or deleted between the time the first "
                              "chunk was returned and now may show up in the list."
                              if continue_token else
                              "The resourceVersion for the provided list is too old.") from None
        if read_bytes >= RELEASE_AFTER_BYTES:
            item_cache.add_many(fresh)
        else:
            for key, revision, item in fresh:
                item_cache.add(key, revision, item)
        del fresh
        metadata = {"resourceVersion": str(read_revision)}
        if more:
            metadata["continue"] = encode_continue(read_revision,
                                                   last_key[len(prefix):] + "\x00")
            if not (label_selector and not label_selector.empty) and not field_selector:
                metadata["remainingItemCount"] = remaining
        if not encoded:
            for obj in items:
                obj.pop("kind", None)
                obj.pop("apiVersion", None)
        return {"kind": self.spec.list_kind, "apiVersion": self.spec.api_version,
                "metadata": metadata, "items": items}, read_bytes

    def _decode_page(self, kvs) -> dict:
        """The page's objects decoded together, by key, for a ``remote_decode`` kind (its
        conversion is one round trip per call); empty otherwise, as the list decodes each
        object only when it needs it. Values left unread (cached items) are skipped."""
        if not self.strategy.remote_decode:
            return {}
        kvs = [kv for kv in kvs if kv.value is not None]
        return dict(zip((kv.key for kv in kvs), self.decode_many(kvs))) if kvs else {}

    def list_protobuf(self, *args, **kwargs) -> bytes:
        """``list(...)`` encoded as upstream's protobuf, item messages joined from the
        protobuf item cache."""
        from ..runtime.protobuf import default_codec

        listed, read = self._list(*self._list_args(*args, **kwargs), "protobuf")
        body = default_codec().encode_list(listed["apiVersion"], listed["kind"],
                                           listed["metadata"], listed["items"],
                                           framed_items=True)
        del listed
        self._release(read)
        return body

    def get_protobuf(self, namespace: str, name: str, consistent: bool = True) -> bytes:
        """``get`` encoded as upstream's protobuf, its message from the protobuf item cache
        (no decode, no encode when the stored revision was served before)."""
        from ..runtime.protobuf import default_codec

        kv, _ = self._read(namespace, name, consistent)
        cache = self.protobuf_cache
        item = cache.get(kv)
        if item is None:
            item = cache.put(kv, self.decode(kv.value, kv.mod_revision))
        return default_codec().envelope(self.spec.api_version, self.spec.kind, item)

    def list_json(self, *args, **kwargs) -> bytes:
        """``list(...)`` encoded as upstream's JSON, items joined from the item cache."""
        listed, read = self._list(*self._list_args(*args, **kwargs), "json")
        head = dumps_json({"kind": listed["kind"], "apiVersion": listed["apiVersion"],
                           "metadata": listed["metadata"]})[:-2] + b',"items":['
        items = listed["items"]
        if not items:
            return head + b"]}\n"
        # One join, one copy of a body that may be tens of megabytes: head, item, comma,
        # item, ..., tail.
        parts = [b","] * (2 * len(items) + 1)
        parts[0], parts[1::2], parts[-1] = head, items, b"]}\n"
        body = b"".join(parts)
        del listed, items, parts
        self._release(read)
        return body

    @staticmethod
    def _list_args(namespace: str = "", label_selector=None, field_selector=None,
                   limit: int = 0, continue_token: str = "", resource_version: str = ""):
        return (namespace, label_selector, field_selector, limit, continue_token,
                resource_version)

    def matches(self, obj, label_selector, field_selector) -> bool:
        """True when ``obj`` passes both selectors (either may be None)."""
        if label_selector is not None and not label_selector.matches(
                (obj.get("metadata") or {}).get("labels") or {}):
            return False
        if field_selector is not None and not field_selector.matches(
                self.strategy.selectable_fields(obj)):
            return False
        return True

    # -- update ---------------------------------------------------------------------------

    def update(self, namespace: str, name: str, obj: dict, dry_run: bool = False,
               admit=None, force_allow_create: bool = False, manage=None) -> tuple[dict, bool]:
        """Replace the object (``PUT``); ``metadata.resourceVersion`` makes it conditional.

        Returns ``(object, created)``.
        """
        meta = _object_meta(obj)
        if meta.get("name") != name:
            from ..apimachinery.field_errors import FieldError, FieldPath

            raise self._invalid(name, [FieldError.invalid(
                FieldPath("metadata", "name"), meta.get("name", ""),
                "must match the name in the URL") if meta.get("name") else
                FieldError.required(FieldPath("metadata", "name"), "name is required")])
        if self.spec.namespaced:
            if meta.get("namespace", namespace) != namespace:
                raise errors.BadRequest("the namespace of the provided object does not match "
                                        "the namespace sent on the request")
            meta["namespace"] = namespace
        key = self.spec.key(namespace, name)
        expected = meta.get("resourceVersion", "")
        try:
            current = self.storage.get(key)
        except KeyNotFound:
            if meta.get("uid"):
                # The object's uid is a precondition (DefaultUpdatedObjectInfo), checked
                # against the missing object's empty one before anything else.
                raise _conflict(self.spec, name, _storage_error(
                    key, f"Precondition failed: UID in precondition: {meta['uid']}, UID in "
                         "object meta: ")) from None
            if not (force_allow_create or self.strategy.allow_create_on_update):
                raise self._not_found(name) from None
            meta.pop("resourceVersion", None)
            return self.create(obj, namespace, dry_run, admit, manage), True
        if not expected:
            if not self.strategy.allow_unconditional_update:
                from ..apimachinery.field_errors import FieldError, FieldPath

                raise self._invalid(name, [FieldError.invalid(
                    FieldPath("metadata", "resourceVersion"), 0,
                    "must be specified for an update")])
            # An unconditional update applies to whatever is stored now (upstream's
            # Store.Update copies the current resourceVersion in before validation).
            meta["resourceVersion"] = str(current.mod_revision)
        elif expected != str(current.mod_revision):
            raise _conflict(self.spec, name, OBJECT_MODIFIED)
        old = self.decode(current.value, current.mod_revision)
        if meta.get("uid") and meta["uid"] != old["metadata"].get("uid"):
            raise _conflict(self.spec, name, _storage_error(
                key, f"Precondition failed: UID in precondition: {meta['uid']}, UID in object "
                     f"meta: {old['metadata'].get('uid', '')}"))
        # As upstream decodes a PUT body: defaulted before anything else looks at it.
        self.strategy.apply_defaults(obj)
        if manage is not None:
            manage(obj, old)
        new = self._prepare_update(obj, old)
        if admit is not None:
            _admit_mutating(admit, new, old)
        self._check_valid(name, self.strategy.validate_update(new, old))
        _admit_validating(admit, new, old)
        for text in self.strategy.warnings_on_update(new, old):
            add_warning(text)
        return self._write(key, name, new, old, current.mod_revision, dry_run), False

    def _prepare_update(self, new: dict, old: dict) -> dict:
        new_meta, old_meta = new.setdefault("metadata", {}), old["metadata"]
        for field in ("uid", "creationTimestamp", "deletionTimestamp",
                      "deletionGracePeriodSeconds"):
            if field in old_meta:
                new_meta[field] = old_meta[field]
            else:
                new_meta.pop(field, None)
        if "generateName" in old_meta and "generateName" not in new_meta:
            new_meta["generateName"] = old_meta["generateName"]
        self.strategy.prepare_for_update(new, old)
        if self.strategy.has_generation:
            generation = old_meta.get("generation", 1)
            new_meta["generation"] = generation + 1 if self.strategy.spec_changed(new, old) \
                else generation
        else:
            new_meta.pop("generation", None)
        if old_meta.get("deletionTimestamp"):
            added = [f for f in new_meta.get("finalizers") or []
                     if f not in (old_meta.get("finalizers") or [])]
            if added:
                from ..apimachinery.field_errors import FieldError, FieldPath, go_string_slice

                raise self._invalid(new_meta.get("name", ""), [FieldError.forbidden(
                    FieldPath("metadata", "finalizers"),
                    "no new finalizers can be added if the object is being deleted, found "
                    f"new finalizers {go_string_slice(added)}")])
        return new

    def _write(self, key: str, name: str, new: dict, old: dict, revision: int,
               dry_run: bool) -> dict:
        meta = new["metadata"]
        if meta.get("deletionTimestamp") and not self.strategy.deletion_pending(new):
            # The last finalizer is gone from an object being deleted: delete it now.
            if dry_run:
                return new
            try:
                deleted_at, _ = self.storage.delete(key, revision)
            except Conflict:
                raise _conflict(self.spec, name, OBJECT_MODIFIED) from None
            except KeyNotFound:
                raise self._not_found(name) from None
            meta["resourceVersion"] = str(deleted_at)
            self.on_write()
            return new
        if dry_run:
            return new
        if new == old:
            return new  # no-op updates write nothing, as upstream
        try:
            written = self.storage.update(key, self.encode(new), revision,
                                          self.strategy.ttl)
        except Conflict:
            raise _conflict(self.spec, name, OBJECT_MODIFIED) from None
        except KeyNotFound:
            raise self._not_found(name) from None
        set_resource_version(new, written)
        self.on_write()
        return new

    def guaranteed_update(self, namespace: str, name: str, mutate, dry_run: bool = False,
                          preconditions: Preconditions | None = None, attempts: int = 16,
                          manage=None, validate=None) -> dict:
        """Apply ``mutate(obj) -> obj`` to the latest object, retrying on conflicts;
        ``validate(new, old)`` (validating admission) runs after the strategy's
        validation."""
        key = self.spec.key(namespace, name)
        for _ in range(attempts):
            try:
                current = self.storage.get(key)
            except KeyNotFound:
                raise self._not_found(name) from None
            old = self.decode(current.value, current.mod_revision)
            if preconditions:
                preconditions.check(self.spec, name, old)
            new = mutate(copy.deepcopy(old))
            self.strategy.apply_defaults(new)
            if manage is not None:
                manage(new, old)
            new = self._prepare_update(new, old)
            self._check_valid(name, self.strategy.validate_update(new, old))
            if validate is not None:
                validate(new, old)
            warnings = self.strategy.warnings_on_update(new, old)
            try:
                written = self._write(key, name, new, old, current.mod_revision, dry_run)
            except errors.Conflict:
                continue
            for text in warnings:
                add_warning(text)
            return written
        raise _conflict(self.spec, name, OBJECT_MODIFIED)

    # -- delete -----------------------------------------------------------------------------

    def delete(self, namespace: str, name: str, preconditions: Preconditions | None = None,
               dry_run: bool = False, admit=None,
               options: dict | None = None) -> tuple[dict, bool]:
        """Delete, or mark for deletion when finalizers remain. Returns ``(object, deleted)``.

        ``admit(obj)`` sees the object about to be deleted, as read for this attempt
        (upstream's ``deleteValidation``), and may refuse by raising. ``options`` is the
        request's ``DeleteOptions`` (``None`` from inside the server): its propagation
        puts the garbage collector's finalizers on or takes them off
        (``Strategy.gc_finalizers``), also on an object already being deleted.
        """
        key = self.spec.key(namespace, name)
        for _ in range(16):
            try:
                current = self.storage.get(key)
            except KeyNotFound:
                raise self._not_found(name) from None
            obj = self.decode(current.value, current.mod_revision)
            if preconditions:
                preconditions.check_before_delete(self.spec, name, obj)
            if admit is not None:
                admit(obj)
            meta = obj["metadata"]
            finalizers = self.strategy.gc_finalizers(obj, options)
            if finalizers is not None:
                meta["finalizers"] = finalizers
                if not finalizers:
                    del meta["finalizers"]
                order_metadata(obj)
            if self.strategy.deletion_pending(obj):
                if meta.get("deletionTimestamp") and finalizers is None:
                    return obj, False
                if not meta.get("deletionTimestamp"):
                    meta["deletionTimestamp"] = now_rfc3339()
                    meta["deletionGracePeriodSeconds"] = 0
                    self.strategy.prepare_for_delete(obj)
                    if self.strategy.has_generation:
                        meta["generation"] = meta.get("generation", 1) + 1
                    order_metadata(obj)
                if not dry_run:
                    try:
                        written = self.storage.update(key, self.encode(obj),
                                                      current.mod_revision, self.strategy.ttl)
                    except Conflict:
                        continue
                    meta["resourceVersion"] = str(written)
                    self.on_write()
                return obj, False
            if dry_run:
                return obj, True
            try:
                self.storage.delete(key, current.mod_revision)
            except Conflict:
                continue
            except KeyNotFound:
                raise self._not_found(name) from None
            self.on_write()
            return obj, True
        raise _conflict(self.spec, name, OBJECT_MODIFIED)
