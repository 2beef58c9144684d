"""The aggregated resources the garbage collector follows: listed and watched through the
aggregator's proxy, metadata only, as upstream's metadata informers do.

For each resource an aggregated group lists in discovery with ``list``, ``watch`` and
``delete`` (in the group's preferred version that has it), a ``RemoteMonitor`` thread lists
it (``as=PartialObjectMetadataList``), then watches from the list's resourceVersion
(``as=PartialObjectMetadata``, bookmarks), handing every change to the collector's queue;
a watch that ends is resumed from its last resourceVersion, one refused as too old (410)
lists again, and a failure is retried with a growing delay. ``RemoteResource`` reads,
deletes and patches single objects through the same proxy. Requests carry the identity of
upstream's collector, the ``generic-garbage-collector`` service account, whose bootstrap
ClusterRole lets it do all of that.
"""

from __future__ import annotations

import json
import logging
import threading
import urllib.parse
from dataclasses import dataclass, field

from kapiserver import errors
from kapiserver.authentication import UserInfo
from kapiserver.controllers.remote import RemoteError

from .graph import Observed
from .resources import DELETABLE, IGNORED, Resource, Unchanged

log = logging.getLogger(__name__)

GARBAGE_COLLECTOR = UserInfo(
    "system:serviceaccount:kube-system:generic-garbage-collector",
    groups=("system:serviceaccounts", "system:serviceaccounts:kube-system",
            "system:authenticated"))
METADATA_LIST = ("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
                 "application/json")
METADATA = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
LIST_PAGE = 500
#: A watch asks the backend to end it after this long (then it is resumed), so that one
#: silently lost connection costs at most this.
WATCH_SECONDS = 300
MAX_DELAY = 30.0
UPDATE_ATTEMPTS = 8


@dataclass(frozen=True)
class RemoteChange:
    """A change a monitor saw: ``type`` is ADDED, MODIFIED, DELETED, or ``LISTED`` with
    ``objects`` (every object's metadata, replacing what was known)."""

    resource: "RemoteResource"
    type: str
    meta: dict | None = None
    objects: tuple = ()


def _status_error(status: int, data: bytes) -> Exception:
    try:
        body = json.loads(data)
    except ValueError:
        body = None
    message = body.get("message") if isinstance(body, dict) else None
    message = message or f"the server responded with the status code {status}"
    if status == 404:
        return errors.NotFound(message)
    if status == 409:
        return errors.Conflict(message)
    return RemoteError(message)


@dataclass(eq=False)
class RemoteResource(Resource):
    """A resource an extension server serves (see the module docstring)."""

    api: object = None
    #: Uids of the objects of this resource in the graph.
    uids: set = field(default_factory=set)

    def _path(self, namespace: str = "", name: str = "") -> str:
        base = f"/apis/{self.group}/{self.version}"
        if namespace:
            base += f"/namespaces/{urllib.parse.quote(namespace)}"
        base += f"/{self.resource}"
        return f"{base}/{urllib.parse.quote(name)}" if name else base

    def _request(self, method: str, path: str, body=None, accept: str = "application/json",
                 content_type: str = "application/json"):
        headers = [("Accept", accept)]
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers.append(("Content-Type", content_type))
        return self.api.request(self.group, self.version, method, path, GARBAGE_COLLECTOR,
                                data, headers)

    def get(self, namespace, name):
        status, data = self._request("GET", self._path(namespace, name), accept=METADATA)
        if status == 404:
            return None
        if status != 200:
            raise _status_error(status, data)
        return json.loads(data).get("metadata") or {}

    def delete(self, namespace, name, uid, resource_version, policy):
        preconditions = {"uid": uid}
        if resource_version:
            preconditions["resourceVersion"] = resource_version
        status, data = self._request("DELETE", self._path(namespace, name), {
            "kind": "DeleteOptions", "apiVersion": "v1", "preconditions": preconditions,
            "propagationPolicy": policy})
        if status >= 300:
            raise _status_error(status, data)

    def update_meta(self, namespace, name, uid, mutate):
        # upstream's JSON merge patches: the lists as they must be, at the resourceVersion
        # read (a conflict reads again).
        for _ in range(UPDATE_ATTEMPTS):
            meta = self.get(namespace, name)
            if meta is None or meta.get("uid") != uid:
                raise errors.NotFound.for_object(self.group, self.resource, name)
            try:
                mutate(meta)
            except Unchanged:
                return
            patch = {"metadata": {"uid": uid, "resourceVersion": meta.get("resourceVersion"),
                                  "ownerReferences": meta.get("ownerReferences"),
                                  "finalizers": meta.get("finalizers")}}
            status, data = self._request("PATCH", self._path(namespace, name), patch,
                                         content_type="application/merge-patch+json")
            if status == 409:
                continue
            if status >= 300:
                raise _status_error(status, data)
            return
        raise errors.Conflict(f"updating {self.resource} {name}: too many conflicts")


class RemoteMonitor:
    """Lists and watches one remote resource in a thread (see the module docstring)."""

    def __init__(self, resource: RemoteResource, deliver, active):
        self.resource = resource
        self.deliver = deliver
        self.active = active  # () -> bool: keep following
        self.stopped = threading.Event()
        self._stream = None
        self.thread = threading.Thread(target=self._run, daemon=True,
                                       name=f"gc-monitor/{resource.resource}.{resource.group}")

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopped.set()
        stream = self._stream
        if stream is not None:
            stream.close()

    def _running(self) -> bool:
        return not self.stopped.is_set() and self.active()

    def _run(self) -> None:
        delay, revision = 0.0, None
        while self._running():
            try:
                if revision is None:
                    revision = self._list()
                revision = self._watch(revision)
                delay = 0.0
            except Exception as err:
                delay = min(MAX_DELAY, delay * 2 or 0.1)
                log.info("garbage collector: following %s.%s failed (again in %.1fs): %s",
                         self.resource.resource, self.resource.group, delay, err)
                revision = None
                self.stopped.wait(delay)

    def _list(self) -> str:
        resource, objects, token = self.resource, [], ""
        while True:
            query = {"limit": LIST_PAGE}
            if token:
                query["continue"] = token
            status, data = resource._request(
                "GET", f"{resource._path()}?{urllib.parse.urlencode(query)}",
                accept=METADATA_LIST)
            if status != 200:
                raise _status_error(status, data)
            listed = json.loads(data)
            objects += [item.get("metadata") or {} for item in listed.get("items") or ()]
            token = (listed.get("metadata") or {}).get("continue") or ""
            if not token:
                break
        self.deliver(RemoteChange(resource, "LISTED", objects=tuple(objects)))
        return (listed.get("metadata") or {}).get("resourceVersion") or "0"

    def _watch(self, revision: str) -> str | None:
        """Follow changes from ``revision``; the revision to resume from, or None to
        list again."""
        resource = self.resource
        query = urllib.parse.urlencode({"watch": "true", "resourceVersion": revision,
                                        "allowWatchBookmarks": "true",
                                        "timeoutSeconds": WATCH_SECONDS})
        stream = resource.api.stream(resource.group, resource.version,
                                     f"{resource._path()}?{query}", GARBAGE_COLLECTOR,
                                     [("Accept", METADATA)])
        self._stream = stream
        try:
            if stream.status != 200:
                raise _status_error(stream.status, stream.read())
            for line in stream.lines():
                if not self._running():
                    return revision
                if not line.strip():
                    continue
                event = json.loads(line)
                kind, obj = event.get("type"), event.get("object") or {}
                if kind == "ERROR":
                    if obj.get("code") == 410:
                        return None  # too old: list again
                    raise RemoteError(obj.get("message") or "the watch failed")
                meta = obj.get("metadata") or {}
                revision = meta.get("resourceVersion") or revision
                if kind in ("ADDED", "MODIFIED", "DELETED"):
                    self.deliver(RemoteChange(resource, kind, meta))
            return revision
        finally:
            self._stream = None
            stream.close()


class RemoteMonitors:
    """The remote resources followed, from discovery (see the module docstring)."""

    def __init__(self, apis, deliver, active):
        self.apis = apis  # the server's RemoteAPI providers
        self.deliver = deliver
        self.active = active
        self.monitors: dict[tuple, RemoteMonitor] = {}

    def _provider(self, group: str, version: str):
        for api in self.apis:
            if api.serves(group, version):
                return api
        return None

    def sync(self, discovery) -> dict:
        """Follow the deletable resources of the aggregated groups discovery lists now;
        returns ``(group, resource) -> RemoteResource``."""
        wanted = {}
        for group in discovery.all_groups:
            if not getattr(group, "remote", False):
                continue
            for version, entries in group.versions.items():
                api = self._provider(group.name, version) if entries else None
                if api is None:
                    continue
                for entry in entries:
                    name = entry.get("resource") or ""
                    kind = (entry.get("responseKind") or {}).get("kind") or ""
                    verbs = entry.get("verbs") or ()
                    if (not name or not kind or (group.name, name) in wanted
                            or (group.name, name) in IGNORED
                            or not all(verb in verbs for verb in DELETABLE)):
                        continue
                    wanted[(group.name, name)] = RemoteResource(
                        group.name, version, name, kind, entry.get("scope") == "Namespaced",
                        api=api)
        for key in list(self.monitors):
            known = self.monitors[key].resource
            new = wanted.get(key)
            if new is None or (new.version, new.kind) != (known.version, known.kind):
                self.monitors.pop(key).stop()
        for key, resource in wanted.items():
            if key in self.monitors:
                wanted[key] = self.monitors[key].resource
                continue
            monitor = self.monitors[key] = RemoteMonitor(resource, self.deliver, self.active)
            monitor.start()
        return wanted

    def stop(self) -> None:
        for monitor in self.monitors.values():
            monitor.stop()
        self.monitors.clear()

    def following(self, resource) -> bool:
        monitor = self.monitors.get((resource.group, resource.resource))
        return monitor is not None and monitor.resource is resource

    @staticmethod
    def apply(change: RemoteChange, graph) -> None:
        """Apply a monitor's change to the graph (in the collector's thread)."""
        resource = change.resource
        if change.type == "LISTED":
            seen = set()
            for meta in change.objects:
                observed = Observed.from_meta(resource.api_version, resource.kind, meta)
                seen.add(observed.identity.uid)
                graph.observe(observed)
            for uid in resource.uids - seen:
                node = graph.nodes.get(uid)
                if node is not None:
                    graph.observe_deleted_identity(node.identity)
            resource.uids = seen
            return
        observed = Observed.from_meta(resource.api_version, resource.kind, change.meta)
        if change.type == "DELETED":
            resource.uids.discard(observed.identity.uid)
            graph.observe_deleted_identity(observed.identity)
        else:
            resource.uids.add(observed.identity.uid)
            graph.observe(observed)
