"""What admission plugins share: upstream's ``admission.NewForbidden`` and writing a field
where Go's encoder puts it."""

from __future__ import annotations

from typing import Sequence

from .. import errors


def object_name(attributes) -> str:
    """The name an admission error gives (``extractResourceName``): the request's, else the
    object's name, else its ``generateName``, else ``Unknown``."""
    if attributes.name:
        return attributes.name
    obj = attributes.object
    if not isinstance(obj, dict):
        return "Unknown"
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return "Unknown/errorGettingName"
    return meta.get("name") or meta.get("generateName") or "Unknown"


def forbidden(attributes, message: str) -> errors.Forbidden:
    """``admission.NewForbidden(a, err)``: a 403 naming the resource and object refused."""
    spec = attributes.resource
    return errors.Forbidden.for_resource(spec.group, spec.resource, object_name(attributes),
                                         message)


def set_field(struct: dict, key: str, value, order: Sequence[str]) -> None:
    """Set ``struct[key]`` and keep ``struct``'s fields in ``order`` (its Go type's JSON field
    order), as the encoder writes an object a plugin changed; fields ``order`` does not
    name stay after, as they were."""
    struct[key] = value
    rank = {name: index for index, name in enumerate(order)}
    keys = list(struct)
    wanted = sorted(keys, key=lambda k: rank.get(k, len(rank)))
    if wanted != keys:
        items = [(k, struct[k]) for k in wanted]
        struct.clear()
        struct.update(items)
