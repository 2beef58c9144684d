"""Helpers for the apps unit tests: run a kind's strategy as the store runs it."""

import copy

import pytest

from kapiserver.apimachinery.field_errors import invalid_status


class Kind:
    """One apps kind's strategy, driven as the generic store drives it."""

    def __init__(self, spec, strategy_class):
        self.spec = spec
        self.strategy = strategy_class(spec)

    def create(self, body: dict, namespace: str = "ns") -> tuple[dict, list]:
        """The object after defaulting and PrepareForCreate, and its field errors."""
        obj = copy.deepcopy(body)
        obj.setdefault("metadata", {})["namespace"] = namespace
        self.strategy.apply_defaults(obj)
        if self.strategy.has_generation:
            obj["metadata"]["generation"] = 1
        self.strategy.prepare_for_create(obj)
        return obj, self.strategy.validate(obj)

    def update(self, new: dict, old: dict) -> tuple[dict, list]:
        """The object after defaulting and PrepareForUpdate (generation as the store sets
        it), and its field errors."""
        new = copy.deepcopy(new)
        self.strategy.apply_defaults(new)
        self.strategy.prepare_for_update(new, old)
        if self.strategy.has_generation:
            generation = old["metadata"].get("generation", 1)
            new["metadata"]["generation"] = generation + 1 \
                if self.strategy.spec_changed(new, old) else generation
        return new, self.strategy.validate_update(new, old)

    def update_status(self, new: dict, old: dict) -> tuple[dict, list]:
        status = self.strategy.status_strategy()
        new = copy.deepcopy(new)
        status.apply_defaults(new)
        status.prepare_for_update(new, old)
        return new, status.validate_update(new, old)

    def message(self, name: str, errors) -> str:
        return invalid_status(self.spec.kind, self.spec.group, name, errors)["message"]


def texts(errors) -> list[str]:
    return [err.error_text() for err in errors]


@pytest.fixture
def kinds():
    from kapiserver_plugins.apps import STRATEGIES

    return {spec.resource: Kind(spec, cls) for spec, cls in STRATEGIES}
