"""Readers shared by the core kinds served from data (nodes, volumes, claims, controllers,
templates, quotas, limit ranges): objects are JSON dicts as ``BuiltinStrategy.normalize``
leaves them, read as Go reads the internal types (a missing map is empty, a nil pointer
to an integer is 0), and the printers' helpers (``labels.FormatLabels``,
``layoutContainerCells``).
"""

from __future__ import annotations

from kapiserver.apimachinery import quantity as _quantity
from kapiserver.registry.builtin_strategy import BuiltinStrategy


class CoreStrategy(BuiltinStrategy):
    """The strategies of these kinds: a ``BuiltinStrategy`` whose normalizing keeps the
    object's ``metadata`` dict. The generic store keeps a reference to ``obj["metadata"]``
    across defaulting and ``prepare_for_create`` (the uid, creationTimestamp, generation
    and resourceVersion are set there), while ``BuiltinStrategy.normalize`` rebuilds the
    whole object; normalizing into the same dict keeps what the store writes."""

    def normalize(self, obj: dict) -> None:
        meta = obj.get("metadata")
        super().normalize(obj)
        normalized = obj.get("metadata")
        if isinstance(meta, dict) and isinstance(normalized, dict) and normalized is not meta:
            meta.clear()
            meta.update(normalized)
            obj["metadata"] = meta


def as_dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def as_list(value) -> list:
    return value if isinstance(value, list) else []


def as_int(value) -> int:
    """An integer field as Go holds it: 0 when unset or not an integer."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def as_str(value) -> str:
    return value if isinstance(value, str) else ""


def meta_of(obj: dict) -> dict:
    return as_dict(obj.get("metadata"))


def spec_of(obj: dict) -> dict:
    return as_dict(obj.get("spec"))


def status_of(obj: dict) -> dict:
    return as_dict(obj.get("status"))


def parse_quantity(value) -> _quantity.Quantity | None:
    """A quantity as decoded JSON holds it; ``None`` for one that does not parse (decoding
    refused those already, so validation skips them)."""
    try:
        return _quantity.from_json(value)
    except _quantity.QuantityError:
        return None


def resource_list(value) -> list[tuple[str, _quantity.Quantity]]:
    """A ``ResourceList`` as ``(name, Quantity)`` pairs sorted by name: upstream walks the
    Go map in random order, so errors come out in name order here, which is stable."""
    pairs = []
    for name in sorted(as_dict(value)):
        parsed = parse_quantity(value[name])
        if parsed is not None:
            pairs.append((name, parsed))
    return pairs


def format_labels(labels) -> str:
    """``labels.FormatLabels``: ``k=v`` pairs sorted by key, ``<none>`` when empty."""
    labels = as_dict(labels)
    return ",".join(f"{key}={labels[key]}" for key in sorted(labels)) or "<none>"


def container_cells(containers) -> tuple[str, str]:
    """``layoutContainerCells``: the containers' names and images, comma separated."""
    containers = [as_dict(c) for c in as_list(containers)]
    return (",".join(as_str(c.get("name")) for c in containers),
            ",".join(as_str(c.get("image")) for c in containers))


#: ``helper.GetAccessModesAsString``: always in this order, each once.
_ACCESS_MODE_ABBREVIATIONS = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"),
                              ("ReadWriteMany", "RWX"), ("ReadWriteOncePod", "RWOP"))


def access_modes_text(modes) -> str:
    modes = as_list(modes)
    return ",".join(short for mode, short in _ACCESS_MODE_ABBREVIATIONS if mode in modes)


#: ``v1.BetaStorageClassAnnotation``, read before ``storageClassName`` by the printers.
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"


def spec_diff(type_name: str, old: dict, new: dict) -> str:
    """What changed between two specs, in the shape of the ``cmp.Diff`` upstream appends
    to its immutability errors: one ``-``/``+`` pair per changed field (Go's field name,
    the JSON value), unchanged fields left out."""
    import json

    lines = [f"  {type_name}{{"]
    for key in sorted(set(old) | set(new)):
        if old.get(key) == new.get(key):
            continue
        name = key[:1].upper() + key[1:]
        for sign, value in (("-", old.get(key)), ("+", new.get(key))):
            text = "nil" if value is None else json.dumps(value, sort_keys=True,
                                                          separators=(", ", ": "))
            lines.append(f"{sign} \t{name}: {text},")
    lines.append("  }")
    return "\n".join(lines) + "\n"
