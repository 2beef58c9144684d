"""Objects as the store hands them to the batch strategies, for the unit tests."""

import copy


def created(strategy, obj, uid="0b3c5a0e-5d55-4c1b-9c55-4d3e6f4c7a10", namespace="ns"):
    """``obj`` as the store creates it: defaulted, given its uid, prepared."""
    obj = copy.deepcopy(obj)
    obj.setdefault("metadata", {})["namespace"] = namespace
    strategy.apply_defaults(obj)
    obj["metadata"].update(uid=uid, creationTimestamp="2026-01-01T00:00:00Z")
    if strategy.has_generation:
        obj["metadata"]["generation"] = 1
    strategy.prepare_for_create(obj)
    return obj


def updated(strategy, new, old):
    """``new`` as the store updates ``old`` with it: defaulted and prepared."""
    new = copy.deepcopy(new)
    new["metadata"].setdefault("resourceVersion", "2")
    strategy.apply_defaults(new)
    for key in ("uid", "creationTimestamp"):
        new["metadata"][key] = old["metadata"][key]
    strategy.prepare_for_update(new, old)
    return new


def texts(errors):
    return [error.error_text() for error in errors]
