"""The internal ``core`` Go types of a pod spec, for :mod:`kapiserver.apis.core.gocmp`.

Upstream diffs the *internal* ``core.PodSpec``, not the v1 one: its fields are the v1
fields (:mod:`kapiserver.apis.core.gotypes_data`) in v1's order, but for the differences
patched in here — the host namespace fields live in ``PodSecurityContext``,
``serviceAccount`` is gone, ``PodSpec`` keeps its historic field order, and a projected
token's ``expirationSeconds`` is not a pointer. :func:`to_go` reads a v1 JSON object into
the value layout gocmp compares.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from ...apimachinery import quantity as _quantity
from . import gocmp
from .gocmp import BOOL, INT, LEAF, MAP, PTR, SLICE, STRING, STRUCT, GoType, Options
from .gotypes_data import ALIASES, STRUCTS

_INTERNAL_ORDER = {
    # pkg/apis/core/types.go: PodSpec keeps the order fields were added in, which v1 does not
    "PodSpec": (
        "Volumes", "InitContainers", "Containers", "EphemeralContainers", "RestartPolicy",
        "TerminationGracePeriodSeconds", "ActiveDeadlineSeconds", "DNSPolicy", "NodeSelector",
        "ServiceAccountName", "AutomountServiceAccountToken", "NodeName", "SecurityContext",
        "ImagePullSecrets", "Hostname", "Subdomain", "SetHostnameAsFQDN", "Affinity",
        "SchedulerName", "Tolerations", "HostAliases", "PriorityClassName", "Priority",
        "PreemptionPolicy", "DNSConfig", "ReadinessGates", "RuntimeClassName", "Overhead",
        "EnableServiceLinks", "TopologySpreadConstraints", "OS", "SchedulingGates",
        "ResourceClaims", "Resources"),
    "PodSecurityContext": (
        "HostNetwork", "HostPID", "HostIPC", "ShareProcessNamespace", "HostUsers",
        "SELinuxOptions", "WindowsOptions", "RunAsUser", "RunAsGroup", "RunAsNonRoot",
        "SupplementalGroups", "SupplementalGroupsPolicy", "FSGroup", "FSGroupChangePolicy",
        "Sysctls", "SeccompProfile", "AppArmorProfile", "SELinuxChangePolicy"),
}
#: Fields the internal PodSecurityContext takes from the v1 PodSpec (read from the spec).
_FROM_SPEC = {"HostNetwork": ("hostNetwork", "bool"), "HostPID": ("hostPID", "bool"),
              "HostIPC": ("hostIPC", "bool"),
              "ShareProcessNamespace": ("shareProcessNamespace", "*bool"),
              "HostUsers": ("hostUsers", "*bool")}
_TYPE_PATCHES = {("ServiceAccountTokenProjection", "ExpirationSeconds"): "int64"}
_STRINGERS = {"ResourceName"}
_META_V1 = {
    "LabelSelector": (("MatchLabels", "matchLabels", "map[string]string", False),
                      ("MatchExpressions", "matchExpressions", "[]LabelSelectorRequirement",
                       False)),
    "LabelSelectorRequirement": (("Key", "key", "string", False),
                                 ("Operator", "operator", "LabelSelectorOperator", False),
                                 ("Values", "values", "[]string", False)),
}
_MAP = re.compile(r"map\[([\w.]+)\](.+)")


# -- leaves: resource.Quantity, metav1.Time ---------------------------------------------------

_QUANTITY_SYNTAX = re.compile(
    r"resource\.Quantity\{i:resource\.int64Amount\{value:(-?\d+), scale:(-?\d+)\}, "
    r"d:resource\.infDecAmount\{Dec:\(\*inf\.Dec\)\((nil|0x[0-9a-f]+)\)\}, "
    r's:("(?:[^"\\]|\\.)*"), Format:("(?:[^"\\]|\\.)*")\}')


def _quantity_equal(x, y) -> bool:
    return x.cmp(y) == 0


def _quantity_is_zero(q) -> bool:
    return q.format == "" and q.is_zero()


@functools.lru_cache(maxsize=None)
def _quantity_struct() -> GoType:
    # resource.Quantity's fields, unexported ones included: go-cmp prints them.
    amount = GoType(STRUCT, "resource.int64Amount", named=True)
    amount.fields = [("value", GoType(INT, "int64")),
                     ("scale", GoType(INT, "resource.Scale", named=True))]
    dec = GoType(LEAF, "inf.Dec", named=True)
    dec.equal = lambda x, y: x == y
    dec.is_zero_leaf = lambda value: False
    # An inf.Dec holds a big.Int, far below any verbosity a pod diff reaches.
    dec.format_leaf = lambda opts, value: gocmp.TextWrap("{", gocmp.TextList(
        [gocmp.Record(gocmp.TEXT_ELLIPSIS, elide_comma=True)]), "}")
    dec_amount = GoType(STRUCT, "resource.infDecAmount", named=True)
    dec_amount.fields = [("Dec", GoType(PTR, "*inf.Dec", elem=dec))]
    quantity = GoType(STRUCT, "resource.Quantity", named=True)
    quantity.fields = [("i", amount), ("d", dec_amount), ("s", GoType(STRING, "string")),
                       ("Format", GoType(STRING, "resource.Format", named=True))]
    return quantity


def _format_quantity(opts: Options, q):
    # A Quantity held by value has no String method (it is on the pointer): go-cmp prints
    # the struct, its unexported fields included, as far as the verbosity goes.
    match = _QUANTITY_SYNTAX.fullmatch(q.go_syntax())
    value, scale, dec, text, fmt = match.groups() if match else ("0", "0", "nil", '""', '""')
    fields = ((int(value), int(scale)), (None if dec == "nil" else True,), _unquote(text),
              _unquote(fmt))
    return gocmp.format_value(opts, _quantity_struct(), fields)


def _unquote(text: str) -> str:
    try:
        return json.loads(text)
    except ValueError:
        return text.strip('"')


def _time_equal(x, y) -> bool:
    return x == y


def _format_time(opts: Options, value) -> gocmp.TextLine:
    # metav1.Time embeds time.Time, whose String method go-cmp calls.
    from ...apimachinery.validation import go_time
    return gocmp.TextLine("s" + gocmp.format_string(go_time(value).text))


# -- building the types -------------------------------------------------------------------------

class _Builder:
    def __init__(self):
        self.types: dict[str, GoType] = {}

    def named(self, name: str) -> GoType:
        """A named type by its Go name (``Container``, ``resource.Quantity``)."""
        if name in self.types:
            return self.types[name]
        if name == "resource.Quantity":
            t = GoType(LEAF, "resource.Quantity", named=True)
            t.equal, t.format_leaf, t.is_zero_leaf = (_quantity_equal, _format_quantity,
                                                      _quantity_is_zero)
        elif name == "metav1.Time" or name == "Time":
            t = GoType(LEAF, "v1.Time", named=True)
            t.equal, t.format_leaf = _time_equal, _format_time
            t.is_zero_leaf = lambda value: not value
        elif name == "intstr.IntOrString":
            t = GoType(STRUCT, "intstr.IntOrString", named=True)
            t.fields = [("Type", GoType(INT, "intstr.Type", named=True)),
                        ("IntVal", GoType(INT, "int32")), ("StrVal", GoType(STRING, "string"))]
        elif name.startswith("metav1.") and name[7:] in _META_V1:
            t = GoType(STRUCT, "v1." + name[7:], named=True)
            self.types[name] = t
            t.fields = [(go_name, self.expr(expr, prefix="metav1."))
                        for go_name, _, expr, _ in _META_V1[name[7:]]]
            return t
        elif name == "metav1.LabelSelectorOperator":
            t = GoType(STRING, "v1.LabelSelectorOperator", named=True)
        elif name == "metav1.ObjectMeta":
            t = self._object_meta()
        elif name in STRUCTS:
            t = GoType(STRUCT, "core." + name, named=True)
            self.types[name] = t  # before the fields: types may refer to themselves
            t.fields = [(go_name, self.expr(expr)) for go_name, _, expr, _ in
                        _internal_fields(name)]
            return t
        elif name in ALIASES:
            of = ALIASES[name]
            base = self.expr(of)
            t = GoType(base.kind, "core." + name, named=True, elem=base.elem, key=base.key,
                       stringer=name in _STRINGERS)
        else:
            raise KeyError(f"unknown Go type {name}")
        self.types[name] = t
        return t

    def expr(self, expr: str, prefix: str = "") -> GoType:
        """A type expression (``*int64``, ``[]Container``, ``map[string]string``)."""
        if expr.startswith("*"):
            elem = self.expr(expr[1:], prefix)
            return GoType(PTR, "*" + elem.name, elem=elem)
        if expr.startswith("[]"):
            elem = self.expr(expr[2:], prefix)
            return GoType(SLICE, "[]" + elem.name, elem=elem)
        match = _MAP.fullmatch(expr)
        if match:
            key, elem = self.expr(match.group(1), prefix), self.expr(match.group(2), prefix)
            return GoType(MAP, f"map[{key.name}]{elem.name}", key=key, elem=elem)
        if expr == "string":
            return GoType(STRING, "string")
        if expr in ("int32", "int64", "int", "byte"):
            return GoType(INT, expr)
        if expr == "bool":
            return GoType(BOOL, "bool")
        if prefix and "." not in expr:
            expr = prefix + expr
        return self.named(expr)

    def _object_meta(self) -> GoType:
        t = GoType(STRUCT, "v1.ObjectMeta", named=True)
        time = self.named("metav1.Time")
        t.fields = [("Name", GoType(STRING, "string")), ("GenerateName", GoType(STRING, "string")),
                    ("Namespace", GoType(STRING, "string")), ("SelfLink", GoType(STRING, "string")),
                    ("UID", GoType(STRING, "types.UID", named=True)),
                    ("ResourceVersion", GoType(STRING, "string")),
                    ("Generation", GoType(INT, "int64")), ("CreationTimestamp", time),
                    ("DeletionTimestamp", GoType(PTR, "*v1.Time", elem=time)),
                    ("DeletionGracePeriodSeconds", self.expr("*int64")),
                    ("Labels", self.expr("map[string]string")),
                    ("Annotations", self.expr("map[string]string")),
                    ("Finalizers", self.expr("[]string"))]
        return t


_META_JSON = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion",
              "generation", "creationTimestamp", "deletionTimestamp",
              "deletionGracePeriodSeconds", "labels", "annotations", "finalizers")


def _internal_fields(name: str) -> list[tuple]:
    fields = list(STRUCTS[name])
    if name == "PodSpec":
        fields = [f for f in fields
                  if f[0] not in _FROM_SPEC and f[0] != "DeprecatedServiceAccount"]
    if name == "PodSecurityContext":
        fields += [(go_name, "", expr, False) for go_name, (_, expr) in _FROM_SPEC.items()]
    order = _INTERNAL_ORDER.get(name)
    if order:
        by_name = {f[0]: f for f in fields}
        fields = [by_name[go_name] for go_name in order if go_name in by_name]
    return [(go_name, json_name, _TYPE_PATCHES.get((name, go_name), expr), inline)
            for go_name, json_name, expr, inline in fields]


@functools.lru_cache(maxsize=None)
def _builder() -> _Builder:
    return _Builder()


def go_type(name: str) -> GoType:
    """The internal type named ``name`` (``PodSpec``, ``EphemeralContainer``)."""
    return _builder().named(name)


# -- reading JSON into Go values ----------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _json_names(name: str) -> tuple:
    if name == "metav1.ObjectMeta":
        return tuple((json_name, False) for json_name in _META_JSON)
    if name.startswith("metav1.") and name[7:] in _META_V1:
        return tuple((json_name, inline) for _, json_name, _, inline in _META_V1[name[7:]])
    return tuple((json_name, inline) for _, json_name, _, inline in _internal_fields(name))


def _type_key(t: GoType) -> str:
    name = t.name
    if name.startswith("core."):
        return name[5:]
    if name.startswith("v1."):
        return "metav1." + name[3:]
    return name


def to_go(t: GoType, value: Any, spec: dict | None = None) -> Any:
    """``value`` (decoded v1 JSON) as go-cmp's value layout of ``t``: structs as tuples of
    their fields, nil as ``None``. ``spec`` is the v1 PodSpec a PodSecurityContext takes its
    host namespace fields from."""
    kind = t.kind
    if kind == STRUCT:
        obj = value if isinstance(value, dict) else {}
        if t.name == "intstr.IntOrString":
            if isinstance(value, str):
                return (1, 0, value)
            return (0, value if isinstance(value, int) and not isinstance(value, bool) else 0,
                    "")
        key = _type_key(t)
        values = []
        for (go_name, field_type), (json_name, inline) in zip(t.fields, _json_names(key)):
            if inline:
                values.append(to_go(field_type, obj, spec))
            elif key == "PodSecurityContext" and go_name in _FROM_SPEC:
                values.append(to_go(field_type, (spec or {}).get(_FROM_SPEC[go_name][0])))
            elif key == "PodSpec" and go_name == "SecurityContext":
                context = obj.get("securityContext")
                # conversion always makes one: it carries the host namespace fields
                values.append(to_go(field_type.elem, context if isinstance(context, dict)
                                    else {}, obj))
            else:
                values.append(to_go(field_type, obj.get(json_name), spec))
        return tuple(values)
    if kind == PTR:
        if value is None:
            return None
        return to_go(t.elem, value, spec)
    if kind == SLICE:
        if not isinstance(value, list):
            return None
        return [to_go(t.elem, item, spec) for item in value]
    if kind == MAP:
        if not isinstance(value, dict):
            return None
        return {str(k): to_go(t.elem, v, spec) for k, v in value.items()}
    if kind == STRING:
        return value if isinstance(value, str) else ""
    if kind == INT:
        return value if isinstance(value, int) and not isinstance(value, bool) else 0
    if kind == BOOL:
        return value is True
    if t.name == "resource.Quantity":
        try:
            return _quantity.from_json(value) if value is not None else _quantity.Quantity()
        except (_quantity.QuantityError, ValueError, TypeError):
            return _quantity.Quantity()
    return value


_ZERO = {STRING: "", INT: 0, BOOL: False}


def json_semantic_equal(t: GoType, a: Any, b: Any, spec_a: dict | None = None,
                        spec_b: dict | None = None) -> bool:
    """``apiequality.Semantic.DeepEqual`` of two JSON values read as Go values of type
    ``t``, without building them: only the parts that differ as JSON are looked into."""
    if a == b and type(a) is type(b):
        return True
    kind = t.kind
    if kind == STRUCT:
        a = a if isinstance(a, dict) else {}
        b = b if isinstance(b, dict) else {}
        if t.name == "intstr.IntOrString":
            return to_go(t, a) == to_go(t, b)
        key = _type_key(t)
        for (go_name, field_type), (json_name, inline) in zip(t.fields, _json_names(key)):
            if inline:
                if not json_semantic_equal(field_type, a, b, spec_a, spec_b):
                    return False
            elif key == "PodSecurityContext" and go_name in _FROM_SPEC:
                name = _FROM_SPEC[go_name][0]
                if not json_semantic_equal(field_type, (spec_a or {}).get(name),
                                           (spec_b or {}).get(name)):
                    return False
            elif key == "PodSpec" and go_name == "SecurityContext":
                if not json_semantic_equal(field_type.elem, a.get("securityContext") or {},
                                           b.get("securityContext") or {}, a, b):
                    return False
            elif not json_semantic_equal(field_type, a.get(json_name), b.get(json_name),
                                         spec_a, spec_b):
                return False
        return True
    if kind == PTR:
        if a is None or b is None:
            return a is None and b is None
        return json_semantic_equal(t.elem, a, b, spec_a, spec_b)
    if kind == SLICE:
        a = a if isinstance(a, list) else []
        b = b if isinstance(b, list) else []
        return len(a) == len(b) and all(json_semantic_equal(t.elem, x, y, spec_a, spec_b)
                                        for x, y in zip(a, b))
    if kind == MAP:
        a = a if isinstance(a, dict) else {}
        b = b if isinstance(b, dict) else {}
        return a.keys() == b.keys() and all(json_semantic_equal(t.elem, a[k], b[k])
                                            for k in a)
    if kind in _ZERO:
        return to_go(t, a) == to_go(t, b)
    return t.equal(to_go(t, a), to_go(t, b))


def pod_specs_equal(a: dict, b: dict) -> bool:
    """``apiequality.Semantic.DeepEqual`` of two v1 pod specs read as internal ones."""
    return json_semantic_equal(go_type("PodSpec"), a, b)


def ephemeral_containers_equal(a: dict, b: dict) -> bool:
    """``apiequality.Semantic.DeepEqual`` of two ephemeral containers."""
    return json_semantic_equal(go_type("EphemeralContainer"), a, b)


def pod_spec_diff(old: dict, new: dict) -> str:
    """``cmp.Diff(oldPod.Spec, newPodSpec)`` of two v1 pod specs (JSON)."""
    t = go_type("PodSpec")
    return gocmp.diff(t, to_go(t, old), to_go(t, new))


def ephemeral_container_diff(old: dict, new: dict) -> str:
    """``cmp.Diff(old, new)`` of two ephemeral containers (JSON)."""
    t = go_type("EphemeralContainer")
    return gocmp.diff(t, to_go(t, old), to_go(t, new))
