"""The policies and bindings of one server (one gunicorn worker), kept current from its
watch cache (upstream's ``generic.policySource``).

Each worker lists both resources once, on the first request admission sees, then has its
watch cache hand it every later write under their key prefixes (``Watcher.deliver``, as
the webhook configurations' source). The feed only records objects and marks the hooks
stale; the next request rebuilds them: each policy that has a binding, with its bindings,
compiled once per resourceVersion (a policy compiles in milliseconds, never on the watch
cache's feed). Before answering, a request checks that the watch cache has read the
store's latest write (waiting briefly if not), so a policy or binding written just before,
by any worker, takes effect for the very next request.

Hooks are ordered by policy name and bindings by name (upstream's order is a Go map's).
"""

from __future__ import annotations

import logging
import threading

from kapiserver import errors
from kapiserver.admission.informers import catch_up
from kapiserver.registry.feed import ResourceFeed

from . import params
from .matching import Criteria
from .validator import CompiledPolicy

log = logging.getLogger(__name__)

GROUP = "admissionregistration.k8s.io"
POLICIES, BINDINGS = "validatingadmissionpolicies", "validatingadmissionpolicybindings"


class Binding:
    """One binding, parsed once per resourceVersion."""

    __slots__ = ("name", "resource_version", "policy_name", "criteria", "param_ref",
                 "actions")

    def __init__(self, obj: dict):
        meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        self.name = meta.get("name", "")
        self.resource_version = meta.get("resourceVersion", "")
        self.policy_name = spec.get("policyName") or ""
        match = spec.get("matchResources")
        self.criteria = Criteria(match) if isinstance(match, dict) else None
        self.param_ref = spec.get("paramRef") if isinstance(spec.get("paramRef"),
                                                             dict) else None
        self.actions = [a for a in spec.get("validationActions") or () if isinstance(a, str)]


class Hook:
    """A policy with its bindings (``PolicyHook``); ``error`` is its configuration error
    (a paramKind nothing serves)."""

    __slots__ = ("policy", "bindings", "param_kind", "error")

    def __init__(self, policy: CompiledPolicy, bindings: list, param_kind, error: str):
        self.policy, self.bindings = policy, bindings
        self.param_kind, self.error = param_kind, error


class ParamFeed:
    """The objects of one paramKind's resource, as stored values decoded only when a
    binding reads them (a ConfigMap paramKind must not cost every ConfigMap write a
    decoding in every worker); kept current by the watch cache like the policies, and
    synchronised by the same revision check (upstream reads params from an informer)."""

    def __init__(self, server, registry):
        self.server = server
        self.registry = registry
        #: key -> (stored value, revision); key -> (revision, decoded object)
        self._values: dict[str, tuple] = {}
        self._decoded: dict[str, tuple] = {}
        self.watcher = None
        self._lock = threading.Lock()

    def live(self) -> bool:
        return self.watcher is not None and not self.watcher.closed

    def load(self) -> None:
        registry = self.registry
        self.watcher = self.server.watch_cache.list_and_follow(
            registry.spec.key_prefix(),
            lambda kvs: {kv.key: (kv.value, kv.mod_revision) for kv in kvs},
            self._install, self._apply, storage=registry.storage)

    def _install(self, values: dict) -> None:
        self._values = values
        self._decoded = {}

    def _apply(self, event) -> None:
        if event.value is None:
            self._values.pop(event.key, None)
        else:
            self._values[event.key] = (event.value, event.revision)

    def _object(self, key: str):
        stored = self._values.get(key)
        if stored is None:
            return None
        value, revision = stored
        decoded = self._decoded.get(key)
        if decoded is None or decoded[0] != revision:
            try:
                decoded = self._decoded[key] = (revision, self.registry.decode(value, revision))
            except Exception:
                log.exception("admission policies: cannot decode param %s", key)
                return None
        return decoded[1]

    def get(self, namespace: str, name: str):
        """The object (``namespace`` "" for cluster-scoped kinds), or None; callers must
        not change it."""
        return self._object(self.registry.spec.key(namespace, name))

    def list(self, namespace: str) -> list[dict]:
        """The objects of ``namespace`` ("": of a cluster-scoped kind), ordered by name."""
        prefix = self.registry.spec.key_prefix(namespace)
        keys = sorted(k for k in list(self._values) if k.startswith(prefix)
                      and "/" not in k[len(prefix):])
        return [obj for obj in map(self._object, keys) if obj is not None]


class PolicySource:
    """The hooks of one server."""

    def __init__(self, server):
        self.server = server
        self._feeds = {resource: ResourceFeed(
            server, "admission policies", replaced=lambda objects: self.changed(),
            updated=lambda name, obj: self.changed()) for resource in (POLICIES, BINDINGS)}
        self._lock = threading.Lock()
        self._generation = 0
        self._built = -1
        self._hooks: list[Hook] = []
        #: policy name -> CompiledPolicy; binding name -> Binding (by resourceVersion)
        self._policies: dict[str, CompiledPolicy] = {}
        self._bindings: dict[str, Binding] = {}
        self._runtime = None
        self._params: dict[tuple, ParamFeed] = {}

    def params(self, param_kind) -> ParamFeed | None:
        """The feed of a paramKind's objects (loaded on first use), or None when its
        resource is no longer served."""
        registry = self.server.registries.get((param_kind.group, param_kind.resource))
        if registry is None:
            return None
        key = (param_kind.group, param_kind.resource)
        feed = self._params.get(key)
        if feed is None or feed.registry is not registry or not feed.live():
            with self._lock:
                feed = self._params.get(key)
                if feed is None or feed.registry is not registry or not feed.live():
                    feed = ParamFeed(self.server, registry)
                    feed.load()
                    self._params[key] = feed
        return feed

    def changed(self) -> None:
        self._generation += 1

    @property
    def runtime(self):
        """The CEL runtime environment, built on first use (it takes a fraction of a
        second)."""
        if self._runtime is None:
            from .cel import Runtime

            self._runtime = Runtime(self.server.authorizer)
        return self._runtime

    def hooks(self) -> list[Hook]:
        """The hooks, current as of the store's latest write."""
        registries = self.server.registries
        policies = registries.get((GROUP, POLICIES))
        bindings = registries.get((GROUP, BINDINGS))
        if policies is None or bindings is None:
            return []
        for feed, registry in ((self._feeds[POLICIES], policies),
                               (self._feeds[BINDINGS], bindings)):
            if not feed.live():
                with self._lock:
                    if not feed.live():
                        if feed.watcher is not None:
                            log.info("admission policies: %s watch ended (%s); listing "
                                     "again", registry.spec.resource,
                                     feed.watcher.close_reason)
                        feed.load(registry)
        catch_up(self.server, policies.storage, "admission policies")
        if self._built != self._generation:
            with self._lock:
                if self._built != self._generation:
                    generation = self._generation
                    self._hooks = self._build()
                    self._built = generation
        return self._hooks

    def _build(self) -> list[Hook]:
        policy_objects = dict(self._feeds[POLICIES].objects)
        binding_objects = dict(self._feeds[BINDINGS].objects)
        bindings: dict[str, Binding] = {}
        by_policy: dict[str, list[Binding]] = {}
        for name in sorted(binding_objects):
            obj = binding_objects[name]
            known = self._bindings.get(name)
            version = (obj.get("metadata") or {}).get("resourceVersion", "")
            if known is None or known.resource_version != version:
                known = Binding(obj)
            bindings[name] = known
            by_policy.setdefault(known.policy_name, []).append(known)
        self._bindings = bindings
        compiled: dict[str, CompiledPolicy] = {}
        hooks = []
        for name in sorted(by_policy):
            obj = policy_objects.get(name)
            if obj is None:
                continue  # a binding of a policy that does not exist (yet)
            known = self._policies.get(name)
            version = (obj.get("metadata") or {}).get("resourceVersion", "")
            if known is None or known.resource_version != version:
                try:
                    known = CompiledPolicy(obj, self.runtime)
                except Exception:
                    log.exception("admission policies: cannot compile policy %s", name)
                    continue
            compiled[name] = known
            param_kind, error = None, ""
            if known.param_kind is not None:
                param_kind = params.resolve(self.server, known.param_kind)
                if param_kind is None:
                    # Resolved again at the next change; a CRD established later counts.
                    self._generation += 1
                    error = ("failed to find resource referenced by paramKind: "
                             f"'{params.kind_text(known.param_kind)}'")
            hooks.append(Hook(known, by_policy[name], param_kind, error))
        self._policies = compiled
        return hooks


def namespace_getter(source: PolicySource):
    """``namespaces(name)``: the namespace from the source's feed of namespaces (synced by
    the hooks' revision check), or ``NotFound``."""
    kind = params.ParamKind("v1", "Namespace", "", "namespaces", False)

    def get(name: str) -> dict:
        feed = source.params(kind)
        found = feed.get("", name) if feed is not None else None
        if found is None:
            raise errors.NotFound.for_object("", "namespaces", name)
        return found

    return get
