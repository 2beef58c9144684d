"""WatchStream: one watch request, served from the worker's watch cache (``handlers/watch.go``).

A chunked stream of ``{"type","object"}`` events — JSON lines, or protobuf
``WatchEvent`` frames (a 4-byte length, then the message) when the client negotiated
protobuf — whose objects are the resource's, Tables, or PartialObjectMetadata as asked:
ADDED/MODIFIED/DELETED, BOOKMARK when asked for, and a single ERROR event (with a
``Status``) when the watch cannot start or must end. ``resourceVersion`` unset or ``0`` starts with the current state as ADDED
events; ``sendInitialEvents=true`` ends that state with the ``k8s.io/initial-events-end``
bookmark. Selectors apply to both sides of a change: an object leaving the selection
arrives as DELETED, one entering it as ADDED.
"""

from __future__ import annotations

import logging
import random
import time

from .. import errors
from ..serialization import dumps_json
from ..storage import ADDED, DELETED
from ..storage.watchcache import TooOldResourceVersion
from .watchsink import SocketSink, chunk, socket_of

log = logging.getLogger(__name__)

#: Upstream picks a timeout in [min-request-timeout, 2*min-request-timeout) (1800 s).
MIN_REQUEST_TIMEOUT = 1800
#: How often an idle watch that allows bookmarks receives one.
BOOKMARK_INTERVAL = 5.0
#: How long a watch from a future resourceVersion waits for the cache (upstream: 3 s).
FUTURE_RV_WAIT = 3.0
INITIAL_EVENTS_END = "k8s.io/initial-events-end"


class WatchStream:
    """The lines of one watch response (see the module docstring)."""

    def __init__(self, handler, ctx, namespace, label_selector, field_selector):
        self.handler = handler
        self.spec = handler.spec
        self.store = handler.store
        self.cache = handler.server.watch_cache
        self.stopping = handler.server.stopping
        self.namespace = namespace
        self.name = ctx.info.name
        self.label_selector = label_selector
        self.field_selector = field_selector
        args = ctx.request.args
        self.media = handler.output(ctx, stream=True)
        self.table = self.media.convert == "Table"
        self.partial = self.media.convert == "PartialObjectMetadata"
        self.view_api_version = f"{self.media.group}/{self.media.version}"
        #: What the shared per-event encodings of this watch are keyed by.
        self.view = (self.media.media, self.media.convert, self.media.version)
        self.include = args.get("includeObject", "Metadata")
        self.bookmarks = args.get("allowWatchBookmarks") in ("true", "1")
        self.send_initial = args.get("sendInitialEvents") in ("true", "1")
        self.resource_version = args.get("resourceVersion", "")
        timeout = args.get("timeoutSeconds")
        try:
            self.timeout = (float(timeout) if timeout else
                            MIN_REQUEST_TIMEOUT * (1 + random.random()))
        except ValueError:
            raise errors.BadRequest(f"invalid timeoutSeconds: {timeout}") from None
        if self.send_initial and args.get("resourceVersionMatch") != "NotOlderThan":
            raise errors.Invalid(
                "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: "
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                {"kind": "ListOptions", "group": "meta.k8s.io",
                 "causes": [{"reason": "FieldValueForbidden",
                             "message": "Forbidden: sendInitialEvents requires setting "
                                        "resourceVersionMatch to NotOlderThan",
                             "field": "resourceVersionMatch"}]})
        self.first_table = True
        #: The connection's socket when the feed may write to it (plain JSON watches
        #: whose objects decode locally), else None.
        self.sock = None if self.table or handler.store.strategy.remote_decode \
            else socket_of(ctx.request.environ)
        self.last_sent = 0.0
        #: What this watch sent, for apiserver_watch_events_total (upstream labels it with
        #: the kind of the resource watched).
        self.tally = handler.server.metrics.watch_tally(self.spec.group, self.spec.version,
                                                        self.spec.kind)
        self.start_revision = 0
        if self.resource_version not in ("", "0"):
            try:
                self.start_revision = int(self.resource_version)
            except ValueError:
                raise errors.BadRequest(f"invalid resource version: "
                                        f"{self.resource_version}") from None

    # -- events --------------------------------------------------------------------------------

    def _matches(self, obj: dict) -> bool:
        if self.name and (obj.get("metadata") or {}).get("name") != self.name:
            return False
        return self.store.matches(obj, self.label_selector, self.field_selector)

    def _line(self, kind: str, obj: dict) -> bytes:
        if self.table and kind != "ERROR" and kind != "BOOKMARK":
            table = self.handler.table(obj, self.include)
            table["apiVersion"] = self.view_api_version
            if not self.first_table:
                table["columnDefinitions"] = None
            self.first_table = False
            obj = table
        elif self.partial and kind != "ERROR":
            obj = {"kind": "PartialObjectMetadata", "apiVersion": self.view_api_version,
                   "metadata": obj.get("metadata") or {}}
        else:
            obj.setdefault("kind", self.spec.kind)
            obj.setdefault("apiVersion", self.spec.api_version)
        return self._encode(kind, obj)

    def _encode(self, kind: str, obj: dict) -> bytes:
        """One event as the negotiated serializer frames it."""
        if self.media.protobuf:
            from ..runtime.protobuf import default_codec

            return default_codec().encode_watch_event(kind, obj)
        return dumps_json({"type": kind, "object": obj})

    def _shared_line(self, event, kind: str, obj: dict) -> bytes:
        """The event's line, encoded once for every plain JSON watcher seeing it as ``kind``."""
        if self.table:
            return self._line(kind, dict(obj))
        shared = self.cache.shared(event)
        view = (self.spec.api_version, self.spec.kind)
        key = ("line", *view, *self.view, kind, obj is shared[("objects", *view)][0])
        line = shared.get(key)
        if line is None:
            line = shared[key] = self._line(kind, dict(obj))
        return line

    def _shared_chunk(self, event, kind: str, obj: dict) -> bytes:
        """The event's line framed as a chunk, once for every direct-mode watcher."""
        shared = self.cache.shared(event)
        key = ("chunk", self.spec.api_version, self.spec.kind, *self.view, kind,
               obj is shared[("objects", self.spec.api_version, self.spec.kind)][0])
        data = shared.get(key)
        if data is None:
            data = shared[key] = chunk(self._shared_line(event, kind, obj))
        return data

    def _bookmark(self, revision: int, initial_end: bool = False) -> bytes:
        metadata = {"resourceVersion": str(revision), "creationTimestamp": None}
        if initial_end:
            metadata["annotations"] = {INITIAL_EVENTS_END: "true"}
        if self.partial:
            kind, api_version = "PartialObjectMetadata", self.view_api_version
        else:
            kind, api_version = self.spec.kind, self.spec.api_version
        return self._encode("BOOKMARK", {"kind": kind, "apiVersion": api_version,
                                         "metadata": metadata})

    def _error(self, error: errors.StatusError) -> bytes:
        return self._encode("ERROR", error.to_status())

    def _transform(self, event):
        """The (type, object) a watcher sees for a store event, or None when filtered out.

        The decoded objects are shared by every watcher of the event: read them only.
        """
        shared = self.cache.shared(event)
        # Keyed by the view: one stored object may be served as several kinds (events).
        key = ("objects", self.spec.api_version, self.spec.kind)
        if key not in shared:
            decode = self.store.decode
            shared[key] = (
                decode(event.value, event.revision) if event.value is not None else None,
                decode(event.prev_value, event.revision) if event.prev_value is not None
                else None)
        new, old = shared[key]
        new_match = new is not None and self._matches(new)
        old_match = old is not None and self._matches(old)
        if event.type == DELETED:
            return ("DELETED", old) if old_match else None
        if event.type == ADDED or old is None:
            return ("ADDED", new) if new_match else None
        if new_match and old_match:
            return "MODIFIED", new
        if new_match:
            return "ADDED", new
        if old_match:
            return "DELETED", new
        return None

    # -- the stream ----------------------------------------------------------------------------

    def _start(self):
        """Return (watcher, initial objects, start revision), or raise a StatusError."""
        prefix = self.spec.key_prefix(self.namespace)
        if self.resource_version in ("", "0") or self.send_initial:
            # The initial state is the most recent one (a consistent read): wait until the
            # cache has seen the store's latest write, which may come from another worker.
            start = self.store.storage.current_revision()
            if not self.cache.wait_for(start, FUTURE_RV_WAIT):
                raise errors.Timeout("Timeout: the watch cache did not catch up with "
                                     f"revision {start}")
            watcher = self.cache.watch(prefix, start)
            page = self.store.storage.list(prefix, revision=start)
            initial = [obj for obj in self.store.decode_many(page.items)
                       if self._matches(obj)]
            return watcher, initial, start
        start = self.start_revision
        floor = self.store.history_start()
        if start < floor:
            raise errors.Gone(f"too old resource version: {start} ({floor})")
        if start > self.cache.revision and not self.cache.wait_for(start, FUTURE_RV_WAIT):
            raise errors.Timeout(
                f"Timeout: Too large resource version: {start}, current: {self.cache.revision}",
                {"causes": [{"reason": "ResourceVersionTooLarge",
                             "message": "Too large resource version"}],
                 "retryAfterSeconds": 1})
        try:
            return self.cache.watch(prefix, start), [], start
        except TooOldResourceVersion as err:
            raise errors.Gone(str(err)) from None

    def lines(self):
        deadline = time.monotonic() + self.timeout
        # An empty first chunk makes the server send the headers now, as upstream flushes
        # them: clients wait for headers before they treat the watch as established.
        yield b""
        try:
            watcher, initial, start = self._start()
        except errors.StatusError as err:
            yield self._error(err)
            return
        tally = self.tally
        try:
            for obj in initial:
                line = self._line("ADDED", obj)
                tally.add(len(line))
                yield line
            if self.send_initial:
                line = self._bookmark(start, initial_end=True)
                tally.add(len(line))
                yield line
            self.last_sent = time.monotonic()
            while not self.stopping.is_set():
                tally.flush()
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return
                if self.sock is not None and not watcher.pending:
                    # Caught up: from here on the feed writes to the socket itself.
                    self._direct(watcher, deadline)
                    return
                events = watcher.get(min(remaining, BOOKMARK_INTERVAL, 1.0))
                for event in events:
                    try:
                        change = self._transform(event)
                    except errors.StatusError as err:
                        # An event this view cannot decode (a CRD's conversion webhook
                        # failed): upstream logs it and ends the watch cleanly; the client
                        # watches again from its last resourceVersion.
                        log.warning("watch of %s ended: %s", self.spec.resource, err)
                        return
                    if change is not None:
                        line = self._shared_line(event, *change)
                        tally.add(len(line))
                        yield line
                        self.last_sent = time.monotonic()
                if watcher.closed:
                    return
                if self.bookmarks and time.monotonic() - self.last_sent >= BOOKMARK_INTERVAL:
                    line = self._bookmark(self.cache.revision)
                    tally.add(len(line))
                    yield line
                    self.last_sent = time.monotonic()
        finally:
            tally.flush()
            watcher.close()

    def _direct(self, watcher, deadline: float) -> None:
        """Serve the rest of the watch in direct mode (``watchsink``): this greenlet only
        writes what the connection pushed back and the bookmarks, and waits for the end.

        Everything before went out through the server's own writes, everything from here
        goes to the socket; the server's final chunk follows once the backlog is written.
        """
        sink = SocketSink(self.sock, watcher.ready, watcher.max_pending)
        tally = self.tally

        def deliver(event):
            change = self._transform(event)
            if change is not None:
                data = self._shared_chunk(event, *change)
                tally.add(len(data))
                sink.offer(data)
                self.last_sent = time.monotonic()

        watcher.deliver = deliver
        try:
            while not self.stopping.is_set() and not watcher.closed:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                watcher.ready.wait(min(remaining, BOOKMARK_INTERVAL, 1.0))
                watcher.ready.clear()
                tally.flush()
                if not sink.flush():
                    return
                if self.bookmarks and time.monotonic() - self.last_sent >= BOOKMARK_INTERVAL:
                    data = chunk(self._bookmark(self.cache.revision))
                    tally.add(len(data))
                    sink.offer(data)
                    self.last_sent = time.monotonic()
            watcher.deliver = None
            sink.flush()
        finally:
            watcher.deliver = None
