"""The etcd v3 storage backend: ``Store`` on etcd's gRPC API, as kube-apiserver's etcd3 store.

Mapping
-------
* ``resourceVersion`` is etcd's revision; a key's ``mod_revision`` is its object's.
* Keys: kapiserver's keys start with ``/registry`` (``registry.keys``); ``--etcd-prefix``
  replaces that root in etcd, so the default layout is kube-apiserver's own.
* ``create`` is a transaction "create_revision == 0 → put"; ``update`` and ``delete``
  compare ``mod_revision`` (upstream's ``GuaranteedUpdate`` and preconditioned delete),
  the failure branch reading the current value for the ``Conflict``.
* ``list`` is one range read at a revision with a limit; etcd's ``count`` of the range
  gives ``remaining`` (count minus the page), as upstream's ``remainingItemCount``.
* TTLs are etcd leases, shared between writes as upstream's lease manager does: a lease
  granted for ``ttl`` plus a reuse window (5 % of the TTL, at most
  ``--lease-reuse-duration-seconds``, 60 s) carries every
  write in that window, so an event burst costs one grant, not one per event.
* Compaction follows upstream's ``compact.go``: ``compact_rev_key`` (at etcd's root, the
  key kube-apiserver uses) is advanced by a transaction on its version, and only the
  instance whose transaction succeeds compacts: one compaction per interval across all
  instances (and kube-apiservers) sharing the etcd.
* Values kube-apiserver wrote as protobuf (``k8s\\x00`` envelope) are read back as the
  JSON kapiserver writes, so an etcd that kube-apiserver filled can be served; kapiserver
  writes JSON, which kube-apiserver's storage decoder reads.

The watch feed and consistent reads
-----------------------------------
Each worker's watch cache follows one etcd watch (``event_stream``) from its revision,
with ``prev_kv`` and progress notifications (bookmarks), restarted from the last
revision it delivered when the stream breaks; a compacted start revision is
``Compacted`` (the 410 of today). The watch covers the whole keyspace, not only the
prefix, and the feed drops foreign keys after reading their revision: every revision
etcd hands out carries at least one event, so the cache's revision reaches any revision
the store reports exactly when every event up to it has arrived, in order. That is what
a consistent read from the cache needs: kube-apiserver 1.32 asks etcd for a progress
notification (``RequestWatchProgress``) instead, which etcd 3.4.23 does not answer
reliably. So a consistent read here is: a quorum read of the current revision
(``current_revision``), then waiting until the cache has seen it (``wait_for``). Where
it matters: a watch without a resourceVersion (its initial list is read at that
revision), the informers of admission and RBAC, the CRD and APIService followers of
each worker, and GET and LIST, served from each worker's memory (``storage.readcache``:
concurrent readers share the quorum read). Writes under other prefixes of a shared etcd
cost bandwidth only.

Concurrency and failures
------------------------
One gRPC channel per endpoint, shared by every greenlet of the worker (gevent workers
call ``grpc.experimental.gevent.init_gevent()`` first). Every call has a deadline; an
unavailable endpoint makes the next call use another of ``--etcd-servers``. Reads are
retried once there; writes are not (a retried write could apply twice).
"""

from __future__ import annotations

import functools
import json
import logging
import math
import queue
import threading
import time
from urllib.parse import urlsplit

from .interface import (ADDED, DELETED, MODIFIED, Compacted, Conflict, Event, KeyExists,
                        KeyNotFound, KeyValue, ListResult, Store, StorageError)

log = logging.getLogger(__name__)

#: The key kube-apiserver's compactors coordinate on (``compact.go``), at etcd's root.
COMPACT_REV_KEY = b"compact_rev_key"
#: kapiserver's own root for keys; ``prefix`` replaces it in etcd.
ROOT = "/registry"
MAGIC = b"k8s\x00"
#: upstream's lease manager: reuse a lease for 5 % of its TTL, at most 60 s.
LEASE_REUSE_FRACTION = 0.05
LEASE_REUSE_MAX = 60.0
#: Seconds a failed endpoint is left alone before it is tried again.
ENDPOINT_RETRY = 2.0
#: Seconds between retries of a read a member refused for now (an election), doubling.
RETRY_BACKOFF = 0.025
MAX_RETRY_BACKOFF = 0.5


class EtcdUnavailable(StorageError):
    """etcd did not answer (no quorum, no endpoint reachable, deadline exceeded)."""


@functools.lru_cache(maxsize=1)
def _grpc_for_this_process():
    """Import grpc, driven by gevent's hub when the process is gevent-patched (a gunicorn
    gevent worker): grpc's own threads would otherwise block the hub. Once per process."""
    import grpc

    try:
        from gevent import monkey

        if monkey.is_module_patched("socket"):
            import grpc.experimental.gevent as grpc_gevent

            grpc_gevent.init_gevent()
    except ImportError:  # pragma: no cover - gevent is a dependency
        pass
    return grpc


def _import_client():
    try:
        import pyetcd
        from pyetcd import etcdrpc
    except ImportError as err:  # the etcd extra is not installed
        raise StorageError("--storage-backend etcd3 needs the etcd client: "
                           "pip install 'kapiserver[etcd]'") from err
    return pyetcd, etcdrpc


def _prefix_end(prefix: bytes) -> bytes:
    """etcd's range end of a prefix (the prefix with its last byte plus one)."""
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        return b"\x00"
    return stripped[:-1] + bytes([stripped[-1] + 1])


def parse_server(url: str) -> tuple[str, int, bool]:
    """``(host, port, tls)`` of one ``--etcd-servers`` URL (``https://host:2379``)."""
    parts = urlsplit(url if "://" in url else f"http://{url}")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r} is not an http(s)://host:port URL")
    return parts.hostname, parts.port or 2379, parts.scheme == "https"


class EtcdStore(Store):
    """A ``Store`` on an etcd v3 cluster (see the module docstring)."""

    def __init__(self, servers: list[str], prefix: str = ROOT, ca_file: str = "",
                 cert_file: str = "", key_file: str = "", timeout: float = 10.0,
                 lease_reuse: float = LEASE_REUSE_MAX, codec=None):
        grpc = _grpc_for_this_process()
        pyetcd, self._rpc = _import_client()
        self._grpc = grpc
        self.servers = list(servers)
        self.prefix = prefix.rstrip("/") if prefix != "/" else ""
        self.timeout = timeout
        self.lease_reuse = lease_reuse
        credentials = None
        parsed = [parse_server(url) for url in self.servers]
        if any(tls for _, _, tls in parsed) or ca_file:
            read = lambda path: open(path, "rb").read() if path else None  # noqa: E731
            credentials = grpc.ssl_channel_credentials(read(ca_file), read(key_file),
                                                       read(cert_file))
        options = [("grpc.max_receive_message_length", 256 * 1024 * 1024),
                   ("grpc.keepalive_time_ms", 30_000), ("grpc.keepalive_timeout_ms", 10_000)]
        endpoints = [pyetcd.Endpoint(host, port, secure=credentials is not None,
                                     creds=credentials, time_retry=ENDPOINT_RETRY,
                                     opts=options)
                     for host, port, _ in parsed]
        self._client = pyetcd.MultiEndpointEtcd3Client(endpoints=endpoints, timeout=timeout,
                                                        failover=len(endpoints) > 1)
        self._codec = codec
        self._lock = threading.Lock()
        self._lease = None  # (id, expires at: monotonic seconds)
        self._compact_version = 0
        self._compacted = 0
        self._closed = False

    # -- keys and values -----------------------------------------------------------------------

    def _key(self, key: str) -> bytes:
        if key.startswith(ROOT):
            key = key[len(ROOT):]
        return (self.prefix + key).encode()

    def _unkey(self, key: bytes) -> str | None:
        """kapiserver's key of an etcd key, or None for a key outside the prefix."""
        text = key.decode("utf-8", "surrogateescape")
        if self.prefix and not text.startswith(self.prefix + "/"):
            return None
        return ROOT + text[len(self.prefix):]

    def _value(self, raw: bytes) -> bytes:
        """JSON bytes of a stored value; protobuf ones (kube-apiserver's) converted."""
        if raw[:4] != MAGIC:
            return raw
        if self._codec is None:
            from ..runtime.protobuf import default_codec

            self._codec = default_codec()
        return json.dumps(self._codec.decode(raw), separators=(",", ":"),
                          ensure_ascii=False).encode()

    def _kv(self, kv) -> KeyValue:
        return KeyValue(self._unkey(kv.key), self._value(kv.value), kv.create_revision,
                        kv.mod_revision)

    # -- calls ---------------------------------------------------------------------------------

    def _call(self, method: str, request, retry: bool = False, timeout: float | None = None):
        """``KV``/``Lease``/``Maintenance`` ``method`` with a deadline, errors mapped.

        ``retry`` (reads, which are safe to repeat): an unreachable member is failed over
        once, and a member's transient refusal (``etcdserver: leader changed``, ``no
        leader`` during an election) is retried with backoff until the deadline, as
        clientv3's retry interceptor retries immutable calls on ``Unavailable``."""
        if self._closed:
            raise StorageError("the etcd store is closed")
        service = {"Range": "kvstub", "Txn": "kvstub", "Put": "kvstub",
                   "DeleteRange": "kvstub", "Compact": "kvstub", "LeaseGrant": "leasestub",
                   "Status": "maintenancestub"}[method]
        timeout = timeout or self.timeout
        deadline = time.monotonic() + timeout
        failovers = 1 if retry and len(self.servers) > 1 else 0
        backoff = RETRY_BACKOFF
        while True:
            endpoint = None
            try:
                stub = getattr(self._client, service)
                endpoint = self._client.endpoint_in_use
                return getattr(stub, method)(request, max(deadline - time.monotonic(), 0.001))
            except self._grpc.RpcError as err:
                code = err.code()
                if code in (self._grpc.StatusCode.UNAVAILABLE,
                            self._grpc.StatusCode.DEADLINE_EXCEEDED):
                    unreachable = self._unreachable(err)
                    if unreachable:
                        self._endpoint_failed(endpoint)
                        if failovers:
                            failovers -= 1
                            continue
                    elif retry and code == self._grpc.StatusCode.UNAVAILABLE and \
                            time.monotonic() + backoff < deadline:
                        time.sleep(backoff)
                        backoff = min(backoff * 2, MAX_RETRY_BACKOFF)
                        continue
                    raise EtcdUnavailable(f"etcd {method}: {err.details() or code.name}") from None
                raise self._error(method, err) from None
            except Exception as err:  # pyetcd: no endpoint left to fail over to
                if type(err).__name__ == "NoServerAvailableError":
                    raise EtcdUnavailable(f"etcd {method}: no endpoint available") from None
                raise

    def _unreachable(self, err) -> bool:
        """Whether the member could not be reached (try another), rather than answered
        that the cluster cannot serve (``etcdserver: request timed out`` without a
        quorum, ``no leader``): a member that answers stays in use, so reads that need no
        quorum (serializable) still reach it."""
        if err.code() != self._grpc.StatusCode.UNAVAILABLE:
            return False
        return not (err.details() or "").startswith("etcdserver:")

    def _endpoint_failed(self, endpoint) -> None:
        """``endpoint`` (the one a call used) could not be reached: the next calls use
        another (pyetcd's failover), and the stubs of its channel are dropped."""
        if len(self.servers) > 1 and endpoint is not None:
            endpoint.fail()
            if self._client.endpoint_in_use is endpoint:
                self._client._clear_old_stubs()

    def _error(self, method: str, err) -> StorageError:
        details = err.details() or ""
        if "compacted" in details:
            return _CompactedSignal(details)
        if "future revision" in details:
            return _FutureSignal(details)
        return StorageError(f"etcd {method}: {details or err.code().name}")

    def _range(self, key: bytes, range_end: bytes = b"", revision: int = 0, limit: int = 0,
               count_only: bool = False, serializable: bool = False):
        request = self._rpc.RangeRequest(key=key, range_end=range_end, revision=revision,
                                         limit=limit, count_only=count_only,
                                         serializable=serializable)
        try:
            return self._call("Range", request, retry=True)
        except _FutureSignal:
            # A revision beyond the current one reads as the current one (the SQLite
            # store's rule): nothing newer exists yet.
            request.revision = 0
            return self._call("Range", request, retry=True)
        except _CompactedSignal:
            raise Compacted(revision, self.compacted_revision()) from None

    # -- reads ---------------------------------------------------------------------------------

    def get(self, key: str, revision: int = 0) -> KeyValue:
        answer = self._range(self._key(key), revision=max(revision, 0))
        if not answer.kvs:
            raise KeyNotFound(key)
        return self._kv(answer.kvs[0])

    def list(self, prefix: str, revision: int = 0, limit: int = 0,
             start_key: str = "", have=None, stale: bool = False) -> ListResult:
        """One range read; ``have`` is ignored (etcd sends every value of the page);
        ``stale`` reads are serializable (the member's own state, no quorum needed)."""
        lo = self._key(max(prefix, start_key))
        hi = _prefix_end(self._key(prefix))
        answer = self._range(lo, hi, revision=max(revision, 0), limit=max(limit, 0),
                             serializable=stale)
        items = [self._kv(kv) for kv in answer.kvs]
        read = revision if 0 < revision < answer.header.revision else answer.header.revision
        remaining = max(answer.count - len(items), 0) if limit > 0 else 0
        return ListResult(items=items, revision=read, more=answer.more and remaining > 0,
                          remaining=remaining)

    def current_revision(self) -> int:
        """A quorum read's revision: every write acknowledged before it is at or below."""
        return self._range(COMPACT_REV_KEY, count_only=True).header.revision

    def compacted_revision(self) -> int:
        """The last compaction recorded in ``compact_rev_key`` (by kapiserver or
        kube-apiserver), or one a watch reported, whichever is newer."""
        answer = self._range(COMPACT_REV_KEY)
        recorded = 0
        if answer.kvs:
            try:
                recorded = int(answer.kvs[0].value)
            except ValueError:
                recorded = 0
        with self._lock:
            self._compacted = max(self._compacted, recorded)
            return self._compacted

    def health(self, timeout: float = 2.0) -> str | None:
        """None when a quorum read answers within ``timeout``; else why not (``/readyz``)."""
        request = self._rpc.RangeRequest(key=COMPACT_REV_KEY, count_only=True)
        try:
            self._call("Range", request, timeout=timeout)
        except StorageError as err:
            return str(err)
        return None

    # -- writes --------------------------------------------------------------------------------

    def _compare(self, key: bytes, target: str, result: str, value: int):
        rpc = self._rpc
        compare = rpc.Compare(key=key, result=getattr(rpc.Compare, result),
                              target=getattr(rpc.Compare, target))
        if target == "MOD":
            compare.mod_revision = value
        elif target == "CREATE":
            compare.create_revision = value
        else:
            compare.version = value
        return compare

    def _put(self, key: bytes, value: bytes, ttl: float):
        request = self._rpc.PutRequest(key=key, value=value)
        if ttl and ttl > 0:
            request.lease = self._lease_for(ttl)
        return self._rpc.RequestOp(request_put=request)

    def _get_op(self, key: bytes):
        return self._rpc.RequestOp(request_range=self._rpc.RangeRequest(key=key))

    def _txn(self, compare, success, failure):
        request = self._rpc.TxnRequest(compare=compare, success=success, failure=failure)
        return self._call("Txn", request)

    def create(self, key: str, value: bytes, ttl: float = 0) -> int:
        ekey = self._key(key)
        answer = self._txn([self._compare(ekey, "CREATE", "EQUAL", 0)],
                           [self._put(ekey, value, ttl)], [])
        if not answer.succeeded:
            raise KeyExists(key)
        return answer.header.revision

    def update(self, key: str, value: bytes, expected_mod_revision: int,
               ttl: float = 0) -> int:
        ekey = self._key(key)
        compare = (self._compare(ekey, "MOD", "EQUAL", expected_mod_revision)
                   if expected_mod_revision else self._compare(ekey, "CREATE", "GREATER", 0))
        answer = self._txn([compare], [self._put(ekey, value, ttl)], [self._get_op(ekey)])
        if not answer.succeeded:
            self._raise_failed(key, expected_mod_revision, answer)
        return answer.header.revision

    def delete(self, key: str, expected_mod_revision: int = 0) -> tuple[int, KeyValue]:
        ekey = self._key(key)
        rpc = self._rpc
        compare = (self._compare(ekey, "MOD", "EQUAL", expected_mod_revision)
                   if expected_mod_revision else self._compare(ekey, "CREATE", "GREATER", 0))
        remove = rpc.RequestOp(request_delete_range=rpc.DeleteRangeRequest(key=ekey,
                                                                           prev_kv=True))
        answer = self._txn([compare], [remove], [self._get_op(ekey)])
        if not answer.succeeded:
            self._raise_failed(key, expected_mod_revision, answer)
        deleted = answer.responses[0].response_delete_range
        if not deleted.prev_kvs:  # deleted between compare and delete cannot happen in a txn
            raise KeyNotFound(key)
        return answer.header.revision, self._kv(deleted.prev_kvs[0])

    def _raise_failed(self, key: str, expected: int, answer) -> None:
        kvs = answer.responses[0].response_range.kvs if answer.responses else []
        if not kvs:
            raise KeyNotFound(key)
        current = self._kv(kvs[0])
        raise Conflict(f"{key}: expected mod_revision {expected}, found "
                       f"{current.mod_revision}", current)

    def _lease_for(self, ttl: float) -> int:
        """A lease that lives at least ``ttl`` seconds (upstream's lease reuse)."""
        reuse = min(ttl * LEASE_REUSE_FRACTION, self.lease_reuse)
        now = time.monotonic()
        with self._lock:
            lease = self._lease
            if lease is not None and lease[2] == math.ceil(ttl + reuse) and \
                    now + ttl <= lease[1]:
                return lease[0]
        granted_ttl = math.ceil(ttl + reuse)
        answer = self._call("LeaseGrant", self._rpc.LeaseGrantRequest(TTL=granted_ttl))
        with self._lock:
            self._lease = (answer.ID, now + answer.TTL, granted_ttl)
        return answer.ID

    def expire(self) -> int:
        """Nothing to do: etcd deletes the keys of an expired lease itself."""
        return 0

    # -- compaction ----------------------------------------------------------------------------

    def compact(self, revision: int) -> None:
        """Compact to ``revision`` if this instance wins ``compact_rev_key``'s transaction.

        The key's version is the compaction's logical time (upstream's ``compact``): the
        put succeeds only for the instance that saw the latest version, so one compaction
        happens per round however many instances run a compactor; the others learn the
        version and try at their next tick.
        """
        answer = self._txn([self._compare(COMPACT_REV_KEY, "VERSION", "EQUAL",
                                          self._compact_version)],
                           [self._rpc.RequestOp(request_put=self._rpc.PutRequest(
                               key=COMPACT_REV_KEY, value=str(revision).encode()))],
                           [self._get_op(COMPACT_REV_KEY)])
        if not answer.succeeded:
            kvs = answer.responses[0].response_range.kvs
            self._compact_version = kvs[0].version if kvs else 0
            return
        self._compact_version += 1
        if revision <= 0:
            return  # upstream's first round only takes part (no compaction on bootstrap)
        try:
            self._call("Compact", self._rpc.CompactionRequest(revision=revision))
        except _CompactedSignal:
            pass  # compacted further already (by another compactor)
        except _FutureSignal:
            return
        with self._lock:
            self._compacted = max(self._compacted, revision)

    # -- the event log -------------------------------------------------------------------------

    def _event(self, pb) -> Event | None:
        key = self._unkey(pb.kv.key)
        if key is None:
            return None
        prev = self._value(pb.prev_kv.value) if pb.HasField("prev_kv") else None
        revision = pb.kv.mod_revision
        if pb.type == pb.DELETE:
            return Event(DELETED, key, None, prev, revision, pb.prev_kv.create_revision)
        value = self._value(pb.kv.value)
        if pb.kv.create_revision == revision:
            return Event(ADDED, key, value, None, revision, revision)
        return Event(MODIFIED, key, value, prev, revision, pb.kv.create_revision)

    def event_stream(self, after_revision: int) -> "EventStream":
        """The watch feed from ``after_revision`` (see the module docstring)."""
        return EventStream(self, after_revision)

    def events(self, after_revision: int, limit: int = 1000) -> list[Event]:
        """The writes after ``after_revision`` up to the current revision, at most ``limit``
        (a watch replaying history; the watch cache reads older events this way)."""
        target = self.current_revision()
        if target <= after_revision:
            return []
        found: list[Event] = []
        stream = EventStream(self, after_revision, progress=False)
        deadline = time.monotonic() + self.timeout
        try:
            for batch, revision in stream:
                for event in batch:
                    if event.revision > target:
                        return found
                    # Never split a revision's events (a lease's expiry deletes its keys
                    # at one revision): the caller continues after the last revision.
                    if limit > 0 and len(found) >= limit and \
                            event.revision != found[-1].revision:
                        return found
                    found.append(event)
                if revision >= target or time.monotonic() > deadline:
                    return found
        finally:
            stream.close()
        return found

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._client.close()


class _CompactedSignal(StorageError):
    """etcd said the revision read is compacted (turned into ``Compacted``)."""


class _FutureSignal(StorageError):
    """etcd said the revision read is newer than its current one."""


class EventStream:
    """One etcd watch from ``after_revision``: iterate ``(events, revision)`` batches.

    ``revision`` is how far the stream has reached (the last event's revision, or a
    progress notification's); events of keys outside the store's prefix are dropped
    after their revision is counted. Raises ``Compacted`` when the start is compacted,
    ``StorageError`` when the stream breaks (start another from the last revision).
    """

    def __init__(self, store: EtcdStore, after_revision: int, progress: bool = True):
        self.store = store
        self.after_revision = after_revision
        rpc = store._rpc
        self._requests: queue.Queue = queue.Queue()
        create = rpc.WatchCreateRequest(key=b"\x00", range_end=b"\x00",
                                        start_revision=after_revision + 1, prev_kv=True,
                                        progress_notify=progress)
        self._requests.put(rpc.WatchRequest(create_request=create))
        try:
            stub = rpc.WatchStub(store._client.channel)
            self._endpoint = store._client.endpoint_in_use
        except Exception as err:
            raise EtcdUnavailable(f"etcd Watch: {err}") from None
        self._call = stub.Watch(self._request_iterator())
        self._closed = False

    def _request_iterator(self):
        while True:
            request = self._requests.get()
            if request is None:
                return
            yield request

    def __iter__(self):
        store = self.store
        revision = self.after_revision
        try:
            for response in self._call:
                if response.compact_revision:
                    with store._lock:
                        store._compacted = max(store._compacted, response.compact_revision)
                    raise Compacted(self.after_revision + 1, response.compact_revision)
                if response.canceled:
                    raise StorageError(f"etcd watch canceled: {response.cancel_reason}")
                if response.created and not response.events:
                    continue
                if not response.events:  # a progress notification (a bookmark)
                    if response.header.revision > revision:
                        revision = response.header.revision
                        yield [], revision
                    continue
                events = []
                for pb in response.events:
                    event = store._event(pb)
                    if event is not None:
                        events.append(event)
                revision = max(revision, response.events[-1].kv.mod_revision)
                yield events, revision
        except store._grpc.RpcError as err:
            if self._closed:
                return
            code = err.code()
            if store._unreachable(err):
                store._endpoint_failed(self._endpoint)
            raise EtcdUnavailable(f"etcd watch ended: {err.details() or code.name}") from None

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._requests.put(None)
            self._call.cancel()
