"""Protobuf message schemas of the built-in kinds, as data generated from upstream 1.32.

The tables live in ``protobuf_messages.json``, written by ``protobuf_generate`` from
upstream's ``types.go`` and ``generated.proto`` (k8s.io/api, k8s.io/apimachinery,
k8s.io/apiextensions-apiserver, k8s.io/kube-aggregator), never by hand. They are read on
first use of ``MESSAGES``, ``KINDS`` or ``META_KINDS`` (the first protobuf body or write),
not when this module is imported.

``MESSAGES`` is ``{package: {message: {field number: (json name, type, *flags)}}}``, each
message's fields in the order of the Go struct's fields, which is the order Go's JSON
encoder writes them in (the wire order is always by field number). Types:

* scalars ``string``, ``bool``, ``int32``, ``int64``, ``double`` (a float64, fixed64 on the
  wire), ``bytes`` (base64 in JSON);
* ``Time``, ``MicroTime``, ``Duration``, ``Quantity``, ``IntOrString``, ``RawExtension``
  (also apiextensions' ``JSON``), ``FieldsV1``, ``ExtraValue`` (a ``{items=1}`` message
  written in JSON as the bare list of strings), ``Object`` (an embedded object in its own
  protobuf envelope, as ``WatchEvent.object`` carries it) and ``JSONSchemaPropsOrArray``,
  ``JSONSchemaPropsOrBool``, ``JSONSchemaPropsOrStringArray`` (apiextensions' wrappers
  of ``JSONSchemaProps``, written in JSON as a schema, a list, a boolean or a list of
  strings): the types whose JSON form is not their message's;
* a message name, looked up in the message's own package, then in ``meta/v1``, unless
  qualified (``core/v1.ObjectReference``);
* prefixed ``*`` for a Go pointer (written only when set, and then even when zero),
  ``[]`` for a repeated field, or written ``map[string]T``.

Flags: ``KEEP`` marks a field whose Go JSON tag has no ``omitempty``: decoding writes it
even when zero or empty, as Go's encoder does (a nil slice, map or pointer as ``null``,
like the ``"rules": null`` of upstream's ClusterRoles). ``INLINE`` marks an embedded struct
whose fields Go's JSON writes in its parent's place (``json:",inline"``) though the wire
has it as one message field (core/v1 ``Volume``'s ``volumeSource``); its name is the proto
field's.

``KINDS`` is ``{apiVersion: (package, kind names)}``: the kinds served in protobuf, each
named as its message. ``META_KINDS`` are the meta/v1 kinds every group version has.

``GO`` is the Go layout of the same structs (``protobuf_generate`` documents it): each
message's Go type and each field's Go name and Go type as ``reflect`` prints them
(``v1.ConfigMap``; ``Data``, ``map[string]string``), for what speaks Go's language —
decoding errors (``runtime.godecode``), go-cmp diffs.

In ``protobuf_messages.json`` the same tables are ``{"messages": ..., "kinds": ...,
"meta_kinds": ..., "go": ...}``: field numbers are object keys written in decimal, entries
and kinds are arrays, and objects keep the Go struct order.
"""

from __future__ import annotations

import functools
import json
import os

KEEP = "keep"
INLINE = "inline"

META_V1 = "meta/v1"
# meta/v1 kinds are registered in every group version (metav1.AddToGroupVersion) and in
# meta.k8s.io/v1; Status is always written with apiVersion "v1".
META_GROUP_VERSION = "meta.k8s.io/v1"

DATA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "protobuf_messages.json")


@functools.cache
def load() -> dict:
    """The tables of ``DATA_FILE``: ``{"MESSAGES": ..., "KINDS": ..., "META_KINDS": ...,
    "GO": ...}`` (read once; callers must not change them)."""
    with open(DATA_FILE, encoding="utf-8") as file:
        data = json.load(file)
    messages = {package: {name: {int(number): tuple(entry) for number, entry in fields.items()}
                          for name, fields in table.items()}
                for package, table in data["messages"].items()}
    kinds = {api_version: (package, tuple(names))
             for api_version, (package, names) in data["kinds"].items()}
    return {"MESSAGES": messages, "KINDS": kinds, "META_KINDS": tuple(data["meta_kinds"]),
            "GO": data["go"]}


def __getattr__(name: str):
    if name in ("MESSAGES", "KINDS", "META_KINDS", "GO"):
        return load()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
