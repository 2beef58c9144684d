"""Decoding a request's object into its kind's Go types, as kube-apiserver's handlers do.

What the REST handlers call, for one kind (``api_version``, ``kind``), on the JSON they
read: ``type_error`` (a body, or a JSON/merge-patched object: sigs.k8s.io/json's words),
``converter_error`` (a strategic-merge-patched or applied object: the unstructured
converter's), ``normalize_decoded`` (the object as Go writes it back: Go's field order, its
``omitempty``), and the texts upstream's patchers quote (``patched_text``). Kinds the
built-in tables do not know (custom resources, aggregated kinds) are decoded as
unstructured upstream, but their ``metadata`` is an ``ObjectMeta`` all the same.
"""

from __future__ import annotations

from . import godecode
from .protobuf import ProtobufError, default_codec


def _message(api_version: str, kind: str, codec=None):
    codec = default_codec() if codec is None else codec
    return codec._lookup(api_version, kind) if codec.known(api_version, kind) else None


def type_error(obj: dict, api_version: str, kind: str, body: bytes | None = None,
               codec=None) -> str | None:
    """What decoding ``obj`` (read from the JSON ``body``; ``None`` for YAML, whose numbers
    reach Go as Go writes them) into the kind's Go struct says, or ``None``."""
    message = _message(api_version, kind, codec)
    if message is None:
        return None
    texts = None

    def number_text(value) -> str:
        nonlocal texts
        if isinstance(value, float) and body is not None:
            if texts is None:
                texts = godecode.float_literals(body)
            if value in texts:
                return texts[value]
        return godecode.number_text(value)

    return godecode.json_error(message, obj, number_text)


def converter_error(obj: dict, api_version: str, kind: str, codec=None) -> str | None:
    """What ``FromUnstructured`` of ``obj`` into the kind's Go struct says, or ``None``
    (numbers are then converted in place as reflect converts them)."""
    message = _message(api_version, kind, codec)
    return None if message is None else godecode.unstructured_error(message, obj)


def normalize_decoded(obj: dict, api_version: str, kind: str, codec=None) -> None:
    """``obj``, in place, as Go writes it back after decoding it: a known kind entirely
    (``Codec.normalize``), any other kind's ``metadata`` as an ``ObjectMeta``."""
    codec = default_codec() if codec is None else codec
    if codec.known(api_version, kind):
        normalized = codec.normalize(obj)
        obj.clear()
        obj.update(normalized)
        return
    meta = obj.get("metadata")
    if isinstance(meta, dict) and meta:
        from .protobuf_normalize import normalize_message

        try:
            normalized = normalize_message(codec, codec._messages["meta/v1.ObjectMeta"], meta)
        except ProtobufError:
            return  # a kind of its own reports what its metadata holds wrong
        if normalized.get("creationTimestamp", 0) is None and "creationTimestamp" not in meta:
            del normalized["creationTimestamp"]  # unset stays unset until the store sets it
        meta.clear()
        meta.update(normalized)


def patched_text(current: dict, document, json_patch: bool, body: bytes | None) -> str:
    """The patched object's JSON text as upstream's JSON or merge patcher made it."""
    from .patched_json import json_patched, merge_patched

    texts = godecode.float_literals(body) if body else {}

    def number_text(value) -> str:
        return texts.get(value) or godecode.number_text(value)

    if json_patch:
        return json_patched(current, document, number_text)
    return merge_patched(current, document, number_text)
