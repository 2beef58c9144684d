"""RBACIndex: one worker's in-memory view of roles and bindings, indexed by subject.

Upstream's RBAC authorizer reads informer caches; here each worker (each server object)
loads the four RBAC resources from the store once and then follows the watch cache, so a
decision looks up the bindings of the user's name and groups (a few dict reads) instead of
scanning every binding. Subjects are keyed ``("u", name)`` for users and service accounts
(``system:serviceaccount:NS:NAME``, as ``serviceaccount.MatchesUsername`` compares) and
``("g", name)`` for groups. Readers never lock: every set a reader may see is a frozenset
replaced, never changed, by the feed.
"""

from __future__ import annotations

import json
import logging
import threading

from kapiserver.apimachinery.field_errors import go_quote
from kapiserver.registry.keys import key_prefix

from .rules import compile_rules

log = logging.getLogger(__name__)

GROUP = "rbac.authorization.k8s.io"
RESOURCES = ("roles", "rolebindings", "clusterroles", "clusterrolebindings")
#: Each resource's storage prefix (upstream's layout: ``/registry/roles/``, …).
PREFIXES = {resource: key_prefix(GROUP, resource) for resource in RESOURCES}
SA_PREFIX = "system:serviceaccount:"
_STATE = ("cluster_roles", "cluster_role_rules", "role_rules", "cluster_bindings", "bindings",
          "cluster_by_subject", "namespaced_by_subject")


class Binding:
    """What a decision needs of a RoleBinding or ClusterRoleBinding."""

    __slots__ = ("namespace", "name", "role_kind", "role_name", "subject_keys", "subjects")

    def __init__(self, obj: dict):
        meta = obj.get("metadata") or {}
        ref = obj.get("roleRef") or {}
        self.namespace = meta.get("namespace", "")
        self.name = meta.get("name", "")
        self.role_kind = ref.get("kind", "")
        self.role_name = ref.get("name", "")
        #: (index key, kind, name, namespace) of each subject, in the binding's order.
        self.subjects = tuple((subject_key(s, self.namespace), s.get("kind", ""),
                               s.get("name", ""), s.get("namespace", ""))
                              for s in obj.get("subjects") or [] if isinstance(s, dict))
        self.subject_keys = frozenset(key for key, *_ in self.subjects if key)

    def describe(self, user) -> str:
        """The binding and the subject of it that names ``user``, as upstream's
        ``roleBindingDescriber``/``clusterRoleBindingDescriber`` word them
        (``RoleBinding "b/ns" of Role "r" to Group "devs"``)."""
        keys = {("u", user.name)} | {("g", g) for g in user.groups}
        subject = next((s for s in self.subjects if s[0] in keys), None)
        if subject is None:
            who = ""
        else:
            _, kind, name, namespace = subject
            if kind == "ServiceAccount":
                name = f"{name}/{namespace or self.namespace}"
            who = f"{kind} {go_quote(name)}"
        if self.namespace:
            return (f"RoleBinding {go_quote(self.name + '/' + self.namespace)} of "
                    f"{self.role_kind} {go_quote(self.role_name)} to {who}")
        return (f"ClusterRoleBinding {go_quote(self.name)} of {self.role_kind} "
                f"{go_quote(self.role_name)} to {who}")


def subject_key(subject: dict, binding_namespace: str):
    """The index key a subject matches users by (``appliesToUser``), or None."""
    if not isinstance(subject, dict):
        return None
    kind, name = subject.get("kind"), subject.get("name", "")
    if kind == "User":
        return ("u", name)
    if kind == "Group":
        return ("g", name)
    if kind == "ServiceAccount":
        # A RoleBinding's service account without namespace is in the binding's namespace.
        return ("u", f"{SA_PREFIX}{subject.get('namespace') or binding_namespace}:{name}")
    return None


class RBACIndex:
    """Roles by key and bindings by subject, fed from the store (see module docstring)."""

    def __init__(self, server):
        self.server = server
        self.cluster_roles: dict[str, dict] = {}
        self.cluster_role_rules: dict[str, tuple] = {}
        self.role_rules: dict[tuple[str, str], tuple] = {}
        self.cluster_bindings: dict[str, Binding] = {}
        self.bindings: dict[tuple[str, str], Binding] = {}
        # subject key -> frozenset of ClusterRoleBinding names
        self.cluster_by_subject: dict[tuple, frozenset] = {}
        # (namespace, subject key) -> frozenset of RoleBinding names in that namespace
        self.namespaced_by_subject: dict[tuple, frozenset] = {}
        #: called with the resource name after every change (the aggregation controller)
        self.listeners: list = []
        self.revision = 0
        self.loaded = threading.Event()
        self._lock = threading.Lock()
        self._started = False

    # -- feed ----------------------------------------------------------------------------------

    def start(self) -> None:
        """Load from the store and follow the watch cache (once; later calls wait for it)."""
        with self._lock:
            if self._started:
                start = False
            else:
                self._started = start = True
        if start:
            watcher = self._load()
            threading.Thread(target=self._follow, args=(watcher,), name="rbac-index",
                             daemon=True).start()
        self.loaded.wait(30)

    def _load(self):
        storage, cache = self.server.storage, self.server.watch_cache
        revision = storage.current_revision()
        cache.wait_for(revision, 3.0)
        # Build aside and swap in, so that readers never see a half-loaded index.
        fresh = RBACIndex(self.server)
        for resource in RESOURCES:
            page = storage.list(PREFIXES[resource], revision=revision)
            for kv in page.items:
                fresh.apply(kv.key, json.loads(kv.value))
        for attribute in _STATE:
            setattr(self, attribute, getattr(fresh, attribute))
        self.revision = revision
        self.loaded.set()
        self._notify("clusterroles")
        return cache.watch(tuple(PREFIXES.values()), revision)

    def _follow(self, watcher) -> None:
        stopping = self.server.stopping
        while not stopping.is_set():
            try:
                for event in watcher.get(1.0):
                    if event.revision <= self.revision:
                        continue  # already in the loaded snapshot
                    value = json.loads(event.value) if event.value is not None else None
                    resource = self.apply(event.key, value)
                    self.revision = event.revision
                    if resource:
                        self._notify(resource)
                if watcher.closed and not stopping.is_set():
                    log.info("RBAC index: watch ended (%s); reloading", watcher.close_reason)
                    watcher = self._load()
            except Exception:  # the index must outlive a bad object or a storage hiccup
                log.exception("RBAC index feed failed; reloading")
                if stopping.wait(1.0):
                    return
                try:
                    watcher.close()
                    watcher = self._load()
                except Exception:
                    log.exception("RBAC index reload failed")

    def _notify(self, resource: str) -> None:
        for listener in list(self.listeners):
            try:
                listener(resource)
            except Exception:
                log.exception("RBAC index listener failed")

    # -- changes -------------------------------------------------------------------------------

    def apply(self, key: str, obj: dict | None) -> str | None:
        """Set the object stored at ``key`` (None: deleted); return its resource."""
        resource = next((r for r, prefix in PREFIXES.items() if key.startswith(prefix)), "")
        parts = [resource] + key[len(PREFIXES.get(resource, "")):].split("/")
        if resource in ("roles", "rolebindings") and len(parts) == 3:
            namespace, name = parts[1], parts[2]
        elif resource in ("clusterroles", "clusterrolebindings") and len(parts) == 2:
            namespace, name = "", parts[1]
        else:
            return None
        if resource == "clusterroles":
            if obj is None:
                self.cluster_roles.pop(name, None)
                self.cluster_role_rules.pop(name, None)
            else:
                self.cluster_roles[name] = obj
                self.cluster_role_rules[name] = compile_rules(obj.get("rules"))
        elif resource == "roles":
            if obj is None:
                self.role_rules.pop((namespace, name), None)
            else:
                self.role_rules[(namespace, name)] = compile_rules(obj.get("rules"))
        elif resource == "clusterrolebindings":
            old = self.cluster_bindings.pop(name, None)
            new = Binding(obj) if obj is not None else None
            if new is not None:
                self.cluster_bindings[name] = new
            self._reindex(self.cluster_by_subject, lambda k: k, name, old, new)
        else:
            old = self.bindings.pop((namespace, name), None)
            new = Binding(obj) if obj is not None else None
            if new is not None:
                self.bindings[(namespace, name)] = new
            self._reindex(self.namespaced_by_subject, lambda k: (namespace, k), name, old, new)
        return resource

    @staticmethod
    def _reindex(index: dict, index_key, name: str, old, new) -> None:
        before = old.subject_keys if old is not None else frozenset()
        after = new.subject_keys if new is not None else frozenset()
        for key in before - after:
            remaining = index.get(index_key(key), frozenset()) - {name}
            if remaining:
                index[index_key(key)] = remaining
            else:
                index.pop(index_key(key), None)
        for key in after - before:
            index[index_key(key)] = index.get(index_key(key), frozenset()) | {name}

    # -- reading -------------------------------------------------------------------------------

    def bindings_for(self, user, namespace: str) -> list[Binding]:
        """The bindings naming ``user`` that apply in ``namespace``: ClusterRoleBindings
        first, then the namespace's RoleBindings (``VisitRulesFor``), each by name."""
        if not self.loaded.is_set():
            self.start()
        keys = [("u", user.name)] + [("g", g) for g in user.groups]
        names = set()
        for key in keys:
            names |= self.cluster_by_subject.get(key, frozenset())
        found = [self.cluster_bindings[n] for n in sorted(names) if n in self.cluster_bindings]
        if namespace:
            names = set()
            for key in keys:
                names |= self.namespaced_by_subject.get((namespace, key), frozenset())
            found += [self.bindings[(namespace, n)] for n in sorted(names)
                      if (namespace, n) in self.bindings]
        return found

    def rules_of(self, binding: Binding, plural: bool = False) -> tuple[tuple, str]:
        """(compiled rules, error) of the role ``binding`` refers to (``GetRoleReferenceRules``).

        The error names the missing role as the authorizer's listers do
        (``clusterrole.rbac…``), or as the registry does with ``plural``.
        """
        if binding.role_kind == "ClusterRole":
            rules = self.cluster_role_rules.get(binding.role_name)
            resource = "clusterroles" if plural else "clusterrole"
        elif binding.role_kind == "Role" and binding.namespace:
            rules = self.role_rules.get((binding.namespace, binding.role_name))
            resource = "roles" if plural else "role"
        else:
            return (), f"unsupported role reference kind: {go_quote(binding.role_kind)}"
        if rules is None:
            return (), f"{resource}.{GROUP} {go_quote(binding.role_name)} not found"
        return rules, ""

    def resolve(self, user, namespace: str, plural: bool = False) -> tuple[list[dict], list[str]]:
        """Every rule granted to ``user`` in ``namespace`` and the resolution errors
        (``RulesFor``)."""
        rules, errors = [], []
        for binding in self.bindings_for(user, namespace):
            compiled, error = self.rules_of(binding, plural)
            if error:
                errors.append(error)
            rules += [c.rule for c in compiled]
        return rules, errors
