"""The JSON field order of the core/v1 structs a pod spec is made of, for code that adds a
field to an object and writes it where Go's encoder would (admission plugins)."""

from __future__ import annotations

import functools

from .gotypes_data import STRUCTS


@functools.lru_cache(maxsize=None)
def json_order(struct: str) -> tuple[str, ...]:
    """The JSON names of ``struct``'s fields in Go's order (``"PodSpec"`` → ``volumes``,
    ``initContainers``, …); empty for a struct not described."""
    return tuple(json_name for _, json_name, _, _ in STRUCTS.get(struct, ()))
