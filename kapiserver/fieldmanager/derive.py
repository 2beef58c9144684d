"""ListTypes of a built-in kind, derived from its OpenAPI extensions and its Go types.

The lists, map keys and atomic maps come from the kind's ``x-kubernetes-*`` extensions
(``openapi.extensions``); the ``defaults`` (what Go's zero value of the kind holds:
non-pointer structs, ``null`` times, scalars whose JSON tag lacks ``omitempty``) come
from the protobuf tables, which record each Go field's pointer-ness and tag. Together
they are what the hand-written tables of ``listtypes`` spell out for the first kinds.
"""

from __future__ import annotations

import functools

from .listtypes import OBJECT_META, ListTypes

#: Go zero values of scalar kinds (``protobuf_compile``'s STRING, BOOL, INT32, INT64, BYTES).
_SCALAR_ZEROS = {0: "", 1: False, 2: 0, 3: 0, 4: ""}
_MAX_DEPTH = 32


def zero_defaults(message, prefix: str = "", depth: int = 0) -> dict:
    """``{pattern: zero value}`` of the fields Go writes for a zero ``message``, and of
    the fields of its list items and map values (``*``), recursively."""
    from ..runtime.protobuf_compile import MAP, MESSAGE, MICROTIME, REPEATED, SINGLE, TIME

    found: dict = {}
    if depth > _MAX_DEPTH:
        return found
    for f in message.ordered:
        path = f"{prefix}.{f.name}" if prefix else f.name
        if path == "metadata":
            continue  # ObjectMeta: every create sets what it holds
        if f.kind == MESSAGE:
            if f.label == SINGLE and not f.pointer:
                found[path] = {}
                found.update(zero_defaults(f.message, path, depth + 1))
            elif f.label in (REPEATED, MAP):
                if f.keep:
                    found[path] = None  # a nil slice or map without omitempty: null
                found.update(zero_defaults(f.message, f"{path}.*", depth + 1))
            elif f.pointer:
                found.update(zero_defaults(f.message, path, depth + 1))
            continue
        if f.pointer or f.label != SINGLE:
            if f.keep and f.label != SINGLE:
                found[path] = None  # a nil slice or map without omitempty: null
            continue
        if f.kind in (TIME, MICROTIME):
            found[path] = None  # a zero metav1.Time is written as null, omitempty or not
        elif f.keep and f.kind in _SCALAR_ZEROS:
            found[path] = _SCALAR_ZEROS[f.kind]
    return found


def pointer_structs(message, prefix: str = "", depth: int = 0) -> list[str]:
    """Patterns of the fields that are pointers to structs: Go keeps such a field when it is
    set, even empty (a defaulted ``securityContext: {}``), so ownership must see it."""
    from ..runtime.protobuf_compile import MAP, MESSAGE, REPEATED, SINGLE

    found: list[str] = []
    if depth > _MAX_DEPTH:
        return found
    for f in message.ordered:
        if f.kind != MESSAGE or f.message is None:
            continue
        path = f"{prefix}.{f.name}" if prefix else f.name
        if path == "metadata":
            continue
        if f.label == SINGLE and f.pointer:
            found.append(path)
        inner = f"{path}.*" if f.label in (REPEATED, MAP) else path
        found += pointer_structs(f.message, inner, depth + 1)
    return found


@functools.lru_cache(maxsize=256)
def builtin_list_types(group: str, version: str, kind: str) -> ListTypes | None:
    """The ListTypes of a built-in kind (``None`` when its definition or Go types are not
    shipped). Pure and immutable: cached for the process."""
    from ..openapi import extensions, schemas
    from ..runtime.protobuf import default_codec

    api_version = f"{group}/{version}" if group else version
    codec = default_codec()
    if not codec.known(api_version, kind):
        return None
    definitions, models = schemas.builtin_index()
    model = models.get((group, version, kind))
    if model is None:
        return None
    found = extensions.derive(definitions, model)
    message = codec._lookup(api_version, kind)
    defaults = {"metadata": {}, **zero_defaults(message)}
    own = ListTypes(found.lists, atomic=found.atomic, defaults=defaults, omit_empty=True,
                    verbatim=pointer_structs(message))
    return OBJECT_META | own
