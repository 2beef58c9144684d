"""ListTypes: how the fields of one kind are tracked, declared as a table of path patterns.

Upstream's field manager walks objects with the kind's OpenAPI schema. kapiserver keeps
only what changes the outcome, as patterns over dotted paths where ``*`` stands for any
one map key or list item:

* ``lists``: how a list's items are told apart — ``"atomic"`` (the list is one leaf; the
  default for every list not named, as upstream's for lists without
  ``x-kubernetes-list-type``), ``"set"`` (items are scalars, ``v:"x"``) or
  ``("map", keys[, key_defaults])`` (items are objects told apart by ``keys``,
  ``k:{"name":"x"}``; a key missing from an item takes its schema default);
* ``atomic``: maps and structs owned as one leaf (``x-kubernetes-map-type: atomic``);
* ``defaults``: fields present in Go's zero value of the kind — non-pointer structs
  (``spec: {}``) and scalars without ``omitempty`` — so that a create compares against
  what upstream's empty object holds and never claims ``spec`` itself;
* ``omit_empty``: nulls and empty maps and lists are dropped before comparing, as
  decoding into Go types drops them (true for built-in kinds; custom resources are
  unstructured upstream and keep them);
* ``verbatim``: subtrees ``omit_empty`` leaves as they are, where an empty map is a
  pointer to a struct Go keeps (a CRD's ``subresources: {status: {}}``, a schema's
  ``default: {}``); the kind's strategy writes them as Go does.

The tables below were checked against the OpenAPI v3 documents a v1.32 kube-apiserver
serves (``x-kubernetes-list-type``, ``-list-map-keys``, ``-map-type``, ``default``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Iterable, Mapping

#: The segment a list item takes when a path is matched against patterns.
ITEM = object()
_NO_DEFAULT = object()
#: Cursors (and their steps) a table remembers: those of its kind's fields, and of the
#: map keys met most (label and annotation names), bounded.
_MEMO_LIMIT = 4096


@dataclass(frozen=True)
class ListType:
    """How one list is tracked: ``kind`` is ``"atomic"``, ``"set"`` or ``"map"``."""

    kind: str = "atomic"
    keys: tuple[str, ...] = ()
    key_defaults: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        if self.kind not in ("atomic", "set", "map"):
            raise ValueError(f"unknown list type {self.kind!r}: want atomic, set or map")
        if (self.kind == "map") != bool(self.keys):
            raise ValueError("a map list needs keys, and only a map list has them")

    @classmethod
    def of(cls, spec: Any) -> ListType:
        """Read a table entry: ``"atomic"``, ``"set"``, ``("map", keys[, defaults])``."""
        if isinstance(spec, ListType):
            return spec
        if isinstance(spec, str):
            return cls(spec)
        kind, keys, *rest = spec
        keys = (keys,) if isinstance(keys, str) else tuple(keys)
        return cls(kind, keys, dict(rest[0]) if rest else {})


ATOMIC = ListType()


class _Node:
    __slots__ = ("children", "star", "list_type", "atomic", "default", "verbatim")

    def __init__(self):
        self.children: dict[str, _Node] = {}
        self.star: _Node | None = None
        self.list_type: ListType | None = None
        self.atomic: bool | None = None
        self.default: Any = _NO_DEFAULT
        self.verbatim = False


class ListTypes:
    """The tracking table of one kind; see the module docstring. Immutable once built."""

    def __init__(self, lists: Mapping[str, Any] | None = None, *,
                 atomic: Iterable[str] = (), defaults: Mapping[str, Any] | None = None,
                 omit_empty: bool = False, verbatim: Iterable[str] = ()):
        self.lists = MappingProxyType({p: ListType.of(s) for p, s in (lists or {}).items()})
        self.atomic = frozenset(atomic)
        self.defaults = MappingProxyType(dict(defaults or {}))
        self.omit_empty = omit_empty
        self.verbatim = frozenset(verbatim)
        self._root = _Node()
        for pattern, list_type in self.lists.items():
            self._node(pattern).list_type = list_type
        for pattern in self.atomic:
            self._node(pattern).atomic = True
        for pattern, value in self.defaults.items():
            self._node(pattern).default = value
        for pattern in self.verbatim:
            self._node(pattern).verbatim = True
        # What each cursor reached so far answers (a table is immutable, so are they):
        # objects are walked once per write, their fields the same each time.
        self._steps: dict = {}
        self._facts: dict = {}

    def _node(self, pattern: str) -> _Node:
        node = self._root
        for segment in pattern.split("."):
            if segment == "*":
                node.star = node.star or _Node()
                node = node.star
            else:
                node = node.children.setdefault(segment, _Node())
        return node

    def __or__(self, other: ListTypes) -> ListTypes:
        """Both tables; ``other`` wins where both name a pattern."""
        return ListTypes({**self.lists, **other.lists}, atomic=self.atomic | other.atomic,
                         defaults={**self.defaults, **other.defaults},
                         omit_empty=self.omit_empty or other.omit_empty,
                         verbatim=self.verbatim | other.verbatim)

    def __repr__(self) -> str:
        return (f"ListTypes(lists={dict(self.lists)!r}, atomic={sorted(self.atomic)!r}, "
                f"defaults={dict(self.defaults)!r}, omit_empty={self.omit_empty!r}, "
                f"verbatim={sorted(self.verbatim)!r})")

    # -- matching: a cursor is the tuple of pattern nodes matching the current path --

    def cursor(self) -> tuple:
        """The cursor at the root of an object."""
        return (self._root,)

    def descend(self, cursor: tuple, segment: Any) -> tuple:
        """The cursor one step down: ``segment`` is a field name or ``ITEM``."""
        step = (cursor, segment)
        found = self._steps.get(step)
        if found is None:
            found = self._descend(cursor, segment)
            if len(self._steps) < _MEMO_LIMIT:
                self._steps[step] = found
        return found

    def _facts_at(self, cursor: tuple) -> tuple:
        """``(atomic, list type, verbatim, defaults)`` at ``cursor``; defaults as
        ``(name, value)`` pairs of the fields present in Go's zero value there."""
        facts = self._facts.get(cursor)
        if facts is None:
            list_type = next((node.list_type for node in cursor
                              if node.list_type is not None), ATOMIC)
            defaults = tuple((name, child.default) for node in cursor
                             for name, child in node.children.items()
                             if child.default is not _NO_DEFAULT)
            facts = (any(node.atomic for node in cursor), list_type,
                     any(node.verbatim for node in cursor), defaults)
            if len(self._facts) < _MEMO_LIMIT:
                self._facts[cursor] = facts
        return facts

    @staticmethod
    def _descend(cursor: tuple, segment: Any) -> tuple:
        out = []
        for node in cursor:
            if segment is not ITEM:
                child = node.children.get(segment)
                if child is not None:
                    out.append(child)
            if node.star is not None:
                out.append(node.star)
        return tuple(out)

    def list_type_at(self, cursor: tuple) -> ListType:
        return self._facts_at(cursor)[1]

    def atomic_at(self, cursor: tuple) -> bool:
        return self._facts_at(cursor)[0]

    def _cursor_for(self, path: str) -> tuple:
        cursor = self.cursor()
        for segment in path.split("."):
            cursor = self.descend(cursor, ITEM if segment == "*" else segment)
        return cursor

    def list_type(self, path: str) -> ListType:
        """The list type at a dotted path (``*`` for list items): ``spec.ports``."""
        return self.list_type_at(self._cursor_for(path))

    def is_atomic(self, path: str) -> bool:
        """True when the map or struct at ``path`` is owned as one leaf."""
        return self.atomic_at(self._cursor_for(path))

    # -- normalizing objects as Go's decoding would see them --

    def prune(self, obj: Any, cursor: tuple | None = None) -> Any:
        """A copy of ``obj`` without nulls, and without empty maps and lists when
        ``omit_empty`` (but for ``verbatim`` subtrees); list items are kept."""
        if cursor is None:
            cursor = self.cursor() if self.verbatim else ()
        if cursor and self._facts_at(cursor)[2]:
            return _json_copy(obj)
        if isinstance(obj, dict):
            out = {}
            for key, value in obj.items():
                if value is None:
                    continue
                if isinstance(value, (dict, list)):
                    inner = self.descend(cursor, key) if cursor else ()
                    value = self.prune(value, inner)
                    if self.omit_empty and not value and not (
                            inner and self._facts_at(inner)[2]):
                        continue
                out[key] = value
            return out
        if isinstance(obj, list):
            items = self.descend(cursor, ITEM) if cursor else ()
            return [self.prune(item, items) if isinstance(item, (dict, list)) else item
                    for item in obj]
        return obj

    def normalize(self, obj: Any) -> Any:
        """``prune(obj)`` with ``defaults`` filled in wherever their parent exists."""
        out = self.prune(obj)
        self._fill(out, self.cursor())
        return out

    def _fill(self, value: Any, cursor: tuple) -> None:
        if isinstance(value, dict):
            for name, default in self._facts_at(cursor)[3]:
                if name not in value:
                    value[name] = _json_copy(default)
            for key, item in value.items():
                if isinstance(item, (dict, list)):
                    self._fill(item, self.descend(cursor, key))
        elif isinstance(value, list):
            items = self.descend(cursor, ITEM)
            for item in value:
                if isinstance(item, (dict, list)):
                    self._fill(item, items)


def _json_copy(value: Any) -> Any:
    """A deep copy of a decoded JSON value (``copy.deepcopy``'s result, sooner)."""
    if value.__class__ is dict:
        return {key: _json_copy(item) for key, item in value.items()}
    if value.__class__ is list:
        return [_json_copy(item) for item in value]
    if value is None or value.__class__ in (str, int, float, bool):
        return value
    return copy.deepcopy(value)


# -- built-in kinds ----------------------------------------------------------------------------

_META = {"metadata": {}}
_CONDITION = {  # metav1.Condition: every field but observedGeneration lacks omitempty
    "message": "", "reason": "", "status": "", "type": "", "lastTransitionTime": None}


def _builtin(lists=None, atomic=(), defaults=None, verbatim=()) -> ListTypes:
    return OBJECT_META | ListTypes(lists, atomic=atomic, defaults={**_META, **(defaults or {})},
                                   omit_empty=True, verbatim=verbatim)


def _each(prefix: str, fields: Mapping[str, Any]) -> dict:
    return {f"{prefix}.{name}": value for name, value in fields.items()}


#: ObjectMeta, shared by every kind: finalizers is a set, ownerReferences a list keyed by
#: uid whose items are atomic (``OwnerReference`` has ``x-kubernetes-map-type: atomic``).
OBJECT_META = ListTypes({
    "metadata.finalizers": "set",
    "metadata.ownerReferences": ("map", ("uid",), {"uid": ""}),
    "metadata.managedFields": "atomic",
}, atomic=("metadata.ownerReferences.*",))

CONFIG_MAP = _builtin()
SECRET = _builtin()
ENDPOINTS = _builtin({"subsets": "atomic"})
NAMESPACE = _builtin(
    {"spec.finalizers": "atomic", "status.conditions": ("map", ("type",), {"type": ""})},
    defaults={"spec": {}, "status": {},
              **_each("status.conditions.*", {"status": "", "type": "",
                                              "lastTransitionTime": None})})
API_SERVICE = _builtin(
    {"status.conditions": ("map", ("type",), {"type": ""})},
    defaults={"spec": {"groupPriorityMinimum": 0, "versionPriority": 0}, "status": {},
              **_each("status.conditions.*", {"status": "", "type": "",
                                              "lastTransitionTime": None})})
CUSTOM_RESOURCE_DEFINITION = _builtin(
    {"spec.versions": "atomic", "status.conditions": ("map", ("type",), {"type": ""}),
     "status.storedVersions": "atomic", "status.acceptedNames.shortNames": "atomic",
     "status.acceptedNames.categories": "atomic", "spec.names.shortNames": "atomic",
     "spec.names.categories": "atomic"},
    verbatim=("spec.versions",),
    defaults={"spec": {"group": "", "names": {"plural": "", "kind": ""}, "scope": "",
                       "versions": None},
              "status": {"acceptedNames": {"plural": "", "kind": ""}, "storedVersions": None,
                         "conditions": None},
              **_each("status.conditions.*", {"status": "", "type": "",
                                              "lastTransitionTime": None})})
SERVICE_ACCOUNT = _builtin(
    {"secrets": ("map", ("name",)), "imagePullSecrets": "atomic"},
    atomic=("secrets.*", "imagePullSecrets.*"))
SERVICE = _builtin(
    {"spec.ports": ("map", ("port", "protocol"), {"port": 0, "protocol": "TCP"}),
     "spec.clusterIPs": "atomic", "spec.externalIPs": "atomic", "spec.ipFamilies": "atomic",
     "spec.loadBalancerSourceRanges": "atomic",
     "status.conditions": ("map", ("type",), {"type": ""}),
     "status.loadBalancer.ingress": "atomic"},
    atomic=("spec.selector",),
    defaults={"spec": {}, "status": {}, "status.loadBalancer": {}, "spec.ports.*.port": 0,
              **_each("status.conditions.*", _CONDITION)})
EVENT = _builtin(
    atomic=("involvedObject", "related"),
    defaults={"involvedObject": {}, "source": {}, "firstTimestamp": None,
              "lastTimestamp": None, "eventTime": None, "series.lastObservedTime": None,
              "reportingComponent": "", "reportingInstance": ""})
#: events.k8s.io/v1 has no OpenAPI transcript in the references; from its Go types.
EVENTS_V1_EVENT = _builtin(
    atomic=("regarding", "related"),
    defaults={"eventTime": None, "regarding": {}, "deprecatedSource": {},
              "deprecatedFirstTimestamp": None, "deprecatedLastTimestamp": None,
              "series.lastObservedTime": None})
LEASE = _builtin(defaults={"spec": {}})

#: Unknown kinds (custom resources): ObjectMeta's lists, every other list atomic, and
#: nothing pruned, as upstream treats unstructured objects.
DEFAULT = OBJECT_META

BUILTIN: Mapping[tuple[str, str], ListTypes] = MappingProxyType({
    ("apiregistration.k8s.io/v1", "APIService"): API_SERVICE,
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"): CUSTOM_RESOURCE_DEFINITION,
    ("v1", "ConfigMap"): CONFIG_MAP,
    ("v1", "Secret"): SECRET,
    ("v1", "Namespace"): NAMESPACE,
    ("v1", "ServiceAccount"): SERVICE_ACCOUNT,
    ("v1", "Service"): SERVICE,
    ("v1", "Endpoints"): ENDPOINTS,
    ("v1", "Event"): EVENT,
    ("events.k8s.io/v1", "Event"): EVENTS_V1_EVENT,
    ("coordination.k8s.io/v1", "Lease"): LEASE,
})


def for_kind(api_version: str, kind: str) -> ListTypes:
    """The table of a built-in kind (written here, else derived from its OpenAPI
    extensions and Go types by ``derive``), else ``DEFAULT``."""
    table = BUILTIN.get((api_version, kind))
    if table is not None:
        return table
    from .derive import builtin_list_types

    group, _, version = api_version.rpartition("/")
    return builtin_list_types(group, version, kind) or DEFAULT


def reset_fields(subresource: str = "", status_subresource: bool = False) -> tuple[str, ...]:
    """The paths a write through ``subresource`` can never set, as upstream's strategies'
    ``GetResetFields``: the main resource of a kind with a status subresource resets
    ``status``; ``status`` resets ``spec``; a namespace's ``finalize`` resets ``status``.

    Changes under these paths are neither owned by the writer nor taken from others.
    """
    if subresource == "status":
        return ("spec",)
    if subresource == "finalize" or (not subresource and status_subresource):
        return ("status",)
    return ()
