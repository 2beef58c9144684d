"""Generates ``protobuf_messages.json``, the built-in kinds' message tables, from upstream.

A developer tool, never imported by the server::

    python -m kapiserver.runtime.protobuf_generate [--mirrors DIR] [--tag TAG] [--output FILE]

It reads, at one tag of each module, every Go package's ``types.go`` (and the package's
other Go files: the Go struct order, which is the JSON order, the JSON names, pointer or
value, ``omitempty`` or not, inline embedding, named types, the types that marshal
themselves) and its ``generated.proto`` (field numbers, proto names, repeated or map),
checks the two against each other and fails on any disagreement (a number, a name, a
label, a type), and writes the tables ``protobuf_schemas`` documents, reached from the kinds
in ``SERVED``. The modules are bare git directories (``--mirrors``: one ``owner+name/repo``
per module, as the search tool's ``fetch`` lays them), read with ``git show``.

Beside the tables it writes ``go``, the Go layout of the same structs, for what speaks Go's
language (decoding errors, go-cmp diffs)::

    "go": {"packages": {table package: Go import path},
           "structs": {table package: {message: [Go type, {field number: [Go name,
                                                                          Go type, *flags]}]}},
           "named": {Go import path: {name: Go type it is defined as}}}

Go types are written as ``reflect.Type.String()`` prints them (``int32``, ``*int64``,
``[]uint8`` for ``[]byte``, ``map[string]string``, ``v1.RestartPolicy``, ``[]v1.Container``,
``*v1.PodSecurityContext``, ``resource.Quantity``, ``intstr.IntOrString``, ``v1.Time``); a
struct's is its own (``v1.ConfigMap``). The one flag is ``embedded`` (an anonymous field:
``ObjectMeta``, ``VolumeSource``); ``TypeMeta``, the one field without a protobuf tag, is left
out. ``named`` holds every named non-struct type a field's type reaches (``RestartPolicy``:
``string``, ``ResourceList``: ``map[v1.ResourceName]resource.Quantity``). reflect's names
are ambiguous across packages (``v1.ConditionStatus`` is core/v1's in batch/v1, and
apps/v1 has its own), so ``refs`` says, for each package whose structs or named types are
written here, which import path each ``pkg.Name`` in its types is::

           "refs": {Go import path: {"v1.ConditionStatus": "k8s.io/api/core/v1", ...}}
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

from kapiserver.runtime import protobuf_schemas as schemas
from kapiserver.runtime.protobuf_schemas import INLINE, KEEP
from kapiserver.runtime.protobuf_sources import (
    MODULES, GenerateError, GoPackage, ProtoField, Source, parse_proto)

MIRRORS = "/work/.mirror"
TAG = "v0.32.13"
OUTPUT = pathlib.Path(schemas.DATA_FILE)

META = "k8s.io/apimachinery/pkg/apis/meta/v1"
#: Import path prefixes a table package follows: k8s.io/api/core/v1 is core/v1.
_PACKAGE_PREFIXES = ("k8s.io/api/", "k8s.io/apimachinery/pkg/apis/",
                     "k8s.io/apiextensions-apiserver/pkg/apis/", "k8s.io/kube-aggregator/pkg/apis/")

# apiVersion -> (Go package, kinds served): kube-apiserver 1.32's resources and
# subresource kinds (its aggregated discovery documents); "+" adds the kind's list.
SERVED = {
    "v1": ("k8s.io/api/core/v1", (
        "Binding", "ComponentStatus+", "ConfigMap+", "Endpoints+", "Event+", "LimitRange+",
        "Namespace+", "Node+", "PersistentVolumeClaim+", "PersistentVolume+", "Pod+",
        "PodTemplate+", "ReplicationController+", "ResourceQuota+", "Secret+",
        "ServiceAccount+", "Service+")),
    "apps/v1": ("k8s.io/api/apps/v1", (
        "ControllerRevision+", "DaemonSet+", "Deployment+", "ReplicaSet+", "StatefulSet+")),
    "batch/v1": ("k8s.io/api/batch/v1", ("CronJob+", "Job+")),
    "autoscaling/v1": ("k8s.io/api/autoscaling/v1", ("HorizontalPodAutoscaler+", "Scale")),
    "autoscaling/v2": ("k8s.io/api/autoscaling/v2", ("HorizontalPodAutoscaler+",)),
    "policy/v1": ("k8s.io/api/policy/v1", ("PodDisruptionBudget+", "Eviction")),
    "networking.k8s.io/v1": ("k8s.io/api/networking/v1", (
        "IngressClass+", "Ingress+", "NetworkPolicy+")),
    "discovery.k8s.io/v1": ("k8s.io/api/discovery/v1", ("EndpointSlice+",)),
    "storage.k8s.io/v1": ("k8s.io/api/storage/v1", (
        "CSIDriver+", "CSINode+", "CSIStorageCapacity+", "StorageClass+",
        "VolumeAttachment+")),
    "scheduling.k8s.io/v1": ("k8s.io/api/scheduling/v1", ("PriorityClass+",)),
    "node.k8s.io/v1": ("k8s.io/api/node/v1", ("RuntimeClass+",)),
    "certificates.k8s.io/v1": ("k8s.io/api/certificates/v1", ("CertificateSigningRequest+",)),
    "flowcontrol.apiserver.k8s.io/v1": ("k8s.io/api/flowcontrol/v1", (
        "FlowSchema+", "PriorityLevelConfiguration+")),
    "admissionregistration.k8s.io/v1": ("k8s.io/api/admissionregistration/v1", (
        "MutatingWebhookConfiguration+", "ValidatingAdmissionPolicy+",
        "ValidatingAdmissionPolicyBinding+", "ValidatingWebhookConfiguration+")),
    "coordination.k8s.io/v1": ("k8s.io/api/coordination/v1", ("Lease+",)),
    "events.k8s.io/v1": ("k8s.io/api/events/v1", ("Event+",)),
    "rbac.authorization.k8s.io/v1": ("k8s.io/api/rbac/v1", (
        "Role+", "ClusterRole+", "RoleBinding+", "ClusterRoleBinding+")),
    "authentication.k8s.io/v1": ("k8s.io/api/authentication/v1", (
        "TokenRequest", "TokenReview", "SelfSubjectReview")),
    "authorization.k8s.io/v1": ("k8s.io/api/authorization/v1", (
        "SubjectAccessReview", "SelfSubjectAccessReview", "LocalSubjectAccessReview",
        "SelfSubjectRulesReview")),
    "apiextensions.k8s.io/v1": ("k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1",
                                ("CustomResourceDefinition+",)),
    "apiregistration.k8s.io/v1": ("k8s.io/kube-aggregator/pkg/apis/apiregistration/v1",
                                  ("APIService+",)),
    # Table has no protobuf form; kube-apiserver answers a protobuf Table request with 406.
    "meta.k8s.io/v1": (META, ("PartialObjectMetadata+",)),
}
#: meta/v1 kinds every group version registers (metav1.AddToGroupVersion) that travel as
#: bodies: Status answers, DeleteOptions bodies, WatchEvent frames.
META_KINDS = ("Status", "DeleteOptions", "WatchEvent")

#: Go types that marshal themselves to JSON (MarshalJSON) -> their table type.
SPECIALS = {
    (META, "Time"): "Time",
    (META, "MicroTime"): "MicroTime",
    (META, "Duration"): "Duration",
    (META, "FieldsV1"): "FieldsV1",
    ("k8s.io/apimachinery/pkg/runtime", "RawExtension"): "RawExtension",
    ("k8s.io/apimachinery/pkg/util/intstr", "IntOrString"): "IntOrString",
    ("k8s.io/apimachinery/pkg/api/resource", "Quantity"): "Quantity",
    # apiextensions' JSON is RawExtension's twin: {raw = 1}, the raw JSON as its JSON form.
    ("k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1", "JSON"): "RawExtension",
    ("k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1", "JSONSchemaPropsOrArray"):
        "JSONSchemaPropsOrArray",
    ("k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1", "JSONSchemaPropsOrBool"):
        "JSONSchemaPropsOrBool",
    ("k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1",
     "JSONSchemaPropsOrStringArray"): "JSONSchemaPropsOrStringArray",
}
#: Proto messages of the special types that are not named as their Go types.
_SPECIAL_PROTO = {
    "Time": "k8s.io.apimachinery.pkg.apis.meta.v1.Time",
    "MicroTime": "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime",
    "Duration": "k8s.io.apimachinery.pkg.apis.meta.v1.Duration",
    "FieldsV1": "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1",
    "IntOrString": "k8s.io.apimachinery.pkg.util.intstr.IntOrString",
    "Quantity": "k8s.io.apimachinery.pkg.api.resource.Quantity",
}
#: (table package, message, JSON name) -> table type, where the Go type says less than the
#: wire: a WatchEvent's object is an object in its own envelope (the watch encoder embeds
#: the protobuf serializer's whole output), not raw JSON.
OVERRIDES = {("meta/v1", "WatchEvent", "object"): "Object"}

_GO_SCALARS = {"string": "string", "bool": "bool", "int32": "int32", "int64": "int64",
               "float64": "double"}
#: Go's builtin aliases, which reflect prints as what they alias.
_REFLECT_ALIASES = {"byte": "uint8", "rune": "int32", "any": "interface {}"}


# -- building the tables ---------------------------------------------------------------------

def table_package_or_none(import_path: str) -> str | None:
    """The tables' name of a Go package (``core/v1``, ``meta/v1``, ``apiextensions/v1``), or
    ``None`` for a package tables never name (``resource``, ``intstr``, ``types``)."""
    for prefix in _PACKAGE_PREFIXES:
        if import_path.startswith(prefix):
            return import_path[len(prefix):]
    return None


def table_package(import_path: str) -> str:
    """The tables' name of a Go package; ``GenerateError`` for one they never name."""
    package = table_package_or_none(import_path)
    if package is None:
        raise GenerateError(f"Go package {import_path} has no table package")
    return package


class Generator:
    """Walks the served kinds' Go structs and writes one table entry per field."""

    def __init__(self, source: Source):
        self.source = source
        self._go, self._proto, self._proto_package = {}, {}, {}
        self.messages: dict[str, dict[str, dict]] = {}
        self._pending: list[tuple[str, str]] = []
        self.go_structs: dict[str, dict[str, list]] = {}
        self.go_named: dict[str, dict[str, str]] = {}
        self._references: set[tuple[str, str, str]] = set()
        self._paths: dict[str, str] = {}

    def go(self, path: str) -> GoPackage:
        if path not in self._go:
            self._go[path] = GoPackage(path, self.source.go_files(path))
        return self._go[path]

    def proto(self, path: str) -> dict:
        if path not in self._proto:
            package, messages = parse_proto(self.source.proto(path))
            self._proto[path], self._proto_package[path] = messages, package
        return self._proto[path]

    def run(self, served: dict = SERVED, meta_kinds: tuple = META_KINDS) -> dict:
        """The tables of the ``served`` kinds (shaped as ``SERVED``) and ``meta_kinds``."""
        kinds = {}
        for api_version, (path, names) in served.items():
            served = []
            for name in names:
                listed = name.endswith("+")
                name = name.rstrip("+")
                served += [name, name + "List"] if listed else [name]
            for name in served:
                self.want(path, name)
            kinds[api_version] = [table_package(path), served]
        for name in meta_kinds:
            self.want(META, name)
        while self._pending:
            self._message(*self._pending.pop())
        order = sorted(self.messages, key=lambda p: (p != "meta/v1", p))
        ordered = {package: dict(sorted(self.messages[package].items())) for package in order}
        return {"source": {"tag": self.source.tag, "modules": sorted(MODULES)},
                "messages": ordered, "kinds": kinds, "meta_kinds": list(meta_kinds),
                "go": self._go_layout(order)}

    def _go_layout(self, order: list[str]) -> dict:
        """The ``go`` section (see the module docstring); fails when a package's types name
        two types alike (``v1.X`` of core/v1 and of meta/v1)."""
        refs: dict[str, dict[str, str]] = {}
        for context, path, name in sorted(self._references):
            text = f"{self.go(path).name}.{name}"
            known = refs.setdefault(context, {}).setdefault(text, path)
            if known != path:
                raise GenerateError(f"in {context}, Go type {text} names types of {known} "
                                    f"and {path}")
        return {"packages": {package: self._paths[package] for package in order},
                "structs": {package: dict(sorted(self.go_structs[package].items()))
                            for package in order},
                "named": {path: dict(sorted(names.items()))
                          for path, names in sorted(self.go_named.items())},
                "refs": {path: dict(sorted(names.items()))
                         for path, names in sorted(refs.items())}}

    def go_type(self, go_type, context: str) -> str:
        """``reflect.Type.String()`` of a type tree written in package ``context``, each
        named non-struct type it reaches recorded in ``go_named`` with what it is defined
        as."""
        kind = go_type[0]
        if kind == "ptr":
            return "*" + self.go_type(go_type[1], context)
        if kind == "slice":
            return "[]" + self.go_type(go_type[1], context)
        if kind == "map":
            return (f"map[{self.go_type(go_type[1], context)}]"
                    f"{self.go_type(go_type[2], context)}")
        if kind == "builtin":
            return _REFLECT_ALIASES.get(go_type[1], go_type[1])
        _, path, name = go_type
        package = self.go(path)
        self._references.add((context, path, name))
        if (path, name) not in SPECIALS and package.struct(name) is None:
            named = self.go_named.setdefault(path, {})
            if name not in named:
                if name not in package.named:
                    raise GenerateError(f"unknown Go type {path}.{name}")
                named[name] = ""  # a recursive type stops here
                named[name] = self.go_type(package.named[name], path)
        return f"{package.name}.{name}"

    def want(self, path: str, name: str) -> str:
        """The table's name for struct ``name`` of ``path`` (queued to be written)."""
        package = table_package(path)
        if name not in self.messages.setdefault(package, {}):
            self.messages[package][name] = None
            self._pending.append((path, name))
        return name

    def _message(self, path: str, name: str) -> None:
        package, where = table_package(path), f"{table_package(path)}.{name}"
        struct = self.go(path).struct(name)
        proto = self.proto(path).get(name)
        if struct is None or proto is None:
            raise GenerateError(f"{where}: no Go struct or no proto message")
        entries, numbers, go_fields = {}, set(), {}
        for field in struct:
            json_tag = field.tags.get("json")
            spec = field.tags.get("protobuf")
            if spec is None:
                if field.embedded and field.type == ("named", META, "TypeMeta"):
                    continue  # kind and apiVersion travel in the envelope
                raise GenerateError(f"{where}.{field.go_name}: no protobuf tag")
            if json_tag is None or json_tag == "-":
                raise GenerateError(f"{where}.{field.go_name}: no JSON name")
            parts = spec.split(",")
            number = int(parts[1])
            proto_name = next((p[5:] for p in parts if p.startswith("name=")), None)
            pfield = proto.get(number)
            if pfield is None:
                raise GenerateError(f"{where}.{field.go_name}: proto has no field {number}")
            if proto_name is not None and proto_name != pfield.name:
                raise GenerateError(f"{where}.{field.go_name}: Go names field {number} "
                                    f"{proto_name!r}, the proto {pfield.name!r}")
            # The tag's opt/rep is not checked: upstream's tags are not always right
            # (CustomResourceDefinitionStatus.conditions says opt); the Go type is checked
            # against the proto's label instead.
            json_name, *options = json_tag.split(",")
            flags = []
            if "inline" in options:
                if not field.embedded:
                    raise GenerateError(f"{where}.{field.go_name}: inline, not embedded")
                json_name = pfield.name
                flags.append(INLINE)
            elif "omitempty" not in options:
                flags.append(KEEP)
            json_name = json_name or field.go_name
            type_ = OVERRIDES.get((package, name, json_name)) or self._table_type(
                field.type, path, pfield, f"{where}.{json_name}")
            if INLINE in flags and (field.type[0] != "named" or type_ in SPECIALS.values()
                                    or self.go(field.type[1]).struct(field.type[2]) is None):
                raise GenerateError(f"{where}.{field.go_name}: inline of {type_}")
            entries[str(number)] = [json_name, type_, *flags]
            go_fields[str(number)] = [field.go_name, self.go_type(field.type, path)] + (
                ["embedded"] if field.embedded else [])
            numbers.add(number)
        if set(proto) - numbers:
            raise GenerateError(f"{where}: proto fields {sorted(set(proto) - numbers)} have no "
                                "Go field")
        self.messages[package][name] = entries
        self._paths[package] = path
        self.go_structs.setdefault(package, {})[name] = [f"{self.go(path).name}.{name}",
                                                          go_fields]

    def _table_type(self, go_type, path: str, pfield: ProtoField, where: str) -> str:
        """The table type of a Go field, checked against its proto field."""
        prefix = ""
        if go_type[0] == "ptr":
            prefix, go_type = "*", go_type[1]
        go_type = self._underlying(go_type, pfield, where)
        if go_type[0] == "slice" and go_type[1] != ("builtin", "byte"):
            if pfield.label != "repeated":
                raise GenerateError(f"{where}: a Go slice, a proto {pfield.label}")
            return prefix + "[]" + self._value(go_type[1], path, pfield.type, where)
        if go_type[0] == "map":
            if pfield.label != "map" or self._underlying(go_type[1], pfield, where) != (
                    "builtin", "string"):
                raise GenerateError(f"{where}: a Go map, a proto {pfield.label} with key "
                                    f"{go_type[1]}")
            return prefix + "map[string]" + self._value(go_type[2], path, pfield.value_type,
                                                         where)
        if pfield.label not in ("optional", "required"):
            raise GenerateError(f"{where}: a single Go value, a proto {pfield.label}")
        return prefix + self._value(go_type, path, pfield.type, where)

    def _underlying(self, go_type, pfield, where):
        """A named non-struct type's underlying type (``Protocol`` -> string), unless it is
        special, a struct, or a named slice the proto wraps in a message (ExtraValue)."""
        while go_type[0] == "named" and (go_type[1], go_type[2]) not in SPECIALS:
            package = self.go(go_type[1])
            if package.struct(go_type[2]) is not None:
                break
            if go_type[2] not in package.named:
                raise GenerateError(f"{where}: unknown Go type {go_type[1]}.{go_type[2]}")
            underlying = package.named[go_type[2]]
            if underlying[0] == "slice" and underlying[1] != ("builtin", "byte") and (
                    pfield.type.endswith("." + go_type[2])
                    or (pfield.value_type or "").endswith("." + go_type[2])):
                break  # +protobuf.nullable: a message {repeated items = 1}
            go_type = underlying
        return go_type

    def _value(self, go_type, path: str, proto_type: str, where: str) -> str:
        """The table type of one value (no pointer, list or map), checked against the proto
        type of that value."""
        go_type = self._underlying(go_type, ProtoField("", proto_type, None, "", 0), where)
        if go_type == ("slice", ("builtin", "byte")):
            table = "bytes"
        elif go_type[0] == "builtin":
            if go_type[1] not in _GO_SCALARS:
                raise GenerateError(f"{where}: Go type {go_type[1]} has no table type")
            table = _GO_SCALARS[go_type[1]]
        elif go_type[0] != "named":
            raise GenerateError(f"{where}: nested {go_type[0]} has no table type")
        else:
            return self._named(go_type, path, proto_type, where)
        if table != proto_type:
            raise GenerateError(f"{where}: Go {table}, proto {proto_type}")
        return table

    def _named(self, go_type, path: str, proto_type: str, where: str) -> str:
        _, type_path, type_name = go_type
        package = self.go(type_path)
        special = SPECIALS.get((type_path, type_name))
        if special is not None:
            expected = _SPECIAL_PROTO.get(special)
            if expected is None:  # named as its Go type, in its Go package's proto package
                self.proto(type_path)
                expected = f"{self._proto_package[type_path]}.{type_name}"
            if proto_type != expected:
                raise GenerateError(f"{where}: Go {type_name}, proto {proto_type}")
            if type_name not in package.marshalers:
                raise GenerateError(f"{where}: special {type_name} has no MarshalJSON")
            return special
        if type_name in package.marshalers:
            raise GenerateError(f"{where}: {type_path}.{type_name} marshals itself to JSON; "
                                "the tables know no such type")
        self.proto(type_path)
        if proto_type != f"{self._proto_package[type_path]}.{type_name}":
            raise GenerateError(f"{where}: Go {type_path}.{type_name}, proto {proto_type}")
        if package.struct(type_name) is None:
            underlying = package.named.get(type_name)
            if underlying != ("slice", ("builtin", "string")):
                raise GenerateError(f"{where}: Go {type_name} ({underlying}) as a message")
            items = self.proto(type_path)[type_name]
            if [(f.number, f.label, f.type) for f in items.values()] != [
                    (1, "repeated", "string")]:
                raise GenerateError(f"{where}: {type_name} is not {{repeated string items=1}}")
            return "ExtraValue"
        name = self.want(type_path, type_name)
        own, there = table_package(path), table_package(type_path)
        if there == own:
            return name
        if there == "meta/v1" and name not in self.go(path).structs:
            return name  # the tables look a name up in meta/v1 after the own package
        return f"{there}.{name}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", default=MIRRORS,
                        help="the folder of the modules' bare git mirrors (owner+name/repo)")
    parser.add_argument("--tag", default=TAG, help="the tag to read every module at")
    parser.add_argument("--output", default=str(OUTPUT), help="the JSON file to write")
    args = parser.parse_args(argv)
    try:
        tables = Generator(Source(args.mirrors, args.tag)).run()
    except GenerateError as err:
        print(f"protobuf_generate: {err}", file=sys.stderr)
        return 1
    text = json.dumps(tables, indent=1, separators=(",", ": ")) + "\n"
    pathlib.Path(args.output).write_text(text)
    count = sum(len(messages) for messages in tables["messages"].values())
    print(f"wrote {count} messages of {len(tables['kinds'])} group versions to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
