"""Unit-test helpers for built-in kinds: drive a strategy as the generic store drives it."""

import copy


def create(strategy, body: dict, namespace: str = "ns") -> tuple[dict, list]:
    """The object after defaulting and PrepareForCreate (generation as the store sets it),
    and its field errors."""
    obj = copy.deepcopy(body)
    meta = obj.setdefault("metadata", {})
    if strategy.spec.namespaced:
        meta["namespace"] = namespace
    strategy.apply_defaults(obj)
    if strategy.has_generation:
        obj["metadata"]["generation"] = 1
    strategy.prepare_for_create(obj)
    return obj, strategy.validate(obj)


def stored(strategy, body: dict, namespace: str = "ns") -> dict:
    """A created object as the store keeps it (it must be valid)."""
    obj, errors = create(strategy, body, namespace)
    assert errors == [], [str(e) for e in errors]
    obj["metadata"].update(uid="u", resourceVersion="1", creationTimestamp="2026-01-01T00:00:00Z")
    return obj


def update(strategy, new: dict, old: dict) -> tuple[dict, list]:
    """The object after defaulting and PrepareForUpdate (generation as the store sets it),
    and its field errors."""
    new = copy.deepcopy(new)
    old = copy.deepcopy(old)
    meta = new.setdefault("metadata", {})
    for key in ("uid", "creationTimestamp", "resourceVersion", "namespace"):
        if key in old["metadata"]:
            meta.setdefault(key, old["metadata"][key])
    strategy.apply_defaults(new)
    strategy.prepare_for_update(new, old)
    if strategy.has_generation:
        generation = old["metadata"].get("generation", 1)
        new["metadata"]["generation"] = generation + 1 if strategy.spec_changed(new, old) \
            else generation
    return new, strategy.validate_update(new, old)


def texts(errors) -> list[str]:
    """Each field error as upstream's ``Error()`` prints it."""
    return [str(error) for error in errors]
